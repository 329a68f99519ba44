"""Counts as a table (counter, unit, reported, as FLOPs, ratio to the formula, skipped, time, RSS) and as JSON."""

from __future__ import annotations

from typing import Any

from flopcheck.codec import encode
from flopcheck.fmt import commas, table
from flopcheck.render import COLUMNS, fit
from flopcheck.types import Count, Failed, Outcome, Reconciled, Reconciliation, Skip, Work


def _reported(c: Count) -> str:
    value = c.reported
    return commas(int(value)) if float(value).is_integer() else f"{value:,.3f}"


def _weight(s: Skip) -> int:
    """0: attention, a matmul or a conv, the skips that lose multiply-adds (an attention module type by its name:
    display order only, no diagnosis reads it); 1: a module type's own forward; 2: the rest."""
    if (s.work.multiply_adds and s.work is not Work.LINEAR) or "attention" in s.name.lower():
        return 0
    return 1 if s.own_forward else 2


def skipped_summary(c: Count, limit: int = 3) -> str:
    """The skips that matter most first (attention and matmuls), then the count of the rest."""
    order = sorted(c.skipped, key=lambda s: (_weight(s), -s.calls))
    shown = ", ".join(f"{s.name} x{s.calls}" for s in order[:limit])
    more = len(order) - limit
    return shown + (f" (+{more} more)" if more > 0 else "") if shown else "-"


def to_text(
    counts: list[Outcome],
    formula_flops: dict[tuple[str, int | None, str], int],
    label: str = "formula",
    inputs: str = "",
) -> str:
    """One row per count; `formula_flops` maps (model, input_size, attn) to the reference's FLOPs: the formula,
    or (`label`) the exact count of a model with none, whose `inputs` the header states."""
    rows = []
    for c in counts:
        ref = formula_flops[(c.model, c.input_size, c.attn)]
        if isinstance(c, Failed):
            rows.append([c.counter, c.unit.value, "-", "-", "-", "-", "-", f"error: {c.error}"])
            continue
        rows.append(
            [
                c.counter,
                c.unit.value,
                _reported(c),
                commas(c.flops),
                f"{c.flops / ref:.3f}" if ref else "-",  # a model with no multiply-adds: no ratio
                f"{c.time_s:.2f}",
                f"{c.peak_rss_mb:.0f}",
                f"counted nothing; skipped {skipped_summary(c)}" if ref and not c.flops else skipped_summary(c),
            ]
        )
    header = ["counter", "unit", "reported", "as FLOPs", f"/ {label}", "time s", "peak RSS MB", "skipped"]
    lines = []
    for key in dict.fromkeys((c.model, c.input_size, c.attn) for c in counts) or formula_flops:
        given = f"input {inputs}" if inputs else f"input {key[1]}"
        lines += fit(f"{key[0]} · {given} · attn {key[2]} · {label} {commas(formula_flops[key])} FLOPs")
    return "\n".join(lines + (["", _fitted(rows, header, {2, 3, 4, 5, 6})] if rows else []))


def _fitted(rows: list[list[str]], header: list[str], right: set[int]) -> str:
    """The table within COLUMNS: a row whose last cell (what it skipped, or its error) would pass them has that cell
    on lines of its own under the row, indented."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]
    room = COLUMNS - sum(widths) - 2 * len(widths)
    inline = [r if len(r[-1]) <= room else [*r[:-1], ""] for r in rows]
    out = table(inline, header, right=right).splitlines()
    for i, r in reversed(list(enumerate(rows))):
        if len(r[-1]) > room:
            out[i + 3 : i + 3] = fit(f"    {r[-1]}" if r[-1].startswith("error: ") else f"    skipped: {r[-1]}")
    return "\n".join(out)


def to_list(counts: list[Outcome], formula_flops: dict[tuple[str, int | None, str], int]) -> list[dict[str, Any]]:
    """JSON-ready: every Count in full, with the formula's FLOPs beside it."""
    return [{**encode(c), "formula_flops": formula_flops[(c.model, c.input_size, c.attn)]} for c in counts]


def formula_rows(found: list[Reconciliation], label: str) -> str:
    """The published formulas beside the counters: value, as FLOPs, ratio to the reference, their causes ('' when
    none was asked for)."""
    if not found:
        return ""
    rows = []
    for r in found:
        if not isinstance(r, Reconciled):  # a formula that does not apply: its error; one that applies, its value
            rows.append([r.counter, r.unit.value, "-", "-", "-", f"does not apply: {r.error}"])
            continue
        causes = ", ".join(f"{f.code} {f.title}" for f in r.findings) or "none: every multiply-add"
        ratio = f"{r.counter_flops / r.reference_flops:.3f}" if r.reference_flops else "-"
        rows.append([r.counter, r.unit.value, commas(round(r.reported)), commas(r.counter_flops), ratio, causes])
    header = ["published formula", "unit", "value", "as FLOPs", f"/ {label}", "causes (flopcheck reconcile --formula)"]
    return "\n\n" + table(rows, header, right={2, 3, 4})
