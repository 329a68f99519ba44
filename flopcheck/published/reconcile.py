"""A published formula explained against the exact count: formula (as FLOPs) = reference + the causes' deltas +
residual, the reference the exact training step for a training formula and the exact forward otherwise."""

from __future__ import annotations

import difflib
from typing import Any

from flopcheck.errors import InputError
from flopcheck.published import FORMULAS, Exact, Formula
from flopcheck.published.common import head_dim_taken
from flopcheck.published.structure import Structure
from flopcheck.reconciler import causes as K
from flopcheck.types import Finding, Reconciled, Reconciliation, Unreconciled

MODE = "formula: its terms"


def names(asked: str | list[str] | tuple[str, ...]) -> list[str]:
    """The formulas asked for ('all': every one, in the registry's order); an unknown name is one line with the
    names there are."""
    asked = [n.strip().lower() for n in ([asked] if isinstance(asked, str) else asked)]  # 'palm', not its letters
    chosen = list(FORMULAS) if "all" in asked else list(dict.fromkeys(asked))
    unknown = [n for n in chosen if n not in FORMULAS]
    if unknown:
        close = difflib.get_close_matches(unknown[0], list(FORMULAS), n=1, cutoff=0.6)
        mean = f"did you mean {close[0]}? " if close else ""
        raise InputError(f"unknown formula {unknown[0]!r}: {mean}use all or one of {', '.join(FORMULAS)}")
    return chosen


def explain(f: Formula, s: Structure, e: Exact, model: str, attn: str = "") -> Reconciliation:
    """The formula's value on the structure, each of its conventions a cause with its exact delta, the residual."""
    reference = e.step if f.training else e.forward
    what = "the exact training step" if f.training else "the exact count"
    base: dict[str, Any] = dict(
        counter=f"formula {f.name}", unit=f.unit, model=model, input_size=None, attn=attn, mode=MODE, formula=f.name
    )
    why = f.does_not_apply(s)
    if not why and reference is None:
        why = f"{f.name} counts a training step: add --training (it is reconciled against the exact step)"
    if why or reference is None:
        return Unreconciled(
            **base, reported=None, counter_flops=None, reference_flops=reference or e.forward, findings=(),
            residual=None, error=why, reference=what,
        )  # fmt: skip
    reported = f.value(s)
    flops = reported * f.unit.flops_per_unit
    found = [*f.causes(s, e), *head_dim_taken(f.name, s, 3 if f.training else 1)]
    findings: list[Finding] = [cause.finding(delta, evidence) for cause, delta, evidence in found]
    if f.training and e.rule_gap:
        where = f"the exact backward is not 2 x forward at {e.rule_paths}"
        findings.append(K.BACKWARD_AS_2X.finding(e.rule_gap, where))
    residual = flops - reference - sum(x.delta for x in findings)
    if residual:
        findings.append(K.UNEXPLAINED_RESIDUAL.finding(0, f"residual {residual:+,} FLOPs"))
    if f.unit.flops_per_unit != 1:
        findings.append(K.in_macs(flops, reported, f.name))
    return Reconciled(
        **base, reported=float(reported), counter_flops=flops, reference_flops=reference, findings=tuple(findings),
        residual=residual, reference=what,
    )  # fmt: skip


def explain_all(asked: list[str], s: Structure, e: Exact, model: str, attn: str = "") -> list[Reconciliation]:
    """Each formula asked for, explained."""
    return [explain(FORMULAS[n], s, e, model, attn) for n in names(asked)]
