"""The `flopcheck` command: `main(argv) -> exit code`; 0 ok, 1 a disagreement, 2 bad input. Each command parses,
resolves its model once (flopcheck.subject), calls one library function and prints one result, whose exit code it
returns. With no arguments it runs its built-in default, `flopcheck count DiT-XL/2`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any, NoReturn, Protocol

from flopcheck.children import interruptible
from flopcheck.errors import bad_input
from flopcheck.flags import TRAINING_FLAGS, add_flags, add_model
from flopcheck.render import to_json
from flopcheck.specs import parse
from flopcheck.subject import Subject, subject_of
from flopcheck.types import Scope
from reference_models.configs import ATTN_PATHS

DEFAULT_MODEL = "DiT-XL/2"


class UsageError(Exception):
    """Bad input: printed as one line on stderr, exit code 2."""


class Parser(argparse.ArgumentParser):
    """argparse, but an error is a UsageError: one line naming the flag (and its choices), not the usage block."""

    def error(self, message: str) -> NoReturn:
        command = self.prog.removeprefix("flopcheck").strip()
        raise UsageError(f"{command}: {message}" if command else message)


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


class VerbResult(Protocol):
    """What a verb returns: its text, its JSON-ready data and its exit code."""

    @property
    def exit_code(self) -> int: ...

    def to_text(self) -> str: ...

    def to_data(self) -> Any: ...


def _show(result: VerbResult, args: argparse.Namespace) -> int:
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
    gen = generation_options(args.generate, args.prompt_tokens, args.text_tokens, args.training, args.steps, args.cfg)
    args.text_tokens = args.prompt_tokens or args.text_tokens  # the counted forward is the prefill
    kernel = args.attn_kernel or ""
    return _show(count(_subject(args), scope, args.device, **step, attn_kernel=kernel, generate=gen), args)


APPENDED = {"action": "append"}  # compare and reconcile take several attention paths (compare: several sizes)


def _compare_args(p: argparse.ArgumentParser) -> None:
    add_model(p, "DiT-S/2", "counter timeout json formula", attn=APPENDED, input_size=APPENDED)


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
    from flopcheck.verbs.count import check_device  # lazy: door start-up (a verb loads its machinery when run)
    from flopcheck.verbs.reconcile import DEFAULT_RECONCILE
    from flopcheck.verbs.reconcile import run as reconcile
    from flopcheck.verbs.report import progress_bar

    check_device(args.device)
    model = args.model or DEFAULT_RECONCILE[0]
    size = args.input_size or (None if args.model else DEFAULT_RECONCILE[1])
    attns = args.attn or ([None] if args.model else list(ATTN_PATHS))
    subjects = _subjects(args, model, [size], attns)
    bar = None if args.json else progress_bar
    found = reconcile(subjects, args.counter, args.timeout, args.sweep, bar, args.formula, args.training, args.device)
    return _show(found, args)


def _audit_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("claim", nargs="?", help="'DiT-XL/2 118.64 GFLOPs', or '4.6 GFLOPs' with --model")
    flags = "file model part omission-limit no-counters allow-code resolution frames steps cfg training batch space"
    rate = "gpu gpus dtype throughput tokens recompute"
    add_flags(p, flags, rate, "input-shape counter json markdown config inputs text-tokens timeout", **AUDIT_CHANGES)
    p.add_argument("--log", metavar="FILE", help="a training log (nanoGPT, nanochat, torchtitan, Megatron-LM, ...)")
    _executor_flag(p)


def _executor_flag(p: argparse.ArgumentParser) -> None:
    """--executor: where the models' counting runs (flopcheck.executors)."""
    p.add_argument(
        "--executor",
        metavar="WHERE",
        help="local (this machine's pool, the default), ray (a local Ray, or $RAY_ADDRESS), or ray://HOST:PORT",
    )


AUDIT_CHANGES: dict[str, dict[str, Any]] = {
    "steps": {"default": None},
    "gpu": {"default": None, "help": "the run's GPU"},
}
CLAIM_OPTIONS = "model resolution frames steps batch space part input_shape config inputs omission_limit".split()
CLAIM_OPTIONS += "gpu gpus dtype throughput tokens text_tokens recompute".split()


