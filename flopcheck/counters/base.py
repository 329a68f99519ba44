"""What an adapter returns, and the helpers adapters share to rebuild what a library skipped."""
from __future__ import annotations

from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field

from flopcheck.types import Item, Skip, Unit

# categories of ops that cost nothing by anyone's convention: not worth listing as skipped
FREE_CATEGORIES = frozenset({"view", "creation", "movement"})
# module types that only hold other modules, or compute nothing in eval: never worth listing as skipped
CONTAINERS = frozenset({"Sequential", "ModuleList", "ModuleDict", "Identity", "Dropout", "Dropout1d", "Dropout2d",
                        "Dropout3d", "AlphaDropout"})


@dataclass(frozen=True)
class Measurement:
    """An adapter's answer: the number as its library reported it, its detail, what it skipped."""

    reported: float
    detail: tuple[Item, ...] = ()
    skipped: tuple[Skip, ...] = ()


@dataclass
class Detail:
    """Builds a counter's detail in its unit: add(name, value) converts to FLOPs once."""

    unit: Unit
    items: list[Item] = field(default_factory=list)

    def add(self, name: str, reported: float, calls: int = 0, where: str = "op", type: str = "",
            in_total: bool = True) -> None:
        flops = int(round(float(reported) * self.unit.flops_per_unit))
        self.items.append(Item(name, float(reported), flops, calls, where, type, in_total))


def op_category(name: str) -> str:
    """What an op named 'aten::_softmax' (or 'aten._softmax') is: a flopcheck category, or
    'attention' / 'matmul' for the ops flopcheck counts; 'other' if torch does not know it."""
    import torch

    from flopcheck.exact.categories import OTHER, categorize, named_category
    from flopcheck.exact.ops import ATTENTION_OPS, FORMULAS

    op = name.replace("aten::", "").replace("aten.", "").split(".")[0]
    if named_category(op):
        return named_category(op)
    packet = getattr(torch.ops.aten, op, None)
    if packet in FORMULAS:
        return "attention" if packet in ATTENTION_OPS else ("conv" if "conv" in op else "matmul")
    found = [categorize(getattr(packet, o)) for o in (packet.overloads() if packet is not None else [])]
    return next((c for c in found if c != OTHER), OTHER)


def costs_nothing(name: str) -> bool:
    """Views, copies, creations, and graph plumbing that is no aten op (prim::Constant)."""
    return not name.startswith("aten") or op_category(name) in FREE_CATEGORIES


def skipped_ops(calls: dict[str, int], reason: str) -> tuple[Skip, ...]:
    """Skips for ops that cost something by some convention (views, copies and creations left out)."""
    return tuple(Skip(op, n, f"{reason} ({op_category(op)})") for op, n in sorted(calls.items())
                 if not costs_nothing(op))


def unhooked_module_types(model, hooked: set, reason: str) -> tuple[Skip, ...]:
    """Module types with no rule in a hook-based counter: what their own forward computes is lost."""
    counts = Counter(type(m) for m in model.modules())
    return tuple(Skip(t.__name__, n, reason) for t, n in counts.items()
                 if t not in hooked and t.__name__ not in CONTAINERS)


def module_types(model) -> dict[str, str]:
    """Module path -> class name."""
    return {name: type(m).__name__ for name, m in model.named_modules()}


class _LoggedFrame(list):
    """One module's list of (op name, value) in a DeepSpeed-style profiler, logged as it fills."""

    def __init__(self, log: list):
        super().__init__()
        self._log = log

    def append(self, entry) -> None:
        self._log.append(entry)
        super().append(entry)


class LoggedStack(list):
    """Stands in for the `module_flop_count` stack of DeepSpeed's profiler and calflops (its fork):
    each frame a module pushes logs the (functional name, FLOPs) entries the patched functionals add."""

    def __init__(self):
        super().__init__()
        self.log: list = []
        self.profiling = False  # set by the first module frame: warm-up forwards push none

    def append(self, frame) -> None:
        self.profiling = True
        super().append(_LoggedFrame(self.log) if isinstance(frame, list) else frame)


def logged_ops(stack: LoggedStack, unit: Unit) -> list[Item]:
    """The logged entries summed per functional name, as detail items."""
    from collections import defaultdict

    sums: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for name, value in stack.log:
        sums[entry_label(name)][0] += int(value)
        sums[entry_label(name)][1] += 1
    detail = Detail(unit)
    for name, (value, n) in sums.items():
        detail.add(name, value, calls=n, where="functional")
    return detail.items


def entry_label(name) -> str:
    """These profilers key entries by `func.__str__` (a bound method-wrapper): its function's name."""
    return getattr(getattr(name, "__self__", None), "__name__", None) or str(name)


class _Unpatched:
    """At the aten level, below any Python patching: a multiply-add op is covered when a patched
    wrapper logged an entry since the previous one; otherwise the profiler never saw it."""

    def __init__(self, stack: LoggedStack):
        self.stack, self.pos, self.missing = stack, 0, Counter()

    def seen(self, packet) -> None:
        from flopcheck.exact.ops import FORMULAS

        if packet not in FORMULAS or not self.stack.profiling:
            return
        if len(self.stack.log) > self.pos:
            self.pos = len(self.stack.log)
        else:
            self.missing[str(packet)] += 1

    def skips(self, reason: str) -> tuple[Skip, ...]:
        return tuple(Skip(n, c, reason) for n, c in sorted(self.missing.items()))


@contextmanager
def unpatched_ops(stack: LoggedStack):
    """Record aten ops as they run; `.skips()` lists the multiply-add ops no patched wrapper logged."""
    from torch.utils._python_dispatch import TorchDispatchMode

    watch = _Unpatched(stack)

    class Watch(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            watch.seen(func.overloadpacket)
            return func(*args, **(kwargs or {}))

    with Watch():
        yield watch


def run_logged(profiler_module, call, reason: str) -> Measurement:
    """Run a DeepSpeed-style profiler (`call()` -> its FLOPs) with its module-level `module_flop_count`
    swapped for a LoggedStack: its detail by functional, and the FLOP ops no patch covered."""
    stack = LoggedStack()
    original = profiler_module.module_flop_count
    profiler_module.module_flop_count = stack
    try:
        with unpatched_ops(stack) as missing:
            flops = call()
    finally:
        profiler_module.module_flop_count = original
    return Measurement(flops, tuple(logged_ops(stack, Unit.FLOP)), missing.skips(reason))
