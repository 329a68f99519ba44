"""The `flopcheck` command: `main(argv) -> exit code`; 0 ok, 1 a disagreement, 2 bad input.

With no arguments it runs its built-in default, `flopcheck count DiT-XL/2`.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Callable

from reference_models.configs import ATTN_PATHS, Attn

DEFAULT_MODEL = "DiT-XL/2"
ATTN_CHOICES = [a.value for a in ATTN_PATHS]


class UsageError(Exception):
    """Bad input: printed as one line on stderr, exit code 2."""


def _json(obj) -> str:
    """Strict JSON (a non-finite number, which JSON has none of, becomes null), indented."""
    import math

    def finite(x):
        if isinstance(x, float) and not math.isfinite(x):
            return None
        if isinstance(x, dict):
            return {k: finite(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [finite(v) for v in x]
        return x

    return json.dumps(finite(obj), indent=2, allow_nan=False)


class Parser(argparse.ArgumentParser):
    """argparse, but an error is a UsageError: one line naming the flag (and its choices), not the usage block."""

    def error(self, message: str):
        command = self.prog.removeprefix("flopcheck").strip()
        raise UsageError(f"{command}: {message}" if command else message)


def _number(text: str, kind, ok, what: str):
    """`text` as `kind` if ok(value), else an argparse error saying what is wanted."""
    import math

    try:
        value = kind(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{what}, got {text!r}") from None
    if isinstance(value, float) and not math.isfinite(value) or not ok(value):
        raise argparse.ArgumentTypeError(f"{what}, got {text!r}")
    return value


def whole(text: str) -> int:
    """A whole number >= 1: sizes, batches, steps, frames, workers."""
    return _number(text, int, lambda v: v >= 1, "must be a whole number >= 1")


def seconds(text: str) -> float:
    """A positive, finite number of seconds."""
    return _number(text, float, lambda v: v > 0, "must be a positive number of seconds")


def fraction(text: str) -> float:
    """A fraction in (0, 1], like 0.45."""
    return _number(text, float, lambda v: 0 < v <= 1, "must be a fraction in (0, 1], like 0.45")


# ---------------------------------------------------------------------------------------------
# Subcommands: name -> (add arguments, run)
# ---------------------------------------------------------------------------------------------


def _list_models_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("pattern", nargs="?", default="*", help="shell pattern, e.g. 'DiT-XL/*'")


def _list_models(args: argparse.Namespace) -> int:
    from reference_models import get_config, list_models

    names = list_models(args.pattern)
    if not names:
        raise UsageError(f"no model matches {args.pattern!r}; try `flopcheck list-models`")
    for name in names:
        print(f"{name:12s} {get_config(name).summary()}")
    return 0


SPEC_HELP = "a reference model, timm:NAME, torchvision:NAME, diffusers:CLASS (with --config) or package.module:factory"


def _spec_args(p: argparse.ArgumentParser, shape: bool = True) -> None:
    """The options that build a spec's model and inputs (a reference model takes its own flags)."""
    p.add_argument("--config", help="diffusers:CLASS: a config.json as published with the model (no weights read)")
    p.add_argument("--inputs", metavar="MODULE:FN", help="package.module:fn, fn(model) -> args or (args, kwargs)")
    if shape:
        p.add_argument("--input-shape", help="one input tensor's shape, e.g. 1,3,224,224")
    p.add_argument("--text-tokens", type=whole, help="diffusers: text-encoder tokens (default: the pipeline's)")


OPTIONS = ("frames", "text_tokens", "batch", "config", "inputs", "input_size", "space")  # flags that build inputs


def _subject(args: argparse.Namespace, model: str | None = None, **given):
    """The one Subject of the model the command names (a reference model or a spec) with the options it was given;
    an option the model would ignore is refused, one line."""
    from flopcheck.specs import parse
    from flopcheck.subject import subject_of

    options = {k: getattr(args, k, None) for k in OPTIONS}
    options.update(resolution=_resolution(getattr(args, "resolution", None)), attn=_one_attn(args),
                   input_shape=_shape(getattr(args, "input_shape", None)))
    return subject_of(parse(model or args.model, **{**options, **given}))


def _one_attn(args: argparse.Namespace) -> str | None:
    attn = getattr(args, "attn", None)
    if isinstance(attn, list):
        return attn[0] if len(attn) == 1 else None
    return attn


