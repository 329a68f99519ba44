"""flopcheck's own op-level count: a TorchDispatchMode that sees every aten op of a forward.

Unit: FLOPs, 2 per multiply-add. Each counted op is attributed to its module path (ModuleList
indices written '*', so 28 blocks sum into 'blocks.*.attn.qkv') and a Kind. Attention is split
into QK^T and attn@V whichever way it runs: a fused SDPA kernel through its formula, explicit
matmuls through data flow (a matmul whose output reaches a softmax is QK^T; a matmul fed by a
softmax is attn@V). Ops without a formula are recorded by category with the elements they wrote.
Runs on meta tensors: shapes are all it reads.
"""

from __future__ import annotations

import contextlib
import fnmatch
import sys
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, MutableMapping
from dataclasses import dataclass, replace
from math import prod
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch._ops import HigherOrderOperator, OpOverload
from torch.nn.attention import flex_attention as flex
from torch.utils._python_dispatch import _disable_current_modes
from torch.utils._pytree import tree_flatten
from torch.utils.weak import WeakTensorKeyDictionary

from flopcheck import plugins
from flopcheck.counted import ExactCount, OpRecord
from flopcheck.exact import block_mask, categories, meta_safe
from flopcheck.exact.attention_work import collect
from flopcheck.exact.cost import OpCost
from flopcheck.exact.masks import MaskLog
from flopcheck.exact.ops import ATTENTION_OPS, FORMULAS, MATMUL_OPS, adopt
from flopcheck.exact.routing import observing
from flopcheck.exact.sdpa_choice import runs_fused
from flopcheck.op_names import SOFTMAX_OPS
from flopcheck.types import Kind, Work
from flopcheck.untyped import DispatchMode, patched


def join(*parts: str) -> str:
    """'blocks.*' + 'attn' -> 'blocks.*.attn', skipping empty parts."""
    return ".".join(p for p in parts if p)


@dataclass(frozen=True)
class Frame:
    """A module on the call stack: its exact path, its path with list indices as '*', and whether it is a layer."""

    path: str
    norm_path: str
    is_layer: bool  # a leaf with its own weights (Linear, Conv): its matmuls are the layer, not attention


ROOT = Frame("", "", False)
FIRST_OF = "[0]"  # outputs' key suffix for the shape of the first tensor of a module's tuple output


class _Event:
    """One counted op call (mutable: a matmul becomes QK^T when a softmax later reads its output)."""

    __slots__ = ("op", "frame", "kind", "suffix", "flops")

    def __init__(self, op: str, frame: Frame, kind: Kind, suffix: str, flops: int):
        self.op, self.frame, self.kind, self.suffix, self.flops = op, frame, kind, suffix, flops


def _tensors(tree: Any) -> list[torch.Tensor]:
    """The tensors in an op's or a module's arguments or outputs; a tensor, or a flat tuple or list of tensors and
    plain values (nearly every call), without pytree's general walk."""
    if isinstance(tree, torch.Tensor):
        return [tree]
    if isinstance(tree, (tuple, list)) and not any(isinstance(x, (tuple, list, dict)) for x in tree):
        return [x for x in tree if isinstance(x, torch.Tensor)]
    return [x for x in tree_flatten(tree)[0] if isinstance(x, torch.Tensor)]


def _is_parameter(t: torch.Tensor) -> bool:
    """A parameter, or a view of one (F.linear's weight.t())."""
    return isinstance(t, nn.Parameter) or isinstance(getattr(t, "_base", None), nn.Parameter)


def _adds_a_bias(func: OpOverload, args: tuple[Any, ...]) -> bool:
    """An add of a 1-D parameter (a layer's bias, added apart from its matmul)."""
    return func.overloadpacket.__name__ in ("add", "add_") and any(
        _is_parameter(t) and t.dim() == 1 for t in _tensors(args)
    )


