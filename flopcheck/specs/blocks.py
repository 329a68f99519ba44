"""A model's repeated blocks, found by structure: the containers of two or more blocks of one class. No torch at
import: the functions import it when called."""

from __future__ import annotations

from dataclasses import dataclass

MAIN_SHARE = 0.10  # a block list doing less of the forward than this is not the model's main stack (a text refiner)


@dataclass(frozen=True)
class BlockList:
    """A container of identical blocks: its normalised path ('blocks'), how many, their class."""

    path: str
    count: int
    type_name: str


def block_lists(model, by_path: dict[str, int] | None = None) -> tuple[BlockList, ...]:
    """The containers whose children are two or more blocks of one class with children of their own (a
    transformer's blocks, a ResNet stage), outermost first; a list inside a block list is part of its blocks.
    With the exact count's FLOPs per path, a list doing under MAIN_SHARE of the forward is left out (HunyuanVideo's
    token refiner beside its 60 blocks)."""
    from torch import nn

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
