"""Build a spec's model and inputs: one builder per source, each with its own input convention.

Meta first: every model is built on the meta device (no memory, no compute) where it allows; one that
cannot be (torchvision's RegNets compute widths with tensors) is built on CPU without initialising its
weights, then moved to meta, and the note says so. `device='cpu'` builds real (uninitialised, then zeroed)
tensors for the counters that execute the model.
"""

from __future__ import annotations

import contextlib
import importlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from flopcheck.specs import SOURCES, ModelSpec, Options, SpecError

DEFAULT_SHAPE = (1, 3, 224, 224)  # a factory's model with no inputs given: one ImageNet image


@dataclass
class Built:
    """A spec's model (eval mode) and the inputs of one forward, with what they are in words."""

    model: nn.Module
    args: tuple
    kwargs: dict
    notes: list[str] = field(default_factory=list)  # one line each: how it was built, what was assumed

    def describe_inputs(self) -> str:
        """'x (1, 3, 224, 224) float32', one per input, positional then keyword."""
        names = _positional_names(self.model, len(self.args))
        named = list(zip(names, self.args)) + list(self.kwargs.items())
        return ", ".join(f"{k} {_describe(v)}" for k, v in named)


def _positional_names(model: nn.Module, n: int) -> list[str]:
    """The names model.forward gives its first n positional parameters ('x'), else arg0, arg1, ..."""
    import inspect

    try:
        params = [
            p.name
            for p in inspect.signature(model.forward).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        params = []
    return [params[i] if i < len(params) else f"arg{i}" for i in range(n)]


def _describe(v: Any) -> str:
    if isinstance(v, torch.Tensor):
        return f"{tuple(v.shape)} {str(v.dtype).removeprefix('torch.')}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_describe(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k} {_describe(x)}" for k, x in v.items()) + "}"
    return repr(v)[:40]


def one_line(err: BaseException) -> str:
    """'TypeError: first line of the message', at most 200 characters of it."""
    return f"{type(err).__name__}: {(str(err).strip().splitlines() or [''])[0][:200]}"


# ---------------------------------------------------------------------------------------------
# Building a module: meta, else CPU without initialising
# ---------------------------------------------------------------------------------------------

_INITS = (
    "uniform_",
    "normal_",
    "trunc_normal_",
    "constant_",
    "ones_",
    "zeros_",
    "eye_",
    "dirac_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "orthogonal_",
    "sparse_",
)


def _left_as_it_is(tensor, *args, **kwargs):
    """An initialiser that does nothing: the tensor as it is."""
    return tensor


@contextlib.contextmanager
def no_init():
    """torch.nn.init's initialisers leave their tensor as it is (a model built for its shapes alone)."""
    saved = {n: getattr(nn.init, n) for n in _INITS if hasattr(nn.init, n)}
    try:
        for n in saved:  # `tensor` by position or by name: torch's own wrappers re-call with tensor=
            setattr(nn.init, n, _left_as_it_is)
        yield
    finally:
        for n, f in saved.items():
            setattr(nn.init, n, f)


def construct(make: Callable[[], Any], device: str, notes: list[str], what: str) -> Any:
    """make() on `device`: meta first; a model that cannot be built there is built on CPU without initialising
    its weights (and moved to meta when meta was asked for), with a note saying so."""
    if device == "meta":
        try:
            with torch.device("meta"):
                return make()
        except Exception as err:  # noqa: BLE001 - any construction failure on meta: try CPU next
            why = one_line(err)
        with no_init():
            out = make()
        notes.append(
            f"{what} cannot be built on meta ({why[:120]}): built on CPU without initialising, then counted on meta"
        )
        return _to_meta(out)
    with no_init(), torch.device(device):
        out = make()
    return out


def _to_meta(out: Any) -> Any:
    if isinstance(out, nn.Module):
        return out.to("meta")
    if isinstance(out, tuple) and out and isinstance(out[0], nn.Module):
        return (out[0].to("meta"), *out[1:])
    return out


