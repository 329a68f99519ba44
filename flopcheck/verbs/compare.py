"""The compare verb: every named counter on each subject, in one pool, beside the truth it is compared with."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flopcheck.counters import COUNTERS, get_spec
from flopcheck.render.counters import to_list, to_text
from flopcheck.subject import Subject, counts_of
from flopcheck.types import Count


def counter_names(names: str | list[str] | None) -> list[str]:
    """The counters asked for (default: all registered); an unknown one is bad input before anything runs."""
    return [get_spec(n).name for n in ([names] if isinstance(names, str) else names or list(COUNTERS))]


@dataclass
class Comparison:
    """Every counter's count of each subject beside the truth it is compared with."""

    counts: list[Count]
    truth: dict[tuple[str, int | None, str], int]  # (model, input size, attention path) -> FLOPs
    label: str  # 'formula' or 'exact count'
    inputs: str  # a model without a formula: its input in words
    exit_code: int = 0

    def to_text(self) -> str:
        return to_text(self.counts, self.truth, self.label, self.inputs)

    def to_data(self) -> list[Any]:
        return to_list(self.counts, self.truth)


def run(
    subjects: list[Subject], names: list[str] | None = None, timeout_s: float = 600.0, progress: Any = None
) -> Comparison:
    """Each named counter on each subject, in one pool; each checked to execute on real tensors first."""
    for s in subjects:
        s.check_executable()
    counts = counts_of(subjects, counter_names(names), timeout_s=timeout_s, progress=progress)
    truth = {s.key(): s.truth() for s in subjects}
    first = subjects[0]
    label, inputs = ("formula", "") if first.formula_family else ("exact count", first.measured().inputs)
    return Comparison(counts, truth, label, inputs)
