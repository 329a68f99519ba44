"""Helpers for one's own tests: assert a FLOP figure, and say why it is off when it is.

    from flopcheck.testing import assert_flops_close
    assert_flops_close(model, (x,), 4.6e9, unit="MAC")   # passes within 10%

A failure's message is the reconciliation: which convention (FLOP or MAC) and which causes
(attention missing, blocks only, ...) turn the true count into the asserted number.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from torch import nn

from flopcheck import checks
from flopcheck.api import audit
from flopcheck.auditor import Verdict
from flopcheck.counted import ExactCount
from flopcheck.errors import InputError
from flopcheck.exact import count_forward, flop_kinds
from flopcheck.fmt import commas
from flopcheck.reconciler.causes import UNEXPLAINED_RESIDUAL
from flopcheck.types import Unit


class FlopAssertionError(AssertionError):
    """A FLOP figure that does not hold, with the reading that explains it in the message."""


def _as_tuple(inputs: Any) -> tuple[Any, ...]:
    return inputs if isinstance(inputs, tuple) else (inputs,)


def exact_flops(model: nn.Module, inputs: Any, kwargs: dict[str, Any] | None = None) -> int:
    """flopcheck's exact count of model(*inputs, **kwargs), FLOPs (2 per multiply-add)."""
    return _count(model, inputs, kwargs).total


def _count(model: nn.Module, inputs: Any, kwargs: dict[str, Any] | None = None) -> ExactCount:
    count: ExactCount = count_forward(model, _as_tuple(inputs), kind_map=flop_kinds(model), kwargs=kwargs)
    return count


def _verdict(value: float, unit: Unit, model: nn.Module, inputs: Any, kwargs: dict[str, Any] | None) -> Verdict:
    """The audit of `value` on model(*inputs, **kwargs): the same readings every front door reads (the module
    structure's block lists, the per-layer shortcut, the units), no counter run."""
    text = format(Decimal(repr(value)).normalize(), "f")
    v = audit(f"{text} {unit.value}s", model, *_as_tuple(inputs), counters=False, model_kwargs=dict(kwargs or {}))
    assert isinstance(v, Verdict), v  # a module's claim: a model's verdict, never a pipeline's
    return v


def _message(value: float, unit: Unit, truth: int, verdict: Verdict, exact: bool = False) -> str:
    stated_flops = value * unit.flops_per_unit
    in_flops = f" ({stated_flops:,.0f} FLOPs)" if unit is Unit.MAC else ""
    lines = [
        f"expected {value:,.0f} {unit.value}s{in_flops} but the exact count is {commas(truth)} FLOPs "
        f"({stated_flops / truth:.3f}x)"
    ]
    v = verdict
    named = v.cause or v.best  # the reading the claim is judged by
    fits = named.fit(v.claim) in ("exact", "rounded") or named.relative < 0.01
    if exact and named.distance:
        residual = value - float(named.value)
        lines.append(
            f"no reading explains it exactly; the nearest, {named.describe()}, leaves "
            f"{residual:+,.0f} {named.unit.value}s unexplained ({UNEXPLAINED_RESIDUAL.code})"
        )
    elif fits:
        findings = (
            [*named.findings, *(f for f in v.best.findings if f not in named.findings)]
            if named is not v.best
            else list(named.findings)
        )
        causes = list(dict.fromkeys(f"{f.code} {f.title}" for f in findings)) or ["nothing: a rounding"]
        lines.append(f"the number reads as {named.describe()}: " + ", ".join(causes))
        if named.unit is Unit.MAC and unit is Unit.FLOP:
            lines.append(
                "it is a MAC figure (one multiply-add = 1) asserted as FLOPs (= 2): pass unit='MAC' or double it"
            )
    else:
        lines.append(f"no reading explains it; the nearest is {named.describe()} ({float(named.relative):.1%} away)")
    return "\n".join(lines)


_checked = checks.number  # the same rules as the command line's and the verbs' (flopcheck.checks)


def _unit(unit: str | Unit) -> Unit:
    try:
        return unit if isinstance(unit, Unit) else Unit(str(unit).upper().rstrip("S"))
    except ValueError:
        raise InputError(f"unit must be 'FLOP' or 'MAC', got {unit!r}") from None


def assert_flops_close(
    model: nn.Module,
    inputs: Any,
    expected: float,
    *,
    rtol: float = 0.10,
    unit: str | Unit = "FLOP",
    kwargs: dict[str, Any] | None = None,
) -> int:
    """Assert `expected` (in `unit`: 'FLOP' or 'MAC') is within rtol of the exact count of
    model(*inputs, **kwargs); return the exact FLOPs. The failure message names the convention and causes."""
    _checked("expected", expected, low_open=False)
    _checked("rtol", rtol, low_open=False)
    stated = _unit(unit)
    count = _count(model, inputs, kwargs)
    if not count.complete:
        raise FlopAssertionError(
            f"no exact count to compare {expected:,} {stated.value}s with: " + count.incompleteness()
        )
    truth = count.total
    if abs(expected * stated.flops_per_unit - truth) <= rtol * truth:
        return truth
    if truth == 0:
        raise FlopAssertionError(
            f"expected {expected:,} {stated.value}s but the model does no multiply-adds (the exact count is 0 FLOPs)"
        )
    raise FlopAssertionError(_message(expected, stated, truth, _verdict(expected, stated, model, inputs, kwargs)))


