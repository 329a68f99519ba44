"""The one table of op names: each name a counter, a trace or the exact count uses for an op, and its family.

An op reaches flopcheck under several spellings: the dispatcher's `aten.mm.default`, a profiler's or a jit trace's
`aten::mm`, a library's own label (fvcore's `mm`, its `conv`), a patched Python call (`Tensor.__matmul__`,
`F.interpolate`), a module's class (`LayerNorm`). `bare` and `aten_name` reduce each spelling to the table's key;
the table gives its family (matmul, conv, attention, norm, elementwise, ...). Every classifier reads this table:
the exact count's categories (exact/categories.py), the op formula registry's attention kernels (exact/ops), a
counter's skips (counters/base.py) and the reconciler's readings and causes (reconciler/). No other module lists
op names to decide what an op is.

Torch-free: the parent process and the reconciler read it without importing torch.
"""

from __future__ import annotations

from dataclasses import dataclass

from flopcheck.types import Word, Work


class Family(Word):
    """What an op does, whoever names it: one family per op, its multiply-adds or the category it is not counted
    under."""

    MATMUL = "matmul"  # a matrix product: mm, addmm, bmm, matmul, linear, the quantized, scaled and sparse ones
    GROUPED_MATMUL = "grouped-matmul"  # the experts' grouped matmul (causes.GROUPED_MM_UNCOUNTED)
    EINSUM = "einsum"  # torch.einsum: a contraction, or only a permutation
    CONV = "conv"  # a convolution, plain, transposed, grouped, by any backend
    ATTENTION = "attention"  # a fused attention kernel: QK^T and attn@V in one op (SDPA's, flash, efficient)
    FAST_PATH = "fast-path"  # a module run whole as one op by torch's eval fast path (MultiheadAttention's)
    RECURRENT = "recurrent"  # an RNN layer's kernel
    DISTANCE = "distance"  # torch.cdist, torch.pdist (causes.DISTANCE_UNCOUNTED)
    LINALG = "linalg"  # factorizations, solves, inverses and products of torch.linalg
    SPECTRAL = "spectral"  # FFTs
    NORM = "norm"  # layer, group, batch, instance and RMS norms
    SOFTMAX = "softmax"
    EMBEDDING = "embedding"  # a table lookup (causes.EMBEDDING_LOOKUP_COUNTED)
    RESAMPLE = "resample"  # upsampling, interpolation, grid sampling (causes.UPSAMPLING_COUNTED)
    POOL = "pool"  # average and max pools
    STATISTIC = "statistic"  # a mean or a variance over the input (a norm's statistic)
    ROOT = "root"  # a square root or its reciprocal (a norm's scale)
    ELEMENTWISE = "elementwise"  # activations and arithmetic
    MOVEMENT = "movement"  # copies, concatenations, gathers: no arithmetic
    VIEW = "view"  # aliases, shape queries, dropout in eval
    CREATION = "creation"  # new tensors: empty, zeros, arange, random

    @property
    def multiply_adds(self) -> bool:
        """The family does multiply-adds: flopcheck's exact count has (or owes) each of its ops a formula."""
        return self in _MULTIPLY_ADDS

    @property
    def attention(self) -> bool:
        """Its op is counted as QK^T + attn@V: a fused attention kernel, or a fast path with one inside."""
        return self in (Family.ATTENTION, Family.FAST_PATH)

    @property
    def category(self) -> Work | None:
        """The category the exact count records its uncounted ops under by name; None: by torch's tags."""
        return _CATEGORY.get(self)

    @property
    def reads_as(self) -> Work | None:
        """The work a counter's item of this family is read as by its name alone; None: by what the op did in the
        exact count (a matmul may be a layer, attention or a free product)."""
        return _READS_AS.get(self)


