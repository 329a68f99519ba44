"""Causes proved by the counter's own detail (the op it skipped, the op it counted), never by a size alone; SDPA calls
the CPU runs on its math path; an INCOMPLETE reference that no reconciliation or comparison hides. Each count here is
written by hand as its library's adapter hands it back (the integration runs are in test_zoo.py), on the exact count
of a small model built in this process."""

from __future__ import annotations

from dataclasses import replace
from functools import cache

import torch
import torch.nn.functional as F
from torch import nn

from flopcheck.reconciler import explain
from flopcheck.types import Count, Item, Skip, Unit, Work


@cache
def _ref(factory):
    """The reference (the exact count on meta) of a model and its inputs made by factory()."""
    from flopcheck.subject import resolve

    model, args = factory()
    return resolve(model, *args).reference()


def _count(counter: str, items: list[tuple[str, int]], skips: list[tuple[str, Work]], unit: Unit = Unit.MAC) -> Count:
    """A count as an op-level adapter hands it back: (op, FLOPs) items, (op, work) skips once each."""
    detail = tuple(Item(n, f / unit.flops_per_unit, f) for n, f in items)
    total = sum(f for _, f in items)
    skipped = tuple(Skip(n, 1, "no formula", work=w) for n, w in skips)
    return Count(counter, "lib", "0", unit, "BmmAttention", 0, "sdpa", 2, "cpu", reported=total / unit.flops_per_unit,
                 flops=total, detail=detail, skipped=skipped)  # fmt: skip


def _bmm():
    from flopcheck.zoo.bmm_attention import factory

    return factory()


def _codes(r) -> dict[str, int]:
    return {f.code: f.delta for f in r.findings}


# bmm_attention: x (N = 2, T = 8, d = 16). qkv 2 x 16 x 16 x 48 = 24,576; out 2 x 16 x 16 x 16 = 8,192 (linear
# 32,768); QK^T by baddbmm 2 x N x T x T x d = 2 x 2 x 8 x 8 x 16 = 4,096; attn@V by bmm, the same 4,096: 40,960.
# The two halves are the same size, so only the op tells which one a counter missed.


def test_a_skipped_baddbmm_is_qk_missing_not_attn_v():
    ref = _ref(_bmm)
    assert ref.total == 40_960
    # fvcore: linear 32,768 and bmm 4,096 counted, aten::baddbmm skipped (no handle): QK^T is what is missing
    fvcore = explain(_count("fvcore_jit", [("linear", 32_768), ("bmm", 4_096)], [("aten::baddbmm", Work.MATMUL)]), ref)
    assert _codes(fvcore) == {"FC205": -4_096, "FC101": -18_432} and fvcore.closed
    assert "aten::baddbmm" in fvcore.findings[0].evidence
    # calflops: patches torch.baddbmm, not torch.bmm: attn@V is what is missing
    calflops = explain(
        _count("hand", [("linear", 32_768), ("baddbmm", 4_096)], [("aten.bmm", Work.MATMUL)], Unit.FLOP), ref
    )
    assert _codes(calflops) == {"FC202": -4_096} and calflops.closed


def test_the_op_counted_proves_the_half_where_nothing_was_skipped():
    # no skip listed, the counted attention op is bmm, which did attn@V alone in the exact count: QK^T missing
    r = explain(_count("hand", [("aten.addmm", 32_768), ("aten.bmm", 4_096)], [], Unit.FLOP), _ref(_bmm))
    assert _codes(r) == {"FC205": -4_096} and r.closed


class _SameSizeHalves(nn.Module):
    """x (N, T, d) -> q @ k^T and attn @ v both by Tensor.__matmul__: one op does both halves."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x @ x.transpose(1, 2)).softmax(-1) @ x  # (N, T, T) then (N, T, d)


def test_a_half_is_not_named_by_its_size_alone():
    # x (2, 8, 16): QK^T 2 x 2 x 8 x 8 x 16 = 4,096 and attn@V 4,096, both aten.bmm. A counter with 4,096 of matmul
    # and no skip could have missed either: no cause is named, the residual stays (before: FC202 by size)
    ref = _ref(lambda: (_SameSizeHalves(), (torch.zeros(2, 8, 16),)))
    assert ref.total == 8_192
    r = explain(_count("hand", [("matmul", 4_096)], [], Unit.FLOP), ref)
    assert "FC202" not in _codes(r) and "FC205" not in _codes(r) and r.residual == -4_096


class _FiveD(nn.Module):
    """Two SDPA calls: (N, h, T, e) takes the CPU's flash kernel; (N, w, h, T, e) (windows) runs as matmuls."""

    def forward(self, q4: torch.Tensor, q5: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q4, q4, q4).sum() + F.scaled_dot_product_attention(q5, q5, q5).sum()


