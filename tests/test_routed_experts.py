"""Routed experts: transformers' grouped matmul counted on meta whatever its dtype (exact/meta_safe.py), and the note
on the routing a count assumed (exact/routing.py)."""

from __future__ import annotations

import pytest
import torch

from flopcheck.exact import count_forward
from flopcheck.exact.routing import routing_notes


class Grouped(torch.nn.Module):
    def __init__(self, a_dims: int):
        super().__init__()
        self.a_dims = a_dims

    def forward(self, a, b, offs):
        return torch._grouped_mm(a, b, offs=offs)


@pytest.mark.parametrize(
    ("a", "b", "offs", "flops"),
    [
        # 10 rows (M) of width 8 (K), each through one of 4 groups' (8, 6): 2 x 10 x 8 x 6 = 960
        ((10, 8), (4, 8, 6), (4,), 960),
        # 4 batched groups of (5, 8) @ (8, 6): 2 x 4 x 5 x 8 x 6 = 1,920
        ((4, 5, 8), (4, 8, 6), None, 1_920),
    ],
)
def test_float32_grouped_mm_counts_on_meta(a, b, offs, flops):
    # torch's meta kernel refuses float32 ("Expected mat_a to be BFloat16"); the CPU kernel takes it; the count
    # makes the output from the op's shape rule and counts it by its formula
    meta = {"device": "meta", "dtype": torch.float32}
    given = torch.empty(offs, dtype=torch.int32, device="meta") if offs else None
    count = count_forward(Grouped(len(a)), (torch.empty(a, **meta), torch.empty(b, **meta), given))
    assert count.complete and count.total == flops


class Router(torch.nn.Module):
    def __init__(self, top_k: int, num_experts: int, capacity_factor: float | None = None):
        super().__init__()
        self.top_k, self.num_experts, self.capacity_factor = top_k, num_experts, capacity_factor


def test_routing_notes_say_what_was_assumed():
    model = torch.nn.ModuleDict({"a": Router(2, 8), "b": Router(2, 8)})
    (note,) = routing_notes(model)
    assert "plain top-k routing, 2 of 8 experts per token (2 routers)" in note
    (capped,) = routing_notes(torch.nn.ModuleDict({"switch": Router(1, 4, capacity_factor=1.25)}))
    assert "capacity limit (switch)" in capped and "--device cpu" in capped
    assert routing_notes(torch.nn.Linear(2, 2)) == []


def _tiny_mixtral():
    transformers = pytest.importorskip("transformers")
    sizes = dict(hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4, vocab_size=128)
    config = transformers.MixtralConfig(
        **sizes, num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2, tie_word_embeddings=False
    )
    with torch.device("meta"):
        return transformers.MixtralForCausalLM(config).eval()


def _lm_count(model, tokens: int):
    ids = torch.zeros(1, tokens, dtype=torch.long, device="meta")
    return count_forward(model, (ids,), kwargs={"return_dict": False})


def test_mixtral_float32_counts_on_meta_by_hand():
    model = _tiny_mixtral()
    count = _lm_count(model, 16)
    # T = 16, d = 64, 4 heads of 16, 2 kv heads (k, v: 32 wide), L = 2, 4 experts of width 96, top-2, vocab 128
    # q, o: 2 x 16 x 64 x 64 x 2 = 262,144 each; k, v: 2 x 16 x 64 x 32 x 2 = 131,072 each
    # QK^T, attn@V: 2 x 4 x 16 x 16 x 16 x 2 = 65,536 each; router: 2 x 16 x 64 x 4 x 2 = 16,384
    # experts: 16 tokens x 2 passes x (2 x 64 x 192 gate_up + 2 x 96 x 64 down = 36,864) x 2 layers = 2,359,296
    # lm_head: 2 x 16 x 64 x 128 = 262,144
    # total: 2 x 262,144 + 2 x 131,072 + 2 x 65,536 + 16,384 + 2,359,296 + 262,144 = 3,555,328
    assert count.complete and count.total == 3_555_328
    assert count.by_path()["model.layers.*.mlp.experts"] == 2_359_296
    (note,) = routing_notes(model)
    assert "2 of 4 experts per token (2 routers)" in note and "whatever the router chose" in note