def _model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", nargs="?", default=DEFAULT_MODEL, help=f"{SPEC_HELP} (default {DEFAULT_MODEL})")
    p.add_argument("--input-size", type=whole, help="DiT: latent side (pixel side with --space pixel); sets T")
    p.add_argument("--resolution", help="pixels: 256 or WxH like 1280x720 (DiT: square, /8 = latent side)")
    p.add_argument("--frames", type=whole, help="video models: pixel frames, 4k+1 (Wan 81, CogVideoX 49, Hunyuan 129)")
    p.add_argument("--attn", choices=ATTN_CHOICES, help="attention path (default: the model's, sdpa)")
    p.add_argument("--space", choices=("latent", "pixel"), help="pixel: 3 channels, no VAE")
    p.add_argument("--batch", type=whole, help="samples per forward (default 1)")


def _count_args(p: argparse.ArgumentParser) -> None:
    _model_args(p)
    p.add_argument("--steps", type=whole, default=1, help="sampling steps (forward x S)")
    p.add_argument("--cfg", action="store_true", help="classifier-free guidance (batch x2)")
    p.add_argument("--training", action="store_true", help="one training step: the formula x 3 (the rule) beside the exact forward + backward on meta")
    p.add_argument("--freeze", action="append", metavar="PATTERN",
                   help="with --training: modules whose weights do not train, by path ('blocks.*'); repeatable")
    p.add_argument("--checkpoint", action="append", metavar="PATTERN",
                   help="with --training: modules under activation checkpointing ('blocks.*'), recomputed; repeatable")
    p.add_argument("--optimizer", choices=("adamw", "sgd", "none"),
                   help="with --training: the optimizer whose step is counted apart (default adamw)")
    p.add_argument("--device", default="meta", help="where the exact count runs (default meta: no compute)")
    p.add_argument("--json", action="store_true", help="one JSON object with full integers")
    _spec_args(p)


def _count(args: argparse.Namespace) -> int:
    from flopcheck.counting import count
    from flopcheck.report.count import to_dict, to_text
    from flopcheck.types import Scope

    _one_input_flag(args)
    _check_device(args.device)
    _training_flags(args)
    result = count(_subject(args), Scope(steps=args.steps, cfg=args.cfg, training=args.training), args.device,
                   tuple(args.freeze or ()), tuple(args.checkpoint or ()), _optimizer(args))
    print(_json(to_dict(result)) if args.json else to_text(result))
    return result.exit_code


def _training_flags(args: argparse.Namespace) -> None:
    """--freeze, --checkpoint and --optimizer shape a training step: without --training they would be ignored, so
    refused."""
    for flag in ("freeze", "checkpoint", "optimizer"):
        if getattr(args, flag, None) and not args.training:
            raise UsageError(f"--{flag} shapes a training step: add --training")


def _optimizer(args: argparse.Namespace) -> str:
    """The optimizer to count apart in a training step: '' for none or when not training."""
    chosen = args.optimizer or "adamw"
    return chosen if args.training and chosen != "none" else ""


def _resolution(text: str | None) -> tuple[int, int] | None:
    """'256' -> (256, 256), '1280x720' -> (1280, 720); bad text is a UsageError."""
    from flopcheck.auditor.claims import ClaimError, parse_resolution

    try:
        return parse_resolution(text)
    except ClaimError as err:
        raise UsageError(str(err)) from None


def _counters_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", nargs="?", default="DiT-S/2", help=f"{SPEC_HELP} (default DiT-S/2)")
    p.add_argument("--counter", action="append", help="a counter to run (repeatable; default: all)")
    p.add_argument("--attn", choices=ATTN_CHOICES, action="append", help="attention path(s) (default sdpa)")
    p.add_argument("--input-size", type=whole, action="append", help="latent side(s) (default: the model's)")
    p.add_argument("--resolution", help="a spec's input: pixels, 224 or WxH")
    p.add_argument("--frames", type=whole, help="a video spec's pixel frames, 4k+1")
    p.add_argument("--batch", type=whole, help="a spec's batch (default 1)")
    p.add_argument("--timeout", type=seconds, default=600.0, help="seconds per model and counter (default 600)")
    p.add_argument("--json", action="store_true", help="a JSON list, one object per count")
    _spec_args(p)


