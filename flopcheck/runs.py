"""The verbs over several subjects or claims, as the command line runs them: compare, reconcile, audit, causes.

Each returns a result that knows its exit code (0 ok, 1 a disagreement, 2 a claim that could not be judged) and
renders itself through flopcheck.render, so the CLI parses, calls one function and prints one result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flopcheck.auditor import Claim, Verdict
    from flopcheck.auditor.pipeline import PipelineVerdict

DEFAULT_RECONCILE = ("DiT-S/2", 32)  # reconcile with no model: DiT-S/2 at 256 px, both attention paths


def model_list(pattern: str = "*") -> str:
    """The reference models matching a shell pattern ('DiT-XL/*'), one line each: name and configuration; a pattern
    of the zoo's ('zoo:*', 'zoo:timm-*'): each zoo model, the spec it is and what it puts to the counters."""
    from flopcheck.errors import InputError
    from flopcheck.zoo import BY_NAME, names
    from reference_models import get_config, list_models

    if pattern.startswith("zoo:"):
        found = [BY_NAME[n.removeprefix("zoo:")] for n in names(pattern)]
        if not found:
            raise InputError(f"no zoo model matches {pattern!r}; try `flopcheck list-models 'zoo:*'`")
        return "\n".join(f"zoo:{e.name:32s} {e.spec:41s} {e.what}" for e in found)
    models = list_models(pattern)
    if not models:
        raise InputError(
            f"no model matches {pattern!r}; try `flopcheck list-models` or `flopcheck list-models 'zoo:*'`"
        )
    return "\n".join(f"{name:12s} {get_config(name).summary()}" for name in models)


def counter_names(names: list[str] | None) -> list[str]:
    """The counters asked for (default: all registered); an unknown one is bad input before anything runs."""
    from flopcheck.counters import COUNTERS, get_spec

    return [get_spec(n).name for n in ([names] if isinstance(names, str) else names or list(COUNTERS))]


@dataclass
class Comparison:
    """Every counter's count of each subject beside the truth it is compared with."""

    counts: list
    truth: dict  # (model, input size, attention path) -> FLOPs
    label: str  # 'formula' or 'exact count'
    inputs: str  # a model without a formula: its input in words
    exit_code: int = 0

    def to_text(self) -> str:
        from flopcheck.render.counters import to_text

        return to_text(self.counts, self.truth, self.label, self.inputs)

    def to_data(self) -> list:
        from flopcheck.render.counters import to_list

        return to_list(self.counts, self.truth)


def compare(subjects: list, names: list[str] | None = None, timeout_s: float = 600.0) -> Comparison:
    """Each named counter on each subject, in one pool; each checked to execute on real tensors first."""
    for s in subjects:
        s.check_executable()
    from flopcheck.subject import counts_of

    counts = counts_of(subjects, counter_names(names), timeout_s=timeout_s)
    truth = {s.key(): s.truth() for s in subjects}
    first = subjects[0]
    label, inputs = ("formula", "") if first.formula_family else ("exact count", first.measured().inputs)
    return Comparison(counts, truth, label, inputs)


@dataclass
class Reconciling:
    """Every counter's count explained against the truth, and the T-sweeps' verdicts from totals alone."""

    results: list
    sweeps: list
    tokens: dict  # attention path -> the sweep's token counts, in words
    header: str = ""  # a model without a formula: its input and its reference, in words
    required: tuple[str, ...] = ()

    @property
    def exit_code(self) -> int:
        """1 when a residual is left, or a counter on the card gave no number."""
        unexplained = any(r.residual not in (0, None) for r in self.results)
        return 1 if unexplained or any(r.error for r in self.results if r.counter in self.required) else 0

    def to_text(self) -> str:
        from flopcheck.render.reconcile import to_text

        return self.header + to_text(self.results, self.sweeps, self.tokens)

    def to_data(self) -> list:
        from flopcheck.render.reconcile import to_list

        return to_list(self.results, self.sweeps)


def reconcile(
    subjects: list, names: list[str] | None = None, timeout_s: float = 600.0, sweep: bool = False
) -> Reconciling:
    """Each named counter on each subject explained, cause by cause; with sweep, a reference model is also counted
    at four latent sides and each counter judged from its totals alone (the T-sweep)."""
    from flopcheck.counters import REQUIRED
    from flopcheck.errors import InputError
    from flopcheck.reconciler import reconcile as explain
    from flopcheck.reconciler.sweep import sweep_sizes, sweeps_for
    from flopcheck.subject import counts_of

    first = subjects[0]
    if sweep and not first.formula_family:
        raise InputError(
            f"--sweep varies a reference model's latent side; {first.text} has its own input: "
            f"reconcile it at --resolution values one by one"
        )
    for s in subjects:
        s.check_executable()
    main_size = first.key()[1]  # a bad model or size: exit 2 before anything runs
    grid = sweep_sizes(first.config().patch_size) if sweep else []
    swept = [s.with_options(input_size=g) for s in subjects for g in grid if g != main_size]
    counts = counts_of(subjects + swept, counter_names(names), timeout_s=timeout_s)
    refs = {s.key(): s.reference() for s in subjects}
    results = [explain(c, refs[(c.model, c.input_size, c.attn)]) for c in counts if c.input_size == main_size]
    tokens = {s.attn: ", ".join(str(s.with_options(input_size=g).config().tokens) for g in grid) for s in subjects}
    header = (
        ""
        if first.formula_family
        else f"{first.text} · input {first.measured().inputs} · reference: its exact count\n\n"
    )
    return Reconciling(results, sweeps_for(results, counts, grid), tokens, header, REQUIRED)


