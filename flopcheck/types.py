"""The vocabulary: units, kinds of term, terms, scopes and breakdowns.

Every number inside flopcheck is an exact integer in FLOPs, where one multiply-add is 2 FLOPs.
MACs (one multiply-add = 1 MAC) and G/T suffixes exist only at the edge (see `flopcheck.fmt`).
Nothing here imports torch.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from decimal import Decimal
from enum import Enum
from typing import Any, TypeVar

from flopcheck.codec import OMIT_DEFAULT, decode
from flopcheck.errors import InputError
from reference_models.families import BLOCK_LISTS


class Unit(str, Enum):
    """The convention a number is in: FLOP (2 per multiply-add) or MAC (1 per multiply-add)."""

    FLOP = "FLOP"
    MAC = "MAC"

    @property
    def flops_per_unit(self) -> int:
        """FLOPs in one unit: FLOP -> 1, MAC -> 2."""
        return 2 if self is Unit.MAC else 1


class Kind(str, Enum):
    """A kind of term: the reconciler's words for where FLOPs come from."""

    LINEAR = "linear"  # per-token projections: qkv, proj, mlp
    ATTN_SCORE = "attn_score"  # QK^T
    ATTN_VALUE = "attn_value"  # softmax(QK^T) @ V
    CONV = "conv"  # patch embedding
    PER_SAMPLE = "per_sample"  # once per sample, not per token: adaLN, timestep MLP
    HEAD = "head"  # the final per-token projection back to patches
    MATMUL = "matmul"  # a matmul outside any layer that is not attention


ATTENTION_KINDS = (Kind.ATTN_SCORE, Kind.ATTN_VALUE)  # QK^T and attn@V


W = TypeVar("W", bound="Word")


class Word(str, Enum):
    """An enum whose members print as their value ('norm', not 'Work.NORM'), as Python 3.11's StrEnum."""

    __str__ = str.__str__

    def __format__(self, spec: str) -> str:
        """As its value: f'{Work.NORM:>6}' is '  norm' (str's own format of the text it is)."""
        return str.__format__(self, spec)

    def __repr__(self) -> str:
        """'close', not <Tier.CLOSE: 'close'>: a result's field reads in a REPL as it prints."""
        return repr(self.value)

    @classmethod
    def parse(cls: type[W], value: object, name: str, choices: str = "") -> W:
        """The member whose value is `value` (a member is itself), read once at the edge; else a one-line InputError
        naming the field and its choices ('one of a, b, c' unless `choices` words them)."""
        try:
            return cls(value)
        except ValueError:
            words = choices or f"one of {', '.join(m.value for m in cls)}"
            raise InputError(f"{name} must be {words}, got {value!r}") from None


class Work(Word):
    """What an op or a layer a counter reports computes: the kind of multiply-add work flopcheck counts,
    or a category it does not. One word for an op, whoever names it (a counter's item, a skip, a record)."""

    LINEAR = "linear"  # a layer's matmul (Linear, a weight times activations)
    MATMUL = "matmul"  # a matmul of two activations outside a layer: attention, or a free product
    CONV = "conv"
    ATTENTION = "attention"  # a fused attention kernel: QK^T and attn@V together
    NORM = "norm"
    SOFTMAX = "softmax"
    ELEMENTWISE = "elementwise"
    REDUCTION = "reduction"
    BIAS = "bias"
    VIEW = "view"
    MOVEMENT = "movement"
    CREATION = "creation"
    NO_FORMULA = "no-formula"
    OTHER = "other"

    @property
    def multiply_adds(self) -> bool:
        """Work flopcheck counts: matmuls, convolutions, attention."""
        return self in (Work.LINEAR, Work.MATMUL, Work.CONV, Work.ATTENTION)

    @property
    def free(self) -> bool:
        """Costs nothing by anyone's convention: views, copies, creations."""
        return self in (Work.VIEW, Work.MOVEMENT, Work.CREATION)


class Attention(Word):
    """What a number did with attention (QK^T and attn@V)."""

    COUNTED = "counted"
    MISSING = "missing"
    QK_ONLY = "qk-only"  # QK^T counted, attn@V not
    UNCLEAR = "unclear"  # the evidence does not say


class Tier(Word):
    """A verdict on a published figure, from its reading's category and its distance alone."""

    CONSISTENT = "consistent"  # a reading equals the claim to its printed digits (or a stated tolerance)
    CLOSE = "close"  # within 1% of a count, a rounding or a bookkeeping convention
    WRONG = "wrong"  # the convention is identified, the number is off by more than 1%
    UNEXPLAINED = "unexplained"  # no reading within 10%
    INCOMPLETE = "incomplete"  # the exact count lacks a formula for some op, or a due reading was not made: no verdict

    @property
    def passes(self) -> bool:
        """Consistent or close: exit 0."""
        return self in (Tier.CONSISTENT, Tier.CLOSE)


