"""Reconciliations as proofs (text) and as JSON-ready dicts."""

from __future__ import annotations

from typing import Any

from flopcheck.fmt import commas, table
from flopcheck.reconciler import causes as K
from flopcheck.reconciler.sweep import Sweep, sweep_of
from flopcheck.render import COLUMNS, fit
from flopcheck.types import PRESENTERS, Reconciled, Reconciliation

WIDTH = 44
FORMULA = "formula = exact count"  # a reference model's reference; a spec's is its exact count alone


def _at(label: str, value: int | str, note: str = "", width: int | None = None) -> str:
    """'  label  value  note'; within `width` columns, the note wrapped under the line where it is longer."""
    text = value if isinstance(value, str) else f"{value:+,}" if label[:2] == "FC" else commas(value)
    line = f"  {label:<{WIDTH}s}{text:>20s}"
    return "\n".join(fit(f"{line}  {note}", width, len(line))) if note and width else line + (f"  {note}" * bool(note))


def proof(r: Reconciliation, width: int | None = None) -> str:
    """Reference, each cause with its delta, the counter as FLOPs, the unit, the residual: closed or not; `width`:
    the columns it fits (a long note wrapped under its line), None as the report keeps it."""
    at = f" @{r.input_size}" if r.input_size is not None else ""
    head = f"{r.model}{at} · attn {r.attn} · {r.counter} ({r.unit.value}) · {r.mode}"
    if not isinstance(r, Reconciled):  # an error: no number, or none read, so no residual
        said = f"  {'does not apply' if r.formula is not None else 'error'}: {r.error}"
        return "\n".join([head, *(fit(said, width) if width else [said])])

    def _line(label: str, value: int | str, note: str = "") -> str:
        return _at(label, value, note, width)

    lines = [head, _line(f"reference ({r.reference}), FLOPs", r.reference_flops)]
    if r.incomplete:
        lines.append(f"  {r.incomplete}")
    closing = (K.MAC_CONVENTION, K.COUNTED_NOTHING, K.UNEXPLAINED_RESIDUAL)  # said on the unit and residual lines
    causes = [f for f in r.findings if K.of(f) not in closing]
    lines += [_line(f"{f.code} {f.title}", f.delta, f.evidence) for f in causes]
    who = "formula" if r.formula is not None else "counter"
    lines.append(_line(f"= {who}, as FLOPs", r.counter_flops))
    unit = [f for f in r.findings if K.of(f) is K.MAC_CONVENTION]
    if unit:
        lines.append(_line(f"{unit[0].code} {unit[0].title}", unit[0].delta, unit[0].evidence))
        lines.append(_line(f"= {who}, as reported ({r.unit.value})", round(r.reported or 0)))
    residual = _residual_note(r)
    lines.append(_line("residual", commas(r.residual), r.state + (f" ({residual})" if residual else "")))
    return "\n".join(lines)


def _residual_note(r: Reconciliation) -> str:
    """What the residual line says beside the verdict: FC902's evidence (the counter's own skips) where it counted
    nothing, else the unexplained residual in words ('' when closed)."""
    nothing = next((f for f in r.findings if K.of(f) is K.COUNTED_NOTHING), None)
    if nothing is not None:
        return f"{nothing.code}: {nothing.evidence}"
    return next((f.evidence for f in r.findings if K.of(f) is K.UNEXPLAINED_RESIDUAL), "")


def to_dict(r: Reconciliation, sweep: Sweep | None = None) -> dict[str, Any]:
    """JSON-ready: full integers; the T-sweep's verdict beside it when there is one."""
    return {
        "counter": r.counter,
        "unit": r.unit.value,
        "model": r.model,
        "input_size": r.input_size,
        "attn": r.attn,
        "reported": r.reported,
        "counter_flops": r.counter_flops,
        "reference_flops": r.reference_flops,
        **({"reference": r.reference} if r.reference != FORMULA else {}),  # a model with no formula says so
        "findings": [
            {"code": f.code, "title": f.title, "delta_flops": f.delta, "evidence": f.evidence} for f in r.findings
        ],
        "residual_flops": r.residual,
        "closed": r.closed,
        **({"counted_nothing": True} if r.counted_nothing else {}),  # FC902: never read as a closure
        "mode": r.mode,
        "error": r.error,
        **({"reference_incomplete": r.incomplete} if r.incomplete else {}),
        **({"sweep": sweep_dict(sweep)} if sweep else {}),
    }


