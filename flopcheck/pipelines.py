"""A whole diffusers pipeline, counted per stage as its own defaults run it: the text encoders on the prompt (and the
negative prompt under CFG), the denoiser over the steps (twice per step under CFG), the VAE's decode once.

A pipeline is a list of components, each one model spec (`transformers:CLASS`, `diffusers:CLASS`,
`diffusers:CLASS.decode`) with its published config and how many times a generation calls it. The shipped ones are
in flopcheck/data/pipelines/NAME.json, each config's public source beside it. Each component is counted exactly, once,
in a child process like every spec, and multiplied by its calls.
"""

from __future__ import annotations

import argparse
import difflib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flopcheck import checks
from flopcheck.errors import InputError
from flopcheck.fmt import commas, si, table
from flopcheck.gpus import get_gpu
from flopcheck.sent import json_sent
from flopcheck.specs import ModelSpec, SpecError, parse
from flopcheck.specs.config import read_config
from flopcheck.types import Unit

PREFIX = "diffusers-pipeline:"
DATA = Path(__file__).resolve().parent / "data"
# how many batch-1 forwards of a component one generation runs, by its role: (steps, cfg, images per prompt) -> calls.
# Each is exactly that many times one forward's FLOPs: no op mixes the samples of a batch
CALLS: dict[str, Callable[[int, bool, int], int]] = {
    "prompt": lambda steps, cfg, images: 2 if cfg else 1,  # the negative prompt too under CFG; repeated per image
    "prompt alone": lambda steps, cfg, images: 1,  # a prompt encoded unlike its negative (SANA's instruction)
    "negative prompt": lambda steps, cfg, images: 1 if cfg else 0,  # ... and that negative prompt, under CFG only
    "steps": lambda steps, cfg, images: steps * (2 if cfg else 1) * images,  # CFG: a batch of two
    "once": lambda steps, cfg, images: images,  # the decode of every image's latent
}


def is_pipeline(text: str) -> bool:
    """'diffusers-pipeline:NAME': a whole pipeline, not one model."""
    return text.startswith(PREFIX)


@dataclass(frozen=True)
class Stage:
    """One component of a pipeline: its stage, its spec and input, its calls per generation and one call's FLOPs."""

    stage: str
    component: str
    spec: str
    inputs: str
    calls: int
    per_call: int
    complete: bool

    @property
    def flops(self) -> int:
        """FLOPs of all its calls in one generation."""
        return self.calls * self.per_call


@dataclass(frozen=True)
class PipelineCount:
    """A pipeline's count per stage and in total, in FLOPs."""

    name: str
    pipeline_class: str
    resolution: tuple[int, int]
    steps: int
    cfg: bool
    note: str
    stages: tuple[Stage, ...]
    frames: int | None = None  # a video pipeline's pixel frames
    images: int = 1  # images (or videos) per prompt: num_images_per_prompt

    @property
    def total(self) -> int:
        return sum(s.flops for s in self.stages)

    def by_stage(self) -> dict[str, int]:
        """FLOPs per stage ('encode prompt', 'denoise', 'decode'), in the pipeline's order."""
        out: dict[str, int] = {}
        for s in self.stages:
            out[s.stage] = out.get(s.stage, 0) + s.flops
        return out

    @property
    def exit_code(self) -> int:
        return 0 if all(s.complete for s in self.stages) else 1

    @property
    def headline(self) -> str:
        """'FLUX.1-dev (FluxPipeline) at 1024x1024 px, 28 steps, no CFG'."""
        w, h = self.resolution
        frames = f" x {self.frames} frames" if self.frames else ""
        images = f", {self.images} {'videos' if self.frames else 'images'} per prompt" if self.images > 1 else ""
        return (
            f"{self.name} ({self.pipeline_class}) at {w}x{h} px{frames}, {self.steps} steps, "
            + ("CFG (x2)" if self.cfg else "no CFG")
            + images
        )

    def to_text(self) -> str:
        head = f"{self.headline}: {self.note}"
        rows = [
            [s.stage, s.component, s.spec, str(s.calls), commas(s.per_call), commas(s.flops), s.inputs]
            for s in self.stages
        ]
        header = ["stage", "component", "spec", "calls", "FLOPs per call", "FLOPs", "input"]
        stages = ", ".join(f"{k} {si(v)}" for k, v in self.by_stage().items())
        total = f"total: {commas(self.total)} FLOPs = {si(self.total)} = {si(self.total, Unit.MAC)} ({stages})"
        missing = [s.component for s in self.stages if not s.complete]
        tail = [f"incomplete: {', '.join(missing)} (an op with multiply-adds has no formula)"] if missing else []
        return "\n".join([head, "", table(rows, header, right={3, 4, 5}), "", total, *tail])

    def to_data(self) -> dict[str, Any]:
        return {
            "pipeline": self.name,
            "pipeline_class": self.pipeline_class,
            "resolution": list(self.resolution),
            "frames": self.frames,
            "images_per_prompt": self.images,
            "steps": self.steps,
            "cfg": self.cfg,
            "note": self.note,
            "unit": "FLOP",
            "stages": [
                {
                    "stage": s.stage,
                    "component": s.component,
                    "spec": s.spec,
                    "inputs": s.inputs,
                    "calls": s.calls,
                    "flops_per_call": s.per_call,
                    "flops": s.flops,
                    "complete": s.complete,
                }
                for s in self.stages
            ],
            "by_stage": self.by_stage(),
            "total_flops": self.total,
        }


