"""The report's files from its results dict: a pure function, so the same results give the same bytes.

index.md (tables, the plots as SVG files, every proof), index.html (self-contained: plots inline,
every reconciliation as a proof), results.json (full integers, versions), results.csv (one row per
count), and the SVGs index.md shows.
"""

from __future__ import annotations

import csv
import io
import json
import re
from html import escape

from flopcheck.fmt import commas
from flopcheck.reconciler.causes import UNEXPLAINED_RESIDUAL
from flopcheck.render import svg

SERIES = {"sdpa": "#1f77b4", "math": "#ff7f0e"}


def _slug(model: str) -> str:
    """A model name as a file-name part: letters, digits, '.', '_' and '-' only ('DiT-S/2' -> 'DiT-S-2')."""
    return re.sub(r"[^A-Za-z0-9._-]", "-", model).lstrip(".") or "-"


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


def read_results(path) -> dict:
    """A results.json that `flopcheck report` wrote, checked before anything is rendered from it."""
    from flopcheck.errors import InputError
    from reference_models import ATTN_PATHS

    try:
        res = json.loads(path.read_text(encoding="utf-8"))
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


class View:
    """Lookups over a results dict."""

    def __init__(self, res: dict):
        self.res = res
        self.formula = {(f["model"], f["input_size"]): f for f in res["formulas"]}
        self.recs = {(r["model"], r["input_size"], r["attn"], r["counter"]): r for r in res["reconciliations"]}
        self.counts = {(c["model"], c["input_size"], c["attn"], c["counter"]): c for c in res["counts"]}
        self.counters = res["plan"]["counters"]
        self.attns = res["plan"]["attns"]
        self.grid = [(m, self.default_size(m)) for m in res["plan"]["models"]]

    def default_size(self, model: str) -> int:
        """The grid's input size: formulas are listed in job order, the grid's jobs first."""
        return next(s for (m, s) in self.formula if m == model)

    def ratio(self, key) -> float | None:
        c = self.counts.get(key)
        return None if c is None or c["flops"] is None else c["flops"] / self.formula[key[:2]]["total_flops"]

    def title(self, model: str, size) -> str:
        """'DiT-S/2 @32 (T = 256)', or a spec with its input: 'timm:resnet50 (x (1, 3, 224, 224) float32)'."""
        f = self.formula[(model, size)]
        return f"{model} ({f['inputs']})" if "inputs" in f else f"{model} @{size} (T = {f['tokens']})"

    def reference(self, model: str, size) -> str:
        """'formula', or 'exact count' for a model with none."""
        return self.formula[(model, size)].get("reference", "formula")

    def causes(self, key) -> str:
        r = self.recs.get(key)
        if r is None:
            return "-"
        if r["error"]:
            return "error"
        codes = " ".join(f["code"] for f in r["findings"] if f["code"] != UNEXPLAINED_RESIDUAL.code)
        state = "closed" if r["closed"] else f"residual {commas(r['residual_flops'])}"
        return f"{codes or '-'} · {state}"


def _reported(c: dict | None) -> str:
    if c is None:  # no such path for this model (a spec without an attention switch)
        return "-"
    if c["error"]:
        return c["error"].split(":")[0]
    value = c["reported"]
    return commas(int(value)) if float(value).is_integer() else f"{value:,.1f}"


# ---------------------------------------------------------------------------------------------
# Plots
# ---------------------------------------------------------------------------------------------


def config_chart(v: View, model: str, size: int) -> str:
    """Each counter as FLOPs / the formula, both attention paths."""
    rows = []
    for counter in v.counters:
        bars = []
        for attn in v.attns:
            key = (model, size, attn, counter)
            if key not in v.counts:
                continue
            r = v.ratio(key)
            c = v.counts[key]
            face = None if r is None or c["unit"] == "FLOP" else c["reported"] / v.formula[key[:2]]["total_flops"]
            bars.append((attn, r, f"{r:.3f}x" if r is not None else (c["error"] or "")[:60], face))
        rows.append((f"{counter} ({v.res['counters'][counter]['unit']})", bars))
    f, ref = v.formula[(model, size)], v.reference(model, size)
    title = f"{model} @{size} (T={f['tokens']})" if "inputs" not in f else model
    return svg.ratio_bars(
        f"{title}: each counter as FLOPs / {ref}", rows, SERIES, f"{ref} {commas(f['total_flops'])} FLOPs"
    )