def sweep_dict(s: Sweep) -> dict[str, Any]:
    """A sweep's verdict, JSON-ready."""
    v = s.verdict
    return {
        "b_ratio": v.b_ratio,
        "c_ratio": v.c_ratio,
        "unit": v.label,
        "attention": v.attention,
        "agrees_with_white_box": s.agrees,
    }


def describe_sweep(s: Sweep) -> str:
    """One line: the ratios and what they say."""
    v = s.verdict
    check = {True: "agrees with the white box", False: "DISAGREES with the white box", None: ""}[s.agrees]
    return (
        f"  {s.counter:18s} T-coef x{v.b_ratio:.3f}  T^2-coef x{v.c_ratio:.3f}  -> {v.label}, attention "
        f"{v.attention}  (fit misfit {v.misfit:,.0f})  {check}"
    ).rstrip()


def summary(results: list[Reconciliation]) -> str:
    """One row per count: its value as FLOPs against its reference, the residual, the causes by code; then the
    formulas that do not apply, by name."""
    formulas = [r.formula is not None for r in results]
    kind = "formula" if all(formulas) else "counter" if not any(formulas) else "counter or formula"
    paths = len({r.attn for r in results}) > 1
    rows: list[list[str]] = []
    refused: dict[str, list[str]] = {}
    for r in results:
        name = r.formula if kind == "formula" and r.formula is not None else r.counter
        if r.formula is not None and r.error:  # refused: grouped by their reason, the formula's own name taken out
            why = r.error.removeprefix(r.formula + " ")
            refused.setdefault(why, []).append(r.formula)
            continue
        row = [name, *([r.attn] * paths), r.unit.value]
        if r.error or r.counter_flops is None or r.residual is None:
            rows.append([*row, "-", "-", "error", "see below"])
            continue
        ratio = f"{r.counter_flops / r.reference_flops:.3f}" if r.reference_flops else "-"
        state = r.state if r.closed or r.counted_nothing else f"{r.residual:+,}" if r.residual else "INCOMPLETE"
        codes = " ".join(f.code for f in r.findings if K.of(f) not in (K.MAC_CONVENTION, K.UNEXPLAINED_RESIDUAL))
        rows.append([*row, commas(r.counter_flops), ratio, state, codes or "none"])
    head = [kind, *(["attn"] * paths), "unit", "as FLOPs", "/ reference", "residual", "causes"]
    refs = "; ".join(dict.fromkeys(r.reference for r in results if not r.error)) or "the exact count"
    lines = fit(f"{len(rows)} of {len(results)} {kind}s against their reference ({refs}); each proof below")
    lines += table(rows, head, right={len(head) - 4, len(head) - 3}).splitlines() if rows else []
    for why, names in refused.items():
        lines += fit(f"does not apply: {', '.join(names)}: {'it ' if why.startswith('is ') else ''}{why}")
    return "\n".join(lines)


def _refused(r: Reconciliation) -> bool:
    """A formula that does not apply to the model (said once in the summary, not as a proof of its own)."""
    return bool(r.error) and r.formula is not None


def to_text(results: list[Reconciliation], sweeps: list[Sweep], tokens: dict[str, str]) -> str:
    """A summary table where there are several, every proof (within COLUMNS), then each attention path's T-sweep
    lines; `tokens` names each path's sweep T values."""
    several = len(results) > 1
    proofs = "\n\n".join(proof(r, COLUMNS) for r in results if not (several and _refused(r)))
    out = [f"{summary(results)}\n\n{proofs}".rstrip() if several else proofs]
    for attn in dict.fromkeys(r.attn for r in results):
        lines = [describe_sweep(s) for s in sweeps if s.attn == attn]
        if lines:
            out.append(f"\nT-sweep, attn {attn}, T = {tokens[attn]} (totals alone; formula = x1.000):")
            out.append("\n".join(lines))
    return "\n".join(out)


def to_list(results: list[Reconciliation], sweeps: list[Sweep]) -> list[dict[str, Any]]:
    """JSON-ready: one object per reconciliation, its sweep inside."""
    return [to_dict(r, sweep_of(sweeps, r)) for r in results]


__all__ = ["describe_sweep", "proof", "summary", "sweep_dict", "to_dict", "to_list", "to_text"]


PRESENTERS[Reconciliation] = lambda r: proof(r, COLUMNS)  # print(reconciliation): the proof, as reconcile prints it
