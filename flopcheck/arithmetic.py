"""The inference arithmetic on the exact count: FLOPs per generation, attention's share, the
N = 6d crossover, arithmetic intensity against a GPU's ridge point, step time = FLOPs / (MFU x peak),
and what batching does. All FLOP figures are exact integers in FLOPs (2 per multiply-add).

The inference arithmetic's per-layer shortcut estimates every block as 24*T*d^2 + 4*T^2*d over the joint sequence
T = I + S; `per_layer_estimate` does the same for comparison, and `Difference` names what it leaves out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from flopcheck import checks
from flopcheck.formula import in_blocks, per_layer
from flopcheck.gpus import GPU
from flopcheck.render.estimate import EXACT, FORMULA, RENDERERS, TRAINING, to_dict, to_text
from flopcheck.types import ATTENTION_KINDS, Breakdown, Kind, Scope
from reference_models import family_of

if TYPE_CHECKING:  # read here, never taken: no torch
    from flopcheck.exact.training import TrainingCount
    from flopcheck.specs.measure import Measured

BYTES_PER_PARAM = 2  # bf16 weights
BATCHES = (1, 2, 4, 8)


def batched_mfu(batch: int, mfu: float) -> float:
    """The inference arithmetic's batching model: MFU(b) = min(0.6, MFU(1) + 0.08 * sqrt(b - 1))."""
    return min(0.6, mfu + 0.08 * math.sqrt(batch - 1))


@dataclass(frozen=True)
class BatchRow:
    batch: int
    mfu: float
    step_seconds: float  # one step of the whole batch
    throughput: float  # samples' steps per second
    throughput_x: float  # relative to batch 1
    latency_x: float  # a step's time relative to batch 1


@dataclass(frozen=True)
class Difference:
    """One part of exact minus the per-layer shortcut, with why."""

    part: str  # 'block linears', 'attention', 'outside the blocks'
    shortcut: int  # the per-layer shortcut's FLOPs of this part
    exact: int
    why: str

    @property
    def delta(self) -> int:
        return self.exact - self.shortcut


class _Timed(Protocol):
    """What an estimate's time is computed from (a mixin's view of the dataclass it is mixed into)."""

    @property
    def flops_per_step(self) -> int: ...

    @property
    def flops(self) -> int: ...

    @property
    def gpu(self) -> GPU: ...

    @property
    def mfu(self) -> float: ...


class _Counted(_Timed, Protocol):
    """What the inference arithmetic reads of one forward (Estimate's formula, ExactEstimate's exact count)."""

    @property
    def flops_per_forward(self) -> int: ...

    @property
    def scope(self) -> Scope: ...

    @property
    def params(self) -> int: ...

    @property
    def weight_bytes(self) -> int: ...

    @property
    def arithmetic_intensity(self) -> float: ...

    @property
    def attention_flops(self) -> int: ...

    def kinds(self) -> dict[Kind, int]: ...


class Shown:
    """An estimate as the command line shows it (text or JSON-ready data, flopcheck.render.estimate; exit 0), and
    its time: FLOPs / (MFU x peak), for one step (`flops_per_step`) and the whole (`flops`)."""

    exit_code = 0

    @property
    def step_seconds(self: _Timed) -> float:
        return self.flops_per_step / (self.mfu * self.gpu.peak)

    @property
    def seconds(self: _Timed) -> float:
        """One generation (or the whole training run): FLOPs / (MFU x peak)."""
        return self.flops / (self.mfu * self.gpu.peak)

    def to_text(self) -> str:
        return to_text(self)

    def to_data(self) -> dict[str, Any]:
        return to_dict(self)


class _Arithmetic(Shown):
    """The inference arithmetic on one forward's FLOPs (flops_per_forward, kinds()), parameters, scope, GPU and MFU."""

    @property
    def flops_per_step(self: _Counted) -> int:
        """A sampling step: the forward, twice under CFG (conditional and unconditional)."""
        return self.flops_per_forward * (2 if self.scope.cfg else 1)

    @property
    def flops(self: _Counted) -> int:
        """One generation: steps x step."""
        return self.flops_per_step * self.scope.steps

    @property
    def attention_flops(self: _Counted) -> int:
        kinds = self.kinds()
        return sum(kinds.get(k, 0) for k in ATTENTION_KINDS)

    @property
    def attention_share(self: _Counted) -> float:
        return self.attention_flops / self.flops_per_forward if self.flops_per_forward else 0.0

    @property
    def weight_bytes(self: _Counted) -> int:
        return self.params * BYTES_PER_PARAM

    @property
    def arithmetic_intensity(self: _Counted) -> float:
        """FLOPs of one forward per byte of bf16 weights read (the inference arithmetic's definition)."""
        return self.flops_per_forward / self.weight_bytes if self.weight_bytes else math.inf

    @property
    def bound(self: _Counted) -> str:
        return "compute" if self.arithmetic_intensity > self.gpu.ridge else "bandwidth"


