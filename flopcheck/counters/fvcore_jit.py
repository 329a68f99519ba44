"""fvcore's FlopCountAnalysis: a torch.jit trace, one handle per aten op. Unit: MAC.

Detail: fvcore's own by_operator() (its op classes: linear, matmul, conv, layer_norm, einsum, ...).
Skipped: its unsupported_ops(), the ops it traced and had no handle for, each counted 0; and of its
uncalled_modules(), the weighted layers its trace never reached (their result unused: dropped from the graph).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from flopcheck.counters import counter
from flopcheck.counters.base import Detail, Measurement, partly_reached, skipped_ops, trace_scopes, unreached
from flopcheck.op_names import Family, family
from flopcheck.reconciler.classify import by_op_name
from flopcheck.reconciler.einsum import einsum_parts, fvcore_rule
from flopcheck.reconciler.parts import Part
from flopcheck.types import Count, Unit

if TYPE_CHECKING:
    from torch import nn

    from flopcheck.reconciler.reference import Reference


def read(count: Count, ref: Reference) -> list[Part]:
    """fvcore: its einsum class by each call's equation (reconciler.einsum), every other op class as its name says."""
    parts: list[Part] = []
    rest = []
    for i in count.detail:
        einsum = einsum_parts(i, count, ref, fvcore_rule) if family(i.name) is Family.EINSUM else None
        if einsum is None:
            rest.append(i)
        else:
            parts += einsum
    return parts + by_op_name(replace(count, detail=tuple(rest)), ref)


@counter(
    "fvcore_jit",
    mechanism="a jit trace, one handle per op",
    skips=(
        "fused SDPA (no handle for aten::scaled_dot_product_attention) and every op without a handle (adds, "
        "activations); counts LayerNorm at 5 per element and einsums that only permute"
    ),
    library="fvcore",
    unit=Unit.MAC,
    order=1,
    install="pip install fvcore",
    convention="fvcore docs: 'we count one fused multiply-add as one flop'",
    required=True,
    reader=read,
)
def run(model: nn.Module, inputs: tuple[Any, ...]) -> Measurement:
    try:
        return _analysed(model, inputs)
    except RuntimeError as e:  # a jit trace takes tensors out, not a transformers cache object beside them
        if JIT_OUTPUTS not in str(e):
            raise
    return _analysed(_tensors_out(model), inputs)


# torch.jit's refusal of an output that is not tensors in tuples, lists or dicts (a DynamicCache, with use_cache)
JIT_OUTPUTS = "Only tuples, lists and Variables are supported as JIT inputs/outputs"


def _tensors_out(model: nn.Module) -> nn.Module:
    """The model with its output cut to its tensors (pytree leaves): the same ops traced, what jit can return."""
    from torch import Tensor, nn  # lazy: the worker's torch
    from torch.utils._pytree import tree_flatten

    class TensorsOut(nn.Module):
        def __init__(self, inner: nn.Module):
            super().__init__()
            self.inner = inner

        def forward(self, *args: Any) -> tuple[Tensor, ...]:
            return tuple(x for x in tree_flatten(self.inner(*args))[0] if isinstance(x, Tensor))

    return TensorsOut(model)


def _analysed(model: nn.Module, inputs: tuple[Any, ...]) -> Measurement:
    """fvcore's total, by_operator() as the detail and unsupported_ops() as the skips; its uncalled_modules() and the
    calls its trace dropped of the modules it reached (its graph's scopes, read as trace_scopes marks them, against
    its own by_module()) as skips too."""
    import fvcore.nn.jit_analysis as jit  # lazy: fvcore is optional, imported in the worker only
    from fvcore.nn import FlopCountAnalysis

    graphs: list[Any] = []
    original = jit._get_scoped_trace_graph

    def capturing(*args: Any, **kwargs: Any) -> Any:
        graph = original(*args, **kwargs)
        graphs.append(graph)
        return graph

    jit._get_scoped_trace_graph = capturing
    try:
        with trace_scopes(model) as ran:
            analysis = FlopCountAnalysis(model, inputs)
            analysis.unsupported_ops_warnings(False).uncalled_modules_warnings(False)
            total = analysis.total()
    finally:
        jit._get_scoped_trace_graph = original
    detail = Detail(Unit.MAC)
    for op, macs in analysis.by_operator().items():
        detail.add(op, macs)
    skipped = skipped_ops(dict(analysis.unsupported_ops()), "fvcore has no handle for it: counted 0")
    scopes = [n.scopeName() for n in graphs[-1].nodes()] if graphs else []
    partly = partly_reached(model, ran, scopes, analysis.by_module(), Unit.MAC)
    return Measurement(total, tuple(detail.items), skipped + unreached(model, analysis.uncalled_modules()) + partly)
