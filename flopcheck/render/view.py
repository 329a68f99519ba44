"""A report's results dict as lookups (View), and the cells and rows its markdown and its HTML share."""

from __future__ import annotations

import re
from typing import Any

from flopcheck.fmt import commas
from flopcheck.reconciler.causes import UNEXPLAINED_RESIDUAL
from flopcheck.types import Reconciled


def slug(model: str) -> str:
    """A model name as a file-name part: letters, digits, '.', '_' and '-' only ('DiT-S/2' -> 'DiT-S-2')."""
    return re.sub(r"[^A-Za-z0-9._-]", "-", model).lstrip(".") or "-"


class View:
    """Lookups over a results dict."""

    def __init__(self, res: dict[str, Any]):
        self.res = res
        self.formula: dict[tuple[str, int], dict[str, Any]] = {
            (f["model"], f["input_size"]): f for f in res["formulas"]
        }
        self.recs = {(r["model"], r["input_size"], r["attn"], r["counter"]): r for r in res["reconciliations"]}
        self.counts = {(c["model"], c["input_size"], c["attn"], c["counter"]): c for c in res["counts"]}
        self.counters = res["plan"]["counters"]
        self.attns = res["plan"]["attns"]
        self.grid = [(m, self.default_size(m)) for m in res["plan"]["models"]]

    def default_size(self, model: str) -> int:
        """The grid's input size: formulas are listed in job order, the grid's jobs first."""
        return next(s for (m, s) in self.formula if m == model)

    def ratio(self, key: tuple[str, int, str, str]) -> float | None:
        c = self.counts.get(key)
        if c is None or c["flops"] is None:
            return None
        ratio: float = c["flops"] / self.formula[key[:2]]["total_flops"]
        return ratio

    def title(self, model: str, size: int) -> str:
        """'DiT-S/2 @32 (T = 256)', or a spec with its input: 'timm:resnet50 (x (1, 3, 224, 224) float32)'."""
        f = self.formula[(model, size)]
        return f"{model} ({f['inputs']})" if "inputs" in f else f"{model} @{size} (T = {f['tokens']})"

    def reference(self, model: str, size: int) -> str:
        """'formula', or 'exact count' for a model with none."""
        reference: str = self.formula[(model, size)].get("reference", "formula")
        return reference

    def causes(self, key: tuple[str, int, str, str]) -> str:
        r = self.recs.get(key)
        if r is None:
            return "-"
        if r["error"]:
            return "error"
        codes = " ".join(f["code"] for f in r["findings"] if f["code"] != UNEXPLAINED_RESIDUAL.code)
        return f"{codes or '-'} · {_state(r)}"


def reported_cell(c: dict[str, Any] | None) -> str:
    """A count's number as a table cell: with commas (one decimal if fractional), its error's first word, or '-'."""
    if c is None:  # no such path for this model (a spec without an attention switch)
        return "-"
    if c["error"]:
        word: str = c["error"].split(":")[0]
        return word
    value = c["reported"]
    return commas(int(value)) if float(value).is_integer() else f"{value:,.1f}"


def versions(res: dict[str, Any]) -> str:
    """The versions the report ran with, in one line: 'torch 2.14.1, fvcore 0.1.5'."""
    return ", ".join(f"{k} {v}" for k, v in res["versions"].items())


def sweep_rows(v: View) -> list[list[str]]:
    """The T-sweep table's rows: each fit's coefficients over the formula's, what they say, if the white box agrees."""
    rows = []
    for e in v.res["sweeps"]:
        if "error" in e:
            rows.append([e["model"], e["attn"], e["counter"], "", "", e["error"], ""])
            continue
        agree = {True: "yes", False: "NO", None: "-"}[e["agrees"]]
        rows.append(
            [
                e["model"],
                e["attn"],
                e["counter"],
                f"{e['b_ratio']:.3f}",
                f"{e['c_ratio']:.3f}",
                f"{e['verdict_unit']}, attention {e['verdict_attention']}",
                agree,
            ]
        )
    return rows