_MULTIPLY_ADDS = frozenset(
    {
        Family.MATMUL,
        Family.GROUPED_MATMUL,
        Family.EINSUM,
        Family.CONV,
        Family.ATTENTION,
        Family.FAST_PATH,
        Family.RECURRENT,
        Family.DISTANCE,
        Family.LINALG,
        Family.SPECTRAL,
    }
)
_CATEGORY = {
    Family.NORM: Work.NORM,
    Family.SOFTMAX: Work.SOFTMAX,
    Family.EMBEDDING: Work.MOVEMENT,
    Family.MOVEMENT: Work.MOVEMENT,
    Family.VIEW: Work.VIEW,
    Family.CREATION: Work.CREATION,
}
_READS_AS = {
    Family.ATTENTION: Work.ATTENTION,
    Family.CONV: Work.CONV,
    Family.NORM: Work.NORM,
    Family.SOFTMAX: Work.ELEMENTWISE,
    Family.POOL: Work.ELEMENTWISE,
    Family.STATISTIC: Work.ELEMENTWISE,
    Family.ROOT: Work.ELEMENTWISE,
    Family.ELEMENTWISE: Work.ELEMENTWISE,
}


class Spelling(Word):
    """Where a name comes from."""

    ATEN = "aten"  # an aten op that does its work itself (a kernel, or one a formula counts whole)
    COMPOSITE = "composite"  # an aten op that runs as others (conv2d as convolution, lstm as mkldnn_rnn_layer)
    CALL = "call"  # a Python call or a library's own label: Tensor.__matmul__, fvcore's 'conv', torchvision's op
    MODULE = "module"  # a module's class, lowercased ('layernorm'), as a hook counter names its items


class Operator(Word):
    """An op's part in '@' (Tensor.__matmul__, torch.matmul)."""

    IS = "is"  # '@' itself, by a trace's, a patch's or a method's name: it runs as mm, bmm, mv or dot
    RUNS_AS = "runs-as"  # an op '@' runs as, at dispatch


@dataclass(frozen=True)
class OpName:
    """One name's row: its family, where the name comes from, and what the exact count recorded it as."""

    family: Family
    spelling: Spelling = Spelling.ATEN
    backward: bool = False  # a backward kernel (a training step's)
    ran_as: tuple[str, ...] = ()  # the aten ops it ran as in the exact count, tried in turn ('linear': addmm, mm)
    operator: Operator | None = None
    fast_path_of: str = ""  # a fast path's module class ('MultiheadAttention')


TABLE: dict[str, OpName] = {}


def _rows(
    family: Family,
    names: str,
    *,
    spelling: Spelling = Spelling.ATEN,
    backward: bool = False,
    ran_as: tuple[str, ...] = (),
    operator: Operator | None = None,
    fast_path_of: str = "",
) -> None:
    """Add each whitespace-separated name as a row of the family; a name is listed once."""
    for name in names.split():
        if name in TABLE:
            raise ValueError(f"op name {name!r} is listed twice")
        TABLE[name] = OpName(family, spelling, backward, ran_as, operator, fast_path_of)


