"""Categories for the ops flopcheck does not count, so that none is skipped in silence.

The formula convention counts multiply-adds of matrix products, convolutions and attention. Every
other op is recorded under one `Work` category (norm, softmax, elementwise, ...) with the elements it wrote.
"""

from __future__ import annotations

import torch
from torch._ops import OpOverload

from flopcheck.types import Work

_NAMED: dict[Work, tuple[str, ...]] = {
    Work.NORM: (
        "native_layer_norm",
        "layer_norm",
        "native_group_norm",
        "group_norm",
        "native_batch_norm",
        "batch_norm",
        "_native_batch_norm_legit",
        "_native_batch_norm_legit_no_training",
        "rms_norm",
        "_fused_rms_norm",
        "instance_norm",
    ),
    Work.SOFTMAX: ("_softmax", "softmax", "_safe_softmax", "_log_softmax", "log_softmax"),
    Work.MOVEMENT: (
        "cat",
        "stack",
        "clone",
        "copy_",
        "_to_copy",
        "embedding",
        "index_select",
        "gather",
        "index",
        "repeat",
        "constant_pad_nd",
        "contiguous",
        "split_with_sizes_copy",
        "_unsafe_index",
    ),
    # aliases, shape queries, and dropout, which returns its input in eval
    Work.VIEW: (
        "_unsafe_view",
        "alias",
        "detach",
        "lift_fresh",
        "dropout",
        "feature_dropout",
        "alpha_dropout",
        "size",
        "sym_size",
        "numel",
        "dim",
        "Int",
        "int",
        "ScalarImplicit",
    ),
    Work.CREATION: (
        "empty",
        "empty_like",
        "empty_strided",
        "zeros",
        "zeros_like",
        "ones",
        "ones_like",
        "full",
        "full_like",
        "arange",
        "rand",
        "randn",
        "randint",
        "uniform_",
        "normal_",
        "fill_",
        "zero_",
        "scalar_tensor",
        "new_empty",
        "new_zeros",
        "new_ones",
        "new_full",
        "bernoulli_",
    ),
}
_BY_NAME = {name: cat for cat, names in _NAMED.items() for name in names}
SOFTMAX_OPS = frozenset(_NAMED[Work.SOFTMAX])

# Ops that do multiply-adds. One with no formula in exact/ops/ is counted NO_FORMULA: the count is incomplete, loudly.
# (The census test, tests/test_census.py, walks every aten op of the installed torch against this list.)
MULTIPLY_ADD_OPS = frozenset(
    {
        # matrix products, quantized and scaled matmuls
        "mm",
        "addmm",
        "bmm",
        "baddbmm",
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
        "_int_mm",
        "_scaled_mm",
        "_scaled_mm_v2",
        "_scaled_grouped_mm",
        "_scaled_grouped_mm_v2",
        "_grouped_mm",
        "_weight_int4pack_mm",
        "_weight_int4pack_mm_for_cpu",
        "_weight_int4pack_mm_with_scales_and_zeros",
        "_weight_int8pack_mm",
        "_dyn_quant_matmul_4bit",
        "_mixed_dtypes_linear",
        "_sparse_mm",
        "_sparse_addmm",
        "_sparse_sparse_matmul",
        "_sparse_semi_structured_mm",
        "_sparse_semi_structured_addmm",
        "_sparse_semi_structured_linear",
        "_cslt_sparse_mm",
        "sparse_sampled_addmm",
        "_sparse_mm_reduce_impl",
        "mkldnn_linear",
        "fbgemm_linear_fp16_weight",
        "fbgemm_linear_fp16_weight_fp32_activation",
        "fbgemm_linear_int8_weight",
        "fbgemm_linear_int8_weight_fp32_activation",
        "_wrapped_quantized_linear_prepacked",
        "_foreach_mm",
        "_trilinear",
        "_compute_linear_combination",
        # convolutions
        "convolution",
        "_convolution",
        "convolution_overrideable",
        "cudnn_convolution",
        "cudnn_convolution_transpose",
        "cudnn_convolution_relu",
        "cudnn_convolution_add_relu",
        "mkldnn_convolution",
        "miopen_convolution",
        "miopen_convolution_transpose",
        "miopen_depthwise_convolution",
        "miopen_convolution_relu",
        "miopen_convolution_add_relu",
        "_conv_depthwise2d",
        "conv_depthwise3d",
        "_nnpack_spatial_convolution",
        "slow_conv3d_forward",
        "slow_conv_dilated2d",
        "slow_conv_dilated3d",
        "slow_conv_transpose2d",
        "slow_conv_transpose3d",
        "_slow_conv2d_forward",
        "thnn_conv2d",
        "conv_tbc",
        "_mps_convolution",
        "_mps_convolution_transpose",
        # attention kernels and fused transformer fast paths
        "scaled_dot_product_attention",
        "_scaled_dot_product_attention_math",
        "_scaled_dot_product_flash_attention",
        "_scaled_dot_product_flash_attention_for_cpu",
        "_scaled_dot_product_efficient_attention",
        "_scaled_dot_product_cudnn_attention",
        "_scaled_dot_product_fused_attention_overrideable",
        "_scaled_dot_product_attention_math_for_mps",
        "_flash_attention_forward",
        "_efficient_attention_forward",
        "_cudnn_attention_forward",
        "_native_multi_head_attention",
        "_transformer_encoder_layer_fwd",
        "_triton_multi_head_attention",
        "_triton_scaled_dot_attention",
        # recurrent kernels (the fused cells take precomputed gates: elementwise, not here)
        "mkldnn_rnn_layer",
        "_cudnn_rnn",
        "miopen_rnn",
        "_lstm_mps",
        "quantized_lstm",
        "quantized_gru",
        "quantized_lstm_cell",
        "quantized_gru_cell",
        "quantized_rnn_relu_cell",
        "quantized_rnn_tanh_cell",
        # distances
        "_cdist_forward",
        "_euclidean_dist",
        "_pdist_forward",
        # linear algebra: factorizations, solves, inverses and products
        "_linalg_det",
        "_linalg_eigh",
        "_linalg_eigvals",
        "linalg_eigvals",
        "linalg_pinv",
        "linalg_matrix_sqrth",
        "_linalg_slogdet",
        "_linalg_solve_ex",
        "_linalg_svd",
        "linalg_cholesky_ex",
        "linalg_eig",
        "linalg_householder_product",
        "linalg_inv_ex",
        "linalg_ldl_factor_ex",
        "linalg_ldl_solve",
        "linalg_lstsq",
        "linalg_lu",
        "linalg_lu_factor_ex",
        "linalg_lu_solve",
        "linalg_matrix_exp",
        "linalg_qr",
        "linalg_solve_triangular",
        "linalg_vecdot",
        "_lu_with_info",
        "cholesky",
        "cholesky_solve",
        "_cholesky_solve_helper",
        "cholesky_inverse",
        "triangular_solve",
        "lu_solve",
        "geqrf",
        "orgqr",
        "ormqr",
        "matrix_exp",
        # spectral
        "_fft_c2c",
        "_fft_r2c",
        "_fft_c2r",
        # backward kernels: a count around loss.backward() reaches them (the training step is counted in a later round)
        "convolution_backward",
        "convolution_backward_overrideable",
        "_convolution_double_backward",
        "_slow_conv2d_backward",
        "conv_tbc_backward",
        "mps_convolution_backward",
        "mps_convolution_transpose_backward",
        "linear_backward",
        "matmul_backward",
        "mkldnn_linear_backward",
        "mkldnn_linear_backward_input",
        "mkldnn_linear_backward_weights",
        "_flash_attention_backward",
        "_efficient_attention_backward",
        "_cudnn_attention_backward",
        "_scaled_dot_product_flash_attention_backward",
        "_scaled_dot_product_flash_attention_for_cpu_backward",
        "_scaled_dot_product_efficient_attention_backward",
        "_scaled_dot_product_cudnn_attention_backward",
        "_scaled_dot_product_fused_attention_overrideable_backward",
        "mkldnn_rnn_layer_backward",
        "_cudnn_rnn_backward",
        "miopen_rnn_backward",
        "lstm_mps_backward",
        "_cdist_backward",
        "_pdist_backward",
        "matrix_exp_backward",
        "_sparse_mm_reduce_impl_backward",
    }
)