@dataclass
class Auditing:
    """The verdicts on a list of claims, and one line for each claim that could not be judged."""

    verdicts: list
    failed: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """2 when a claim could not be judged, 1 when a verdict does not pass, else 0."""
        return 2 if self.failed else 0 if all(v.passed for v in self.verdicts) else 1

    def to_text(self) -> str:
        return "\n\n".join(_rendered(v, "to_text") for v in self.verdicts)

    def to_data(self) -> list:
        return [_rendered(v, "to_dict") for v in self.verdicts]

    def to_markdown(self) -> str:
        from flopcheck.render.audit import MARKDOWN_HEAD

        return "\n".join([MARKDOWN_HEAD, *(_rendered(v, "markdown_row") for v in self.verdicts)])


def _rendered(verdict, how: str):
    """A verdict rendered: a pipeline's by its own methods, a model's by render.audit's functions of that name."""
    from flopcheck.render import audit as render

    own = getattr(verdict, how, None)
    return own() if own else getattr(render, how)(verdict)


def names_code(claim) -> str:
    """The code a claim would run (its model a package.module:factory, its inputs a module:fn), or ''."""
    from flopcheck.pipelines import is_pipeline
    from flopcheck.specs import ModelSpec

    model = claim.model if ModelSpec(claim.model).source == "module" and not is_pipeline(claim.model) else ""
    return " and ".join(x for x in (model, claim.inputs or "") if x)


def audit(
    claims: list, names: list[str] | bool | None = None, allow_code: bool = False, timeout_s: float | None = None
) -> Auditing:
    """Each claim judged; `names`: the counters whose output is a reading (None: every installed one, False: none).
    Several claims' counts run in one pool (each model built once); a claim whose model cannot be built or run is
    one line and the rest go on (a single claim's failure is the run's bad input). A claim that names code (a
    factory, an input builder) runs it only with `allow_code` (a claims file is data someone sent): without, it is
    refused in one line before anything of it is imported; timeout_s: each build and count of a claim's model."""
    from flopcheck.children import deadline

    names = names if names is False or names is None else counter_names(names)
    with deadline(timeout_s):  # every build and count of the claims' models: timeout_s each
        return _audit(claims, names, allow_code)


def _audit(claims: list, names, allow_code: bool) -> Auditing:
    from flopcheck.errors import InputError, bad_input

    code = {id(c): "" if allow_code else names_code(c) for c in claims}
    refused = [(c, code[id(c)]) for c in claims if code[id(c)]]
    if refused and len(claims) == 1:
        raise InputError(_refusal(*refused[0]))
    claims = [c for c in claims if not code[id(c)]]
    if names is not False and len(claims) > 1:
        from flopcheck.auditor.tools import prefetch

        prefetch(claims, names)
    out = Auditing([], [f"flopcheck: {_refusal(c, code)}" for c, code in refused])
    for claim in claims:
        try:
            out.verdicts.append(judge_claim(claim, names))
        except bad_input() as err:
            if len(claims) == 1:
                raise
            out.failed.append(f"flopcheck: claim {claim.id or claim.text!r}: {err}")
    return out


def judge_claim(claim: Claim, names: Any = None) -> Verdict | PipelineVerdict:
    """A claim about a pipeline against its stage combinations; any other against its model, and when that does not
    pass, the stage combination of the model's pipeline within 10% said beside it."""
    from dataclasses import replace

    from flopcheck.auditor import audit as judge
    from flopcheck.auditor import pipeline
    from flopcheck.pipelines import is_pipeline

    if is_pipeline(claim.model):
        return pipeline.judge(claim)
    verdict = judge(claim, counters=names)
    return (
        verdict if verdict.passed else replace(verdict, pipeline_hint=pipeline.hint(verdict.claim, verdict.true_flops))
    )


def _refusal(claim, code: str) -> str:
    return (
        f"claim {claim.id or claim.text!r} names code ({code}), which runs only with your say-so: "
        f"audit it with --allow-code (allow_code=True in Python) if you trust the file"
    )


@dataclass
class CausesTable:
    """The registry of causes, and (measured) which counter does what on DiT-S/2."""

    who: Any = None
    exit_code: int = 0

    def to_text(self, markdown: bool = False) -> str:
        from flopcheck.render.causes import causes_table

        return causes_table(self.who, markdown=markdown)


def causes(measure: bool = False) -> CausesTable:
    """The causes (a plugin's too); with measure, every counter reconciled on DiT-S/2 at 256 px on both paths names
    who does what."""
    from flopcheck import plugins

    plugins.load()  # a plugin's causes are in the table
    if not measure:
        return CausesTable()
    from flopcheck.counters import COUNTERS
    from flopcheck.counters.pool import Job, run_counters
    from flopcheck.reconciler import reconcile as explain
    from flopcheck.render.causes import who_does_what
    from reference_models import ATTN_PATHS

    jobs = [Job(DEFAULT_RECONCILE[0], DEFAULT_RECONCILE[1], a) for a in ATTN_PATHS]
    return CausesTable(who_does_what([explain(c) for c in run_counters(list(COUNTERS), jobs) if c.ok]))


__all__ = [
    "Auditing",
    "CausesTable",
    "Comparison",
    "Reconciling",
    "audit",
    "causes",
    "compare",
    "counter_names",
    "reconcile",
]
