"""What an adapter returns, and the helpers adapters share to rebuild what a library skipped."""

from __future__ import annotations

import inspect
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from flopcheck.custom_ops import CUSTOM
from flopcheck.op_names import Family, Spelling, aten_name, category, family, row
from flopcheck.reconciler.classify import op_work
from flopcheck.reconciler.parts import Part, bare, part, split
from flopcheck.types import Count, Item, Mechanism, Skip, Unit, Work

if TYPE_CHECKING:
    from torch import nn

    from flopcheck.reconciler.reference import Reference
    from flopcheck.specs.layers import Layer

# torch-free at import: flopcheck.counters imports every adapter module, and so this one, in the parent process, which
# runs counters in workers and never imports torch; torch and flopcheck.exact (torch) are imported where they are used

# module types that only hold other modules, or compute nothing in eval: never worth listing as skipped
CONTAINERS = frozenset(
    {
        "Sequential",
        "ModuleList",
        "ModuleDict",
        "Identity",
        "Dropout",
        "Dropout1d",
        "Dropout2d",
        "Dropout3d",
        "AlphaDropout",
    }
)


@dataclass(frozen=True)
class Measurement:
    """An adapter's answer: the number as its library reported it, its detail, what it skipped."""

    reported: float
    detail: tuple[Item, ...] = ()
    skipped: tuple[Skip, ...] = ()
    samples_divided: int = 1  # the library divided its number (and detail) by this many samples (ptflops: its batch)


@dataclass
class Detail:
    """Builds a counter's detail in its unit: add(name, value) converts to FLOPs once."""

    unit: Unit
    items: list[Item] = field(default_factory=list)

    def add(
        self,
        name: str,
        reported: float,
        calls: int = 0,
        where: Mechanism = Mechanism.OP,
        type: str = "",
        in_total: bool = True,
    ) -> None:
        flops = int(round(float(reported) * self.unit.flops_per_unit))
        self.items.append(Item(name, float(reported), flops, calls, where, type, in_total))


def op_category(name: str) -> Work:
    """What an op named 'aten::_softmax' (or 'aten._softmax') does: attention, matmul or conv for the ops
    flopcheck counts, else its category; OTHER if torch does not know it."""
    import torch  # lazy: the parent process never imports torch (see the note at the top)

    from flopcheck.exact.categories import categorize
    from flopcheck.exact.ops import FORMULAS

    custom = _custom_kind(name)
    if custom is not None:
        return custom
    op = aten_name(name)
    named = category(op)
    if named:
        return named
    conv = row(op)
    if conv is not None and conv.family is Family.CONV and conv.spelling is Spelling.COMPOSITE:
        return Work.CONV  # conv2d and its kin run as aten.convolution, which has the formula
    packet = getattr(torch.ops.aten, op, None)
    if packet in FORMULAS:
        return _formula_work(op)
    found = [categorize(getattr(packet, o)) for o in (packet.overloads() if packet is not None else [])]
    return next((c for c in found if c is not Work.OTHER), Work.OTHER)


def _formula_work(op: str) -> Work:
    """The work of an op with a formula, by its family: attention, conv, else a matmul (RNN, distance, linalg)."""
    found = family(op)
    if found is not None and found.attention:
        return Work.ATTENTION
    return Work.CONV if found is Family.CONV else Work.MATMUL


def has_formula(name: str) -> bool:
    """An aten op ('aten::mkldnn_rnn_layer') that flopcheck's exact count has a formula for: it does multiply-adds
    itself, not through the ops it calls."""
    import torch  # lazy: the parent process never imports torch (see the note at the top)

    from flopcheck.exact.ops import FORMULAS

    return getattr(torch.ops.aten, aten_name(name), None) in FORMULAS


def _custom_kind(name: str) -> Work | None:
    """The work of an operator outside aten that flopcheck has a formula for ('torchvision::deform_conv2d', or
    'torchvision.deform_conv2d.default' as a dispatch names it): a convolution or a matmul; None for any other op."""
    namespace, _, rest = name.replace("::", ".").partition(".")
    qualified = f"{namespace}::{rest.split('.')[0]}"
    if namespace == "aten" or qualified not in CUSTOM:
        return None
    return Work.CONV if family(rest.split(".")[0]) is Family.CONV else Work.MATMUL


def costs_nothing(name: str) -> bool:
    """Views, copies, creations, and graph plumbing that is no aten op (prim::Constant); an operator outside aten
    with a formula costs what it counts."""
    if _custom_kind(name) is not None:
        return False
    return not name.startswith("aten") or op_category(name).free


def skipped_ops(calls: dict[str, int], reason: str) -> tuple[Skip, ...]:
    """Skips for ops that cost something by some convention (views, copies and creations left out)."""
    out: list[Skip] = []
    for op, n in sorted(calls.items()):
        if not costs_nothing(op):
            work = op_category(op)
            out.append(Skip(op, n, f"{reason} ({work})", Mechanism.OP, work))
    return tuple(out)


