"""Small, dependency-free SVG charts: grouped bars against a reference, log-log lines, 100% stacked bars.

Every number is formatted with fixed precision, so the same data always gives the same bytes.
"""

from __future__ import annotations

import math
from html import escape

PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
    "#393b79",
    "#637939",
)
KIND_COLORS = {
    "linear": "#4e79a7",
    "attn_score": "#e15759",
    "attn_value": "#f28e2b",
    "conv": "#76b7b2",
    "per_sample": "#59a14f",
    "head": "#edc948",
    "matmul": "#b07aa1",
}
FONT = 'font-family="Helvetica, Arial, sans-serif"'


def _f(x: float) -> str:
    return f"{x:.1f}"


def _text(x: float, y: float, s: str, size: int = 11, anchor: str = "start", extra: str = "") -> str:
    return f'<text x="{_f(x)}" y="{_f(y)}" font-size="{size}" text-anchor="{anchor}" {FONT}{extra}>{escape(s)}</text>'


def text_width(s: str, size: int, em: float = 0.55) -> int:
    """Pixels a Helvetica text of `size` takes: `em` a character (its average is nearer 0.5 em; bold 0.6)."""
    return math.ceil(em * size * len(s))


def _fitted(label_w: int, width: int, labels: list[str], title: str) -> tuple[int, int]:
    """(label column, width) grown where a 10 px row label (right-aligned, 6 px before the bars) or the bold 13 px
    title would be clipped, the plot as wide as before; as given where everything fits."""
    need = max([label_w] + [text_width(s, 10) + 12 for s in labels])
    return need, max(width + need - label_w, text_width(title, 13, 0.6) + 16)


def _svg(width: int, height: int, body: list[str], title: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="{escape(title)}">\n<rect width="100%" height="100%" fill="white"/>\n'
        + "\n".join(body)
        + "\n</svg>"
    )


def ratio_bars(
    title: str,
    rows: list[tuple[str, list[tuple[str, float | None, str, float | None]]]],
    series_colors: dict[str, str],
    note: str = "",
) -> str:
    """Horizontal bars of counter / reference (1.0 = the formula), a group of bars per row.

    rows: (label, [(series, ratio or None, bar label, face-value ratio or None)]); the face value, a MAC
    count read as FLOPs, is a black tick.
    """
    bar_h, gap, top = 9, 6, 34
    label_w, width = _fitted(150, 640, [r[0] for r in rows], title)
    per_row = max(len(r[1]) for r in rows) * bar_h + gap
    height = top + len(rows) * per_row + 34
    ratios = [v for _, bars in rows for _, v, _, face in bars for v in (v, face) if v is not None]
    xmax = max([1.1] + [v * 1.08 for v in ratios])
    plot_w = width - label_w - 70

    def x(v: float) -> float:
        return label_w + plot_w * v / xmax

    body = [_text(8, 16, title, 13, extra=' font-weight="bold"')]
    for k in range(int(xmax * 4) + 1):
        tick = k / 4
        body.append(f'<line x1="{_f(x(tick))}" y1="{top - 4}" x2="{_f(x(tick))}" y2="{height - 30}" stroke="#eee"/>')
        body.append(_text(x(tick), height - 18, f"{tick:g}x", 9, "middle"))
    for i, (label, bars) in enumerate(rows):
        y0 = top + i * per_row
        body.append(_text(label_w - 6, y0 + per_row / 2, label, 10, "end"))
        for j, (series, v, bar_label, face) in enumerate(bars):
            y = y0 + j * bar_h
            if v is None:
                body.append(_text(label_w + 4, y + bar_h - 1, f"{series}: {bar_label}", 9, extra=' fill="#a00"'))
                continue
            body.append(
                f'<rect x="{label_w}" y="{_f(y)}" width="{_f(x(v) - label_w)}" height="{bar_h - 1}" '
                f'fill="{series_colors.get(series, "#888")}"/>'
            )
            body.append(_text(x(v) + 3, y + bar_h - 1, bar_label, 9))
            if face is not None:
                body.append(
                    f'<line x1="{_f(x(face))}" y1="{_f(y - 1)}" x2="{_f(x(face))}" y2="{_f(y + bar_h)}" '
                    f'stroke="black" stroke-width="2"><title>as printed: {face:.3f}x</title></line>'
                )
    body.append(
        f'<line x1="{_f(x(1))}" y1="{top - 6}" x2="{_f(x(1))}" y2="{height - 30}" stroke="black" '
        f'stroke-dasharray="4 3"/>'
    )
    body.append(_text(x(1), top - 8, "formula", 9, "middle"))
    legend_x = label_w
    for series, color in series_colors.items():
        body.append(f'<rect x="{legend_x}" y="{height - 12}" width="10" height="8" fill="{color}"/>')
        body.append(_text(legend_x + 13, height - 4, series, 9))
        legend_x += 13 + 7 * len(series) + 16
    body.append(
        f'<line x1="{legend_x}" y1="{height - 13}" x2="{legend_x}" y2="{height - 3}" stroke="black" stroke-width="2"/>'
    )
    body.append(_text(legend_x + 5, height - 4, "MAC count read as FLOPs", 9))
    if note:
        body.append(_text(width - 8, height - 4, note, 9, "end", ' fill="#555"'))
    return _svg(width, height, body, title)