def assert_reconciles(
    model: nn.Module, inputs: Any, reference: float, *, unit: str | Unit = "FLOP", kwargs: dict[str, Any] | None = None
) -> None:
    """Assert another tool's number (`reference`, in `unit`) is explained exactly by a reading of
    the exact count of model(*inputs, **kwargs): a known convention and known causes, nothing unexplained."""
    _checked("reference", reference, low_open=False)
    stated = _unit(unit)
    count = _count(model, inputs, kwargs)
    if not count.complete:
        raise FlopAssertionError(
            f"no exact count to reconcile {reference:,} {stated.value}s with: " + count.incompleteness()
        )
    if count.total == 0:  # no multiply-adds: 0 is the exact count, and any other number is explained by nothing
        if reference == 0:
            return
        raise FlopAssertionError(
            f"{reference:,} {stated.value}s cannot be explained: the model does no "
            f"multiply-adds (the exact count is 0 FLOPs)"
        )
    if reference == 0:
        raise FlopAssertionError(f"0 {stated.value}s cannot be explained: the exact count is {count.total:,} FLOPs")
    v = _verdict(reference, stated, model, inputs, kwargs)
    named = v.cause or v.best  # the reading the claim is judged by
    if named.unit is not stated or named.distance:
        raise FlopAssertionError(_message(reference, stated, count.total, v, exact=True))


def assert_mfu_close(
    model: nn.Module,
    inputs: Any,
    mfu: float,
    *,
    samples_per_second: float,
    gpu: str,
    gpus: int = 1,
    dtype: str = "bf16",
    rtol: float = 0.02,
    kwargs: dict[str, Any] | None = None,
) -> float:
    """Assert a logger's MFU (a fraction) is within rtol of the one the exact training step of model(*inputs,
    **kwargs) gives at `samples_per_second` on `gpus` x `gpu` (named: never a default): one sample's model FLOPs x
    samples/s / (GPUs x the dtype's dense peak); return the true MFU. The failure message names the readings that
    give the logged value."""
    from fractions import Fraction

    from flopcheck.auditor.rates import RateKind
    from flopcheck.auditor.utilization import GpuJob, explain_mfu, work_from_step
    from flopcheck.gpus import get_gpu
    from flopcheck.subject import live

    checks.fraction("mfu", mfu)  # a fraction of the peak: at most 1
    _checked("samples_per_second", samples_per_second)
    _checked("rtol", rtol, low_open=False)
    checks.whole("gpus", gpus)
    checks.text("gpu", gpu, "'H100'")
    checks.text("dtype", dtype, "'bf16'")
    measured = live(model, _as_tuple(inputs), dict(kwargs or {})).measured(training=True)
    work = work_from_step(measured.step, measured.batch or 1)
    job = GpuJob(get_gpu(gpu), gpus, dtype, Fraction(repr(samples_per_second)), f"{samples_per_second:g} samples/s")
    true, nearest = explain_mfu(Fraction(repr(mfu)), work, job)
    if abs(Fraction(repr(mfu)) - true) <= rtol * true:
        return float(true)
    raise FlopAssertionError(
        f"logged MFU {mfu:.4g} but the exact step gives {float(true):.4g} ({float(work.model):,.0f} model FLOPs "
        f"per sample x {samples_per_second:g} samples/s / ({gpus} x {job.gpu.name}'s {dtype.upper()} dense peak)); "
        f"{mfu:.4g} is nearest {float(nearest.value):.4g}: {nearest.words(RateKind.MFU)}"
    )


def assert_log_mfu(
    path: str,
    model: str,
    *,
    gpu: str,
    gpus: int = 1,
    batch: int | None = None,
    text_tokens: int | None = None,
    config: str | None = None,
    dtype: str = "bf16",
    rtol: float = 0.02,
) -> float:
    """Assert the MFU a training log prints (its steady state's median line) is within rtol of the true MFU of
    `model` at the logged rate (flopcheck.auditor.logs.audit_log; `batch`: samples per iteration per GPU); return the
    true MFU. The failure message names the reading that gives the logged value (the framework's formula over which
    peak)."""
    from flopcheck.auditor.logs import audit_log
    from flopcheck.auditor.rates import RateKind

    _checked("rtol", rtol, low_open=False)
    v = audit_log(path, model, gpu=gpu, gpus=gpus, batch=batch, text_tokens=text_tokens, config=config, dtype=dtype)
    logged = next((f for f in v.figures if f.what is RateKind.MFU), None)
    if logged is None:
        raise InputError(f"{path} ({v.fmt.title} log) prints no MFU: its figures are checked by flopcheck audit --log")
    if abs(logged.logged.value - v.mfu) <= rtol * v.mfu:
        return float(v.mfu)
    how = "reads as" if logged.fits else "is nearest"
    raise FlopAssertionError(
        f"{path} logs MFU {float(logged.logged.value):.4g} (line {v.median_line}) but the exact step gives "
        f"{float(v.mfu):.4g} at {v.rate_words}; {float(logged.logged.value):.4g} {how} "
        f"{logged.reading.words(RateKind.MFU)} ({float(logged.reading.value):.4g})"
    )
