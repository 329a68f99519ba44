"""Formatting at the edge: commas, G/T suffixes, the unit always said, aligned tables."""

from __future__ import annotations

from flopcheck.types import Unit

_PREFIXES = ((10**18, "E"), (10**15, "P"), (10**12, "T"), (10**9, "G"), (10**6, "M"), (10**3, "K"))


def commas(n: int) -> str:
    """237242843136 -> '237,242,843,136'."""
    return f"{n:,}"


def si(flops: int, unit: Unit = Unit.FLOP) -> str:
    """FLOPs shown in `unit` with a prefix: si(237242843136, Unit.MAC) -> '118.62 GMACs'."""
    value = flops / unit.flops_per_unit
    for scale, prefix in _PREFIXES:
        if abs(value) >= scale:
            return f"{value / scale:.2f} {prefix}{unit.value}s"
    return f"{value:g} {unit.value}s"


def table(rows: list[list[str]], header: list[str], right: set[int] | frozenset[int] = frozenset()) -> str:
    """Rows as aligned text columns; columns in `right` right-aligned."""
    cells = [header] + rows
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]

    def line(r: list[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()

    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])
