"""What flopcheck knows about a spec's model, measured once in a child process: the exact count of one forward
on meta, every layer's weights, the repeated blocks, the parameters and the input used.

`measure(spec)` runs in the child (child.py) and returns JSON; `Measured.from_dict` turns it back into
an ExactCount, a Breakdown and a Reference in the parent, which never imports the user's code.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from flopcheck.children import one_line
from flopcheck.counted import ExactCount, OpRecord
from flopcheck.errors import InputError
from flopcheck.published.structure import of_call
from flopcheck.specs import ModelSpec, SpecError
from flopcheck.specs.blocks import BlockList, block_lists
from flopcheck.specs.decoding import capacity_hint, generation_of, routed
from flopcheck.specs.fallbacks import _data_dependent, _fits_in_memory, _reads_a_value, _real_values
from flopcheck.specs.layers import Layer, _layer, layers_of
from flopcheck.types import Breakdown, Kind, Work

if TYPE_CHECKING:
    from torch import nn

    from flopcheck.exact.generation import Generation
    from flopcheck.exact.training import TrainingCount
    from flopcheck.specs.built import Built

# torch-free at import: the parent (specs.child, the reconciler, the counters' pool) reads Measured, never torch
Paths = tuple[str, ...]  # module path patterns ('blocks.*')


def samples(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int | None:
    """The batch of a forward's inputs: the first dimension of its first tensor input (None if it has none)."""
    import torch  # lazy: torch (see the note at the top)

    first = next((a for a in (*args, *kwargs.values()) if isinstance(a, torch.Tensor) and a.dim() >= 1), None)
    return int(first.shape[0]) if first is not None else None


def _rows(count: ExactCount) -> tuple[list[list[Any]], list[list[Any]]]:
    """An ExactCount's counted and uncounted records as JSON rows."""

    def rows(records: Iterable[OpRecord]) -> list[list[Any]]:
        return [[r.path, r.op, r.kind.value, r.flops, r.elements, r.calls] for r in records]

    return rows(count.counted), rows(count.uncounted)


def measure(
    spec_dict: dict[str, Any],
    training: bool = False,
    frozen: tuple[str, ...] = (),
    checkpointed: tuple[str, ...] = (),
    optimizer: str = "",
    real: bool = True,
    device: str = "meta",
) -> dict[str, Any]:
    """Build the spec on meta and count one forward (with training: the exact training step, its forward and
    backward): the JSON the parent reads (Measured.from_dict). A forward that reads a value (`.item()`, which meta
    tensors have none of) is counted again on real CPU tensors, weights zero, and says so."""
    from flopcheck.specs.build import build  # lazy: torch (see the note at the top)

    spec = ModelSpec.from_dict(spec_dict)
    if device != "meta":
        return _on_device(spec, device, training, frozen, checkpointed, optimizer)
    built = build(spec, "meta")
    try:
        m, step = _count_built(spec, built, "meta", training, frozen, checkpointed, optimizer)
    except SpecError:
        raise
    except Exception as err:  # noqa: BLE001 - the user's forward on these inputs: one line
        if _data_dependent(err) or _reads_a_value(err):
            valued = _with_values(spec, training, frozen, checkpointed, optimizer, one_line(err))
            if valued is not None:
                return valued
        if _data_dependent(err) and not built.work_fixed:
            why = one_line(err)
            raise SpecError(
                f"model {spec.text!r} has a forward whose shapes depend on its data "
                f"({why if len(why) <= 80 else why[:80] + '...'}): how many boxes or elements it keeps "
                f"depends on the values, so its FLOPs do too and no count on shapes gives them; count a "
                f"part with fixed shapes (a factory returning its backbone){capacity_hint(built.model)}"
            ) from None
        if not (_reads_a_value(err) or _data_dependent(err)):
            raise SpecError(
                f"model {spec.text!r} failed on its inputs ({built.describe_inputs()}) on the meta "
                f"device: {one_line(err)}; give its inputs (--input-shape or --inputs module:fn)"
            ) from None
        if not real:
            raise SpecError(f"model {spec.text!r} reads a value on meta: {one_line(err)}") from None
        _fits_in_memory(spec, built.model, one_line(err))
        built = build(spec, "cpu")
        inputs = _real_values(built)
        try:
            m, step = _count_built(spec, built, "cpu", training, frozen, checkpointed, optimizer)
        except SpecError:
            raise
        except Exception as again:  # noqa: BLE001 - both failed: one line saying why
            raise SpecError(
                f"model {spec.text!r} reads a value, which meta tensors have none of "
                f"({one_line(err)}), and on real CPU tensors it failed too: {one_line(again)}"
            ) from None
        built.notes.append(
            f"its forward reads a value ({one_line(err)[:100]}), which meta tensors have none of: "
            f"counted on real CPU tensors (weights zero; {inputs})"
            + (f"; its count does not depend on them: {built.work_fixed}" if built.work_fixed else "")
        )
    routed(built, m.exact)
    return _json(spec, built, m, step)


