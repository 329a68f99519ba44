"""A model's repeated blocks, found by structure (the containers of two or more blocks of one class), and the model
cut to its first blocks. No torch at import: the functions import it when called."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from flopcheck.specs import SpecError

if TYPE_CHECKING:
    from torch import nn

# torch-free at import: specs.measure imports this module, and the parent process (specs.child, the reconciler, the
# counters' pool) imports measure and never imports torch

MAIN_SHARE = 0.10  # a block list doing less of the forward than this is not the model's main stack (a text refiner)


@dataclass(frozen=True)
class BlockList:
    """A container of identical blocks: its normalised path ('blocks'), how many, their class."""

    path: str
    count: int
    type_name: str


def block_lists(model: nn.Module, by_path: dict[str, int] | None = None) -> tuple[BlockList, ...]:
    """The containers whose children are two or more blocks of one class with children of their own (a
    transformer's blocks, a ResNet stage), outermost first; a list inside a block list is part of its blocks.
    With the exact count's FLOPs per path, a list doing under MAIN_SHARE of the forward is left out (HunyuanVideo's
    token refiner beside its 60 blocks)."""
    from torch import nn  # lazy: torch-free at import (see the note at the top)

    from flopcheck.exact.counter import module_frames

    frames = module_frames(model)
    found: list[BlockList] = []
    for m, f in frames.items():
        kids = list(m.children())
        if not isinstance(m, (nn.ModuleList, nn.Sequential)) or len(kids) < 2:
            continue
        kinds = {type(k) for k in kids}
        if len(kinds) != 1 or next(iter(kids[0].children()), None) is None:
            continue
        if any(f.norm_path.startswith(b.path + ".") for b in found):
            continue
        found.append(BlockList(f.norm_path, len(kids), type(kids[0]).__name__))
    if by_path:
        total = sum(by_path.values())
        found = [
            b for b in found if sum(v for p, v in by_path.items() if p.startswith(b.path + ".")) >= MAIN_SHARE * total
        ]
    return tuple(found)


def keep_blocks(model: nn.Module, n: int, what: str) -> None:
    """A stand-in of the model: its one list of repeated blocks cut to the first n (each block maps its input to an
    output of the same shape, so the forward runs as before, n blocks deep)."""
    from torch import nn  # lazy: torch-free at import (see the note at the top)

    lists = block_lists(model)
    if len(lists) != 1 or lists[0].count < n:
        found = ", ".join(f"{b.path} ({b.count} x {b.type_name})" for b in lists) or "none"
        raise SpecError(f"{what}: a stand-in of {n} blocks needs one list of at least {n} blocks; found {found}")
    parent_path, _, name = lists[0].path.rpartition(".")
    parent = model.get_submodule(parent_path) if parent_path else model
    blocks = getattr(parent, name)
    setattr(
        parent,
        name,
        type(blocks)(*list(blocks)[:n]) if isinstance(blocks, nn.Sequential) else type(blocks)(list(blocks)[:n]),
    )