def _counter_names(args: argparse.Namespace) -> list[str]:
    """The counters asked for (default: all); an unknown one is bad input before anything runs."""
    from flopcheck.counters import COUNTERS, get_spec

    names = args.counter or list(COUNTERS)
    for name in names:
        get_spec(name)
    return names


def _counters(args: argparse.Namespace) -> int:
    from flopcheck.report.counters import to_list, to_text
    from flopcheck.subject import counts_of

    names = _counter_names(args)
    subjects = _subjects(args, args.model, args.input_size)
    counts = counts_of(subjects, names, timeout_s=args.timeout)
    truth = {_key(s.job()): s.truth() for s in subjects}
    spec = subjects[0].source.value == "spec"
    label, inputs = ("exact count", subjects[0].measured().inputs) if spec else ("formula", "")
    print(_json(to_list(counts, truth)) if args.json else to_text(counts, truth, label, inputs))
    return 0


def _counters_alias(args: argparse.Namespace) -> int:
    print("flopcheck: `flopcheck counters` is now `flopcheck compare`; running that", file=sys.stderr)
    return _counters(args)


def _key(job) -> tuple:
    """How the renderers find a count's truth: (model, input size, attention path), as its counts carry them."""
    resolved = job.resolved()
    return resolved["model"], resolved["input_size"], resolved["attn"]


def _subjects(args: argparse.Namespace, model: str, sizes: list | None, attns: list | None = None) -> list:
    """The subjects a counters command runs on: the model on each attention path (and, for a reference model,
    each latent side) asked for; a spec checked to fit in memory, since counters execute it on real tensors."""
    subjects = [_subject(args, model, attn=a, input_size=size) for a in (attns or args.attn or [None])
                for size in (sizes or [None])]
    for s in subjects:
        s.check_executable()
    return subjects


DEFAULT_RECONCILE = ("DiT-S/2", 32)  # with no MODEL: DiT-S/2 at 256 px, both attention paths


def _reconcile_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", nargs="?", help=f"{SPEC_HELP} (default {DEFAULT_RECONCILE[0]}, both attention paths)")
    p.add_argument("--counter", action="append", help="a counter (repeatable; default: all)")
    p.add_argument("--attn", choices=ATTN_CHOICES, action="append", help="attention path(s)")
    p.add_argument("--input-size", type=whole, help="latent side (default: the model's)")
    p.add_argument("--resolution", help="a spec's input: pixels, 224 or WxH")
    p.add_argument("--frames", type=whole, help="a video spec's pixel frames, 4k+1")
    p.add_argument("--batch", type=whole, help="a spec's batch (default 1)")
    p.add_argument("--sweep", action="store_true", help="also count at four sizes and judge from totals alone")
    p.add_argument("--timeout", type=seconds, default=600.0, help="seconds per model and counter (default 600)")
    p.add_argument("--json", action="store_true", help="a JSON list, one object per reconciliation")
    _spec_args(p)


def _reconcile(args: argparse.Namespace) -> int:
    from flopcheck.counters import REQUIRED
    from flopcheck.reconciler import reconcile
    from flopcheck.reconciler.sweep import sweep_sizes, sweeps_for
    from flopcheck.report.reconcile import to_list, to_text
    from flopcheck.subject import counts_of

    names = _counter_names(args)
    model = args.model or DEFAULT_RECONCILE[0]
    size = args.input_size or (None if args.model else DEFAULT_RECONCILE[1])
    attns = args.attn or ([None] if args.model else list(ATTN_PATHS))
    subjects = _subjects(args, model, [size], attns)
    spec = subjects[0].source.value == "spec"
    if spec and args.sweep:
        raise UsageError(f"--sweep varies a reference model's latent side; {args.model} has its own input: "
                         f"reconcile it at --resolution values one by one")
    main_size = subjects[0].job().resolved()["input_size"]  # bad model or size: exit 2 before anything runs
    grid = sweep_sizes(subjects[0].config().patch_size) if args.sweep else []
    swept = [s.with_options(input_size=g) for s in subjects for g in grid if g != main_size]
    counts = counts_of(subjects + swept, names, timeout_s=args.timeout)
    refs = {_key(s.job()): s.reference() for s in subjects}
    results = [reconcile(c, refs[(c.model, c.input_size, c.attn)]) for c in counts if c.input_size == main_size]
    sweeps = sweeps_for(results, counts, grid)
    tokens = {s.attn: ", ".join(str(s.with_options(input_size=g).config().tokens) for g in grid) for s in subjects}
    if spec and not args.json:  # the input every number below is for
        print(f"{args.model} · input {subjects[0].measured().inputs} · reference: its exact count\n")
    print(_json(to_list(results, sweeps)) if args.json else to_text(results, sweeps, tokens))
    unexplained = any(r.residual not in (0, None) for r in results)
    required_failed = any(r.error for r in results if r.counter in REQUIRED)
    return 1 if unexplained or required_failed else 0