def _json(spec: ModelSpec, built: Built, m: Measured, step: TrainingCount | None) -> dict[str, Any]:
    """The answer's JSON: the measurement with what its build knows (its notes, its input's pixels) and its step."""
    return {
        **replace(m, notes=tuple(built.notes), training=step, resolution=built.resolution).to_dict(),
        "spec": spec.to_dict(),
    }


def _pair(x: list[int] | None) -> tuple[int, int] | None:
    """A JSON [W, H] as a pair (None stays None)."""
    return (int(x[0]), int(x[1])) if x else None


def _on_device(
    spec: ModelSpec, device: str, training: bool, frozen: Paths, checkpointed: Paths, optimizer: str
) -> dict[str, Any]:
    """The spec built and counted on real tensors on `device` (--device cpu): its inputs' values as its source made
    them, so masks, sequence offsets and routers are read."""
    from flopcheck.specs.build import build  # lazy: torch (see the note at the top)

    built = build(spec, device)
    m, step = _count_built(spec, built, device, training, frozen, checkpointed, optimizer)
    said = (
        f"counted on real {device} tensors (--device {device}; weights zero, inputs as their source made them): masks, "
        f"sequence offsets and routers' choices are read from their values"
    )
    return _answer(spec, built, m, step, said)


def _with_values(
    spec: ModelSpec, training: bool, frozen: tuple[str, ...], checkpointed: tuple[str, ...], optimizer: str, why: str
) -> dict[str, Any] | None:
    """The spec built and counted again on meta with the values of its small known tensors beside it (masks of ones,
    ids, lengths: exact.values), for a forward that reads them; None when it still cannot run."""
    from flopcheck.exact.values import Values  # lazy: torch (see the note at the top)
    from flopcheck.specs.build import build

    try:
        with Values():
            built = build(spec, "meta")
            m, step = _count_built(spec, built, "meta", training, frozen, checkpointed, optimizer)
    except Exception:  # noqa: BLE001 - the values did not suffice: the caller's fallbacks follow
        return None
    said = (
        f"its forward reads values ({why[:100]}): counted on meta with the values of its small tensors of known "
        f"values beside them (masks, ids, lengths, positions)"
    )
    return _answer(spec, built, m, step, said)


def _answer(spec: ModelSpec, built: Built, m: Measured, step: TrainingCount | None, said: str) -> dict[str, Any]:
    """measure()'s JSON of a count made another way than plain meta: its note said, its routers' tokens read."""
    built.notes.append(said)
    routed(built, m.exact)
    return _json(spec, built, m, step)


def _count_built(
    spec: ModelSpec, built: Built, device: str, training: bool, frozen: Paths, checkpointed: Paths, optimizer: str
) -> tuple[Measured, TrainingCount | None]:
    """(Measured, the training step or None) of a built spec on `device`; a step that cannot be counted (nothing
    trains, a pattern that matches nothing) is a SpecError, not the inputs' fault."""
    from flopcheck.exact.training import count_training_step, freeze  # lazy: torch (see the note at the top)
    from flopcheck.specs.build import TRAIN_MODE_NOTE

    if training:  # a training step runs in train mode whatever the factory's mode: its forward's note is not news
        built.notes[:] = [n for n in built.notes if n != TRAIN_MODE_NOTE]
    step = None
    try:
        if frozen:
            freeze(built.model, frozen)
        if training:
            step = count_training_step(
                built.model,
                built.args,
                kwargs=built.kwargs,
                frozen_paths=frozen,
                checkpointed=checkpointed,
                optimizer=optimizer,
                model=spec.text,
                device=device,
            )
        m = measure_local(built.model, built.args, built.kwargs, spec.text)
    except InputError as err:
        raise SpecError(f"{spec.text}: {err}") from None
    return m, step


