"""The estimate verb: the inference arithmetic of a subject on a GPU at an MFU (one generation), or of its exact
training step (steps optimizer steps).
"""

from __future__ import annotations

from flopcheck.arithmetic import GPU, Estimate, ExactEstimate, TrainingEstimate, check_mfu, get_gpu
from flopcheck.errors import InputError
from flopcheck.types import Scope


def run(
    subject,
    gpu: str = "H100",
    mfu: float = 0.45,
    steps: int = 1,
    cfg: bool = False,
    training: bool = False,
    frozen: tuple[str, ...] = (),
    checkpointed: tuple[str, ...] = (),
    attn_kernel: str = "",
    generate: tuple[int, int] | None = None,
) -> Estimate | ExactEstimate | TrainingEstimate:
    """The estimate of a subject (flopcheck.subject.Subject) on a GPU at an MFU: one generation (steps x CFG x the
    forward; an Estimate beside the per-layer shortcut where the model has a formula, else an ExactEstimate), or
    with training, steps optimizer steps of the exact training step (a TrainingEstimate); with generate (prompt,
    decode steps), a causal LM's decoding on its roofline too."""
    from flopcheck.verbs.count import with_kernel

    check_mfu(mfu)
    chosen = get_gpu(gpu)
    if not training:
        with_kernel(None, attn_kernel)  # a kernel is a training step's: refused without one
    if training:
        if cfg:
            raise InputError("a training step has no CFG: --cfg is for generation")
        from dataclasses import replace

        e = _training(subject, chosen, mfu, steps, tuple(frozen), tuple(checkpointed))
        return replace(e, step=with_kernel(e.step, attn_kernel))
    if generate and (training or subject.formula_family):
        raise InputError(f"--generate counts a causal LM's decoding: not {subject.text}'s training or a formula's")
    if not subject.formula_family:
        return ExactEstimate(subject.measured(generate=generate), Scope(steps=steps, cfg=cfg), chosen, mfu)
    from flopcheck.exact import count_prepared
    from flopcheck.formula import exact_matches, formula_breakdown
    from reference_models import prepare

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
    subject, gpu: GPU, mfu: float, steps: int, frozen: tuple[str, ...], checkpointed: tuple[str, ...]
) -> TrainingEstimate:
    """Training compute: its exact step at the subject's batch (on meta), `steps` times."""
    if subject.formula_family:
        from flopcheck.exact.training import training_step

        config = subject.config()
        step = training_step(subject.text, config, subject.batch, frozen, checkpointed)
        return TrainingEstimate(subject.text, config.describe_input(), subject.batch, steps, step, gpu, mfu)
    m = subject.measured(training=True, frozen=frozen, checkpointed=checkpointed)
    return TrainingEstimate(m.text, m.inputs, m.batch or subject.spec_batch, steps, m.training, gpu, mfu)
