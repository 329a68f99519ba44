"""The report's plots, each an SVG from its View: every config's counters against the formula, the T-sweeps, the
formula's terms."""

from __future__ import annotations

from typing import Any

from flopcheck.fmt import commas
from flopcheck.render import svg
from flopcheck.render.view import View, slug

SERIES = {"sdpa": "#1f77b4", "math": "#ff7f0e"}


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


def _sweep_series(v: View, model: str, attn: str) -> tuple[list[dict[str, Any]], dict[int, int], list[Any]]:
    sizes = v.res["plan"]["sweeps"][model]
    fs = [v.formula[(model, s)] for s in sizes]
    tokens = {f["input_size"]: f["tokens"] for f in fs}
    counters = []
    for i, counter in enumerate(v.counters):
        entry = next(e for e in v.res["sweeps"] if (e["model"], e["attn"], e["counter"]) == (model, attn, counter))
        counters.append((counter, svg.PALETTE[i % len(svg.PALETTE)], entry["points"]))
    return fs, tokens, counters


def _attention(f: dict[str, Any]) -> int:
    flops: int = f["by_kind"].get("attn_score", 0) + f["by_kind"].get("attn_value", 0)
    return flops


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
            out[f"sweep-{slug(model)}-{attn}.svg"] = sweep_chart(v, model, attn)
            out[f"share-{slug(model)}-{attn}.svg"] = sweep_share_chart(v, model, attn)
    for model, size in v.grid:
        out[f"config-{slug(model)}.svg"] = config_chart(v, model, size)
    return out