# multiply-adds, forward: each has a formula in exact/ops/ or makes a count incomplete (tests/test_census.py)
_rows(
    Family.MATMUL,
    """addmm baddbmm addbmm addmv addr _addmm_activation _int_mm _scaled_mm _scaled_mm_v2 _weight_int4pack_mm
    _weight_int4pack_mm_for_cpu _weight_int4pack_mm_with_scales_and_zeros _weight_int8pack_mm _dyn_quant_matmul_4bit
    _mixed_dtypes_linear _sparse_mm _sparse_addmm _sparse_sparse_matmul _sparse_semi_structured_mm
    _sparse_semi_structured_addmm _sparse_semi_structured_linear _cslt_sparse_mm sparse_sampled_addmm
    _sparse_mm_reduce_impl mkldnn_linear fbgemm_linear_fp16_weight fbgemm_linear_fp16_weight_fp32_activation
    fbgemm_linear_int8_weight fbgemm_linear_int8_weight_fp32_activation _wrapped_quantized_linear_prepacked
    _foreach_mm _trilinear _compute_linear_combination""",
)
_rows(Family.MATMUL, "addmm_ baddbmm_ addbmm_ addmv_ addr_")  # in place
_rows(Family.MATMUL, "bmm mv dot vdot", operator=Operator.RUNS_AS)
_rows(Family.MATMUL, "mm", operator=Operator.RUNS_AS, ran_as=("addmm",))
_rows(Family.MATMUL, "matmul", operator=Operator.IS, ran_as=("bmm",))
_rows(Family.MATMUL, "linear", ran_as=("addmm", "mm"))  # a Linear: addmm with its bias, mm without (a router)
_rows(Family.GROUPED_MATMUL, "_grouped_mm _scaled_grouped_mm _scaled_grouped_mm_v2")
_rows(Family.EINSUM, "einsum")
_rows(
    Family.CONV,
    """convolution _convolution convolution_overrideable cudnn_convolution cudnn_convolution_transpose
    cudnn_convolution_relu cudnn_convolution_add_relu mkldnn_convolution miopen_convolution
    miopen_convolution_transpose miopen_depthwise_convolution miopen_convolution_relu miopen_convolution_add_relu
    _conv_depthwise2d conv_depthwise3d _nnpack_spatial_convolution slow_conv3d_forward slow_conv_dilated2d
    slow_conv_dilated3d slow_conv_transpose2d slow_conv_transpose3d _slow_conv2d_forward thnn_conv2d conv_tbc
    _mps_convolution _mps_convolution_transpose""",
)
_rows(
    Family.ATTENTION,
    """scaled_dot_product_attention _scaled_dot_product_attention_math _scaled_dot_product_flash_attention
    _scaled_dot_product_flash_attention_for_cpu _scaled_dot_product_efficient_attention
    _scaled_dot_product_cudnn_attention _scaled_dot_product_fused_attention_overrideable
    _scaled_dot_product_attention_math_for_mps _flash_attention_forward _flash_attention_forward_no_dropout_inplace
    _efficient_attention_forward _cudnn_attention_forward _triton_multi_head_attention _triton_scaled_dot_attention""",
)
_rows(Family.FAST_PATH, "_native_multi_head_attention", fast_path_of="MultiheadAttention")
_rows(Family.FAST_PATH, "_transformer_encoder_layer_fwd", fast_path_of="TransformerEncoderLayer")
# the fused cells take precomputed gates: elementwise, not here
_rows(
    Family.RECURRENT,
    """mkldnn_rnn_layer _cudnn_rnn miopen_rnn _lstm_mps quantized_lstm quantized_gru quantized_lstm_cell
    quantized_gru_cell quantized_rnn_relu_cell quantized_rnn_tanh_cell""",
)
_rows(Family.DISTANCE, "_cdist_forward _euclidean_dist _pdist_forward")
_rows(
    Family.LINALG,
    """_linalg_det _linalg_eigh _linalg_eigvals linalg_eigvals linalg_pinv linalg_matrix_sqrth _linalg_slogdet
    _linalg_solve_ex _linalg_svd linalg_cholesky_ex linalg_eig linalg_householder_product linalg_inv_ex
    linalg_ldl_factor_ex linalg_ldl_solve linalg_lstsq linalg_lu linalg_lu_factor_ex linalg_lu_solve
    linalg_matrix_exp linalg_qr linalg_solve_triangular linalg_vecdot _lu_with_info cholesky cholesky_solve
    _cholesky_solve_helper cholesky_inverse triangular_solve lu_solve geqrf orgqr ormqr matrix_exp""",
)
_rows(Family.SPECTRAL, "_fft_c2c _fft_r2c _fft_c2r")

