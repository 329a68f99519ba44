"""The reconciler: every cause triggered with its exact delta and not triggered where it does not
apply; every counter closed to a zero residual on every config; the T-sweep; the command.

DiT-S/2 at input 32 (T = 256, d = 384, L = 12), in FLOPs (derivations in test_counters.py):
  reference 12,111,347,712; attention 12 * 4 * T^2 * d = 1,207,959,552 (QK^T and attn@V 603,979,776 each)
"""

import importlib
import json
from dataclasses import replace

import pytest
from conftest import LARGE_ONE_BLOCK, LARGE_WHOLE, S2_T4096, SMALL, shared_once

from flopcheck.cli import main
from flopcheck.reconciler import blackbox as B
from flopcheck.reconciler import explain, reference_for
from flopcheck.reconciler.causes import CAUSES
from flopcheck.reconciler.detectors import DETECTORS
from flopcheck.reconciler.sweep import sweep
from flopcheck.types import BySpace, Count, Item, Unit

REFERENCE = 12_111_347_712
ATTENTION = 1_207_959_552
HALF_ATTENTION = 603_979_776


@pytest.fixture(scope="module")
def s2(counter_results):
    """{(counter, attn): Reconciliation} for DiT-S/2 at input 32."""
    return {(k[0], k[3]): explain(c) for k, c in counter_results.items() if k[1:3] == ("DiT-S/2", 32)}


def deltas(r):
    return {f.code: f.delta for f in r.findings}


# ---------------------------------------------------------------------------------------------
# Each cause, from a real counter where one does it
# ---------------------------------------------------------------------------------------------


def test_fc101_mac_convention(s2):
    # fvcore reports 5,461,528,576 MACs = 10,923,057,152 FLOPs / 2: reading it as FLOPs loses 5,461,528,576
    assert deltas(s2[("fvcore_jit", "sdpa")])["FC101"] == -5_461_528_576
    assert "FC101" not in deltas(s2[("torch_dispatch", "sdpa")])


def test_fc201_fused_attention_uncounted(s2):
    r = s2[("torch_dispatch", "sdpa")]
    assert deltas(r) == {"FC201": -ATTENTION} and r.closed
    assert "_scaled_dot_product_flash_attention_for_cpu" in r.findings[0].evidence
    assert deltas(s2[("torch_dispatch", "math")]) == {}  # the math path: exact, nothing to explain


def test_fc204_module_type_not_hooked(s2):
    assert deltas(s2[("thop_hooks", "math")])["FC204"] == -ATTENTION
    assert "FC204" not in deltas(s2[("fvcore_jit", "math")])


def test_fc206_hooked_container_drops_children(s2):
    # qkv + proj inside each hooked Attention: 2 * 12 * (3 + 1) * T * d^2 = 2 * 12 * 4 * 256 * 147,456 = 3,623,878,656
    assert deltas(s2[("ptflops_pytorch", "sdpa")])["FC206"] == -3_623_878_656
    assert "FC206" not in deltas(s2[("thop_hooks", "sdpa")])


def test_fc207_matmul_operator_unpatched(s2):
    r = s2[("calflops_hooks", "math")]
    if r.error:
        pytest.skip(r.error)
    assert deltas(r)["FC207"] == -ATTENTION
    assert "FC207" not in deltas(s2[("torch_dispatch", "math")])  # a dispatch-level counter sees every bmm


def test_fc301_norm_counted(s2):
    # fvcore: 4 FLOPs-as-MACs per LayerNorm element, 25 * T * d = 2,457,600 elements: 2 * 4 * 2,457,600 = 19,660,800
    # thop: 2 per element: 2 * 2 * 2,457,600 = 9,830,400
    assert deltas(s2[("fvcore_jit", "sdpa")])["FC301"] == 19_660_800
    assert deltas(s2[("thop_hooks", "sdpa")])["FC301"] == 9_830_400
    assert "FC301" not in deltas(s2[("torch_profiler", "sdpa")])


def test_fc302_elementwise_counted(s2):
    # the profiler: 76 adds (50*Td + 9,984 = 4,925,184) and 51 muls (25*Td + 9,345 = 2,466,945), Td = 98,304
    assert deltas(s2[("torch_profiler", "sdpa")])["FC302"] == 7_392_129
    assert "FC302" not in deltas(s2[("fvcore_jit", "sdpa")])


