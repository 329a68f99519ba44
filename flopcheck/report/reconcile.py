"""Reconciliations as proofs (text) and as JSON-ready dicts."""
from __future__ import annotations

from flopcheck.fmt import commas
from flopcheck.types import Reconciliation

WIDTH = 44


def _line(label: str, value: int | str, note: str = "") -> str:
    text = value if isinstance(value, str) else f"{value:+,}" if label[:2] == "FC" else commas(value)
    return f"  {label:<{WIDTH}s}{text:>20s}{('  ' + note) if note else ''}"


def proof(r: Reconciliation) -> str:
    """Reference, each cause with its delta, the counter as FLOPs, the unit, the residual: closed or not."""
    head = f"{r.model} @{r.input_size} · attn {r.attn} · {r.counter} ({r.unit.value}) · {r.mode}"
    if r.error:
        return f"{head}\n  error: {r.error}"
    lines = [head, _line("reference (formula = exact count), FLOPs", r.reference_flops)]
    causes = [f for f in r.findings if f.code not in ("FC101", "FC901")]
    lines += [_line(f"{f.code} {f.title}", f.delta, f.evidence) for f in causes]
    lines.append(_line("= counter, as FLOPs", r.counter_flops))
    unit = [f for f in r.findings if f.code == "FC101"]
    if unit:
        lines.append(_line(f"{unit[0].code} {unit[0].title}", unit[0].delta, unit[0].evidence))
        lines.append(_line(f"= counter, as reported ({r.unit.value})", round(r.reported)))
    state = "closed" if r.closed else "UNEXPLAINED"
    residual = next((f.evidence for f in r.findings if f.code == "FC901"), "")
    lines.append(_line("residual", commas(r.residual), state + (f" ({residual})" if residual else "")))
    return "\n".join(lines)


def to_dict(r: Reconciliation) -> dict:
    """JSON-ready: full integers."""
    return {
        "counter": r.counter, "unit": r.unit.value, "model": r.model, "input_size": r.input_size, "attn": r.attn,
        "reported": r.reported, "counter_flops": r.counter_flops, "reference_flops": r.reference_flops,
        "findings": [{"code": f.code, "title": f.title, "delta_flops": f.delta, "evidence": f.evidence}
                     for f in r.findings],
        "residual_flops": r.residual, "closed": r.closed, "mode": r.mode, "error": r.error,
    }


__all__ = ["proof", "to_dict"]
