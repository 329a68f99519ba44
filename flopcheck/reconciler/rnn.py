"""Recurrent layers (RNN, LSTM, GRU and their cells) as a counter's module rule counts them, from the layer's config.

The rules are the libraries' own, written out so that a counter's number reproduces: thop's rnn_hooks, ptflops'
and calflops' rnn_flops, torchinfo's weights x output positions. Per layer, direction and step each adds to the
multiply-adds on the weight matrices (the exact count's, 2 FLOPs per multiply-add) a few terms in units of the
hidden width h: the bias adds (b_ih and b_hh, 2 x gates x h) and the gates' elementwise work (sums of the two
products, the Hadamard products of the cell state). calflops counts a dot product of length n as 2n - 1 FLOPs, one
short per output element of each of the two products. A layer whose exact count does not divide into steps (a
projection, proj_size) gets no rule: its reading is left to the residual.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from flopcheck.reconciler import causes as K
from flopcheck.reconciler.parts import Part, split
from flopcheck.types import Count, Item, Unit, Work

if TYPE_CHECKING:
    from flopcheck.reconciler.reference import Reference

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}  # weight blocks per matrix: i, f, g, o; r, z, n; one


@dataclass(frozen=True)
class RnnRule:
    """A library's rule for a recurrent layer, per layer, direction and step, in units of h: `elementwise` by kind,
    whether it adds the biases, `dot_short`: output elements of the two products it counts one short (2n - 1)."""

    elementwise: dict[str, int] = field(default_factory=dict)
    bias: bool = True
    dot_short: bool = False


def steps(ref: Reference, path: str) -> int | None:
    """Samples x time steps the layer ran, N*T: its exact FLOPs are 2 x N*T x every weight element (each direction
    and layer multiplies its w_ih and w_hh once a step); None where they do not divide (a projection)."""
    layer = ref.layers[path]
    exact = ref.per_instance(path)
    if not layer.weight or not exact or exact % (2 * layer.weight):
        return None
    return int(exact // (2 * layer.weight))


def rnn_parts(item: Item, count: Count, ref: Reference, rule: RnnRule) -> list[Part] | None:
    """The item of a recurrent layer read by the library's rule: the exact multiply-adds, its bias adds and the
    gates' elementwise work (MAC counters count each add once: 2 FLOPs as read), calflops' 2n - 1; None if the item
    is not a recurrent layer the rule covers."""
    layer = ref.layers.get(item.name)
    if layer is None or layer.rnn is None or (n := steps(ref, item.name)) is None:
        return None
    kind, _inputs, h, layers, _bias, dirs, _batch_first = layer.rnn
    cells = n * layers * dirs  # one cell update per layer, direction and step
    per = 2 if count.unit is Unit.MAC else 1  # a MAC counter's ops read as FLOPs
    components: list[tuple[Any, int]] = [(Work.LINEAR, ref.per_instance(item.name))]
    if rule.bias:
        components.append((Work.BIAS, per * n * layer.bias))  # b_ih + b_hh: 2 x gates x h per cell
    components.append((Work.ELEMENTWISE, per * cells * rule.elementwise.get(kind, 0) * h))
    if rule.dot_short:
        components.append((K.DOT_PRODUCT_2N_MINUS_1, -per * cells * 2 * GATES[kind] * h))
    return split(item.name, item.flops, components)


def input_bias_apart(ref: Reference) -> int:
    """Bias elements that CPU adds apart from a matmul in a batch-first GRU or RNN of more than one sample: it projects
    the first layer's whole input at once, and the (T, N, in) view of a batch-first input is not contiguous, so that
    is mm and then b_ih added (a later layer's input, and one sample's, are contiguous: addmm). N*T x gates x h per
    direction. An LSTM runs as one oneDNN op there, not so."""
    out = 0
    for path, layer in ref.layers.items():
        if layer.rnn is None or layer.rnn[0] not in ("GRU", "RNN") or not layer.rnn[4] or not layer.rnn[6]:
            continue
        n = steps(ref, path)
        if n is not None and ref.leading(path) > 1:
            out += n * GATES[layer.rnn[0]] * layer.rnn[2] * layer.rnn[5]
    return out


__all__ = ["GATES", "RnnRule", "input_bias_apart", "rnn_parts", "steps"]
