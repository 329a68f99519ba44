"""calflops' calculate_flops (a fork of DeepSpeed's profiler): patched functionals and tensor
methods, summed per module. It returns (flops, macs, params); the FLOPs figure is reported.

Detail: every patched call, by functional name, logged from calflops' own module stack, and what each of its
module hooks (its RNN rules) added, by module path; a module shared at several paths, what its total summed again
at each later path (calflops' get_module_flops walks children, per path).
Skipped: the aten ops that ran outside any patched functional (rebuilt by an op recorder that
notes which ops ran inside a logged call), e.g. '@' and fused attention when it patches neither.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from flopcheck.counters import counter
from flopcheck.counters.base import (
    Detail,
    Measurement,
    bias_label,
    bias_of_addmm,
    later_paths,
    read_deepspeed_style,
    run_logged,
)
from flopcheck.op_names import Family, family
from flopcheck.reconciler.classify import read_bias
from flopcheck.reconciler.einsum import calflops_rule, einsum_parts
from flopcheck.reconciler.parts import Part
from flopcheck.reconciler.rnn import RnnRule, rnn_parts
from flopcheck.types import Count, Mechanism, Unit

if TYPE_CHECKING:
    from torch import nn

    from flopcheck.reconciler.reference import Reference

# calflops' _rnn_flops, per cell: each product 2n - 1 FLOPs; then, as ptflops (whose rule it copied), the LSTM's sums
# (4h), c_t (3h) and h_t (3h), the GRU's 7h, the RNN's h; then b_ih and b_hh
RNN = RnnRule(elementwise={"LSTM": 4 + 3 + 3, "GRU": 1 + 3 + 3, "RNN": 1}, dot_short=True)


def read(count: Count, ref: Reference) -> list[Part]:
    """calflops: a module its hooks counted (an RNN) by its rule (reconciler.rnn), its einsums by their equations
    (reconciler.einsum), every other functional as DeepSpeed's profiler reads it."""
    parts: list[Part] = []
    functionals = []
    for i in count.detail:
        rnn = rnn_parts(i, count, ref, RNN) if i.where is Mechanism.MODULE else None
        if rnn is not None:
            parts += rnn
        elif i.where is Mechanism.MODULE:
            parts.append(Part(i.flops, i.name))  # a hooked module no rule here reads: left over
        elif family(i.name) is Family.EINSUM and (einsum := einsum_parts(i, count, ref, calflops_rule)) is not None:
            parts += einsum
        elif (bias := read_bias(i)) is not None:
            parts.append(bias)
        else:
            functionals.append(i)
    return parts + read_deepspeed_style(replace(count, detail=tuple(functionals)), ref)


def _recording(
    mapping: dict[Any, Callable[..., Any]], paths: dict[int, str], hooked: list[tuple[str, str, int]]
) -> dict[Any, Callable[..., Any]]:
    """calflops' module hooks, each also recording (path, class, FLOPs it added)."""

    def wrap(hook: Callable[..., Any]) -> Callable[..., None]:
        def recorded(module: Any, inputs: Any, output: Any) -> None:
            before = module.__flops__
            hook(module, inputs, output)
            hooked.append((paths.get(id(module), ""), type(module).__name__, module.__flops__ - before))

        return recorded

    return {k: wrap(v) for k, v in mapping.items()}


