"""The audit verb: each claim judged (a pipeline's against its stage combinations, a model's against its readings);
several claims' counts run in one pool, a claim that names code runs it only with the user's say-so.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from flopcheck.auditor import Verdict, judge, parse_claim, pipeline
from flopcheck.auditor.models import no_embeddings
from flopcheck.auditor.pipeline import PipelineVerdict
from flopcheck.auditor.readings import readings_of_counts
from flopcheck.auditor.tools import prefetch
from flopcheck.auditor.utilization import UtilizationVerdict
from flopcheck.children import deadline
from flopcheck.errors import InputError, bad_input
from flopcheck.executors import executor_of, using
from flopcheck.pipelines import is_pipeline
from flopcheck.render import COLUMNS
from flopcheck.render import audit as render
from flopcheck.render import utilization as render_utilization
from flopcheck.render.audit import MARKDOWN_HEAD
from flopcheck.specs import ModelSpec, SpecSource
from flopcheck.types import ModelPart
from flopcheck.verbs.compare import counter_names

if TYPE_CHECKING:
    from flopcheck.auditor import Claim
    from flopcheck.auditor.logs import LogVerdict
    from flopcheck.subject import Subject

Names = list[str] | Literal[False] | None  # the counters whose output is a reading (None: all installed; False: none)


@dataclass
class Auditing:
    """The verdicts on a list of claims, and one line for each claim that could not be judged."""

    verdicts: list[Verdict | PipelineVerdict | UtilizationVerdict]
    failed: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """2 when a claim could not be judged, 1 when a verdict does not pass, else 0."""
        return 2 if self.failed else 0 if all(v.passed for v in self.verdicts) else 1

    def to_text(self) -> str:
        """Each verdict's text; a model's within COLUMNS on a terminal (a pipe or a file takes each line whole)."""
        width = COLUMNS if sys.stdout.isatty() else None
        return "\n\n".join(RENDERINGS[type(v)].text(v, width) for v in self.verdicts)

    def to_data(self) -> list[Any]:
        return [RENDERINGS[type(v)].data(v) for v in self.verdicts]

    def to_markdown(self) -> str:
        return "\n".join([MARKDOWN_HEAD, *(RENDERINGS[type(v)].row(v) for v in self.verdicts)])


@dataclass(frozen=True)
class Rendering:
    """How one type of verdict renders: as text (within a width; None: each line whole), as JSON-ready data, and as
    a row of the audit's Markdown table."""

    text: Callable[[Any, int | None], str]
    data: Callable[[Any], Any]
    row: Callable[[Any], str]


# a verdict's type -> its rendering: a model's by render.audit (which takes Verdict for its types only: the auditor
# prints through it), a pipeline's by its own methods, a utilization claim's by render.utilization
RENDERINGS: dict[type, Rendering] = {
    Verdict: Rendering(render.to_text, render.to_dict, render.markdown_row),
    PipelineVerdict: Rendering(lambda v, _: v.to_text(), PipelineVerdict.to_dict, PipelineVerdict.markdown_row),
    UtilizationVerdict: Rendering(
        lambda v, _: render_utilization.to_text(v), render_utilization.to_dict, render_utilization.markdown_row
    ),
}


def names_code(claim: Claim) -> str:
    """The code a claim would run (its model a package.module:factory, its inputs a module:fn), or ''."""
    model = claim.model if ModelSpec(claim.model).source is SpecSource.MODULE and not is_pipeline(claim.model) else ""
    return " and ".join(x for x in (model, claim.inputs or "") if x)


def run(
    claims: list[Claim],
    names: Names = None,
    allow_code: bool = False,
    timeout_s: float | None = None,
    executor: str | None = None,
) -> Auditing:
    """Each claim judged; `names`: the counters whose output is a reading (None: every installed one, False: none).
    Several claims' counts run in one pool (each model built once); a claim whose model cannot be built or run is
    one line and the rest go on (a single claim's failure is the run's bad input). A claim that names code (a
    factory, an input builder) runs it only with `allow_code` (a claims file is data someone sent): without, it is
    refused in one line before anything of it is imported; timeout_s: each build and count of a claim's model;
    executor: where the claims' models are counted (flopcheck.executors: local, ray, ray://HOST:PORT)."""
    names = names if names is False or names is None else counter_names(names)
    where = executor_of(executor) if executor else None  # Ray missing: refused before anything is counted
    with deadline(timeout_s), using(where):  # every build and count of the claims' models: timeout_s each
        return _audit(claims, names, allow_code)


