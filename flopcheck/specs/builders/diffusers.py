"""diffusers:CLASS[.decode|.encode], from a config file or the class's defaults; its inputs from its class's
convention (inputs/)."""

from __future__ import annotations

import difflib
from typing import Any

from torch import nn

from flopcheck.children import one_line
from flopcheck.specs import ModelSpec, SpecError
from flopcheck.specs.binding import given
from flopcheck.specs.built import Built
from flopcheck.specs.config import read_config
from flopcheck.specs.inputs.diffusers import build_inputs
from flopcheck.specs.inputs.vae import METHODS, half_forward, vae_inputs
from flopcheck.specs.meta import construct

# configs published under a legacy class name that newer classes load: DiT-XL/2's and PixArt's say Transformer2DModel
SHARED_CONFIGS = {"Transformer2DModel": ("DiTTransformer2DModel", "PixArtTransformer2DModel")}


def from_diffusers(spec: ModelSpec, device: str, notes: list[str]) -> Built:
    """diffusers.CLASS.from_config(the config file, else the class's own defaults); inputs from the class's
    convention (inputs/diffusers.py), or an autoencoder half's (inputs/vae.py)."""
    try:
        import diffusers  # lazy: diffusers is optional
    except ImportError:
        raise SpecError(f"{spec.text} needs diffusers: pip install 'flopcheck[diffusers]'") from None

    name, dot, method = spec.name.partition(".")
    found = getattr(diffusers, name, None)
    if not (isinstance(found, type) and issubclass(found, nn.Module)):
        models = {n.lower(): n for n in dir(diffusers) if n.endswith("Model")}
        close = [models[n] for n in difflib.get_close_matches(name.lower(), models, n=3, cutoff=0.8)]
        raise SpecError(
            f"diffusers has no model class {name!r}: "
            + (f"did you mean {', '.join(close)}?" if close else "give a class such as FluxTransformer2DModel")
        )
    cls: Any = found  # a diffusers model class: from_config and its halves are diffusers' own (untyped)
    coder = callable(getattr(cls, "decode", None)) and callable(getattr(cls, "encode", None))
    if dot and not (coder and method in METHODS):
        raise SpecError(
            f"{spec.text}: write diffusers:{name}.decode or .encode (an autoencoder's two halves)"
            if coder
            else f"{spec.text}: {name} is not an autoencoder; write diffusers:{name}"
        )
    method = method or ("decode" if coder else "")
    path = spec.options.config
    config = read_config(path) if path else {}
    named = config.get("_class_name")
    if isinstance(named, str) and name not in (named, *SHARED_CONFIGS.get(named, ())):  # another class's
        # config builds a model it never describes
        raise SpecError(
            f"--config {path} is a {named} config (its _class_name), not a {name} one: count it as diffusers:{named}"
        )
    where = path or f"the defaults of {name}.__init__ (diffusers {diffusers.__version__})"
    try:
        model = construct(lambda: cls.from_config(config), device, notes, spec.text)
    except (TypeError, ValueError, KeyError) as err:
        raise SpecError(
            f"{spec.text} cannot be built from {where}: {one_line(err)}"
            + ("" if path else "; give its published config.json with --config FILE")
        ) from None
    if not path:
        notes.append(f"config: {where}; give the published config.json with --config FILE for another size")
    if method:  # the half as the model's forward: a subclass whose forward is it, so module paths stay as they are
        model.__class__ = type(f"{name}.{method}", (cls,), {"forward": half_forward(cls, method)})
    if spec.options.inputs:
        return given(model, spec.options, device, notes)
    if method:
        args, kwargs, words = vae_inputs(name, model, method, spec.options, device)
    else:
        args, kwargs, words, size = build_inputs(name, model, spec.options, device)
        return Built(model, args, kwargs, notes + [words], resolution=size)
    return Built(model, args, kwargs, notes + [words])
