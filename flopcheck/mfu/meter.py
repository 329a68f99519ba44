"""The MFU meter for a training loop: the exact step counted once, on meta, when the meter is made; each step's time
divided into it.

A step here is what one GPU does between two optimizer steps: `grad_accum` forward-backward passes of the example
batch. Its model FLOPs are the utilization auditor's truth (flopcheck.auditor.utilization.numerators: the exact
training step, causal attention halved when the model masks it causally) and its executed FLOPs add the recompute
(activation checkpointing, the fused attention kernel's backward). With `gpus` data-parallel GPUs each runs the same
step in the same time, so

    MFU = model FLOPs of one GPU's step / (seconds x the GPU's dense peak at the dtype)
    HFU = executed FLOPs of one GPU's step / (seconds x the same peak)
    TFLOP/s per GPU = model FLOPs of one GPU's step / seconds / 1e12
    samples/s = batch x grad_accum x gpus / seconds;  tokens/s = samples/s x tokens per sample.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from flopcheck import checks
from flopcheck.errors import InputError
from flopcheck.gpus import GPU, get_gpu

if TYPE_CHECKING:
    from torch import nn

    from flopcheck.auditor.utilization import SampleWork


@dataclass(frozen=True)
class Utilization:
    """One step's utilization: MFU and HFU as fractions of the peak, model FLOP/s per GPU, samples and tokens/s."""

    seconds: float
    mfu: float
    hfu: float
    tflops_per_gpu: float
    samples_per_second: float
    tokens_per_second: float | None = None

    def metrics(self) -> dict[str, float]:
        """The figures under the names the integrations log them by (mfu, hfu, tflops_per_gpu, ...)."""
        out = {
            "mfu": self.mfu,
            "hfu": self.hfu,
            "tflops_per_gpu": self.tflops_per_gpu,
            "samples_per_second": self.samples_per_second,
        }
        if self.tokens_per_second is not None:
            out["tokens_per_second"] = self.tokens_per_second
        return out

    def line(self, step: int | None = None) -> str:
        """A key=value log line (`flopcheck audit --log` reads it back)."""
        head = f"step={step} " if step is not None else ""
        pairs = " ".join(f"{k}={v:.6g}" for k, v in {"seconds": self.seconds, **self.metrics()}.items())
        return head + pairs


def _to_meta(value: Any) -> Any:
    """A tensor as an empty meta tensor of its shape and dtype; tuples, lists and dicts of them likewise."""
    import torch

    if isinstance(value, torch.Tensor):
        return torch.empty_like(value, device="meta")
    if isinstance(value, (list, tuple)):
        return type(value)(_to_meta(v) for v in value)
    if isinstance(value, dict):
        return {k: _to_meta(v) for k, v in value.items()}
    return value


def meta_twin(model: nn.Module, shared: tuple[object, ...] = ()) -> nn.Module:
    """A copy of the module whose parameters and buffers are meta tensors: no weight is copied, nothing computed;
    the `shared` objects it refers to (a Lightning module's trainer) are referred to, not copied."""
    import torch
    from torch import nn

    first = next(iter(model.parameters()), None)
    if first is not None and first.device.type == "meta":
        return model
    memo: dict[int, Any] = {id(o): o for o in shared}
    for p in model.parameters():
        memo[id(p)] = nn.Parameter(torch.empty_like(p, device="meta"), requires_grad=p.requires_grad)
    for b in model.buffers():
        memo[id(b)] = torch.empty_like(b, device="meta")
    return copy.deepcopy(model, memo)


def _positive(name: str, value: Any) -> Fraction:
    """A finite number > 0 as a Fraction (its decimal text, so 0.4 stays 2/5); anything else is bad input, named."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float, Fraction))
        or not math.isfinite(value)
        or value <= 0
    ):
        raise InputError(f"{name} must be a finite number > 0, got {value!r}")
    return value if isinstance(value, Fraction) else Fraction(repr(value))


def _whole(name: str, value: Any) -> int:
    """A GPU count, gradient accumulation or batch: checks.COUNT's whole number >= 1."""
    return checks.count(name, value)


def step_work(
    model: nn.Module,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    training: bool = True,
    causal: bool = False,
    shared: tuple[object, ...] = (),
) -> tuple[SampleWork, int]:
    """One sample's work (auditor.utilization.SampleWork) and the batch, from the exact step of model(*args, **kwargs)
    counted on a meta twin (training: forward + mean loss + backward; else the forward alone)."""
    from flopcheck.auditor.utilization import SampleWork, work_from_step
    from flopcheck.exact import count_forward, flop_kinds
    from flopcheck.exact.training import count_training_step
    from flopcheck.specs.measure import samples

    twin, margs, mkwargs = meta_twin(model, shared), _to_meta(args), _to_meta(kwargs)
    batch = samples(margs, mkwargs) or 1
    name = type(model).__name__
    kinds = flop_kinds(twin)
    if not training:
        fwd = count_forward(twin, margs, kind_map=kinds, kwargs=mkwargs, model=name, device="meta")
        per = Fraction(fwd.total, batch)
        return SampleWork(per, per, per, training=False), batch
    step = count_training_step(twin, margs, kind_map=kinds, kwargs=mkwargs, model=name, device="meta")
    return work_from_step(step, batch, causal), batch


def true_flops(work: SampleWork) -> tuple[Fraction, Fraction]:
    """One sample's model FLOPs (the utilization auditor's truth of an MFU) and its executed FLOPs: the step as the
    meter counted the loop's own model run it (a checkpoint in its forward recomputes there, and is counted; no
    recompute policy is assumed beside it)."""
    from flopcheck.auditor.utilization import numerators

    if not work.training:
        return work.model, work.executed
    model = next(r for r in numerators(work) if r.true).value
    return model, work.executed_with("none")