def _check_device(device: str) -> None:
    """A device torch knows and this machine has: meta (no compute), cpu, or an accelerator that is here."""
    if device == "meta":  # the default: no torch needed to say so (a spec's count imports it in its child)
        return
    import torch

    try:
        kind = torch.device(device).type
    except (RuntimeError, ValueError):
        raise UsageError(f"--device {device!r} is not a torch device: use meta (the default), cpu or cuda") from None
    backend = getattr(torch, kind, None)
    if kind not in ("meta", "cpu") and not (backend is not None and backend.is_available()):
        raise UsageError(f"--device {device!r}: this machine has no {kind}; use meta (the default) or cpu")


def _one_input_flag(args: argparse.Namespace) -> None:
    """--input-size and --resolution both set the input: one of them, or the model's default."""
    if args.input_size is not None and args.resolution is not None:
        raise UsageError("--input-size and --resolution both set the input: give one of them")


def _shape(text: str | None) -> tuple[int, ...] | None:
    """'1,3,224,224' -> (1, 3, 224, 224); bad text is a UsageError naming --input-shape."""
    from flopcheck.auditor.claims import ClaimError, parse_shape

    try:
        return parse_shape(text)
    except ClaimError as err:
        raise UsageError("--" + str(err).replace("input shape", "input-shape", 1)) from None


def _audit_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("claim", nargs="?", help="'DiT-XL/2 118.64 GFLOPs', or '4.6 GFLOPs' with --model")
    p.add_argument("--file", help="a YAML list of claims (see claims/)")
    p.add_argument("--resolution", help="256, 512 or WxH (pixels)")
    p.add_argument("--frames", type=whole, help="video frames (video models)")
    p.add_argument("--steps", type=whole, help="sampling steps the number covers")
    p.add_argument("--cfg", action="store_true", help="the number includes classifier-free guidance")
    p.add_argument("--training", action="store_true", help="the number is a training step")
    p.add_argument("--batch", type=whole, help="samples the number covers")
    p.add_argument("--space", choices=("latent", "pixel"), help="the number says it was counted on pixels")
    p.add_argument("--part", choices=("model", "linear", "attention", "embeddings", "block"),
                   help="what the number covers: the model (default), the blocks' per-token linears, attention, "
                        "one block (a model with one list of blocks), or DiT's embeddings")
    p.add_argument("--model", help=SPEC_HELP)
    p.add_argument("--input-shape", help="input shape for --model specs, e.g. 1,3,224,224")
    p.add_argument("--counter", action="append",
                   help="a counter whose output is a reading (repeatable; default: every installed counter)")
    p.add_argument("--no-counters", action="store_true",
                   help="judge against the formula and exact-count readings only (no counter is run)")
    p.add_argument("--json", action="store_true", help="a JSON list, one object per claim")
    p.add_argument("--markdown", action="store_true", help="a Markdown table, one row per claim")
    _spec_args(p, shape=False)


