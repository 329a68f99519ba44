"""The reference a counter is judged against: the truth per term, the exact count, and the model's layers.

For a reference model the truth is its formula (and the exact count, equal to it, is checked so); for
any other model (a spec: timm, torchvision, diffusers, the user's code) it is the exact count itself,
per module path and kind. The exact count gives per-path FLOPs, bias elements and calls; the layers
give each module's weights, so a library's rule for a layer (weights x batch, say) can be evaluated exactly.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from math import prod

from flopcheck.counted import OpRecord
from flopcheck.exact import ExactCount, exact_count
from flopcheck.exact.counter import FIRST_OF, join
from flopcheck.formula import exact_matches, formula_breakdown
from flopcheck.op_names import Family, family
from flopcheck.specs.build import TRAIN_MODE_NOTE
from flopcheck.specs.layers import Layer, layers_of
from flopcheck.specs.measure import Measured
from flopcheck.types import Breakdown, Kind, Work
from reference_models import get_config, prepare

LINEAR_KINDS = (Kind.LINEAR, Kind.PER_SAMPLE, Kind.HEAD, Kind.MATMUL)


@dataclass(frozen=True)
class Reference:
    """One model, input and batch: formula, exact count, layers by path."""

    name: str
    batch: int
    formula: Breakdown  # the truth per term: the hand formula, or the exact count's terms
    exact: ExactCount
    layers: dict[str, Layer]  # exact path -> Layer (class name, weights, bias, heads)
    norm_path: dict[str, str]  # exact path -> path with ModuleList indices as '*'
    instances: Counter[str]  # normalised path -> how many modules share it
    tokens: int = 1  # T, for the readings that scale per-sample work by it
    label: str = "formula = exact count"  # what the truth is, in words
    aliases: dict[str, str] = field(default_factory=dict)  # a shared module's later paths -> its first
    train_mode: bool = False  # the model ran as built, in train mode: torch's eval-only fast paths were never taken

    @property
    def total(self) -> int:
        """The truth, FLOPs."""
        return self.formula.total

    def kinds(self, *kinds: Kind) -> int:
        """Formula FLOPs of these kinds."""
        by = self.formula.by_kind()
        return sum(by.get(k, 0) for k in kinds)

    @property
    def linear(self) -> int:
        """Every linear-layer matmul: per-token, per-sample, head."""
        return self.kinds(*LINEAR_KINDS)

    def kept(self, path: str) -> bool:
        """Whether the exact count kept this module's own FLOPs and bias (an exact path), not only its normalised
        path's sum over every instance."""
        return bool(self.exact.by_module) and path in self.norm_path

    def per_instance(self, path: str, suffixes: tuple[str, ...] = ("",)) -> int:
        """Exact FLOPs counted at one module (an exact path), suffixes for its parts ('qk', 'av'): its own, where the
        exact count kept each module's (CoaT's conv_list of 3, 5 and 7 wide kernels shares one normalised path),
        else its normalised path's share."""
        if self.kept(path):
            return sum(self.exact.by_module.get(join(path, s), 0) for s in suffixes)
        norm = self.norm_path[path]
        by = self.exact.by_path()
        total = sum(by.get(join(norm, s), 0) for s in suffixes)
        return total // self.instances[norm]

    def inside(self, roots: frozenset[str] | set[str], counted: bool = True) -> list[OpRecord]:
        """The exact count's records (counted, or uncounted) at or below these normalised paths."""
        recs = self.exact.counted if counted else self.exact.uncounted
        return [r for r in recs if any(r.path == n or r.path.startswith(n + ".") for n in roots)]

    def bias_elements(
        self, path: str | None = None, op: str | None = None, outside: frozenset[str] | set[str] = frozenset()
    ) -> int:
        """Bias adds the exact count recorded: at one module (exact path, per instance), for one op (outside the
        modules at these normalised paths), or all."""
        hidden = set(map(id, self.inside(outside, counted=False))) if outside else set()
        recs = [r for r in self.exact.uncounted if r.kind is Work.BIAS and id(r) not in hidden]
        if op is not None:
            return sum(r.elements for r in recs if r.op.split(".")[-1] == op)
        if path is None:
            return sum(r.elements for r in recs)
        if self.kept(path):
            return self.exact.bias_by_module.get(path, 0)
        norm = self.norm_path[path]
        return sum(r.elements for r in recs if r.path == norm) // self.instances[norm]

    def leading(self, path: str) -> int:
        """The first dimension of the output of the module at an exact path (the batch, or windows x batch), as
        the forward made it; the batch where the module returned no tensor."""
        return self.exact.leading.get(path, self.batch)

    def positions(self, path: str) -> int | None:
        """Output positions of the module at an exact path, N x prod(spatial) of an (N, C, *spatial) output (a
        convolution's); None where the forward recorded no output there."""
        shape = self.exact.outputs.get(path)
        return None if shape is None or len(shape) < 2 else prod(shape) // shape[1]

    def first_rows(self, path: str) -> int:
        """The first dimension of the module's output at an exact path as a library that sizes an output by its first
        tensor reads it (torchinfo): its tensor's, or the first tensor's of a tuple (a MoE router's logits); else
        the batch."""
        shape = self.exact.outputs.get(path + FIRST_OF)
        return shape[0] if shape else self.leading(path)

    def weights(self, path: str) -> tuple[int, int]:
        """(weight elements, bias elements) of the layer at an exact path."""
        layer = self.layers[path]
        return layer.weight, layer.bias

    def type_computes_attention(self, type_name: str) -> bool:
        """A module of this class computes QK^T or attn@V in its own forward (not only in its children)."""
        return type_name in self.attention_types

    @cached_property
    def attention_types(self) -> frozenset[str]:
        """The module classes some instance of which computes QK^T or attn@V in its own forward: by each module's own
        records where the exact count kept them (RecurrentGemma's recurrent and attention blocks share the normalised
        path layers.*.temporal_block), else by its normalised path's."""
        by = self.exact.by_path()
        return frozenset(
            layer.type_name
            for p, layer in self.layers.items()
            if any(
                join(p, s) in self.exact.by_module if self.kept(p) else join(self.norm_path[p], s) in by
                for s in ("qk", "av")
            )
        )

    def einsum_contracts(self) -> bool:
        """Some einsum of the forward multiplies two operands (else every einsum only permutes axes)."""
        return any(len(shapes) >= 2 for _, shapes, _ in self.exact.einsums) or any(
            family(r.op) is Family.EINSUM and r.flops for r in self.exact.counted
        )


