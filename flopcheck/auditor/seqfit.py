"""How a stand-in is cut along its input's width, so a counter's count of it can be carried over sequence length
(reconciler/carry.py `fitted`): counted at three small widths, checked at a fourth, evaluated at the model's own.

The cut is a step of pixels that divides the width the model's input was built at (its measurement's `resolution`,
a number: never read back from its notes), and at which the stand-in builds.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from flopcheck.reconciler.carry import CHECK, POINTS

if TYPE_CHECKING:
    from flopcheck.specs import ModelSpec
    from flopcheck.subject import Subject

STEPS = (8, 16, 32, 64)  # pixel steps of the input's width tried, smallest first: the first the model builds at


@dataclass(frozen=True)
class Lengths:
    """A subject's input cut along its width: `step` pixels x n, the fit's n at POINTS and CHECK, the model's own
    n = `full` (its width / step), at its own `height`."""

    step: int
    full: int
    height: int

    def widths(self) -> list[int]:
        """The fit's widths then the check's, in pixels."""
        return [self.step * n for n in (*POINTS, CHECK)]

    def cut(self, spec: ModelSpec, n: int) -> ModelSpec:
        """The spec with its input n steps wide."""
        return replace(spec, options=replace(spec.options, resolution=(self.step * n, self.height)))

    def specs(self, spec: ModelSpec) -> list[ModelSpec]:
        """The spec at the fit's widths, then the check's."""
        return [self.cut(spec, n) for n in (*POINTS, CHECK)]

    def words(self) -> str:
        """'fitted as a + bT + cT^2 over widths 16, 32, 48 px (checked at 64 px) to its 832 px'."""
        *fit, check = self.widths()
        return (
            f"fitted as a + bT + cT^2 over widths {', '.join(map(str, fit))} px (checked at {check} px) to its "
            f"{self.step * self.full} px"
        )


def built_resolution(subject: Subject) -> tuple[int, int] | None:
    """The (W, H) pixels a spec's input was built at, as its measurement holds them; None where it was not built
    from a resolution."""
    return subject.measured().resolution


def _tries(subject: Subject) -> list[Lengths] | str:
    """The cuts of the subject's input to try, smallest step first: each step of STEPS that divides its width (with
    more than CHECK steps in it); or why its input cannot be cut, in words."""
    if "resolution" not in subject.resizes():
        return f"{subject.text}'s input is not built from a resolution, so its token count cannot be cut"
    size = built_resolution(subject)
    if size is None:
        return f"{subject.text}'s input names no width in pixels, so its token count cannot be cut"
    width, height = size
    return [Lengths(s, width // s, height) for s in STEPS if width % s == 0 and width // s > CHECK]


def probes(subject: Subject, spec: ModelSpec) -> list[ModelSpec]:
    """The specs lengths() builds to find the step (the spec one step wide at each), to measure with others."""
    tries = _tries(subject)
    return [] if isinstance(tries, str) else [t.cut(spec, 1) for t in tries]


def lengths(subject: Subject, spec: ModelSpec) -> Lengths | str:
    """How `spec` (a stand-in of the subject) is cut along its input's width: the smallest step of STEPS that
    divides the subject's width and at which the spec builds; or why it cannot be cut, in words."""
    from flopcheck.specs import SpecError
    from flopcheck.specs.child import measure_all, measured  # lazy: torch-free door (the child imports torch)

    tries = _tries(subject)
    if isinstance(tries, str):
        return tries
    measure_all([t.cut(spec, 1) for t in tries])
    for t in tries:
        try:
            measured(t.cut(spec, 1))
        except SpecError:
            continue
        return t
    steps = ", ".join(map(str, STEPS))
    return f"{subject.text} builds at no step of {steps} px that divides its width, so its token count cannot be cut"
