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


def audit(claim: str, model: Any = None, args: tuple = (), kwargs: dict | None = None,
          counters: list[str] | bool | None = None, **scope: Any):
    """The verdict on a published figure: `audit("DiT-XL/2 118.64 GFLOPs")`, `audit("4.6 GMACs",
    model="timm:deit_small_patch16_224")`, or of your own nn.Module on its inputs: `audit("1.8 GMACs", model=net,
    args=(x,))`; `counters`: the counters whose output is a reading (default all, False none); `scope`:
    resolution=(W, H), frames, steps, cfg, training, batch, part, config, input_shape."""
    from flopcheck.auditor import audit as judge
    from flopcheck.auditor import parse_claim

    if model is None or isinstance(model, str):
        return judge(parse_claim(claim, model=model, **scope), counters=counters)
    from flopcheck.specs.measure import measure_local

    m = measure_local(model, args, kwargs)
    return judge(parse_claim(claim, model=m.text, **scope), measured=m, counters=False if counters is False else None)


def counters(model, args: tuple = (), kwargs: dict | None = None, counters: list[str] | None = None,
             timeout_s: float = 600.0) -> list:
    """What each counter (default: all installed and registered) says about model(*args, **kwargs): a list of
    Count, each in its library's unit with its detail and skips, or its one-line error. Each counter runs in a
    forked child with a deadline, so a library's patches and crashes stay there."""
    return _counts(model, args, kwargs, counters, timeout_s)


def _counts(model, args: tuple, kwargs: dict | None, names: list[str] | None, timeout_s: float) -> list:
    """Each named counter on model(*args, **kwargs) in a forked child; the model is left as it was."""
    from flopcheck.counters import COUNTERS, get_spec
    from flopcheck.counters.worker import count_one, load_adapter
    from flopcheck.specs.sources import Built, bound

    chosen = [get_spec(n).payload() for n in (names or list(COUNTERS))]
    had_forward = "forward" in vars(model)
    built = bound(Built(model, tuple(args), dict(kwargs or {})))
    job = {"model": type(model).__name__, "input_size": None, "attn": "sdpa", "batch": 1, "local": True}
    try:
        return [count_one(spec, load_adapter(spec), job, built, timeout_s) for spec in chosen]
    finally:
        if kwargs and not had_forward:
            del model.forward  # the keyword inputs were bound into it for the counters' calls


def reconcile(model, args: tuple = (), kwargs: dict | None = None, counters: list[str] | None = None,
              timeout_s: float = 600.0) -> list:
    """Every counter's number on model(*args, **kwargs) explained against flopcheck's exact count, cause by cause,
    to a residual: a list of Reconciliation (`.closed`, `.findings`, `.residual`)."""
    from flopcheck.reconciler import reconcile as explain
    from flopcheck.specs.measure import measure_local

    ref = measure_local(model, args, kwargs).reference()
    return [explain(c, ref) for c in _counts(model, args, kwargs, counters, timeout_s)]