def _audit(args: argparse.Namespace) -> int:
    from flopcheck.auditor import audit, load_claims, parse_claim, parse_resolution
    from flopcheck.errors import bad_input
    from flopcheck.report.audit import to_dict, to_markdown, to_text

    if bool(args.claim) == bool(args.file):
        raise UsageError("give one claim ('DiT-XL/2 118.64 GFLOPs') or --file CLAIMS.yaml")
    if args.file:
        claims = load_claims(args.file)
    else:
        shape = _shape(args.input_shape)
        claims = [parse_claim(args.claim, model=args.model, resolution=parse_resolution(args.resolution),
                              frames=args.frames, steps=args.steps, cfg=args.cfg or None,
                              training=args.training or None, batch=args.batch, space=args.space, part=args.part,
                              input_shape=shape, config=args.config, inputs=args.inputs)]
    names = False if args.no_counters else _counter_names(args) if args.counter else None
    if names is not False and len(claims) > 1:  # every claim's counts in one pool: each model built once
        from flopcheck.auditor.tools import prefetch

        prefetch(claims, names)
    verdicts, failed = [], []
    for claim in claims:  # a claim whose model cannot be built or run is one line; the rest go on
        try:
            verdicts.append(audit(claim, counters=names))
        except bad_input() as err:
            if len(claims) == 1:
                raise
            failed.append(f"flopcheck: claim {claim.id or claim.text!r}: {err}")
    if args.json:
        print(_json([to_dict(v) for v in verdicts]))
    elif args.markdown:
        print(to_markdown(verdicts))
    else:
        print("\n\n".join(to_text(v) for v in verdicts))
    for line in failed:
        print(line, file=sys.stderr)
    return 2 if failed else 0 if all(v.passed for v in verdicts) else 1


def _causes_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--measure", action="store_true",
                   help="reconcile every counter on DiT-S/2 (both attention paths) and name who does what")
    p.add_argument("--markdown", action="store_true", help="a Markdown table")


def _causes(args: argparse.Namespace) -> int:
    from flopcheck.counters import COUNTERS
    from flopcheck.counters.pool import Job, run_counters
    from flopcheck.reconciler import reconcile
    from flopcheck.report.causes import causes_table, who_does_what

    who = None
    if args.measure:
        jobs = [Job(DEFAULT_RECONCILE[0], DEFAULT_RECONCILE[1], a) for a in ATTN_PATHS]
        who = who_does_what([reconcile(c) for c in run_counters(list(COUNTERS), jobs) if c.ok])
    print(causes_table(who, markdown=args.markdown))
    return 0


def _estimate_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", nargs="?", default="FLUX.1-dev", help=f"{SPEC_HELP} (default FLUX.1-dev)")
    p.add_argument("--resolution", help="pixels: WxH like 1280x720, or one side")
    p.add_argument("--frames", type=whole, help="video models: pixel frames, 4k+1")
    p.add_argument("--steps", type=whole, default=1, help="sampling steps (default 1); with --training, optimizer steps")
    p.add_argument("--cfg", action="store_true", help="classifier-free guidance: two forwards per step")
    p.add_argument("--batch", type=whole, help="samples per forward (default 1)")
    p.add_argument("--training", action="store_true",
                   help="training compute: --steps optimizer steps of --batch samples, each the exact step")
    p.add_argument("--freeze", action="append", metavar="PATTERN", help="with --training: modules that do not train")
    p.add_argument("--checkpoint", action="append", metavar="PATTERN",
                   help="with --training: modules under activation checkpointing, recomputed in the backward")
    p.add_argument("--gpu", default="H100", help="H100 (SXM), H100-PCIe, H200, A100, A100-40GB, L40S, RTX4090, "
                                                 "B200, MI300X (default H100)")
    p.add_argument("--mfu", type=fraction, default=0.45, help="model FLOPs utilisation at batch 1 (default 0.45)")
    p.add_argument("--json", action="store_true", help="one JSON object")
    _spec_args(p)


def _estimate(args: argparse.Namespace) -> int:
    from flopcheck.estimate import estimate
    from flopcheck.report.estimate import to_dict, to_text

    _training_flags(args)
    e = estimate(_subject(args), gpu=args.gpu, mfu=args.mfu, steps=args.steps, cfg=args.cfg, training=args.training,
                 frozen=tuple(args.freeze or ()), checkpointed=tuple(args.checkpoint or ()))
    print(_json(to_dict(e)) if args.json else to_text(e))
    return 0


