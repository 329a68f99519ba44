"""A counter's count carried over sequence length: counted at three small token counts, fitted exactly, checked at a
fourth, evaluated at the model's own length.

At fixed depth, width, text and every other axis of the input, a transformer's work along one axis of its token
grid is c(n) = a + bn + cn^2 in the n columns of tokens (linear layers, norms and elementwise work per token: bn;
attention's T x T scores: cn^2; what is per sample: a), and so is each counter's count, whatever it counts per
token or per score, as long as its conventions do not change with n. Three counts fix a, b, c exactly (Lagrange's
interpolation in fractions); a fourth checks them; the count at the model's own n is then the counter's own count
there, to the FLOP, without running it at n. A counter whose counts are not such a polynomial (a rule that changes
with the length, a count that is not whole) is refused in one line: its reading could not be made.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import TYPE_CHECKING

from flopcheck.types import Count, Item

if TYPE_CHECKING:
    from flopcheck.specs import ModelSpec
    from flopcheck.subject import Subject

STEPS = (8, 16, 32, 64)  # pixel steps of the input's width tried, smallest first: the first the model builds at
POINTS = (1, 2, 3)  # the fit's widths, in steps
CHECK = 4  # the width, in steps, whose count the fit must give exactly
BUILT = re.compile(r"\binput (\d+)x(\d+) px\b")  # a builder's note on its input ('input 832x480 px x 81 frames ...')

Quadratic = tuple[Fraction, Fraction, Fraction]


def quadratic(points: list[tuple[int, Fraction]]) -> Quadratic:
    """(a, b, c) of the one c(n) = a + bn + cn^2 through three points: Lagrange's basis, in exact fractions."""
    (x0, y0), (x1, y1), (x2, y2) = points
    coeffs = [Fraction(0)] * 3
    for xi, yi, (xj, xk) in ((x0, y0, (x1, x2)), (x1, y1, (x0, x2)), (x2, y2, (x0, x1))):
        scale = yi / ((xi - xj) * (xi - xk))  # y_i (n - x_j)(n - x_k) / ((x_i - x_j)(x_i - x_k))
        coeffs[0] += scale * xj * xk
        coeffs[1] -= scale * (xj + xk)
        coeffs[2] += scale
    return coeffs[0], coeffs[1], coeffs[2]


def at(q: Quadratic, n: int) -> Fraction:
    """a + bn + cn^2."""
    return q[0] + q[1] * n + q[2] * n * n


def exact(x: float | int) -> Fraction:
    """A number as reported, exactly (a float by its shortest repr)."""
    return Fraction(repr(x)) if isinstance(x, float) else Fraction(x)


def carry(values: list[Fraction], full: int, whole: bool) -> Fraction | None:
    """The value at n = full of the quadratic through values at POINTS, when it gives values[CHECK] exactly (and,
    `whole`, has whole coefficients); None where it does not."""
    q = quadratic(list(zip(POINTS, values)))
    if at(q, CHECK) != values[len(POINTS)] or (whole and any(x.denominator != 1 for x in q)):
        return None
    return at(q, full)


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
    """The (W, H) pixels a spec's input was built at, as its builder's note says; None where it says none."""
    for note in subject.measured().notes:
        m = BUILT.search(note)
        if m:
            return int(m.group(1)), int(m.group(2))
    return None


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


def fitted(counts: list[Count | None], full: int, widths: list[int]) -> Count | str:
    """The count at n = full from counts at POINTS then CHECK (at `widths` pixels): its total and each line of its
    detail fitted (the same lines at every length, their calls alike); or why not, in words."""
    for c, w in zip(counts, widths):
        if c is None or not c.ok:
            return f"its count at {w} px wide gave none ({c.error if c is not None else 'no result'})"
    got = [c for c in counts if c is not None]
    if len({_convention(c) for c in got}) > 1:
        return "its detail or its skips differ between the cut lengths, so its convention changes with the length"
    flops = carry([exact(_flops(c)) for c in got], full, True)
    reported = carry([exact(_reported(c)) for c in got], full, False)
    if flops is None or reported is None:
        listed = ", ".join(f"{_flops(c):,}" for c in got)
        return f"its counts at the cut lengths are not a + bT + cT^2 in whole FLOPs ({listed})"
    detail = []
    for lines in zip(*(c.detail for c in got)):
        item = _fitted_item(list(lines), full)
        if item is None:
            return f"its line {lines[0].name} is not a + bT + cT^2 in whole FLOPs over the cut lengths"
        detail.append(item)
    return replace(
        got[-1], reported=float(reported), flops=int(flops), detail=tuple(detail), time_s=None, peak_rss_mb=None
    )


def _convention(c: Count) -> tuple[object, ...]:
    """What must be alike at every cut length: its unit, its skips, and its detail's lines but for their numbers."""
    return c.unit, c.skipped, tuple((i.name, i.calls, i.where, i.type, i.in_total) for i in c.detail)


def _fitted_item(lines: list[Item], full: int) -> Item | None:
    """One line of a counter's detail at n = full, fitted like its total."""
    flops = carry([Fraction(i.flops) for i in lines], full, True)
    reported = carry([exact(i.reported) for i in lines], full, False)
    if flops is None or reported is None:
        return None
    return replace(lines[-1], flops=int(flops), reported=float(reported))


def _flops(c: Count) -> int:
    assert c.flops is not None, c  # ok: checked by the caller
    return c.flops


def _reported(c: Count) -> float:
    assert c.reported is not None, c  # ok: a count with FLOPs has its reported number
    return c.reported
