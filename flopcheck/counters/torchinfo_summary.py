"""torchinfo's summary: 'Total mult-adds' from each leaf layer's parameters and output size. Unit: MAC.

Its rule: a Conv layer adds params x output positions; any other layer with weights adds
params x batch, so a per-token Linear is counted once per sample, not once per token.
Detail: every leaf layer with mult-adds. Skipped: leaf layers without weights, and module types
whose own forward computes (attention's matmuls, modulation), which it never sees.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from flopcheck.counters import counter
from flopcheck.counters.base import CONTAINERS, Detail, Measurement
from flopcheck.reconciler import causes as K
from flopcheck.reconciler.classify import layer_work, transposed_over_output
from flopcheck.reconciler.parts import Part, split
from flopcheck.reconciler.rnn import RnnRule, rnn_parts
from flopcheck.types import Count, Item, Kind, Mechanism, Skip, Unit, Work

if TYPE_CHECKING:
    from torch import nn

    from flopcheck.reconciler.causes import Cause
    from flopcheck.reconciler.reference import Reference

RNN = RnnRule()  # torchinfo: N*T x every weight_* and bias_* of an RNN, nothing for the gates


def read(count: Count, ref: Reference) -> list[Part]:
    """torchinfo: an RNN adds its output's N*T x each weight and bias (reconciler.rnn); a conv adds weights x output
    positions (bias too); any other layer with weights adds (weights + bias) x its output's first dimension (the
    batch; windows x batch in a Swin block), whatever its token count; an embedding table counts as weights. Its conv
    rule goes by the class's name ('Conv' in it), so a layer named like a conv that is not one (transformers' Conv1D,
    a Linear) gets (weights + bias) x N x its output width; a transposed convolution, weights x its output positions.
    A module called k times is k rows of one path: read once, its rule x k, against the exact count of all k."""
    parts: list[Part] = []
    # a weighted leaf of a type with no rule (a MoE router) whose work is linear in the exact count: its weights rule,
    # x its output's first dimension (a tuple's first tensor, as torchinfo sizes it)
    for i, calls in _merged(count.detail):
        if (rnn := rnn_parts(i, count, ref, RNN)) is not None:
            parts += rnn
            continue
        work = layer_work(i, ref)
        weights, bias = ref.weights(i.name)
        if "Conv" in i.type and not _is_conv(ref, i.name):  # its conv rule, by name, on a Linear
            exact, n = ref.per_instance(i.name), ref.leading(i.name)
            rule = (
                2 * calls * (weights + bias) * n * bias
            )  # prod(output[:1] + output[2:]) = N x out (the bias's length)
            parts += split(i.name, i.flops, [(Work.LINEAR, exact), (K.NAME_BASED_RULE, rule - exact)])
        elif work is Work.CONV:
            over = transposed_over_output(ref, i.name)
            components: list[tuple[Work | Kind | Cause, int]] = [
                (Work.CONV, ref.per_instance(i.name)),
                (Work.BIAS, 2 * ref.bias_elements(path=i.name)),
            ]
            if over is not None:  # output positions x weights, each call
                components.append(
                    (K.TRANSPOSED_CONV_OVER_OUTPUT, over + (calls - 1) * (over + ref.per_instance(i.name)))
                )
            parts += split(i.name, i.flops, components)
        elif work is Work.LINEAR or _own_linear(ref, i.name, work):
            n, exact = ref.first_rows(i.name), ref.per_instance(i.name)
            per_sample = 2 * calls * n * weights - exact  # weights x batch each call, in place of the per-token work
            parts += split(
                i.name,
                i.flops,
                [(Work.LINEAR, exact), (K.PER_TOKEN_COUNTED_PER_SAMPLE, per_sample), (Work.BIAS, 2 * calls * n * bias)],
            )
        else:
            parts += split(i.name, i.flops, [(work, i.flops)])
    return parts


def _merged(detail: Iterable[Item]) -> list[tuple[Item, int]]:
    """(item, calls): the rows of one path summed, in first-seen order."""
    rows: dict[str, list[Any]] = {}  # path -> [its summed item, its calls]
    for i in detail:
        if i.name in rows:
            rows[i.name][0] = replace(rows[i.name][0], flops=rows[i.name][0].flops + i.flops)
            rows[i.name][1] += 1
        else:
            rows[i.name] = [i, 1]
    return [(i, n) for i, n in rows.values()]


def _own_linear(ref: Reference, path: str, work: Work | Cause) -> bool:
    """A leaf of a type with no rule of its own (read as elementwise by type) that has weights and whose multiply-adds
    in the exact count are all linear (a MoE router, F.linear by its own weight): torchinfo's weights rule applies."""
    norm = ref.norm_path[path]
    kinds = {r.kind for r in ref.exact.counted if r.path == norm}
    return work is Work.ELEMENTWISE and ref.weights(path)[0] > 0 and kinds == {Kind.LINEAR}


def _is_conv(ref: Reference, path: str) -> bool:
    """The layer at the path convolves: the exact count has conv work there (a name is not evidence)."""
    norm = ref.norm_path[path]
    return any(r.path == norm and r.kind is Kind.CONV for r in ref.exact.counted)


def _path(layer: Any) -> str:  # layer: torchinfo's LayerInfo
    parts: list[str] = []
    while layer is not None and layer.parent_info is not None:
        parts.append(layer.var_name)
        layer = layer.parent_info
    return ".".join(reversed(parts))


@counter(
    "torchinfo_summary",
    mechanism="weights x output size per leaf layer",
    skips=(
        "what a module computes in its own forward (attention); counts a per-token Linear once per sample, "
        "embedding lookups and bias"
    ),
    library="torchinfo",
    unit=Unit.MAC,
    order=8,
    install="pip install torchinfo",
    convention="torchinfo summary: 'Total mult-adds'",
    reader=read,
)
def run(model: nn.Module, inputs: tuple[Any, ...]) -> Measurement:
    from torchinfo import summary  # lazy: torchinfo is optional, imported in the worker only

    stats = summary(model, input_data=list(inputs), verbose=0, depth=64)
    detail = Detail(Unit.MAC)
    no_weights: Counter[str] = Counter()
    own_forward: Counter[str] = Counter()
    for layer in stats.summary_list:
        if layer.is_leaf_layer and layer.macs:
            detail.add(_path(layer), layer.macs, where=Mechanism.MODULE, type=layer.class_name)
        elif layer.is_leaf_layer and layer.class_name not in CONTAINERS:
            no_weights[layer.class_name] += 1
        elif layer.class_name not in CONTAINERS:
            own_forward[layer.class_name] += 1
    skipped = tuple(
        [Skip(t, n, "leaf layer without weights: counted 0", Mechanism.MODULE) for t, n in sorted(no_weights.items())]
        + [
            Skip(t, n, "not a leaf: what its own forward() computes is not counted", Mechanism.MODULE, own_forward=True)
            for t, n in sorted(own_forward.items())
        ]
    )
    return Measurement(stats.total_mult_adds, tuple(detail.items), skipped)
