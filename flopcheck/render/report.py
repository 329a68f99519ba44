"""The report's files from its results dict: a pure function, so the same results give the same bytes.

index.md (tables, the plots as SVG files, every proof), index.html (self-contained: plots inline,
every reconciliation as a proof), results.json (full integers, versions), results.csv (one row per
count), and the SVGs index.md shows.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from flopcheck.errors import InputError
from flopcheck.render.plots import svgs
from flopcheck.render.report_csv import csv_text
from flopcheck.render.report_html import html
from flopcheck.render.report_md import markdown
from flopcheck.render.view import View
from reference_models import ATTN_PATHS

RESULT_KEYS = (
    "report",
    "convention",
    "versions",
    "plan",
    "counters",
    "formulas",
    "counts",
    "reconciliations",
    "sweeps",
    "kinds",
)


def read_results(path: Path) -> dict[str, Any]:
    """A results.json that `flopcheck report` wrote, checked before anything is rendered from it."""
    try:
        res: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise InputError(f"{path} is not JSON ({err}): give a results.json that `flopcheck report` wrote") from None
    plan = res.get("plan") if isinstance(res, dict) else None
    if (
        not isinstance(plan, dict)
        or res.get("report") != "flopcheck comparison report"
        or any(k not in res for k in RESULT_KEYS)
    ):
        raise InputError(
            f"{path} is not a flopcheck report's results.json (it needs {', '.join(RESULT_KEYS)}): "
            f"give one that `flopcheck report` wrote"
        )
    attns = set(plan.get("attns", [])) | {e.get("attn") for e in res["sweeps"]}
    if not attns <= set(ATTN_PATHS):
        raise InputError(
            f"{path} names attention paths {sorted(map(str, attns - set(ATTN_PATHS)))}: a report "
            f"has only {', '.join(a.value for a in ATTN_PATHS)}"
        )
    return res


def render(res: dict[str, Any]) -> dict[str, str]:
    """filename -> contents, for every file of the report."""
    v = View(res)
    plots = svgs(v)
    files = {
        "index.md": markdown(v) + "\n",
        "index.html": html(v, plots),
        "results.json": json.dumps(res, indent=1) + "\n",
        "results.csv": csv_text(v),
    }
    files.update({name: text + "\n" for name, text in plots.items()})
    return files
