"""Routed experts: transformers' grouped matmul counted on meta whatever its dtype (exact/meta_safe.py), and the note
on the routing a count assumed (exact/routing.py)."""

from __future__ import annotations

import pytest
import torch

from flopcheck.exact import count_forward
from flopcheck.render.routing import routing_notes


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


# A Switch layer (flopcheck/zoo/switch_moe.py): T = 16 tokens of d = 8, E = 4 experts Linear(8, 16) -> Linear(16, 8),
# no biases. Router: 2 x 16 x 8 x 4 = 1,024 FLOPs. An expert on n tokens: 2 x n x (8 x 16 + 16 x 8) = 512 n FLOPs.


def _switch(choices: list[int], capacity_factor: float = 1.0):
    """A Switch layer and its 16 tokens, token i a unit vector along dimension choices[i] < 4; the router's weight
    the identity on those 4 dimensions, so expert e's score for token i is 1 when choices[i] == e, else 0."""
    from flopcheck.zoo.switch_moe import SwitchMoE

    model = SwitchMoE(capacity_factor=capacity_factor).eval()
    with torch.no_grad():
        model.router.weight.copy_(torch.eye(4, 8))
    x = torch.zeros(16, 8)
    x[torch.arange(16), torch.tensor(choices)] = 1.0
    return model, x


# 7 tokens choose expert 0, 5 expert 1, 3 expert 2, 1 expert 3
CHOSEN = [0] * 7 + [1] * 5 + [2] * 3 + [3]


def test_switch_capacity_counts_the_tokens_each_expert_took_by_hand():
    import flopcheck

    model, x = _switch(CHOSEN)
    count = flopcheck.count(model, x)
    (seen,) = count.routing
    # C = ceil(1.0 x 16 / 4) = 4: the experts take min(7, 4), min(5, 4), 3, 1 = 4, 4, 3, 1 = 12 tokens; 4 dropped
    assert (seen.k, seen.experts, seen.capacity, seen.tokens) == (1, 4, 4, 16)
    assert seen.taken == (4, 4, 3, 1) and seen.dropped == 4 and not seen.weights_zero
    # experts 512 x 12 = 6,144 (wi 3,072 + wo 3,072); router 1,024; total 7,168
    assert count.by_path() == {"router": 1_024, "experts.*.0": 3_072, "experts.*.2": 3_072}
    assert count.total == 7_168


def test_a_larger_capacity_factor_takes_more_tokens_by_hand():
    import flopcheck

    model, x = _switch(CHOSEN, capacity_factor=1.25)
    (seen,) = flopcheck.count(model, x).routing
    # C = ceil(1.25 x 16 / 4) = 5: min(7, 5), 5, 3, 1 = 5, 5, 3, 1 = 14 tokens, 2 dropped; 1,024 + 512 x 14 = 8,192
    assert seen.capacity == 5 and seen.taken == (5, 5, 3, 1) and seen.dropped == 2
    assert flopcheck.count(model, x).total == 8_192


def test_the_routing_seen_is_a_note_and_json():
    from flopcheck.exact.routing import Routed
    from flopcheck.specs.measure import Measured, measure_local

    model, x = _switch(CHOSEN)
    m = measure_local(model, (x,))
    (note,) = m.notes
    assert "routing seen on real cpu tensors: (top) top-1 of 4, capacity 4: 16 tokens" in note
    assert "each expert took 4, 4, 3, 1 (4 of 16 token-expert assignments dropped" in note
    assert "zero" not in note  # its router has weights
    d = m.to_dict()["routing"]
    assert d == [
        {
            "path": "",
            "experts_path": "experts",
            "k": 1,
            "experts": 4,
            "capacity_factor": 1.0,
            "capacity": 4,
            "tokens": 16,
            "taken": [4, 4, 3, 1],
            "calls": 1,
            "weights_zero": False,
            "dropped": 4,
        }
    ]
    assert Measured.from_dict({**m.to_dict(), "spec": {"text": "switch"}}).exact.routing == m.exact.routing
    assert isinstance(m.exact.routing[0], Routed)