def unhooked_module_types(model: nn.Module, hooked: set[type], reason: str) -> tuple[Skip, ...]:
    """Module types with no rule in a hook-based counter: what their own forward computes is lost."""
    counts = Counter(type(m) for m in model.modules())
    return tuple(
        Skip(t.__name__, n, reason, Mechanism.MODULE, own_forward=True)
        for t, n in counts.items()
        if t not in hooked and t.__name__ not in CONTAINERS
    )


def keyword_inputs(model: nn.Module, inputs: tuple[Any, ...]) -> dict[str, Any]:
    """The positional inputs of model(*inputs) by the names its forward gives them (for libraries that call
    model(**inputs), as ptflops' input_constructor does)."""
    return dict(inspect.signature(model.forward).bind(*inputs).arguments)


def unreached(model: nn.Module, uncalled: set[str]) -> tuple[Skip, ...]:
    """Skips for the modules holding a weight of their own (Linear, conv) that a trace never reached, by exact path:
    the counter counted them 0, as the traced graph kept only what the outputs use (causes.UNREACHED_IN_TRACE)."""
    from flopcheck.reconciler.causes import UNREACHED_IN_TRACE

    found = []
    for path, m in model.named_modules():
        if path in uncalled and next(m.parameters(recurse=False), None) is not None:
            found.append(Skip(path, 1, UNREACHED_IN_TRACE, Mechanism.MODULE, Work.OTHER))
    return tuple(found)


@contextmanager
def trace_scopes(model: nn.Module) -> Iterator[Counter[str]]:
    """While a torch.jit trace runs inside, each module's ops carry its path as their scope (node.scopeName():
    'blocks.0/blocks.0.mlp'), as fvcore's own trace marks them: which modules the traced graph reached. A module's
    later calls carry 'path#2', 'path#3' (call_of reads them back); yields the calls each module ran while tracing."""
    import torch  # lazy: torch (see the note at the top)

    ran: Counter[str] = Counter()

    def enter(name: str) -> Callable[..., None]:
        def push(*_: Any) -> None:
            state = torch._C._get_tracing_state()
            if state is not None:
                ran[name] += 1
                state.push_scope(name if ran[name] == 1 else f"{name}#{ran[name]}")

        return push

    def leave(*_: Any) -> None:
        state = torch._C._get_tracing_state()
        if state is not None:
            state.pop_scope()

    handles = []
    for path, m in model.named_modules():
        if path:
            handles += [m.register_forward_pre_hook(enter(path)), m.register_forward_hook(leave)]
    try:
        yield ran
    finally:
        for h in handles:
            h.remove()


def call_of(scope: str) -> tuple[str, int]:
    """A scope trace_scopes pushed, as (module path, its call): 'blocks.0.ff#2' -> ('blocks.0.ff', 2)."""
    path, _, call = scope.partition("#")
    return path, int(call or 1)


def partly_reached(
    model: nn.Module, ran: Counter[str], scopes: Iterable[str], counted: Mapping[str, float], unit: Unit
) -> tuple[Skip, ...]:
    """Skips for the weighted modules (a weight of their own) the trace reached on some of the calls that ran, not
    all (a shared layer whose later result nothing uses: dropped from the graph): `calls` the dropped ones, `counted`
    the FLOPs the counter's own detail has at the module (`counted`, in its unit). `scopes`: each graph node's scope
    (a module's path pushed once by trace_scopes and again, plain, by a library's own trace: its latest call kept)."""
    from flopcheck.reconciler.causes import PARTLY_REACHED_IN_TRACE

    seen: defaultdict[str, set[int]] = defaultdict(set)
    for scope in scopes:
        latest: dict[str, int] = {}
        for path, call in (call_of(s) for s in scope.split("/") if s):
            latest[path] = max(latest.get(path, 0), call)
        for path, call in latest.items():
            seen[path].add(call)
    found = []
    for path, m in model.named_modules():
        dropped = ran[path] - len(seen[path])
        if seen[path] and dropped > 0 and any(True for _ in m.parameters(recurse=False)):
            flops = round(counted.get(path, 0) * unit.flops_per_unit)
            found.append(Skip(path, dropped, PARTLY_REACHED_IN_TRACE, Mechanism.MODULE, Work.OTHER, counted=flops))
    return tuple(found)


def module_types(model: nn.Module) -> dict[str, str]:
    """Module path -> class name."""
    return {name: type(m).__name__ for name, m in model.named_modules()}