def _audit(claims: list[Claim], names: Names, allow_code: bool) -> Auditing:
    code = {id(c): "" if allow_code else names_code(c) for c in claims}
    refused = [(c, code[id(c)]) for c in claims if code[id(c)]]
    if refused and len(claims) == 1:
        raise InputError(_refusal(*refused[0]))
    claims = [c for c in claims if not code[id(c)]]
    counted = [c for c in claims if c.rate is None]  # a rate's readings are the exact step's, no counter's
    if names is not False and len(counted) > 1:
        prefetch(counted, names)
    out = Auditing([], [f"flopcheck: {_refusal(c, code)}" for c, code in refused])
    for claim in claims:
        try:
            out.verdicts.append(judge_claim(claim, names))
        except bad_input() as err:
            if len(claims) == 1:
                raise
            out.failed.append(f"flopcheck: claim {claim.id or claim.text!r}: {err}")
    return out


def judge_claim(claim: Claim, names: Names = None) -> Verdict | PipelineVerdict | UtilizationVerdict:
    """A claim about a pipeline against its stage combinations; any other against its model, and when that does not
    pass, the stage combination of the model's pipeline within 10% said beside it."""
    if claim.rate is not None:  # utilization or time: both sides of the division read
        from flopcheck.auditor import utilization  # lazy: door start-up (the GPU table, the training step's verbs)

        return utilization.judge(claim)
    if is_pipeline(claim.model):
        return pipeline.judge(claim)
    if claim.part is ModelPart.EMBEDDINGS and not claim.subject.formula_family:  # before a child counts the model
        raise no_embeddings(claim.subject.text)
    verdict = judge(claim, counters=names)
    return (
        verdict if verdict.passed else replace(verdict, pipeline_hint=pipeline.hint(verdict.claim, verdict.true_flops))
    )


def judge_live(text: str, subject: Subject, scope: dict[str, Any], names: Names, timeout_s: float | None) -> Verdict:
    """A claim about the caller's own module (a live subject, measured in this process): every named counter
    (None: all, False: none) run on it in forked children, each a reading."""
    m = subject.measured()
    claim = parse_claim(text, model=m.text, **scope)
    if names is False:
        return judge(claim, measured=m, counters=False, subject=subject)
    counts = subject.counts(counter_names(names), timeout_s or 600.0)
    found, notes = readings_of_counts(claim, counts, reference=subject.reference())
    return judge(claim, measured=m, counters=(tuple(found), tuple(notes)), subject=subject)


@dataclass
class LogAuditing:
    """The verdict on a training log, rendered by render.logs."""

    verdict: LogVerdict

    @property
    def exit_code(self) -> int:
        """0 when the log's figures pass, else 1."""
        return self.verdict.exit_code

    def to_text(self) -> str:
        from flopcheck.render.logs import to_text

        return to_text(self.verdict)

    def to_data(self) -> dict[str, Any]:
        from flopcheck.render.logs import to_dict

        return to_dict(self.verdict)


def run_log(path: str, model: str, **run: Any) -> LogAuditing:
    """A training log's steady state judged (auditor.logs.audit_log): the reading of each logged figure, the true MFU
    and HFU."""
    from flopcheck.auditor.logs import audit_log  # lazy: door start-up (the exact step imports torch)

    return LogAuditing(audit_log(path, model, **run))


def _refusal(claim: Claim, code: str) -> str:
    return (
        f"claim {claim.id or claim.text!r} names code ({code}), which runs only with your say-so: "
        f"audit it with --allow-code (allow_code=True in Python) if you trust the file"
    )