class Meter:
    """The MFU of a training loop, from flopcheck's exact step (FLOPs, 2 per multiply-add) and each step's time.

    Args:
        model: the nn.Module trained; counted on a meta copy (no weight copied, no compute, the module untouched).
        *example_inputs: one micro-batch as the loop feeds it, model(*example_inputs, **kwargs).
        gpu: the GPU table's name ('H100', 'A100', 'MI300X'); None reads torch.cuda's device (unknown: refused).
        gpus: data-parallel GPUs, each running this step.
        dtype: the dtype whose dense peak the MFU is of.
        training: a training step (forward + backward); False: the forward alone (inference).
        grad_accum: micro-batches per optimizer step, per GPU.
        tokens_per_sample: tokens in one sample, for tokens/s (default: an integer input's second dimension).
        causal: the model masks attention causally (a decoder LM): half of its attention is needed work.
        kwargs: the forward's keyword inputs.
        clock: seconds, for start()/stop() (time.perf_counter).
        shared: objects the module refers to that its meta copy shares, not copies (a Lightning trainer).

    Example:
        >>> meter = Meter(model, x, gpu="H100", gpus=8)
        >>> meter.update(0.4).mfu
    """

    def __init__(
        self,
        model: nn.Module,
        *example_inputs: Any,
        gpu: str | None = None,
        gpus: int = 1,
        dtype: str = "bf16",
        training: bool = True,
        grad_accum: int = 1,
        tokens_per_sample: int | None = None,
        causal: bool = False,
        kwargs: dict[str, Any] | None = None,
        clock: Callable[[], float] = time.perf_counter,
        shared: tuple[object, ...] = (),
    ) -> None:
        from flopcheck.mfu.devices import current_gpu

        self.gpus, self.grad_accum = _whole("gpus", gpus), _whole("grad_accum", grad_accum)
        self.gpu: GPU = get_gpu(gpu) if gpu is not None else current_gpu()
        self.dtype = dtype
        self.peak = Fraction(str(self.gpu.tflops_of(dtype) or 0)) * 10**12
        if not self.peak:
            self.gpu.peak_of(dtype)  # raises: the GPU has no peak at this dtype, naming those it has
        inputs, keywords = tuple(example_inputs), dict(kwargs or {})
        self.work, self.batch = step_work(model, inputs, keywords, training, causal, shared)
        self.model_flops, self.executed_flops = true_flops(self.work)
        self.tokens_per_sample = tokens_per_sample or _tokens(example_inputs, dict(kwargs or {}))
        self.clock = clock
        self._started: float | None = None

    @property
    def step_flops(self) -> Fraction:
        """One GPU's step: model FLOPs of batch x grad_accum samples."""
        return self.model_flops * self.batch * self.grad_accum

    def exact_update(self, seconds: Fraction, samples: int | None = None) -> tuple[Fraction, Fraction]:
        """The step's MFU and HFU as exact fractions: one GPU's step FLOPs / (seconds x peak)."""
        n = samples or self.batch * self.grad_accum
        return self.model_flops * n / (seconds * self.peak), self.executed_flops * n / (seconds * self.peak)

    def update(self, seconds: float, samples: int | None = None) -> Utilization:
        """The utilization of a step that took `seconds` (wall clock, the whole optimizer step on one GPU);
        `samples`: what one GPU took in it when not batch x grad_accum (a short last batch), at the same size each."""
        s = _positive("seconds", seconds)
        n = _whole("samples", samples) if samples is not None else self.batch * self.grad_accum
        mfu, hfu = self.exact_update(s, n)
        per_second = Fraction(n * self.gpus) / s
        tokens = float(per_second * self.tokens_per_sample) if self.tokens_per_sample else None
        tflops = self.model_flops * n / s / 10**12
        return Utilization(float(s), float(mfu), float(hfu), float(tflops), float(per_second), tokens)

    def start(self) -> None:
        """Mark a step's start (the clock; on CUDA, after the queued work finishes)."""
        _sync()
        self._started = self.clock()

    def stop(self) -> Utilization:
        """The utilization of the step since start()."""
        if self._started is None:
            raise InputError("Meter.stop() without Meter.start(): call start() when the step begins")
        _sync()
        seconds, self._started = self.clock() - self._started, None
        return self.update(seconds)


def _sync() -> None:
    """Wait for the GPU's queued kernels, so the clock reads the step's end, not its launch."""
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()


def _tokens(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int | None:
    """Tokens per sample: the second dimension of the first integer input (token ids, [batch, seq]); else None."""
    import torch

    for a in (*args, *kwargs.values()):
        if isinstance(a, torch.Tensor) and a.dim() == 2 and not a.is_floating_point():
            return int(a.shape[1])
    return None


LOGGED = ("mfu", "hfu", "tflops_per_gpu")  # the figures the integrations log


class Metering:
    """What a training framework's callback keeps: the example inputs and the Meter's options given to it, the meter
    made when training starts, and the last step's utilization."""

    def __init__(
        self,
        *example_inputs: Any,
        gpu: str | None = None,
        gpus: int | None = None,
        dtype: str = "bf16",
        causal: bool = False,
        kwargs: dict[str, Any] | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.inputs, self.kwargs = example_inputs, kwargs
        self.options: dict[str, Any] = {"gpu": gpu, "dtype": dtype, "causal": causal, "clock": clock}
        self.gpus = gpus  # data-parallel GPUs (None: the framework's world size)
        self.meter: Meter | None = None
        self.last: Utilization | None = None