def later_paths(model: nn.Module) -> list[tuple[str, object]]:
    """(path, module) for each later path of a module shared at several paths, topmost only (a shared module's
    children at its later path are inside it)."""
    seen: set[int] = set()
    out: list[tuple[str, object]] = []
    for path, m in model.named_modules(remove_duplicate=False):
        if any(path.startswith(p + ".") for p, _ in out):
            continue
        if id(m) in seen:
            out.append((path, m))
        seen.add(id(m))
    return out


class _LoggedFrame(list[tuple[Any, Any]]):
    """One module's list of (op name, value) in a DeepSpeed-style profiler, logged as it fills."""

    def __init__(self, log: list[tuple[Any, Any]]):
        super().__init__()
        self._log = log

    def append(self, entry: tuple[Any, Any]) -> None:
        self._log.append(entry)
        super().append(entry)


class LoggedStack(list[Any]):
    """Stands in for the `module_flop_count` stack of DeepSpeed's profiler and calflops (its fork):
    each frame a module pushes logs the (functional name, FLOPs) entries the patched functionals add."""

    def __init__(self) -> None:
        super().__init__()
        self.log: list[tuple[Any, Any]] = []  # (the profiler's functional, its value)
        self.profiling = False  # set by the first module frame: warm-up forwards push none

    def append(self, frame: Any) -> None:
        self.profiling = True
        super().append(_LoggedFrame(self.log) if isinstance(frame, list) else frame)


def logged_ops(stack: LoggedStack, unit: Unit) -> list[Item]:
    """The logged entries summed per functional name, as detail items."""
    sums: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for name, value in stack.log:
        sums[entry_label(name)][0] += int(value)
        sums[entry_label(name)][1] += 1
    detail = Detail(unit)
    for name, (value, n) in sums.items():
        detail.add(name, value, calls=n, where=Mechanism.FUNCTIONAL)
    return detail.items


