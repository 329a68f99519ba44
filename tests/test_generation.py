"""Generation with a KV cache (exact/decode.py): the prefill and each decode step counted with transformers'
DynamicCache on meta, equal to a hand derivation on a tiny Llama."""

from __future__ import annotations

import json

import pytest
import torch

transformers = pytest.importorskip("transformers")

from conftest import TINY_LM  # noqa: E402

from flopcheck.exact.decode import count_generation  # noqa: E402
from flopcheck.exact.generation import roofline  # noqa: E402
from flopcheck.gpus import get_gpu  # noqa: E402

TINY = TINY_LM


def _llama():
    with torch.device("meta"):
        return transformers.LlamaForCausalLM(transformers.LlamaConfig(**TINY)).eval()


def test_prefill_and_decode_steps_by_hand():
    g = count_generation(_llama(), prompt=8, steps=4)
    # d = 64, 4 heads of e = 16, 2 kv heads (k, v 32 wide), MLP 128 (gate, up, down), 2 layers, vocab 128
    # linear work per token: q 2*64*64 + k 2*64*32 + v 2*64*32 + o 2*64*64 = 24,576; MLP 3 * 2*64*128 = 49,152;
    # x 2 layers = 147,456; lm_head 2*64*128 = 16,384: 163,840 a token
    # attention of one query over S keys: (QK^T + attn@V) 2 * (2*4*S*16) per layer x 2 layers = 512 * S
    # prefill, P = 8: 8 * 163,840 + 2 layers * 2 * (2*4*8*8*16) = 1,310,720 + 32,768 = 1,343,488
    assert g.prefill == 1_343_488
    # decode step i (1-based) attends S = 8 + i positions: 163,840 + 512 * (8 + i)
    assert g.decode == (168_448, 168_960, 169_472, 169_984)
    # 4 steps: 4 * 163,840 + 512 * (9 + 10 + 11 + 12) = 655,360 + 21,504 = 676,864
    assert g.decode_total == 676_864 and g.total == 1_343_488 + 676_864
    # weights a step reads: embedding one row (64) + per layer q 4,096 + k 2,048 + v 2,048 + o 4,096 + MLP 24,576 +
    # 2 norms 128 = 36,992 x 2 + final norm 64 + lm_head 8,192 = 82,304
    assert g.weight_elements == 82_304
    # cache after step i: 2 layers x (K, V) x 2 kv heads x 16 x (8 + i) = 128 * (8 + i)
    assert g.cache_elements == (1_152, 1_280, 1_408, 1_536)
    # bytes, bf16: step 4 reads (82,304 + 1,536) * 2 = 167,680
    assert g.step_bytes(3) == 167_680


def test_decode_is_bandwidth_bound_on_an_h100():
    g = count_generation(_llama(), prompt=8, steps=2)
    r = roofline(g, get_gpu("H100"))
    # ~1 FLOP per byte read (168,448 / ((82,304 + 1,152) * 2) = 1.009) against H100-SXM's ridge of 989.4 / 3.35 = 295
    assert r["decode_bound"] == "bandwidth" and 1.0 < r["decode_intensity_first"] < 1.02


@pytest.mark.integration
def test_count_and_estimate_with_generate(capsys, tmp_path):
    from flopcheck.cli import main

    config = tmp_path / "llama.json"
    config.write_text(json.dumps({"model_type": "llama", **TINY}))
    argv = ["transformers:LlamaForCausalLM", "--config", str(config), "--generate", "4", "--prompt-tokens", "8"]
    assert main(["count", *argv, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    # the hand numbers above; the counted forward is the prefill
    assert d["generation"]["prefill"] == d["total_flops"] == 1_343_488
    assert d["generation"]["decode_total"] == 676_864
    assert main(["estimate", *argv]) == 0
    assert "bandwidth-bound" in capsys.readouterr().out
    assert main(["count", "DiT-S/2", "--generate", "4"]) == 2
    assert "--generate counts a causal LM's decoding" in capsys.readouterr().err
    assert main(["count", *argv[:3], "--prompt-tokens", "8"]) == 2


@pytest.mark.integration
def test_generate_refuses_a_model_without_a_cache(capsys):
    from flopcheck.cli import main

    assert main(["count", "timm:resnet18", "--generate", "2"]) == 2
    assert "ResNet.forward takes no past_key_values" in capsys.readouterr().err