def zeroed(model: nn.Module) -> nn.Module:
    """Weights set to 0 (a model built without initialising holds whatever memory it got; values change no count)."""
    if next(iter(model.parameters()), torch.empty(0)).device.type != "meta":
        with torch.no_grad():
            for p in model.parameters():
                p.zero_()
    return model


# ---------------------------------------------------------------------------------------------
# Sources
# ---------------------------------------------------------------------------------------------


def _image_shape(default: tuple[int, ...], o: Options) -> tuple[int, ...]:
    """(B, C, H, W): the model's default, its batch and resolution replaced by the options'; or the input shape."""
    if o.input_shape:
        return tuple(o.input_shape)
    shape = (o.batch, *default[1:])
    if o.resolution:
        shape = (*shape[:-2], o.resolution[1], o.resolution[0])
    return shape


def from_timm(spec: ModelSpec, device: str, notes: list[str]) -> Built:
    """timm.create_model(NAME, pretrained=False); input (B, *pretrained_cfg['input_size']). attn='math' turns
    timm's fused attention off (timm.layers.set_fused_attn) for the build."""
    import timm
    import timm.layers

    name, o = spec.name, spec.options
    _timm_known(name)
    fused = timm.layers.use_fused_attn()
    if o.attn == "math":
        timm.layers.set_fused_attn(False)
        notes.append("timm's fused attention turned off (timm.layers.set_fused_attn(False)): explicit matmuls")
    try:
        model = construct(lambda: timm.create_model(name, pretrained=False), device, notes, spec.text)
    finally:
        timm.layers.set_fused_attn(fused)
    if o.inputs:
        return _given(model, o, device, notes)
    size = tuple(model.pretrained_cfg.get("input_size", DEFAULT_SHAPE[1:]))
    shape = _image_shape((1, *size), o)
    return Built(
        model,
        (torch.empty(shape, device=device),),
        {},
        notes
        + [
            f"input from timm's pretrained_cfg['input_size'] {size}"
            if not (o.resolution or o.input_shape)
            else "input from the options"
        ],
    )


def _timm_known(name: str) -> None:
    """A timm architecture ('convnext_base') or one of its pretrained tags ('convnext_base.fb_in22k_ft_in1k_384',
    the names the Hugging Face hub shows), whose pretrained_cfg can set another input size and head; else
    SpecError with the close names."""
    import difflib

    import timm

    base, dot, tag = name.partition(".")
    if name.startswith("hf-hub:") or name.startswith("hf_hub:"):
        raise SpecError(
            f"timm:{name} loads a config from the Hugging Face hub, which flopcheck does not reach: "
            f"write the model's timm name, like timm:vit_base_patch16_224.augreg2_in21k_ft_in1k"
        )
    if base in timm.list_models() and (not dot or name in timm.list_models(f"{base}.*", pretrained=True)):
        return
    if dot and base in timm.list_models():
        tags = timm.list_models(f"{base}.*", pretrained=True)
        close = difflib.get_close_matches(name, tags, n=5, cutoff=0.6) or tags[:5]
        raise SpecError(
            f"timm's {base} has no pretrained tag {tag!r}"
            + (f"; close: {', '.join(close)}" if tags else "; it has none: write timm:" + base)
        )
    close = (timm.list_models(f"*{base}*")[:5] if base else []) or difflib.get_close_matches(
        base, timm.list_models(), n=5, cutoff=0.8
    )  # '*' alone would match every model
    raise SpecError(
        f"timm has no model {name!r}"
        + (f"; close: {', '.join(close)}" if close else "")
        + "; list them with timm.list_models()"
    )


def torchvision_side(name: str) -> tuple[int, str] | None:
    """The image side of a torchvision model's default weights' transforms and which it is: the crop (inception_v3
    299), else the resize of a model that takes no crop (segmentation: 520, the side its GFLOPS are counted at); or
    None."""
    import torchvision

    try:
        weights = torchvision.models.get_model_weights(name).DEFAULT
    except (ValueError, KeyError):
        return None
    keywords = getattr(weights.transforms, "keywords", {}) or {}
    for key, word in (("crop_size", "crop"), ("resize_size", "resize")):
        side = keywords.get(key)
        if side:
            return int(side[0] if isinstance(side, (list, tuple)) else side), word
    return None