def test_only_the_sdpa_calls_the_cpu_runs_fused_are_fused():
    # q4 (2, 2, 8, 16): QK^T 2 x 2 x 2 x 8 x 8 x 16 = 8,192, attn@V 8,192: fused on the CPU
    # q5 (2, 3, 2, 8, 16): 3 x 8,192 = 24,576 each half: the math path, bmm that dispatch counters count
    ref = _ref(lambda: (_FiveD(), (torch.zeros(2, 2, 8, 16), torch.zeros(2, 3, 2, 8, 16))))
    assert ref.total == 2 * (8_192 + 24_576)
    assert ref.exact.sdpa == {"qk": 8_192, "av": 8_192}
    # torch.utils.flop_counter: the 5-D call's bmm 49,152 counted, the flash kernel skipped: FC201 is its 16,384
    sdpa = "aten._scaled_dot_product_flash_attention_for_cpu"
    r = explain(_count("hand", [("aten.bmm", 49_152)], [(sdpa, Work.ATTENTION)], Unit.FLOP), ref)
    assert _codes(r) == {"FC201": -16_384} and r.closed


class _Spectral(nn.Module):
    """x (N, 16) -> Linear -> rFFT: an op with multiply-adds and no formula."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(16, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.fft.rfft(self.proj(x), dim=-1).abs()


def test_an_incomplete_reference_closes_nothing_and_fails_the_check():
    from flopcheck.render.reconcile import proof, to_dict
    from flopcheck.verbs.reconcile import Reconciling

    ref = _ref(lambda: (_Spectral(), (torch.zeros(2, 16),)))
    assert ref.total == 1_024  # the Linear alone, 2 x 2 x 16 x 16; the FFT has no formula
    r = explain(_count("hand", [("aten.addmm", 1_024)], [], Unit.FLOP), ref)
    assert r.residual == 0 and not r.closed and "aten._fft_r2c" in r.incomplete
    text = proof(r)
    assert "INCOMPLETE: the count has no formula for aten._fft_r2c" in text and " closed" not in text
    assert to_dict(r)["reference_incomplete"] == r.incomplete and to_dict(r)["closed"] is False
    assert Reconciling([r], [], {}).exit_code == 1


def test_an_incomplete_reference_makes_compare_fail_and_say_so():
    from flopcheck.verbs.compare import Comparison

    done = Comparison([], {}, "exact count", "", 1, [], {"Spectral": "INCOMPLETE: no formula for aten._fft_r2c"})
    assert done.exit_code == 1
    assert "Spectral: INCOMPLETE: no formula for aten._fft_r2c; every ratio above is against a lower bound" in (
        done.to_text()
    )


class _Encoder(nn.Module):
    """An autoencoder's encode: x (N, 3, 8, 8) -> Conv2d(3, 4, 3, padding=1) -> (N, 4, 8, 8); no transformer blocks."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def test_a_counter_that_read_0_is_unexplained_not_a_shortcut():
    # conv: 2 x N x 8 x 8 positions x 4 out x 3 in x 9 = 2 x 2 x 64 x 108 = 27,648 FLOPs. A counter's total 0 with no
    # detail (torchprofile on a wrapper it traced nothing of) is no convention: before, FC203 "only the blocks'
    # linears" (12Td^2 of no blocks = 0) closed it on a model with no blocks
    ref = _ref(lambda: (_Encoder(), (torch.zeros(2, 3, 8, 8),)))
    assert ref.total == 27_648
    zero = Count("torchprofile_jit", "lib", "0", Unit.MAC, "Encoder", 0, "sdpa", 2, "cpu", reported=0.0, flops=0)
    r = explain(zero, ref)
    assert "FC203" not in _codes(r) and "FC208" not in _codes(r)
    assert r.residual == -27_648 and not r.closed and "counted nothing" in r.findings[0].evidence


def _zoo(module: str):
    """A zoo module's factory, for _ref's cache."""
    import importlib

    return importlib.import_module(f"flopcheck.zoo.{module}").factory


def test_the_experts_grouped_matmul_skipped_is_fc221():
    # T = 8, d = 16, F = 32: router 2 x 8 x 16 x 2 = 512; grouped matmul 2 x 8 x 16 x 32 = 8,192: 8,704
    ref = _ref(_zoo("grouped_experts"))
    assert ref.total == 8_704 and ref.batch == 8  # its input's rows are its batch
    skips = [("aten._grouped_mm", Work.MATMUL)]
    skipped = explain(replace(_count("hand", [("aten.mm", 512)], skips, Unit.FLOP), batch=8), ref)
    assert _codes(skipped) == {"FC221": -8_192} and skipped.closed
    # a per-op listing with no item of it, and no skip: absent from every op it counted is the detail too
    absent = explain(replace(_count("hand", [("aten.mm", 512)], [], Unit.FLOP), batch=8), ref)
    assert _codes(absent) == {"FC221": -8_192} and "no aten._grouped_mm" in absent.findings[0].evidence


