"""The causes as a table (text or Markdown), with who does each when measured."""

from __future__ import annotations

from flopcheck.reconciler.causes import CAUSES
from flopcheck.types import Reconciliation


def who_does_what(reconciliations: list[Reconciliation]) -> dict[str, list[str]]:
    """code -> the counters whose reconciliations name it, 'name (attn)' or 'name' when on every path seen."""
    paths = sorted({r.attn for r in reconciliations})
    seen: dict[str, dict[str, set[str]]] = {code: {} for code in CAUSES}
    for r in reconciliations:
        for f in r.findings:
            seen[f.code].setdefault(r.counter, set()).add(r.attn)
    return {
        code: [n if len(a) == len(paths) else f"{n} ({a.pop()})" for n, a in by.items()] for code, by in seen.items()
    }


def causes_table(who: dict[str, list[str]] | None = None, markdown: bool = False) -> str:
    """Every registered cause: code, slug, what happened, (who does it,) the fix with its upstream report."""
    rows = []
    for code, c in CAUSES.items():
        fix = c.fix + (f" (upstream: {c.upstream})" if c.upstream else "")
        seen = (", ".join(who.get(code, [])) or "-") if who is not None else ""
        rows.append((code, c.slug, c.what, seen, fix))
    if not markdown:
        return "\n".join(
            f"{code} {slug}: {what}. Fix: {fix}." + (f" Seen in: {seen}." if seen else "")
            for code, slug, what, seen, fix in rows
        )
    head = ["code", "cause", "what happened"] + (["who does it (measured)"] if who is not None else []) + ["fix"]
    lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for code, slug, what, seen, fix in rows:
        lines.append("| " + " | ".join([code, slug, what] + ([seen] if who is not None else []) + [fix]) + " |")
    return "\n".join(lines)