def does_multiply_adds(name: str) -> bool:
    """An op (bare name) that does multiply-adds: a matmul, conv, attention, RNN, bilinear, distance, linalg or FFT."""
    return name in MULTIPLY_ADD_OPS


def named_category(name: str) -> Work | None:
    """The category an op's bare name ('_softmax', 'size') is listed under, if it is."""
    return _BY_NAME.get(name)


# Operators outside aten with no formula are opaque: flopcheck cannot see whether one multiplies, so each makes the
# count incomplete (NO_FORMULA), except these, known to do no multiply-adds. By namespace: profiling marks,
# collectives, (de)quantization; by name: torchvision's box and region ops (sorting, sampling, pooling).
NO_MULTIPLY_ADD_NAMESPACES = frozenset(
    {"aten", "prims", "profiler", "_c10d_functional", "c10d", "c10d_functional", "quantized_decomposed"}
)
NO_MULTIPLY_ADD_CUSTOM = frozenset(
    {
        "torchvision::nms",
        "torchvision::roi_align",
        "torchvision::_roi_align_backward",
        "torchvision::roi_pool",
        "torchvision::_roi_pool_backward",
        "torchvision::ps_roi_align",
        "torchvision::_ps_roi_align_backward",
        "torchvision::ps_roi_pool",
        "torchvision::_ps_roi_pool_backward",
    }
)


def opaque(func: OpOverload) -> bool:
    """An operator outside aten that no formula counts and none is known to be free of multiply-adds."""
    return (
        func.namespace not in NO_MULTIPLY_ADD_NAMESPACES
        and func.overloadpacket._qualified_op_name not in NO_MULTIPLY_ADD_CUSTOM
    )


def categorize(func: OpOverload) -> Work:
    """The category of an op with no FLOP formula: an opaque custom operator has multiply-adds for all we know."""
    if opaque(func):
        return Work.NO_FORMULA
    name = func.overloadpacket.__name__
    if name in _BY_NAME:
        return _BY_NAME[name]
    if does_multiply_adds(name):  # reached here, it has no formula: the count cannot be complete
        return Work.NO_FORMULA
    if getattr(func, "is_view", False):
        return Work.VIEW
    tags = getattr(func, "tags", ())
    if torch.Tag.pointwise in tags:
        return Work.ELEMENTWISE
    if torch.Tag.reduction in tags:
        return Work.REDUCTION
    return Work.OTHER
