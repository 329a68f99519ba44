"""The published formulas on a subject: its exact count (its training step too), its structure, each formula
explained against them (flopcheck.published); what reconcile, compare, the audit and the docs read."""

from __future__ import annotations

from typing import Any

from flopcheck.published import Exact
from flopcheck.published.reconcile import explain_all
from flopcheck.published.structure import Structure, of_dit
from flopcheck.types import ATTENTION_KINDS, Reconciliation, Scope
from flopcheck.verbs.count import run as count
from reference_models.configs import DiTConfig


def formula_results(subject: Any, asked: list[str], training: bool) -> list[Reconciliation]:
    """Each published formula asked for, explained against the subject's exact count (its training step too)."""
    done = count(subject, Scope(training=training))
    kinds = done.exact.by_kind()
    step, gaps = (done.training.total, done.training.differences()) if done.training is not None else (None, [])
    gaps.sort(key=lambda g: g[2] - 2 * g[1])
    exact = Exact(
        done.exact.total,
        sum(kinds.get(k, 0) for k in ATTENTION_KINDS),
        step,
        done.exact.by_path(),
        sum(2 * f - b for _, f, b, _ in gaps),
        ", ".join(f"{p} ({2 * f - b:+,}: {why})" for p, f, b, why in gaps[:2]),
    )
    if done.formula is not None and isinstance(done.config, DiTConfig):  # a text-conditioned one has no mlp_ratio
        structure = of_dit(done.config, done.batch, sum(t.flops for t in done.formula.terms) // done.exact_factor)
    elif done.measured is not None and done.measured.structure:
        structure = Structure.from_dict(done.measured.structure)
    else:
        structure = Structure(why=f"{subject.text} is neither a decoder-only LM nor a class-conditioned DiT")
    return explain_all(asked, structure, exact, subject.text, subject.attn)