def test_fc303_permutation_einsum_counted(s2):
    # fvcore: floor(8,193 / 2) = 4,096 MACs = 8,192 FLOPs; torchprofile: 32 * T = 8,192 MACs = 16,384 FLOPs
    assert deltas(s2[("fvcore_jit", "sdpa")])["FC303"] == 8_192
    assert deltas(s2[("torchprofile_jit", "sdpa")])["FC303"] == 16_384
    assert "FC303" not in deltas(s2[("torch_dispatch", "sdpa")])


def test_fc304_bias_adds_counted(s2):
    # ptflops aten: every addmm and convolution bias add, 10,654,208 + 98,304 = 10,752,512 MACs = 21,505,024 FLOPs
    assert deltas(s2[("ptflops_aten", "sdpa")])["FC304"] == 21_505_024
    assert "FC304" not in deltas(s2[("torch_dispatch", "sdpa")])


def test_fc305_activation_double_counted(s2):
    # ptflops: nn.GELU hooked and F.gelu patched: 12 * 4 * Td = 4,718,592 elements again, as MACs: 9,437,184 FLOPs
    assert deltas(s2[("ptflops_pytorch", "sdpa")])["FC305"] == 9_437_184
    assert "FC305" not in deltas(s2[("thop_hooks", "sdpa")])


def test_fc306_embedding_lookup_counted(s2):
    # torchinfo: the label table's 1,001 * 384 = 384,384 weights as MACs = 768,768 FLOPs
    assert deltas(s2[("torchinfo_summary", "sdpa")])["FC306"] == 768_768
    assert "FC306" not in deltas(s2[("thop_hooks", "sdpa")])


def test_fc403_per_token_counted_per_sample(s2):
    # torchinfo counts per-token Linear weights once per sample. Per-token weights: 12 blocks * 12 d^2 +
    # final 384 * 32 = 21,233,664 + 12,288 = 21,245,952; true 2 * T * W = 10,877,927,424, counted 2 * W = 42,491,904
    assert deltas(s2[("torchinfo_summary", "sdpa")])["FC403"] == -10_835_435_520
    assert "FC403" not in deltas(s2[("fvcore_jit", "sdpa")])


# ---------------------------------------------------------------------------------------------
# Causes no library here shows: triggered by counts built to do what published tools have done
# ---------------------------------------------------------------------------------------------


def _without(count: Count, suffix: str) -> Count:
    """flopcheck's own count with one half of attention taken out, as a hand count that forgot it."""
    detail = tuple(i for i in count.detail if not i.name.endswith(suffix))
    total = sum(i.flops for i in detail)
    return replace(count, counter="hand_count", detail=detail, reported=total, flops=total)


def test_fc202_attn_v_missing_and_fc205_qk_missing(counter_results):
    exact = counter_results[("flopcheck_exact", "DiT-S/2", 32, "math")]
    assert deltas(explain(exact)) == {} and explain(exact).closed  # the reference itself: nothing to explain
    qk_only = explain(_without(exact, ".av"))
    assert deltas(qk_only) == {"FC202": -HALF_ATTENTION} and qk_only.closed
    av_only = explain(_without(exact, ".qk"))
    assert deltas(av_only) == {"FC205": -HALF_ATTENTION} and av_only.closed


def test_fc402_linear_double_counted(counter_results):
    exact = counter_results[("torch_dispatch", "DiT-S/2", 32, "math")]
    doubled = tuple(
        replace(i, reported=2 * i.reported, flops=2 * i.flops) if i.name == "aten.addmm" else i for i in exact.detail
    )
    total = sum(i.flops for i in doubled)
    r = explain(replace(exact, counter="patched_twice", detail=doubled, reported=total, flops=total))
    # every linear matmul once more: 2 * LIN = 10,900,242,432 FLOPs (LIN as in test_counters.py)
    assert deltas(r) == {"FC402": 10_900_242_432} and r.closed


def _total_only(value: float, unit: Unit = Unit.FLOP, batch: int = 1) -> Count:
    return Count(
        counter="a_total",
        library="-",
        version="-",
        unit=unit,
        model="DiT-S/2",
        input_size=32,
        attn="sdpa",
        batch=batch,
        reported=value,
        flops=round(value * unit.flops_per_unit),
    )