class Effect(Word):
    """What a cause does to a count, measured against the multiply-adds the model does."""

    UNIT = "unit"  # the same work in another unit (MACs: 1 per multiply-add)
    OMITS = "omits"  # multiply-adds the model does are left out (attention, a layer, the per-layer shortcut)
    ADDS = "adds"  # multiply-adds the model does not do are counted (per-sample layers per token, a layer twice)
    BOOKKEEPING = "bookkeeping"  # work that is not multiply-adds is counted (norms, elementwise ops, bias adds)
    SCOPE = "scope"  # another scope of the same work: a batch, one sample, CFG, steps, a training step, pixels
    CONVENTION = "convention"  # the same work under another convention of masked attention (its needed pairs)
    UNEXPLAINED = "unexplained"  # what no cause explains

    @property
    def departs(self) -> bool:
        """It changes the multiply-adds counted: the reading is not the model's work."""
        return self in (Effect.OMITS, Effect.ADDS, Effect.UNEXPLAINED)

    @classmethod
    def of_code(cls, code: str) -> Effect:
        """A cause's effect by its code's family (FC1xx unit, FC2xx omits, FC3xx bookkeeping, FC4xx adds, FC5xx
        scope, FC9xx unexplained); a cause that differs from its family's names its own (masked attention's
        conventions, convention)."""
        family = {"1": cls.UNIT, "2": cls.OMITS, "3": cls.BOOKKEEPING, "4": cls.ADDS, "5": cls.SCOPE}
        return family.get(code[2:3], cls.UNEXPLAINED)


class Category(Word):
    """What a reading of a claim is, against the model's multiply-adds: the tier of a claim is a function of its
    reading's category and its relative distance alone (flopcheck.auditor.tier_of)."""

    COUNT = "count"  # the model's multiply-adds, in some unit and scope (MACs, CFG, a batch, pixels, ...)
    BOOKKEEPING = "bookkeeping"  # the count plus work that is not multiply-adds (norms, elementwise, bias)
    DEPARTS = "departs"  # the count with multiply-adds left out or added (attention missing, a shortcut, ...)


class Space(Word):
    """Where a diffusion model runs: on the VAE's latent, or on pixels (3 channels, no VAE)."""

    LATENT = "latent"
    PIXEL = "pixel"


class Recompute(Word):
    """A training run's activation recompute, what its HFU counts: none, selective (attention's forward again in
    the backward), full (the whole forward again)."""

    NONE = "none"
    SELECTIVE = "selective"
    FULL = "full"


class ModelPart(Word):
    """What part of a model a published number covers: the whole model, or one share of it."""

    MODEL = "model"  # the whole model
    LINEAR = "linear"  # the blocks' linear layers only
    ATTENTION = "attention"  # attention only (QK^T and attn@V)
    EMBEDDINGS = "embeddings"  # a DiT's embedding layers only
    BLOCK = "block"  # a DiT's one block


@dataclass(frozen=True)
class BySpace:
    """A quantity of one forward on the VAE's latent and, for a model that also runs on pixels, on pixels."""

    latent: int
    pixel: int | None = None  # None: the model does not run on pixels

    def at(self, pixel: bool) -> int:
        """The quantity where a reading ran: on pixels (pixel=True) or on the latent."""
        if pixel and self.pixel is None:
            raise ValueError("this model has no pixel-space forward")
        return self.pixel if pixel and self.pixel is not None else self.latent

    def max(self) -> int:
        return max(self.latent, self.pixel or 0)


class EvidenceKind(Word):
    """What a reconciliation had to go on: a counter's per-op or per-module detail, or its total alone."""

    WHITE_BOX = "white box"
    BLACK_BOX = "black box"


class Mechanism(Word):
    """How a counter sees (or misses) work: at the aten op, by a module hook, or by a patched functional."""

    OP = "op"
    MODULE = "module"
    FUNCTIONAL = "functional"


@dataclass(frozen=True)
class Term:
    """One named term of a forward: `flops` exact, `formula` the algebra it came from."""

    path: str  # module path, ModuleList indices as '*': 'blocks.*.attn.qkv'
    kind: Kind
    flops: int
    formula: str  # e.g. 'L*2*N*T*d*3d'

    @property
    def macs(self) -> int:
        """Multiply-adds: flops / 2 (every counted term is a sum of multiply-adds)."""
        return self.flops // 2


