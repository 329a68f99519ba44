"""Masked attention's conventions as causes (FC223-FC228): each delta from the exact count's own records of the calls
with that mask, by hand; a counter that counts attention as needed closes with them; a claim made with one is read
as that convention and named, not called wrong.

The model: x (1, T = 16, d = 8) -> qkv Linear(8, 24) -> 2 heads of e = 4 -> SDPA -> proj Linear(8, 8), no biases.
qkv 2 x 16 x 8 x 24 = 6,144; proj 2 x 16 x 8 x 8 = 2,048; a query-key pair costs 2e in QK^T and 2e in attn@V,
2 x (4 + 4) = 16 FLOPs, and there are 2 heads x 16 x 16 = 512 pairs dense: 8,192 = 4 T^2 d. Total 16,384.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from flopcheck.exact import count_forward
from flopcheck.reconciler import masked

T, D = 16, 8


class Attend(nn.Module):
    """x (1, T, d) -> qkv -> SDPA (is_causal, or attn_mask) -> proj."""

    def __init__(self, causal: bool = False):
        super().__init__()
        self.causal = causal
        self.qkv = nn.Linear(D, 3 * D, bias=False)
        self.proj = nn.Linear(D, D, bias=False)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        q, k, v = self.qkv(x).reshape(1, T, 3, 2, D // 2).permute(2, 0, 3, 1, 4)  # (1, 2, T, 4) each
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=self.causal)
        return self.proj(out.transpose(1, 2).reshape(1, T, D))


def _found(findings) -> dict[str, int]:
    return {f.code: f.delta for f in findings}


def _calls(net: nn.Module, *args: torch.Tensor):
    return count_forward(net, args).attention


def test_causal_counted_as_needed_by_hand():
    calls = _calls(Attend(causal=True), torch.empty(1, T, D, device="meta"))
    # needed: 2 heads x T(T+1)/2 = 2 x 136 = 272 pairs x 16 = 4,352 = 2 T(T+1) d; dense 8,192 = 4 T^2 d:
    # 4,352 - 8,192 = -3,840 = -2 T(T-1) d
    (found,) = masked.needed(calls)
    assert (found.code, found.delta) == ("FC223", -3_840)
    assert "1 SDPA call at (top): causal: T(T+1)/2 of T^2 = 136 of 256 a head (T = 16)" == found.evidence
    assert masked.padded(calls) == []  # nothing packed


def _band(w: int) -> torch.Tensor:
    ones = torch.ones(T, T, dtype=torch.bool)
    return ones.tril() & ~ones.tril(-w)


def test_window_padding_and_any_mask_by_hand():
    x = torch.zeros(1, T, D)
    keys = torch.arange(T) < 12  # 12 real tokens, 4 of padding
    ones = torch.ones(T, T, dtype=torch.bool)
    cases = {
        # a window of 4: sum_i min(i+1, 4) = 1 + 2 + 3 + 13 x 4 = 58 a head; 2 x 58 x 16 = 1,856 - 8,192
        "FC224": (_band(4), 1_856 - 8_192),
        # key padding: every query sees the 12 real keys, 16 x 12 = 192 a head; 2 x 192 x 16 = 6,144 - 8,192
        "FC225": (keys[None, :].expand(T, T), 6_144 - 8_192),
        # a checkerboard (i + j even): no pattern named, its 128 True pairs a head; 2 x 128 x 16 = 4,096 - 8,192
        "FC228": ((torch.arange(T)[:, None] + torch.arange(T)[None, :]) % 2 == 0, 4_096 - 8_192),
    }
    for code, (mask, delta) in cases.items():
        assert _found(masked.needed(_calls(Attend(), x, mask))) == {code: delta}, code
    # causal over the real keys (right padding): rows 0..11 see i + 1 keys (78), rows 12..15 the 12 real (48): 126 a
    # head; 2 x 126 x 16 = 4,032 - 8,192 = -4,160, padding left out (of a causal mask)
    calls = _calls(Attend(), x, ones.tril() & keys[None, :])
    assert [c.pattern for c in calls] == ["causal-padding"] and _found(masked.needed(calls)) == {"FC225": -4_160}


def test_packed_sequences_needed_and_padded_by_hand():
    from flopcheck.zoo.packed import factory

    net, args = factory()  # documents of 3, 5, 8 tokens in one row of 16, 2 heads of e = 4
    calls = count_forward(net, args).attention
    assert [c.pattern for c in calls] == ["packed"]
    # needed: sum s_i^2 = 9 + 25 + 64 = 98 of 256 a head: 2 x (98 - 256) x 16 = -5,056
    assert _found(masked.needed(calls)) == {"FC226": -5_056}
    # padded: 3 documents x max_len^2 = 3 x 64 = 192 of 256 a head: 2 x (192 - 256) x 16 = -2,048
    (padded,) = masked.padded(calls)
    assert (padded.code, padded.delta) == ("FC227", -2_048) and "192 of 256 pairs a head" in padded.evidence


def test_packed_causal_documents_by_hand():
    doc = torch.repeat_interleave(torch.arange(3), torch.tensor([3, 5, 8]))
    mask = (doc[:, None] == doc[None, :]) & torch.ones(T, T, dtype=torch.bool).tril()
    calls = _calls(Attend(), torch.zeros(1, T, D), mask)
    assert [c.pattern for c in calls] == ["packed-causal"]
    # needed: sum s_i(s_i+1)/2 = 6 + 15 + 36 = 57 a head: 2 x (57 - 256) x 16 = -6,368; padded: 3 x 8 x 9 / 2 = 108 a
    # head: 2 x (108 - 256) x 16 = -4,736
    assert _found(masked.needed(calls)) == {"FC226": -6_368}
    assert _found(masked.padded(calls)) == {"FC227": -4_736}


def test_a_mask_on_meta_gives_no_convention():
    # on meta a mask tensor has no values: its needed is unknown, so no cause can be proved from it
    mask = torch.empty(T, T, dtype=torch.bool, device="meta")
    calls = _calls(Attend(), torch.empty(1, T, D, device="meta"), mask)
    assert [(c.mask, c.pattern) for c in calls] == [("unknown", "")]
    assert masked.needed(calls) == [] and masked.padded(calls) == []


def test_a_counter_that_counts_causal_attention_as_needed_closes():
    from flopcheck.reconciler import explain
    from flopcheck.subject import resolve
    from flopcheck.types import Count, Item, Unit

    ref = resolve(Attend(causal=True), torch.zeros(1, T, D)).reference()
    assert ref.total == 16_384
    # a counter with the projections (mm: 6,144 + 2,048) and SDPA at its causal pairs, 4,352 (above)
    items = (Item("aten.mm", 8_192, 8_192), Item("aten._scaled_dot_product_flash_attention_for_cpu", 4_352, 4_352))
    count = Count(
        "hand", "lib", "0", Unit.FLOP, "Attend", 0, "sdpa", 1, "cpu", reported=12_544, flops=12_544, detail=items
    )
    r = explain(count, ref)
    assert _found(r.findings) == {"FC223": -3_840} and r.closed
    # a counter at the dense pairs has no cause
    dense = Count("hand", "lib", "0", Unit.FLOP, "Attend", 0, "sdpa", 1, "cpu", reported=16_384, flops=16_384,
                  detail=(items[0], Item(items[1].name, 8_192, 8_192)))  # fmt: skip
    assert _found(explain(dense, ref).findings) == {}


def test_an_audit_claim_with_causal_attention_halved_is_read_as_needed_and_named():
    import flopcheck
    from flopcheck.render.audit import sentence

    net, x = Attend(causal=True), torch.zeros(1, T, D)
    # 16,384 - 3,840 = 12,544: the exact count with causal attention at T(T+1)/2 pairs a head
    v = flopcheck.audit("12544 FLOPs", net, x, counters=False)
    assert v.verdict.value == "consistent" and v.best.findings and _found(v.best.findings) == {"FC223": -3_840}
    assert "causal attention counted as needed, T(T+1)/2 pairs" in sentence(v)
    # the dense figure is the headline itself: no cause
    dense = flopcheck.audit("16384 FLOPs", net, x, counters=False)
    assert dense.verdict.value == "consistent" and not _found(dense.best.findings)


def test_an_audit_claim_on_packed_sequences_names_its_convention():
    import flopcheck
    from flopcheck.render.audit import sentence
    from flopcheck.zoo.packed import factory

    net, args = factory()  # 16,384 dense (its qkv and proj have biases: bias adds are not multiply-adds)
    # sum s_i^2: 16,384 - 5,056 = 11,328; as a padded batch: 16,384 - 2,048 = 14,336 (above)
    for claim, code, words in (
        ("11328 FLOPs", "FC226", "packed sequences counted as needed, sum s_i^2 pairs"),
        ("14336 FLOPs", "FC227", "packed sequences counted as padded, n x max_len^2 pairs"),
    ):
        v = flopcheck.audit(claim, net, *args, counters=False)
        assert v.verdict.value == "consistent" and code in _found(v.best.findings), claim
        assert words in sentence(v), claim
