"""What data-dependent work still missed (issue 48, items 2, 8 and 10's masks and generation), each pinned on a small
model by hand: an additive -10000 bias read as a mask, a tensor attn_mask on the efficient kernel, eager attention's
dense and needed work (a sliding window said), one input for meta and real tensors (Mochi's text mask), a top-1 MoE
refused toward --device cpu, reconcile's --device, and --generate's refusals and an SSM's cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from conftest import TINY_LM

from flopcheck.cli import main
from flopcheck.exact import count_forward
from flopcheck.exact.attention_work import to_dict, totals
from flopcheck.render.attention import to_lines

MODELS = Path(__file__).resolve().parent / "models"


class Biased(torch.nn.Module):
    def forward(self, q, bias):
        return F.scaled_dot_product_attention(q, q, q, attn_mask=bias)


def test_an_additive_minus_10000_causal_bias_is_a_mask_by_hand():
    q = torch.zeros(1, 2, 4, 4)  # 2 heads, T = 4, e = ev = 4: 2 x (4 + 4) = 16 FLOPs a pair
    bias = torch.triu(torch.ones(4, 4), diagonal=1) * -10_000.0  # BERT's "masked" bias above the diagonal
    (call,) = count_forward(Biased(), (q, bias)).attention
    # causal: rows see 1 + 2 + 3 + 4 = 10 keys a head, x 2 heads = 20 pairs x 16 = 320 FLOPs needed (before: every
    # one of the 2 x 16 = 32 pairs, 512, as if no mask); dense 512, the headline
    assert (call.mask, call.pattern) == ("tensor", "causal")
    assert totals([call])["needed"] == 320 and totals([call])["dense"] == 512
    assert any("at or below -10000" in line for line in to_lines((call,)))
    # a bias of -9,999 lets its pair through: every pair needed
    (kept,) = count_forward(Biased(), (q, torch.triu(torch.ones(4, 4), diagonal=1) * -9_999.0)).attention
    assert totals([kept])["needed"] == 512


class CausalTensor(torch.nn.Module):
    def forward(self, q, mask):
        return F.scaled_dot_product_attention(q, q, q, attn_mask=mask), F.scaled_dot_product_attention(
            q, q, q, is_causal=True
        )


def test_a_tensor_mask_runs_every_pair_on_the_flash_kernel_by_hand():
    q = torch.zeros(1, 1, 256, 4)  # 1 head, T = 256, e = ev = 4: 16 FLOPs a pair
    mask = torch.ones(256, 256, dtype=torch.bool).tril()
    tensor, flag = collect = count_forward(CausalTensor(), (q, mask)).attention
    assert (tensor.mask, flag.mask) == ("tensor", "causal")
    # flash tiles 128 x 64 under causal: row tile 0 runs 128 x 128, row tile 1 128 x 256: 49,152 pairs x 16 = 786,432;
    # the is_causal call runs them; the tensor mask cannot run on flash (SDPA's flash backend refuses any attn_mask):
    # the efficient kernel runs all 256 x 256 = 65,536 pairs x 16 = 1,048,576
    d = to_dict(collect, "flash")
    assert d["executed_flops"] == 786_432 + 1_048_576
    assert d["executed_flash_flops"] == 2 * 786_432  # the tile model of either mask, FlashAttention's own kernel
    assert any("which its flash backend refuses" in line for line in to_lines(collect, "flash"))


def _eager(cls: str, tokens: int = 256, **extra):
    transformers = pytest.importorskip("transformers")
    config = getattr(transformers, cls).config_class(**{**TINY_LM, **extra})
    config._attn_implementation = "eager"
    with torch.device("meta"):
        model = getattr(transformers, cls)(config).eval()
    ids = torch.zeros(1, tokens, dtype=torch.long, device="meta")
    return count_forward(model, (ids,), kwargs={"return_dict": False}).attention


def test_eager_llama_attention_gets_dense_and_needed_by_hand():
    calls = _eager("LlamaForCausalLM")
    t = totals(calls)
    # as the SDPA path (test_masks): 2 layers x 4 heads, T = 256, e = ev = 16: 64 FLOPs a pair;
    # dense 2 x 4 x 256^2 = 524,288 pairs = 33,554,432; needed causal 2 x 4 x 256 x 257 / 2 = 263,168 = 16,842,752
    assert (t["dense"], t["needed"]) == (33_554_432, 16_842_752)
    assert {(c.mask, c.pattern, c.eager) for c in calls} == {("tensor", "causal", True)}
    # eager attention is plain matmuls: no kernel skips a pair, so flash executes it dense
    assert to_dict(calls, "flash")["executed_flops"] == 33_554_432


def test_eager_gemma2_says_its_sliding_window_by_hand():
    calls = _eager("Gemma2ForCausalLM", sliding_window=64, head_dim=16)
    window = next(c for c in calls if c.pattern.startswith("window"))
    # layer 0 slides a window of W = 64 over T = 256: sum min(i+1, 64) = 64 x 65 / 2 + 192 x 64 = 14,368 pairs a
    # head x 4 heads x 64 = 3,678,208; layer 1 is causal: 4 x 32,896 x 64 = 8,421,376
    assert window.pattern == "window:64" and window.flops(window.needed) == 3_678_208
    assert totals(calls)["needed"] == 3_678_208 + 8_421_376
    assert any("window of 64, eager" in line for line in to_lines(calls))


def test_eager_bloom_reads_its_masked_fill_beside_alibi_by_hand():
    calls = _eager("BloomForCausalLM", n_head=4, n_layer=2)
    # Bloom's scores: baddbmm(alibi, q, k^T), then masked_fill by a boolean mask (True masks): read inverted, causal;
    # 2 layers x 4 heads, T = 256, head 16: the Llama figures above
    assert (totals(calls)["dense"], totals(calls)["needed"]) == (33_554_432, 16_842_752)
    assert {(c.pattern, c.eager) for c in calls} == {("causal", True)}


def _mochi(tmp_path: Path):
    from flopcheck.specs import parse

    config = tmp_path / "mochi.json"
    tiny = {"num_layers": 1, "num_attention_heads": 2, "attention_head_dim": 8, "pooled_projection_dim": 16}
    tiny |= {"in_channels": 4, "out_channels": 4, "text_embed_dim": 16, "time_embed_dim": 16, "patch_size": 2}
    config.write_text(json.dumps({"_class_name": "MochiTransformer3DModel", **tiny, "max_sequence_length": 8}))
    return parse("diffusers:MochiTransformer3DModel", config=str(config), text_tokens=8, resolution=(64, 32), frames=7)


@pytest.mark.integration
def test_mochi_counts_one_input_on_meta_and_on_real_tensors(tmp_path):
    pytest.importorskip("diffusers")
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.utils.flop_counter import FlopCounterMode

    from flopcheck.counters.worker import build_zeroed
    from flopcheck.specs.measure import Measured, measure

    spec = _mochi(tmp_path)
    meta = Measured.from_dict(measure(spec.to_dict()))
    # its text mask is its pipeline's boolean ones: the counters' real tensors, whose float inputs are zeroed, keep it
    model, inputs = build_zeroed({"spec": spec.to_dict()}, "cpu")
    with sdpa_kernel(SDPBackend.MATH), FlopCounterMode(display=False) as mode, torch.no_grad():
        model(*inputs)
    # torch's own FlopCounterMode on the counters' real inputs (SDPA on its math path, which it sees as matmuls; 8 text
    # tokens kept; before, the float mask zeroed dropped them all: flopcheck counted 162,624) gives the meta count:
    # 183,104
    assert meta.exact.total == mode.get_total_flops() == 183_104
    assert "a text mask of ones (encoder_attention_mask: every text token attends)" in meta.notes[0]
    assert "encoder_attention_mask (1, 8) bool" in meta.inputs


def test_a_top1_moe_without_capacity_is_refused_toward_the_cpu_and_counts_there(monkeypatch):
    from flopcheck.specs import SpecError, parse
    from flopcheck.specs.measure import Measured, measure

    monkeypatch.syspath_prepend(str(MODELS))
    spec = parse("switch_nocap:factory").to_dict()
    with pytest.raises(
        SpecError, match=r"1 of 4 per token, no capacity limit.*count it on real tensors \(--device cpu"
    ):
        measure(spec)
    m = Measured.from_dict(measure(spec, device="cpu"))
    # router 2*16*8*4 = 1,024; every one of the 16 tokens runs one expert: 16 x (2*8*16 + 2*16*8) = 8,192: 9,216
    assert m.exact.total == 9_216


@pytest.mark.integration
def test_reconcile_takes_device(capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(MODELS))
    code = main(["reconcile", "switch_nocap:factory", "--device", "cpu", "--counter", "fvcore_jit"])
    out = capsys.readouterr().out
    # the reference is the count on real tensors (9,216, above); fvcore reports MACs: 4,608, closed
    assert code == 0 and "reference: its exact count on real cpu tensors" in out and "9,216" in out


def test_reconcile_device_on_a_reference_model_is_refused(capsys):
    assert main(["reconcile", "DiT-S/2", "--device", "cpu"]) == 2
    assert "DiT-S/2 is a reference model, its truth is its formula: drop --device" in capsys.readouterr().err


@pytest.mark.parametrize(
    "flags, said", [(["--training"], "give one of them"), (["--steps", "4"], "drop --steps"), (["--cfg"], "drop --cfg")]
)
def test_generate_beside_training_steps_or_cfg_is_refused(capsys, flags, said):
    assert main(["count", "transformers:LlamaForCausalLM", "--generate", "4", *flags]) == 2
    err = capsys.readouterr().err
    assert said in err and len(err.strip().splitlines()) == 1


def test_generate_past_max_positions_is_refused():
    transformers = pytest.importorskip("transformers")
    from flopcheck.exact.decode import GenerationError, count_generation

    config = transformers.LlamaConfig(**{**TINY_LM, "max_position_embeddings": 16})
    with torch.device("meta"):
        model = transformers.LlamaForCausalLM(config).eval()
    # 12 + 8 = 20 positions > 16
    with pytest.raises(GenerationError, match="reach position 20, past LlamaForCausalLM's max_position_embeddings 16"):
        count_generation(model, prompt=12, steps=8)


def test_a_mamba_decode_step_reads_its_state_by_hand():
    transformers = pytest.importorskip("transformers")
    from flopcheck.exact.decode import count_generation

    config = transformers.MambaConfig(
        vocab_size=32, hidden_size=16, state_size=4, num_hidden_layers=2, expand=2, conv_kernel=4, time_step_rank=2
    )
    with torch.device("meta"):
        model = transformers.MambaForCausalLM(config).eval()
    g = count_generation(model, prompt=8, steps=2)
    # per layer: conv state (1, expand x 16 = 32 channels, kernel 4) = 128 + SSM state (1, 32, state 4) = 128;
    # x 2 layers = 512 elements, the same every step (its cache is its state); before: 0
    assert g.cache_elements == (512, 512)