def test_fc203_vit_shortcut_black_box():
    # the ViT shortcut: 12 * T * d^2 MACs per block, nothing else: 12 * 12 * 256 * 147,456 = 5,435,817,984 MACs
    r = explain(_total_only(5_435_817_984, Unit.MAC), reference_for("DiT-S/2", 32, "sdpa"))
    # everything but the block linears is missing: 10,871,635,968 - 12,111,347,712 = -1,239,711,744
    assert deltas(r) == {"FC203": -1_239_711_744, "FC101": -5_435_817_984} and r.closed
    assert r.mode.startswith("black box")


def test_fc200_attention_uncounted_black_box_and_the_truth_needs_no_cause():
    ref = reference_for("DiT-S/2", 32, "sdpa")
    r = explain(_total_only(REFERENCE - ATTENTION), ref)
    assert deltas(r) == {"FC200": -ATTENTION} and r.closed
    # the exact total reconciles with no cause at all: no black-box cause fires where it does not apply
    r = explain(_total_only(REFERENCE), ref)
    assert r.findings == () and r.closed


def test_fc401_per_sample_counted_per_token_black_box():
    # per-sample terms of DiT-S/2: adaLN 12 * 12 d^2 = 21,233,664, timestep MLP 2*256*384 + 2*384^2 = 491,520,
    # final adaLN 4 d^2 = 589,824: 22,315,008; counted T = 256 times: + 255 * 22,315,008 = +5,690,327,040
    r = explain(_total_only(REFERENCE + 5_690_327_040), reference_for("DiT-S/2", 32, "sdpa"))
    assert deltas(r) == {"FC401": 5_690_327_040} and r.closed


def test_fc404_batch_not_normalised(counter_results):
    # FlopCounterMode's math-path count is exact; over a batch of 2 it is twice the per-sample reference
    exact = counter_results[("torch_dispatch", "DiT-S/2", 32, "math")]
    r = explain(
        replace(exact, batch=2, detail=(), reported=2 * REFERENCE, flops=2 * REFERENCE),
        reference_for("DiT-S/2", 32, "math", batch=1),
    )
    assert deltas(r) == {"FC404": REFERENCE} and r.closed


@pytest.mark.parametrize(
    "reading,total,code,delta",
    [
        # CFG: 2 forwards, +12,111,347,712; 50 steps: +49 forwards = +593,456,037,888; training: +2 forwards
        (dict(cfg=True), 2 * REFERENCE, "FC501", REFERENCE),
        (dict(steps=50), 50 * REFERENCE, "FC502", 49 * REFERENCE),
        (dict(training=True), 3 * REFERENCE, "FC503", 2 * REFERENCE),
    ],
)
def test_fc50x_scope_black_box(reading, total, code, delta):
    ref = reference_for("DiT-S/2", 32, "sdpa")
    options = B.readings(units=(Unit.FLOP,), cfgs=(False, True), steps=(1, 50), trainings=(False, True))
    explanations = [B.explain(r, ref.formula, None, BySpace(256)) for r in options]
    _, best = B.rank(total, explanations)[0]
    assert best.flops == total
    assert {f.code: f.delta for f in best.findings} == {code: delta}
    assert B.rank(REFERENCE, explanations)[0][1].findings == ()  # one forward needs no cause


def test_fc504_pixel_space_black_box():
    # DiT-S/2 on 256 px pixels: T = 16,384, C = 3, C_out = 6:
    # 12 * (24*16384*384^2 + 4*16384^2*384 + 12*384^2) = 12 * (57,982,058,496 + 412,316,860,416 + 1,769,472)
    #   = 12 * 470,300,688,384 = 5,643,608,260,608; + patch embed 2*16384*384*12 = 150,994,944
    #   + final linear 2*16384*384*24 = 301,989,888 + timestep 491,520 + final adaLN 589,824
    #   = 5,643,608,260,608 + 454,066,176 = 5,644,062,326,784
    from flopcheck.formula import formula_breakdown
    from reference_models import get_config

    pixel = formula_breakdown("DiT-S/2", get_config("DiT-S/2", space="pixel"))
    assert pixel.total == 5_644_062_326_784
    ref = reference_for("DiT-S/2", 32, "sdpa")
    explanations = [
        B.explain(r, ref.formula, pixel, BySpace(256, 16384))
        for r in B.readings(units=(Unit.FLOP,), pixels=(False, True))
    ]
    _, best = B.rank(pixel.total, explanations)[0]
    assert {f.code: f.delta for f in best.findings} == {"FC504": 5_644_062_326_784 - REFERENCE}


