"""thop's profile: forward hooks keyed by module type on every module. Unit: MAC.

Detail: the per-module ops thop returns with ret_layer_info=True (modules with a thop rule).
Skipped: every module type with no rule, whose own forward's ops thop counts as 0 in silence:
for DiT that is timm's Attention (QK^T and attn@V), the adaLN modulation and residual arithmetic.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from flopcheck.counters import counter
from flopcheck.counters.base import CONTAINERS, Detail, Measurement, module_types, unhooked_module_types
from flopcheck.reconciler import causes as K
from flopcheck.reconciler.classify import layer_work, transposed_over_output
from flopcheck.reconciler.parts import Part, split
from flopcheck.reconciler.rnn import RnnRule, rnn_parts
from flopcheck.types import Count, Kind, Mechanism, Unit, Work

if TYPE_CHECKING:
    from torch import nn

    from flopcheck.reconciler.causes import Cause
    from flopcheck.reconciler.reference import Reference

# thop's rnn_hooks, per cell: each gate's two products summed (h) plus its two biases (2h); the LSTM's c_t (3h) and
# h_t (h), the GRU's r * (W_hn h + b_hn) (h) and h_t (3h)
RNN = RnnRule(elementwise={"LSTM": 4 + 3 + 1, "GRU": 3 + 1 + 3, "RNN": 1})


def read(count: Count, ref: Reference) -> list[Part]:
    """thop: Linear = in_features x numel(out) and conv = the exact multiply-adds; norms 2 per element; an RNN by
    its rnn_hooks (reconciler.rnn)."""
    parts = []
    for i in count.detail:
        if (rnn := rnn_parts(i, count, ref, RNN)) is not None:
            parts += rnn
            continue
        work = layer_work(i)
        exact = ref.per_instance(i.name) if work in (Work.LINEAR, Work.CONV) else i.flops
        over = transposed_over_output(ref, i.name)  # its conv rule: numel(out) x C_in/groups x kernel
        components: list[tuple[Work | Kind | Cause, int]] = [(work, exact)]
        parts += split(i.name, i.flops, components + ([(K.TRANSPOSED_CONV_OVER_OUTPUT, over)] if over else []))
    return parts


def _walk(tree: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """thop's layer-info tree -> (path, ops) for every module thop stopped at."""
    for name, (ops, _params, children) in tree.items():
        path = f"{prefix}.{name}" if prefix else name
        if children:
            yield from _walk(children, path)
        else:
            yield path, ops


@counter(
    "thop_hooks",
    mechanism="forward hooks looked up by exact module type",
    skips=(
        "what a module with no rule computes in its own forward (timm's Attention: QK^T and attn@V), and "
        "subclasses of the layers it knows; counts norms"
    ),
    library="thop",
    unit=Unit.MAC,
    order=2,
    install="pip install thop",
    convention="thop.profile returns MACs (its README: 'macs, params = profile(...)')",
    required=True,
    reader=read,
)
def run(model: nn.Module, inputs: tuple[Any, ...]) -> Measurement:
    import thop  # lazy: thop is optional, imported in the worker only
    from thop.profile import register_hooks

    total, _params, tree = thop.profile(model, inputs=inputs, verbose=False, ret_layer_info=True)
    types = module_types(model)
    detail = Detail(Unit.MAC)
    for path, ops in _walk(tree):
        if ops and types.get(path) not in CONTAINERS:
            detail.add(path, ops, where=Mechanism.MODULE, type=types.get(path, ""))
    skipped = unhooked_module_types(
        model, set(register_hooks), "no thop rule for this module type: its own forward() is counted 0"
    )
    return Measurement(total, tuple(detail.items), skipped)