def measure_local(
    model: nn.Module, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None, name: str = ""
) -> Measured:
    """A model in this process (the caller's own object: its code already runs here) measured as a spec is:
    the exact count of model(*args, **kwargs), its layers and its blocks."""
    import torch  # lazy: torch (see the note at the top)

    from flopcheck.exact import count_forward, flop_kinds
    from flopcheck.render.routing import routing_notes
    from flopcheck.specs.built import Built

    text, kwargs = name or type(model).__name__, kwargs or {}
    batch = samples(tuple(args), kwargs)

    first = next((t for t in (*model.parameters(), *args, *kwargs.values()) if isinstance(t, torch.Tensor)), None)
    count = count_forward(
        model,
        tuple(args),
        kind_map=flop_kinds(model),
        kwargs=kwargs,
        batch=batch,
        model=text,
        device=first.device.type if first is not None else "cpu",
    )
    layers, norm = layers_of(model)
    return Measured(
        text,
        Built(model, tuple(args), kwargs).describe_inputs(),
        tuple(routing_notes(model, count.routing, count.device)),
        sum(p.numel() for p in model.parameters()),
        count,
        layers,
        norm,
        block_lists(model, count.by_path()),
        batch=batch,
        aliases=aliases_of(model),
        structure=of_call(model, tuple(args), kwargs),
    )


def aliases_of(model: nn.Module) -> dict[str, str]:
    """A module shared at several paths (one object, two names): each later path -> the first, the path its frame
    and its Layer have (a counter that lists it once per path is read at that one)."""
    first: dict[int, str] = {}
    out: dict[str, str] = {}
    for path, m in model.named_modules(remove_duplicate=False):
        if id(m) in first:
            out[path] = first[id(m)]
        else:
            first[id(m)] = path
    return out