@dataclass(frozen=True)
class PipelineEstimate:
    """A pipeline's stages timed on a GPU at one MFU: seconds = FLOPs / (MFU x the GPU's dense BF16 peak)."""

    count: PipelineCount
    gpu: str
    peak: float  # FLOP/s
    mfu: float

    def seconds(self, flops: int) -> float:
        return flops / (self.mfu * self.peak)

    @property
    def exit_code(self) -> int:
        return self.count.exit_code

    def to_text(self) -> str:
        c = self.count
        rows = [[stage, si(f), f"{self.seconds(f):.3f} s"] for stage, f in c.by_stage().items()]
        rows.append(["generation", si(c.total), f"{self.seconds(c.total):.3f} s"])
        head = (
            f"{c.headline}, on {self.gpu} at MFU {self.mfu:g} ({self.peak / 1e12:g} TFLOP/s dense BF16 peak; one MFU "
            f"for every stage: a text encoder or a VAE usually runs below the denoiser's)"
        )
        return "\n".join([head, "", table(rows, ["stage", "FLOPs", "time"], right={1, 2})])

    def to_data(self) -> dict[str, Any]:
        c = self.count
        return {
            **c.to_data(),
            "gpu": self.gpu,
            "mfu": self.mfu,
            "seconds_by_stage": {k: self.seconds(v) for k, v in c.by_stage().items()},
            "seconds": self.seconds(c.total),
        }


def estimate_pipeline(text: str, gpu: str, mfu: float, **options: Any) -> PipelineEstimate:
    """The pipeline's count (count_pipeline's options) timed per stage on `gpu` at `mfu`."""
    checks.fraction("mfu", mfu)  # 0 would divide by zero, -0.5 give negative seconds
    g = get_gpu(checks.text("gpu", gpu, "'H100'"))
    return PipelineEstimate(count_pipeline(text, **options), g.name, g.peak, mfu)


def conventions(cls: str | None) -> dict[str, Any]:
    """The shipped pipeline that runs pipeline class `cls` at its own __call__ defaults (steps, CFG, resolution,
    frames, each role's calls and text tokens): a published folder of that class runs as it does. FLUX.1-schnell runs
    its model card's call instead (_class_defaults false); the Wan2.1 pair share theirs."""
    pipelines = {name: read(name) for name in shipped()}
    for name, p in pipelines.items():
        if p["_class_name"] == cls and p.get("_class_defaults", True):
            return {**p, "_note": f"{p['_note']} (the conventions of the shipped {name})"}
    known = sorted({p["_class_name"] for p in pipelines.values()})
    raise SpecError(
        f"flopcheck knows no conventions for {cls!r} (steps, CFG, text tokens): give a folder of one of "
        f"{', '.join(known)}, or count its components as specs"
    )


