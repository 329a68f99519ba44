"""The verbs behind `import flopcheck`: count a model, count a block of code, audit a published figure."""
from __future__ import annotations

from typing import Any


def count(model, *args: Any, **kwargs: Any):
    """The exact count of one forward, model(*args, **kwargs), of any nn.Module: an ExactCount (`.total` FLOPs,
    2 per multiply-add; `.by_kind()`, `.by_path()`, and what it did not count, `.uncounted_by_category()`)."""
    from flopcheck.exact import count_forward

    return count_forward(model, args, kind_map=getattr(model, "flop_kinds", ()), kwargs=kwargs,
                         model=type(model).__name__)


class FlopCounter:
    """`with FlopCounter(model) as c: ...` counts every op run inside, attributed to `model`'s module paths
    (none given: all at the root); then `c.total` is the exact FLOPs and `c.result()` the ExactCount."""

    def __init__(self, model=None):
        from flopcheck.exact import ExactCounter

        self._counter = ExactCounter(model, getattr(model, "flop_kinds", ()))
        self._result = None

    def __enter__(self) -> FlopCounter:
        self._counter.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._result = self._counter.result()
        self._counter.__exit__(*exc)

    def result(self):
        """The ExactCount of what ran inside the block."""
        if self._result is None:
            raise RuntimeError("the count is ready when the `with` block ends")
        return self._result

    @property
    def total(self) -> int:
        """FLOPs (2 per multiply-add) of what ran inside the block."""
        return self.result().total


def audit(claim: str, model: str | None = None, **scope: Any):
    """The verdict on a published figure: `audit("DiT-XL/2 118.64 GFLOPs")`, or `audit("4.6 GMACs",
    model="timm:deit_small_patch16_224")`; `scope`: resolution=(W, H), frames, steps, cfg, training, batch, part."""
    from flopcheck.auditor import audit as judge
    from flopcheck.auditor import parse_claim

    return judge(parse_claim(claim, model=model, **scope))
