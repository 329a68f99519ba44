"""flopcheck's exact count as data: each op's calls summed by path, counted or not, and what the count read beside
them (einsums, attention's masks, routed experts). exact/counter.py makes one; no torch here, so a parent process
that never imports torch reads one."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from flopcheck.codec import OMIT_DEFAULT
from flopcheck.types import Kind, Term, Work, _sum_by

if TYPE_CHECKING:  # read here, never taken: exact/__init__ imports torch
    from flopcheck.exact.attention_work import AttentionCall
    from flopcheck.exact.routing import Routed


@dataclass(frozen=True)
class OpRecord:
    """Calls of one op at one path, summed: FLOPs counted, or elements written if uncounted."""

    path: str
    op: str
    kind: Kind | Work  # a Kind for counted ops, the Work category for uncounted ones
    flops: int
    elements: int
    calls: int


Shape = tuple[int, ...]
EinsumCall = tuple[str, tuple[Shape, ...], tuple[tuple[str, int], ...]]  # (equation, shapes, (kind, FLOPs) it ran as)


@dataclass(frozen=True)
class ExactCount:
    """The exact count of one forward: counted ops, uncounted ops, and the total in FLOPs."""

    model: str
    attn: str
    device: str
    counted: tuple[OpRecord, ...]
    uncounted: tuple[OpRecord, ...]
    leading: dict[str, int] = field(default_factory=dict, compare=False)  # exact path -> its output's first dim (rows)
    outputs: dict[str, Shape] = field(default_factory=dict, compare=False)  # exact path -> its output's shape
    # each torch.einsum call: (equation, operand shapes, ((kind, FLOPs), ...) of the ops it ran as)
    einsums: tuple[EinsumCall, ...] = field(default=(), compare=False)
    # exact path of a MultiheadAttention -> (query length, key length, called with one tensor as query, key and value)
    mha: dict[str, tuple[int, int, bool]] = field(default_factory=dict, compare=False)
    # exact path (with its suffix) -> FLOPs counted there: each module's own, where a normalised path groups several
    by_module: dict[str, int] = field(default_factory=dict, compare=False)
    bias_by_module: dict[str, int] = field(default_factory=dict, compare=False)  # exact path -> bias elements there
    # normalised path (with its 'qk'/'av' suffix) -> FLOPs counted inside F.scaled_dot_product_attention calls
    sdpa: dict[str, int] = field(default_factory=dict, compare=False)
    # likewise inside the calls the CPU runs on its math path (5-D, dropout): matmuls a dispatch counter counts, that a
    # trace of the composite aten::scaled_dot_product_attention (fvcore, torchprofile) still misses
    sdpa_math: dict[str, int] = field(default_factory=dict, compare=False)
    # each kind of F.scaled_dot_product_attention call, its pairs dense, needed under its mask, executed by flash
    # (exact.attention_work.AttentionCall); the total above counts them dense
    attention: tuple[AttentionCall, ...] = field(default=(), compare=False, metadata=OMIT_DEFAULT)
    # each routed-experts module seen on real tensors: the tokens each expert took (exact.routing.Routed)
    routing: tuple[Routed, ...] = field(default=(), compare=False, metadata=OMIT_DEFAULT)

    @property
    def total(self) -> int:
        """FLOPs of every counted op (a lower bound when the count is incomplete)."""
        return sum(r.flops for r in self.counted)

    @property
    def incomplete(self) -> tuple[str, ...]:
        """The ops that did multiply-adds this count has no formula for (or whose formula failed), by name."""
        return tuple(sorted({r.op for r in self.uncounted if r.kind is Work.NO_FORMULA}))

    @property
    def complete(self) -> bool:
        """Every op with multiply-adds was counted."""
        return not self.incomplete

    def __repr__(self) -> str:
        """One line: 'ExactCount(Linear: 192 FLOPs = 96 MACs, one forward; linear 192)'; every op: .counted."""
        kinds = ", ".join(f"{k.value} {f:,}" for k, f in sorted(self.by_kind().items(), key=lambda kf: -kf[1]))
        incomplete = f"; {self.incompleteness()}" if self.incomplete else ""
        return (
            f"ExactCount({self.model}: {self.total:,} FLOPs = {self.total / 2:,.10g} MACs, one forward; "
            f"{kinds or 'no multiply-adds'}{incomplete})"
        )

    def incompleteness(self) -> str:
        """One sentence naming what is missing, '' when complete."""
        if self.complete:
            return ""
        custom = [op for op in self.incomplete if "." in op and op.split(".")[0] != "aten" and " (" not in op]
        known = [op for op in self.incomplete if op not in custom]
        said = [f"the count has no formula for {', '.join(known)}, which did multiply-adds"] if known else []
        if custom:
            names = ", ".join(custom)
            said.append(
                f"{names} {'is a custom operator' if len(custom) == 1 else 'are custom operators'} flopcheck "
                f"cannot see inside, so any multiply-adds in it are not counted (give it a formula: "
                f"flopcheck.exact.ops.register_custom('{custom[0].replace('.', '::', 1)}') in a module named "
                f"in FLOPCHECK_PLUGINS)"
            )
        return f"INCOMPLETE: {'; '.join(said)}; the total is a lower bound"

    def by_kind(self) -> dict[Kind, int]:
        """FLOPs per kind of term."""
        return _sum_by(self.counted, lambda r: cast(Kind, r.kind))

    def by_path(self) -> dict[str, int]:
        """FLOPs per normalised path ('blocks.*.attn.qk')."""
        return _sum_by(self.counted, lambda r: r.path)

    def terms(self) -> tuple[Term, ...]:
        """The count as Terms, one per path and kind (a module's own forward may run a conv and a matmul), the ops
        that made each as the formula text."""
        flops = _sum_by(self.counted, lambda r: (r.path, r.kind))
        ops: dict[tuple[str, str], set[str]] = defaultdict(set)
        for r in self.counted:
            ops[(r.path, r.kind)].add(r.op)
        return tuple(Term(p, cast(Kind, k), f, "+".join(sorted(ops[(p, k)]))) for (p, k), f in flops.items())

    def uncounted_by_category(self) -> dict[Work, tuple[int, int]]:
        """category -> (calls, elements written) of the ops not counted."""
        calls = _sum_by(self.uncounted, lambda r: cast(Work, r.kind), lambda r: r.calls)
        elements = _sum_by(self.uncounted, lambda r: cast(Work, r.kind), lambda r: r.elements)
        return {k: (calls[k], elements[k]) for k in calls}
