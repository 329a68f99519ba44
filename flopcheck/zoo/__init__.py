"""The third-party zoo: models nobody at flopcheck wrote, each a spec as a user would give it (timm, torchvision,
diffusers and transformers at small configs, and user-style modules shipped here), in one list that the tests, the
report (`flopcheck report --models 'zoo:*'`) and `flopcheck list-models 'zoo:*'` all read.

`zoo:NAME` is a spec like any other (flopcheck.specs reads it, specs.build builds it): its entry's spec and options
are built as that spec would be, so a zoo model's count is the count of the spec it names; only its label differs.

Why it ships inside the package rather than under tests/: it is a feature, not a fixture. A user runs
`flopcheck report --models 'zoo:*'` on an installed flopcheck to see every counter closed on models like theirs,
and `zoo:NAME` specs name its user-style modules (flopcheck/zoo/*.py) and configs (flopcheck/zoo/configs/) by
package path, which a wheel without tests/ must still contain.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CONFIGS = Path(__file__).parent / "configs"


@dataclass(frozen=True)
class Entry:
    """One zoo model: its name, the spec it is, the options its input takes and what it puts to the counters."""

    name: str
    spec: str
    what: str
    options: dict[str, Any] = field(default_factory=dict)

    def options_given(self) -> dict[str, Any]:
        """Its options as parse takes them, a config file named relative to CONFIGS."""
        o = dict(self.options)
        if "config" in o:
            o["config"] = str(CONFIGS / o["config"])
        return o


def _here(module: str) -> str:
    return f"flopcheck.zoo.{module}:factory"


SQUARE = {"resolution": (64, 64)}  # CNNs at a reduced input: every op kind as at 224, a twelfth of the work

ZOO: tuple[Entry, ...] = (
    # timm: a ViT with fused attention, windowed attention, depthwise and squeeze-excite CNNs
    Entry("timm-vit-tiny", "timm:vit_tiny_patch16_224", "timm's fused SDPA attention, its Linear subclass"),
    Entry("timm-deit-tiny-distilled", "timm:deit_tiny_distilled_patch16_224", "two tokens and two heads"),
    Entry("timm-swin-tiny", "timm:swin_tiny_patch4_window7_224", "windowed attention with a relative position bias"),
    Entry("timm-convnext-atto", "timm:convnext_atto", "depthwise 7x7 convs, LayerNorm over channels", SQUARE),
    Entry("timm-resnet18", "timm:resnet18", "convs, batch norm, a max pool", SQUARE),
    Entry("timm-efficientnet-b0", "timm:efficientnet_b0", "depthwise convs, squeeze-excite, SiLU", SQUARE),
    Entry("timm-mobilenetv3-small", "timm:mobilenetv3_small_100", "hard-swish, squeeze-excite, timm's Linear", SQUARE),
    Entry("timm-mixer-s16", "timm:mixer_s16_224", "token-mixing MLPs: a Linear over the token axis"),
    Entry(
        "timm-xcit-nano", "timm:xcit_nano_12_p16_224", "cross-covariance attention by matmul, class attention by SDPA"
    ),
    Entry("timm-mobilevit-xxs", "timm:mobilevit_xxs", "attention over B x patch-area sequences inside a CNN"),
    Entry(
        "timm-cait-xxs24", "timm:cait_xxs24_224", "talking heads (a Linear between QK^T and the softmax), LayerScale"
    ),
    Entry(
        "timm-coat-lite-tiny", "timm:coat_lite_tiny", "conv position encodings one module shared by a stage's blocks"
    ),
    # torchvision: MHA's fused fast path, a shifted-window transformer, CNNs, a detection backbone
    Entry("torchvision-vit-small", _here("small_vit"), "nn.MultiheadAttention's fused fast path in eval"),
    Entry("torchvision-swin-t", "torchvision:swin_t", "shifted windows computed with F.linear in its forward"),
    Entry("torchvision-mobilenet-v3-small", "torchvision:mobilenet_v3_small", "hard-swish, squeeze-excite", SQUARE),
    Entry("torchvision-regnet-y-400mf", "torchvision:regnet_y_400mf", "grouped convs, squeeze-excite", SQUARE),
    Entry("torchvision-resnet18-fpn", _here("fpn_backbone"), "a detection backbone: a pyramid, nearest upsampling"),
    # diffusers transformers at tiny widths
    Entry(
        "diffusers-flux-tiny",
        "diffusers:FluxTransformer2DModel",
        "joint and single blocks, RoPE, guidance",
        {"config": "flux-tiny.json", "resolution": (64, 64), "text_tokens": 8},
    ),
    Entry(
        "diffusers-sd3-tiny",
        "diffusers:SD3Transformer2DModel",
        "joint attention, a last block with no text out",
        {"config": "sd3-tiny.json", "resolution": (64, 64), "text_tokens": 8},
    ),
    Entry(
        "diffusers-dit-tiny",
        "diffusers:DiTTransformer2DModel",
        "adaLN-Zero over class labels",
        {"config": "dit-tiny.json", "resolution": (64, 64)},
    ),
    Entry(
        "diffusers-pixart-tiny",
        "diffusers:PixArtTransformer2DModel",
        "cross-attention to a caption, adaLN-single",
        {"config": "pixart-tiny.json", "resolution": (64, 64), "text_tokens": 8},
    ),
    Entry(
        "diffusers-unet-tiny", _here("unet_tiny"), "Stable Diffusion's UNet: ResNet blocks, cross-attention, resampling"
    ),
    Entry(
        "diffusers-vae-tiny-decode",
        "diffusers:AutoencoderKL.decode",
        "a VAE decoder: GroupNorm, a mid-block attention, nearest upsampling",
        {"config": "vae-tiny.json", "resolution": (32, 32)},
    ),
    # transformers at tiny widths
    Entry(
        "transformers-bert-tiny",
        "transformers:BertModel",
        "post-norm encoder, a pooler, token types",
        {"config": "bert-tiny.json", "text_tokens": 16},
    ),
    Entry(
        "transformers-gpt2-tiny",
        "transformers:GPT2Model",
        "Conv1D (a transposed linear by addmm)",
        {"config": "gpt2-tiny.json", "text_tokens": 16},
    ),
    Entry("transformers-gpt2-masked", _here("small_gpt2"), "an attention mask whose code reads a value (.item())"),
    Entry(
        "transformers-t5-tiny-encoder",
        "transformers:T5EncoderModel",
        "relative position bias, gated GELU, RMSNorm",
        {"config": "t5-tiny-encoder.json", "text_tokens": 16},
    ),
    Entry(
        "transformers-clip-tiny-text",
        "transformers:CLIPTextModel",
        "causal mask, quick GELU",
        {"config": "clip-tiny-text.json", "text_tokens": 16},
    ),
    Entry("transformers-vit-tiny", _here("hf_vit"), "a conv patch embedding, its own attention, a pooler"),
    Entry(
        "transformers-llama-tiny",
        "transformers:LlamaModel",
        "grouped-query attention, RoPE, SwiGLU, RMSNorm",
        {"config": "llama-tiny.json", "text_tokens": 16},
    ),
    Entry(
        "transformers-mixtral-tiny",
        "transformers:MixtralForCausalLM",
        "a causal LM whose MLPs are 4 routed experts, top-2 (aten._grouped_mm), float32",
        {"config": "mixtral-tiny.json", "text_tokens": 16},
    ),
    # user-style modules
    Entry("user-mha-lstm", _here("mha_lstm"), "nn.MultiheadAttention, an LSTM and an einsum"),
    Entry("user-einsum-attention", _here("einsum_attention"), "QK^T and attn@V as einsums, then a GRU"),
    Entry("user-conv-mix", _here("conv_mix"), "grouped, depthwise, transposed convs, upsampling, a custom Function"),
    Entry("user-unlike-list", _here("unlike_list"), "a ModuleList of unlike layers (diffusers' ff.net, to_out)"),
    Entry("user-nn-transformer", _here("transformer_layers"), "nn.Transformer: the encoder layer's fused op"),
    Entry("user-bmm-attention", _here("bmm_attention"), "attention by torch.baddbmm and torch.bmm, a BatchNorm1d"),
    Entry("user-sequence-net", _here("sequence_net"), "an embedding, dilated Conv1d, a bidirectional 2-layer GRU"),
    Entry("user-shared-module", _here("shared_module"), "one Conv2d object at three paths, called by two blocks"),
    Entry("user-grouped-experts", _here("grouped_experts"), "experts as one grouped matmul (aten._grouped_mm)"),
    Entry("user-cdist-codebook", _here("cdist_codebook"), "torch.cdist to a codebook (aten._euclidean_dist)"),
    Entry("user-grid-warp", _here("grid_warp"), "F.grid_sample between two convolutions"),
    Entry("user-video-pool", _here("video_pool"), "Conv3d, 3-D average pooling, r3d_18's head"),
    Entry(
        "user-packed-sequences", _here("packed"), "documents of 3, 5, 8 tokens packed in one row: a block-diagonal mask"
    ),
    Entry("user-window-sdpa", _here("window_sdpa"), "5-D windowed SDPA (the CPU's math path) and 4-D SDPA (fused)"),
    Entry(
        "user-mha-lstm-train",
        "flopcheck.zoo.mha_lstm:factory_train_dropout",
        "the MHA, LSTM and einsum model in train mode, attention dropout: SDPA on the math path",
    ),
)
BY_NAME = {e.name: e for e in ZOO}


def names(pattern: str) -> list[str]:
    """The zoo's specs ('zoo:NAME') whose name matches a shell pattern ('zoo:*', 'zoo:timm-*')."""
    return [f"zoo:{e.name}" for e in ZOO if fnmatch.fnmatchcase(f"zoo:{e.name}", pattern)]