@counter(
    "calflops_hooks",
    mechanism="module hooks plus patched functionals, in FLOPs",
    skips=(
        "fused SDPA (F.scaled_dot_product_attention is not patched) and Tensor.__matmul__ (explicit "
        "attention); counts norms, elementwise ops, bias and einsums that only permute"
    ),
    library="calflops",
    unit=Unit.FLOP,
    order=9,
    install="pip install 'flopcheck[calflops]'",
    convention="calflops.calculate_flops returns (flops, macs, params); flops = 2 x macs",
    reader=read,
)
def run(model: nn.Module, inputs: tuple[Any, ...]) -> Measurement:
    from calflops import (  # lazy: calflops is optional, imported in the worker only
        calculate_flops,
        calculate_pipline,
        pytorch_ops,
    )

    # calflops asserts it was given args or kwargs: a forward whose inputs are all keywords gets them back as such
    bound = {} if inputs else getattr(model.forward, "bound_kwargs", {})
    kwargs = {k: v for k, v in bound.items() if hasattr(v, "to")}  # it moves each to the model's device

    def call() -> float:
        flops: float = calculate_flops(
            model, args=list(inputs), kwargs=kwargs, print_results=False, print_detailed=False, output_as_string=False
        )[0]
        return flops

    hooked: list[tuple[str, str, int]] = []
    biases: list[tuple[str, int]] = []
    again: list[tuple[str, str, int]] = []
    saved = dict(pytorch_ops.MODULE_HOOK_MAPPING)  # calculate_pipline holds this same dict
    rules = {n: getattr(pytorch_ops, n) for n in _ADDMM_RULES}
    pytorch_ops.MODULE_HOOK_MAPPING.update(_recording(saved, {id(m): p for p, m in model.named_modules()}, hooked))
    for n, rule in rules.items():  # read by name when calflops patches torch.addmm and Tensor.addmm
        setattr(pytorch_ops, n, _bias_recording(rule, biases))
    total = calculate_pipline.CalFlopsPipline.get_total_flops
    calculate_pipline.CalFlopsPipline.get_total_flops = _per_path_recording(total, model, again)
    try:
        m = run_logged(calculate_pipline, call, "no calflops patch covers it: counted 0")
    finally:
        calculate_pipline.CalFlopsPipline.get_total_flops = total
        pytorch_ops.MODULE_HOOK_MAPPING.update(saved)
        for n, rule in rules.items():
            setattr(pytorch_ops, n, rule)
    extra = Detail(Unit.FLOP)
    for path, cls, flops in hooked + again:
        extra.add(path, flops, calls=1, where=Mechanism.MODULE, type=cls)
    for label in dict.fromkeys(b for b, _ in biases):
        extra.add(label, sum(f for b, f in biases if b == label), where=Mechanism.FUNCTIONAL)
    moved = {op: sum(f for b, f in biases if b.split(".")[0] == op) for op in ("addmm", "baddbmm")}
    detail = tuple(  # out of the op's item, into its bias items: the total is the same
        replace(i, flops=i.flops - moved[i.name], reported=i.reported - moved[i.name]) if i.name in moved else i
        for i in m.detail
    )
    return replace(m, detail=detail + tuple(extra.items))


_ADDMM_RULES = ("_addmm_flops_compute", "_tensor_addmm_flops_compute")


def _per_path_recording(
    get_total: Callable[..., Any], model: nn.Module, again: list[tuple[str, str, int]]
) -> Callable[..., Any]:
    """calflops' get_total_flops, also recording (later path, class, FLOPs) for each module shared at several paths:
    its sum enters the total again at each later path."""
    from calflops.utils import get_module_flops  # lazy: calflops is optional, imported in the worker only

    def recorded(self: Any, as_string: bool = False) -> Any:
        again.extend((path, type(m).__name__, get_module_flops(m)) for path, m in later_paths(model))
        return get_total(self, as_string)

    return recorded


def _bias_recording(rule: Callable[..., Any], biases: list[tuple[str, int]]) -> Callable[..., Any]:
    """calflops' addmm rule, also recording the bias it adds (numel of the input) under its detail label: torch.baddbmm
    shares Tensor.addmm's rule, told apart by its 3-D operands."""

    def recorded(input: Any, *args: Any, **kwargs: Any) -> Any:
        name = "baddbmm" if args and getattr(args[0], "dim", lambda: 2)() == 3 else "addmm"
        if bias := bias_of_addmm(name, (input, *args), kwargs):  # 0 when beta is 0
            biases.append((bias_label(name, input), bias))
        return rule(input, *args, **kwargs)

    return recorded
