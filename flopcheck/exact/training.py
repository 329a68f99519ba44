"""One training step counted exactly: the forward, then the backward from a scalar loss, each by path and kind.

The backward runs in autograd's engine, outside any module's forward, so its ops are attributed by the
autograd node they run in: the forward marks which module made each node (by autograd's sequence
numbers), and a backward op belongs to the module whose forward made the node being executed (a
parameter's gradient accumulator, to the module that owns the parameter). `requires_grad` is the model's own:
frozen parameters get no weight gradient, inputs no input gradient, and the backward kernels'
formulas (convolution_backward's output mask, the SDPA backward kernels) count what was asked for.
"""

from __future__ import annotations

import bisect
import fnmatch
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint as recompute

from flopcheck.counted import ExactCount
from flopcheck.errors import InputError
from flopcheck.exact import flop_kinds
from flopcheck.exact.counter import ROOT, ExactCounter, Frame, _Event, _tensors, join, module_frames
from flopcheck.types import Work
from reference_models import prepare


@dataclass(frozen=True)
class TrainingCount:
    """The exact count of one training step: the forward and the backward, each an ExactCount."""

    forward: ExactCount
    backward: ExactCount
    frozen: frozenset[str] = frozenset()  # normalised paths of layers whose weights need no gradient
    recomputed: frozenset[str] = frozenset()  # normalised paths of checkpointed modules: their forward runs again
    optimizer: ExactCount | None = None  # the optimizer's step, counted apart (elementwise: no multiply-adds)
    optimizer_name: str = ""
    trainable: int = 0  # parameters with a gradient
    custom: tuple[
        tuple[str, str], ...
    ] = ()  # (path, Function) of backward work a custom autograd.Function's own backward did
    fused_scores: int = 0  # QK^T FLOPs of the forward's fused attention calls (F.scaled_dot_product_attention)
    attn_kernel: str = ""  # the kernel those calls run on the device (ATTN_KERNELS); '' for the default

    def differences(self) -> list[tuple[str, int, int, str]]:
        """(path, forward, backward, why) of every term whose backward is not 2 x its forward, the 3x rule's
        assumption: the exact step minus the rule is the sum of (backward - 2 x forward) over them."""
        fwd, bwd = self.forward.by_path(), self.backward.by_path()
        out = []
        for path in dict.fromkeys([*fwd, *bwd]):
            f, b = fwd.get(path, 0), bwd.get(path, 0)
            if b != 2 * f:
                out.append((path, f, b, self._why(path, f, b)))
        return out

    def _why(self, path: str, f: int, b: int) -> str:
        functions = sorted({fn for p, fn in self.custom if p == path})
        if functions:
            return (
                f"a custom autograd.Function's backward ({', '.join(functions)}): its own code, not torch's "
                f"derivatives, decides which gradients it computes"
            )
        lost = sorted({r.op for r in self.backward.uncounted if r.kind is Work.NO_FORMULA and r.path == path})
        if lost:  # not a gradient it skipped: one it computed where the count cannot see
            return f"its backward ran {', '.join(lost)}, which has no formula: not counted (the step is INCOMPLETE)"
        if b == 0:
            return "no gradient: its weights are frozen and its input needs none"
        if b == f and path in self.frozen:
            return "input gradient only: its weights are frozen"
        if b == f:
            return "weight gradient only: its input needs no gradient (a model input, or a fixed function of one)"
        if any(path == r or path.startswith(r + ".") for r in self.recomputed) and b > 2 * f:
            return "recomputed in the backward: activation checkpointing runs its forward again"
        if f == 0:
            return "backward only: a gradient's own work"
        return f"backward {b / f:.3g} x forward"

    @property
    def total(self) -> int:
        """Forward + backward, FLOPs."""
        return self.forward.total + self.backward.total

    @property
    def checkpoint_recompute(self) -> int:
        """The forward that activation checkpointing runs again in the backward: the checkpointed modules' own."""
        fwd = self.forward.by_path()
        return sum(f for p, f in fwd.items() if any(p == r or p.startswith(r + ".") for r in self.recomputed))

    @property
    def model_flops(self) -> int:
        """Forward + backward as autograd asks of the math, no recompute of any kind: what MFU is defined on."""
        return self.total - self.checkpoint_recompute

    @property
    def kernel(self) -> str:
        """The attention kernel the executed FLOPs follow: the one asked for, else flash where the forward's
        attention is fused (F.scaled_dot_product_attention), else math."""
        return self.attn_kernel or ("flash" if self.fused_scores else "math")

    @property
    def kernel_recompute(self) -> int:
        """What the fused attention kernel's backward computes again: flash, memory-efficient and cuDNN recompute
        QK^T from the saved statistics (PyTorch's flop counter counts their backward as five matmuls); the math
        path saves the probabilities and recomputes nothing."""
        return self.fused_scores if self.kernel in RECOMPUTING_KERNELS else 0

    @property
    def executed_flops(self) -> int:
        """What the hardware runs: the model's FLOPs plus checkpointing's and the attention kernel's recompute."""
        return self.model_flops + self.checkpoint_recompute + self.kernel_recompute

    @property
    def rule_3x(self) -> int:
        """The usual rule: a training step is 3 x the forward (backward = 2 x forward)."""
        return 3 * self.forward.total


