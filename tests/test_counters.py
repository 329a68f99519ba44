"""What each counter library reports on DiT-S/2, pinned, so a library upgrade that changes a count
fails loudly and names the counter; and the runner's containment of crashes, hangs and leaks.

Building blocks, DiT-S/2 (d = 384, L = 12, 6 heads, p = 2, C = 4, C_out = 8), in MACs or elements;
input 32 -> T = 256, Td = 98,304; input 64 -> T = 1,024, Td = 393,216:
  LIN   every nn.Linear: 12*12*T*d^2 + 12*6d^2 + (256d + d^2) + 2d^2 + 32*T*d
        T=256:  5,435,817,984 + 10,616,832 + 245,760 + 294,912 + 3,145,728   = 5,450,121,216
        T=1024: 21,743,271,936 + 10,616,832 + 245,760 + 294,912 + 12,582,912 = 21,767,012,352
  CONV  patch embed, 16*T*d:                       1,572,864 | 6,291,456
  ATTN  QK^T + attn@V, 12*2*T^2*d:                 603,979,776 | 9,663,676,416
  LN    elements out of the 25 LayerNorms, 25*Td:  2,457,600 | 9,830,400
  GELU  elements through the 12 GELUs, 48*Td:      4,718,592 | 18,874,368
  BIAS_LIN   linear bias adds, 12*9d*T + 32T + (12*6d + 2d + 2d) = 41,504T + 29,184: 10,654,208 | 42,529,280
  BIAS_CONV  conv bias adds, d*T:                  98,304 | 393,216
  EINSUM     unpatchify's permutation touches 32T elements; numpy's einsum_path prints its cost,
             32T + 1, to 4 digits ('8.193e+03' | '3.277e+04'), which parses back as 8,193 | 32,770
"""

import pytest

from flopcheck.counters import COUNTERS, REQUIRED, CounterSpec
from flopcheck.counters.pool import Job, run_counters
from flopcheck.types import Count, Unit