def test_cdist_skipped_is_fc222_not_a_matmul_operator():
    # x (2, 30, 8): proj 2 x 60 x 8 x 8 = 7,680; cdist to 40 codes, 2 x 2 x 30 x 40 x (8 + 2) = 48,000: 55,680
    ref = _ref(_zoo("cdist_codebook"))
    assert ref.total == 55_680
    r = explain(_count("hand", [("aten.mm", 7_680)], [("aten._euclidean_dist", Work.MATMUL)], Unit.FLOP), ref)
    assert _codes(r) == {"FC222": -48_000} and r.closed  # before: FC207 "q @ k through Tensor.__matmul__"
    # fvcore's "linear" item of a bias-less Linear (it ran as mm) is the Linear's work, not left over
    fv = explain(_count("fvcore_jit", [("linear", 7_680)], [("aten::cdist", Work.OTHER)]), ref)
    assert _codes(fv) == {"FC222": -48_000, "FC101": -3_840} and fv.closed


def test_resampling_and_3d_pooling_counted_are_named():
    # grid_warp: conv 2 x 128 x 4 x 4 x 9 = 36,864, flow 2 x 128 x 4 x 2 = 2,048: 38,912; fvcore's grid_sampler 4 MACs
    # per output element, 2 x 4 x 8 x 8 x 4 = 2,048 MACs = 4,096 FLOPs
    grid = explain(_count("hand", [("conv", 38_912), ("grid_sampler", 4_096)], [], Unit.FLOP), _ref(_zoo("grid_warp")))
    assert _codes(grid) == {"FC310": 4_096} and grid.closed
    # video_pool: conv3d 2 x 512 x 4 x 3 x 27 = 331,776, fc 2 x 2 x 4 x 5 = 80: 331,856; torchprofile's pools 1 MAC
    # per output, 256 + 8 MACs = 528 FLOPs
    items = [("aten::_convolution", 331_776), ("aten::avg_pool3d", 512), ("aten::adaptive_avg_pool3d", 16)]
    pool = explain(_count("hand", items + [("aten::linear", 80)], [], Unit.FLOP), _ref(_zoo("video_pool")))
    assert _codes(pool) == {"FC302": 528} and pool.closed


class _Mixed(nn.Module):
    """Explicit attention by Tensor.__matmul__ on x, then SDPA on a 4-D q4 (fused on the CPU) and a 5-D q5 (math)."""

    def forward(self, x: torch.Tensor, q4: torch.Tensor, q5: torch.Tensor) -> torch.Tensor:
        y = (x @ x.transpose(1, 2)).softmax(-1) @ x  # (N, T, d)
        return (
            y.sum()
            + F.scaled_dot_product_attention(q4, q4, q4).sum()
            + F.scaled_dot_product_attention(q5, q5, q5).sum()
        )


def test_which_sdpa_calls_a_counter_missed_follows_the_op_it_skipped():
    # x (2, 8, 16): explicit QK^T 2 x 2 x 8 x 8 x 16 = 4,096, attn@V 4,096; q4 (2, 2, 8, 16) fused: 8,192 each half;
    # q5 (2, 3, 2, 8, 16) math: 24,576 each half. Attention 8,192 + 16,384 + 49,152 = 73,728
    args = (torch.zeros(2, 8, 16), torch.zeros(2, 2, 8, 16), torch.zeros(2, 3, 2, 8, 16))
    ref = _ref(lambda: (_Mixed(), args))
    assert ref.total == 73_728 and ref.exact.sdpa_math == {"qk": 24_576, "av": 24_576}
    # a dispatch counter: the explicit and the 5-D call's bmm counted, 8,192 + 49,152; the flash kernel skipped
    flash = "aten._scaled_dot_product_flash_attention_for_cpu"
    dispatch = explain(_count("hand", [("aten.bmm", 57_344)], [(flash, Work.ATTENTION)], Unit.FLOP), ref)
    assert _codes(dispatch) == {"FC201": -16_384} and dispatch.closed
    # fvcore traces aten::scaled_dot_product_attention whole: both calls missed, 16,384 + 49,152 = 65,536
    skips = [("aten::scaled_dot_product_attention", Work.ATTENTION)]
    fvcore = explain(_count("fvcore_jit", [("matmul", 8_192)], skips), ref)
    assert _codes(fvcore) == {"FC201": -65_536, "FC101": -4_096} and fvcore.closed
