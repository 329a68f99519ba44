"""The command line's flags: one table (FLAGS), their argparse types (a whole number, seconds, a fraction: bad text
names the flag), and how a command takes the ones it names."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from flopcheck import checks
from flopcheck.gpus import DTYPES
from flopcheck.types import ModelPart, Recompute, Space
from reference_models.configs import ATTN_PATHS

SPEC_HELP = (
    "a reference model (DiT-XL/2, FLUX.1-dev), a language model by name (Llama-3-8B, DeepSeek-V3: list-models "
    "'lm:*'), timm:NAME, torchvision:NAME, diffusers:CLASS or transformers:CLASS [--config FILE], or "
    "package.module:factory"
)


def _checked(kind: Callable[[str], Any], rule: checks.Rule) -> Callable[[str], object]:
    """An argparse type: the text as `kind` (1_000 allowed) when the rule of flopcheck.checks holds (the one the
    Python doors ask too), else an error saying what is wanted."""

    def parse(text: str) -> Any:
        try:
            value = kind(text.replace("_", ""))
        except (ValueError, OverflowError):
            value = None
        if not rule.holds(value):
            raise argparse.ArgumentTypeError(f"must be {rule.what}, got {text[:40]!r}")
        return value

    return parse


MAX_WHOLE = checks.MAX_WHOLE
# sizes, batches, steps, frames, workers
whole = _checked(int, checks.WHOLE)
seconds = _checked(float, checks.SECONDS)
fraction = _checked(float, checks.FRACTION)
share = _checked(float, checks.SHARE)
count = _checked(lambda t: int(t) if t.isdigit() else int(float(t)), checks.COUNT)


def _claims_type(name: str) -> Callable[[str], object]:
    """The claims' parser `name` (parse_resolution: '1280x720' -> (1280, 720); parse_shape: '1,3,224,224') as an
    argparse type: bad text names the flag."""

    def parse(text: str) -> Any:
        from flopcheck.auditor import claims  # lazy: door start-up (a verb loads its machinery when run)

        try:
            return getattr(claims, name)(text)
        except claims.ClaimError as err:
            raise argparse.ArgumentTypeError(str(err)) from None

    return parse


# Flags: one table; each command names the flags it takes (and adds any it takes its own way)
PATTERN = {"action": "append", "metavar": "PATTERN"}
FLAGS: dict[str, dict[str, Any]] = {
    "input-size": dict(type=whole, help="DiT: latent side (pixel side with --space pixel); sets T"),
    "resolution": dict(
        type=_claims_type("parse_resolution"), help="pixels: 256 or WxH like 1280x720 (DiT: square, /8 = latent side)"
    ),
    "frames": dict(type=whole, help="video models: pixel frames, 4k+1 (Wan 81, CogVideoX 49, Hunyuan 129)"),
    "attn": dict(choices=[a.value for a in ATTN_PATHS], help="attention path (default: the model's, sdpa)"),
    "space": dict(choices=[s.value for s in Space], help="pixel: 3 channels, no VAE"),
    "batch": dict(type=whole, help="samples per forward (a pipeline: images per prompt; default 1)"),
    "config": dict(
        help="diffusers:CLASS, transformers:CLASS: a published config.json or a shipped one by name (llama-3-8b; no "
        "weights read); none: the class's defaults"
    ),
    "inputs": dict(metavar="MODULE:FN", help="package.module:fn, fn(model) -> args or (args, kwargs)"),
    "input-shape": dict(type=_claims_type("parse_shape"), help="one input tensor's shape, e.g. 1,3,224,224"),
    "text-tokens": dict(
        type=whole,
        help="a language model's sequence length (default: its max_position_embeddings); diffusers: text-encoder "
        "tokens (default: the pipeline's)",
    ),
    "steps": dict(
        type=whole, help="sampling steps (forward x S; default 1, a pipeline's own); --training: optimizer steps"
    ),
    "cfg": dict(action="store_true", help="classifier-free guidance: two forwards per step (batch x2)"),
    "training": dict(action="store_true", help="one training step: forward + backward on meta, beside 3 x forward"),
    "freeze": dict(**PATTERN, help="with --training: modules whose weights do not train, by path ('blocks.*')"),
    "checkpoint": dict(**PATTERN, help="with --training: modules under activation checkpointing, recomputed"),
    "optimizer": dict(choices=("adamw", "sgd", "none"), help="with --training: the optimizer counted apart (adamw)"),
    "attn-kernel": dict(
        choices=("flash", "efficient", "cudnn", "math"),
        help="the kernel executed FLOPs follow: a training step's (flash if fused), a masked attention's (flash tiles)",
    ),
    "generate": dict(type=whole, metavar="N", help="causal LMs: N decode steps with a KV cache after the prompt"),
    "prompt-tokens": dict(
        type=whole, metavar="P", help="with --generate: the prompt's tokens (default: the forward's)"
    ),
    "device": dict(default="meta", help="where the exact count runs (default meta: no compute)"),
    "counter": dict(action="append", help="a counter to run (repeatable; default: all)"),
    "formula": dict(action="append", metavar="NAME", help="a published formula to explain (repeatable; all: each)"),
    "timeout": dict(type=seconds, default=600.0, help="seconds per model and counter (default 600)"),
    "json": dict(action="store_true", help="JSON with full integers"),
    "markdown": dict(action="store_true", help="a Markdown table"),
    "gpu": dict(default="H100", help="a GPU of flopcheck/data/gpus.yaml: H100, H200, A100, B200, MI300X, TPU-v3, ..."),
    "gpus": dict(type=whole, help="GPUs (TPU chips) the run used: a rate of the whole job is divided among them"),
    "dtype": dict(choices=DTYPES, help="the dtype whose dense peak a utilization is of (default bf16)"),
    "throughput": dict(help="a measured throughput: '3.1 it/s' (with --batch), '1,350 img/s', '2,900 tokens/s/GPU'"),
    "tokens": dict(type=count, help="a language model's run: the tokens it trained on, like 2e12"),
    "recompute": dict(
        choices=[r.value for r in Recompute], help="the run's activation recompute, what its HFU counts (no default)"
    ),
    "mfu": dict(type=fraction, default=0.45, help="model FLOPs utilisation at batch 1 (default 0.45)"),
    "file": dict(help="a YAML list of claims (see claims/)"),
    "model": dict(help=SPEC_HELP),
    "part": dict(choices=[p.value for p in ModelPart], help="what the number covers"),
    "omission-limit": dict(type=share, help="the share of the multiply-adds a reading may leave out and pass (0.10)"),
    "no-counters": dict(action="store_true", help="judge against the formula and exact-count readings only"),
    "allow-code": dict(action="store_true", help="--file: run the code its entries name (refused without it)"),
    "measure": dict(action="store_true", help="reconcile every counter on DiT-S/2 and name who does what"),
    "sweep": dict(action="store_true", help="also count at four sizes and judge from totals alone"),
    "out": dict(default="reports", help="folder to write (default reports/)"),
    "models": dict(help="a shell pattern of reference models, or a comma list of them and specs (default DiT-*)"),
    "sweeps": dict(action="append", dest="sweeps", metavar="MODEL=S1,S2,S3", help="a T-sweep (repeatable)"),
    "no-sweep": dict(action="store_true", help="no T-sweeps"),
    "workers": dict(type=whole, help="models counted in parallel (default 2)"),
    "from": dict(dest="from_json", metavar="RESULTS_JSON", help="render an existing results.json, counting nothing"),
}
MODEL_FLAGS = "input-size resolution frames attn space batch config inputs input-shape text-tokens"
TRAINING_FLAGS = "steps cfg training freeze checkpoint attn-kernel generate prompt-tokens"


def add_flags(p: argparse.ArgumentParser, *names: str, **changed: dict[str, Any]) -> None:
    """Add the named flags from FLAGS (each string a space-separated list), with a command's own changes
    (`attn={'action': 'append'}`)."""
    for name in (n for group in names for n in group.split()):
        flag = "--sweep" if name == "sweeps" else f"--{name}"  # report's --sweep MODEL=..., reconcile's a switch
        p.add_argument(flag, **{**FLAGS[name], **changed.get(name.replace("-", "_"), {})})


def add_model(p: argparse.ArgumentParser, default: str | None, *names: str, **changed: dict[str, Any]) -> None:
    """A command on one model: the model, the flags that build its input, and `names`."""
    default_words = default or "DiT-S/2, both attention paths"
    p.add_argument("model", nargs="?", default=default, help=f"{SPEC_HELP} (default {default_words})")
    add_flags(p, MODEL_FLAGS, *names, **changed)
