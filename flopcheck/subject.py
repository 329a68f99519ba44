"""One model, one path: whatever the user gave (a reference name, a spec, an nn.Module with its inputs) resolved
once into a Subject, which every verb takes.

A Subject knows its inputs' batch (read from the inputs, never from an option the inputs disagree with), its exact
count with the module structure (`measured`), the jobs its counters run, and the reference each count is
reconciled against (the hand formula where the family has one, else the exact count). A named model's code runs
in a child process (specs/child.py); a live module is already built in this process, so it is measured here, and
its counters still run in forked children with a deadline.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import TYPE_CHECKING, Any

from flopcheck.children import one_line
from flopcheck.errors import InputError
from flopcheck.formula import formula_breakdown
from flopcheck.specs import ModelSpec, SpecSource, is_reference, parse
from flopcheck.types import ATTENTION_KINDS
from reference_models import ATTN_PATHS, ConfigError, get_config

if TYPE_CHECKING:
    from flopcheck.counted import ExactCount
    from flopcheck.counters import CounterSpec
    from flopcheck.counters.pool import Job
    from flopcheck.reconciler.reference import Reference
    from flopcheck.specs.blocks import BlockList
    from flopcheck.specs.measure import Measured
    from flopcheck.types import Outcome


class Source(str, Enum):
    """Where a subject's model comes from."""

    REFERENCE = "reference"  # flopcheck's own models, with hand formulas
    SPEC = "spec"  # timm:, torchvision:, diffusers:, package.module:factory, built in a child process
    LIVE = "live"  # the caller's nn.Module, already built, with its inputs