def _sweep_series(v: View, model: str, attn: str) -> tuple[list[dict], dict[int, int], list]:
    sizes = v.res["plan"]["sweeps"][model]
    fs = [v.formula[(model, s)] for s in sizes]
    tokens = {f["input_size"]: f["tokens"] for f in fs}
    counters = []
    for i, counter in enumerate(v.counters):
        entry = next(e for e in v.res["sweeps"] if (e["model"], e["attn"], e["counter"]) == (model, attn, counter))
        counters.append((counter, svg.PALETTE[i % len(svg.PALETTE)], entry["points"]))
    return fs, tokens, counters


def _attention(f: dict) -> int:
    return f["by_kind"].get("attn_score", 0) + f["by_kind"].get("attn_value", 0)


def sweep_chart(v: View, model: str, attn: str) -> str:
    """Each counter's FLOPs over T on log-log axes, with the formula and its attention."""
    fs, tokens, counters = _sweep_series(v, model, attn)
    series = [
        ("formula (FLOPs)", "#c8c8c8", [(f["tokens"], f["total_flops"]) for f in fs], False),
        ("formula: attention", "black", [(f["tokens"], _attention(f)) for f in fs], True),
    ]
    series += [(name, color, [(tokens[s], fl) for s, fl in pts], False) for name, color, pts in counters]
    shares = ", ".join(f"{f['tokens']}: {_attention(f) / f['total_flops']:.0%}" for f in fs)
    return svg.lines(
        f"{model} T-sweep, attn {attn}: FLOPs per forward",
        series,
        "tokens T",
        "FLOPs (as FLOPs)",
        subtitle=f"attention's share of the formula at T = {shares}",
    )


def sweep_share_chart(v: View, model: str, attn: str) -> str:
    """Each counter as a share of the formula over T: fused attention missed falls away as T grows."""
    fs, tokens, counters = _sweep_series(v, model, attn)
    total = {f["input_size"]: f["total_flops"] for f in fs}
    series = [
        ("formula", "#c8c8c8", [(f["tokens"], 1.0) for f in fs], False),
        ("formula: attention share", "black", [(f["tokens"], _attention(f) / f["total_flops"]) for f in fs], True),
    ]
    series += [(name, color, [(tokens[s], fl / total[s]) for s, fl in pts], False) for name, color, pts in counters]
    return svg.lines(
        f"{model} T-sweep, attn {attn}: each counter / formula",
        series,
        "tokens T",
        "counter FLOPs / formula FLOPs",
        ylog=False,
        subtitle="a counter that misses attention falls with attention's share as T grows",
    )


def terms_chart(v: View) -> str:
    """The formula's kinds of term as a share of each config's forward."""
    kinds = [k for k in v.res["kinds"] if any(f["by_kind"].get(k) for f in v.res["formulas"])]
    rows = [(m, [(k, v.formula[(m, s)]["by_kind"].get(k, 0)) for k in kinds]) for m, s in v.grid]
    return svg.stacked(
        "The formula's terms: share of one forward (FLOPs)", rows, {k: svg.KIND_COLORS.get(k, "#888") for k in kinds}
    )


def svgs(v: View) -> dict[str, str]:
    """The SVG files index.md links to."""
    out = {"terms.svg": terms_chart(v)}
    for model in v.res["plan"]["sweeps"]:
        for attn in v.attns:
            out[f"sweep-{_slug(model)}-{attn}.svg"] = sweep_chart(v, model, attn)
            out[f"share-{_slug(model)}-{attn}.svg"] = sweep_share_chart(v, model, attn)
    for model, size in v.grid:
        out[f"config-{_slug(model)}.svg"] = config_chart(v, model, size)
    return out


# ---------------------------------------------------------------------------------------------
# Markdown
# ---------------------------------------------------------------------------------------------


def _md_table(head: list[str], rows: list[list[str]]) -> str:
    return "\n".join(
        ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + ["| " + " | ".join(r) + " |" for r in rows]
    )


def _versions(res: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in res["versions"].items())


def _sweep_rows(v: View) -> list[list[str]]:
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


def _specs_note(v: View) -> str:
    """A sentence for a report with specs (models with no hand formula), else nothing."""
    specs = [m for m, s in v.grid if "inputs" in v.formula[(m, s)]]
    if not specs:
        return ""
    return (
        f" {', '.join(specs)} {'has' if len(specs) == 1 else 'have'} no hand formula: there the reference is "
        f"flopcheck's exact count, per module path and kind, and '/ formula' reads '/ exact count'; a model "
        f"with no attention switch has its own path only."
    )


def _closure_cell(r: dict | None) -> str:
    """One run in the closure matrix: 'closed', its residual in FLOPs, or why it returned no number."""
    if r is None:
        return "-"
    if r["error"]:
        e = r["error"]
        if e.startswith("unavailable"):
            return "not installed"
        return "library's limit" if "library's limit" in e else "error"
    return "closed" if r["closed"] else f"residual {commas(r['residual_flops'])}"


