"""Einsums read by their equations: what each call did in the exact count, and what a counter's einsum rule gives.

The exact count notes every torch.einsum call (equation, operand shapes, the ops it ran as and their kinds). An
einsum of two operands contracts (a batched matmul; attention when its output feeds a softmax, or is the
softmax's product with V) or multiplies without a sum (an outer product); one of one operand only permutes
or sums. fvcore and calflops count an einsum by numpy's `einsum_path(..., optimize="optimal")` printout: its cost
(multiplies and adds of the optimal path, plus 1) printed to 4 significant digits and parsed back; fvcore halves
it and floors (MACs), except the two batched-matmul equations it counts directly.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from flopcheck.counted import Shape
from flopcheck.reconciler import causes as K
from flopcheck.reconciler.parts import Part, split
from flopcheck.types import Count, Item, Kind, Work

if TYPE_CHECKING:
    from flopcheck.reconciler.reference import Reference

_KIND_WORK = {Kind.ATTN_SCORE.value: Kind.ATTN_SCORE, Kind.ATTN_VALUE.value: Kind.ATTN_VALUE}


def canonical(equation: str) -> str:
    """The equation with its letters renamed a, b, c, ... in order of appearance (as fvcore and calflops do)."""
    order = OrderedDict((c, 0) for c in equation if c.isalpha()).keys()
    return equation.translate({ord(c): 97 + i for i, c in enumerate(order)})


def numpy_cost(equation: str, shapes: tuple[Shape, ...]) -> float:
    """numpy's 'Optimized FLOP count' for the equation on operands of these shapes, as its printout reads back
    (%.3e); zero-stride operands: no memory for the shapes."""
    import numpy as np  # lazy: door start-up (numpy is 0.15 s; the counters' registry imports this module)

    arrays = [np.broadcast_to(np.zeros(()), s) for s in shapes]
    text = np.einsum_path(canonical(equation), *arrays, optimize="optimal")[1]
    line = next(ln for ln in text.split("\n") if "optimized flop" in ln.lower())
    return float(line.split(":")[-1])


def fvcore_rule(equation: str, shapes: tuple[Shape, ...]) -> int:
    """fvcore's einsum_flop_jit in FLOPs: 'abc,abd->acd' and 'abc,adc->adb' as their bmm's MACs, else numpy's
    cost / 2 floored; x 2 to FLOPs."""
    eq = canonical(equation)
    if eq == "abc,abd->acd":
        (n, c, t), p = shapes[0], shapes[-1][-1]
        return int(2 * n * c * t * p)
    if eq == "abc,adc->adb":
        (n, t, g), c = shapes[0], shapes[-1][1]
        return int(2 * n * t * g * c)
    return 2 * int(numpy_cost(equation, shapes) // 2)


def calflops_rule(equation: str, shapes: tuple[Shape, ...]) -> int:
    """calflops' _einsum_flops_compute: numpy's cost as read back, in FLOPs."""
    return int(numpy_cost(equation, shapes))


def einsum_parts(
    item: Item, count: Count, ref: Reference, rule: Callable[[str, tuple[Shape, ...]], int]
) -> list[Part] | None:
    """A counter's einsum item (every call of the forward, summed) read call by call: the work each did in the exact
    count (a contraction's matmul or attention), a permutation's count by the rule as extra work, and what the rule
    gives a contraction beyond its exact FLOPs (numpy's +1 and its 4 significant digits); None with no calls noted."""
    calls = ref.exact.einsums
    if not calls:
        return None
    components: list[tuple[Any, int]] = []
    for equation, shapes, ran in calls:
        counted = rule(equation, shapes)
        if len(shapes) < 2:
            components.append((K.PERMUTATION_EINSUM_COUNTED, counted))
            continue
        exact = 0
        for kind, flops in ran:
            components.append((_KIND_WORK.get(kind, Work.MATMUL), flops))
            exact += flops
        components.append((K.EINSUM_NUMPY_COST, counted - exact))
    return split(item.name, item.flops, components)  # the rules give FLOPs, as the item is read


__all__ = ["calflops_rule", "canonical", "einsum_parts", "fvcore_rule", "numpy_cost"]