@dataclass(frozen=True)
class Scope:
    """What one number covers: a forward, S sampling steps, CFG (batch doubled), training (x3)."""

    steps: int = 1
    cfg: bool = False
    training: bool = False

    def __post_init__(self) -> None:
        if self.steps < 1:
            raise InputError(f"steps must be >= 1, got {self.steps}")
        if self.training and (self.steps > 1 or self.cfg):
            raise InputError(
                "training counts one forward+backward per sample (x3); sampling steps and CFG "
                "apply to generation only: count either a training step or a generation"
            )

    @property
    def factor(self) -> int:
        """FLOPs of the scope / FLOPs of one forward: S * (2 if CFG) * (3 if training)."""
        return self.steps * (2 if self.cfg else 1) * (3 if self.training else 1)

    @property
    def expr(self) -> str:
        """The factor as algebra, '' for one forward: 'S*2', '3'."""
        parts = (["S"] if self.steps > 1 else []) + (["2"] if self.cfg else []) + (["3"] if self.training else [])
        return "*".join(parts)

    def describe(self) -> str:
        """Human words: 'forward', '50 steps x CFG (batch x2)', 'training (fwd+bwd = 3 x fwd)'."""
        if self.training:
            return "training (fwd+bwd = 3 x fwd)"
        return " x ".join(scope_words(steps=self.steps, cfg="CFG (batch x2)" if self.cfg else "")) or "forward"


def scope_words(batch: int = 1, cfg: str | bool = False, steps: int = 1, training: str | bool = False) -> list[str]:
    """The parts of a scope in words, in one order: 'batch 4', 'CFG', '50 steps', 'training'; a str names a
    flag its own way ('CFG x2')."""

    def word(flag: str | bool, default: str) -> list[str]:
        return [flag if isinstance(flag, str) else default] if flag else []

    return (
        ([f"batch {batch}"] if batch > 1 else [])
        + word(cfg, "CFG")
        + ([f"{steps} steps"] if steps > 1 else [])
        + word(training, "training")
    )


@dataclass(frozen=True)
class Breakdown:
    """The Terms of one scope of one model, each an exact integer of FLOPs."""

    model: str
    terms: tuple[Term, ...]
    symbols: tuple[tuple[str, int], ...] = ()  # the letters the formulas use, with their values
    scope: Scope = field(default_factory=Scope)
    blocks: tuple[str, ...] = ()  # a model with no formula: its block lists' paths, found from its module tree
    # an exact count's F.scaled_dot_product_attention calls (exact.attention_work.AttentionCall), its terms counting
    # them dense: what masked attention's conventions are read from (reconciler/masked.py)
    attention: tuple[Any, ...] = field(default=(), compare=False, metadata=OMIT_DEFAULT)

    def in_blocks(self, path: str) -> bool:
        """A term of the repeated blocks: inside one of this model's block lists, or (a reference model's formula)
        one of the families' lists."""
        if self.blocks:
            return any(path.startswith(b + ".") for b in self.blocks)

        return path.startswith(BLOCK_LISTS)

    @property
    def total(self) -> int:
        """Sum of all terms, FLOPs."""
        return sum(t.flops for t in self.terms)

    @property
    def total_macs(self) -> int:
        """Sum of all terms, MACs."""
        return self.total // 2

    def by_kind(self) -> dict[Kind, int]:
        """FLOPs summed per kind of term."""
        return _sum_by(self.terms, lambda t: t.kind)

    def by_path(self) -> dict[str, int]:
        """FLOPs summed per (normalised) module path."""
        return _sum_by(self.terms, lambda t: t.path)

    def scoped(self, scope: Scope) -> Breakdown:
        """This forward scaled to `scope`: every term times scope.factor, the factor in its formula."""
        if self.scope != Scope():
            raise ValueError("scoped() takes a one-forward breakdown")
        if scope.factor == 1:
            return self
        prefix = scope.expr + "*"
        terms = tuple(replace(t, flops=t.flops * scope.factor, formula=f"{prefix}({t.formula})") for t in self.terms)
        symbols = self.symbols + ((("S", scope.steps),) if scope.steps > 1 else ())
        attention = tuple(replace(c, calls=c.calls * scope.factor) for c in self.attention)
        return replace(self, terms=terms, symbols=symbols, scope=scope, attention=attention)