def test_fc901_unexplained_residual(counter_results):
    exact = counter_results[("torch_dispatch", "DiT-S/2", 32, "math")]
    odd = exact.detail + (Item("aten.mystery", 1000, 1000),)
    r = explain(replace(exact, counter="odd", detail=odd, reported=REFERENCE + 1000, flops=REFERENCE + 1000))
    assert r.residual == 1000 and not r.closed
    assert [f.code for f in r.findings] == ["FC901"] and "+1,000" in r.findings[0].evidence


def test_every_cause_is_registered_with_a_fix():
    assert all(c.fix and c.what and c.slug for c in CAUSES.values())
    assert CAUSES["FC201"].upstream  # an upstream gap, cited so the cause can be retired


def test_a_second_detector_for_a_cause_raises_at_import(tmp_path, monkeypatch):
    """A module (a plugin) registering a detector for a cause that has one fails to import, and registers nothing."""
    (tmp_path / "second_norm_detector.py").write_text(
        "from flopcheck.reconciler.causes import NORM_COUNTED\n"
        "from flopcheck.reconciler.detectors import detects\n\n\n"
        "@detects(NORM_COUNTED)\n"
        "def again(ev):\n"
        "    return None\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    before = list(DETECTORS)
    with pytest.raises(ValueError, match=r"cause FC301 \(norm-counted\) has a detector already"):
        importlib.import_module("second_norm_detector")
    assert DETECTORS == before
    assert sum(c.code == "FC301" for causes, _ in DETECTORS for c in causes) == 1


# ---------------------------------------------------------------------------------------------
# Every counter closes, everywhere
# ---------------------------------------------------------------------------------------------


def _assert_all_close(results: dict, models: list[str], sizes=(32,), stand_in: dict | None = None):
    """Every count of these models (or of their stand-in with these config fields) closes to 0; how many did."""
    checked = 0
    for (counter, model, size, attn), count in results.items():
        if model not in models or size not in sizes or count.error:
            continue
        name = model.split(" {")[0]
        ref = reference_for(name, size, attn, 1, tuple(sorted(stand_in.items()))) if stand_in else None
        r = explain(count, ref)
        assert r.closed, f"{counter} on {model} @{size} {attn}: {r.findings}"
        checked += 1
    return checked


def test_every_counter_closes_on_the_small_configs(counter_results):
    # 6 configs x 2 attention paths x every installed counter (at least the 4 on the card and the 4 small ones)
    assert _assert_all_close(counter_results, SMALL) >= 6 * 2 * 8


def test_every_counter_closes_where_attention_is_a_third_and_more(counter_results):
    # DiT-S/2 at input 64 (T = 1,024): attention 9,663,676,416 MACs of 31.4 G (31%)
    assert _assert_all_close(counter_results, ["DiT-S/2"], (64,)) >= 2 * 8
    # 2 of its blocks at input 128 (T = 4,096): attention 2 x 4,096^2 x 384 = 12,884,901,888 MACs a block against
    # the linears' 12 x 4,096 x 384^2 = 7,247,757,312: 64%
    label = "DiT-S/2 {input_size=128, depth=2}"
    assert _assert_all_close(counter_results, [label], (128,), stand_in={"depth": S2_T4096["depth"]}) >= 2 * 8


@pytest.mark.slow
def test_every_counter_closes_on_the_large_configs(large_counter_results):
    # XL/2, L/4, L/8 and XL/8 whole; L/2, XL/2 and XL/4 as 1 of their blocks (d = 1,024 and 1,152 in 16 heads; T =
    # 256, 256 and 64 tokens): each counter's rule per layer, at every L and XL width, closes as on the whole model
    assert _assert_all_close(large_counter_results, LARGE_WHOLE) >= 4 * 2 * 8
    labels = [f"{n} {{depth=1}}" for n in LARGE_ONE_BLOCK]
    assert _assert_all_close(large_counter_results, labels, stand_in={"depth": 1}) >= 3 * 2 * 8


# ---------------------------------------------------------------------------------------------
# The T-sweep, from totals alone
# ---------------------------------------------------------------------------------------------


def test_fit_is_exact_on_a_quadratic():
    # 7 + 3T + 2T^2 at T = 1, 2, 3 and checked at 10: 7 + 30 + 200 = 237
    fit = B.fit_quadratic([(1, 12), (2, 21), (3, 34), (10, 237)])
    assert (fit.a, fit.b, fit.c, fit.misfit) == (7, 3, 2, 0)
    with pytest.raises(ValueError, match="three"):
        B.fit_quadratic([(1, 1), (1, 1), (2, 2)])


@pytest.fixture(scope="module")
def sweeps(s2, counter_results):
    from flopcheck.counters.pool import Job, run_counters

    names = ["fvcore_jit", "torch_dispatch", "ptflops_pytorch"]
    sizes = (8, 16, 24)  # T = 16, 64, 144; T = 256 (input 32) is the session's run of DiT-S/2 (counter_results)
    jobs = [Job("DiT-S/2", s, a) for s in sizes for a in ("sdpa", "math")]
    counts = shared_once("reconcile_sweeps", lambda: run_counters(names, jobs, timeout_s=300))
    counts += [counter_results[(n, "DiT-S/2", 32, a)] for n in names for a in ("sdpa", "math")]
    return {
        (n, a): sweep([c for c in counts if (c.counter, c.attn) == (n, a)], "DiT-S/2", a, s2[(n, a)])
        for n in names
        for a in ("sdpa", "math")
    }


def test_sweep_names_unit_and_attention_from_totals(sweeps):
    v = sweeps[("fvcore_jit", "sdpa")].verdict
    assert (v.unit, v.attention) == ("MAC", "missing") and abs(v.b_ratio - 0.5) < 0.01 and v.c_ratio == 0
    v = sweeps[("torch_dispatch", "math")].verdict
    assert (v.unit, v.attention) == ("FLOP", "counted") and v.b_ratio == 1.0 and v.c_ratio == 1.0
    v = sweeps[("torch_dispatch", "sdpa")].verdict
    assert (v.unit, v.attention) == ("FLOP", "missing")
    # ptflops drops qkv and proj (T-coefficient about a third of the MAC value) but counts attention: c says MAC
    v = sweeps[("ptflops_pytorch", "math")].verdict
    assert v.label == "MAC (from T^2)" and v.attention == "counted" and v.b_ratio < 0.4


def test_sweep_agrees_with_the_white_box(sweeps):
    assert all(s.agrees for s in sweeps.values())


# ---------------------------------------------------------------------------------------------
# The command
# ---------------------------------------------------------------------------------------------


@pytest.mark.integration
def test_reconcile_command_json(capsys):
    code = main(
        ["reconcile", "DiT-S/8", "--counter", "torch_dispatch", "--counter", "fvcore_jit", "--attn", "sdpa", "--json"]
    )
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    by = {d["counter"]: d for d in data}
    # DiT-S/8: T = 16; attention 12 * 4 * 16^2 * 384 = 4,718,592 FLOPs, fused on CPU, uncounted
    assert by["torch_dispatch"]["findings"] == [
        {
            "code": "FC201",
            "title": "fused-attention-uncounted",
            "delta_flops": -4_718_592,
            "evidence": by["torch_dispatch"]["findings"][0]["evidence"],
        }
    ]
    assert by["torch_dispatch"]["residual_flops"] == 0 and by["torch_dispatch"]["closed"] is True
    assert by["fvcore_jit"]["unit"] == "MAC" and by["fvcore_jit"]["findings"][-1]["code"] == "FC101"


@pytest.mark.integration
def test_reconcile_command_text_is_a_proof(capsys):
    code = main(["reconcile", "DiT-S/8", "--counter", "thop_hooks", "--attn", "math"])
    out = capsys.readouterr().out
    assert code == 0
    assert "FC204 module-type-not-hooked" in out and "= counter, as reported (MAC)" in out and "closed" in out


@pytest.mark.integration
def test_reconcile_exits_1_when_unexplained(capsys, monkeypatch, request):
    from flopcheck.counters import COUNTERS, CounterSpec

    monkeypatch.setenv("PYTHONPATH", str(request.path.parent))
    monkeypatch.setitem(
        COUNTERS,
        "bogus",
        CounterSpec(
            name="bogus", module="fake_counters.bogus", library="pytest", unit=Unit.FLOP, install="-", convention="-"
        ),
    )
    assert main(["reconcile", "DiT-S/8", "--counter", "bogus"]) == 1
    assert "UNEXPLAINED" in capsys.readouterr().out


def test_reconcile_bad_input_exits_2(capsys):
    assert main(["reconcile", "DiT-S/8", "--counter", "nope"]) == 2
    assert "unknown counter 'nope'" in capsys.readouterr().err
    assert main(["reconcile", "DiT-Q/2"]) == 2
