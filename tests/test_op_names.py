"""The one table of op names (flopcheck/op_names.py): each spelling of an op reaches the same row, and the classifiers
that read it (the exact count's categories, the formula registry, a counter's skips) agree with it."""

from __future__ import annotations

import pytest
import torch

from flopcheck.counters.base import op_category
from flopcheck.exact.categories import categorize
from flopcheck.exact.ops import ATTENTION_OPS, FORMULAS
from flopcheck.op_names import (
    FAST_PATH_CLASSES,
    Family,
    Operator,
    _rows,
    aten_name,
    bare,
    category,
    family,
    fast_path_of,
    forward_op,
    operator,
    ran_as,
)
from flopcheck.types import Work


@pytest.mark.parametrize(
    "spelling",
    [
        "mm",  # fvcore's op class, a patch's label
        "aten::mm",  # a jit trace's node kind, a profiler's event
        "aten.mm",  # FlopCounterMode's packet
        "TensorBase.mm",  # a patched Tensor method
    ],
)
def test_every_spelling_of_an_op_reaches_its_row(spelling: str) -> None:
    assert bare(spelling) == "mm"
    assert family(spelling) is Family.MATMUL
    assert operator(spelling) is Operator.RUNS_AS  # '@' on two matrices runs as mm


def test_a_dispatchers_spelling_names_its_packet() -> None:
    # 'aten._softmax.default' is an overload; the table is keyed by the packet's name
    assert aten_name("aten._softmax.default") == aten_name("aten::_softmax") == "_softmax"
    assert category("_softmax") is Work.SOFTMAX


def test_a_librarys_own_labels_are_rows() -> None:
    assert family("conv") is Family.CONV  # fvcore's class of aten::_convolution
    assert family("conv_transpose2d") is Family.CONV  # calflops' patched F.conv_transpose2d
    assert family("upsample_bilinear2d") is Family.RESAMPLE  # by its start: an open-ended family
    assert family("interpolate") is Family.RESAMPLE  # F.interpolate
    assert family("layernorm") is Family.NORM  # a hook counter's nn.LayerNorm, lowercased


def test_a_module_spelling_is_no_aten_category() -> None:
    # 'layer_norm' is an aten op, recorded under norm by name; 'layernorm' is a module's class, never an op
    assert category("layer_norm") is Work.NORM
    assert category("layernorm") is None


def test_the_operator_and_what_it_ran_as() -> None:
    assert operator("Tensor.__matmul__") is Operator.IS
    assert ran_as("aten::matmul") == ("bmm",)  # torch.matmul on batches ran as bmm in the exact count
    assert ran_as("linear") == ("addmm", "mm")  # a Linear: addmm with a bias, mm without
    assert ran_as("bmm") == ()
    assert operator("aten::baddbmm") is None  # a matmul op '@' never runs as: no formula, not an unpatched '@'


def test_a_backward_kernel_is_no_forward_op() -> None:
    assert forward_op("aten::_cudnn_rnn", Family.RECURRENT)
    assert forward_op("aten::lstm", Family.RECURRENT)  # a trace's composite
    assert not forward_op("aten::_cudnn_rnn_backward", Family.RECURRENT)
    assert family("aten::_cudnn_rnn_backward") is Family.RECURRENT


def test_fast_paths_name_their_module() -> None:
    assert fast_path_of("aten::_native_multi_head_attention") == "MultiheadAttention"
    assert fast_path_of("aten._transformer_encoder_layer_fwd") == "TransformerEncoderLayer"
    assert fast_path_of("aten::scaled_dot_product_attention") == ""
    assert FAST_PATH_CLASSES == {"MultiheadAttention", "TransformerEncoderLayer"}


def test_a_name_is_listed_once() -> None:
    with pytest.raises(ValueError, match="'mm' is listed twice"):
        _rows(Family.CONV, "mm")
    assert family("mm") is Family.MATMUL  # the refused row did not replace the first


def _aten_formulas() -> list[str]:
    packets = (p for p in FORMULAS if isinstance(p, torch._ops.OpOverloadPacket))
    return sorted(p.__name__ for p in packets if p._qualified_op_name.startswith("aten::"))


def test_every_op_with_a_formula_has_a_multiply_add_row() -> None:
    # the registry counts it, so the table must say what it is: op_category reads its work from the row
    missing = [n for n in _aten_formulas() if (f := family(n)) is None or not f.multiply_adds]
    assert missing == []


def test_the_registrys_attention_kernels_are_the_tables() -> None:
    # ATTENTION_OPS (formulas split into QK^T and attn@V) is filled from the rows, flex_attention (no aten op) aside
    registered = {p.__name__ for p in ATTENTION_OPS if isinstance(p, torch._ops.OpOverloadPacket)}
    by_table = {n for n in _aten_formulas() if family(n) in (Family.ATTENTION, Family.FAST_PATH)}
    assert registered == by_table
    assert {"scaled_dot_product_attention", "_scaled_dot_product_flash_attention_for_cpu"} <= registered


def test_a_counters_skip_reads_its_work_from_the_row() -> None:
    assert op_category("aten::_scaled_dot_product_flash_attention_for_cpu") is Work.ATTENTION
    assert op_category("aten::conv3d") is Work.CONV  # composite: it runs as aten.convolution
    assert op_category("aten::mkldnn_rnn_layer") is Work.MATMUL  # an RNN kernel's matmuls
    assert op_category("aten::native_layer_norm") is Work.NORM
    assert categorize(torch.ops.aten.embedding.default) is Work.MOVEMENT  # a lookup: no arithmetic