def test_switch_spec_on_cpu_reads_the_routing_of_its_zeroed_weights():
    from flopcheck.specs import parse
    from flopcheck.specs.measure import Measured, measure

    m = Measured.from_dict(measure(parse("flopcheck.zoo.switch_moe:factory").to_dict(), device="cpu"))
    (seen,) = m.exact.routing
    # a spec's weights are zeroed on real tensors: every score ties, every token chooses expert 0, which takes C = 4;
    # 12 dropped. Router 1,024 + experts 512 x 4 = 2,048: 3,072
    assert seen.taken == (4, 0, 0, 0) and seen.dropped == 12 and seen.weights_zero
    assert m.exact.total == 3_072 and m.exact.device == "cpu"
    note = next(n for n in m.notes if n.startswith("routing seen"))
    assert "each expert took 4, 0, 0, 0 (12 of 16" in note and "every score ties" in note


def test_switch_spec_on_meta_is_refused_toward_the_cpu():
    from flopcheck.specs import SpecError, parse
    from flopcheck.specs.measure import measure

    with pytest.raises(SpecError, match=r"capacity limit \(\(top\)\).*count it on real tensors \(--device cpu\)"):
        measure(parse("flopcheck.zoo.switch_moe:factory").to_dict())


def test_expert_choice_takes_c_tokens_an_expert_on_meta_by_hand():
    from flopcheck.zoo.switch_moe import ExpertChoiceMoE

    model = ExpertChoiceMoE().to("meta").eval()
    count = count_forward(model, (torch.empty(16, 8, device="meta"),), device="meta")
    (seen,) = count.routing
    # each of the 4 experts picks its top C = ceil(1.0 x 16 / 4) = 4 tokens whatever the scores: 16 rows
    assert seen.k is None and seen.capacity == 4 and seen.taken == (4, 4, 4, 4) and seen.dropped is None
    # router 1,024 + experts 512 x 16 = 8,192: 9,216
    assert count.total == 9_216
    (note,) = routing_notes(model, count.routing, count.device)
    assert note.startswith("routing seen on meta: (top) 4 experts (k not stated), capacity 4")
    assert "whatever the router chose" in note


def test_a_capacity_router_on_meta_keeps_its_note():
    # no expert modules seen (none called): what a count on meta assumed is said, and the way to see the routing
    (note,) = routing_notes(torch.nn.ModuleDict({"switch": Router(1, 4, capacity_factor=1.25)}), (), "meta")
    assert "capacity limit (switch)" in note and "--device cpu" in note


def test_transformers_switch_counts_its_experts_tokens_on_cpu():
    transformers = pytest.importorskip("transformers")
    config = transformers.SwitchTransformersConfig(
        d_model=8, d_ff=16, d_kv=4, num_heads=2, num_layers=2, num_decoder_layers=0, num_sparse_encoder_layers=1,
        num_experts=4, expert_capacity=4, vocab_size=32, router_jitter_noise=0.0,
    )  # fmt: skip
    model = transformers.SwitchTransformersEncoderModel(config).eval()
    router = model.encoder.block[1].layer[1].mlp.router
    with torch.no_grad():
        router.classifier.weight.zero_()  # every score ties: every token chooses expert 0
    count = count_forward(model, (torch.zeros(2, 16, dtype=torch.long),), kwargs={"return_dict": False})
    (seen,) = count.routing
    # top-1 (its class says Top1), capacity 4 a sequence (a cumsum over the sequence): 2 sequences x 4 = 8 tokens
    # for expert 0 of the 2 x 16 = 32; 24 dropped
    assert seen.path == "encoder.block.1.layer.1.mlp.router" and seen.experts_path.endswith("mlp.experts")
    assert (seen.k, seen.capacity, seen.tokens, seen.taken, seen.dropped) == (1, 4, 32, (8, 0, 0, 0), 24)
    # expert 0's wi and wo: 2 x 8 x 8 x 16 = 2,048 each
    by_path = count.by_path()
    assert by_path["encoder.block.*.layer.1.mlp.experts.expert_0.wi"] == 2_048
    assert by_path["encoder.block.*.layer.1.mlp.experts.expert_0.wo"] == 2_048


@pytest.mark.integration
def test_switch_spec_through_the_cli_on_cpu(capsys):
    import json

    from flopcheck.cli import main

    assert main(["count", "flopcheck.zoo.switch_moe:factory", "--device", "cpu", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    # test_switch_spec_on_cpu_reads_the_routing_of_its_zeroed_weights: 4 tokens for expert 0, 12 dropped, 3,072
    (seen,) = d["routing"]
    assert seen["taken"] == [4, 0, 0, 0] and seen["dropped"] == 12 and seen["capacity"] == 4
    assert d["total_flops"] == 3_072