# multiply-adds, backward: a count around loss.backward() reaches them
_rows(
    Family.CONV,
    """convolution_backward convolution_backward_overrideable _convolution_double_backward _slow_conv2d_backward
    conv_tbc_backward mps_convolution_backward mps_convolution_transpose_backward""",
    backward=True,
)
_rows(
    Family.MATMUL,
    """linear_backward matmul_backward mkldnn_linear_backward mkldnn_linear_backward_input
    mkldnn_linear_backward_weights _sparse_mm_reduce_impl_backward""",
    backward=True,
)
_rows(
    Family.ATTENTION,
    """_flash_attention_backward _efficient_attention_backward _cudnn_attention_backward
    _scaled_dot_product_flash_attention_backward _scaled_dot_product_flash_attention_for_cpu_backward
    _scaled_dot_product_efficient_attention_backward _scaled_dot_product_cudnn_attention_backward
    _scaled_dot_product_fused_attention_overrideable_backward""",
    backward=True,
)
_rows(Family.RECURRENT, "mkldnn_rnn_layer_backward _cudnn_rnn_backward miopen_rnn_backward", backward=True)
_rows(Family.RECURRENT, "lstm_mps_backward", backward=True)
_rows(Family.DISTANCE, "_cdist_backward _pdist_backward", backward=True)
_rows(Family.LINALG, "matrix_exp_backward", backward=True)

# the names a multiply-add reaches a trace, a profiler or a patch by when it runs as the ops above
_rows(
    Family.CONV, "conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d", spelling=Spelling.COMPOSITE
)
_rows(Family.RECURRENT, "lstm gru rnn_tanh rnn_relu", spelling=Spelling.COMPOSITE)  # a trace's aten::lstm
_rows(Family.DISTANCE, "cdist", spelling=Spelling.COMPOSITE)  # a trace's aten::cdist
_rows(Family.MATMUL, "__matmul__ __rmatmul__", spelling=Spelling.CALL, operator=Operator.IS, ran_as=("bmm",))
_rows(Family.CONV, "conv", spelling=Spelling.CALL)  # fvcore's op class of aten::_convolution
_rows(Family.CONV, "deform_conv2d", spelling=Spelling.CALL)  # torchvision::deform_conv2d (flopcheck.custom_ops)

# no multiply-adds: the exact count records each under its category (Family.category)
_rows(
    Family.NORM,
    """native_layer_norm layer_norm native_group_norm group_norm native_batch_norm batch_norm _native_batch_norm_legit
    _native_batch_norm_legit_no_training rms_norm _fused_rms_norm instance_norm""",
)
_rows(Family.NORM, "layernorm groupnorm batchnorm1d batchnorm2d instancenorm2d", spelling=Spelling.MODULE)
_rows(Family.SOFTMAX, "_softmax softmax _safe_softmax _log_softmax log_softmax")
_rows(Family.EMBEDDING, "embedding")
_rows(
    Family.MOVEMENT,
    """cat stack clone copy_ _to_copy index_select gather index repeat constant_pad_nd contiguous
    split_with_sizes_copy _unsafe_index""",
)
_rows(
    Family.VIEW,  # aliases, shape queries, and dropout, which returns its input in eval
    "_unsafe_view alias detach lift_fresh dropout feature_dropout alpha_dropout size sym_size numel dim Int int "
    "ScalarImplicit",
)
_rows(
    Family.CREATION,
    """empty empty_like empty_strided zeros zeros_like ones ones_like full full_like arange rand randn randint uniform_
    normal_ fill_ zero_ scalar_tensor new_empty new_zeros new_ones new_full bernoulli_""",
)
# no multiply-adds, by torch's tags in the exact count; named here for the counters that report them by name
_rows(
    Family.ELEMENTWISE,
    """add add_ mul mul_ sub div gelu silu relu sigmoid tanh exp cos sin leaky_relu elu relu6 prelu hardswish
    hardsigmoid mish""",
)
_rows(Family.ELEMENTWISE, "__add__ __mul__", spelling=Spelling.CALL)
_rows(
    Family.POOL,
    """avg_pool1d avg_pool2d avg_pool3d adaptive_avg_pool1d adaptive_avg_pool2d adaptive_avg_pool3d max_pool1d
    max_pool2d max_pool3d adaptive_max_pool1d adaptive_max_pool2d adaptive_max_pool3d""",
)
_rows(Family.POOL, "pool", spelling=Spelling.CALL)  # a library's label for its pools
_rows(Family.STATISTIC, "mean var var_mean std std_mean")
_rows(Family.ROOT, "rsqrt sqrt")

