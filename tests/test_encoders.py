"""The other halves of a pipeline as specs: text encoders (`transformers:CLASS`) and autoencoders
(`diffusers:CLASS.decode` / `.encode`), built from the published configs shipped in flopcheck/data/, counted on meta and
checked by hand or against torch.utils.flop_counter."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("diffusers")
pytest.importorskip("transformers")

from flopcheck.exact import count_forward  # noqa: E402
from flopcheck.specs import SpecError, parse  # noqa: E402
from flopcheck.specs.build import build  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "flopcheck" / "data"


def _exact(text: str, **options) -> int:
    built = build(parse(text, **options))
    count = count_forward(built.model, built.args, kwargs=built.kwargs)
    assert count.complete, count.incompleteness()
    return count.total


def test_clip_vit_l14_text_model_on_77_tokens_by_hand():
    # CLIP ViT-L/14's text model (FLUX.1-dev's text_encoder): 12 layers of width d = 768, MLP 4d, on S = 77 tokens
    # (its max_position_embeddings, the default). Per layer: q, k, v, out 8*S*d^2, scores and values 4*S^2*d,
    # MLP 16*S*d^2: 24*S*d^2 + 4*S^2*d = 1,089,896,448 + 18,214,656 = 1,108,111,104; x 12 = 13,298,503,680
    config = str(DATA / "transformers" / "clip-vit-large-patch14-text.json")
    assert _exact("transformers:CLIPTextModel", config=config) == 13_298_503_680


def test_t5_v1_1_xxl_encoder_on_512_tokens_by_hand():
    # T5-v1.1-XXL's encoder (FLUX.1-dev's text_encoder_2): 24 layers, d_model 4096, 64 heads of 64 (inner 4096),
    # gated-GELU FFN of 10240, on S = 512 tokens. Per layer: q, k, v, o 4*2*S*4096*4096 = 68,719,476,736, scores and
    # values 4*S^2*4096 = 4,294,967,296, wi_0, wi_1, wo 3*2*S*4096*10240 = 128,849,018,880; sum 201,863,462,912;
    # x 24 = 4,844,723,109,888 (the relative position bias is a lookup: no multiply-adds)
    config = str(DATA / "transformers" / "t5-v1_1-xxl-encoder.json")
    assert _exact("transformers:T5EncoderModel", config=config, text_tokens=512) == 4_844_723_109_888


def test_gemma_2_2b_decoder_on_506_tokens_by_hand():
    # Gemma-2-2B's decoder (SANA's text encoder, Gemma2Model): 26 layers, d 2304, 8 query heads and 4 key-value heads
    # of 256, a gated MLP of 9216, on S = 506 tokens (SANA's instruction and prompt). Per layer and token: q 2304*2048,
    # k and v 2*2304*1024, o 2048*2304, gate, up and down 3*2304*9216: 77,856,768 MACs; x 26 x 506 x 2 =
    # 2,048,567,279,616 FLOPs. Scores and values: 2 x 8 heads x 506^2 x 256 MACs x 26 x 2 = 54,533,619,712. Sum
    # 2,103,100,899,328 (the soft-capping, RoPE and norms: no multiply-adds of a matmul; no lm_head in Gemma2Model)
    config = str(DATA / "transformers" / "gemma-2-2b-it.json")
    assert _exact("transformers:Gemma2Model", config=config, text_tokens=506) == 2_103_100_899_328


@pytest.mark.parametrize("half, flops", [("decode", 10_472_204_009_472), ("encode", 4_882_572_509_184)])
def test_the_flux_vae_at_1024_px_equals_flop_counter(half, flops):
    # FLUX.1-dev's VAE (AutoencoderKL, 16 latent channels, 8x): decode a 16x128x128 latent, encode a 1024x1024 image.
    # Each integer is flopcheck's exact count; torch.utils.flop_counter, counting its convolutions and the mid-block's
    # attention (math path) by its own formulas, gives the same
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.utils.flop_counter import FlopCounterMode

    spec = parse(f"diffusers:AutoencoderKL.{half}", config=str(DATA / "diffusers" / "flux1-dev-vae.json"))
    built = build(spec)
    assert tuple(built.args[0].shape) == ((1, 16, 128, 128) if half == "decode" else (1, 3, 1024, 1024))
    with sdpa_kernel(SDPBackend.MATH), FlopCounterMode(display=False) as mode, torch.no_grad():
        built.model(*built.args, **built.kwargs)
    assert (_exact(spec.text, config=spec.options.config), mode.get_total_flops()) == (flops, flops)


def test_the_encode_half_returns_its_latent_moments_as_a_tensor():
    # encode's output was (DiagonalGaussianDistribution,), which no tracer takes as an output: fvcore failed "in its
    # own code" and torchprofile read 0. Its forward now returns the moments the distribution holds: the default
    # AutoencoderKL (one block: no downsampling, 4 latent channels) gives mean and log-variance, (1, 2 * 4, 1024, 1024)
    import torch

    built = build(parse("diffusers:AutoencoderKL.encode"))
    (moments,) = built.model(*built.args, **built.kwargs)
    assert isinstance(moments, torch.Tensor) and tuple(moments.shape) == (1, 8, 1024, 1024)


def test_a_bare_autoencoder_spec_is_its_decode():
    config = str(DATA / "diffusers" / "flux1-dev-vae.json")
    assert _exact("diffusers:AutoencoderKL", config=config) == 10_472_204_009_472


@pytest.mark.parametrize(
    "text, needle",
    [
        ("diffusers:AutoencoderKL.foo", "write diffusers:AutoencoderKL.decode or .encode"),
        ("diffusers:FluxTransformer2DModel.decode", "is not an autoencoder"),
        ("transformers:ClipTextModel", "did you mean CLIPTextModel"),
        ("diffusers:AutoencoderKL.decode --text-tokens", "AutoencoderKL.decode takes no text"),
    ],
)
def test_bad_halves_and_names_are_one_line(text, needle):
    text, _, flag = text.partition(" ")
    with pytest.raises(SpecError, match=needle):
        build(parse(text, text_tokens=77 if flag else None))


@pytest.mark.parametrize("text", ["transformers:T5EncoderModel", "diffusers:AutoencoderKL.decode"])
def test_a_config_that_names_remote_code_is_refused(tmp_path, text):
    # transformers' and diffusers' configs alike: auto_map names code to download, which flopcheck never runs
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "t5", "auto_map": {"AutoModel": "evil.Model"}}))
    with pytest.raises(SpecError, match="auto_map: it names code to download and run"):
        build(parse(text, config=str(path)))


def test_a_claims_files_config_that_names_remote_code_is_refused_for_that_claim_alone(tmp_path, capsys):
    from flopcheck.cli import main

    (tmp_path / "evil.json").write_text(json.dumps({"model_type": "t5", "auto_map": {"AutoModel": "evil.Model"}}))
    (tmp_path / "claims.yaml").write_text(
        "- {id: evil, model: transformers:T5EncoderModel, config: evil.json, claim: 1 TFLOPs}\n"
        "- {id: dit, model: DiT-XL/2, claim: 118.64 GFLOPs}\n"
    )
    assert main(["audit", "--file", str(tmp_path / "claims.yaml"), "--no-counters"]) == 2
    out, err = capsys.readouterr()
    assert "claim 'evil': --config" in err and "evil.json has auto_map" in err and "DiT-XL/2 118.64" in out


def test_the_transformers_prefix_is_a_source_not_a_module():
    # 'transformers:CLIPTextModel' was a module:factory spec (import transformers, call CLIPTextModel()); the prefix
    # now names the source, which builds the class from its config
    assert parse("transformers:CLIPTextModel").source == "transformers"
    with pytest.raises(SpecError, match="--frames does not apply to transformers:CLIPTextModel"):
        parse("transformers:CLIPTextModel", frames=9)


@pytest.mark.parametrize(
    "spec, config, resolution, frames, shape, flops",
    [
        # Wan 2.1's VAE (AutoencoderKLWan's defaults): 21 latent frames of 16 x 60 x 104 into 81 frames of 832x480,
        # frame by frame through causal 3D convolutions
        ("AutoencoderKLWan", "wan2.1-vae.json", (832, 480), 81, (1, 16, 21, 60, 104), 275_352_205_639_680),
        # CogVideoX-5B's VAE: 13 latent frames into 49 frames of 720x480
        ("AutoencoderKLCogVideoX", "cogvideox-5b-vae.json", (720, 480), 49, (1, 16, 13, 60, 90), 315_027_947_520_000),
        # LTX-Video's VAE (AutoencoderKLLTXVideo's defaults): 21 latent frames of 128 x 16 x 22 into 161 frames of
        # 704x512, 32x per side and 8x per frame
        ("AutoencoderKLLTXVideo", "ltx-video-vae.json", (704, 512), 161, (1, 128, 21, 16, 22), 50_524_867_002_368),
        # SANA's DC-AE (AutoencoderDC, 32 latent channels, 32x per side): a 32x32x32 latent into 1024x1024, through
        # ResBlocks and EfficientViT blocks (ReLU linear attention: matmuls)
        ("AutoencoderDC", "dc-ae-f32c32-sana-1.0.json", (1024, 1024), None, (1, 32, 32, 32), 8_368_611_655_680),
        # Stable Diffusion's VAE (PixArt-alpha's): 4 latent channels, with its quant convolutions
        ("AutoencoderKL", "sd-vae.json", (1024, 1024), None, (1, 4, 128, 128), 10_470_392_594_432),
        # SDXL's VAE (PixArt-Sigma's): the same layers, another scaling factor: the same FLOPs
        ("AutoencoderKL", "sdxl-vae.json", (1024, 1024), None, (1, 4, 128, 128), 10_470_392_594_432),
        # HunyuanVideo's VAE: 33 latent frames of 16 x 90 x 160 into 129 frames of 1280x720, frame-wise as its
        # default runs it (use_framewise_decoding: overlapping windows of latent frames, blended)
        (
            "AutoencoderKLHunyuanVideo",
            "hunyuanvideo-vae.json",
            (1280, 720),
            129,
            (1, 16, 33, 90, 160),
            2_999_972_184_883_200,
        ),
    ],
)
def test_a_vae_decode_equals_flop_counter(spec, config, resolution, frames, shape, flops):
    # flopcheck's exact count, and torch.utils.flop_counter by its own convolution and matmul formulas (attention on
    # the math path), give the same integer
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.utils.flop_counter import FlopCounterMode

    given = {"config": str(DATA / "diffusers" / config), "resolution": resolution, "frames": frames}
    built = build(parse(f"diffusers:{spec}.decode", **given))
    assert tuple(built.args[0].shape) == shape
    with sdpa_kernel(SDPBackend.MATH), FlopCounterMode(display=False) as mode, torch.no_grad():
        built.model(*built.args, **built.kwargs)
    assert mode.get_total_flops() == flops
    assert _exact(f"diffusers:{spec}.decode", **given) == flops


def test_umt5_xxl_is_t5_xxls_encoder_in_flops():
    # Wan 2.1's UMT5-XXL: T5-v1.1-XXL's shapes with a 256,384-token vocabulary and a position bias per layer (both
    # lookups): the same 4,844,723,109,888 FLOPs on 512 tokens
    config = str(DATA / "transformers" / "umt5-xxl-encoder.json")
    assert _exact("transformers:UMT5EncoderModel", config=config, text_tokens=512) == 4_844_723_109_888