def _sum_by(
    items: Iterable[Any], key: Callable[[Any], Any], value: Callable[[Any], int] = lambda i: i.flops
) -> dict[Any, int]:
    """{key(item): sum of value(item) (its FLOPs by default)}, in first-seen order."""
    out: dict[Any, int] = defaultdict(int)
    for item in items:
        out[key(item)] += value(item)
    return dict(out)


# ----- What a counter says -----


@dataclass(frozen=True)
class Item:
    """One line of a counter's own detail: an op or a module, as reported and in FLOPs."""

    name: str  # 'aten::addmm', fvcore's 'linear', or a module path 'blocks.0.attn.qkv'
    reported: float  # in the counter's unit
    flops: int  # reported x the unit's FLOPs
    calls: int = 0  # calls or instances, where the library says
    where: Mechanism = Mechanism.OP  # an op, a module or a patched functional
    type: str = ""  # the module's class, for module items
    in_total: bool = True  # False: the library computed it but left it out of its total


@dataclass(frozen=True)
class Skip:
    """Something a counter did not count, with why: 'aten::scaled_dot_product_attention' x 12.

    Decisions read the typed fields, never `reason` (words for people)."""

    name: str  # an op ('aten::bmm'), or a module type ('Attention') when `where` is MODULE
    calls: int
    reason: str
    where: Mechanism = Mechanism.OP  # what skipped it: an op no formula covers, a module no hook covers, ...
    work: Work = Work.OTHER  # what the skipped thing computes
    own_forward: bool = False  # a module whose own forward()'s ops count 0 (its children may still count)
    # FLOPs the counter did count at a module its trace reached on some of its calls only (FC231's proof)
    counted: int = field(default=0, metadata=OMIT_DEFAULT)


@dataclass(frozen=True)
class Counting:
    """What was counted: one counter (its library's unit) on one model, input and attention path."""

    counter: str  # registry name: 'fvcore_jit'
    library: str  # distribution: 'fvcore'
    version: str
    unit: Unit  # the library's own unit, as its docs define it
    model: str
    input_size: int | None  # a reference model's resolution; None: a spec or a module of yours, sized by its inputs
    attn: str
    batch: int = 1
    device: str = "cpu"


@dataclass(frozen=True)
class Count(Counting):
    """One counter on one model and input that came back: its number as reported, in FLOPs, its detail and skips."""

    reported: float = field(kw_only=True)  # exactly as the library returned it
    flops: int = field(kw_only=True)  # reported in FLOPs
    detail: tuple[Item, ...] = ()
    skipped: tuple[Skip, ...] = ()
    time_s: float | None = None  # the counting call alone
    peak_rss_mb: float | None = None  # the whole counting process
    error: None = None  # none: a count that came back (kept so its JSON reads as a Failed one does, "error": null)
    samples_divided: int = field(default=1, metadata=OMIT_DEFAULT)  # ptflops divides by its samples; 1: not in JSON

    def __repr__(self) -> str:
        """One line, as compare's row: 'Count(fvcore_jit on Linear: 96 MACs = 192 FLOPs; skipped: nothing)'."""
        skipped = ", ".join(f"{s.name} x{s.calls}" if s.calls > 1 else s.name for s in self.skipped[:3])
        more = f" (+{len(self.skipped) - 3} more)" if len(self.skipped) > 3 else ""
        return (
            f"Count({self.counter} on {self.model}: {_number(self.reported)} {self.unit.value}s = {self.flops:,} "
            f"FLOPs; skipped: {skipped + more or 'nothing'})"
        )


@dataclass(frozen=True)
class Failed(Counting):
    """One counter on one model and input that gave no number: its one-line error (a crash, a timeout,
    'unavailable: pip install ...')."""

    # a failed count's JSON holds the fields a Count's does, empty: the cache and --json read as before
    reported: None = None
    flops: None = None
    detail: tuple[()] = ()
    skipped: tuple[()] = ()
    time_s: float | None = None
    peak_rss_mb: float | None = None  # the whole counting process
    error: str = field(kw_only=True)

    def __repr__(self) -> str:
        """One line: 'Failed(thop_hooks on Linear: boom)'."""
        return f"Failed({self.counter} on {self.model}: {self.error})"


Outcome = Count | Failed  # what one counter on one model and input gives: its Count, or why it Failed


def outcome_of(data: dict[str, Any]) -> Outcome:
    """A Count, or a Failed where the JSON (codec.encode's) holds an error."""
    if data.get("error") is not None:
        return decode(Failed, data)
    return decode(Count, data)


# ----- What the reconciler says -----


@dataclass(frozen=True)
class Finding:
    """A named cause and its exact signed effect on the counter's number, in FLOPs."""

    code: str  # the cause's code (see flopcheck.reconciler.causes)
    title: str  # 'fused-attention-uncounted'
    delta: int  # reported = reference + sum(deltas) + residual (FC101, the unit, is a delta too)
    evidence: str = ""


