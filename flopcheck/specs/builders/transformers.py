"""transformers:CLASS, a text encoder or a language model from a config file or its config class's defaults (a
published LM by name, 'Llama-3-8B': its class on the config flopcheck ships); S token ids as input."""

from __future__ import annotations

import difflib
from typing import Any

from flopcheck.children import one_line
from flopcheck.specs import ModelSpec, SpecError
from flopcheck.specs.binding import given
from flopcheck.specs.built import Built
from flopcheck.specs.config import read_config, shipped
from flopcheck.specs.inputs.text import text_inputs
from flopcheck.specs.meta import construct


def from_transformers(spec: ModelSpec, device: str, notes: list[str]) -> Built:
    """transformers.CLASS(CLASS.config_class.from_dict(the config file, else {})): no hub, no weights, no remote code (a
    config with auto_map names code to download and is refused); inputs: input_ids of zeros (a valid id of every
    vocabulary), S tokens."""
    try:
        import transformers  # lazy: transformers is optional
    except ImportError:
        raise SpecError(f"{spec.text} needs transformers: pip install 'flopcheck[transformers]'") from None

    cls = getattr(transformers, spec.name, None)
    if spec.lm is not None and cls is None:  # a published LM whose class came after the installed transformers
        raise SpecError(
            f"{spec.text} runs on transformers' {spec.name}, which transformers {transformers.__version__} does not "
            f"have: pip install -U 'flopcheck[transformers]'"
        )
    if not (isinstance(cls, type) and issubclass(cls, transformers.PreTrainedModel)):
        models = {n.lower(): n for n in dir(transformers) if n.endswith("Model")}
        close = [models[n] for n in difflib.get_close_matches(spec.name.lower(), models, n=3, cutoff=0.8)]
        raise SpecError(
            f"transformers has no model class {spec.name!r}: "
            + (f"did you mean {', '.join(close)}?" if close else "give a class such as T5EncoderModel")
        )
    if spec.lm is not None and shipped(spec.lm.config) is None:
        raise SpecError(
            f"{spec.text} runs on the config {spec.lm.config}.json, which this install of flopcheck does not have: "
            f"reinstall flopcheck, or give transformers:{spec.name} --config FILE (the model's config.json)"
        )
    path = spec.options.config or (spec.lm.config if spec.lm is not None else None)
    config = read_config(path) if path else {}
    own, theirs = getattr(cls.config_class, "model_type", ""), config.get("model_type")
    if theirs and own and theirs != own:  # from_dict would read what fits and build the class's defaults for the rest
        raise SpecError(
            f"--config {path} is a {theirs!r} config and {spec.name} reads {own!r} configs: give the model's own class "
            f"(transformers:{_class_for(transformers, theirs)}) or its own config.json"
        )
    where = path or f"the defaults of {spec.name}'s config (transformers {transformers.__version__})"
    if cls.config_class is None:  # a model class that names no config class: nothing to build it from
        raise SpecError(f"{spec.text} cannot be built: {spec.name} names no config class")
    try:
        cfg = cls.config_class.from_dict({k: v for k, v in config.items() if not k.startswith("_")})
        model = construct(lambda: cls(cfg), device, notes, spec.text)
    except (TypeError, ValueError, KeyError, AttributeError) as err:
        raise SpecError(f"{spec.text} cannot be built from {where}: {one_line(err)}") from None
    if not path:
        notes.append(f"config: {where}; give the published config.json with --config FILE for another size")
    if spec.options.inputs:
        return given(model, spec.options, device, notes)
    args, kwargs, words = text_inputs(spec.name, model, spec.options, device)
    return Built(model, args, kwargs, notes + [words])


def _class_for(transformers: Any, model_type: str) -> str:  # transformers: the module
    """The model class transformers maps a config's model_type to ('bert' -> BertModel), or 'CLASS'."""
    try:
        from transformers.models.auto.modeling_auto import MODEL_MAPPING_NAMES  # lazy: transformers is optional
    except ImportError:
        return "CLASS"
    name = MODEL_MAPPING_NAMES.get(model_type)
    return name if isinstance(name, str) else "CLASS"
