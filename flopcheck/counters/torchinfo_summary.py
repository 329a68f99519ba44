"""torchinfo's summary: 'Total mult-adds' from each leaf layer's parameters and output size. Unit: MAC.

Its rule: a Conv layer adds params x output positions; any other layer with weights adds
params x batch, so a per-token Linear is counted once per sample, not once per token.
Detail: every leaf layer with mult-adds. Skipped: leaf layers without weights, and module types
whose own forward computes (attention's matmuls, modulation), which it never sees.
"""
from __future__ import annotations

from collections import Counter

from flopcheck.counters.base import CONTAINERS, Detail, Measurement
from flopcheck.types import Skip, Unit


def _path(layer) -> str:
    parts = []
    while layer is not None and layer.parent_info is not None:
        parts.append(layer.var_name)
        layer = layer.parent_info
    return ".".join(reversed(parts))


def run(model, inputs) -> Measurement:
    from torchinfo import summary

    stats = summary(model, input_data=list(inputs), verbose=0, depth=64)
    detail = Detail(Unit.MAC)
    no_weights: Counter = Counter()
    own_forward: Counter = Counter()
    for layer in stats.summary_list:
        if layer.is_leaf_layer and layer.macs:
            detail.add(_path(layer), layer.macs, where="module", type=layer.class_name)
        elif layer.is_leaf_layer and layer.class_name not in CONTAINERS:
            no_weights[layer.class_name] += 1
        elif layer.class_name not in CONTAINERS:
            own_forward[layer.class_name] += 1
    skipped = tuple(
        [Skip(t, n, "leaf layer without weights: counted 0") for t, n in sorted(no_weights.items())]
        + [Skip(t, n, "not a leaf: what its own forward() computes is not counted") for t, n in sorted(own_forward.items())]
    )
    return Measurement(stats.total_mult_adds, tuple(detail.items), skipped)