def _closure(v: View) -> tuple[list[str], list[list[str]], str] | None:
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


def markdown(v: View) -> str:
    res = v.res
    out = [
        f"# {res['report']}",
        "",
        "Generated by `flopcheck report`; do not edit by hand. " + res["convention"] + ".",
        f"Versions: {_versions(res)}.",
        "",
        "Every library counter ran on real CPU tensors (weights zeroed) of the same model and inputs; flopcheck's "
        "exact count reads shapes only and ran on meta tensors. The reference is the hand-derived formula, which "
        "the exact count equals term by term. Bars show each number converted to FLOPs; a tick marks a MAC "
        "count taken at its word as FLOPs. The self-contained "
        "[index.html](index.html) has every plot inline and every reconciliation as a proof." + _specs_note(v),
        "",
    ]
    if (closure := _closure(v)) is not None:
        head, rows, total = closure
        out += ["## Closure: models x counters", "", total, "", _md_table(head, rows), ""]
    out += ["## The formula's terms", "", "![terms](terms.svg)", "", "## Each config", ""]
    for model, size in v.grid:
        f = v.formula[(model, size)]
        out += [
            f"### {v.title(model, size)}: {v.reference(model, size)} {commas(f['total_flops'])} FLOPs",
            "",
            f"![{model}](config-{_slug(model)}.svg)",
            "",
        ]
        rows = []
        for counter in v.counters:
            row = [counter, res["counters"][counter]["unit"]]
            for attn in v.attns:
                key = (model, size, attn, counter)
                r = v.ratio(key)
                row += [_reported(v.counts.get(key)), f"{r:.4f}" if r is not None else "-", v.causes(key)]
            rows.append(row)
        head = ["counter", "unit"] + [
            h for a in v.attns for h in (f"{a}: reported", f"{a}: FLOPs / formula", f"{a}: causes")
        ]
        out += [_md_table(head, rows), ""]
    out += [
        "## T-sweeps",
        "",
        "Each counter's totals fitted as a + bT + cT^2; b and c over the formula's name its unit (b: FLOP 1, "
        "MAC 0.5) and its attention (c / b: 1 counted, 0.5 QK^T only, 0 missing), from totals alone.",
        "",
    ]
    for model in res["plan"]["sweeps"]:
        out += [
            f"![{model} {a}](sweep-{_slug(model)}-{a}.svg) ![{model} {a}, share](share-{_slug(model)}-{a}.svg)"
            for a in v.attns
        ] + [""]
    out += [
        _md_table(
            ["model", "attn", "counter", "T coef / formula", "T^2 coef / formula", "says", "agrees with white box"],
            _sweep_rows(v),
        ),
        "",
        "## Every reconciliation",
        "",
    ]
    for model, size in v.grid:
        proofs = "\n\n".join(
            v.recs[(model, size, a, c)]["proof"] for a in v.attns for c in v.counters if (model, size, a, c) in v.recs
        )
        summary = v.title(model, size) if "inputs" in v.formula[(model, size)] else f"{model} @{size}"
        out += [f"<details><summary>{summary}</summary>", "", "```", proofs, "```", "", "</details>", ""]
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# HTML
# ---------------------------------------------------------------------------------------------

CSS = """body{font-family:Helvetica,Arial,sans-serif;margin:24px;max-width:1400px;color:#222}
table{border-collapse:collapse;font-size:12px;margin:8px 0 16px}td,th{border:1px solid #ccc;padding:3px 6px}
th{background:#f4f4f4}td.n{text-align:right;font-variant-numeric:tabular-nums}.grid{display:flex;flex-wrap:wrap;gap:12px}
pre{font-size:11px;background:#f8f8f8;padding:8px;overflow-x:auto}details{margin:4px 0}summary{cursor:pointer}"""


# Each cause code in the HTML links to its entry in the documentation site, built by mkdocs into site/ beside
# reports/ in a checkout (there is no hosting: the link is a path relative to the report's folder)
CAUSES_PAGE = "../site/causes.html"


def _linked(html_text: str) -> str:
    """Escaped HTML with each cause code ('FC201') a link to its entry on the causes page."""
    return re.sub(r"\bFC\d{3}\b", lambda m: f'<a href="{CAUSES_PAGE}#{m.group(0)}">{m.group(0)}</a>', html_text)


def _html_table(head: list[str], rows: list[list[str]], numeric: set[int] = frozenset()) -> str:
    th = "".join(f"<th>{escape(h)}</th>" for h in head)
    trs = "".join(
        "<tr>" + "".join(f"<td{' class=n' if i in numeric else ''}>{escape(c)}</td>" for i, c in enumerate(r)) + "</tr>"
        for r in rows
    )
    return f"<table><tr>{th}</tr>{trs}</table>"