# (counter, input, attn) -> the number as the library reports it
PINNED = {
    # flopcheck's own count on the real model equals the formula: 12,111,347,712 at T=256
    # (test_formula_dit) and 62,873,960,448 at T=1024 (test_cli), whichever attention path ran
    ("flopcheck_exact", 32, "sdpa"): 12_111_347_712,
    ("flopcheck_exact", 32, "math"): 12_111_347_712,
    ("flopcheck_exact", 64, "sdpa"): 62_873_960_448,
    ("flopcheck_exact", 64, "math"): 62_873_960_448,
    # fvcore (MAC) = LIN + CONV + 4*LN (4 per element, no affine) + floor(EINSUM / 2) [+ ATTN with math]
    #   T=256:  5,450,121,216 + 1,572,864 + 9,830,400 + 4,096 = 5,461,528,576; + 603,979,776 = 6,065,508,352
    #   T=1024: 21,767,012,352 + 6,291,456 + 39,321,600 + 16,385 = 21,812,641,793; + 9,663,676,416 = 31,476,318,209
    ("fvcore_jit", 32, "sdpa"): 5_461_528_576,
    ("fvcore_jit", 32, "math"): 6_065_508_352,
    ("fvcore_jit", 64, "sdpa"): 21_812_641_793,
    ("fvcore_jit", 64, "math"): 31_476_318_209,
    # thop (MAC) = LIN + CONV + 2*LN; attention lives in timm's Attention.forward, which has no thop rule
    #   T=256: 5,451,694,080 + 4,915,200 = 5,456,609,280; T=1024: 21,773,303,808 + 19,660,800 = 21,792,964,608
    ("thop_hooks", 32, "sdpa"): 5_456_609_280,
    ("thop_hooks", 32, "math"): 5_456_609_280,
    ("thop_hooks", 64, "sdpa"): 21_792_964_608,
    ("thop_hooks", 64, "math"): 21_792_964_608,
    # torch.profiler (FLOP) = 2*(LIN + CONV) + ADD + MUL [+ 2*ATTN + 12*Td for q*scale with math], one FLOP per
    # element of the first operand: ADD = 76 adds = 50*Td + 9,984, MUL = 51 muls = 25*Td + 9,345
    #   T=256:  10,903,388,160 + 4,925,184 + 2,466,945 = 10,910,780,289; + 1,207,959,552 + 1,179,648 = 12,119,919,489
    #   T=1024: 43,546,607,616 + 19,670,784 + 9,839,745 = 43,576,118,145; + 19,327,352,832 + 4,718,592 = 62,908,189,569
    ("torch_profiler", 32, "sdpa"): 10_910_780_289,
    ("torch_profiler", 32, "math"): 12_119_919_489,
    ("torch_profiler", 64, "sdpa"): 43_576_118_145,
    ("torch_profiler", 64, "math"): 62_908_189_569,
    # FlopCounterMode (FLOP) = 2*(LIN + CONV) [+ 2*ATTN with math]; CPU SDPA's flash kernel has no formula
    #   T=256: 10,903,388,160 | 12,111,347,712; T=1024: 43,546,607,616 | 62,873,960,448 (= the exact count)
    ("torch_dispatch", 32, "sdpa"): 10_903_388_160,
    ("torch_dispatch", 32, "math"): 12_111_347_712,
    ("torch_dispatch", 64, "sdpa"): 43_546_607_616,
    ("torch_dispatch", 64, "math"): 62_873_960_448,
    # ptflops pytorch (MAC): its timm-Attention hook counts 12*(Td + 6*(2*T^2*64 + T^2)) and, being a hooked
    # module, stops accumulate_flops from reaching qkv and proj (12*4*T*d^2 lost); Linear hooks add biases;
    # GELU is counted twice (module hook and patched F.gelu); LayerNorm 1 per element; F.silu 14*d.
    #   (LIN - 12*4*T*d^2) + (12*5d*T + 32T + 29,184) + CONV + d*T + hook + LN + 2*GELU + 5,376
    #   T=256:  3,638,181,888 + 5,935,616 + 1,572,864 + 98,304 + 609,878,016 + 2,457,600 + 9,437,184 + 5,376
    #           = 4,267,566,848
    #   T=1024: 14,519,255,040 + 23,654,912 + 6,291,456 + 393,216 + 9,743,892,480 + 9,830,400 + 37,748,736 + 5,376
    #           = 24,341,071,616
    ("ptflops_pytorch", 32, "sdpa"): 4_267_566_848,
    ("ptflops_pytorch", 32, "math"): 4_267_566_848,
    ("ptflops_pytorch", 64, "sdpa"): 24_341_071_616,
    ("ptflops_pytorch", 64, "math"): 24_341_071_616,
    # ptflops aten (MAC) = LIN + CONV + BIAS_LIN + BIAS_CONV [+ ATTN with math: bmm]
    #   T=256:  5,451,694,080 + 10,654,208 + 98,304 = 5,462,446,592; + 603,979,776 = 6,066,426,368
    #   T=1024: 21,773,303,808 + 42,529,280 + 393,216 = 21,816,226,304; + 9,663,676,416 = 31,479,902,720
    ("ptflops_aten", 32, "sdpa"): 5_462_446_592,
    ("ptflops_aten", 32, "math"): 6_066_426_368,
    ("ptflops_aten", 64, "sdpa"): 21_816_226_304,
    ("ptflops_aten", 64, "math"): 31_479_902_720,
    # torchprofile (MAC) = LIN + CONV + ATTN (it has an SDPA handler) + MUL_OUT + 32T [+ 12*Td with math],
    # MUL_OUT = output elements of aten::mul = 49*Td + 256
    #   T=256:  5,451,694,080 + 603,979,776 + 4,817,152 + 8,192 = 6,060,499,200; + 1,179,648 = 6,061,678,848
    #   T=1024: 21,773,303,808 + 9,663,676,416 + 19,267,840 + 32,768 = 31,456,280,832; + 4,718,592 = 31,460,999,424
    ("torchprofile_jit", 32, "sdpa"): 6_060_499_200,
    ("torchprofile_jit", 32, "math"): 6_061_678_848,
    ("torchprofile_jit", 64, "sdpa"): 31_456_280_832,
    ("torchprofile_jit", 64, "math"): 31_460_999_424,
    # torchinfo (MAC) = batch * (Linear weights + biases) + (conv weights + bias) * T + label table
    #   Linear parameters: 32,963,360 - 6,528 (conv) - 98,304 (pos_embed) - 384,384 (table) = 32,474,144
    #   T=256: 32,474,144 + 6,528*256 + 384,384 = 34,529,696; T=1024: 32,474,144 + 6,684,672 + 384,384 = 39,543,200
    ("torchinfo_summary", 32, "sdpa"): 34_529_696,
    ("torchinfo_summary", 32, "math"): 34_529_696,
    ("torchinfo_summary", 64, "sdpa"): 39_543_200,
    ("torchinfo_summary", 64, "math"): 39_543_200,
}
# calflops (FLOP) = 2*LIN + 2*CONV + BIAS_CONV + 4*LN + GELU + 14*d (silu) + EINSUM; no patch for '@' or SDPA
#   T=256:  10,900,242,432 + 3,145,728 + 98,304 + 9,830,400 + 4,718,592 + 5,376 + 8,193 = 10,918,049,025
#   T=1024: 43,534,024,704 + 12,582,912 + 393,216 + 39,321,600 + 18,874,368 + 5,376 + 32,770 = 43,605,234,946
# DeepSpeed (FLOP) = calflops' sum + 2*ATTN (it patches both SDPA and '@'): 12,126,008,577 | 62,932,587,778
OPTIONAL_PINNED = {
    ("calflops_hooks", 32): 10_918_049_025,
    ("calflops_hooks", 64): 43_605_234_946,
    ("deepspeed_profiler", 32): 12_126_008_577,
    ("deepspeed_profiler", 64): 62_932_587_778,
}


