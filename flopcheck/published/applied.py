"""The published formulas applied to one model: its exact count (its training step too) and its structure, each
formula explained against them (flopcheck.published.reconcile). What the verbs (formulas, reconcile, compare) and
the auditor (a claim's formula readings, a utilization's formula numerators) both read, below both.

A named model's structure, forward and training step come from the one measurement the caller has in hand
(`measured`, specs.measure.Measured) when it gives one: a utilization audit's training step is not measured twice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flopcheck.published import Exact
from flopcheck.published.reconcile import explain_all
from flopcheck.published.structure import Structure, of_dit
from flopcheck.types import ATTENTION_KINDS, Reconciliation

if TYPE_CHECKING:
    from flopcheck.counted import ExactCount
    from flopcheck.exact.training import TrainingCount
    from flopcheck.specs.measure import Measured
    from flopcheck.subject import Subject


def exact_of(forward: ExactCount, step: TrainingCount | None) -> Exact:
    """What a formula is reconciled against: the forward's total and attention, the step's total, and the paths
    whose backward is not 2 x forward, summed as sum(2f - b) and the two largest named."""
    kinds = forward.by_kind()
    total, gaps = (step.total, step.differences()) if step is not None else (None, [])
    gaps.sort(key=lambda g: g[2] - 2 * g[1])
    return Exact(
        forward.total,
        sum(kinds.get(k, 0) for k in ATTENTION_KINDS),
        total,
        forward.by_path(),
        sum(2 * f - b for _, f, b, _ in gaps),
        ", ".join(f"{p} ({2 * f - b:+,}: {why})" for p, f, b, why in gaps[:2]),
    )


def _reference(subject: Subject, training: bool) -> tuple[Exact, Structure]:
    """A reference model's exact forward (and step) at its batch on meta; a DiT's structure from its config and hand
    formula (one forward: the sum of its terms), any other family's: none a formula models."""
    from flopcheck.exact import exact_count  # lazy: torch
    from flopcheck.exact.training import training_step  # lazy: torch
    from flopcheck.formula import formula_breakdown
    from reference_models.configs import DiTConfig

    config, batch = subject.config(), subject.batch
    forward = exact_count(subject.text, config, batch=batch)
    step = training_step(subject.text, config, batch) if training else None
    if isinstance(config, DiTConfig):  # a text-conditioned one has no mlp_ratio
        hand = sum(t.flops for t in formula_breakdown(subject.text, config, batch=batch).terms)
        return exact_of(forward, step), of_dit(config, batch, hand)
    return exact_of(forward, step), _none(subject)


def _none(subject: Subject) -> Structure:
    return Structure(why=f"{subject.text} is neither a decoder-only LM nor a class-conditioned DiT")


def _named(m: Measured, subject: Subject) -> tuple[Exact, Structure]:
    """A named or live model's exact forward, step and structure, all from one measurement."""
    structure = Structure.from_dict(m.structure) if m.structure else _none(subject)
    return exact_of(m.exact, m.training), structure


def formula_results(
    subject: Subject, asked: list[str], training: bool, measured: Measured | None = None
) -> list[Reconciliation]:
    """Each published formula asked for, explained against the subject's exact count (its training step too, with
    `training`); a named model's from `measured` when given (it must hold the step when `training`)."""
    if subject.formula_family:
        exact, structure = _reference(subject, training)
    else:
        exact, structure = _named(measured or subject.measured(training=training), subject)
    return explain_all(asked, structure, exact, subject.text, subject.attn)
