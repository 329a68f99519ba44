"""A counter's number read as parts: each piece either matches the reference's work or is explained by a cause.

No torch here: counter modules import this to write the reading of their own detail beside their adapter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from flopcheck.op_names import bare  # an op's name as the op-name table's key, for the readers beside their parts
from flopcheck.types import Kind, Work

if TYPE_CHECKING:
    from flopcheck.reconciler.causes import Cause


@dataclass(frozen=True)
class Part:
    """A piece of a counter's number: `work` it matches or did (norm, bias, ...), or the `cause` that explains it
    directly; counted=False for evidence only (work computed and left out of the total). Neither: unexplained."""

    flops: int
    source: str
    work: Work | Kind | None = None
    cause: Cause | None = None
    counted: bool = True


def split(
    source: str, total: int, components: list[tuple[Work | Kind | Cause, int]], counted: bool = True
) -> list[Part]:
    """An item of `total` FLOPs as its components (work or a cause), and whatever they leave over, unexplained."""
    parts = [part(f, source, what, counted) for what, f in components if f]
    left = total - sum(f for _, f in components)
    return parts + ([Part(left, source, counted=counted)] if left and counted else [])


def part(flops: int, source: str, what: Work | Kind | Cause | None, counted: bool = True) -> Part:
    """A Part of `what`: a Work or Kind it did, or a Cause that explains it."""
    if isinstance(what, (Work, Kind)) or what is None:
        return Part(flops, source, work=what, counted=counted)
    return Part(flops, source, cause=what, counted=counted)


__all__ = ["Part", "bare", "part", "split"]