def sample_resolution(folder: Path, keys: list[str]) -> list[int]:
    """[width, height] as PixArt's, SD3's and CogVideoX's pipelines default them: the folder's transformer config's
    sample size (keys: width's, height's) x the VAE's stride, 2^(len(block_out_channels) - 1)."""
    paths = [folder / role / "config.json" for role in ("transformer", "vae")]
    transformer, vae = [read_config(str(p)) if p.is_file() else {} for p in paths]
    size = [transformer.get(k) for k in keys]
    blocks = vae.get("block_out_channels")
    if not (all(type(v) is int and v > 0 for v in size) and isinstance(blocks, list) and blocks):
        raise SpecError(
            f"{folder}: its transformer's {' and '.join(dict.fromkeys(keys))} and its VAE's block_out_channels give "
            f"the pipeline's default size: give a folder whose configs have them as whole numbers above 0 (got {size})"
        )
    return [v * 2 ** (len(blocks) - 1) for v in size]


# the stages a pipeline cannot run without (a text encoder may be left out: SD3 without its T5), in words
REQUIRED = {"denoise": "denoiser, run every step", "decode": "VAE, which decodes the image"}


def from_folder(folder: Path) -> dict[str, Any]:
    """A folder laid out as a published diffusers pipeline (model_index.json, each component's config.json, no
    weights) as a pipeline description: its class's conventions, each component's class from model_index.json."""
    try:  # someone else's folder: its model_index.json a plain file of bounded size and depth (a FIFO would block)
        index = json_sent(folder / "model_index.json", "a pipeline folder (model_index.json and each config.json)")
    except InputError as err:
        raise SpecError(str(err)) from None
    if not isinstance(index, dict):
        raise SpecError(f"{folder}: its model_index.json is a {type(index).__name__}, not one JSON object")
    conv = conventions(index.get("_class_name"))
    components, missing = {}, []
    for key, c in conv["components"].items():
        role = c.get("role", key)  # SANA's text encoder runs twice, on the prompt and on the negative prompt
        entry = index.get(role)
        if entry in (None, [None, None]):
            missing += [f"{role!r}, its {REQUIRED[c['stage']]}"] if c["stage"] in REQUIRED else []
            continue  # a component the pipeline leaves out (SD3 without its T5)
        if not (isinstance(entry, list) and len(entry) == 2 and all(isinstance(x, str) for x in entry)):
            raise SpecError(
                f"{folder}: model_index.json's {role!r} is {json.dumps(entry)}: give [library, class], as "
                f'["diffusers", "AutoencoderKL"]'
            )
        library, name = entry
        if library not in ("diffusers", "transformers"):
            raise SpecError(f"{folder}: {role} is {library}.{name}: flopcheck builds diffusers and transformers models")
        config = folder / role / "config.json"
        if not config.is_file():
            raise SpecError(f"{folder}: {role} has no config.json: give the folder as published (configs, no weights)")
        half = c["spec"].partition(".")[2]  # the autoencoder's decode
        spec = f"{library}:{name}" + (f".{half}" if half else "")
        components[key] = {**c, "spec": spec, "config": str(config)}
    if missing:
        raise SpecError(
            f"{folder}: model_index.json has no {' and no '.join(missing)}: a pipeline without it is not this "
            f"pipeline; give the folder as published, or count its components as specs"
        )
    if conv.get("_resolution_from"):  # the class's default size is its transformer's sample size x the VAE's stride
        conv = {**conv, "resolution": sample_resolution(folder, conv["_resolution_from"])}
    return {**conv, "components": components}


def shipped() -> list[str]:
    """The pipelines flopcheck ships (data/pipelines/): FLUX.1-dev and -schnell, SD3-medium, PixArt-alpha and -Sigma,
    SANA, CogVideoX-5B, Wan2.1-T2V-1.3B and -14B, LTX-Video, HunyuanVideo."""
    return sorted(p.stem for p in (DATA / "pipelines").glob("*.json"))


def read(name: str) -> dict[str, Any]:
    """A shipped pipeline's description, or a pipeline folder's; an unknown name is one line listing the shipped
    ones."""
    if name.strip() and Path(name).is_dir():  # a folder: relative to where flopcheck runs, as any path given
        return from_folder(Path(name).resolve())
    path = DATA / "pipelines" / f"{name}.json"
    if name not in shipped():  # a name, not a path into the package's data
        close = difflib.get_close_matches(name.upper(), [n.upper() for n in shipped()], n=1, cutoff=0.8)
        mean = next((f"did you mean {n}? " for n in shipped() if close and n.upper() == close[0]), "")
        raise SpecError(
            f"flopcheck ships no pipeline {name!r}: {mean}give one of {', '.join(shipped())}, or a pipeline folder "
            f"(model_index.json and each component's config.json)"
        )
    description: dict[str, Any] = json.loads(path.read_text())
    return description