ATTN_KERNELS = ("flash", "efficient", "cudnn", "math")  # the kernels a fused attention call can run on a device
RECOMPUTING_KERNELS = ("flash", "efficient", "cudnn")  # their backward recomputes QK^T


class _FusedScores:
    """Within the block, adds up the QK^T FLOPs of every call of F.scaled_dot_product_attention: q (..., Tq, E)
    against k (..., Tk, E) is 2 x prod(q.shape[:-1]) x Tk x E. On meta the call decomposes into plain matmuls, so
    it is seen here, at the function, before it does: the function is wrapped for the block (a torch function mode
    would see it too, but costs a Python call for every op of the forward). A call through a name bound before the
    block (`from torch.nn.functional import scaled_dot_product_attention`) is not seen."""

    def __init__(self) -> None:
        self.flops = 0
        self._original: Callable[..., Any] = torch.nn.functional.scaled_dot_product_attention

    def __enter__(self) -> _FusedScores:
        functional = torch.nn.functional
        self._original = original = functional.scaled_dot_product_attention

        def counted(query: torch.Tensor, key: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
            self.flops += 2 * math.prod(query.shape[:-1]) * key.shape[-2] * query.shape[-1]
            return original(query, key, *args, **kwargs)

        functional.scaled_dot_product_attention = counted
        return self

    def __exit__(self, *exc: object) -> None:
        torch.nn.functional.scaled_dot_product_attention = self._original


class _BackwardFrames:
    """The module whose forward made each autograd node. Autograd numbers its nodes in the order the forward makes
    them (sequence numbers), so the forward's module hooks mark where each module's nodes begin: from the mark at a
    module's entry, the module; from the mark at its exit, its caller. In the backward an op runs inside the node
    autograd is executing, and that node's number names its module. A parameter's gradient accumulator belongs to
    the module owning the parameter; the loss's nodes (numbered after the last mark) fall to the root."""

    def __init__(self, model: nn.Module | None = None):
        frames = module_frames(model) if model is not None else {}
        self._owner = {id(p): f for m, f in frames.items() for p in m.parameters(recurse=False)}
        self._starts: list[int] = []  # sequence numbers, ascending: from each, self._frames[i] made the nodes
        self._frames: list[Frame] = []
        self.recomputing: list[Frame] = []  # checkpointed modules running their forward again, in the backward
        self.matmuls: dict[int, _Event] = {}  # node sequence number -> the forward's matmul event that made it

    def mark(self, frame: Frame) -> None:
        """From the next node autograd makes, `frame` is the module making them."""
        now = torch._C._autograd._get_sequence_nr()
        if self._starts and self._starts[-1] == now:  # no node since the last mark: this one replaces it
            self._frames[-1] = frame
        else:
            self._starts.append(now)
            self._frames.append(frame)

    def of(self, node: Any) -> Frame:  # node: an autograd Node (its private methods are untyped)
        """The module whose forward made `node` (the root for a node made before or after the forward)."""
        if hasattr(node, "variable"):  # AccumulateGrad: numbered last of all, it belongs to its parameter's module
            return self._owner.get(id(node.variable), ROOT)
        i = bisect.bisect_right(self._starts, node._sequence_nr()) - 1
        return self._frames[i] if i >= 0 else ROOT

    def forward_matmul(self) -> _Event | None:
        """The forward's matmul event whose node autograd is running (None outside one, or in a recompute): its
        kind, QK^T or attn@V, is known by now."""
        node = torch._C._current_autograd_node()
        if node is None or self.recomputing or hasattr(node, "variable"):
            return None
        return self.matmuls.get(node._sequence_nr())

    @property
    def current(self) -> Frame:
        if self.recomputing:  # a checkpointed module's forward, run again: its ops are its own
            return self.recomputing[-1]
        node = torch._C._current_autograd_node()
        return ROOT if node is None else self.of(node)


class _ForwardCounter(ExactCounter):
    """The exact counter of the forward, whose module hooks also mark which module makes each autograd node."""

    def __init__(self, model: nn.Module, kind_map: Iterable[tuple[str, str]], frames: _BackwardFrames):
        super().__init__(model, kind_map)
        self._frames = frames

    def __enter__(self) -> _ForwardCounter:
        self._frames.mark(ROOT)
        super().__enter__()
        return self

    def _push(self, frame: Frame, args: Any = ()) -> None:
        super()._push(frame, args)
        self._frames.mark(frame)

    def _pop(self, frame: Frame, out: Any, args: Any = ()) -> None:
        super()._pop(frame, out, args)
        self._frames.mark(self.frame)

    def _free_matmul(self, name: str, frame: Frame, flops: int, args: tuple[Any, ...], out: Any) -> None:
        """As the forward counts it; the event is also kept by the autograd node this matmul made (autograd makes
        an op's node just before the op reaches this mode), for its backward to find."""
        before = len(self._events)
        super()._free_matmul(name, frame, flops, args, out)
        if len(self._events) > before and torch.is_grad_enabled() and any(t.requires_grad for t in _tensors(args)):
            self._frames.matmuls[torch._C._autograd._get_sequence_nr() - 1] = self._events[before]


def _in_backward() -> bool:
    """Autograd's engine is running a node: this is the backward (a checkpoint's recompute), not the forward."""
    return torch._C._current_autograd_node() is not None


class _BackwardCounter(ExactCounter):
    """The exact counter in the backward: the frame is the module whose forward made the node running. A matmul of
    two activations there is the gradient of the forward's matmul that made the node: QK^T's (dQ, dK) are attention
    scores' work, attn@V's (dA, dV) attention values', each a matmul the size of its forward where that gradient is
    needed."""

    def __init__(self, frames: _BackwardFrames, kind_map: Iterable[tuple[str, str]] = ()):
        super().__init__(None, kind_map)
        self._frames = frames
        self.custom: set[tuple[str, str]] = set()  # (path, Function name) of work in a custom Function's backward

    @property
    def frame(self) -> Frame:
        return self._frames.current

    def _count(self, packet: object, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any) -> None:
        """Counted as any op; work inside a custom autograd.Function's backward is also noted, with its name."""
        before = len(self._events)
        super()._count(packet, args, kwargs, out)
        node = torch._C._current_autograd_node()
        if isinstance(node, torch.autograd.function.BackwardCFunction) and not self._frames.recomputing:
            name = getattr(node, "_forward_cls", type(node)).__name__
            self.custom.update((join(e.frame.norm_path, e.suffix), name) for e in self._events[before:])

    def _free_matmul(self, name: str, frame: Frame, flops: int, args: tuple[Any, ...], out: Any) -> None:
        made_by = self._frames.forward_matmul()
        if made_by is None or made_by.suffix not in ("qk", "av"):
            return super()._free_matmul(name, frame, flops, args, out)
        self._events.append(_Event(name, frame, made_by.kind, made_by.suffix, flops))


def mean_loss(out: Any) -> torch.Tensor:
    """A scalar loss from a forward's output: the mean of its first tensor (elementwise work, no multiply-adds)."""
    first = _tensors(out)[0]
    return first.float().mean()


def _matching(module: nn.Module, patterns: tuple[str, ...], what: str) -> list[tuple[str, nn.Module]]:
    """(path, module) of the modules whose path matches a pattern; a pattern that matches none is bad input."""
    found = [(p, m) for p, m in module.named_modules() if p and any(fnmatch.fnmatchcase(p, x) for x in patterns)]
    for x in patterns:
        if not any(fnmatch.fnmatchcase(p, x) for p, _ in found):
            names = [n for n, _ in module.named_children()][:6]
            raise InputError(
                f"{what} pattern {x!r} matches no module: its top-level modules are {', '.join(names)}; "
                f"write a module path such as {names[0] + '.*' if names else 'blocks.*'}"
            )
    return found


def freeze(module: nn.Module, patterns: Iterable[str]) -> None:
    """Freeze the parameters of every module whose path matches a pattern ('blocks.*', 'text_encoder'), and of
    the modules inside it: a frozen text encoder, a LoRA's base weights."""
    for _, m in _matching(module, tuple(patterns), "freeze"):
        m.requires_grad_(False)


def checkpoint(module: nn.Module, patterns: Iterable[str], frames: _BackwardFrames | None = None) -> list[nn.Module]:
    """Activation checkpointing on the modules matching a pattern ('blocks.*'): their forward keeps no activations
    and runs again in the backward (up to the last activation the backward needs: torch stops early), where
    `frames` attributes it to the module. Returns the modules changed (their forward is an instance attribute)."""
    paths = {m: f for m, f in module_frames(module).items()}
    changed: list[nn.Module] = []
    outer: list[str] = []
    for path, m in _matching(module, tuple(patterns), "checkpoint"):
        if any(path.startswith(o + ".") for o in outer):  # 'blocks.*' matches blocks.0.attn too: once, outermost
            continue
        outer.append(path)
        own = m.forward

        def forward(*args: Any, _own: Callable[..., Any] = own, _frame: Frame = paths[m], **kwargs: Any) -> Any:
            def run(*a: Any, **k: Any) -> Any:
                if frames is None or not _in_backward():
                    return _own(*a, **k)
                frames.recomputing.append(_frame)
                try:
                    return _own(*a, **k)
                finally:
                    frames.recomputing.remove(_frame)

            return recompute(run, *args, use_reentrant=False, preserve_rng_state=False, **kwargs)

        m.forward = forward
        changed.append(m)
    return changed


def count_training_step(
    module: nn.Module,
    inputs: tuple[Any, ...] = (),
    forward: Callable[..., Any] | None = None,
    kind_map: Iterable[tuple[str, str]] = (),
    kwargs: dict[str, Any] | None = None,
    loss: Callable[[Any], torch.Tensor] = mean_loss,
    frozen_paths: Iterable[str] = (),
    checkpointed: Iterable[str] = (),
    optimizer: str = "",
    **labels: str,
) -> TrainingCount:
    """Run the forward (default: the module), a scalar loss, and its backward, each counted exactly; the modules
    matching `frozen_paths` train no weights, those matching `checkpointed` run their forward again in the backward
    (activation checkpointing: counted there, where it runs); `optimizer` ('adamw', 'sgd') counts its step apart."""
    freeze(module, frozen_paths)
    tracker = _BackwardFrames(module)
    changed = checkpoint(module, checkpointed, tracker)
    frames = module_frames(module)
    try:
        step = _step(module, inputs, forward, kind_map, kwargs, loss, labels, optimizer, tracker)
    finally:
        for m in changed:
            del m.forward
    return replace(step, recomputed=frozenset(frames[m].norm_path for m in changed))


OPTIMIZERS: dict[str, Callable[[list[nn.Parameter]], torch.optim.Optimizer]] = {
    "adamw": lambda ps: torch.optim.AdamW(ps, lr=1e-4, foreach=False),
    "sgd": lambda ps: torch.optim.SGD(ps, lr=1e-4, momentum=0.9, foreach=False),
}


def _optimizer_step(module: nn.Module, name: str) -> tuple[ExactCount | None, int]:
    """The optimizer's first step over the trainable parameters, counted apart, and how many there are."""
    trainable = [p for p in module.parameters() if p.requires_grad and p.grad is not None]
    if not name or not trainable:
        return None, sum(p.numel() for p in trainable)
    opt = OPTIMIZERS[name](trainable)
    with ExactCounter() as counter:
        opt.step()
    for p in trainable:
        p.grad = None
    return counter.result(model=name), sum(p.numel() for p in trainable)


def _step(
    module: nn.Module,
    inputs: tuple[Any, ...],
    forward: Callable[..., Any] | None,
    kind_map: Iterable[tuple[str, str]],
    kwargs: dict[str, Any] | None,
    loss: Callable[[Any], torch.Tensor],
    labels: dict[str, str],
    optimizer: str = "",
    frames: _BackwardFrames | None = None,
) -> TrainingCount:
    """The forward, the loss and the backward, each under its counter; then the optimizer's step, apart."""
    frozen = frozenset(
        f.norm_path
        for m, f in module_frames(module).items()
        if any(not p.requires_grad for p in m.parameters(recurse=False))
    )
    frames = frames or _BackwardFrames(module)
    with torch.enable_grad(), _ForwardCounter(module, kind_map, frames) as fwd, _FusedScores() as fused:
        out = (forward or module)(*inputs, **(kwargs or {}))
    scalar = loss(out)
    if not scalar.requires_grad:
        raise InputError(
            "the loss on this output needs no gradient, so there is no backward to count: every "
            "parameter is frozen, or the output is not differentiable (an argmax, integers); freeze "
            "fewer modules, return the logits, or count the forward without --training"
        )
    forward_count = fwd.result(**labels)
    bwd = _BackwardCounter(frames, kind_map)
    with bwd:
        torch.autograd.backward(scalar)  # scalar.backward(), typed
    opt, trainable = _optimizer_step(module, optimizer)
    return TrainingCount(
        forward_count,
        bwd.result(**labels),
        frozen,
        optimizer=opt,
        optimizer_name=optimizer,
        trainable=trainable,
        custom=tuple(sorted(bwd.custom)),
        fused_scores=fused.flops,
    )


@lru_cache(maxsize=32)
def training_step(
    name: str,
    config: Any,
    batch: int = 1,
    frozen: tuple[str, ...] = (),
    checkpointed: tuple[str, ...] = (),
    optimizer: str = "",
) -> TrainingCount:
    """The exact training step of a reference model on meta: its forward, a mean loss, its backward, the modules
    matching `frozen` training no weights, those matching `checkpointed` recomputed in the backward (once per
    config: a claims file asks again)."""
    model, inputs, forward = prepare(config, batch=batch, device="meta")
    return count_training_step(
        model,
        inputs,
        forward,
        flop_kinds(model),
        frozen_paths=frozen,
        checkpointed=checkpointed,
        optimizer=optimizer,
        model=name,
        attn=config.attn,
        device="meta",
    )