def _summed(pairs: Iterable[tuple[str, int]]) -> dict[str, int]:
    """(key, value) pairs summed per key."""
    out: dict[str, int] = defaultdict(int)
    for k, v in pairs:
        out[k] += v
    return dict(out)


def _repeats(module: nn.Module) -> bool:
    """A ModuleList of blocks of one class (a transformer's blocks): its children share one normalised path. A list
    of unlike layers (diffusers' ff.net = [GELU, Dropout, Linear]) keeps each child's own index."""
    return isinstance(module, nn.ModuleList) and len({type(c) for c in module.children()}) == 1


def module_frames(model: nn.Module) -> dict[nn.Module, Frame]:
    """Every submodule's Frame, at its first path; children of a ModuleList of one class get '*' in the normalised
    path."""
    frames = {model: ROOT}
    for _, module in model.named_modules():
        parent = frames[module]
        repeats = _repeats(module)
        for name, child in module.named_children():
            if child in frames:  # a module shared at several paths keeps its first (named_modules' own order)
                continue
            seg = "*" if repeats else name
            has_weights = next(child.parameters(recurse=False), None) is not None
            is_leaf = next(child.children(), None) is None
            frames[child] = Frame(join(parent.path, name), join(parent.norm_path, seg), has_weights and is_leaf)
    return frames


def _eager_flex_attention(on: bool) -> bool:
    """Let eager flex_attention reach this mode as one op instead of compiling itself (torch.compile refuses to
    trace under a user dispatch mode); returns the setting it replaced. Its outputs are the same attention, its
    log-sum-exp statistics in the debug path's base; a count reads shapes only."""
    module: Any = sys.modules.get("torch.nn.attention.flex_attention")  # a module attribute only some torch has
    if module is None or not hasattr(module, "_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG"):
        return False
    before: bool = module._FLEX_ATTENTION_DISABLE_COMPILE_DEBUG
    module._FLEX_ATTENTION_DISABLE_COMPILE_DEBUG = on
    return before


class _Einsums:
    """While entered, torch.einsum notes each call with a string equation: (equation, operand shapes, the counted
    events its decomposition dispatched), so the reconciler can read a counter's einsum by its equation. A patch, not
    a TorchFunctionMode: an active mode turns off MultiheadAttention's fast path, which the count must see as run."""

    def __init__(self, events: list[_Event]):
        self.events = events
        self.calls: list[tuple[str, tuple[tuple[int, ...], ...], list[_Event]]] = []
        self._saved: Callable[..., Any] = torch.einsum

    def __enter__(self) -> _Einsums:
        self._saved = original = torch.einsum

        def einsum(*args: Any, **kwargs: Any) -> Any:
            if not args or not isinstance(args[0], str):
                return original(*args, **kwargs)
            operands = args[1] if len(args) == 2 and isinstance(args[1], (list, tuple)) else args[1:]
            before = len(self.events)
            out = original(*args, **kwargs)
            shapes = tuple(tuple(o.shape) for o in operands if isinstance(o, torch.Tensor))
            self.calls.append((args[0].replace(" ", ""), shapes, self.events[before:]))
            return out

        torch.einsum = torch.functional.einsum = einsum
        return self

    def __exit__(self, *exc: object) -> None:
        torch.einsum = torch.functional.einsum = self._saved