@dataclass
class Subject:
    """A model resolved once: its source, what it is called, and how it is built and counted."""

    text: str
    source: Source
    spec: ModelSpec | None = None  # for a reference name or a spec
    model: Any = None  # the live nn.Module
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    timeout_s: float | None = None
    _measured: Measured | None = None

    @property
    def formula_family(self) -> bool:
        """Its family has a hand formula (a reference model): the truth is the formula, the exact count checks it."""
        return self.source is Source.REFERENCE

    @property
    def attn(self) -> str:
        """The attention path asked for ('sdpa' unless the spec switched it)."""
        return (self.spec.options.attn if self.spec is not None else None) or "sdpa"

    @property
    def named(self) -> ModelSpec:
        """The spec of a named model (a reference name or a spec); a live module has none."""
        if self.spec is None:
            raise InputError(f"{self.text} is a live module: its inputs are the ones given")
        return self.spec

    def config(self) -> Any:
        """A reference model's config for the options given (input size, attention path, resolution, frames)."""
        o = self.named.options
        fields = {
            k: v
            for k, v in (
                ("input_size", o.input_size),
                ("resolution", o.resolution),
                ("frames", o.frames),
                ("space", o.space),
            )
            if v is not None
        }
        return get_config(self.text, attn=o.attn, **fields)

    def exact(self) -> ExactCount:
        """The exact count of one forward (ExactCount): a reference model's on meta here, any other's measured."""
        if self.source is Source.REFERENCE:
            from flopcheck.exact import exact_count  # lazy: torch-free door (the exact count imports torch)

            return exact_count(self.text, self.config(), batch=self.batch)
        return self.measured().exact

    def measured(
        self,
        training: bool = False,
        frozen: tuple[str, ...] = (),
        checkpointed: tuple[str, ...] = (),
        optimizer: str = "",
        device: str = "meta",
        generate: tuple[int, int] | None = None,
    ) -> Measured:
        """The exact count with its module structure (specs.measure.Measured), once; a spec's from its child; with
        training, the exact training step too (its frozen and checkpointed modules, its optimizer); a spec's on
        `device` when not meta (cpu: real tensors, so masks and routers are read); with generate (prompt, steps), a
        causal LM's generation with its KV cache."""
        if self.source is Source.REFERENCE:
            raise InputError(f"{self.text} is a reference model: its truth is its formula (reference())")
        step: dict[str, Any] = {
            "training": training,
            "frozen": tuple(frozen),
            "checkpointed": tuple(checkpointed),
            "optimizer": optimizer,
        }
        if (device != "meta" or generate) and self.source is Source.SPEC:
            from flopcheck.specs.child import measured

            return measured(self.named, self.timeout_s, training, frozen, checkpointed, optimizer, device, generate)
        if generate:
            raise InputError(f"--generate: {self.text} is your own module; count its decoding with exact.decode")
        if training:
            return self._measure(**step)
        if self._measured is None:
            self._measured = self._measure(**step)
        return self._measured

    def _measure(
        self, training: bool, frozen: tuple[str, ...], checkpointed: tuple[str, ...], optimizer: str
    ) -> Measured:
        # lazy: torch-free door (a spec's child and the local measure import torch; so does the training step)
        if self.source is Source.SPEC:
            from flopcheck.specs.child import measured

            got: Measured = measured(self.named, self.timeout_s, training, frozen, checkpointed, optimizer)
            return got
        from flopcheck.specs.measure import measure_local

        try:
            m = measure_local(self.model, self.args, self.kwargs, self.text)
        except Exception as err:  # noqa: BLE001 - the caller's forward on the inputs given: one line, its cause kept
            raise InputError(
                f"{self.text}(*args, **kwargs) failed on the inputs given ({one_line(err)}): give the "
                f"inputs its forward takes, after the model"
            ) from err
        if not training:
            return m
        from flopcheck.exact.training import count_training_step, freeze

        if optimizer:
            raise InputError(
                f"{self.text} is your own module: its optimizer's step would change its weights; count "
                f"the step without one (optimizer='')"
            )
        kept = {p: (p.requires_grad, p.grad) for p in self.model.parameters()}
        try:  # the caller's module is left as it was: what it trains, and its gradients
            freeze(self.model, frozen)
            step = count_training_step(
                self.model,
                self.args,
                kwargs=self.kwargs,
                frozen_paths=frozen,
                checkpointed=checkpointed,
                model=self.text,
            )
        finally:
            for p, (flag, grad) in kept.items():
                p.requires_grad_(flag)
                p.grad = grad
        return replace(m, training=step)

    @property
    def batch(self) -> int:
        """Samples in the forward: read from its inputs (a reference model's: its option)."""
        if self.source is Source.REFERENCE:
            return self.named.options.batch
        return self.measured().batch or self.spec_batch

    @property
    def spec_batch(self) -> int:
        """The batch the options ask for (1 unless given): a named model's input when the input states none."""
        return self.spec.options.batch if self.spec is not None else 1

    def check_executable(self) -> None:
        """Counters execute the model on real tensors: a reference model that exists on meta only, or a model whose
        fp32 weights would not fit in half this machine's memory, is refused in one line naming the fix."""
        if self.source is Source.REFERENCE:
            from flopcheck.counters.pool import check_executable  # lazy: door start-up (see counts_of)

            check_executable(self.text)
            return
        if self.attn not in ("sdpa", "math"):
            raise InputError(f"--attn {self.attn}: a spec runs sdpa (its own) or math (timm's switch)")
        params = self.measured().params
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        if 4 * params > memory / 2:
            raise InputError(
                f"counters execute the model on real tensors, and {self.text} has {params:,} parameters "
                f"({4 * params / 1e9:.0f} GB in fp32), more than half this machine's memory: use "
                f"`flopcheck count {self.text}` (meta, exact)"
            )

    def job(self) -> Job:
        """The counters' job for this subject (counters/pool.py)."""
        from flopcheck.counters.pool import Job  # lazy: door start-up (see counts_of)

        if self.source is Source.REFERENCE:
            o = self.named.options
            return Job(self.text, getattr(self.config(), "input_size", None), self.attn, o.batch)
        if self.source is Source.SPEC:
            return Job.of_spec(self.named, self.batch)
        return Job(self.text, None, "sdpa", self.batch)

    def key(self) -> tuple[str, int | None, str]:
        """(model, input size, attention path) as its counts carry them."""
        if self.source is Source.LIVE:
            return self.text, None, "sdpa"
        resolved = self.job().resolved()
        return resolved["model"], resolved["input_size"], resolved["attn"]

    def reference(self) -> Reference:
        """The Reference counts of this subject are reconciled against."""
        if self.source is Source.REFERENCE:
            from flopcheck.reconciler.reference import reference_for  # lazy: torch-free door (builds models)

            fields = self.config().input_fields()  # DiT: its latent side; the others: frames, height, width
            size = fields.pop("input_size", None)
            return reference_for(self.text, size, self.attn, self.batch, tuple(sorted(fields.items())))
        from flopcheck.reconciler.reference import reference_of  # lazy: torch-free door (builds models)

        return reference_of(self.measured(), self.batch)

    def truth(self) -> int:
        """The FLOPs of one forward counts are compared with: a reference model's formula, else the exact count."""
        if self.source is Source.REFERENCE:
            cfg = self.config()
            total: int = formula_breakdown(self.text, cfg, batch=self.batch).total
            return total
        return self.measured().exact.total

    def counts(self, names: str | list[str] | None = None, timeout_s: float = 600.0) -> list[Outcome]:
        """What each named counter (default: every registered one) says about this subject: a Count each, a number
        or its one-line error. A named model's counters run in the pool's workers; a live module's in forked
        children of this process, the module left as it was."""
        from flopcheck.counters import COUNTERS, get_spec  # lazy: door start-up (see counts_of)

        chosen = [get_spec(n) for n in ([names] if isinstance(names, str) else names or list(COUNTERS))]
        if self.source is not Source.LIVE:
            return counts_of([self], [s.name for s in chosen], timeout_s)
        return self._live_counts(chosen, timeout_s)

    def _live_counts(self, chosen: list[CounterSpec], timeout_s: float) -> list[Outcome]:
        # lazy: torch-free door (the worker and a bound module import torch)
        from flopcheck.counters.worker import count_one, load_adapter
        from flopcheck.specs.binding import bound
        from flopcheck.specs.built import Built

        model = self.model
        had_forward = "forward" in vars(model)
        built = bound(Built(model, tuple(self.args), dict(self.kwargs)))
        job = {"model": self.text, "input_size": None, "attn": "sdpa", "batch": self.batch, "local": True}
        try:
            return [count_one(s.payload(), load_adapter(s.payload()), job, built, timeout_s) for s in chosen]
        finally:
            if self.kwargs and not had_forward:
                del model.forward  # the keyword inputs were bound into it for the counters' calls

    def paths(self) -> list[Subject]:
        """This subject on each attention path it runs: a reference model's every path its config takes (DiT: sdpa
        and math), a timm model that computes attention on timm's switch too, any other on its own."""
        if self.source is Source.REFERENCE:
            first, *others = (self.with_options(attn=a.value) for a in ATTN_PATHS)
            return [first, *(s for s in others if _takes(s, ConfigError))]
        if self.source is Source.SPEC and self.switches_attention():
            return [self, self.with_options(attn="math")]
        return [self]

    def switches_attention(self) -> bool:
        """A timm model that computes attention: timm's fused-attention switch changes its path."""
        if self.source is not Source.SPEC or self.named.source is not SpecSource.TIMM or self.named.options.attn:
            return False
        return any(t.kind in ATTENTION_KINDS for t in self.measured().breakdown().terms)

    def meta_only(self) -> str:
        """Why counters cannot execute it, in words ('' where they can): a reference model built on meta only."""
        if self.source is not Source.REFERENCE:
            return ""
        from flopcheck.counters.pool import meta_only_gb  # lazy: door start-up (see counts_of)

        if meta_only_gb(self.text) is None:
            return ""
        return f"{self.text} exists on meta only: counters execute it on real tensors"

    def resizes(self) -> tuple[str, ...]:
        """The input options a spec's source builds its input from (specs.SOURCES); none for a reference or a live
        model."""
        from flopcheck.specs import SOURCES

        return SOURCES[self.named.source].reads if self.source is Source.SPEC else ()

    def stand_ins(self) -> list[Job]:
        """The counters' jobs on smaller configs of the same architecture (its config's stand_ins); none for a spec."""
        if self.source is not Source.REFERENCE:
            return []
        from flopcheck.counters.pool import Job  # lazy: door start-up (see counts_of)

        return [Job.stand_in(self.text, attn, **fields) for attn, fields in self.config().stand_ins()]

    def blocks(self) -> list[BlockList]:
        """A spec's lists of repeated blocks as it was measured (none for a reference model: it has its config)."""
        return [] if self.source is Source.REFERENCE else list(self.measured().blocks)

    def backward(self, space: str | None = None) -> int:
        """The exact backward of one training step, FLOPs: a reference model's on meta (on pixels with space), a
        spec's measured in its child."""
        if self.source is not Source.REFERENCE:
            return self.measured(training=True).step.backward.total
        from flopcheck.exact.training import training_step  # lazy: torch-free door (the step imports torch)

        on = self.with_options(space=space) if space else self
        backward: int = training_step(self.text, on.config()).backward.total
        return backward

    def default_input(self) -> tuple[tuple[int, int] | None, int | None]:
        """The input a reference model runs on unless told (its resolution, and frames for video); a spec's: none."""
        if self.source is not Source.REFERENCE:
            return None, None
        cfg = self.config()
        frames: int | None = cfg.frames if getattr(cfg, "video", False) else None
        return cfg.resolution, frames

    @property
    def inputs(self) -> str:
        """The input its counts are for, in words: a spec's as built, a reference model's resolution and latent."""
        if self.source is not Source.REFERENCE:
            inputs: str = self.measured().inputs
            return inputs
        cfg = self.config()
        w, h = cfg.resolution if isinstance(cfg.resolution, tuple) else (cfg.resolution, cfg.resolution)
        frames = f" x {cfg.frames} frames" if getattr(cfg, "video", False) else ""
        side = getattr(cfg, "input_size", None)
        return f"{w}x{h} px{frames}" + (f", latent {side}x{side}" if isinstance(side, int) else "")

    def with_options(self, **options: Any) -> Subject:
        """The same named model with other input options (another attention path, another latent side)."""
        spec = self.named
        return replace(self, spec=replace(spec, options=replace(spec.options, **options)), _measured=None)


