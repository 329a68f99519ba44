"""A spec's layers as the parent reads them: each module's own weights and bias, its torch base class, and the
geometry a counter's reading depends on (groups, a transposed convolution's strides, a recurrent layer's shape).
Torch-free at import: the parent (the reconciler, the counters' pool) reads Layer, never torch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from torch import nn


@dataclass(frozen=True)
class Layer:
    """One module at an exact path: its class name, weight and bias elements, and heads and head width if it
    states them (an attention module)."""

    type_name: str
    weight: int = 0
    bias: int = 0
    heads: int | None = None
    head_dim: int | None = None
    subclass_of: str | None = None  # the torch.nn layer a class from elsewhere subclasses (timm's Linear: 'Linear')
    # a recurrent layer's (kind, input_size, hidden_size, layers, bias, directions, batch_first)
    rnn: tuple[str, int, int, int, bool, int, bool] | None = None
    transposed_groups: int | None = None  # a transposed convolution's groups (None: not one)
    # a transposed convolution's (kernel, stride, padding, dilation, output_padding), each per spatial dimension
    transposed: tuple[tuple[int, ...], ...] | None = None


def layers_of(model: nn.Module) -> tuple[dict[str, Layer], dict[str, str]]:
    """(exact path -> Layer, exact path -> normalised path) of every module."""
    from torch import nn  # lazy: torch (see the note at the top)

    from flopcheck.exact.counter import module_frames

    layers: dict[str, Layer] = {}
    norm: dict[str, str] = {}
    for m, f in module_frames(model).items():
        heads = getattr(m, "num_heads", None)
        head_dim = getattr(m, "head_dim", None)
        rnn = _recurrent(m)
        own = rnn is not None or isinstance(m, nn.MultiheadAttention)  # weights held as weight_ih_l0, in_proj_weight
        weight, bias = (
            _own_weights(m) if own else (_numel(getattr(m, "weight", None)), _numel(getattr(m, "bias", None)))
        )
        layers[f.path] = Layer(
            type(m).__name__,
            weight,
            bias,
            heads if isinstance(heads, int) else None,
            head_dim if isinstance(head_dim, int) else None,
            _torch_base(type(m)),
            rnn,
            int(m.groups) if isinstance(m, nn.modules.conv._ConvTransposeNd) else None,
            _transposed(m),
        )
        norm[f.path] = f.norm_path
    return layers, norm


def _transposed(m: nn.Module) -> tuple[tuple[int, ...], ...] | None:
    """A transposed convolution's geometry, (kernel, stride, padding, dilation, output_padding), else None."""
    from torch import nn  # lazy: torch (see the note at the top)

    if not isinstance(m, nn.modules.conv._ConvTransposeNd) or isinstance(m.padding, str):
        return None
    return tuple(tuple(int(x) for x in v) for v in (m.kernel_size, m.stride, m.padding, m.dilation, m.output_padding))


_GATED = {"LSTM": "LSTM", "GRU": "GRU", "RNN_TANH": "RNN", "RNN_RELU": "RNN"}  # nn.RNNBase.mode -> the kind


def _recurrent(m: nn.Module) -> tuple[str, int, int, int, bool, int, bool] | None:
    """An RNN/LSTM/GRU layer or cell's (kind, input_size, hidden_size, layers, bias, directions, batch_first), else
    None."""
    from torch import nn  # lazy: torch (see the note at the top)

    if isinstance(m, nn.RNNBase):
        dirs = 2 if m.bidirectional else 1
        kind = _GATED.get(m.mode, m.mode)
        return (kind, m.input_size, m.hidden_size, m.num_layers, bool(m.bias), dirs, bool(m.batch_first))
    if isinstance(m, nn.RNNCellBase):
        kind = type(m).__name__.removesuffix("Cell") if isinstance(m, (nn.LSTMCell, nn.GRUCell)) else "RNN"
        return (kind, m.input_size, m.hidden_size, 1, bool(m.bias), 1, False)
    return None


def _layer(d: dict[str, Any]) -> Layer:
    """A Layer from its JSON (a recurrent layer's tuple came back a list)."""
    rnn = d.get("rnn")
    geometry = d.get("transposed")
    return Layer(
        **{
            **d,
            "rnn": tuple(rnn) if rnn is not None else None,
            "transposed": tuple(tuple(v) for v in geometry) if geometry is not None else None,
        }
    )


def _own_weights(m: nn.Module) -> tuple[int, int]:
    """(weight, bias) elements a layer holds itself under other names: an RNN's weight_*/bias_* (w_ih, w_hh per layer
    and direction), MultiheadAttention's in_proj_weight (or q/k/v_proj_weight) and in_proj_bias."""
    named = list(m.named_parameters(recurse=False))
    return (sum(p.numel() for n, p in named if "weight" in n), sum(p.numel() for n, p in named if "bias" in n))


def _torch_base(cls: type) -> str | None:
    """The torch.nn class a class defined elsewhere subclasses (timm.layers.Linear -> 'Linear'), else None."""
    if cls.__module__.startswith("torch."):
        return None
    base = next((c for c in cls.__mro__[1:] if c.__module__.startswith("torch.nn.modules")), None)
    return base.__name__ if base is not None and base.__name__ != "Module" else None


def _numel(t: object) -> int:
    import torch  # lazy: torch (see the note at the top)

    return t.numel() if isinstance(t, torch.Tensor) else 0