@pytest.fixture(scope="module")
def counts(counter_results):
    """DiT-S/2 at inputs 32 and 64, both attention paths: {(counter, input_size, attn): Count}."""
    return {(k[0], k[2], k[3]): c for k, c in counter_results.items() if k[1] == "DiT-S/2" and k[2] in (32, 64)}


@pytest.mark.parametrize("key", list(PINNED), ids=lambda k: f"{k[0]}-{k[1]}-{k[2]}")
def test_library_reports_pinned(counts, key):
    c = counts[key]
    assert c.error is None, f"{key[0]}: {c.error}"
    assert c.reported == PINNED[key], f"{key[0]} changed its count: {c.reported:,.0f} != {PINNED[key]:,}"
    assert c.flops == PINNED[key] * c.unit.flops_per_unit
    assert c.version not in ("", "unknown")
    assert c.time_s > 0 and c.peak_rss_mb > 100


@pytest.mark.parametrize("key", list(OPTIONAL_PINNED), ids=lambda k: f"{k[0]}-{k[1]}")
@pytest.mark.parametrize("attn", ["sdpa", "math"])
def test_optional_counters_pinned_or_named_unavailable(counts, key, attn):
    c = counts[(key[0], key[1], attn)]
    if c.error:
        assert c.error == f"unavailable: {COUNTERS[key[0]].install}"
        return
    assert c.reported == OPTIONAL_PINNED[key], f"{key[0]} changed its count: {c.reported:,.0f}"


def test_units_are_the_libraries_own(counts):
    units = {name: counts[(name, 32, "sdpa")].unit for name in COUNTERS}
    assert units == {
        "flopcheck_exact": Unit.FLOP,
        "fvcore_jit": Unit.MAC,
        "thop_hooks": Unit.MAC,
        "torch_profiler": Unit.FLOP,
        "torch_dispatch": Unit.FLOP,
        "ptflops_pytorch": Unit.MAC,
        "ptflops_aten": Unit.MAC,
        "torchprofile_jit": Unit.MAC,
        "torchinfo_summary": Unit.MAC,
        "calflops_hooks": Unit.FLOP,
        "deepspeed_profiler": Unit.FLOP,
    }


def _skips(c):
    return {s.name: s.calls for s in c.skipped}


