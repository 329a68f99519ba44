"""torchprofile's profile_macs: a torch.jit trace, one handler per aten op. Unit: MAC.

Detail: its per-node MACs (reduction=None), summed per operator. Skipped: ops it warned it has no
handler for, and ops it recognises as zero MACs although they compute (add, softmax, gelu, ...); and the
weighted layers its trace never reached (their result unused), by the module scopes its graph's nodes carry.
"""

from __future__ import annotations

import warnings
from collections import Counter, defaultdict
from dataclasses import replace as _replace
from typing import TYPE_CHECKING, Any, cast

from flopcheck.counters import counter
from flopcheck.counters.base import Detail, Measurement, call_of, partly_reached, skipped_ops, trace_scopes, unreached
from flopcheck.op_names import Family, family
from flopcheck.reconciler import causes as K
from flopcheck.reconciler.classify import by_op_name, transposed_over_output
from flopcheck.reconciler.parts import Part, split
from flopcheck.types import Count, Kind, Unit, Work

if TYPE_CHECKING:
    from torch import nn

    from flopcheck.reconciler.reference import Reference


def read(count: Count, ref: Reference) -> list[Part]:
    """torchprofile: every op as its name says, but its _convolution takes a transposed convolution over its output:
    numel(out) x weight.shape[0] (every input channel) x kernel (reconciler.classify.transposed_over_output)."""
    over = [o for p in ref.layers if (o := transposed_over_output(ref, p, every_channel=True)) is not None]
    convs = [i for i in count.detail if family(i.name) is Family.CONV]
    if not over or len(convs) != 1:
        return by_op_name(count, ref)
    (conv,) = convs
    rest = by_op_name(_replace(count, detail=tuple(i for i in count.detail if i is not conv)), ref)
    return rest + split(
        conv.name, conv.flops, [(Work.CONV, ref.kinds(Kind.CONV)), (K.TRANSPOSED_CONV_OVER_OUTPUT, sum(over))]
    )


@counter(
    "torchprofile_jit",
    mechanism="a jit trace",
    skips=(
        "counts elementwise ops (adds, activations) and einsums that only permute; fails on "
        "nn.MultiheadAttention in eval"
    ),
    library="torchprofile",
    unit=Unit.MAC,
    order=7,
    install="pip install torchprofile",
    convention="torchprofile.profile_macs: multiply-accumulate operations",
    reader=read,
)
def run(model: nn.Module, inputs: tuple[Any, ...]) -> Measurement:
    # lazy: torchprofile is optional, imported in the worker only
    import torchprofile.profile as tp
    from torchprofile.handlers import HANDLER_MAP
    from torchprofile.trace import trace  # what profile_macs calls (torchprofile.profile.trace)

    from flopcheck.untyped import patched

    graphs: list[Any] = []

    def capturing_trace(*args: Any, **kwargs: Any) -> Any:
        graph = trace(*args, **kwargs)
        graphs.append(graph)
        return graph

    with patched(tp, "trace", capturing_trace), warnings.catch_warnings(), trace_scopes(model) as ran:
        warnings.simplefilter("ignore")
        # reduction=None: the MACs per graph node (torchprofile annotates int | dict)
        per_node = cast("dict[Any, int]", tp.profile_macs(model, tuple(inputs), reduction=None))
    by_op: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for node, macs in per_node.items():
        by_op[node.operator][0] += macs
        by_op[node.operator][1] += 1
    detail = Detail(Unit.MAC)
    for op, (macs, n) in by_op.items():
        detail.add(op, macs, calls=n)
    unhandled = Counter(n.operator for n in graphs[-1].nodes if n.operator not in HANDLER_MAP)
    zeroed = Counter(
        n.operator for n in graphs[-1].nodes if n.operator in HANDLER_MAP and HANDLER_MAP[n.operator] is None
    )
    skipped = skipped_ops(dict(unhandled), "no torchprofile handler: skipped") + skipped_ops(
        dict(zeroed), "torchprofile counts it as 0 MACs"
    )
    reached = {call_of(p)[0] for n in graphs[-1].nodes for p in n.scope.split("/")}
    uncalled = {p for p, _ in model.named_modules() if p not in reached}
    at: Counter[str] = Counter()  # its own MACs by the module whose scope is innermost
    for node, macs in per_node.items():
        at[call_of(node.scope.split("/")[-1])[0]] += macs
    partly = partly_reached(model, ran, (n.scope for n in graphs[-1].nodes), at, Unit.MAC)
    return Measurement(sum(per_node.values()), tuple(detail.items), skipped + unreached(model, uncalled) + partly)
