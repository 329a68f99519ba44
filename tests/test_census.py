"""The census: every aten operator of the installed torch in exactly one class, so no op with multiply-adds
counts 0 in silence.

  formula       exact/ops/ has its formula
  decomposes    CompositeImplicitAutograd: it never reaches the count; the ops it becomes are counted
  no mul-adds   a category (elementwise, norm, view, movement, ...): recorded with the elements it wrote
  NO FORMULA    multiply-adds and no formula: reaching one makes a count INCOMPLETE, loudly

The last class holds nothing a common model reaches, and the exact count's page (docs/exact.md) lists what it holds.
"""

from __future__ import annotations

import re
from pathlib import Path

import torch

from flopcheck.exact.categories import categorize
from flopcheck.exact.ops import FORMULAS
from flopcheck.op_names import MULTIPLY_ADD_OPS
from flopcheck.types import Work

aten = torch.ops.aten
NAMES = sorted(
    {n.split("::")[1].split(".")[0] for n in torch._C._dispatch_get_all_op_names() if n.startswith("aten::")}
)

# What common models reach (matmul, conv, attention, RNN, bilinear, distance, linalg products, PyTorch's fused
# transformer fast paths, quantized and scaled matmuls): each must have a formula, or decompose into ops that do.
COMMON = (
    "mm",
    "addmm",
    "addmm_",
    "bmm",
    "baddbmm",
    "baddbmm_",
    "addbmm",
    "mv",
    "addmv",
    "dot",
    "vdot",
    "matmul",
    "linear",
    "einsum",
    "addr",
    "_addmm_activation",
    "convolution",
    "_convolution",
    "mkldnn_convolution",
    "cudnn_convolution",
    "cudnn_convolution_transpose",
    "scaled_dot_product_attention",
    "_scaled_dot_product_attention_math",
    "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_flash_attention_for_cpu",
    "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_cudnn_attention",
    "_flash_attention_forward",
    "_efficient_attention_forward",
    "_native_multi_head_attention",
    "_transformer_encoder_layer_fwd",
    "mkldnn_rnn_layer",
    "_cudnn_rnn",
    "_trilinear",
    "_cdist_forward",
    "_euclidean_dist",
    "linalg_vecdot",
    "_scaled_mm",
    "_int_mm",
    "_weight_int8pack_mm",
    "_weight_int4pack_mm",
    "_grouped_mm",
    "_scaled_grouped_mm",
)

# Ops whose names look like multiply-add work and are not: each with why.
NOT_MULTIPLY_ADDS = {
    "_convert_indices_from_coo_to_csr": "sparse index conversion",
    "_convert_indices_from_csr_to_coo": "the same",
    "_convert_weight_to_int4pack": "weight packing",
    "_convert_weight_to_int4pack_for_cpu": "weight packing",
    "_cslt_sparse_mm_search": "a kernel-algorithm search",
    "_cudnn_rnn_flatten_weight": "weight layout",
    "mkldnn_reorder_conv2d_weight": "weight layout",
    "mkldnn_reorder_conv3d_weight": "weight layout",
    "_thnn_fused_gru_cell": "gate arithmetic on precomputed gates (elementwise)",
    "_thnn_fused_lstm_cell": "the same",
    "_thnn_fused_gru_cell_backward": "the same",
    "_thnn_fused_lstm_cell_backward_impl": "the same",
    "dist": "one norm of a difference: elementwise and a reduction",
    "fft_fftfreq": "a frequency table",
    "fft_rfftfreq": "the same",
    "lu_unpack": "unpacking a factorization (movement)",
    "multi_margin_loss": "a loss: elementwise and reductions",
    "multi_margin_loss_backward": "the same",
    "slice_inverse": "a view",
}
LOOKS = {
    "mm",
    "bmm",
    "matmul",
    "addmm",
    "addbmm",
    "baddbmm",
    "addmv",
    "mv",
    "dot",
    "vdot",
    "addr",
    "outer",
    "ger",
    "inner",
    "tensordot",
    "einsum",
    "linear",
    "bilinear",
    "trilinear",
    "kron",
    "conv",
    "convolution",
    "attention",
    "lstm",
    "gru",
    "rnn",
    "dist",
    "cdist",
    "pdist",
    "cholesky",
    "triangular",
    "lu",
    "qr",
    "svd",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "inverse",
    "inv",
    "solve",
    "det",
    "slogdet",
    "lstsq",
    "pinv",
    "matrix",
    "multi",
    "vecdot",
    "fft",
    "stft",
    "istft",
    "gemm",
}


def _decomposes(name: str) -> bool:
    """Every overload is CompositeImplicitAutograd (a Python-only overload counts as one)."""
    packet = getattr(aten, name, None)
    if packet is None:
        return True

    def composite(op) -> bool:
        try:
            return torch._C._dispatch_has_kernel_for_dispatch_key(op.name(), "CompositeImplicitAutograd")
        except RuntimeError:
            return True

    return all(composite(getattr(packet, o)) for o in packet.overloads())


def census() -> dict[str, str]:
    """op name -> its class."""
    out = {}
    for name in NAMES:
        packet = getattr(aten, name, None)
        if packet in FORMULAS:
            out[name] = "formula"
        elif _decomposes(name):
            out[name] = "decomposes"
        elif name in MULTIPLY_ADD_OPS:
            out[name] = "NO FORMULA"
        else:
            out[name] = "no mul-adds"
    return out


CENSUS = census()


def test_every_op_is_in_exactly_one_class():
    assert set(CENSUS) == set(NAMES) and len(NAMES) > 1000
    assert set(CENSUS.values()) == {"formula", "decomposes", "no mul-adds", "NO FORMULA"}


def test_no_common_op_is_left_without_a_formula():
    assert {n: CENSUS[n] for n in COMMON if CENSUS[n] not in ("formula", "decomposes")} == {}


def test_an_op_that_looks_like_multiply_adds_is_listed_one_way_or_the_other():
    # a new torch that adds, say, aten._fancy_mm fails here until it is given a formula, listed as multiply-adds
    # without one, or named in NOT_MULTIPLY_ADDS with why
    def looks(n: str) -> bool:
        named = bool(re.search("conv|attention|rnn|lstm|gru|fft|matmul", n))
        return bool(set(n.strip("_").split("_")) & LOOKS) or named

    unsorted = [n for n in NAMES if looks(n) and CENSUS[n] == "no mul-adds" and n not in NOT_MULTIPLY_ADDS]
    assert unsorted == []


def test_the_class_an_op_lands_in_when_counted():
    # what the exact counter records for an op without a formula: NO_FORMULA for multiply-add work, else its category
    assert categorize(aten.linalg_inv_ex.default) is Work.NO_FORMULA
    assert categorize(aten.convolution_backward.default) is Work.NO_FORMULA
    assert categorize(aten.add.Tensor) is Work.ELEMENTWISE
    assert categorize(aten.native_layer_norm.default) is Work.NORM


def test_the_docs_list_what_is_left_without_a_formula():
    page = Path(__file__).parent.parent.joinpath("docs", "exact.md").read_text()
    left = sorted(n for n, c in CENSUS.items() if c == "NO FORMULA")
    assert left and [n for n in left if f"`{n}`" not in page] == []