def test_what_each_library_skipped_is_named(counts):
    # fused attention, 12 blocks: each hook- or trace-based counter names the op it did not count
    assert _skips(counts[("fvcore_jit", 32, "sdpa")])["aten::scaled_dot_product_attention"] == 12
    assert _skips(counts[("torch_profiler", 32, "sdpa")])["aten::scaled_dot_product_attention"] == 12
    assert _skips(counts[("torch_dispatch", 32, "sdpa")])["aten._scaled_dot_product_flash_attention_for_cpu"] == 12
    assert _skips(counts[("ptflops_aten", 32, "sdpa")])["aten._scaled_dot_product_flash_attention_for_cpu"] == 12
    # module-hook counters: timm's Attention (12 instances) has no rule, so what its forward computes is lost
    assert _skips(counts[("thop_hooks", 32, "math")])["Attention"] == 12
    assert _skips(counts[("torchinfo_summary", 32, "sdpa")])["Attention"] == 12
    # with explicit matmuls, fvcore counts them and skips only the softmax, never a matmul
    math = _skips(counts[("fvcore_jit", 32, "math")])
    assert "aten::softmax" in math and "aten::matmul" not in math


def test_detail_sums_to_the_reported_total(counter_results):
    for key, c in counter_results.items():
        if isinstance(c, Count) and c.detail:
            in_total = sum(i.flops for i in c.detail if i.in_total)
            assert abs(in_total - c.flops) <= 2, (key, in_total, c.flops)  # float MACs rounded per item


def test_ptflops_shows_the_children_it_dropped(counts):
    # qkv and proj run inside timm's Attention, which ptflops hooks: computed, then left out of the total
    dropped = {i.name for i in counts[("ptflops_pytorch", 32, "sdpa")].detail if not i.in_total}
    assert {"blocks.0.attn.qkv", "blocks.0.attn.proj"} <= dropped and len(dropped) == 24


def test_results_do_not_depend_on_which_counters_ran_before():
    jobs = [Job("DiT-S/8", 32, "math")]
    names = ["thop_hooks", "fvcore_jit", "ptflops_pytorch", "torch_dispatch"]
    forward = run_counters(names, jobs, timeout_s=120)
    backward = run_counters(names[::-1], jobs, timeout_s=120)

    def key(c):
        return c.counter, c.reported, c.detail, c.skipped, c.error

    assert sorted(map(key, forward)) == sorted(map(key, backward))


FAKES = {
    name: CounterSpec(
        name=name, module=f"fake_counters.{name}", library="pytest", unit=Unit.FLOP, install="-", convention="-"
    )
    for name in ("hang", "crash", "segfault", "killer", "leaky", "nan", "none")
}


@pytest.fixture(scope="module")
def contained(request):
    specs = {**COUNTERS, **FAKES}
    jobs = [Job("DiT-S/8", 32, "sdpa"), Job("DiT-S/8", 32, "math")]
    names = ["hang", "crash", "segfault", "killer", "leaky", "nan", "none", "torch_dispatch"]
    return {
        (c.counter, c.attn): c
        # each job's hang waits out its deadline: the two jobs in two workers wait at once, 4 s (not 2 x 8 s)
        for c in run_counters(names, jobs, timeout_s=4, paths=(str(request.path.parent),), specs=specs, workers=2)
    }


def test_a_hanging_counter_is_killed_at_its_timeout(contained):
    for attn in ("sdpa", "math"):
        c = contained[("hang", attn)]
        assert c.error.startswith("timed out after 4 s: killed") and c.flops is None


def test_a_crash_is_that_counters_one_line_error(contained):
    assert contained[("crash", "sdpa")].error == "RuntimeError: cannot trace this model"
    assert contained[("segfault", "sdpa")].error == "the counting process died (signal SIGSEGV)"


def test_a_total_that_is_not_a_number_is_that_counters_error_and_the_later_ones_still_count(contained):
    # before: NaN or None killed the worker ('cannot convert float NaN to integer'), and every later counter of the
    # job (torch_dispatch here) came back as "its worker died" with no number
    assert contained[("nan", "sdpa")].error == "it returned nan, not a number of FLOPs"
    assert contained[("none", "math")].error == "it returned None, not a number of FLOPs"
    assert contained[("torch_dispatch", "math")].flops == 715_948_032  # DiT-S/8 at 256 px, explicit attention


