"""An adapter whose number no cause explains: one extra unnamed op."""

from flopcheck.counters.base import Measurement
from flopcheck.exact import count_forward
from flopcheck.types import Item


def run(model, inputs):
    total = count_forward(model, inputs, kind_map=model.flop_kinds).total + 1000
    return Measurement(total, (Item("aten.addmm", total, total),))