@dataclass(frozen=True)
class Measured:
    """A spec's measurement, read back in the parent."""

    text: str
    inputs: str
    notes: tuple[str, ...]
    params: int
    exact: ExactCount
    layers: dict[str, Layer] = field(default_factory=dict)
    norm_path: dict[str, str] = field(default_factory=dict)
    blocks: tuple[BlockList, ...] = ()
    training: TrainingCount | None = None  # when measured with training
    batch: int | None = None  # samples in its input: the first dimension of its first tensor (None: no tensor)
    aliases: dict[str, str] = field(default_factory=dict)  # a shared module's later paths -> its first (aliases_of)
    structure: dict[str, Any] = field(default_factory=dict)  # published.structure.Structure's dict: what formulas read
    generation: Generation | None = None  # when measured with --generate
    resolution: tuple[int, int] | None = None  # the (W, H) pixels its source built its input at (None: not so built)

    @property
    def step(self) -> TrainingCount:
        """Its exact training step: measured with training (Subject.measured(training=True)), else refused."""
        if self.training is None:
            raise ValueError(f"{self.text} was measured without its training step: measure it with training=True")
        return self.training

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, for the parent (from_dict reads it back)."""
        from flopcheck.exact.attention_work import to_rows  # lazy: torch (flopcheck.exact's package imports it)

        counted, uncounted = _rows(self.exact)
        t = self.training
        training = (
            {}
            if t is None
            else {
                "training": {
                    "forward": _rows(t.forward),
                    "backward": _rows(t.backward),
                    "frozen": sorted(t.frozen),
                    "recomputed": sorted(t.recomputed),
                    "trainable": t.trainable,
                    "optimizer_name": t.optimizer_name,
                    "custom": [list(x) for x in t.custom],
                    "fused_scores": t.fused_scores,
                    "forward_attention": to_rows(t.forward.attention),  # its masks: the needed work beside the step
                    **({"optimizer": _rows(t.optimizer)} if t.optimizer is not None else {}),
                }
            }
        )
        return {
            **training,
            "spec": {"text": self.text},
            "inputs": self.inputs,
            "notes": list(self.notes),
            "params": self.params,
            "counted": counted,
            "uncounted": uncounted,
            "layers": {p: asdict(layer) for p, layer in self.layers.items()},
            "norm_path": self.norm_path,
            "aliases": self.aliases,
            "leading": self.exact.leading,
            "outputs": {p: list(s) for p, s in self.exact.outputs.items()},
            "mha": {p: list(v) for p, v in self.exact.mha.items()},
            "sdpa": self.exact.sdpa,
            "attention": to_rows(self.exact.attention),
            **({"routing": [r.to_dict() for r in self.exact.routing]} if self.exact.routing else {}),
            "sdpa_math": self.exact.sdpa_math,
            "by_module": self.exact.by_module,
            "bias_by_module": self.exact.bias_by_module,
            "einsums": [
                [eq, [list(x) for x in shapes], [list(k) for k in kinds]] for eq, shapes, kinds in self.exact.einsums
            ],
            "blocks": [asdict(b) for b in self.blocks],
            "batch": self.batch,
            "device": self.exact.device,
            "structure": self.structure,
            **({"resolution": list(self.resolution)} if self.resolution else {}),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Measured:
        """Inverse of to_dict (measure()'s JSON)."""
        from flopcheck.exact.attention_work import from_rows  # lazy: torch (flopcheck.exact's package imports it)
        from flopcheck.exact.routing import Routed

        device = d.get("device", "meta")  # where the count ran: meta, or CPU for a forward that reads a value

        def records(rows: list[list[Any]], counted: bool) -> tuple[OpRecord, ...]:
            return tuple(OpRecord(p, op, Kind(k) if counted else Work(k), f, el, n) for p, op, k, f, el, n in rows)

        def count(rows: list[list[list[Any]]]) -> ExactCount:
            return ExactCount(
                model=d["spec"]["text"],
                attn="",
                device=device,
                counted=records(rows[0], True),
                uncounted=records(rows[1], False),
            )

        step = None
        if "training" in d:
            from flopcheck.exact.training import TrainingCount  # lazy: torch (see the note at the top)

            t = d["training"]
            step = TrainingCount(
                replace(count(t["forward"]), attention=from_rows(t.get("forward_attention", ()))),
                count(t["backward"]),
                frozenset(t["frozen"]),
                frozenset(t.get("recomputed", ())),
                count(t["optimizer"]) if "optimizer" in t else None,
                t.get("optimizer_name", ""),
                t.get("trainable", 0),
                tuple(tuple(x) for x in t.get("custom", ())),
                t.get("fused_scores", 0),
            )
        text = d["spec"]["text"]
        exact = ExactCount(
            model=text,
            attn="",
            device=device,
            counted=records(d["counted"], True),
            uncounted=records(d["uncounted"], False),
            leading=dict(d.get("leading", {})),
            outputs={p: tuple(s) for p, s in d.get("outputs", {}).items()},
            einsums=tuple(
                (eq, tuple(tuple(x) for x in shapes), tuple((k, f) for k, f in kinds))
                for eq, shapes, kinds in d.get("einsums", ())
            ),
            mha={p: (int(q), int(k), bool(one)) for p, (q, k, one) in d.get("mha", {}).items()},
            sdpa={p: int(f) for p, f in d.get("sdpa", {}).items()},
            attention=from_rows(d.get("attention", ())),
            sdpa_math={p: int(f) for p, f in d.get("sdpa_math", {}).items()},
            routing=tuple(Routed.from_dict(r) for r in d.get("routing", ())),
            by_module={p: int(f) for p, f in d.get("by_module", {}).items()},
            bias_by_module={p: int(f) for p, f in d.get("bias_by_module", {}).items()},
        )
        return cls(
            text,
            d["inputs"],
            tuple(d["notes"]),
            d["params"],
            exact,
            {p: _layer(v) for p, v in d["layers"].items()},
            dict(d["norm_path"]),
            tuple(BlockList(**b) for b in d["blocks"]),
            step,
            d.get("batch"),
            dict(d.get("aliases", {})),
            dict(d.get("structure", {})),
            generation_of(d.get("generation")),
            _pair(d.get("resolution")),
        )

    def breakdown(self) -> Breakdown:
        """The exact count as the reference breakdown: one term per path and kind."""
        return Breakdown(
            self.text, self.exact.terms(), blocks=tuple(b.path for b in self.blocks), attention=self.exact.attention
        )

    def in_blocks(self, path: str) -> bool:
        """A normalised path inside one of the block lists."""
        return self.breakdown().in_blocks(path)
