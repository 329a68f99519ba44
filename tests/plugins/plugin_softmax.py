"""A counter from outside flopcheck, in one file: flopcheck's exact count plus softmax at 5 FLOPs per element
(exp, max, subtract, sum, divide), reported under a name of its own that no built-in reading knows.

Loaded as a plugin (FLOPCHECK_PLUGINS=plugin_softmax); tests/test_plugins.py runs it through the CLI.
"""

from __future__ import annotations

from dataclasses import replace

from flopcheck.counters import counter
from flopcheck.counters.base import Detail, Measurement
from flopcheck.reconciler.classify import by_kind
from flopcheck.reconciler.parts import Part
from flopcheck.types import Mechanism, Unit, Work

SOFTMAX_ITEM = "softmax (5 per element)"


def read(count, ref) -> list[Part]:
    """The exact count's items by their kinds; the softmax item unread: nothing here says what it is."""
    regular = replace(count, detail=tuple(i for i in count.detail if i.name != SOFTMAX_ITEM))
    return by_kind(regular, ref) + [Part(i.flops, i.name) for i in count.detail if i.name == SOFTMAX_ITEM]


@counter(
    "plugin_softmax",
    library="flopcheck",
    unit=Unit.FLOP,
    install="-",
    convention="a test plugin: FLOPs, softmax at 5 per element",
    reader=read,
)
def run(model, inputs) -> Measurement:
    from flopcheck.exact import count_forward, flop_kinds

    count = count_forward(model, inputs, kind_map=flop_kinds(model))
    softmax = 5 * count.uncounted_by_category().get(Work.SOFTMAX, (0, 0))[1]
    detail = Detail(Unit.FLOP)
    for term in count.terms():
        detail.add(term.path, term.flops, where=Mechanism.MODULE, type=term.kind.value)
    detail.add(SOFTMAX_ITEM, softmax)
    return Measurement(count.total + softmax, tuple(detail.items))