def _vit_image_size(name: str) -> int | None:
    """The image size a torchvision ViT's default weights build it for (their meta's min_size), or None."""
    import torchvision

    try:
        return int(torchvision.models.get_model_weights(name).DEFAULT.meta["min_size"][0])
    except (ValueError, KeyError, IndexError, TypeError):
        return None


def _as_its_weights_build(name: str, builder, notes: list[str]) -> tuple[dict, list[str]]:
    """The builder's keywords that make, without weights, the model its default weights make; and the notes."""
    import inspect

    takes = inspect.signature(builder).parameters
    # detection and segmentation models load an ImageNet backbone unless told not to: no weights, no network
    extra = {"weights_backbone": None} if "weights_backbone" in takes else {}
    size = _vit_image_size(name) if builder.__module__.endswith(".vision_transformer") else None
    if size:  # a ViT's weights set its image size (vit_h_14's default weights: 518; the builder's default is 224)
        extra["image_size"] = size
    if "aux_loss" in takes:  # its weights build the auxiliary head, which runs in eval too (and is in its GFLOPS)
        extra["aux_loss"] = True
        notes = notes + ["its auxiliary classifier built, as its published weights have it (aux_loss=True)"]
    return extra, notes


def _no_input_size(text: str, name: str, model) -> str:
    """Why a torchvision model whose weights state no image size gets no default input, and what to give."""
    import inspect

    import torchvision

    if name in torchvision.models.list_models(module=torchvision.models.detection):
        return (
            f"{text} is a detection model: how many boxes its NMS keeps depends on the image's values, so its "
            f"FLOPs do too and no count on shapes gives them; count a part with fixed shapes (a factory "
            f"returning its backbone)"
        )
    needed = [
        p.name
        for p in inspect.signature(model.forward).parameters.values()
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    fix = (
        f"it takes {len(needed)} inputs ({', '.join(needed)}): give them (--inputs module:fn)"
        if len(needed) > 1
        else "give the input shape (--input-shape)"
    )
    return f"{text}: its weights state no image size, so its input is not known: {fix}"


# torchvision's published GFLOPS (meta["_ops"]) of all nine video weights are per 16-frame clip (r3d_18's 40.697
# is the exact count at (1, 3, 16, 112, 112)), whatever clip_len their accuracy was evaluated with
VIDEO_FRAMES = 16


def from_torchvision(spec: ModelSpec, device: str, notes: list[str]) -> Built:
    """torchvision.models.get_model(NAME, weights=None, ...) as its default weights build it; input (B, 3, side,
    side) from its weights' transforms, (B, 3, frames, side, side) for a video model (16 frames unless --frames)."""
    import torchvision

    name, o = spec.name, spec.options
    if name not in torchvision.models.list_models():
        raise SpecError(f"torchvision has no model {name!r}; list them with torchvision.models.list_models()")
    video = name in torchvision.models.list_models(module=torchvision.models.video)
    if o.frames and not video:
        raise SpecError(f"--frames applies to video models; {spec.text} takes images")
    builder = torchvision.models.get_model_builder(name)
    extra, notes = _as_its_weights_build(name, builder, notes)
    model = construct(lambda: builder(weights=None, **extra), device, notes, spec.text)
    if o.inputs:
        return _given(model, o, device, notes)
    side, word = torchvision_side(name) or (None, "")
    if side is None and not o.input_shape:
        raise SpecError(_no_input_size(spec.text, name, model))
    frames = (o.frames or VIDEO_FRAMES,) if video else ()
    shape = _image_shape((1, 3, *frames, side or 0, side or 0), o)
    note = (
        f"input from its weights' transforms: {word} {side}"
        if not (o.resolution or o.input_shape)
        else "input from the options"
    )
    if video and not o.input_shape:
        note += (
            f", {o.frames} frames (--frames)"
            if o.frames
            else f", {VIDEO_FRAMES} frames (the clip its published GFLOPS are counted on)"
        )
    return Built(model, (torch.empty(shape, device=device),), {}, notes + [note])


# configs published under a legacy class name that newer classes load: DiT-XL/2's and PixArt's say Transformer2DModel
SHARED_CONFIGS = {"Transformer2DModel": ("DiTTransformer2DModel", "PixArtTransformer2DModel")}


def from_diffusers(spec: ModelSpec, device: str, notes: list[str]) -> Built:
    """diffusers.CLASS.from_config(the config file, else the class's own defaults); inputs from the class's
    convention (inputs/diffusers.py), or an autoencoder half's (inputs/vae.py)."""
    from flopcheck.specs.inputs.diffusers import build_inputs
    from flopcheck.specs.inputs.vae import METHODS, vae_inputs

    try:
        import diffusers
    except ImportError:
        raise SpecError(f"{spec.text} needs diffusers: pip install 'flopcheck[diffusers]'") from None

    name, dot, method = spec.name.partition(".")
    cls = getattr(diffusers, name, None)
    if not (isinstance(cls, type) and issubclass(cls, nn.Module)):
        import difflib

        models = {n.lower(): n for n in dir(diffusers) if n.endswith("Model")}
        close = [models[n] for n in difflib.get_close_matches(name.lower(), models, n=3, cutoff=0.8)]
        raise SpecError(
            f"diffusers has no model class {name!r}: "
            + (f"did you mean {', '.join(close)}?" if close else "give a class such as FluxTransformer2DModel")
        )
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
        model.__class__ = type(f"{name}.{method}", (cls,), {"forward": getattr(cls, method)})
    if spec.options.inputs:
        return _given(model, spec.options, device, notes)
    if method:
        args, kwargs, words = vae_inputs(name, model, method, spec.options, device)
    else:
        args, kwargs, words = build_inputs(name, model, spec.options, device)
    return Built(model, args, kwargs, notes + [words])


def from_zoo(spec: ModelSpec, device: str, notes: list[str]) -> Built:
    """The zoo entry's own spec (flopcheck.zoo), built as that spec is, with the zoo spec's batch; the notes say
    which spec it is."""
    from flopcheck.specs import parse, zoo_entry

    e = zoo_entry(spec.name)
    built = build(parse(e.spec, batch=spec.options.batch, **e.options_given()), device)
    built.notes.insert(0, f"zoo:{e.name} is {e.spec}" + "".join(f", {k} {v}" for k, v in e.options.items()))
    return built


def from_transformers(spec: ModelSpec, device: str, notes: list[str]) -> Built:
    """transformers.CLASS(CLASS.config_class.from_dict(the config file, else {})): no hub, no weights, no remote code (a
    config with auto_map names code to download and is refused); inputs: input_ids of zeros (a valid id of every
    vocabulary), S tokens."""
    try:
        import transformers
    except ImportError:
        raise SpecError(f"{spec.text} needs transformers: pip install 'flopcheck[diffusers]'") from None
    from flopcheck.specs.inputs.text import text_inputs

    cls = getattr(transformers, spec.name, None)
    if not (isinstance(cls, type) and issubclass(cls, transformers.PreTrainedModel)):
        import difflib

        models = {n.lower(): n for n in dir(transformers) if n.endswith("Model")}
        close = [models[n] for n in difflib.get_close_matches(spec.name.lower(), models, n=3, cutoff=0.8)]
        raise SpecError(
            f"transformers has no model class {spec.name!r}: "
            + (f"did you mean {', '.join(close)}?" if close else "give a class such as T5EncoderModel")
        )
    path = spec.options.config
    config = read_config(path) if path else {}
    where = path or f"the defaults of {spec.name}'s config (transformers {transformers.__version__})"
    try:
        cfg = cls.config_class.from_dict({k: v for k, v in config.items() if not k.startswith("_")})
        model = construct(lambda: cls(cfg), device, notes, spec.text)
    except (TypeError, ValueError, KeyError, AttributeError) as err:
        raise SpecError(f"{spec.text} cannot be built from {where}: {one_line(err)}") from None
    if not path:
        notes.append(f"config: {where}; give the published config.json with --config FILE for another size")
    if spec.options.inputs:
        return _given(model, spec.options, device, notes)
    args, kwargs, words = text_inputs(spec.name, model, spec.options, device)
    return Built(model, args, kwargs, notes + [words])


def read_config(path: str) -> dict:
    """A config.json as a dict; a missing or malformed file, or one with auto_map (code to download: diffusers' and
    transformers' alike), is one line."""
    try:
        with open(path) as f:
            config = json.load(f)
    except json.JSONDecodeError as err:
        raise SpecError(f"--config {path}: not JSON ({err.msg} at line {err.lineno}): give a config.json") from None
    if not isinstance(config, dict):
        raise SpecError(f"--config {path}: a config.json is one JSON object, got a {type(config).__name__}")
    if "auto_map" in config:
        raise SpecError(
            f"--config {path} has auto_map: it names code to download and run, which flopcheck never does "
            f"(no trust_remote_code); give a config of a class diffusers or transformers ships"
        )
    return config


def from_factory(spec: ModelSpec, device: str, notes: list[str]) -> Built:
    """package.module:factory: factory() returns the model, or (model, args) or (model, args, kwargs); inputs
    from --inputs module:fn (fn(model) -> args or (args, kwargs)), else --input-shape, else one 1x3x224x224."""
    o = spec.options
    out = construct(lambda: _call(spec.text), device, notes, spec.text)
    model, args, kwargs = _unpack(out, spec.text, "factory")
    if o.inputs:
        return _given(model, o, device, notes)
    if args is not None and o.input_shape:
        raise SpecError(
            f"{spec.text} returns its own inputs, so --input-shape would be ignored: drop it, or let the "
            f"factory return the model alone"
        )
    if args is None:
        shape = tuple(o.input_shape or (o.batch, *DEFAULT_SHAPE[1:]))
        args, kwargs = (torch.empty(shape, device=device),), {}
        notes.append(
            "inputs given by the input shape"
            if o.input_shape
            else f"no inputs given: one tensor {shape} assumed (give --input-shape, or --inputs module:fn)"
        )
    else:
        notes.append("inputs from the factory")
    return Built(model, tuple(args), dict(kwargs or {}), notes)


def _call(text: str) -> Any:
    """Import 'package.module' and call its attribute 'factory' with no arguments."""
    module, _, name = text.partition(":")
    try:
        fn = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as err:
        raise SpecError(f"cannot import {text!r}: {one_line(err)}; is the module on the path?") from None
    return fn()


def _unpack(out: Any, text: str, what: str) -> tuple[nn.Module, tuple | None, dict | None]:
    """(model, args, kwargs) from what a factory returned: a module, or (module, args[, kwargs])."""
    if isinstance(out, tuple) and out and isinstance(out[0], nn.Module) and len(out) in (2, 3):
        args = out[1] if isinstance(out[1], (tuple, list)) else (out[1],)
        kwargs = out[2] if len(out) == 3 else {}
        if not isinstance(kwargs, dict):
            raise SpecError(f"{text}: the {what}'s third value must be a dict of keyword inputs")
        return out[0], tuple(args), kwargs
    if not isinstance(out, nn.Module):
        raise SpecError(
            f"model {text!r} gave a {type(out).__name__}, not a torch.nn.Module: point it at a function "
            f"that returns the model, or (model, args, kwargs)"
        )
    return out, None, None


def _given(model: nn.Module, o: Options, device: str, notes: list[str]) -> Built:
    """The model with the inputs --inputs module:fn makes for it, whatever the source's own would be."""
    return Built(model, *_inputs_of(o.inputs, model, device), notes + [f"inputs from {o.inputs}"])


def _inputs_of(text: str, model: nn.Module, device: str) -> tuple[tuple, dict]:
    """fn(model) of an --inputs spec, on `device`: args, or (args, kwargs)."""
    module, _, name = text.partition(":")
    if not name:
        raise SpecError(f"--inputs {text!r}: write package.module:function")
    try:
        fn = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as err:
        raise SpecError(f"cannot import --inputs {text!r}: {one_line(err)}") from None
    try:
        with torch.device(device):
            out = fn(model)
    except Exception as err:  # noqa: BLE001 - the user's input builder: one line
        raise SpecError(
            f"--inputs {text!r} failed: {one_line(err)}; flopcheck calls it as {name}(model) and "
            f"it returns the forward's args, or (args, kwargs)"
        ) from None
    if isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], dict):
        args = out[0] if isinstance(out[0], (tuple, list)) else (out[0],)
        return tuple(args), out[1]
    return (tuple(out) if isinstance(out, (tuple, list)) else (out,)), {}