@dataclass(frozen=True)
class Estimate(_Arithmetic):
    """Everything `flopcheck estimate` prints, from one exact count."""

    name: str
    config: Any
    batch: int
    scope: Scope
    gpu: GPU
    mfu: float
    breakdown: Breakdown  # the formula, one forward at `batch`, equal to the exact count
    exact_matches: bool
    params: int

    @property
    def flops_per_forward(self) -> int:
        return self.breakdown.total

    def kinds(self) -> dict[Kind, int]:
        return self.breakdown.by_kind()

    @property
    def attended_tokens(self) -> int:
        """The N of the crossover: tokens of the largest attention (Wan: the I video tokens)."""
        tokens: int = self.config.attended_tokens
        return tokens

    @property
    def crossover(self) -> int:
        """N = 6d: where 4*N^2*d equals 24*N*d^2."""
        crossover: int = 6 * self.config.hidden_size
        return crossover

    def batches(self) -> list[BatchRow]:
        """The inference arithmetic's batching table: step time, throughput and latency at batch 1, 2, 4, 8."""
        per_sample_step = self.flops_per_step / self.batch
        rows = []
        for b in BATCHES:
            mfu = batched_mfu(b, self.mfu)
            step = b * per_sample_step / (mfu * self.gpu.peak)
            rows.append((b, mfu, step, b / step))
        base_step, base_tp = rows[0][2], rows[0][3]
        return [BatchRow(b, m, s, tp, tp / base_tp, s / base_step) for b, m, s, tp in rows]

    def per_layer_estimate(self) -> tuple[int, int]:
        """The per-layer shortcut's L * 24*T*d^2 and L * 4*T^2*d, L = all blocks, T = I + S, at this batch."""
        c = self.config
        return per_layer(self.batch, c.depth + getattr(c, "single_depth", 0), c.tokens, c.hidden_size)

    def differences(self) -> list[Difference]:
        """Exact minus the per-layer shortcut, in three named parts that sum to the whole."""
        shortcut_linear, shortcut_attn = self.per_layer_estimate()
        blocks = [t for t in self.breakdown.terms if in_blocks(t.path)]
        linear = sum(t.flops for t in blocks if t.kind is Kind.LINEAR)
        attn = sum(t.flops for t in blocks if t.kind in ATTENTION_KINDS)
        outside = self.flops_per_forward - linear - attn

        why_linear, why_attn = family_of(self.config).why
        c = self.config
        why_linear = why_linear.format(h=c.mlp_hidden, ratio=c.mlp_hidden / c.hidden_size)
        left_out = dict.fromkeys(t.path.split(".")[0] for t in self.breakdown.terms if t not in blocks)
        return [
            Difference("block linears", shortcut_linear, linear, why_linear),
            Difference("attention", shortcut_attn, attn, why_attn),
            Difference(
                "outside the per-layer formula",
                0,
                outside,
                "embeddings, per-sample MLPs and head, and the blocks' per-sample adaLN: "
                + ", ".join(left_out)
                + ", and *_mod / adaLN / modulation layers in the blocks",
            ),
        ]

    @property
    def shortcut_flops(self) -> int:
        return sum(self.per_layer_estimate())

    def shortcut_seconds(self) -> float:
        """The per-layer shortcut's time for the same generation from its per-layer estimate."""
        return self.shortcut_flops * (2 if self.scope.cfg else 1) * self.scope.steps / (self.mfu * self.gpu.peak)


def check_mfu(mfu: float) -> None:
    """MFU is a fraction of the peak: (0, 1]; anything else is bad input (flopcheck.checks' rule, the CLI's too)."""
    checks.fraction("mfu", mfu)


@dataclass(frozen=True)
class ExactEstimate(_Arithmetic):
    """The same arithmetic for a model with no hand formula (a spec, a live module): its exact count, per forward."""

    measured: Measured
    scope: Scope
    gpu: GPU
    mfu: float

    @property
    def flops_per_forward(self) -> int:
        return self.measured.exact.total

    def kinds(self) -> dict[Kind, int]:
        return self.measured.exact.by_kind()

    @property
    def params(self) -> int:
        return self.measured.params


@dataclass(frozen=True)
class TrainingEstimate(Shown):
    """Training compute: optimizer steps x the exact step at its batch (forward + backward, counted on meta), and
    the time it takes at an MFU; the 3x rule beside it."""

    name: str
    inputs: str  # the input of one sample, in words
    batch: int
    steps: int
    step: TrainingCount  # one optimizer step at `batch`
    gpu: GPU
    mfu: float
    measured: Any = None  # (MFU, HFU, the rate in words) a measured throughput means (estimate --throughput)

    @property
    def flops_per_step(self) -> int:
        """One optimizer step in model FLOPs (forward + backward of the whole batch, exact, no recompute): what
        MFU is defined on, so what the time is computed from."""
        return self.step.model_flops

    @property
    def executed_per_step(self) -> int:
        """One optimizer step as the hardware runs it: + checkpointing's and the attention kernel's recompute."""
        return self.step.executed_flops

    @property
    def hfu(self) -> float:
        """Hardware FLOPs utilisation at that MFU: MFU x executed / model."""
        return self.mfu * self.executed_per_step / self.flops_per_step if self.flops_per_step else 0.0

    @property
    def flops(self) -> int:
        """The whole run: steps x step."""
        return self.flops_per_step * self.steps

    @property
    def rule_flops(self) -> int:
        """The same run by the rule, 3 x forward."""
        return self.step.rule_3x * self.steps


# each kind of estimate -> how it renders (flopcheck.render.estimate), by its type
RENDERERS.update({Estimate: FORMULA, ExactEstimate: EXACT, TrainingEstimate: TRAINING})