def lines(
    title: str,
    series: list[tuple[str, str, list[tuple[float, float]], bool]],
    xlabel: str,
    ylabel: str,
    ylog: bool = True,
    subtitle: str = "",
    width: int = 640,
    height: int = 380,
) -> str:
    """Lines over a log x axis (ticks at the data's x values), y log (decades) or linear (0 to the top);
    series: (name, color, points, dashed). The first series named 'formula...' is drawn as a wide band."""
    left, right, top, bottom = 62, 190, 44 if subtitle else 30, 44
    xs = sorted({p[0] for _, _, pts, _ in series for p in pts if p[0] > 0})
    ys = [p[1] for _, _, pts, _ in series for p in pts if (p[1] > 0 if ylog else True)]
    lx0, lx1 = math.log10(xs[0]) - 0.08, math.log10(xs[-1]) + 0.08
    y0: float
    y1: float
    if ylog:
        y0, y1 = math.floor(math.log10(min(ys))), math.ceil(math.log10(max(ys)))
        y1 = max(y1, y0 + 1)
    else:
        y0, y1 = 0.0, max(1.1, max(ys) * 1.05)
    pw, ph = width - left - right, height - top - bottom

    def px(v: float) -> float:
        return left + pw * (math.log10(v) - lx0) / (lx1 - lx0)

    def py(v: float) -> float:
        frac = (math.log10(v) - y0) / (y1 - y0) if ylog else (v - y0) / (y1 - y0)
        return top + ph * (1 - frac)

    body = [_text(8, 18, title, 13, extra=' font-weight="bold"')]
    if subtitle:
        body.append(_text(8, 34, subtitle, 10, extra=' fill="#444"'))
    body.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#999"/>')
    for x in xs:
        body.append(f'<line x1="{_f(px(x))}" y1="{top}" x2="{_f(px(x))}" y2="{top + ph}" stroke="#eee"/>')
        body.append(_text(px(x), top + ph + 14, f"{x:g}", 9, "middle"))
    yticks = [10**d for d in range(int(y0), int(y1) + 1)] if ylog else [k / 4 for k in range(int(y1 * 4) + 1)]
    for y in yticks:
        body.append(f'<line x1="{left}" y1="{_f(py(y))}" x2="{left + pw}" y2="{_f(py(y))}" stroke="#eee"/>')
        label = f"1e{round(math.log10(y))}" if ylog else f"{y:g}"
        body.append(_text(left - 4, py(y) + 3, label, 9, "end"))
    body.append(_text(left + pw / 2, height - 8, xlabel, 10, "middle"))
    body.append(_text(12, top + ph / 2, ylabel, 10, "middle", f' transform="rotate(-90 12 {_f(top + ph / 2)})"'))
    for i, (name, color, pts, dashed) in enumerate(series):
        pts = [p for p in pts if p[0] > 0 and (p[1] > 0 or not ylog)]
        band = name.startswith("formula") and not dashed
        dash = ' stroke-dasharray="5 3"' if dashed else ""
        if pts:
            path = " ".join(f"{_f(px(a))},{_f(py(b))}" for a, b in pts)
            w = 6 if band else 1.4  # the formula: a wide band under the rest
            body.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="{w}"{dash}/>')
            body += [f'<circle cx="{_f(px(a))}" cy="{_f(py(b))}" r="2" fill="{color}"/>' for a, b in pts]
        ly = top + 6 + i * 14
        body.append(
            f'<line x1="{left + pw + 10}" y1="{ly}" x2="{left + pw + 28}" y2="{ly}" stroke="{color}" '
            f'stroke-width="{4 if band else 2}"{dash}/>'
        )
        body.append(_text(left + pw + 32, ly + 3, name, 9))
    return _svg(width, height, body, title)


def stacked(title: str, rows: list[tuple[str, list[tuple[str, int]]]], colors: dict[str, str], width: int = 640) -> str:
    """100% stacked horizontal bars, one per row: each part's share of the row's total."""
    bar_h, top = 16, 30
    label_w, width = _fitted(90, width, [r[0] for r in rows], title)
    height = top + len(rows) * (bar_h + 5) + 34
    pw = width - label_w - 20
    body = [_text(8, 18, title, 13, extra=' font-weight="bold"')]
    for i, (label, parts) in enumerate(rows):
        y = top + i * (bar_h + 5)
        total = sum(v for _, v in parts) or 1
        body.append(_text(label_w - 6, y + bar_h - 4, label, 10, "end"))
        x = float(label_w)
        for kind, v in parts:
            w = pw * v / total
            body.append(
                f'<rect x="{_f(x)}" y="{y}" width="{_f(w)}" height="{bar_h}" fill="{colors.get(kind, "#888")}">'
                f"<title>{escape(kind)} {v / total:.1%}</title></rect>"
            )
            if w > 34:
                body.append(_text(x + w / 2, y + bar_h - 4, f"{v / total:.0%}", 9, "middle", ' fill="white"'))
            x += w
    lx = label_w
    for kind, color in colors.items():
        body.append(f'<rect x="{lx}" y="{height - 16}" width="10" height="8" fill="{color}"/>')
        body.append(_text(lx + 13, height - 8, kind, 9))
        lx += 13 + 7 * len(kind) + 14
    return _svg(width, height, body, title)
