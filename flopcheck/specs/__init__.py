"""A model spec: what every command accepts as MODEL, and how its model and inputs are built.

Sources (a builder each in builders/), by prefix:
- a reference name ('DiT-XL/2', 'FLUX.1-dev'): flopcheck's own models, with their hand formulas;
- a published language model's name ('Llama-3-8B', 'Llama 3 8B', 'DeepSeek-V3'): transformers' class on the config
  flopcheck ships for it (flopcheck.specs.lms), a transformers spec under its own name;
- 'timm:NAME', 'torchvision:NAME': built without weights, input by the model's own convention;
- 'diffusers:CLASS', from a config file (a config.json as published on a model card) or the class's defaults: no
  hub, no weights;
- 'transformers:CLASS', from a config file or the class's defaults (text encoders: T5, CLIP's text model, ...); the
  prefix is taken before a module named transformers would be;
- 'zoo:NAME', a model of the third-party zoo (flopcheck.zoo): the spec its entry names, with the entry's options;
- 'package.module:factory': the user's own code (imported and run in a child process, child.py).

No torch here: parsing a spec is cheap, building one imports what it needs.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.machinery
import os
import sys
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from flopcheck import checks
from flopcheck.errors import InputError
from flopcheck.specs import lms
from flopcheck.types import Word
from flopcheck.zoo import BY_NAME, Entry
from reference_models import list_models
from reference_models.registry import UnknownModelError


class SpecSource(Word):
    """Where a spec's model comes from: flopcheck's own reference models, or a library's (by the spec's prefix)."""

    REFERENCE = "reference"  # a reference name: flopcheck's own models, with their hand formulas
    TIMM = "timm"
    TORCHVISION = "torchvision"
    DIFFUSERS = "diffusers"
    TRANSFORMERS = "transformers"  # transformers:CLASS, or a published language model's name
    ZOO = "zoo"
    MODULE = "module"  # package.module:factory, the user's own code


@dataclass(frozen=True)
class ModelSource:
    """Where a spec's model comes from, by its prefix: its builder ('module:function', (spec, device, notes) ->
    built.Built, imported in the child that builds it), the input options it reads (--batch: every one; another
    one given would be ignored, so it is refused) and, in words, where its input comes from."""

    prefix: SpecSource
    build: str
    reads: tuple[str, ...]
    inputs_from: str


# A model source is one row here and one builder function. 'module' (package.module:factory) is the fallback of any
# other 'text:text'; --frames on a torchvision image model is refused where the model is known (its builder).
SOURCES = {
    s.prefix: s
    for s in (
        ModelSource(
            SpecSource.TIMM,
            "flopcheck.specs.builders.timm:from_timm",
            ("resolution", "input_shape", "inputs"),
            "its pretrained_cfg, --resolution, --input-shape or --inputs",
        ),
        ModelSource(
            SpecSource.TORCHVISION,
            "flopcheck.specs.builders.torchvision:from_torchvision",
            ("resolution", "frames", "input_shape", "inputs"),
            "its weights' crop, --resolution, --frames (video), --input-shape or --inputs",
        ),
        ModelSource(
            SpecSource.DIFFUSERS,
            "flopcheck.specs.builders.diffusers:from_diffusers",
            ("config", "resolution", "frames", "text_tokens", "inputs"),
            "its config and --resolution, --frames, --text-tokens, or --inputs",
        ),
        ModelSource(
            SpecSource.TRANSFORMERS,
            "flopcheck.specs.builders.transformers:from_transformers",
            ("config", "text_tokens", "inputs"),
            "its config and --text-tokens, or --inputs",
        ),
        ModelSource(
            SpecSource.ZOO,
            "flopcheck.specs.builders.zoo:from_zoo",
            (),
            "its entry in the zoo (flopcheck list-models 'zoo:*')",
        ),
        ModelSource(
            SpecSource.MODULE,
            "flopcheck.specs.builders.factory:from_factory",
            ("input_shape", "inputs"),
            "the factory, --input-shape or --inputs",
        ),
    )
}
PREFIXES = tuple(p for p in SOURCES if p is not SpecSource.MODULE)


class SpecError(InputError):
    """A spec that cannot be read, built or run: one line naming the problem and the fix."""


@dataclass(frozen=True)
class Options:
    """How to build a spec's input (each None: the source's own default)."""

    resolution: tuple[int, int] | None = None  # (W, H) pixels
    frames: int | None = None  # video: pixel frames
    text_tokens: int | None = None  # text-conditioned: encoder tokens
    input_shape: tuple[int, ...] | None = None  # one tensor input, for a model that takes one
    batch: int = 1
    config: str | None = None  # diffusers: a config.json file
    inputs: str | None = None  # 'package.module:fn', fn(model) -> args or (args, kwargs)
    attn: str | None = None  # 'math' turns a switchable model's fused attention off (timm); else its default
    input_size: int | None = None  # a reference DiT: its latent side (sets T)
    space: str | None = None  # a reference DiT: 'pixel' runs it on 3-channel pixels, no VAE
    blocks: int | None = None  # a stand-in: the model with only the first N blocks of its one list of blocks
    reparam: bool = False  # timm: the model fused by timm's reparameterize_model, as timm's benchmark counts it


# what a timm model's build notes when it has train-time branches reparameterize_model fuses (the audit reads it)
REPARAMETERIZABLE = "has train-time branches that timm's reparameterize_model fuses"


@dataclass(frozen=True)
class ModelSpec:
    """A model spec as given ('timm:resnet50') and the options that make its input."""

    text: str
    options: Options = field(default_factory=Options)

    @property
    def source(self) -> SpecSource:
        """Read from the text, the one place: a reference (or a published LM's) name, a prefix of SOURCES, or a
        module (any other 'text:text')."""
        prefix, colon, _ = self.text.partition(":")
        if not colon:
            return SpecSource.TRANSFORMERS if self.lm is not None else SpecSource.REFERENCE
        return SpecSource(prefix) if prefix in PREFIXES else SpecSource.MODULE

    @property
    def name(self) -> str:
        """The part after the prefix (a module spec's whole text; a published LM's: its transformers class)."""
        if self.lm is not None:
            return self.lm.cls
        return self.text.partition(":")[2] if self.source in PREFIXES else self.text

    @property
    def lm(self) -> lms.LM | None:
        """The published language model this spec names ('Llama-3-8B'), else None."""
        return None if is_reference(self.text) else lms.find(self.text)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        options = asdict(self.options)
        if not options["reparam"]:  # unset: the keys of specs measured before the option stay as they were
            del options["reparam"]
        return {"text": self.text, "options": options}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ModelSpec:
        """Inverse of to_dict."""
        o = dict(d.get("options", {}))
        for key in ("resolution", "input_shape"):
            if o.get(key) is not None:
                o[key] = tuple(o[key])
        return cls(d["text"], Options(**o))


def is_reference(text: str) -> bool:
    """A reference model's name ('DiT-XL/2', 'FLUX.1-dev'): the one place this is decided."""
    return text in list_models()


def is_spec(text: str) -> bool:
    """A spec's text (timm:NAME, torchvision:NAME, package.module:factory), not a reference name or pattern."""
    return ModelSpec(text).source is not SpecSource.REFERENCE


def parse(text: str, **options: Any) -> ModelSpec:
    """A spec from its text and options, checked for form (not built): an unknown reference name, an empty
    name after a prefix or a module spec without its factory is a SpecError."""
    text = (text or "").strip()
    if not text:
        raise SpecError(
            "the model is empty: give a reference name (DiT-XL/2), timm:NAME, torchvision:NAME, "
            "diffusers:CLASS [--config FILE] or package.module:factory"
        )
    if text.startswith("diffusers-pipeline:"):  # flopcheck.pipelines.PREFIX: a whole pipeline, never one model
        raise SpecError(
            f"{text} is a whole pipeline: count, estimate and audit take it; compare and reconcile run counters on "
            f"one model: name a stage (its denoiser's reference name or diffusers:CLASS --config FILE)"
        )
    known = [f.name for f in fields(Options)]
    for name in options:
        if name not in known:
            raise SpecError(f"unknown option {name!r} for {text}: give {', '.join(known)}")
    given = {k: v for k, v in options.items() if v is not None}
    checks.model_options(given)  # the command line's rules for its flags, from Python too (batch=0, batch=True)
    side = given.get("resolution")
    if side is not None:  # one side is a square, as --resolution 256 is: (256, 256)
        given["resolution"] = (side, side) if isinstance(side, int) else tuple(side)
    shape, batch = given.get("input_shape"), given.get("batch")
    if shape and batch and batch != shape[0]:
        raise SpecError(
            f"--batch {batch} and --input-shape {','.join(map(str, shape))} disagree: the input's first "
            f"dimension is its batch; give --input-shape {','.join(map(str, (batch, *shape[1:])))} alone"
        )
    if shape:
        given["batch"] = shape[0]
    blocks = given.get("blocks")
    if blocks is not None and (isinstance(blocks, bool) or not isinstance(blocks, int) or blocks < 1):
        raise SpecError(f"blocks must be a whole number >= 1, got {blocks!r}")
    lm = None if is_reference(text) else lms.find(text)
    if lm is not None:  # a published LM, by its registry name whatever the spelling: one spec, one cache key
        text = lm.name
        if "config" in given:
            raise SpecError(
                f"{text} runs on the config flopcheck ships for it ({lm.config}); for another config give "
                f"transformers:{lm.cls} --config FILE"
            )
    spec = ModelSpec(text, Options(**given))
    if spec.source is SpecSource.REFERENCE and blocks is not None:
        raise SpecError(f"blocks cuts a spec's list of blocks; {text} is a reference model: it has its own configs")
    if spec.source is SpecSource.REFERENCE:
        if not is_reference(text):
            near = lms.close(text)
            unknown = f"unknown model {text!r}; did you mean {', '.join(near)}?" if near else UnknownModelError(text)
            raise SpecError(
                f"{unknown}; or give a spec: a language model's name (flopcheck list-models 'lm:*'), timm:NAME, "
                f"torchvision:NAME, diffusers:CLASS [--config FILE], transformers:CLASS [--config FILE], "
                f"package.module:factory"
            )
        if "input_size" in given and "resolution" in given:
            raise SpecError("--input-size and --resolution both set the input: give one of them")
        for name in ("config", "inputs", "input_shape", "text_tokens"):
            if name in given:
                raise SpecError(
                    f"--{name.replace('_', '-')} builds a spec's input; {text} is a reference model: "
                    f"use its own flags (--resolution, --input-size, --frames)"
                )
        return spec
    for name in ("input_size", "space"):
        if name in given:
            raise SpecError(
                f"--{name.replace('_', '-')} applies to the reference DiT models; for {text} give "
                f"--resolution or --input-shape"
            )
    if spec.options.attn and spec.options.attn != "sdpa" and spec.source is not SpecSource.TIMM:
        raise SpecError(
            f"--attn {spec.options.attn}: flopcheck can switch attention paths for reference models "
            f"and timm models; {text} runs its own"
        )
    if spec.options.reparam and spec.source is not SpecSource.TIMM:
        raise SpecError(
            f"reparam fuses a timm model's train-time branches (timm's reparameterize_model); {text} is not one"
        )
    module, _, fn = text.partition(":")
    if lm is None and (not fn.strip() or not module.strip()):
        raise SpecError(f"model {text!r}: write PREFIX:NAME (timm:resnet50) or package.module:factory")
    if spec.options.config and spec.source not in (SpecSource.DIFFUSERS, SpecSource.TRANSFORMERS):
        raise SpecError(f"--config applies to diffusers:CLASS and transformers:CLASS specs, not to {text!r}")
    _read_by_source(spec)
    if spec.options.config:  # a missing, malformed or auto_map file: refused here, before a child imports torch
        _config_readable(spec.options.config)
    if spec.source is SpecSource.MODULE:
        _module_findable(text)
    if spec.source is SpecSource.ZOO:
        zoo_entry(spec.name)  # an unknown name: refused now, with the close ones
    return spec


def _config_readable(path: str) -> None:
    """--config FILE read as the builder reads it (specs.config.read_config): a file that is missing, not JSON, not
    one object, with a negative count or with auto_map is the builder's own one line, with no library imported."""
    from flopcheck.specs.config import read_config  # lazy: config.py takes SpecError from this package

    read_config(path)


def _module_findable(text: str) -> None:
    """package.module:factory whose top package no finder of the child's path (this process's sys.path, $PYTHONPATH
    and the working folder, `python -m`'s first entry) can find: the child's ImportError (builders.factory), said here.
    Only the top package is looked up: finding it runs no code, importing a subpackage would run its parent's."""
    top = text.partition(":")[0].partition(".")[0]
    if not top.isidentifier() or top in sys.modules:
        return
    importlib.invalidate_caches()  # a module written a moment ago (a finder's listing of its folder is cached)
    if any(_found(finder, top) for finder in sys.meta_path):
        return
    # what importlib.import_module raises for it in the child, in one_line's form (children.one_line)
    raise SpecError(f"cannot import {text!r}: ModuleNotFoundError: No module named {top!r}; is the module on the path?")


def _found(finder: object, name: str) -> bool:
    """The finder finds top-level module `name` on the child's path: sys.path, $PYTHONPATH and the working folder (a
    finder that fails to look: True, so the child tries)."""
    find = getattr(finder, "find_spec", None)
    if find is None:
        return False
    child = [*os.environ.get("PYTHONPATH", "").split(os.pathsep), os.getcwd()]  # children.child_env's, -m's
    path = [*sys.path, *child] if finder is importlib.machinery.PathFinder else None
    try:
        return find(name, path) is not None
    except (ImportError, ValueError, OSError):
        return True


def zoo_entry(name: str) -> Entry:
    """The zoo's entry called `name` (flopcheck.zoo), else a SpecError naming the close ones."""
    if name not in BY_NAME:
        close = difflib.get_close_matches(name, BY_NAME, n=3, cutoff=0.6)
        hint = f"did you mean {', '.join('zoo:' + c for c in close)}?" if close else "see flopcheck list-models 'zoo:*'"
        raise SpecError(f"the zoo has no model {name!r}: {hint}")
    return BY_NAME[name]


# two options that each give the whole input: the first would win unseen
EXCLUSIVE = (("inputs", "input_shape"), ("inputs", "resolution"), ("input_shape", "resolution"))


def _read_by_source(spec: ModelSpec) -> None:
    """An input option the spec's source does not read, or two that each give the whole input, is one line."""
    o = spec.options

    def flag(name: str) -> str:
        return "--" + name.replace("_", "-")

    given = [k for k in ("resolution", "frames", "text_tokens", "input_shape", "inputs") if getattr(o, k) is not None]
    for name in given:
        if name not in SOURCES[spec.source].reads:
            where = SOURCES[spec.source].inputs_from
            raise SpecError(f"{flag(name)} does not apply to {spec.text}: its input comes from {where}")
    for a, b in EXCLUSIVE:
        if a in given and b in given:
            raise SpecError(f"{flag(a)} and {flag(b)} each give {spec.text}'s whole input: give one")


__all__ = ["REPARAMETERIZABLE", "ModelSpec", "Options", "SpecError", "SpecSource", "is_reference", "is_spec", "parse"]