def bias_of_addmm(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    """What a library's addmm rule (ptflops', calflops'; ptflops' baddbmm too) adds for the bias: numel(input)
    unless beta is 0; 0 for any other op."""
    if not name.endswith(("addmm", "baddbmm")) or not args or kwargs.get("beta", 1) == 0:
        return 0
    return int(args[0].numel()) if hasattr(args[0], "numel") else 0


def bias_label(name: str, bias: Any) -> str:  # bias: a tensor
    """The detail item of an addmm's bias: '.bias_per_call' when it is 1-D (counted once per call, not per output
    row), '.bias' when it is as large as the output."""
    return f"{name}.bias_per_call" if bias.dim() == 1 else f"{name}.bias"


def _multiplies(name: object) -> bool:
    """A logged entry of a functional that does multiply-adds (its label's op category)."""
    return op_category(entry_label(name)).multiply_adds


def entry_label(name: object) -> str:
    """These profilers key entries by `func.__str__` (a bound method-wrapper): its function's name."""
    return getattr(getattr(name, "__self__", None), "__name__", None) or str(name)


SDPA = "aten.scaled_dot_product_attention"  # what an unpatched F.scaled_dot_product_attention on its math path is named


class _Unpatched:
    """At the aten level, below any Python patching: a multiply-add op is covered when a patched wrapper of a
    multiply-add functional (linear, conv, matmul, einsum, ...: not a norm's or an activation's) logged an entry
    since the previous one; otherwise the profiler never saw it (MultiheadAttention's fused op after a layer_norm).
    Inside F.scaled_dot_product_attention the call is one: covered when a patch logged an entry during it, else
    skipped by its fused kernel's name, or as the SDPA call itself where it ran on its math path (bmm, not a kernel)."""

    def __init__(self, stack: LoggedStack):
        self.stack, self.pos = stack, 0
        self.missing: Counter[str] = Counter()
        self.inside: list[tuple[int, list[object]]] | None = None  # per open SDPA call: (log position, ops it ran)

    def seen(self, packet: object) -> None:
        from flopcheck.exact.ops import FORMULAS  # lazy: torch (see the note at the top)

        if packet not in FORMULAS or not self.stack.profiling:
            return
        if self.inside:
            self.inside[-1][1].append(packet)
            return
        new = self.stack.log[self.pos :]
        self.pos = len(self.stack.log)
        if not any(_multiplies(name) for name, _ in new):
            self.missing[str(packet)] += 1

    def sdpa(self, call: Callable[[], Any]) -> Any:
        """Run one F.scaled_dot_product_attention call as a unit: its ops are covered by a patch that logged, or
        skipped together (a fused kernel by its name; the math path's matmuls as the SDPA call)."""
        from flopcheck.exact.ops import ATTENTION_OPS  # lazy: torch (see the note at the top)

        opened = (len(self.stack.log), list[object]())
        self.inside = (self.inside or []) + [opened]
        try:
            return call()
        finally:
            self.inside.pop()
            start, ops = opened
            if ops and not any(_multiplies(name) for name, _ in self.stack.log[start:]):
                kernels = [str(op) for op in ops if op in ATTENTION_OPS]
                self.missing.update(kernels or [SDPA])
            self.pos = len(self.stack.log)

    def skips(self, reason: str) -> tuple[Skip, ...]:
        return tuple(
            Skip(n, c, reason, Mechanism.OP, Work.ATTENTION if n == SDPA else op_category(n))
            for n, c in sorted(self.missing.items())
        )


@contextmanager
def watching_ops(seen: Callable[[object], None]) -> Iterator[None]:
    """Call `seen(op packet)` for every aten op that runs inside, below any Python-level patching."""
    from flopcheck.untyped import DispatchMode  # lazy: torch (see the note at the top)

    class Watch(DispatchMode):
        def __torch_dispatch__(
            self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None
        ) -> Any:
            seen(func.overloadpacket)
            return func(*args, **(kwargs or {}))

    with Watch():
        yield


@contextmanager
def recording_ops() -> Iterator[Counter[object]]:
    """A Counter of the aten op packets that run inside, filled as they run."""
    calls: Counter[object] = Counter()
    with watching_ops(lambda op: calls.update((op,))):
        yield calls


@contextmanager
def unpatched_ops(stack: LoggedStack) -> Iterator[_Unpatched]:
    """Record aten ops as they run; `.skips()` lists the multiply-add ops no patched wrapper logged."""
    from torch.nn import functional  # lazy: torch (see the note at the top)

    watch = _Unpatched(stack)
    sdpa = functional.scaled_dot_product_attention  # no profiler patches it: called as F.scaled_dot_product_attention

    def watched(*args: Any, **kwargs: Any) -> Any:
        return watch.sdpa(lambda: sdpa(*args, **kwargs))

    functional.scaled_dot_product_attention = watched
    try:
        with watching_ops(watch.seen):
            yield watch
    finally:
        functional.scaled_dot_product_attention = sdpa


def read_deepspeed_style(count: Count, ref: Reference) -> list[Part]:
    """The reading of DeepSpeed's profiler and calflops (its fork): conv2d = 2*MACs + one FLOP per output for the
    bias; every other functional whole, as the work its name says."""
    parts: list[Part] = []
    convs = {bare(i.name) for i in count.detail if family(i.name) is Family.CONV and "transpose" not in i.name}
    for i in count.detail:
        if family(i.name) is Family.CONV:
            # with conv2d and conv3d both (a video UNet), each item's bias is its own layers' (Conv2d, Conv3d)
            layer = f"Conv{bare(i.name)[-2:]}" if len(convs) > 1 else None
            bias = _conv_bias(ref, transposed=bare(i.name).startswith("conv_transpose"), layer=layer)
            parts += split(i.name, i.flops, [(Work.BIAS, bias), (Work.CONV, i.flops - bias)])
        else:
            parts.append(part(i.flops, i.name, op_work(i.name, ref)))
    return parts


def _conv_bias(ref: Reference, transposed: bool, layer: str | None = None) -> int:
    """The convolutions' bias adds: the exact count's for the others (of the layers of that class alone, where given);
    for the transposed ones calflops' own rule, C_out x N x the output size a forward conv of that geometry would
    give, (in + 2p - d(k - 1) - 1) // s + 1 per dimension (in: the input size the exact output came from), not the
    output's."""
    if transposed:
        return sum(_transposed_bias(ref, p, la) for p, la in ref.layers.items() if la.transposed)
    paths = {ref.norm_path[p] for p, la in ref.layers.items() if la.transposed_groups is not None}
    recs = [r for r in ref.exact.uncounted if r.kind is Work.BIAS and r.op.split(".")[-1] == "convolution"]
    if layer is not None:
        kept = {ref.norm_path[p] for p, la in ref.layers.items() if layer in (la.type_name, la.subclass_of)}
        recs = [r for r in recs if r.path in kept]
    return sum(r.elements for r in recs if r.path not in paths)


def _transposed_bias(ref: Reference, path: str, layer: Layer) -> int:
    """calflops' bias adds of one transposed convolution's call (0 when it has no bias or left no output shape)."""
    out = ref.exact.outputs.get(path)
    if not layer.bias or out is None or layer.transposed is None:  # called for transposed layers only
        return 0
    kernel, stride, padding, dilation, extra = layer.transposed
    size = 1
    for i, o in enumerate(out[2:]):  # the input from the output: o = (x - 1)s - 2p + d(k - 1) + output_padding + 1
        x = (o - 1 - extra[i] + 2 * padding[i] - dilation[i] * (kernel[i] - 1)) // stride[i] + 1
        size *= (x + 2 * padding[i] - (dilation[i] * (kernel[i] - 1) + 1)) // stride[i] + 1
    return out[1] * out[0] * size


def run_logged(profiler_module: Any, call: Callable[[], float], reason: str) -> Measurement:
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