class _Sdpa:
    """While entered, F.scaled_dot_product_attention notes the counted events of each call the CPU runs as one fused
    kernel (sdpa_choice.runs_fused; a counter with no formula for it sees none of it), whatever meta ran it as; a call
    the CPU runs on its math path is plain matmuls that a dispatch counter counts."""

    def __init__(self, events: list[_Event]) -> None:
        self.events = events
        self.calls: list[list[_Event]] = []
        self.math: list[list[_Event]] = []  # the calls the CPU runs on its math path
        self.masks = MaskLog()  # each call's mask read: the pairs it needs and flash executes (exact/masks.py)
        self._saved: Callable[..., Any] = F.scaled_dot_product_attention

    def __enter__(self) -> _Sdpa:
        self._saved = original = F.scaled_dot_product_attention
        self.masks.__enter__()

        def sdpa(*args: Any, **kwargs: Any) -> Any:
            before = len(self.events)
            self.masks.within_sdpa += 1  # its math path's matmuls and softmax are this call, not eager attention
            try:
                out = original(*args, **kwargs)
            finally:
                self.masks.within_sdpa -= 1
            fused = runs_fused(args, kwargs)  # a call the CPU runs on its math path is matmuls to a dispatch counter
            (self.calls if fused else self.math).append(self.events[before:])
            self.masks.note(args, kwargs, self.events[before].frame.norm_path if len(self.events) > before else "")
            return out

        F.scaled_dot_product_attention = sdpa
        return self

    def __exit__(self, *exc: object) -> None:
        F.scaled_dot_product_attention = self._saved
        self.masks.__exit__(*exc)


_PLUGINS: list[Any] = []


def _load_plugins() -> None:
    """The plugins, imported once per process before the first count."""
    if not _PLUGINS:
        _PLUGINS.append(plugins.load())


