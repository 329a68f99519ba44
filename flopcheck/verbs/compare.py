"""The compare verb: every named counter on each subject, in one pool, beside the truth it is compared with."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flopcheck import checks
from flopcheck.counters import COUNTERS, get_spec
from flopcheck.errors import InputError
from flopcheck.published import FORMULAS
from flopcheck.published.reconcile import names as formula_names
from flopcheck.render.counters import formula_rows, to_list, to_text
from flopcheck.render.reconcile import to_dict as reconcile_dict
from flopcheck.subject import Subject, counts_of
from flopcheck.types import Outcome, Reconciliation
from flopcheck.verbs.formulas import formula_results


def counter_names(names: str | list[str] | None) -> list[str]:
    """The counters asked for (default: all registered); an unknown one is bad input before anything runs."""
    return [get_spec(n).name for n in ([names] if isinstance(names, str) else names or list(COUNTERS))]


@dataclass
class Comparison:
    """Every counter's count of each subject beside the truth it is compared with."""

    counts: list[Outcome]
    truth: dict[tuple[str, int | None, str], int]  # (model, input size, attention path) -> FLOPs
    label: str  # 'formula' or 'exact count'
    inputs: str  # a model without a formula: its input in words
    exit_code: int = 0
    # published formulas' reconciliations (forward), beside the counters
    formulas: list[Reconciliation] = field(default_factory=list)
    incomplete: dict[str, str] = field(
        default_factory=dict
    )  # model -> its exact count's INCOMPLETE sentence: a lower bound

    def to_text(self) -> str:
        said = "".join(
            f"\n{m}: {why}; every ratio above is against a lower bound" for m, why in self.incomplete.items()
        )
        return (
            to_text(self.counts, self.truth, self.label, self.inputs) + formula_rows(self.formulas, self.label) + said
        )

    def to_data(self) -> list[Any]:
        rows = to_list(self.counts, self.truth) + [reconcile_dict(r) for r in self.formulas]
        return [
            {**d, "reference_incomplete": self.incomplete[d["model"]]} if d.get("model") in self.incomplete else d
            for d in rows
        ]


def run(
    subjects: list[Subject],
    names: list[str] | None = None,
    timeout_s: float = 600.0,
    progress: Any = None,
    formulas: list[str] | None = None,
) -> Comparison:
    """Each named counter on each subject, in one pool; each checked to execute on real tensors first; with formulas
    (names or 'all'), the published forward formulas beside them (the counters then only when named)."""
    checks.seconds("timeout", timeout_s)  # 1e10 s: past time_t's range, an OverflowError in every row
    found = _formulas(subjects, formulas) if formulas else []
    counts: list[Any] = []
    if not formulas or names:
        for s in subjects:
            s.check_executable()
        counts = counts_of(subjects, counter_names(names), timeout_s=timeout_s, progress=progress)
    truth = {s.key(): s.truth() for s in subjects}
    first = subjects[0]
    label, inputs = ("formula", "") if first.formula_family else ("exact count", first.measured().inputs)
    incomplete = {s.text: why for s in subjects if not s.formula_family and (why := s.exact().incompleteness())}
    return Comparison(counts, truth, label, inputs, int(bool(incomplete)), found, incomplete)


def _formulas(subjects: list[Subject], asked: list[str]) -> list[Reconciliation]:
    """The forward formulas asked for on each subject ('all': every forward one); a training formula named here is
    refused: compare is one forward (reconcile --formula NAME --training explains it)."""
    chosen = [n for n in formula_names(asked) if not FORMULAS[n].training or "all" not in asked]
    training = [n for n in chosen if FORMULAS[n].training]
    if training:
        raise InputError(
            f"{training[0]} counts a training step and compare counts one forward: reconcile MODEL --formula "
            f"{training[0]} --training explains it"
        )
    return [r for s in subjects for r in formula_results(s, chosen, training=False)]