def _takes(subject: Subject, refused: type[Exception]) -> bool:
    """Its config takes its options (a family built with one attention path refuses the others)."""
    try:
        subject.config()
    except refused:
        return False
    return True


def counts_of(
    subjects: list[Subject], names: list[str], timeout_s: float = 600.0, progress: Any = None
) -> list[Outcome]:
    """Each named counter on each subject: the named ones in one pool of workers (torch and each library imported
    once), counter after counter, subject after subject; a live module's in forked children of this process."""
    # lazy: door start-up: the counters' registry imports every adapter, numpy and the plugins' entry points
    # (importing flopcheck.subject took 0.06 s with it here, 0.42 s without)
    from flopcheck.counters.pool import run_counters

    if any(s.source is Source.LIVE for s in subjects):
        return [c for s in subjects for c in s.counts(names, timeout_s)]
    return run_counters(names, [s.job() for s in subjects], timeout_s=timeout_s, progress=progress)


def measure_all(subjects: list[Subject]) -> None:
    """The exact counts of the subjects built in a child (specs), and of their explicit-attention twins, in as few
    children as can be; a subject whose spec cannot be read is left to its own count, which refuses it in one line."""
    from flopcheck.specs.child import measure_all as measure  # lazy: torch-free door (its child imports torch)

    specs = [s for s in subjects if s.source is Source.SPEC]
    measure([s.named for s in specs])
    twins: list[ModelSpec] = []
    for s in specs:
        try:
            twins += [p.named for p in s.paths()[1:]]
        except Exception:  # noqa: BLE001  (refused by its own count, one line)
            continue
    measure(twins)


