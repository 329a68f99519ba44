"""The formulas the field publishes FLOP numbers with, one module per source (like flopcheck.counters), each
evaluated on a model's own structure and reconciled against the exact count cause by cause.

A formula is its source's arithmetic (`value`, in its own unit and scope: a training step or one forward of the
whole batch) and its conventions as named causes (`causes`: exact deltas, in FLOPs, against the exact count), each
read from the structure and, for attention, from the exact count's own QK^T and attn@V. The residual, the formula
minus the exact count minus every cause, is 0 when both the arithmetic and the conventions are what the source says.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypedDict

from flopcheck.published.structure import DIT as DIT  # re-exported: each formula module reads them here
from flopcheck.published.structure import LM as LM
from flopcheck.published.structure import Structure as Structure
from flopcheck.reconciler.causes import Cause
from flopcheck.types import Unit

Found = tuple[Cause, int, str]  # a cause, its exact delta in FLOPs, its evidence in words


@dataclass(frozen=True)
class Exact:
    """What a formula is reconciled against: the exact forward's total and its attention (QK^T + attn@V), the
    exact training step's total when counted, the forward's FLOPs per normalised path, and where the step's backward
    is not 2 x its forward: the sum of (2 x forward - backward) over those paths and the largest in words."""

    forward: int
    attention: int
    step: int | None = None
    by_path: dict[str, int] | None = None
    rule_gap: int = 0
    rule_paths: str = ""


@dataclass(frozen=True)
class Formula:
    """One published formula: its source, what it counts, its arithmetic and its conventions as causes."""

    name: str
    title: str
    source: str  # paper section or file at a commit
    training: bool  # a training-step formula (against the exact step); else one forward
    per: str  # how the source states it: 'per token', 'per sequence', 'per step', 'per layer per sample'
    conventions: str  # one line: attention, causal, GQA, MLP, MoE, head, embedding, norms
    kinds: tuple[str, ...]  # the structures it applies to (structure.LM, structure.DIT)
    value: Callable[[Structure], int]  # in `unit`, for the step of s.B sequences of s.T tokens
    causes: Callable[[Structure, Exact], list[Found]]
    unit: Unit = Unit.FLOP
    refuses: Callable[[Structure], str] = lambda s: ""  # why it does not apply to this model, in one line

    def does_not_apply(self, s: Structure) -> str:
        """'' when it applies; else one line saying why not."""
        if s.kind not in self.kinds:
            what = {LM: "a decoder-only language model", DIT: "a DiT"}
            wanted = " or ".join(what[k] for k in self.kinds)
            return f"{self.name} is a formula for {wanted}; {s.why or 'this model is not one'}"
        return self.refuses(s)


class Applies(TypedDict):
    """What a source's formulas share, given once as Formula(..., **shared): the structures they apply to and
    whether each counts a training step."""

    kinds: tuple[str, ...]
    training: bool


FORMULAS: dict[str, Formula] = {}


def register(f: Formula) -> Formula:
    """Add a formula; a name registers once."""
    if f.name in FORMULAS:
        raise ValueError(f"formula {f.name} is registered twice")
    FORMULAS[f.name] = f
    return f


def no_experts(name: str) -> Callable[[Structure], str]:
    """A refusal for a formula that has no term for routed experts."""
    return lambda s: (
        f"{name} has no term for routed experts; {s.E} experts, top-{s.k}: use a formula with them" * (s.moe)
    )


def no_mla(name: str) -> Callable[[Structure], str]:
    """A refusal for a formula that has no definition for multi-head latent attention."""
    return lambda s: (
        (
            f"{name} has no definition for multi-head latent attention (q lora {s.q_lora:,}, kv lora {s.kv_lora:,}): "
            "use megatron, maxtext or torchtitan"
        )
        * s.mla
    )


def refusing(*whys: Callable[[Structure], str]) -> Callable[[Structure], str]:
    """The first refusal that applies ('' when none does)."""
    return lambda s: next((w for w in (why(s) for why in whys) if w), "")


def per_norm(s: Structure) -> int:
    """The final norm's parameters (read from the model; else one of 2L + 1 equal norms: n_norm / (2L + 1))."""
    return s.n_norm_final or s.n_norm // (2 * s.L + 1)


def mlp_forward(s: Structure) -> int:
    """The MLPs' matmuls in one forward, FLOPs: dense layers 2 n m d F_dense; MoE layers 2 n m d (k F + F_shared)
    and the router 2 n d E."""
    n, d, m = s.n, s.d, s.m
    if not s.moe:
        return 2 * n * m * d * s.F * s.L
    dense = 2 * n * m * d * (s.F_dense or s.F) * s.L_dense
    return dense + s.L_moe * (2 * n * m * d * (s.k * s.F + s.F_shared) + 2 * n * d * s.E)


def _load() -> None:
    # lazy: each module imports this package's names (a cycle at import time); it registers its formulas
    from flopcheck.published import (  # noqa: F401 - each module registers its formulas
        chinchilla,
        hf,
        kaplan,
        levanter,
        maxtext,
        megatron,
        nanogpt,
        nemo,
        olmo,
        palm,
        sixn,
        torchtitan,
        verl,
        vision,
    )


_load()
