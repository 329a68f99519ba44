"""Attention under its mask: dense (the headline), needed and executed work, exact integers by hand."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from conftest import TINY_LM

from flopcheck.exact import count_forward
from flopcheck.exact.attention_work import causal_flash_pairs, causal_pairs, to_dict, totals, window_pairs
from flopcheck.exact.masks import read_pairs, tile_pairs
from flopcheck.render.attention import to_lines


def test_pair_arithmetic_by_hand():
    # causal, 4 x 4: rows see 1, 2, 3, 4 keys = 10 = 4*5/2
    assert causal_pairs(4, 4) == 10
    # causal, 3 queries x 5 keys (top-left): 1 + 2 + 3 = 6; 5 queries x 3 keys: 1 + 2 + 3 + 3 + 3 = 12
    assert causal_pairs(3, 5) == 6 and causal_pairs(5, 3) == 12
    # window W=2 over 5 tokens: min(i+1, 2) = 1 + 2 + 2 + 2 + 2 = 9
    assert window_pairs(5, 2) == 9
    # flash at 128x64 tiles, T = 200 causal: row tile 0 (128 rows) needs keys 0..127 = 2 key tiles = 128 columns;
    # row tile 1 (72 rows) needs keys 0..199 = 4 key tiles = 256 columns clipped to 200: 128*128 + 72*200 = 30,784
    assert causal_flash_pairs(200, 200) == 30_784


def test_tiles_of_a_mask_tensor_by_hand():
    # a 4 x 4 mask at 2 x 2 tiles, allowed only at (0, 0) and (3, 1): tiles (0, 0) and (1, 0) hold one: 2 x 4 = 8 pairs
    mask = torch.zeros(4, 4, dtype=torch.bool)
    mask[0, 0] = mask[3, 1] = True
    assert tile_pairs(mask, (2, 2)) == 8
    # a float mask: -inf and finfo.min mask a pair, 0 and -3 (a bias) let it through; broadcast over 3 heads: 2 x 3 = 6
    f = torch.tensor([[0.0, float("-inf")], [-3.0, torch.finfo(torch.float32).min]])
    assert read_pairs(f, (1, 3), 2, 2)[0] == 6


class Causal(torch.nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def test_sdpa_is_causal_on_meta_by_hand():
    q = torch.empty(1, 2, 200, 8, device="meta")  # 2 heads, T = 200, e = ev = 8
    count = count_forward(Causal(), (q, q, q))
    t = totals(count.attention)
    # dense: 2 heads x 200 x 200 = 80,000 pairs x 2 x (8 + 8) = 2,560,000 FLOPs: the headline, unchanged
    assert count.total == t["dense"] == t["executed_math"] == 2_560_000
    # needed: 2 x 200 x 201 / 2 = 40,200 pairs x 32 = 1,286,400
    assert t["needed"] == 1_286_400
    # flash: 2 heads x 30,784 pairs (test above) x 32 = 1,970,176
    assert t["executed_flash"] == 1_970_176
    assert [c.mask for c in count.attention] == ["causal"]


class Masked(torch.nn.Module):
    def forward(self, q, mask):
        return F.scaled_dot_product_attention(q, q, q, attn_mask=mask)


def test_mask_on_meta_is_said_unknown_and_counted_dense():
    q = torch.empty(1, 2, 16, 4, device="meta")
    mask = torch.empty(16, 16, dtype=torch.bool, device="meta")  # values nobody has
    count = count_forward(Masked(), (q, mask))
    (call,) = count.attention
    # dense: 2 x 16 x 16 = 512 pairs x 2 x (4 + 4) = 8,192 in every convention
    assert call.mask == "unknown" and totals(count.attention)["needed"] == 8_192
    assert any("values unknown" in line for line in to_lines(count.attention))
    assert to_dict(count.attention)["masks_unknown"] is True


def test_packed_block_diagonal_on_real_tensors_by_hand():
    from tests.models.packed import inputs, model

    net = model()
    count = count_forward(net, inputs(net))
    t = totals(count.attention)
    # documents of 3, 5, 8 tokens: 2 heads x (9 + 25 + 64) = 196 pairs x 2 x (4 + 4) = 3,136 FLOPs needed, against
    # 2 x 16 x 16 = 512 pairs = 8,192 dense (the headline); one 128x64 tile holds all 16 x 16: flash runs 8,192
    assert t["needed"] == 3_136 and t["dense"] == 8_192 and t["executed_flash"] == 8_192
    assert count.by_kind()[next(k for k in count.by_kind() if k.value == "attn_score")] == 4_096


def _tiny(cls: str, **extra):
    transformers = pytest.importorskip("transformers")
    sizes = TINY_LM
    config = getattr(transformers, cls).config_class(**{**sizes, **extra})
    with torch.device("meta"):
        return getattr(transformers, cls)(config).eval()


def _lm_count(model, tokens: int):
    ids = torch.zeros(1, tokens, dtype=torch.long, device="meta")
    return count_forward(model, (ids,), kwargs={"return_dict": False})


def test_llama_causal_mask_on_meta_by_hand():
    count = _lm_count(_tiny("LlamaForCausalLM"), 256)
    t = totals(count.attention)
    # 2 layers x 4 heads, T = 256, head width e = ev = 64 / 4 = 16: 2 x (16 + 16) = 64 FLOPs a pair
    # dense: 2 x 4 x 256 x 256 = 524,288 pairs x 64 = 33,554,432 (the headline's QK^T + attn@V)
    assert t["dense"] == 33_554_432
    # needed: 2 x 4 x 256 x 257 / 2 = 263,168 pairs x 64 = 16,842,752
    assert t["needed"] == 16_842_752
    # flash: row tile 0 runs 128 x 128, row tile 1 runs 128 x 256 = 49,152 pairs a head x 8 x 64 = 25,165,824
    assert t["executed_flash"] == 25_165_824
    assert {c.mask for c in count.attention} == {"causal"}


def test_mistral_sliding_window_on_meta_by_hand():
    count = _lm_count(_tiny("MistralForCausalLM", sliding_window=64), 256)
    t = totals(count.attention)
    # window W = 64 over T = 256: sum min(i+1, 64) = 64 x 65 / 2 + 192 x 64 = 14,368 pairs a head x 8 x 64 = 7,356,416
    assert t["needed"] == 7_356_416 and t["dense"] == 33_554_432
    # flash: row tile 0 (rows 0..127) sees keys 0..127: 2 key tiles, 128 x 128; row tile 1 (rows 128..255) sees keys
    # 65..255: key tiles 1, 2, 3, 128 x 192: 40,960 pairs a head x 8 x 64 = 20,971,520
    assert t["executed_flash"] == 20_971_520
    assert {c.mask for c in count.attention} == {"tensor"}  # transformers' mask, its values made beside it on the CPU


@pytest.mark.integration
def test_packed_spec_on_cpu_through_the_cli(capsys, monkeypatch):
    import json
    from pathlib import Path

    from flopcheck.cli import main

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent / "models"))
    argv = ["count", "packed:model", "--inputs", "packed:inputs", "--device", "cpu", "--attn-kernel", "flash"]
    assert main([*argv, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    a = d["attention"]
    # the hand count of test_packed_block_diagonal_on_real_tensors_by_hand: 3,136 needed, 8,192 dense (the headline's
    # QK^T + attn@V: 4,096 + 4,096), flash 8,192
    assert (a["needed_flops"], a["dense_flops"], a["executed_flops"]) == (3_136, 8_192, 8_192)
    assert a["headline_convention"] == "dense" and d["by_kind"]["attn_score"] == 4_096
    assert any("counted on real cpu tensors" in n for n in d["notes"])
    assert main(argv) == 0
    assert "the headline counts it dense" in capsys.readouterr().out


def _count_json(capsys, *argv: str) -> dict:
    import json

    from flopcheck.cli import main

    assert main(["count", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.integration
def test_shipped_mistral_7b_sliding_window_by_hand(capsys):
    # Mistral-7B-v0.1 (shipped: mistral-7b-v0.1), T = 4,224 = 4,096 + 128: d 4,096, 32 layers, 32 heads of 128,
    # 8 kv heads (k, v 1,024 wide), MLP 14,336 (gate, up, down), vocab 32,000, window W = 4,096
    d = _count_json(capsys, "transformers:MistralForCausalLM", "--config", "mistral-7b-v0.1", "--text-tokens", "4224")
    # linear: 32 x (2*T*4096*4096*2 + 2*T*4096*1024*2 + 3*2*T*4096*14336) + 2*T*4096*32000 = 60,068,607,295,488
    # attention dense: 32 layers x 2 (QK^T, attn@V) x 2 x 32 heads x T^2 x 128 = 9,354,438,770,688
    assert d["total_flops"] == 60_068_607_295_488 + 9_354_438_770_688
    a = d["attention"]
    assert a["dense_flops"] == 9_354_438_770_688
    # needed: sum min(i+1, 4096) = 4096 x 4097 / 2 + 128 x 4096 = 8,914,944 pairs a head (causal would be
    # 4224 x 4225 / 2 = 8,923,200) x 32 layers x 32 heads x 2 x (128 + 128) = 4,673,998,159,872
    assert a["needed_flops"] == 4_673_998_159_872
    # flash, 128 x 64 tiles: row tile I <= 31 needs keys 0..128I+127, 2I + 2 key tiles; row tile 32 (rows
    # 4096..4223) keys 1..4223, tiles 0..65: 66. Sum 2 x 496 + 64 + 66 = 1,122 tiles x 8,192 = 9,191,424 pairs a head
    # x 32 x 32 x 512 = 4,818,953,306,112
    assert a["executed_flash_flops"] == 4_818_953_306_112
    assert {c["mask"] for c in a["calls"]} == {"tensor"}


@pytest.mark.integration
def test_shipped_mixtral_8x7b_on_meta_by_hand(capsys):
    # Mixtral-8x7B (shipped: mixtral-8x7b), T = 16: as Mistral-7B's attention (d 4,096, 32 layers, kv 1,024) with
    # 8 experts of 14,336, top-2, and a router 4,096 -> 8
    d = _count_json(capsys, "transformers:MixtralForCausalLM", "--config", "mixtral-8x7b", "--text-tokens", "16")
    by = {t["path"]: t["flops"] for t in d["terms"]}
    # experts: 32 layers x 16 tokens x 2 passes x (2*4096*2*14336 gate_up + 2*14336*4096 down) = 360,777,252,864
    assert by["model.layers.*.mlp.experts"] == 360_777_252_864
    # + attention projections 32 x (2*16*4096*4096*2 + 2*16*4096*1024*2) = 42,949,672,960, router 32 x 2*16*4096*8 =
    # 33,554,432, QK^T + attn@V 32 x 2 x 2*32*16*16*128 = 134,217,728, lm_head 2*16*4096*32000 = 4,194,304,000
    assert d["total_flops"] == 360_777_252_864 + 42_949_672_960 + 33_554_432 + 134_217_728 + 4_194_304_000
    assert d["complete"] and any("plain top-k routing, 2 of 8" in n for n in d["notes"])


def test_a_mask_too_large_to_read_counts_dense_and_says_so(monkeypatch):
    from flopcheck.exact import masks

    monkeypatch.setattr(masks, "CPU_LIMIT", 100)  # a 16 x 16 mask (256 elements) is past it
    q = torch.zeros(1, 2, 16, 4)
    count = count_forward(Masked(), (q, torch.ones(16, 16, dtype=torch.bool)))
    (call,) = count.attention
    # dense: 2 x 16 x 16 = 512 pairs x 2 x (4 + 4) = 8,192, in every convention
    assert call.mask == "unread" and totals(count.attention)["needed"] == 8_192
    assert any("too large to read" in line for line in to_lines(count.attention))