# open-ended families, by the start of the name: upsample_bilinear2d, F.interpolate, nn.Upsample, grid_sampler_2d
PREFIXES = {Family.RESAMPLE: ("upsample", "interpolate", "_upsample", "grid_sampler", "grid_sample")}

# Operators outside aten with no formula are opaque: flopcheck cannot see whether one multiplies, so each makes the
# count incomplete (NO_FORMULA), except these, known to do no multiply-adds. By namespace: profiling marks,
# collectives, (de)quantization; by name: torchvision's box and region ops (sorting, sampling, pooling).
FREE_NAMESPACES = frozenset(
    {"aten", "prims", "profiler", "_c10d_functional", "c10d", "c10d_functional", "quantized_decomposed"}
)
FREE_CUSTOM = frozenset(
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


def bare(name: str) -> str:
    """A trace's, profiler's or patch's spelling as the table's key: 'aten::addmm' / 'aten.addmm' / 'TensorBase.mul'
    -> 'addmm' / 'mul'."""
    return name.replace("aten::", "").replace("aten.", "").split(".")[-1].lower()


def aten_name(name: str) -> str:
    """A dispatcher's or profiler's spelling of an aten op as its packet's name: 'aten::_softmax' /
    'aten._softmax.default' -> '_softmax'."""
    return name.replace("aten::", "").replace("aten.", "").split(".")[0]


def row(name: str) -> OpName | None:
    """The table's row for a name in any spelling, None if it is not listed."""
    return TABLE.get(name) or TABLE.get(bare(name))


def family(name: str) -> Family | None:
    """The family of an op, by its name in any spelling; None where the table does not say."""
    found = row(name)
    if found is not None:
        return found.family
    key = bare(name)
    return next((f for f, starts in PREFIXES.items() if key.startswith(starts)), None)


def forward_op(name: str, *families: Family) -> bool:
    """The name, in any spelling, is of a forward op of one of these families (a backward kernel is not)."""
    found = row(name)
    return found is not None and found.family in families and not found.backward


def category(op: str) -> Work | None:
    """The category the exact count records an aten op (its packet's name, '_softmax') under by name, if listed."""
    found = TABLE.get(op)
    return found.family.category if found is not None and found.spelling is Spelling.ATEN else None


def ran_as(name: str) -> tuple[str, ...]:
    """The aten ops a name ran as in the exact count, tried in turn: 'matmul' -> ('bmm',), 'linear' -> ('addmm',
    'mm'); () where it ran as itself."""
    found = row(name)
    return found.ran_as if found is not None else ()


def operator(name: str) -> Operator | None:
    """The name's part in '@': itself (matmul, Tensor.__matmul__), an op it runs as (mm, bmm), or None."""
    found = row(name)
    return found.operator if found is not None else None


def fast_path_of(name: str) -> str:
    """The module class whose eval fast path runs as this op ('_native_multi_head_attention' ->
    'MultiheadAttention'), '' for any other op."""
    found = row(name)
    return found.fast_path_of if found is not None else ""


MULTIPLY_ADD_OPS = frozenset(n for n, r in TABLE.items() if r.family.multiply_adds and r.spelling is Spelling.ATEN)
SOFTMAX_OPS = frozenset(n for n, r in TABLE.items() if r.family is Family.SOFTMAX)
FAST_PATH_CLASSES = frozenset(r.fast_path_of for r in TABLE.values() if r.fast_path_of)


def does_multiply_adds(name: str) -> bool:
    """An aten op (its packet's name) that does multiply-adds itself: a matmul, conv, attention, RNN, distance, linalg
    or FFT kernel."""
    return name in MULTIPLY_ADD_OPS


__all__ = [
    "FAST_PATH_CLASSES",
    "FREE_CUSTOM",
    "FREE_NAMESPACES",
    "MULTIPLY_ADD_OPS",
    "PREFIXES",
    "SOFTMAX_OPS",
    "TABLE",
    "Family",
    "OpName",
    "Operator",
    "Spelling",
    "aten_name",
    "bare",
    "category",
    "does_multiply_adds",
    "family",
    "fast_path_of",
    "forward_op",
    "operator",
    "ran_as",
    "row",
]