def html(v: View, plots: dict[str, str]) -> str:
    res = v.res
    parts = [
        f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>{escape(res['report'])}</title>"
        f"<style>{CSS}</style></head><body>",
        f"<h1>{escape(res['report'])}</h1>",
        f"<p>Generated by <code>flopcheck report</code>. {escape(res['convention'])}. Every library counter ran "
        f"on real CPU tensors of the same model and inputs; flopcheck's exact count reads shapes only and ran "
        f"on meta tensors. The reference is the formula, equal to the exact count. Bars show each number "
        f"converted to FLOPs; a black tick marks a MAC count taken at its word as FLOPs.{escape(_specs_note(v))}</p>"
        f"<p>Versions: {escape(_versions(res))}.</p>",
    ]
    if (closure := _closure(v)) is not None:
        head, rows, total = closure
        parts += ["<h2>Closure: models x counters</h2>", f"<p>{escape(total)}</p>", _html_table(head, rows)]
    parts += [
        "<h2>The formula's terms</h2>",
        plots["terms.svg"],
        "<h2>Each config: every counter as FLOPs against the formula</h2>",
    ]
    for model, size in v.grid:
        parts.append(f"<h3>{escape(model)}</h3><div class=grid>{plots[f'config-{_slug(model)}.svg']}</div>")
        rows = [
            [c, res["counters"][c]["unit"]]
            + [
                x
                for a in v.attns
                for x in (
                    _reported(v.counts.get((model, size, a, c))),
                    f"{v.ratio((model, size, a, c)):.4f}" if v.ratio((model, size, a, c)) is not None else "-",
                    v.causes((model, size, a, c)),
                )
            ]
            for c in v.counters
        ]
        head = ["counter", "unit"] + [h for a in v.attns for h in (f"{a}: reported", f"{a}: / formula", f"{a}: causes")]
        parts.append(_linked(_html_table(head, rows, {2, 3, 5, 6})))
    parts.append("<h2>T-sweeps (log-log)</h2><div class=grid>")
    for model in res["plan"]["sweeps"]:
        parts += [plots[f"{kind}-{_slug(model)}-{a}.svg"] for a in v.attns for kind in ("sweep", "share")]
    parts.append("</div>")
    parts.append(
        _html_table(
            ["model", "attn", "counter", "T coef / formula", "T^2 coef / formula", "says", "agrees with white box"],
            _sweep_rows(v),
            {3, 4},
        )
    )
    parts.append("<h2>Every reconciliation, as a proof</h2>")
    for model, size in v.grid:
        proofs = "\n\n".join(
            v.recs[(model, size, a, c)]["proof"] for a in v.attns for c in v.counters if (model, size, a, c) in v.recs
        )
        summary = escape(v.title(model, size)) if "inputs" in v.formula[(model, size)] else f"{escape(model)} @{size}"
        parts.append(f"<details><summary>{summary}</summary><pre>{_linked(escape(proofs))}</pre></details>")
    sweep_proofs = [r["proof"] for r in res["reconciliations"] if (r["model"], r["input_size"]) not in set(v.grid)]
    sweeps = _linked(escape(chr(10).join(sweep_proofs)))
    parts.append(f"<details><summary>T-sweep points</summary><pre>{sweeps}</pre></details>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


# ---------------------------------------------------------------------------------------------
# CSV, JSON, all files
# ---------------------------------------------------------------------------------------------

CSV_FIELDS = [
    "counter",
    "library",
    "version",
    "unit",
    "model",
    "input_size",
    "tokens",
    "attn",
    "reported",
    "flops",
    "formula_flops",
    "ratio",
    "causes",
    "closed",
    "residual_flops",
    "error",
]


def csv_text(v: View) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_FIELDS)
    for c in v.res["counts"]:
        key = (c["model"], c["input_size"], c["attn"], c["counter"])
        f, r = v.formula[key[:2]], v.recs[key]
        ratio = v.ratio(key)
        w.writerow(
            [
                c["counter"],
                c["library"],
                c["version"],
                c["unit"],
                c["model"],
                c["input_size"],
                f["tokens"],
                c["attn"],
                "" if c["reported"] is None else repr(c["reported"]),
                "" if c["flops"] is None else c["flops"],
                f["total_flops"],
                "" if ratio is None else f"{ratio:.6f}",
                " ".join(x["code"] for x in r["findings"]),
                r["closed"],
                "" if r["residual_flops"] is None else r["residual_flops"],
                c["error"] or "",
            ]
        )
    return buf.getvalue()


def render(res: dict) -> dict[str, str]:
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