@dataclass(frozen=True)
class Reconciliation:
    """A counter's number explained against the reference, cause by cause, down to a residual: a Reconciled one (its
    number and residual came), or an Unreconciled one (its one-line error: no number, or none read)."""

    counter: str
    unit: Unit
    model: str
    input_size: int
    attn: str
    reported: float | None
    counter_flops: int | None  # the reported number in FLOPs
    reference_flops: int  # the formula (= the exact count)
    findings: tuple[Finding, ...]
    residual: int | None  # counter_flops - reference - sum(FLOP-cause deltas); None if no number came
    mode: str = "white box"  # 'white box' (per-op detail) or 'black box: the reading' (a total only)
    error: str | None = None
    reference: str = "formula = exact count"  # what the reference is: a hand formula, or the exact count alone
    incomplete: str = ""  # the exact count's INCOMPLETE sentence when it lacks a formula: a lower bound, no proof
    formula: str | None = None  # a published formula's reconciliation: its name in flopcheck.published.FORMULAS
    # the counter's number is 0 of a model that does work (the reconciler found its counted-nothing cause): no
    # closure, whatever the residual
    counted_nothing: bool = False

    @property
    def closed(self) -> bool:
        """Every FLOP explained, against a reference that counted every op, by a counter that counted something."""
        return self.residual == 0 and not self.incomplete and not self.counted_nothing

    @property
    def state(self) -> str:
        """The verdict word: 'counted nothing', 'closed', 'INCOMPLETE reference' (a lower bound met exactly) or
        'UNEXPLAINED'."""
        if self.counted_nothing:
            return "counted nothing"
        if self.closed:
            return "closed"
        return "INCOMPLETE reference" if self.incomplete and not self.residual else "UNEXPLAINED"

    @property
    def evidence(self) -> EvidenceKind:
        """White box (the counter's detail read exactly) or black box (its total alone)."""
        return EvidenceKind.WHITE_BOX if self.mode == EvidenceKind.WHITE_BOX else EvidenceKind.BLACK_BOX

    def __repr__(self) -> str:
        """One line: 'Reconciliation(fvcore_jit on Linear: 96 MACs = 192 FLOPs against the exact count 192 FLOPs,
        causes FC101, residual 0: closed)'; print() it for the proof, cause by cause."""
        if self.error or self.counter_flops is None:
            return f"Reconciliation({self.counter} on {self.model}: {self.error or 'no number'})"
        codes = " ".join(f.code for f in self.findings) or "none"
        return (
            f"Reconciliation({self.counter} on {self.model}: {_number(self.reported)} {self.unit.value}s = "
            f"{self.counter_flops:,} FLOPs against the {self.reference} {self.reference_flops:,} FLOPs, causes "
            f"{codes}, residual {self.residual:,}: {self.state})"
        )

    def __str__(self) -> str:
        """The proof, as `flopcheck reconcile` prints it (the renderer flopcheck.render.reconcile registered in
        PRESENTERS; one line until it is imported: these types import no rendering)."""
        show = next((PRESENTERS[t] for t in type(self).__mro__ if t in PRESENTERS), None)
        return show(self) if show else repr(self)


@dataclass(frozen=True, repr=False)  # repr=False: Reconciliation's one line, not the fields
class Reconciled(Reconciliation):
    """A reconciliation whose counter gave a number: it in FLOPs and the residual no cause explains."""

    reported: float
    counter_flops: int
    residual: int
    error: None = None


@dataclass(frozen=True, repr=False)
class Unreconciled(Reconciliation):
    """A reconciliation that gave no residual: the counter failed, its count could not be read, or a formula does
    not apply; its one-line error says which."""

    error: str = field(kw_only=True)


# type -> how a result prints in full, registered by its renderer when that module is imported (the verbs import
# theirs): a result's str() reads as its verb prints it, and these types import no rendering
PRESENTERS: dict[type, Callable[[Any], str]] = {}

# the verdict tiers' bounds: within 1% of a reading a claim is close (rounding of the inputs or a bookkeeping
# convention); beyond 10% of every reading it is unexplained
CLOSE_LIMIT = Decimal("0.01")
WRONG_LIMIT = Decimal("0.10")


def _number(x: float | None) -> str:
    """A counter's number as it prints: an integral one with commas (4,250,674,560), else as Python writes it."""
    return "-" if x is None else f"{int(x):,}" if float(x).is_integer() else repr(x)