def subject_of(spec: ModelSpec, timeout_s: float | None = None) -> Subject:
    """The Subject of a parsed spec (specs.ModelSpec): a reference model's, or a spec's built in its child."""
    source = Source.REFERENCE if spec.source is SpecSource.REFERENCE else Source.SPEC
    return Subject(spec.text, source, spec=spec, timeout_s=timeout_s)


def resolve(model: Any, *args: Any, timeout_s: float | None = None, **kwargs: Any) -> Subject:
    """The Subject of what the user gave: a string (a reference name or a spec, whose keyword options build its
    input: resolution, frames, text_tokens, input_shape, batch, config, inputs, attn, input_size) or an nn.Module
    with its inputs, model(*args, **kwargs)."""
    if isinstance(model, str):
        spec = parse(model, **kwargs)
        if args:
            raise InputError(
                f"{model} is named, so flopcheck builds its inputs: give options (resolution=, "
                f"input_shape=, inputs=), not tensors"
            )
        return subject_of(spec, timeout_s)
    return live(model, args, kwargs)


def live(model: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None) -> Subject:
    """The Subject of the caller's own nn.Module and its inputs, model(*args, **kwargs) (any names, `timeout_s` too)."""
    if not _is_module(model):
        raise InputError(
            f"model must be a torch.nn.Module or a name (DiT-XL/2, timm:NAME, ...), got {type(model).__name__}"
        )
    return Subject(type(model).__name__, Source.LIVE, model=model, args=tuple(args), kwargs=dict(kwargs or {}))


def _is_module(model: Any) -> bool:
    from torch import nn  # lazy: torch-free door

    return isinstance(model, nn.Module)


__all__ = ["Source", "Subject", "counts_of", "is_reference", "live", "measure_all", "resolve", "subject_of"]