def bound(built: Built) -> tuple[nn.Module, tuple]:
    """(model, args) such that model(*args) runs the built forward: keyword inputs are bound into the model's own
    forward (an instance attribute, so module paths and hooks stay as they are), and its signature keeps the
    positional names, for libraries that call model(**named inputs)."""
    import functools
    import inspect

    model, args, kwargs = built.model, built.args, built.kwargs
    if not kwargs:
        return model, args
    own = type(model).forward.__get__(model)
    params = [p for p in inspect.signature(own).parameters.values() if p.name not in kwargs][: len(args)]

    @functools.wraps(own)
    def forward(*a, **k):
        return own(*a, **{**kwargs, **k})

    forward.__signature__ = inspect.Signature(params)
    forward.bound_kwargs = kwargs  # type: ignore[attr-defined]  # for a library that needs some input to call with
    model.forward = forward
    return model, args


# what a forward counted in the factory's train mode says (a training step is train mode whatever: not said there)
TRAIN_MODE_NOTE = (
    "counted in train mode, as the factory returned it: no eval-only fast path (MultiheadAttention's fused "
    "kernel) runs, and every counter sees the model so; call .eval() in the factory to count inference"
)


def build(spec: ModelSpec, device: str = "meta") -> Built:
    """The spec's model (weights zeroed off meta) and inputs; a library's model in eval mode, a factory's in the mode
    it returned (its user's: train mode takes no eval-only fast path, and the notes say so). Its code's failures are
    SpecErrors."""
    notes: list[str] = []
    try:
        module, _, name = SOURCES[spec.source].build.partition(":")
        built = getattr(importlib.import_module(module), name)(spec, device, notes)
    except SpecError:
        raise
    except Exception as err:  # noqa: BLE001 - whatever the user's or the library's code raised: one line
        raise SpecError(f"cannot build model {spec.text!r}: {one_line(err)}") from None
    if spec.source not in ("module", "zoo"):  # a zoo entry was built as its own spec: its mode is that spec's
        built.model.eval()
    elif built.model.training:
        built.notes.append(TRAIN_MODE_NOTE)
    built.model = zeroed(built.model)
    if spec.options.blocks:
        _keep_blocks(built.model, spec.options.blocks, spec.text)
    return built


def _keep_blocks(model: nn.Module, n: int, what: str) -> None:
    """A stand-in of the model: its one list of repeated blocks cut to the first n (each block maps its input to an
    output of the same shape, so the forward runs as before, n blocks deep)."""
    from flopcheck.specs.blocks import block_lists

    lists = block_lists(model)
    if len(lists) != 1 or lists[0].count < n:
        found = ", ".join(f"{b.path} ({b.count} x {b.type_name})" for b in lists) or "none"
        raise SpecError(f"{what}: a stand-in of {n} blocks needs one list of at least {n} blocks; found {found}")
    parent_path, _, name = lists[0].path.rpartition(".")
    parent = model.get_submodule(parent_path) if parent_path else model
    blocks = getattr(parent, name)
    setattr(
        parent,
        name,
        type(blocks)(*list(blocks)[:n]) if isinstance(blocks, nn.Sequential) else type(blocks)(list(blocks)[:n]),
    )