class ExactCounter(DispatchMode):
    """Count every op of the forwards run inside `with ExactCounter(model):`; `.result()` gives the ExactCount."""

    supports_higher_order_operators = True  # flex_attention reaches the mode as one higher-order op

    def __init__(
        self, model: nn.Module | None = None, kind_map: Iterable[tuple[str, str]] = (), batch: int | None = None
    ):
        super().__init__()
        self.model = model
        self.kind_map = tuple((pattern, Kind(kind)) for pattern, kind in kind_map)
        self.batch = batch  # given (a model with no kind map): a layer with one output row per sample is per-sample
        self._stack: list[Frame] = []
        self._hooks: list[Any] = []
        self._events: list[_Event] = []
        self._uncounted: dict[tuple[str, str, Work], list[int]] = defaultdict(lambda: [0, 0])
        # tensor -> (origin norm path, 'mm' event | 'softmax')
        self._tags: MutableMapping[torch.Tensor, tuple[str, object]] = WeakTensorKeyDictionary()
        self._leading: dict[str, int] = {}  # exact path -> its module's output's first dimension (first call)
        self._outputs: dict[str, tuple[int, ...]] = {}  # exact path -> its module's output's shape (first call)
        self._einsums = _Einsums(self._events)
        self._sdpa = _Sdpa(self._events)
        self._bias: dict[str, int] = defaultdict(int)  # exact path -> bias elements added there
        self._mha: dict[str, tuple[int, int, bool]] = {}  # exact path -> (query length, key length, self-attention)

    # -- module tracking ------------------------------------------------------------------------
    def __enter__(self) -> ExactCounter:
        _load_plugins()  # a plugin may give a custom operator its formula
        self._flex = _eager_flex_attention(True)
        if self.model is not None:
            for module, frame in module_frames(self.model).items():
                self._hooks.append(module.register_forward_pre_hook(lambda m, a, f=frame: self._push(f, a)))
                self._hooks.append(module.register_forward_hook(lambda m, a, o, f=frame: self._pop(f, o, a)))
                if isinstance(module, nn.MultiheadAttention):
                    hook = lambda m, a, kw, f=frame: self._mha_call(f, m, a, kw)  # noqa: E731
                    self._hooks.append(module.register_forward_pre_hook(hook, with_kwargs=True))
        self._einsums.__enter__()
        self._sdpa.__enter__()
        return super().__enter__()

    def __exit__(self, *exc: object) -> None:
        self._einsums.__exit__(*exc)
        self._sdpa.__exit__(*exc)
        _eager_flex_attention(self._flex)
        for hook in self._hooks:
            hook.remove()
        self._hooks.clear()
        self._stack.clear()
        super().__exit__(*exc)

    def _push(self, frame: Frame, args: Any = ()) -> None:
        self._stack.append(frame)

    def _pop(self, frame: Frame, out: Any, args: Any = ()) -> None:  # None: a forward hook's result replaces the output
        self._stack.pop()
        if isinstance(out, torch.Tensor) and out.dim() > 0:
            self._leading.setdefault(frame.path, int(out.shape[0]))
            self._outputs.setdefault(frame.path, tuple(int(s) for s in out.shape))
        elif isinstance(out, (tuple, list)) and out and isinstance(out[0], torch.Tensor) and out[0].dim() > 0:
            # a tuple's first tensor, apart (FIRST_OF): what a library that sizes an output by it reads (torchinfo)
            self._outputs.setdefault(frame.path + FIRST_OF, tuple(int(s) for s in out[0].shape))

    def _mha_call(
        self, frame: Frame, module: nn.MultiheadAttention, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> None:
        """A MultiheadAttention's first call: its query and key lengths, and whether one tensor is query, key and
        value, the only call torch's fused fast path (eval, no grad, on CPU or CUDA) can take (a cross-attention
        runs its projections as ops)."""
        q, k, v = (*args, *(kwargs.get(n) for n in ("query", "key", "value")[len(args) :]))[:3]
        if not all(isinstance(t, torch.Tensor) and t.dim() == 3 for t in (q, k, v)):
            return
        axis = 1 if module.batch_first else 0
        self._mha.setdefault(frame.path, (int(q.shape[axis]), int(k.shape[axis]), q is k and k is v))

    @property
    def frame(self) -> Frame:
        return self._stack[-1] if self._stack else ROOT

    # -- dispatch -------------------------------------------------------------------------------
    def __torch_dispatch__(
        self,
        func: OpOverload | HigherOrderOperator,
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        if isinstance(func, HigherOrderOperator):
            return self._higher_order(func, args, kwargs)
        out = meta_safe.call(func, args, kwargs)  # a meta kernel that refuses what a real one takes: its shape
        packet = func.overloadpacket
        if packet in FORMULAS or (func.namespace != "aten" and adopt(packet)):
            self._count(packet, args, kwargs, out)
        else:
            self._skip(func, args, out)
        return out

    def _higher_order(self, func: HigherOrderOperator, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """A higher-order op runs whole, below this mode (its inner ops are not counted twice): counted by its
        formula if it has one, else recorded as multiply-add work without a formula."""
        with _disable_current_modes():
            out = func(*args, **kwargs)
            flexed = block_mask.note(func, args, self.frame.norm_path)  # its BlockMask's blocks, read (None: other op)
        if flexed is not None:
            self._sdpa.masks.calls.append(flexed)
        if func in FORMULAS:
            self._count(func, args, kwargs, out)
        else:
            self._record_uncounted(self.frame, str(func), Work.NO_FORMULA, out)  # str(): its name(), typed
        return out

    def _count(self, packet: object, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any) -> None:
        frame, name = self.frame, str(packet)
        given = {k: v for k, v in kwargs.items() if k != "out"}  # an out= call: its result is `out` all the same
        try:
            parts: OpCost = FORMULAS[packet](*args, out=out, **given)
        except Exception as err:  # recorded, never silently 0
            self._record_uncounted(frame, f"{name} ({type(err).__name__}: {err})", Work.NO_FORMULA, out)
            return
        if parts.bias_elements:
            self._uncounted[(frame.norm_path, name, Work.BIAS)][0] += 1
            self._uncounted[(frame.norm_path, name, Work.BIAS)][1] += parts.bias_elements
            self._bias[frame.path] += parts.bias_elements
        if packet in MATMUL_OPS and not frame.is_layer:
            self._free_matmul(name, frame, parts.flops, args, out)
            return
        for part in parts.parts:
            kind = part.kind if packet in ATTENTION_OPS else (self._mapped_kind(frame) or part.kind)
            self._events.append(_Event(name, frame, kind or self._layer_kind(out), part.suffix, part.flops))

    def _layer_kind(self, out: Any) -> Kind:
        """A layer's matmul: per-sample when the batch is known and it wrote one row per sample (an adaLN
        modulation, a timestep MLP, a classifier), else per-token linear."""
        if (
            self.batch is not None
            and isinstance(out, torch.Tensor)
            and out.dim() >= 1
            and prod(out.shape[:-1]) == self.batch
        ):
            return Kind.PER_SAMPLE
        return Kind.LINEAR

    def _mapped_kind(self, frame: Frame) -> Kind | None:
        for pattern, kind in self.kind_map:
            if fnmatch.fnmatchcase(frame.norm_path, pattern):
                return kind
        return None

    def _free_matmul(self, name: str, frame: Frame, flops: int, args: tuple[Any, ...], out: Any) -> None:
        """A matmul outside a layer: a layer's work if an operand is a parameter (F.linear with a module's weight),
        attn@V if fed by a softmax, else pending (QK^T once a softmax reads it)."""
        if any(_is_parameter(t) for t in _tensors(args)):
            self._events.append(_Event(name, frame, self._mapped_kind(frame) or self._layer_kind(out), "", flops))
            return
        operands = _tensors(args)
        probs = [t for t in operands if (self._tag(t, frame) or ("", None))[1] == "softmax"]
        if probs:
            self._events.append(_Event(name, frame, Kind.ATTN_VALUE, "av", flops))
            v = next((t for t in operands if t is not probs[0]), None)
            if v is not None:  # eager attention: its pairs and mask read beside SDPA's (exact/masks.py)
                self._sdpa.masks.note_eager(probs[0], v, frame.norm_path)
            return
        event = _Event(name, frame, Kind.MATMUL, "matmul", flops)
        self._events.append(event)
        for t in _tensors(out):
            self._tags[t] = (frame.norm_path, event)

    def _tag(self, t: torch.Tensor, frame: Frame) -> tuple[str, object] | None:
        """(the module path it was tagged in, the tag) of a tensor, if this frame is that module or inside it (a
        softmax module within the attention module that made the scores sees them)."""
        tag = self._tags.get(t)
        if tag is None or not (frame.norm_path == tag[0] or frame.norm_path.startswith(tag[0] + ".") or not tag[0]):
            return None
        return tag

    def _skip(self, func: OpOverload, args: tuple[Any, ...], out: Any) -> None:
        frame = self.frame
        category = categories.categorize(func)  # NO_FORMULA for multiply-add work this count has no formula for
        if category is Work.ELEMENTWISE and _adds_a_bias(func, args):
            category = Work.BIAS  # F.linear on a strided input runs as mm, then its bias added: a bias add all the same
        self._record_uncounted(frame, str(func.overloadpacket), category, out)
        if len(self._tags) == 0:
            return
        found = [tag for tag in (self._tag(t, frame) for t in _tensors(args)) if tag is not None]
        if not found:
            return
        tags = [tag for _, tag in found]
        scored = [t for t in _tensors(args) if self._tag(t, frame) is not None]
        width = 0
        if func.overloadpacket.__name__ in SOFTMAX_OPS:
            for tag in tags:
                if isinstance(tag, _Event):  # scores: the matmul whose output a softmax normalises
                    tag.kind, tag.suffix = Kind.ATTN_SCORE, "qk"
                    width = tag.flops // max(2 * scored[0].numel(), 1) if scored else 0  # QK^T: 2 e FLOPs a pair
            tags = ["softmax"]
        self._sdpa.masks.carry(func.overloadpacket.__name__, args, _tensors(out), scored, width)
        carried = "softmax" if "softmax" in tags else tags[0]
        for t in _tensors(out):  # the tag stays with the module that made the scores
            self._tags[t] = (found[0][0], carried)

    def _record_uncounted(self, frame: Frame, name: str, category: Work, out: Any) -> None:
        outputs = _tensors(out)  # the first output is the result; norms also return saved statistics
        written = 0 if category is Work.VIEW or not outputs else prod(outputs[0].shape)
        entry = self._uncounted[(frame.norm_path, name, category)]
        entry[0] += 1
        entry[1] += int(written)
        if category is Work.BIAS:
            self._bias[frame.path] += int(written)

    # -- result ---------------------------------------------------------------------------------
    def result(self, model: str = "", attn: str = "", device: str = "") -> ExactCount:
        """Events summed per (path, op, kind)."""
        summed: dict[tuple[str, str, Kind], list[int]] = defaultdict(lambda: [0, 0])
        for e in self._events:
            entry = summed[(join(e.frame.norm_path, e.suffix), e.op, e.kind)]
            entry[0] += e.flops
            entry[1] += 1
        counted = tuple(OpRecord(p, op, k, f, 0, n) for (p, op, k), (f, n) in summed.items())
        uncounted = tuple(OpRecord(p, op, c, 0, el, n) for (p, op, c), (n, el) in self._uncounted.items())
        einsums = tuple(
            (eq, shapes, tuple((e.kind.value, e.flops) for e in events)) for eq, shapes, events in self._einsums.calls
        )
        return ExactCount(
            model=model,
            attn=attn,
            device=device,
            counted=counted,
            uncounted=uncounted,
            leading=dict(self._leading),
            outputs=dict(self._outputs),
            einsums=einsums,
            mha=dict(self._mha),
            by_module=_summed((join(e.frame.path, e.suffix), e.flops) for e in self._events),
            bias_by_module=dict(self._bias),
            sdpa=_summed((join(e.frame.norm_path, e.suffix), e.flops) for call in self._sdpa.calls for e in call),
            sdpa_math=_summed((join(e.frame.norm_path, e.suffix), e.flops) for call in self._sdpa.math for e in call),
            attention=collect(self._sdpa.masks.calls),
        )


def count_forward(
    module: nn.Module,
    inputs: tuple[Any, ...] = (),
    forward: Callable[..., Any] | None = None,
    kind_map: Iterable[tuple[str, str]] = (),
    kwargs: dict[str, Any] | None = None,
    batch: int | None = None,
    **labels: str,
) -> ExactCount:
    """Run `forward(*inputs, **kwargs)` (default: the module) once under the counter; labels name the result;
    `batch`: samples in the inputs, so a layer writing one row per sample counts as per-sample; each router with one
    module per expert, the tokens each expert took (exact.routing)."""
    with torch.no_grad(), meta_autocast(), observing(module) as seen, ExactCounter(module, kind_map, batch) as counter:
        (forward or module)(*inputs, **(kwargs or {}))
    return replace(counter.result(**labels), routing=seen.result())


class _Autocast(torch.autocast):
    """torch.autocast that takes a meta tensor's device type ('meta', which autocast has no dtype for) as the CPU's:
    a model that turns autocast off around its rotary embedding (`autocast(device_type=x.device.type)`) runs on meta."""

    def __init__(self, device_type: str, *args: Any, **kwargs: Any) -> None:
        with warnings.catch_warnings():  # CPU autocast's note that it disables itself for a dtype it lacks
            warnings.simplefilter("ignore", UserWarning)
            super().__init__("cpu" if device_type == "meta" else device_type, *args, **kwargs)


def _flex_on_meta(validate: Callable[..., None]) -> Callable[..., None]:
    """flex_attention's device check, passing meta tensors: its higher-order op has a shape-only path, and the count
    reads its q, k and v shapes."""

    def check(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor) -> None:
        if query.device.type != "meta":
            validate(query, key, value)

    return check


@contextlib.contextmanager
def meta_autocast() -> Iterator[None]:
    """For the block, what refuses meta tensors without needing their values takes them: torch.autocast and
    torch.amp.autocast accept device_type='meta' (no meta op is autocast), and flex_attention its meta inputs."""
    with (
        patched(torch, "autocast", _Autocast),
        patched(torch.amp, "autocast", _Autocast),
        patched(flex, "_validate_device", _flex_on_meta(flex._validate_device)),
    ):
        yield