def test_a_counter_that_kills_its_worker_is_its_own_error_and_the_later_ones_still_count(contained):
    # held-out round 4: a counter that killed the shared worker took every later counter's number of the job with it
    # ("its worker died"); now the worker says which counter it is on, and the rest count in a fresh worker
    for attn in ("sdpa", "math"):
        assert contained[("killer", attn)].error == (
            "the worker it ran in died (signal SIGKILL); the job's later counters counted in a fresh worker"
        )
        assert contained[("leaky", attn)].reported == 1.0 and contained[("nan", attn)].error.startswith("it returned")
    assert contained[("torch_dispatch", "math")].flops == 715_948_032  # DiT-S/8 at 256 px, explicit attention


def test_the_others_report_and_no_patch_leaks(contained):
    # DiT-S/8 math with FlopCounterMode equals the exact count: 2 * 357,974,016 MACs (Table 4's S/8) = 715,948,032
    assert contained[("torch_dispatch", "math")].reported == 715_948_032
    assert contained[("leaky", "sdpa")].reported == 1.0 and contained[("leaky", "math")].reported == 1.0


def test_a_missing_library_is_named_with_its_fix():
    spec = CounterSpec(
        name="ghost",
        module="flopcheck.counters.fvcore_jit",
        library="ghostlib",
        import_name="ghostlib_not_installed",
        unit=Unit.MAC,
        install="pip install 'flopcheck[ghost]'",
        convention="-",
    )
    (c,) = run_counters(["ghost"], [Job("DiT-S/8")], specs={"ghost": spec})
    assert c.error == "unavailable: pip install 'flopcheck[ghost]'" and c.flops is None


def test_unknown_counter_is_refused_before_anything_runs():
    with pytest.raises(ValueError, match="unknown counter 'fvcroe'; known: .*fvcore_jit"):
        run_counters(["fvcroe"], [Job("DiT-S/8")])


def test_the_card_counters_are_required():
    assert set(REQUIRED) == {"fvcore_jit", "thop_hooks", "torch_profiler", "torch_dispatch"}


def test_fvcore_reads_a_model_whose_output_holds_a_cache_object():
    # transformers' decoders return a DynamicCache beside their tensors (use_cache's default), which a jit trace
    # cannot return: fvcore failed on every such model. A Linear 8 -> 4 on (2, 8) that returns (y, object()): its
    # tensors traced alone, 2 x 4 x 8 = 64 MACs (fvcore's unit), its addmm the one op
    import torch
    from torch import nn

    from flopcheck.counters.fvcore_jit import run

    class WithCache(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.proj = nn.Linear(8, 4)

        def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, object]:
            return self.proj(x), object()

    m = run(WithCache(), (torch.zeros(2, 8),))
    assert m.reported == 64 and [(i.name, i.reported) for i in m.detail] == [("linear", 64)]


def test_flop_counter_mode_counts_a_model_its_module_tracker_refuses_under_no_grad():
    # FlopCounterMode's module tracker hooks each module's inputs for the backward; a view of a parameter made under
    # no_grad (CaiT's class token, Mamba's mixer) requires grad with no grad_fn, and it raised "Expected gradient
    # function to be set" where the workers count (under no_grad). Counted again with grad on, as its users run it:
    # the (1, 8) slice by an (8, 4) weight, 2 x 1 x 8 x 4 = 64 FLOPs, its mm the one op
    import torch
    from torch import nn

    from flopcheck.counters.torch_dispatch import run

    class Weight(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = nn.Parameter(torch.zeros(8, 4))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x @ self.w  # (1, 4)

    class ClassToken(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.cls = nn.Parameter(torch.zeros(1, 1, 8))
            self.head = Weight()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.head(self.cls[:, 0])  # the token's (1, 8) view, x unused

    with torch.no_grad():
        m = run(ClassToken(), (torch.zeros(2, 3, 8),))
    assert m.reported == 64 and [(i.name, i.flops) for i in m.detail] == [("aten.mm", 64)]