# flags a pipeline does not read (its components' inputs follow from the pipeline's own): refused, never ignored
NOT_READ: tuple[str, ...] = (
    "config",
    "inputs",
    "input_shape",
    "text_tokens",
    "input_size",
    "space",
    "attn",
    "training",
    "freeze",
)
NOT_READ += ("checkpoint", "optimizer", "attn_kernel")  # a training step's: a pipeline is inference


def options(args: argparse.Namespace) -> dict[str, Any]:
    """The command's flags a pipeline count reads (--resolution, --frames, --steps, --cfg, --batch: images per
    prompt, --timeout); another one given is one line."""
    if getattr(args, "device", "meta") != "meta":  # each component is counted on meta, in its child
        raise SpecError("--device does not apply to a pipeline: each component is counted on meta (its shapes)")
    for name in NOT_READ:
        if getattr(args, name, None) not in (None, False, [], ""):
            raise SpecError(
                f"--{name.replace('_', '-')} does not apply to a pipeline: its components' inputs are the pipeline's "
                f"(give --resolution, --frames, --steps, --cfg or --batch), or count a component as its own spec"
            )
    return {
        "resolution": args.resolution,
        "frames": args.frames,
        "steps": args.steps,
        "cfg": args.cfg or None,
        "images": getattr(args, "batch", None),
        "timeout_s": args.timeout,
    }


def component_specs(
    p: dict[str, Any], resolution: tuple[int, int], frames: int | None = None
) -> list[tuple[str, dict[str, Any], ModelSpec]]:
    """(component, its description, its ModelSpec) for each component of pipeline description p: a diffusers one at
    the pipeline's resolution and frames (given, else its own), a text encoder on its text tokens; batch 1."""
    specs: list[tuple[str, dict[str, Any], ModelSpec]] = []
    for component, c in p["components"].items():
        given = {"config": str(DATA / c["config"]), "text_tokens": c.get("text_tokens")}  # a folder's: absolute
        if c["spec"].startswith("diffusers:"):
            given["resolution"] = resolution
            given["frames"] = frames or p.get("frames")
        specs.append((component, c, parse(c["spec"], **given)))
    return specs


def count_pipeline(
    text: str,
    resolution: tuple[int, int] | None = None,
    frames: int | None = None,
    steps: int | None = None,
    cfg: bool | None = None,
    images: int | None = None,
    timeout_s: float | None = None,
) -> PipelineCount:
    """'diffusers-pipeline:NAME' counted per component at the pipeline's defaults, any of which the arguments
    replace (images: per prompt, 1 by default): each component counted once, exactly, at batch 1, and multiplied by
    its calls."""
    from flopcheck.specs.child import measure_all, measured  # lazy: torch-free door (its child imports torch)

    for what, value in (("steps", steps), ("images", images), ("frames", frames)):
        checks.maybe(checks.whole, what, value)
    checks.maybe_switch("cfg", cfg)  # cfg='no' is not False: refused, never read as on
    checks.maybe(checks.seconds, "timeout_s", timeout_s)
    name = text.removeprefix(PREFIX)
    p = read(name)
    res = tuple(resolution or p["resolution"])
    steps = steps or p["steps"]
    cfg = p["cfg"] if cfg is None else cfg
    specs = component_specs(p, res, frames)
    measure_all([s for _, _, s in specs], timeout_s)
    stages = []
    for component, c, spec in specs:
        m = measured(spec, timeout_s)
        stages.append(
            Stage(
                c["stage"],
                component,
                spec.text,
                m.notes[-1] if m.notes else m.inputs,
                CALLS[c["calls"]](steps, cfg, images or 1),
                m.exact.total,
                m.exact.complete,
            )
        )
    video = frames or p.get("frames")
    return PipelineCount(name, p["_class_name"], res, steps, cfg, p["_note"], tuple(stages), video, images or 1)


__all__ = [
    "PREFIX",
    "PipelineCount",
    "is_pipeline",
    "PipelineEstimate",
    "Stage",
    "count_pipeline",
    "estimate_pipeline",
    "shipped",
]