def specs_note(v: View) -> str:
    """A sentence for a report with specs (models with no hand formula), else nothing."""
    specs = [m for m, s in v.grid if "inputs" in v.formula[(m, s)]]
    if not specs:
        return ""
    return (
        f" {', '.join(specs)} {'has' if len(specs) == 1 else 'have'} no hand formula: there the reference is "
        f"flopcheck's exact count, per module path and kind, and '/ formula' reads '/ exact count'; a model "
        f"with no attention switch has its own path only."
    )


def _closure_cell(r: dict[str, Any] | None) -> str:
    """One run in the closure matrix: 'closed', its residual in FLOPs, or why it returned no number."""
    if r is None:
        return "-"
    if r["error"]:
        e = r["error"]
        if e.startswith("unavailable"):
            return "not installed"
        return "library's limit" if "library's limit" in e else "error"
    return _state(r)


def _state(r: dict[str, Any]) -> str:
    """A run's verdict as a table cell: 'counted nothing' (FC902: its number 0 of a model with work), 'closed', or its
    residual in FLOPs."""
    if r.get("counted_nothing"):
        return "counted nothing"
    return "closed" if r["closed"] else f"residual {commas(r['residual_flops'])}"


def closure_matrix(v: View) -> tuple[list[str], list[list[str]], str] | None:
    """The models x counters matrix of a report with specs (models with no hand formula): each run closed, its
    residual, or why it returned no number; and a line of the totals. None for a report of reference models."""
    specs = [(m, s) for m, s in v.grid if "inputs" in v.formula[(m, s)]]
    if not specs:
        return None
    rows, ran, closed = [], 0, 0
    for model, size in specs:
        for a in v.attns:
            runs = [v.recs.get((model, size, a, c)) for c in v.counters]
            if not any(runs):
                continue
            ok = [r for r in runs if r is not None and not r["error"]]
            ran, closed = ran + len(ok), closed + sum(r["closed"] for r in ok)
            rows.append([model, a, f"{sum(r['closed'] for r in ok)}/{len(ok)}"] + [_closure_cell(r) for r in runs])
    share = 100 * closed / max(ran, 1)
    total = f"{closed} of the {ran} runs that returned a number closed to a residual of 0 ({share:.1f}%)."
    return ["model", "attn", "closed"] + list(v.counters), rows, total


PUBLISHED_HEAD = ["model", "published formula", "unit", "value", "as FLOPs", "/ formula", "causes"]
PUBLISHED_NOTE = (
    "The formulas DiTs are quoted with, each explained against the config's formula (= its exact count) by "
    "flopcheck reconcile --formula: the blocks alone (24Td^2 + 4T^2d per block) and the ViT shortcut (12Td^2 per "
    "block, in MACs)."
)


def published_rows(v: View) -> list[list[str]]:
    """The published vision formulas on each reference model of the grid (flopcheck.published), from its formula's
    terms and its config: value, as FLOPs, ratio, causes."""
    from flopcheck.published import FORMULAS, Exact
    from flopcheck.published.reconcile import explain
    from flopcheck.published.structure import DIT, of_dit
    from reference_models import get_config

    rows = []
    for model, size in v.grid:
        f = v.formula[(model, size)]
        if "inputs" in f:  # a spec: no hand formula, no DiT structure
            continue
        attention = f["by_kind"].get("attn_score", 0) + f["by_kind"].get("attn_value", 0)
        paths = {t["path"]: t["flops"] for t in f["terms"]}
        exact = Exact(forward=f["total_flops"], attention=attention, by_path=paths)
        s = of_dit(get_config(model, input_size=size), 1, f["total_flops"])
        for name in (n for n, p in FORMULAS.items() if DIT in p.kinds and n != "dit"):
            r = explain(FORMULAS[name], s, exact, model)
            if not isinstance(r, Reconciled):  # a DiT formula applies to a DiT: where one would not, it says why
                rows.append([model, name, r.unit.value, "-", "-", "-", f"does not apply: {r.error}"])
                continue
            causes = " ".join(x.code for x in r.findings if x.code != UNEXPLAINED_RESIDUAL.code)
            state = "closed" if r.closed else f"residual {commas(r.residual)}"
            ratio = f"{r.counter_flops / f['total_flops']:.4f}"
            rows.append([model, name, r.unit.value, commas(round(r.reported)), commas(r.counter_flops), ratio])
            rows[-1].append(f"{causes} · {state}")
    return rows
