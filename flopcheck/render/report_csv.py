"""The report's results.csv: one row per count."""

from __future__ import annotations

import csv
import io

from flopcheck.render.view import View

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
