"""ptflops, backend 'pytorch': forward hooks keyed by module type plus patched functionals. Unit: MAC.

Detail, captured during ptflops' own run: every hooked module's __flops__ (and whether ptflops'
accumulate_flops reached it: it stops at the first hooked module, so the children of a hooked
container are computed and then left out), and every patched functional call by name.
Skipped: module types with no hook (their own forward's ops count 0 unless a patched functional runs), and
torch.einsum by its calls where ptflops has no patch for it (0.7.5 has none).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from math import isqrt
from typing import TYPE_CHECKING, Any

from flopcheck.counters import counter
from flopcheck.counters.base import (
    Detail,
    Measurement,
    bias_label,
    bias_of_addmm,
    keyword_inputs,
    module_types,
    unhooked_module_types,
)
from flopcheck.reconciler import causes as K
from flopcheck.reconciler.classify import layer_work, op_work, ops_served, read_bias
from flopcheck.reconciler.detectors import einsum_contractions
from flopcheck.reconciler.parts import Part, bare, part, split
from flopcheck.reconciler.rnn import RnnRule, rnn_parts
from flopcheck.types import Count, Item, Kind, Mechanism, Skip, Unit, Work

if TYPE_CHECKING:
    from torch import nn

    from flopcheck.reconciler.causes import Cause
    from flopcheck.reconciler.reference import Reference


def _attention_rule(i: Item, ref: Reference) -> list[Part]:
    """ptflops' hook for an attention module (its MODULES_MAPPING has timm's Attention and nn.MultiheadAttention)
    counts, per sample, QK^T + attn@V plus Tq*e*h for scaling q and h*Tq*Tk for the softmax, e and h read from the
    module as the hook does; T follows from the exact QK^T at that module, 2*N*h*T^2*e (a MultiheadAttention's Tq
    and Tk from its call). MultiheadAttention's hook adds its projections (the exact count's at that path) and
    their biases: in_proj (Tq + 2Tk)*d, out_proj Tq*d."""
    attention = ref.per_instance(i.name, ("qk", "av"))
    layer, n = ref.layers[i.name], ref.leading(i.name)  # its rows: MobileViT runs B x patch-area sequences
    h, e = layer.heads, layer.head_dim
    if h is None or e is None:  # a module that states no heads: its attention matches, the rest is left over
        return split(i.name, i.flops, [(Work.ATTENTION, attention)])
    t = isqrt(ref.per_instance(i.name, ("qk",)) // (2 * n * h * e))
    tq, tk, _ = ref.exact.mha.get(i.name, (t, t, True))  # a MultiheadAttention's lengths, as it was called
    components: list[tuple[Work | Kind | Cause, int]] = [
        (Work.ATTENTION, attention),
        (Work.ELEMENTWISE, 2 * n * (tq * e * h + h * tq * tk)),
    ]
    if "MultiheadAttention" in (layer.type_name, layer.subclass_of):  # its hook counts the projections too
        d = h * e  # embed_dim: q, k, v projections T*d*d each; in_proj_bias (Tq + 2Tk)*d; out_proj Tq*d*(d + 1)
        components += [
            (Work.LINEAR, ref.per_instance(i.name)),
            (Work.BIAS, 2 * n * ((tq + 2 * tk if layer.bias else 0) + tq) * d),
        ]
    return split(i.name, i.flops, components)


# ptflops' rnn_flops, per cell: the RNN's sum (h); the GRU's r Hadamard (h), its sums (3h) and h_t (3h); the LSTM's
# sums (4h), c_t (3h) and h_t (3h); then b_ih and b_hh
RNN = RnnRule(elementwise={"LSTM": 4 + 3 + 3, "GRU": 1 + 3 + 3, "RNN": 1})


_MATMULS = frozenset({"matmul", "bmm"})  # its TENSOR_OPS_MAPPING's torch.matmul, torch.bmm and their Tensor methods


def _shared_matmuls(count: Count, ref: Reference) -> list[Item]:
    """The patched matmul items whose op did attention and free matmuls both in the exact count (MViT's torch.matmul:
    QK^T, attn@V and its relative positions' temporal product), which no one work names."""
    return [
        i
        for i in count.detail
        if i.where is Mechanism.FUNCTIONAL and bare(i.name) in _MATMULS and op_work(i.name, ref) is None
    ]


def _matmul_parts(items: list[Item], ref: Reference) -> list[Part]:
    """ptflops' matmul patch, prod(input.shape) x other.shape[-1] MACs a call (an unbroadcast product's exact
    multiply-adds), read as what bmm did in the exact count: its attention, and its free matmuls less those the
    einsums ran as (no patch counts them: FC229)."""
    served = ops_served("bmm", ref)
    free = served.get(Work.LINEAR, 0) - einsum_contractions(ref)
    name = " + ".join(i.name for i in items)
    components: list[tuple[Work | Kind | Cause, int]] = [
        (Work.ATTENTION, served.get(Work.ATTENTION, 0)),
        (Work.MATMUL, free),
    ]
    return split(name, sum(i.flops for i in items), components)


def read(count: Count, ref: Reference) -> list[Part]:
    """ptflops, pytorch backend: Linear and conv hooks add one per bias element; an attention module's hook counts
    attention and its scaling and softmax (MultiheadAttention's its projections too); an RNN by its rnn_flops
    (reconciler.rnn); torch.addmm's bias once per call; modules inside a hooked one are computed but never summed;
    F.gelu and F.relu are patched while nn.GELU and nn.ReLU are hooked, so an activation module's call counts twice
    (up to what the hooked modules of that type counted; the rest is the functional's own elementwise work); a
    torch.matmul that did attention and free matmuls both, as the two (_matmul_parts)."""
    by_type: dict[str, int] = defaultdict(int)
    for i in count.detail:
        if i.where is Mechanism.MODULE and i.in_total:
            by_type[i.type.lower()] += i.flops
    shared = _shared_matmuls(count, ref)
    parts = _matmul_parts(shared, ref) if shared else []
    for i in count.detail:
        if any(i is m for m in shared):
            continue
        if i.where is Mechanism.FUNCTIONAL and (bias := read_bias(i)) is not None:
            parts.append(bias)
        elif i.where is Mechanism.FUNCTIONAL:
            double = min(i.flops, by_type.get(bare(i.name).replace("_", ""), 0))
            rest = i.flops - double
            parts += [part(double, i.name, K.ACTIVATION_DOUBLE_COUNTED)] if double else []
            parts += [part(rest, i.name, op_work(i.name, ref))] if rest else []
        if i.where is Mechanism.FUNCTIONAL:
            continue
        if i.in_total and (rnn := rnn_parts(i, count, ref, RNN)) is not None:
            parts += rnn
            continue
        work = layer_work(i)
        if not i.in_total:  # computed, then dropped by accumulate_flops
            if work is Work.LINEAR:
                parts.append(
                    Part(-ref.per_instance(i.name), i.name, cause=K.HOOKED_CONTAINER_DROPS_CHILDREN, counted=False)
                )
            continue
        if ref.per_instance(i.name, ("qk", "av")):  # the module computes attention in its own forward
            parts += _attention_rule(i, ref)
        elif work in (Work.LINEAR, Work.CONV):
            parts += split(
                i.name, i.flops, [(work, ref.per_instance(i.name)), (Work.BIAS, 2 * ref.bias_elements(path=i.name))]
            )
        else:
            parts += split(i.name, i.flops, [(work, i.flops)])
    return parts


def _named_handlers(
    mapping: dict[Any, Callable[..., Any]], calls: list[tuple[str, int]]
) -> dict[Any, Callable[..., Any]]:
    """A copy of ptflops' handler map whose handlers also record (name, flops)."""

    def wrap(name: str, handler: Callable[..., Any]) -> Callable[..., Any]:
        def recorded(*args: Any, **kwargs: Any) -> Any:
            flops = handler(*args, **kwargs)
            bias = bias_of_addmm(name, args, kwargs)  # its rule's numel(input): the bias, apart
            calls.append((name, int(flops) - bias))
            if bias:
                calls.append((bias_label(name, args[0]), bias))
            return flops

        return recorded

    # F.max_pool2d is torch's boolean_dispatch wrapper, qualname 'boolean_dispatch.<locals>.fn'
    def name(k: Any) -> str:
        qualname = getattr(k, "__qualname__", str(k))
        return getattr(k, "__name__", qualname) if "<locals>" in qualname else qualname

    return {k: wrap(name(k), v) for k, v in mapping.items()}


def _batch(model: nn.Module, inputs: tuple[Any, ...]) -> Any:
    """What ptflops' input_constructor returns: one tensor is called as model(x) (a dict would be model(**named),
    and its layer hooks read the positional inputs: a top-level nn.Linear called by keyword fails in its hook)."""
    return inputs[0] if len(inputs) == 1 else keyword_inputs(model, inputs)


@counter(
    "ptflops_pytorch",
    mechanism="module hooks plus patched functionals (F.*)",
    skips=(
        "the layers inside a container it hooks (timm's Attention: qkv and proj); counts bias, norms and "
        "activations (twice where a patched functional fires too), and divides its total by the batch"
    ),
    library="ptflops",
    unit=Unit.MAC,
    order=5,
    install="pip install ptflops",
    convention="ptflops get_model_complexity_info(backend='pytorch'): MACs ('Computational complexity: ... GMac')",
    reader=read,
)
def run(model: nn.Module, inputs: tuple[Any, ...]) -> Measurement:
    import torch
    from ptflops import (  # lazy: ptflops is optional, imported in the worker only
        get_model_complexity_info,
        pytorch_engine,
        pytorch_ops,
    )

    functional_calls: list[tuple[str, int]] = []
    modules: list[tuple[str, float, bool]] = []
    divided = [1]  # ptflops divides its total and every module's by the batch it saw (len of the first input)

    def capture(flops_model: Any, *args: Any, **kwargs: Any) -> None:  # stands in for print_model_with_flops
        batch = flops_model.__batch_counter__
        hooked: list[str] = []
        divided[0] = max(1, int(batch))
        for path, m in flops_model.named_modules(remove_duplicate=False):  # parents first; a shared one at each path
            if hasattr(m, "__flops__") and pytorch_engine.is_supported_instance(m):
                reached = not any(p == "" or path.startswith(p + ".") for p in hooked)
                hooked.append(path)
                modules.append((path, m.__flops__ / batch, reached))

    saved = (
        pytorch_engine.print_model_with_flops,
        dict(pytorch_ops.FUNCTIONAL_MAPPING),
        dict(pytorch_ops.TENSOR_OPS_MAPPING),
    )
    pytorch_engine.print_model_with_flops = capture
    einsum, einsums = torch.einsum, [0]
    if einsum not in saved[1] and einsum not in saved[2]:  # no patch of ptflops' counts it: its calls, skipped

        def spied(*args: Any, **kwargs: Any) -> Any:
            einsums[0] += 1
            return einsum(*args, **kwargs)

        torch.einsum = spied
    pytorch_ops.FUNCTIONAL_MAPPING.update(_named_handlers(saved[1], functional_calls))
    pytorch_ops.TENSOR_OPS_MAPPING.update(_named_handlers(saved[2], functional_calls))
    try:
        macs, _params = get_model_complexity_info(
            model,
            (1,),
            input_constructor=lambda _: _batch(model, inputs),
            as_strings=False,
            backend="pytorch",
            print_per_layer_stat=True,
            verbose=False,
        )
    finally:
        torch.einsum = einsum
        pytorch_engine.print_model_with_flops = saved[0]
        pytorch_ops.FUNCTIONAL_MAPPING.update(saved[1])
        pytorch_ops.TENSOR_OPS_MAPPING.update(saved[2])
    if macs is None:
        raise RuntimeError("ptflops returned None: the forward raised inside ptflops, which prints it and returns None")
    types = module_types(model)
    detail = Detail(Unit.MAC)
    for path, flops, reached in modules:
        if flops:
            detail.add(path, flops, where=Mechanism.MODULE, type=types.get(path, ""), in_total=reached)
    by_name: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for name, flops in functional_calls:
        by_name[name][0] += flops
        by_name[name][1] += 1
    for name, (flops, n) in by_name.items():
        detail.add(name, flops, calls=n, where=Mechanism.FUNCTIONAL)
    hooked_types = set(pytorch_ops.MODULES_MAPPING)
    skipped = unhooked_module_types(
        model,
        hooked_types,
        "no ptflops hook for this module type: its own forward() counts 0 except patched functionals",
    )
    if einsums[0]:
        reason = "ptflops patches no torch.einsum: its contractions count 0"
        skipped += (Skip("einsum", einsums[0], reason, Mechanism.FUNCTIONAL, Work.MATMUL),)
    return Measurement(macs, tuple(detail.items), skipped, samples_divided=divided[0])
