"""The `flopcheck` command: `main(argv) -> exit code`; 0 ok, 1 a disagreement, 2 bad input. Each command parses,
resolves its model once (flopcheck.subject), calls one library function and prints one result, whose exit code it
returns. With no arguments it runs its built-in default, `flopcheck count DiT-XL/2`."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from typing import Any, NoReturn, Protocol

from flopcheck.errors import bad_input
from flopcheck.gpus import DTYPES
from flopcheck.render import to_json
from flopcheck.specs import parse
from flopcheck.subject import Subject, subject_of
from flopcheck.types import Scope
from reference_models.configs import ATTN_PATHS

DEFAULT_MODEL = "DiT-XL/2"
SPEC_HELP = "a reference model, timm:NAME, torchvision:NAME, diffusers:CLASS [--config FILE] or package.module:factory"


class UsageError(Exception):
    """Bad input: printed as one line on stderr, exit code 2."""


class Parser(argparse.ArgumentParser):
    """argparse, but an error is a UsageError: one line naming the flag (and its choices), not the usage block."""

    def error(self, message: str) -> NoReturn:
        command = self.prog.removeprefix("flopcheck").strip()
        raise UsageError(f"{command}: {message}" if command else message)


def _checked(kind: Callable[[str], Any], ok: Callable[[Any], bool], what: str) -> Callable[[str], object]:
    """An argparse type: the text as `kind` (1_000 allowed) when ok(value) and finite, else an error saying what is
    wanted."""

    def parse(text: str) -> Any:
        try:
            value = kind(text.replace("_", ""))
            if not (math.isfinite(value) and ok(value)):
                raise ValueError(text)
        except (ValueError, OverflowError):
            raise argparse.ArgumentTypeError(f"{what}, got {text[:40]!r}") from None
        return value

    return parse


MAX_WHOLE = 2**31 - 1  # a size, batch, step or frame count past this is a typo (and would overflow a meta tensor)
# sizes, batches, steps, frames, workers
whole = _checked(int, lambda v: 1 <= v <= MAX_WHOLE, f"must be a whole number from 1 to {MAX_WHOLE:,}")
seconds = _checked(float, lambda v: v > 0, "must be a positive number of seconds")
fraction = _checked(float, lambda v: 0 < v <= 1, "must be a fraction in (0, 1], like 0.45")
share = _checked(float, lambda v: 0 <= v < 1, "must be a fraction in [0, 1), like 0.10")
count = _checked(lambda t: int(t) if t.isdigit() else int(float(t)), lambda v: v >= 1, "must be a whole number >= 1")


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
    "space": dict(choices=("latent", "pixel"), help="pixel: 3 channels, no VAE"),
    "batch": dict(type=whole, help="samples per forward (a pipeline: images per prompt; default 1)"),
    "config": dict(help="diffusers:CLASS: its published config.json (no weights read); none: its defaults"),
    "inputs": dict(metavar="MODULE:FN", help="package.module:fn, fn(model) -> args or (args, kwargs)"),
    "input-shape": dict(type=_claims_type("parse_shape"), help="one input tensor's shape, e.g. 1,3,224,224"),
    "text-tokens": dict(type=whole, help="diffusers: text-encoder tokens (default: the pipeline's)"),
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
    "mfu": dict(type=fraction, default=0.45, help="model FLOPs utilisation at batch 1 (default 0.45)"),
    "file": dict(help="a YAML list of claims (see claims/)"),
    "model": dict(help=SPEC_HELP),
    "part": dict(choices=("model", "linear", "attention", "embeddings", "block"), help="what the number covers"),
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


def _flags(p: argparse.ArgumentParser, *names: str, **changed: dict[str, Any]) -> None:
    """Add the named flags from FLAGS (each string a space-separated list), with a command's own changes
    (`attn={'action': 'append'}`)."""
    for name in (n for group in names for n in group.split()):
        flag = "--sweep" if name == "sweeps" else f"--{name}"  # report's --sweep MODEL=..., reconcile's a switch
        p.add_argument(flag, **{**FLAGS[name], **changed.get(name.replace("-", "_"), {})})


def _model(p: argparse.ArgumentParser, default: str | None, *names: str, **changed: dict[str, Any]) -> None:
    """A command on one model: the model, the flags that build its input, and `names`."""
    default_words = default or "DiT-S/2, both attention paths"
    p.add_argument("model", nargs="?", default=default, help=f"{SPEC_HELP} (default {default_words})")
    _flags(p, MODEL_FLAGS, *names, **changed)


OPTIONS = ("resolution", "frames", "text_tokens", "input_shape", "batch", "config", "inputs", "input_size", "space")


def _subject(args: argparse.Namespace, model: str | None = None, **given: Any) -> Subject:
    """The one Subject of the model the command names, with the options it was given (an option the model would
    ignore is refused in one line)."""
    attn = getattr(args, "attn", None)
    options = {k: getattr(args, k, None) for k in OPTIONS}  # the flags that build inputs
    options["attn"] = (attn[0] if len(attn) == 1 else None) if isinstance(attn, list) else attn
    return subject_of(parse(model or args.model, **{**options, **given}), getattr(args, "timeout", None))


def _subjects(
    args: argparse.Namespace, model: str, sizes: list[int | None] | None, attns: list[str | None] | None
) -> list[Subject]:
    """The model on each attention path (and, for a reference model, each latent side) asked for."""
    return [_subject(args, model, attn=a, input_size=size) for a in (attns or [None]) for size in (sizes or [None])]


class Shown(Protocol):
    """What a verb returns: its text, its JSON-ready data and its exit code."""

    @property
    def exit_code(self) -> int: ...

    def to_text(self) -> str: ...

    def to_data(self) -> Any: ...


def _show(result: Shown, args: argparse.Namespace) -> int:
    """Print a result as JSON or text; its exit code."""
    print(to_json(result.to_data()) if getattr(args, "json", False) else result.to_text())
    return result.exit_code


def _list_models(args: argparse.Namespace) -> int:
    # lazy: door start-up (a verb loads its machinery when run)
    from flopcheck.verbs.list_models import run as model_list

    print(model_list(args.pattern))
    return 0


def _count(args: argparse.Namespace) -> int:
    # lazy: torch-free door (the count verb imports torch)
    from flopcheck.pipelines import count_pipeline, is_pipeline, options
    from flopcheck.verbs.count import check_device, generation_options, training_options
    from flopcheck.verbs.count import run as count

    if is_pipeline(args.model or ""):  # a whole pipeline: its components, each a spec, times its calls
        return _show(count_pipeline(args.model, **options(args)), args)
    check_device(args.device)
    step = training_options(args.training, args.freeze, args.checkpoint, args.optimizer)
    scope = Scope(steps=args.steps or 1, cfg=args.cfg, training=args.training)
    gen = generation_options(args.generate, args.prompt_tokens, args.text_tokens)
    args.text_tokens = args.prompt_tokens or args.text_tokens  # the counted forward is the prefill
    kernel = args.attn_kernel or ""
    return _show(count(_subject(args), scope, args.device, **step, attn_kernel=kernel, generate=gen), args)


APPENDED = {"action": "append"}  # compare and reconcile take several attention paths (compare: several sizes)


def _compare_args(p: argparse.ArgumentParser) -> None:
    _model(p, "DiT-S/2", "counter timeout json formula", attn=APPENDED, input_size=APPENDED)


def _compare(args: argparse.Namespace) -> int:
    from flopcheck.verbs.compare import run as compare  # lazy: door start-up (a verb loads its machinery when run)
    from flopcheck.verbs.report import progress_bar

    subjects = _subjects(args, args.model, args.input_size, args.attn)
    bar = None if args.json else progress_bar
    return _show(compare(subjects, args.counter, args.timeout, bar, args.formula), args)


def _counters_alias(args: argparse.Namespace) -> int:
    code = _compare(args)  # bad input stays one line: the note comes after a result
    print("flopcheck: `flopcheck counters` is now `flopcheck compare`", file=sys.stderr)
    return code


def _reconcile(args: argparse.Namespace) -> int:
    from flopcheck.verbs.reconcile import DEFAULT_RECONCILE  # lazy: door start-up (a verb loads its machinery when run)
    from flopcheck.verbs.reconcile import run as reconcile
    from flopcheck.verbs.report import progress_bar

    model = args.model or DEFAULT_RECONCILE[0]
    size = args.input_size or (None if args.model else DEFAULT_RECONCILE[1])
    attns = args.attn or ([None] if args.model else list(ATTN_PATHS))
    subjects = _subjects(args, model, [size], attns)
    bar = None if args.json else progress_bar
    return _show(reconcile(subjects, args.counter, args.timeout, args.sweep, bar, args.formula, args.training), args)


def _audit_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("claim", nargs="?", help="'DiT-XL/2 118.64 GFLOPs', or '4.6 GFLOPs' with --model")
    flags = "file model part omission-limit no-counters allow-code resolution frames steps cfg training batch space"
    rate = "gpu gpus dtype throughput tokens"
    _flags(p, flags, rate, "input-shape counter json markdown config inputs text-tokens timeout", **AUDIT_CHANGES)


AUDIT_CHANGES: dict[str, dict[str, Any]] = {
    "steps": {"default": None},
    "gpu": {"default": None, "help": "the run's GPU"},
}
CLAIM_OPTIONS = "model resolution frames steps batch space part input_shape config inputs omission_limit".split()
CLAIM_OPTIONS += "gpu gpus dtype throughput tokens text_tokens".split()


def _audit(args: argparse.Namespace) -> int:
    from flopcheck.auditor import load_claims, parse_claim  # lazy: door start-up (a verb loads its machinery when run)
    from flopcheck.verbs.audit import run as audit

    if bool(args.claim) == bool(args.file):
        raise UsageError("give one claim ('DiT-XL/2 118.64 GFLOPs') or --file CLAIMS.yaml")
    given = {k: getattr(args, k) for k in CLAIM_OPTIONS}
    flags = {"cfg": args.cfg or None, "training": args.training or None}
    stated = [k for k, v in {**given, **flags}.items() if v is not None]
    if args.file and stated:  # a claims file states these per claim: a flag beside it would be dropped unseen
        flag = "--" + stated[0].replace("_", "-")
        raise UsageError(f"{flag} applies to a claim you type; with --file each claim states its own {stated[0]}")
    claims = load_claims(args.file) if args.file else [parse_claim(args.claim, **given, **flags)]
    result = audit(claims, False if args.no_counters else args.counter, args.allow_code or not args.file, args.timeout)
    code = _show(result, args) if args.json or not args.markdown else print(result.to_markdown()) or result.exit_code
    for line in result.failed:
        print(line, file=sys.stderr)
    return code


def _causes(args: argparse.Namespace) -> int:
    from flopcheck.verbs.causes import run as causes  # lazy: door start-up (a verb loads its machinery when run)

    return print(causes(args.measure).to_text(markdown=args.markdown)) or 0


def _estimate(args: argparse.Namespace) -> int:
    # lazy: torch-free door (the estimate verb imports torch)
    from flopcheck.pipelines import estimate_pipeline, is_pipeline, options
    from flopcheck.verbs.count import generation_options, training_options

    if is_pipeline(args.model or ""):  # per stage, at one MFU
        return _show(estimate_pipeline(args.model, args.gpu, args.mfu, **options(args)), args)
    step = training_options(args.training, args.freeze, args.checkpoint)
    gen = generation_options(args.generate, args.prompt_tokens, args.text_tokens)
    args.text_tokens = args.prompt_tokens or args.text_tokens  # the counted forward is the prefill
    run = {"steps": args.steps or 1, "cfg": args.cfg, "training": args.training, "attn_kernel": args.attn_kernel or ""}
    run |= {"throughput": args.throughput, "gpus": args.gpus, "stated_batch": args.batch, "generate": gen}
    shape = {"frozen": step["frozen"], "checkpointed": step["checkpointed"]}
    subject = _subject(args)  # an unknown name is refused here, before the estimate verb imports torch
    from flopcheck.verbs.estimate import run as estimate

    return _show(estimate(subject, gpu=args.gpu, mfu=args.mfu, **run, **shape), args)


def sweep(text: str) -> tuple[str, tuple[int, ...]]:
    """--sweep 'DiT-S/2=16,32,64' -> ('DiT-S/2', (16, 32, 64)): three sizes or more, for a fit."""
    model, _, sizes = text.partition("=")
    try:
        parsed = tuple(int(x) for x in sizes.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"cannot read {text!r}: write MODEL=S1,S2,S3 like DiT-S/2=16,32,64") from None
    if len(parsed) < 3:
        raise argparse.ArgumentTypeError(f"{text!r} has {len(parsed)} sizes; a fit needs 3 or more")
    return model, parsed


def _report(args: argparse.Namespace) -> int:
    from flopcheck.verbs.report import into_folder  # lazy: door start-up (a verb loads its machinery when run)

    counting = (args.models, args.counter, args.sweeps, args.no_sweep, args.workers, args.timeout)
    written = into_folder(args.out, args.from_json, *counting)
    for name in written.kept:
        print(f"kept {written.out / name}: the last report listed it, but it changed since", file=sys.stderr)
    print(written.to_text())  # a folder written: no --json here
    return written.exit_code


# report's own: --sweep MODEL=..., and no timeout default (the verb applies it, so one given beside --from is seen)
REPORT_FLAGS: dict[str, dict[str, Any]] = {"sweeps": {"type": sweep}, "timeout": {"default": None}}
COMMANDS: dict[
    str, tuple[str, Callable[[argparse.ArgumentParser], object], Callable[[argparse.Namespace], int]]
] = {  # name -> (help, add its arguments, run it)
    "list-models": (
        "list the reference models (or the zoo's: 'zoo:*')",
        lambda p: p.add_argument("pattern", nargs="?", default="*", help="shell pattern, e.g. 'DiT-XL/*'"),
        _list_models,
    ),
    "count": (
        "the formula term by term beside the exact count",
        lambda p: _model(p, DEFAULT_MODEL, TRAINING_FLAGS, "optimizer device json timeout"),
        _count,
    ),
    "report": (
        "the comparison report: every counter on every model, and T-sweeps",
        lambda p: _flags(p, "out models sweeps no-sweep workers from counter timeout", **REPORT_FLAGS),
        _report,
    ),
    "estimate": (
        "FLOPs per generation, attention share, roofline and step time on a GPU (the inference arithmetic)",
        lambda p: _model(p, "FLUX.1-dev", TRAINING_FLAGS, "gpu gpus mfu throughput json timeout"),
        _estimate,
    ),
    "compare": ("what every FLOP counter says about the same model and inputs", _compare_args, _compare),
    "counters": ("an alias of compare, its old name", _compare_args, _counters_alias),
    "reconcile": (
        "every counter's number explained, cause by cause, to a zero residual",
        lambda p: _model(p, None, "counter timeout json sweep formula training", attn=APPENDED),
        _reconcile,
    ),
    "causes": ("the causes: what happened, who does it, the fix", lambda p: _flags(p, "measure markdown"), _causes),
    "audit": ("what a published FLOP number counted, and the true value", _audit_args, _audit),
}


def parser() -> argparse.ArgumentParser:
    """The argument parser, one subparser per COMMANDS entry."""
    p = Parser(prog="flopcheck", description="Is this FLOP number true? (FLOPs: 2 per multiply-add)")
    sub = p.add_subparsers(dest="command", parser_class=Parser)
    for name, (help_text, add_args, _) in COMMANDS.items():
        add_args(sub.add_parser(name, help=help_text, description=help_text))
    return p


def main(argv: list[str] | None = None) -> int:
    """Run one command; bad input is one line on stderr and exit code 2."""
    argv = list(sys.argv[1:] if argv is None else argv)
    refused: tuple[type[BaseException], ...] = (
        UsageError,
        *bad_input(),
    )  # a bad flag, model, config, claim or file; anything else is a bug
    try:
        args = parser().parse_args(argv or ["count"])
        if args.command is None:
            raise UsageError(f"give a command first: {', '.join(COMMANDS)} (see flopcheck --help)")
        return COMMANDS[args.command][2](args)
    except refused as err:
        print(f"flopcheck: {err}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