def _report_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", default="reports", help="folder to write (default reports/)")
    p.add_argument("--models", default="DiT-*",
                   help="a shell pattern of reference models (default 'DiT-*': all 12 configs), or a comma list of "
                        "them and specs: timm:vit_small_patch16_224,torchvision:resnet50")
    p.add_argument("--counter", action="append", help="a counter (repeatable; default: all)")
    p.add_argument("--sweep", action="append", metavar="MODEL=S1,S2,S3",
                   help="a T-sweep over latent sides (repeatable; default DiT-S/2=16,32,64,128 DiT-XL/2=16,32,64)")
    p.add_argument("--no-sweep", action="store_true", help="no T-sweeps")
    p.add_argument("--workers", type=whole, default=2, help="models counted in parallel (default 2)")
    p.add_argument("--timeout", type=seconds, default=600.0, help="seconds per model and counter (default 600)")
    p.add_argument("--from", dest="from_json", metavar="RESULTS_JSON",
                   help="render an existing results.json again, counting nothing")


def _parse_sweeps(args: argparse.Namespace) -> tuple | None:
    """The --sweep MODEL=S1,S2,S3 given (None: the plan's default; --no-sweep: none)."""
    from reference_models import get_config

    if args.no_sweep:
        return ()
    if not args.sweep:
        return None
    out = []
    for text in args.sweep:
        model, _, sizes = text.partition("=")
        try:
            parsed = tuple(int(x) for x in sizes.split(","))
        except ValueError:
            raise UsageError(f"cannot read --sweep {text!r}: write MODEL=S1,S2,S3 like DiT-S/2=16,32,64") from None
        if len(parsed) < 3:
            raise UsageError(f"--sweep {text!r} has {len(parsed)} sizes; a fit needs 3 or more")
        for size in parsed:
            get_config(model, input_size=size)  # unknown model or bad size: exit 2 before anything runs
        out.append((model, parsed))
    return tuple(out)


def _progress(done: int, total: int, count) -> None:
    width = 30
    filled = width * done // total
    size = f"@{count.input_size}" if count.input_size is not None else ""  # a spec's input is its own
    label = f"{count.model}{size} {count.attn} {count.counter}"
    end = "\n" if done == total else ""
    print(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {label:<48s}", end=end, file=sys.stderr,
          flush=True)


def _report(args: argparse.Namespace) -> int:
    from pathlib import Path

    from flopcheck.report.files import MANIFEST, previous, write_report
    from flopcheck.report.render import render
    from flopcheck.reporting import plan, report

    if not args.out.strip():
        raise UsageError("--out is empty: name the report's folder, like reports")
    out = Path(args.out)
    previous(out)  # a folder that is no report: refused before anything is counted

    if args.from_json:
        from flopcheck.report.render import read_results

        res = read_results(Path(args.from_json))
    else:
        chosen = plan(args.models, args.counter, _parse_sweeps(args))
        res, stats = report(chosen, workers=args.workers, timeout_s=args.timeout, progress=_progress)
        print(f"counted {stats['counts']} in {stats['wall_s']:.0f} s (the counting calls: "
              f"{stats['counting_s']:.0f} s; building models: {stats['build_s']:.0f} s)", file=sys.stderr)
    files = render(res)
    write_report(out, files)
    print(f"wrote {len(files)} files to {out}/: index.md, index.html, results.json, results.csv and "
          f"{len(files) - 4} SVGs, and their list, {MANIFEST}")
    return 0


COMMANDS: dict[str, tuple[str, Callable, Callable]] = {
    "list-models": ("list the reference models", _list_models_args, _list_models),
    "count": ("the formula term by term beside the exact count", _count_args, _count),
    "report": ("the comparison report: every DiT config x every counter x both attention paths, and T-sweeps",
               _report_args, _report),
    "estimate": ("FLOPs per generation, attention share, roofline and step time on a GPU (seed 001's arithmetic)",
                 _estimate_args, _estimate),
    "compare": ("what every FLOP counter says about the same model and inputs", _counters_args, _counters),
    "counters": ("an alias of compare, its old name", _counters_args, _counters_alias),
    "reconcile": ("every counter's number explained, cause by cause, to a zero residual", _reconcile_args,
                  _reconcile),
    "causes": ("the causes: code, what happened, who does it, the fix", _causes_args, _causes),
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
    from flopcheck.errors import bad_input

    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = parser().parse_args(argv or ["count"])
        if args.command is None:
            raise UsageError(f"give a command first: {', '.join(COMMANDS)} (see flopcheck --help)")
        return COMMANDS[args.command][2](args)
    except (UsageError, *bad_input()) as err:  # a bad flag, model, config, claim or file; anything else is a bug
        print(f"flopcheck: {err}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
