"""The estimate verb: the inference arithmetic of a subject on a GPU at an MFU (one generation), or of its exact
training step (steps optimizer steps).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from flopcheck.arithmetic import Estimate, ExactEstimate, TrainingEstimate, check_mfu
from flopcheck.auditor.rates import RateKind, needs, parse_rate
from flopcheck.auditor.utilization import fits_subject, implied
from flopcheck.errors import InputError
from flopcheck.exact import count_prepared
from flopcheck.exact.training import training_step
from flopcheck.formula import exact_matches, formula_breakdown
from flopcheck.gpus import GPU, get_gpu
from flopcheck.types import Scope
from flopcheck.verbs.count import with_kernel
from reference_models import prepare

if TYPE_CHECKING:
    from flopcheck.subject import Subject


def run(
    subject: Subject,
    gpu: str = "H100",
    mfu: float = 0.45,
    steps: int = 1,
    cfg: bool = False,
    training: bool = False,
    frozen: tuple[str, ...] = (),
    checkpointed: tuple[str, ...] = (),
    attn_kernel: str = "",
    throughput: str | None = None,
    gpus: int | None = None,
    stated_batch: int | None = None,
    generate: tuple[int, int] | None = None,
) -> Estimate | ExactEstimate | TrainingEstimate:
    """The estimate of a subject (flopcheck.subject.Subject) on a GPU at an MFU: one generation (steps x CFG x the
    forward; an Estimate beside the per-layer shortcut where the model has a formula, else an ExactEstimate), or
    with training, steps optimizer steps of the exact training step (a TrainingEstimate); with a measured
    `throughput` on `gpus` GPUs, the MFU and HFU it means beside it (`stated_batch`: the batch the user gave); with
    generate (prompt, decode steps), a causal LM's decoding on its roofline too."""
    check_mfu(mfu)
    chosen = get_gpu(gpu)
    if not training:
        with_kernel(None, attn_kernel)  # a kernel is a training step's: refused without one
    if training:
        if cfg:
            raise InputError("a training step has no CFG: --cfg is for generation")
        e = _training(subject, chosen, mfu, steps, tuple(frozen), tuple(checkpointed))
        step = with_kernel(e.step, attn_kernel)
        assert step is not None  # a step given: a step back
        e = replace(e, step=step)
        return replace(e, measured=_measured(subject, e, throughput, gpus, stated_batch)) if throughput else e
    if throughput or gpus:
        raise InputError("--throughput and --gpus read a training run's throughput: add --training")
    if generate and subject.formula_family:
        raise InputError(f"--generate counts a causal LM's decoding: not {subject.text}'s training or a formula's")
    if not subject.formula_family:
        return ExactEstimate(subject.measured(generate=generate), Scope(steps=steps, cfg=cfg), chosen, mfu)

    config, batch = subject.config(), subject.batch
    formula = formula_breakdown(subject.text, config, batch=batch)
    prepared = prepare(config, batch=batch)  # one model on meta: counted, and its parameters summed
    exact = count_prepared(subject.text, config, prepared)
    params = sum(p.numel() for p in prepared[0].parameters())
    return Estimate(
        subject.text,
        config,
        batch,
        Scope(steps=steps, cfg=cfg),
        chosen,
        mfu,
        formula,
        exact_matches(exact.by_path(), formula),
        params,
    )


def _training(
    subject: Subject, gpu: GPU, mfu: float, steps: int, frozen: tuple[str, ...], checkpointed: tuple[str, ...]
) -> TrainingEstimate:
    """Training compute: its exact step at the subject's batch (on meta), `steps` times."""
    if subject.formula_family:
        config = subject.config()
        step = training_step(subject.text, config, subject.batch, frozen, checkpointed)
        return TrainingEstimate(subject.text, config.describe_input(), subject.batch, steps, step, gpu, mfu)
    m = subject.measured(training=True, frozen=frozen, checkpointed=checkpointed)
    trained: Any = m.training  # its exact.training.TrainingCount (specs.measure declares it an object)
    return TrainingEstimate(m.text, m.inputs, m.batch or subject.spec_batch, steps, trained, gpu, mfu)


def _measured(
    subject: Subject, e: TrainingEstimate, throughput: str, gpus: int | None, stated_batch: int | None
) -> tuple[Any, Any, str]:
    """The MFU and HFU a measured throughput means: what the run needs stated is one line naming it."""
    rate = parse_rate(throughput)
    if rate.kind is not RateKind.THROUGHPUT:
        raise InputError(f"--throughput {throughput!r}: write a throughput, like '3.1 it/s' or '1,350 img/s'")
    fits_subject(subject, rate)
    missing = needs(rate, {"gpu": e.gpu.name, "gpus": gpus or 1, "batch": stated_batch, "text_tokens": None})
    if missing:
        raise InputError(missing)
    return implied(subject, throughput, e.batch, e.gpu, gpus or 1, e.step)
