"""The verbs behind `import flopcheck`, one convention: `verb(model, *args, **kwargs)`, options keyword-only.

`model` is an nn.Module and `*args, **kwargs` are its inputs, model(*args, **kwargs); or `model` is a name (a
reference model 'DiT-XL/2', or a spec 'timm:resnet50', 'torchvision:vit_b_16', 'package.module:factory'), which
takes no inputs: flopcheck builds them. Every verb resolves the model once (flopcheck.subject.resolve) and takes
the same road from there. A named model's input options (resolution=(W, H), frames, batch, input_shape, config,
text_tokens, attn, input_size) are given in `options={...}`. A model input whose name is one of a verb's options
(`counters`, `timeout_s`, `options`, ...) is given in `model_kwargs={...}`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, ParamSpec, TypeVar

from flopcheck import checks
from flopcheck.errors import InputError
from flopcheck.subject import Subject, live, resolve

if TYPE_CHECKING:  # the result types (flopcheck exports them); importing them here would import torch
    from flopcheck.arithmetic import Estimate, ExactEstimate, TrainingEstimate
    from flopcheck.auditor import Verdict
    from flopcheck.auditor.pipeline import PipelineVerdict
    from flopcheck.auditor.utilization import UtilizationVerdict
    from flopcheck.counted import ExactCount
    from flopcheck.types import Outcome, Reconciliation

DEFAULT_TIMEOUT_S = 600.0
Options = dict[str, Any] | None  # a named model's input options


def _subject(
    model: Any, args: tuple[Any, ...], kwargs: dict[str, Any], timeout_s: float | None, options: Options = None
) -> Subject:
    """The model resolved once: a name takes options, a module its inputs (and `model_kwargs`, named inputs that
    collide with an option's name)."""
    checks.maybe(checks.seconds, "timeout_s", timeout_s)
    if options is not None and not isinstance(options, dict):
        raise _error(f"options must be a dict of a named model's input options, like {{'batch': 2}}, got {options!r}")
    named = kwargs.pop("model_kwargs", {})
    inputs = {**kwargs, **named}
    if isinstance(model, str):
        if inputs:
            raise _error(f"{model} is named, so flopcheck builds its inputs; {', '.join(inputs)} is not an option")
        return resolve(model, *args, timeout_s=timeout_s, **(options or {}))
    if options:  # a module runs on the inputs given: an option would be dropped unseen
        raise _error(f"options={{...}} set a named model's input; a module runs on the inputs given: drop {options}")
    return live(model, args, inputs)


P = ParamSpec("P")
R = TypeVar("R")


def _stops_children(verb: Callable[P, R]) -> Callable[P, R]:
    """The verb with Ctrl-C stopping every process it started, and theirs, before its KeyboardInterrupt comes
    back (children.interruptible): none keeps counting after it, none is waited on to its deadline."""

    @functools.wraps(verb)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        from flopcheck.children import interruptible  # lazy: door start-up

        with interruptible():
            return verb(*args, **kwargs)

    return run


def _error(message: str) -> Exception:
    return InputError(message)


COUNTERS_LIKE = "['fvcore_jit', 'torch_dispatch']"


def _check_estimate(
    gpu: object, mfu: float, steps: int, cfg: object, training: object, throughput: object, gpus: int | None
) -> None:
    """estimate's options, checked as the command line checks its flags (flopcheck.checks): one line each."""
    checks.text("gpu", gpu, "'H100'")
    checks.fraction("mfu", mfu)
    checks.whole("steps", steps)
    checks.switch("cfg", cfg)
    checks.switch("training", training)
    if throughput is not None:
        checks.text("throughput", throughput, "'3.1 it/s'")
    checks.maybe(checks.whole, "gpus", gpus)


@_stops_children
def count(model: Any, *args: Any, timeout_s: float | None = None, options: Options = None, **kwargs: Any) -> ExactCount:
    """The exact FLOPs (2 per multiply-add) of one forward, model(*args, **kwargs), of any nn.Module or named model.

    Args:
        model: an nn.Module (its inputs follow), or a name: 'DiT-XL/2', 'timm:resnet50', 'package.module:factory'.
        *args, **kwargs: the module's inputs.
        timeout_s: a named model's build and count are stopped after this many seconds (default 600).

    Returns:
        ExactCount: `.total` FLOPs; `.by_kind()`, `.by_path()`; `.complete`, and what it did not count.

    Example:
        >>> import torch, flopcheck
        >>> flopcheck.count(torch.nn.Linear(4, 12), torch.zeros(2, 4)).total  # 2 x 2 x 4 x 12
        192
    """
    from flopcheck.verbs.count import run  # lazy: torch-free door (the exact count imports torch)

    return run(_subject(model, args, kwargs, timeout_s, options)).exact


@_stops_children
def compare(
    model: Any,
    *args: Any,
    counters: list[str] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    options: Options = None,
    **kwargs: Any,
) -> list[Outcome]:
    """What each FLOP counter (fvcore, thop, the torch profiler, torch.utils.flop_counter, ...) says about the same
    model and inputs, each in its library's unit.

    Args:
        model: an nn.Module (its inputs follow), or a name (a reference model or a spec).
        counters: the counters to run (default: every registered one); an unknown name is refused.
        timeout_s: seconds per counter; each runs in a forked child, so a library's patches and crashes stay there.

    Returns:
        list[Outcome]: one per counter: a Count (`.reported` in `.unit`, FLOP or MAC, `.flops`, its detail and
        skips), or a Failed with its one-line `.error` (not installed, crashed, timed out).

    Example:
        >>> import torch, flopcheck
        >>> [c.flops for c in flopcheck.compare(torch.nn.Linear(4, 12), torch.zeros(2, 4),
        ...                                     counters=["torch_dispatch"])]
        [192]
    """
    from flopcheck.verbs.compare import run  # lazy: door start-up (a verb loads its machinery when run)

    counters = checks.names("counters", counters, COUNTERS_LIKE)
    return run([_subject(model, args, kwargs, timeout_s, options)], counters, timeout_s).counts


@_stops_children
def reconcile(
    model: Any,
    *args: Any,
    counters: list[str] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    options: Options = None,
    formulas: list[str] | None = None,
    training: bool = False,
    **kwargs: Any,
) -> list[Reconciliation]:
    """Every counter's number explained against the truth (the hand formula, or flopcheck's exact count), cause by
    cause, to a residual; with formulas, those published formulas too (and the counters only when named).

    Args:
        model: an nn.Module (its inputs follow), or a name (a reference model or a spec).
        counters: the counters to run (default: every registered one).
        timeout_s: seconds per counter.
        formulas: published formulas to explain ('all': each; flopcheck.published.FORMULAS).
        training: explain training formulas against the exact training step.

    Returns:
        list[Reconciliation]: `.findings` (named causes with exact signed FLOP deltas), `.residual`, `.closed`.

    Example:
        >>> import torch, flopcheck
        >>> [r.residual for r in flopcheck.reconcile(torch.nn.Linear(4, 12), torch.zeros(2, 4),
        ...                                          counters=["torch_dispatch"])]
        [0]
    """
    from flopcheck.verbs.reconcile import run  # lazy: door start-up (a verb loads its machinery when run)

    counters = checks.names("counters", counters, COUNTERS_LIKE)
    formulas = checks.names("formulas", formulas, "['palm', 'kaplan-6nd'] or ['all']")
    checks.switch("training", training)
    subject = _subject(model, args, kwargs, timeout_s, options)
    return run([subject], counters, timeout_s, formulas=formulas, training=training).results


@_stops_children
def audit(
    claim: str,
    model: Any = None,
    *args: Any,
    counters: list[str] | Literal[False] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    scope: dict[str, Any] | None = None,
    **kwargs: Any,
) -> Verdict | PipelineVerdict | UtilizationVerdict:
    """The verdict on a FLOP figure: what it most likely counted (its unit, attention, scope), and the true value.

    Args:
        claim: the figure, e.g. 'DiT-XL/2 118.64 GFLOPs', or '1.8 GMACs' with `model`.
        model: None (the claim names it), a name, or an nn.Module whose inputs follow.
        counters: the counters whose output is a reading (default: every installed one; False: none).
        timeout_s: seconds per counter.
        scope: what the figure covers: resolution=(W, H), frames, steps, cfg, training, batch, part, space;
            a named model's input options too (config, input_shape, inputs, text_tokens); a claim of utilization or
            time ('45.5% MFU', '5.7 it/s', '675 A100 GPU-days') its run: gpu, gpus, dtype, throughput, tokens.

    Returns:
        Verdict: `.verdict` ('consistent', 'close', 'wrong', 'unexplained', 'incomplete'), `.best`, `.tools`,
        `.true_flops`, `.passed`; a claim about 'diffusers-pipeline:NAME' gives a PipelineVerdict (`.best` the stage
        combination its digits match); a claim of utilization or time a UtilizationVerdict (`.mfu`, `.hfu`,
        `.best`: the numerator and denominator readings whose division gives its digits, `.true_value`).

    Example:
        >>> import torch, flopcheck
        >>> print(flopcheck.audit("96 MACs", torch.nn.Linear(4, 12), torch.zeros(2, 4), counters=False).verdict)
        consistent
    """
    from flopcheck.auditor import parse_claim  # lazy: door start-up (a verb loads its machinery when run)
    from flopcheck.verbs import audit as verb

    checks.text("claim", claim, "'DiT-XL/2 118.64 GFLOPs'")
    checks.seconds("timeout_s", timeout_s)
    if counters is not False:
        counters = checks.names("counters", counters, COUNTERS_LIKE)
    if scope is not None and not isinstance(scope, dict):
        raise _error(f"scope must be a dict of what the figure covers, like {{'steps': 50}}, got {scope!r}")
    scope = dict(scope or {})
    if model is None or isinstance(model, str):
        if args or kwargs:
            raise _error("a claim about a named model takes no inputs: give its input options in scope={...}")
        # the CLI's path, its deadline and checks too (a pipeline's claim as well)
        return verb.run([parse_claim(claim, model=model, **scope)], counters, True, timeout_s).verdicts[0]
    return verb.judge_live(claim, _subject(model, args, kwargs, timeout_s), scope, counters, timeout_s)


@_stops_children
def estimate(
    model: Any,
    *args: Any,
    gpu: str = "H100",
    mfu: float = 0.45,
    steps: int = 1,
    cfg: bool = False,
    training: bool = False,
    frozen: tuple[str, ...] = (),
    checkpointed: tuple[str, ...] = (),
    timeout_s: float | None = None,
    options: Options = None,
    throughput: str | None = None,
    gpus: int | None = None,
    **kwargs: Any,
) -> Estimate | ExactEstimate | TrainingEstimate:
    """The inference arithmetic on the exact count: FLOPs (2 per multiply-add) per generation (steps x CFG x the
    forward), attention's share, the roofline, and the time on a GPU at an MFU; with training, steps optimizer steps
    of the exact training step.

    Args:
        model: a name ('FLUX.1-dev', 'timm:resnet50') or an nn.Module (its inputs follow).
        gpu: a GPU of flopcheck/data/gpus.yaml: H100 (SXM), H200, A100, B200, MI300X, TPU-v3 (per chip), ...
        mfu: model FLOPs utilisation, a fraction in (0, 1].
        throughput, gpus: with training, a measured throughput ('3.1 it/s' with options={'batch': 256}) on `gpus`
            GPUs (default 1): `.measured` is the (MFU, HFU, words) it means.
        steps, cfg: sampling steps, and classifier-free guidance (two forwards a step); training: optimizer steps.
        frozen, checkpointed: with training, module path patterns that train no weights, or are recomputed.

    Returns:
        Estimate (a model with a formula), ExactEstimate (any other), or TrainingEstimate: `.flops`, `.seconds`.

    Example:
        >>> import flopcheck
        >>> e = flopcheck.estimate("FLUX.1-dev", steps=28, options={"resolution": (1024, 1024)})
        >>> e.flops  # 28 x 74,384,653,418,496 FLOPs per forward
        2082770295717888
    """
    from flopcheck.verbs.estimate import run as arithmetic  # lazy: torch-free door (the exact count imports torch)

    _check_estimate(gpu, mfu, steps, cfg, training, throughput, gpus)
    return arithmetic(
        _subject(model, args, kwargs, timeout_s, options),
        gpu=gpu,
        mfu=mfu,
        steps=steps,
        cfg=cfg,
        training=training,
        frozen=tuple(checks.names("frozen", frozen, "('blocks.0.*',)") or ()),  # one pattern: a list of one
        checkpointed=tuple(checks.names("checkpointed", checkpointed, "('blocks.*',)") or ()),
        throughput=throughput,
        gpus=gpus,
        stated_batch=dict(options or {}).get("batch"),
    )


@_stops_children
def report(
    models: str = "DiT-*",
    *,
    counters: list[str] | None = None,
    sweeps: tuple[str, ...] | None = None,
    workers: int = 2,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    executor: str = "local",
) -> dict[str, Any]:
    """The comparison report's results: every counter on every model named (a shell pattern of reference models,
    or a comma list of them and specs), both attention paths, and T-sweeps; render it with
    flopcheck.render.report.render and write it with flopcheck.render.files.write_report. `executor`: where the
    models are counted, 'local' (`workers` processes), 'ray' (`workers` CPUs, or $RAY_ADDRESS's cluster) or
    'ray://HOST:PORT' (flopcheck.executors); each model's counts are cached as they finish.

    Returns:
        dict: JSON-ready, full integers in FLOPs: formulas, counts, reconciliations (with proofs), sweeps, versions.
    """
    from flopcheck.verbs.report import plan, run  # lazy: door start-up (a verb loads its machinery when run)

    checks.text("models", models, "'DiT-*' or 'DiT-S/2,timm:resnet50'")
    counters = checks.names("counters", counters, COUNTERS_LIKE)
    sweeps = tuple(checks.names("sweeps", sweeps, "['DiT-S/8=16,32,64']") or ()) if sweeps is not None else None
    checks.whole("workers", workers)
    checks.seconds("timeout_s", timeout_s)
    checks.text("executor", executor, "'local', 'ray' or 'ray://HOST:PORT'")
    from flopcheck.executors import executor_of  # lazy: door start-up

    where = executor_of(executor, workers)  # Ray missing: refused before anything is counted
    return run(plan(models, counters, sweeps, timeout_s), timeout_s=timeout_s, executor=where)[0]


class FlopCounter:
    """`with FlopCounter(model) as c: ...` counts every op run inside, attributed to `model`'s module paths
    (none given: all at the root); then `c.total` is the exact FLOPs (2 per multiply-add) and `c.result()` the
    ExactCount.

    Example:
        >>> import torch, flopcheck
        >>> net = torch.nn.Linear(4, 12)
        >>> with flopcheck.FlopCounter(net) as c:
        ...     _ = net(torch.zeros(2, 4))
        >>> c.total
        192
    """

    def __init__(self, model: Any = None) -> None:
        from flopcheck.exact import ExactCounter, flop_kinds  # lazy: torch-free door (the exact count imports torch)

        self._counter = ExactCounter(model, flop_kinds(model))
        self._result: ExactCount | None = None

    def __enter__(self) -> FlopCounter:
        self._counter.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._result = self._counter.result()
        self._counter.__exit__(*exc)

    def result(self) -> ExactCount:
        """The ExactCount of what ran inside the block."""
        if self._result is None:
            raise RuntimeError("the count is ready when the `with` block ends")
        return self._result

    @property
    def total(self) -> int:
        """FLOPs (2 per multiply-add) of what ran inside the block."""
        return self.result().total


__all__ = ["FlopCounter", "audit", "compare", "count", "estimate", "reconcile", "report"]