def reference_of(measured: Measured, batch: int = 1) -> Reference:
    """The Reference a counter on a model without a formula is reconciled against: its exact count (a
    specs.measure.Measured), per path and kind, at the batch of its inputs."""
    return Reference(
        measured.text,
        batch,
        measured.breakdown(),
        measured.exact,
        measured.layers,
        measured.norm_path,
        Counter(measured.norm_path.values()),
        tokens=1,
        label="exact count",
        aliases=measured.aliases,
        train_mode=TRAIN_MODE_NOTE in measured.notes,
    )


@lru_cache(maxsize=64)
def reference_for(
    name: str,
    input_size: int | None = None,
    attn: str = "sdpa",
    batch: int = 1,
    overrides: tuple[tuple[str, object], ...] = (),
) -> Reference:
    """Build (once per key) the reference for a registered model (`overrides`: (field, value) pairs of a stand-in);
    the exact count must equal the formula."""
    config = get_config(name, input_size=input_size, attn=attn, **dict(overrides))
    model = prepare(config, batch=batch, device="meta")[0]  # its layers (building on meta is cheap: counting is not)
    exact = exact_count(name, config, batch=batch)  # the count an audit's formulas read of the same config, once
    formula = formula_breakdown(name, config, batch=batch)
    if not exact_matches(exact.by_path(), formula):
        raise AssertionError(f"{name}: the exact count disagrees with the formula; reconcile against neither")
    layers, norm = layers_of(model)
    return Reference(name, batch, formula, exact, layers, norm, Counter(norm.values()), tokens=config.tokens)