def _audit(args: argparse.Namespace) -> int:
    from flopcheck.auditor import load_claims, parse_claim  # lazy: door start-up (a verb loads its machinery when run)
    from flopcheck.verbs.audit import run as audit

    if args.log:
        return _audit_log(args)
    if bool(args.claim) == bool(args.file):
        raise UsageError("give one claim ('DiT-XL/2 118.64 GFLOPs') or --file CLAIMS.yaml")
    given = {k: getattr(args, k) for k in CLAIM_OPTIONS}
    flags = {"cfg": args.cfg or None, "training": args.training or None}
    stated = [k for k, v in {**given, **flags}.items() if v is not None]
    if args.file and stated:  # a claims file states these per claim: a flag beside it would be dropped unseen
        flag = "--" + stated[0].replace("_", "-")
        raise UsageError(f"{flag} applies to a claim you type; with --file each claim states its own {stated[0]}")
    claims = load_claims(args.file) if args.file else [parse_claim(args.claim, **given, **flags)]
    if args.executor and not args.file:
        raise UsageError("--executor runs the models of a claims file: give --file CLAIMS.yaml")
    named: list[str] | None = args.counter
    result = audit(
        claims, False if args.no_counters else named, args.allow_code or not args.file, args.timeout, args.executor
    )
    code = _show(result, args) if args.json or not args.markdown else print(result.to_markdown()) or result.exit_code
    for line in result.failed:
        print(line, file=sys.stderr)
    return code


def _audit_log(args: argparse.Namespace) -> int:
    """`audit --log FILE --model M --gpu G`: the log's steady state judged (verbs.audit.run_log)."""
    from flopcheck.verbs.audit import run_log  # lazy: door start-up (a verb loads its machinery when run)

    if args.claim or args.file:
        raise UsageError("--log reads its claims from the log: give no claim and no --file beside it")
    if not args.model or not args.gpu:
        raise UsageError("--log: name the model and the GPU, like --model transformers:GPT2LMHeadModel --gpu A100")
    run = {"gpus": args.gpus or 1, "batch": args.batch, "text_tokens": args.text_tokens, "config": args.config}
    run["recompute"] = getattr(args, "recompute", None)
    return _show(run_log(args.log, args.model, gpu=args.gpu, dtype=args.dtype or "bf16", **run), args)


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
    gen = generation_options(args.generate, args.prompt_tokens, args.text_tokens, args.training, args.steps, args.cfg)
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

    counting = (args.models, args.counter, args.sweeps, args.no_sweep, args.workers, args.timeout, args.executor)
    written = into_folder(args.out, args.from_json, *counting)
    for name in written.kept:
        why = "the last report listed it, but nothing proves flopcheck wrote it as it is"
        print(f"kept {written.out / name}: {why}", file=sys.stderr)
    for name in written.removed:
        print(f"removed {written.out / name}: the last report here wrote it, and this one does not", file=sys.stderr)
    print(written.to_text())  # a folder written: no --json here
    return written.exit_code


# report's own: --sweep MODEL=..., and no timeout default (the verb applies it, so one given beside --from is seen)
REPORT_FLAGS: dict[str, dict[str, Any]] = {"sweeps": {"type": sweep}, "timeout": {"default": None}}


def _report_args(p: argparse.ArgumentParser) -> None:
    add_flags(p, "out models sweeps no-sweep workers from counter timeout", **REPORT_FLAGS)
    _executor_flag(p)


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
        lambda p: add_model(p, DEFAULT_MODEL, TRAINING_FLAGS, "optimizer device json timeout"),
        _count,
    ),
    "report": ("the comparison report: every counter on every model, and T-sweeps", _report_args, _report),
    "estimate": (
        "FLOPs per generation, attention share, roofline and step time on a GPU (the inference arithmetic)",
        lambda p: add_model(p, "FLUX.1-dev", TRAINING_FLAGS, "gpu gpus mfu throughput json timeout"),
        _estimate,
    ),
    "compare": ("what every FLOP counter says about the same model and inputs", _compare_args, _compare),
    "counters": ("an alias of compare, its old name", _compare_args, _counters_alias),
    "reconcile": (
        "every counter's number explained, cause by cause, to a zero residual",
        lambda p: add_model(p, None, "counter timeout json sweep formula training device", attn=APPENDED),
        _reconcile,
    ),
    "causes": ("the causes: what happened, who does it, the fix", lambda p: add_flags(p, "measure markdown"), _causes),
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
    argv_given, argv = argv, list(sys.argv[1:] if argv is None else argv)
    refused: tuple[type[BaseException], ...] = (
        UsageError,
        *bad_input(),
    )  # a bad flag, model, config, claim or file; anything else is a bug
    try:
        with interruptible(adopt=argv_given is None):  # the process's own command line: orphans adopted too
            args = parser().parse_args(argv or ["count"])
            if args.command is None:
                raise UsageError(f"give a command first: {', '.join(COMMANDS)} (see flopcheck --help)")
            return COMMANDS[args.command][2](args)
    except refused as err:
        print(f"flopcheck: {err}", file=sys.stderr)
    except KeyboardInterrupt:  # Ctrl-C: its children already stopped (interruptible), one line, the shell's 130
        print("flopcheck: interrupted (Ctrl-C): every process it started is stopped", file=sys.stderr)
        return 130
    return 2


if __name__ == "__main__":
    sys.exit(main())
