"""Op formulas of recurrent kernels (RNN, LSTM, GRU run as one kernel): every weight matrix times every step of
every sample, 2 FLOPs per multiply-add."""

from __future__ import annotations

from typing import Any

import torch

from flopcheck.exact.cost import OpCost
from flopcheck.exact.ops.registry import numel, one_cost, op_formula, shape_of


@op_formula("mkldnn_rnn_layer")
def mkldnn_rnn_layer_flop(
    x: torch.Tensor, w_ih: torch.Tensor, w_hh: torch.Tensor, *args: Any, out: Any = None, **kwargs: Any
) -> OpCost:
    """One layer, one direction of an RNN on oneDNN (LSTM on CPU): every step multiplies the input by
    w_ih (G*H, in) and the state by w_hh (G*H, H): 2 * steps*batch * (numel(w_ih) + numel(w_hh))."""
    return one_cost(2 * (numel(x) // shape_of(x)[-1]) * (numel(w_ih) + numel(w_hh)))


@op_formula("_cudnn_rnn", "miopen_rnn")
def fused_rnn_flop(x: torch.Tensor, weights: list[torch.Tensor], *args: Any, out: Any = None, **kwargs: Any) -> OpCost:
    """A whole RNN in one kernel (cuDNN, MIOpen): every 2-D weight matrix (w_ih, w_hh, w_hr per layer and direction)
    multiplies every step of every sample: 2 * steps*batch * sum(numel(W))."""
    steps_batch = numel(x) // shape_of(x)[-1]  # (T, B, in), (B, T, in), or a packed (sum of lengths, in)
    return one_cost(2 * steps_batch * sum(numel(w) for w in weights if w.dim() == 2))


@op_formula("_lstm_mps")
def mps_lstm_flop(
    x: torch.Tensor, hx: list[torch.Tensor], params: list[torch.Tensor], *args: Any, out: Any = None, **kwargs: Any
) -> OpCost:
    """A whole LSTM on MPS: as cuDNN's, every 2-D weight matrix times every step of every sample."""
    return fused_rnn_flop(x, params)
