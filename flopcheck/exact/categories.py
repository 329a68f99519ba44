"""Categories for the ops flopcheck does not count, so that none is skipped in silence.

The formula convention counts multiply-adds of matrix products, convolutions and attention. Every
other op is recorded under one `Work` category (norm, softmax, elementwise, ...) with the elements it wrote.
"""
from __future__ import annotations

import torch

from flopcheck.types import Work

_NAMED: dict[Work, tuple[str, ...]] = {
    Work.NORM: ("native_layer_norm", "layer_norm", "native_group_norm", "group_norm", "native_batch_norm",
                "batch_norm", "_native_batch_norm_legit", "_native_batch_norm_legit_no_training", "rms_norm",
                "_fused_rms_norm", "instance_norm"),
    Work.SOFTMAX: ("_softmax", "softmax", "_safe_softmax", "_log_softmax", "log_softmax"),
    Work.MOVEMENT: ("cat", "stack", "clone", "copy_", "_to_copy", "embedding", "index_select", "gather", "index",
                    "repeat", "constant_pad_nd", "contiguous", "split_with_sizes_copy", "_unsafe_index"),
    # aliases, shape queries, and dropout, which returns its input in eval
    Work.VIEW: ("_unsafe_view", "alias", "detach", "lift_fresh", "dropout", "feature_dropout", "alpha_dropout", "size",
                "sym_size", "numel", "dim", "Int", "int", "ScalarImplicit"),
    Work.CREATION: ("empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full",
                    "full_like", "arange", "rand", "randn", "randint", "uniform_", "normal_", "fill_", "zero_",
                    "scalar_tensor", "new_empty", "new_zeros", "new_ones", "new_full", "bernoulli_"),
}
_BY_NAME = {name: cat for cat, names in _NAMED.items() for name in names}
SOFTMAX_OPS = frozenset(_NAMED[Work.SOFTMAX])


def named_category(name: str) -> Work | None:
    """The category an op's bare name ('_softmax', 'size') is listed under, if it is."""
    return _BY_NAME.get(name)


def categorize(func) -> Work:
    """The category of an aten overload with no FLOP formula."""
    name = func.overloadpacket.__name__
    if name in _BY_NAME:
        return _BY_NAME[name]
    if getattr(func, "is_view", False):
        return Work.VIEW
    tags = getattr(func, "tags", ())
    if torch.Tag.pointwise in tags:
        return Work.ELEMENTWISE
    if torch.Tag.reduction in tags:
        return Work.REDUCTION
    return Work.OTHER
