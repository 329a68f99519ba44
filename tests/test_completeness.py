"""The exact count is complete, or says loudly that it is not: every op with multiply-adds a common model
reaches has a formula (PyTorch's fused fast paths, RNN kernels, bilinear, distances, outer products, scaled and
quantized matmuls, out= calls), the same model counts the same on CPU and on meta, and an op with multiply-adds and
no formula makes the count incomplete in every place a number is given."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from flopcheck.exact import ExactCounter, count_forward
from flopcheck.exact.ops.attention import efficient_forward_flop, flash_forward_flop
from flopcheck.testing import FlopAssertionError, assert_flops_close, assert_reconciles


def total(fn, device: str) -> int:
    """FLOPs of fn(device) under the exact counter, with no grad (where PyTorch's fast paths run)."""
    with torch.no_grad(), ExactCounter() as c:
        fn(device)
    result = c.result()
    assert result.complete, result.incompleteness()
    return result.total


def mha(device):  # E = 64, 4 heads, batch 2, T = 10, batch-first, eval: the fast path on CPU
    m = nn.MultiheadAttention(64, 4, batch_first=True).to(device).eval()
    x = torch.zeros(2, 10, 64, device=device)
    m(x, x, x, need_weights=False)


def encoder_layer(device):  # E = 64, 4 heads, FFN 128
    m = nn.TransformerEncoderLayer(64, 4, 128, batch_first=True).to(device).eval()
    m(torch.zeros(2, 10, 64, device=device))


def lstm(device):  # input 16, hidden 32, 2 layers, T = 7, batch 3: oneDNN's mkldnn_rnn_layer on CPU
    nn.LSTM(16, 32, num_layers=2).to(device)(torch.zeros(7, 3, 16, device=device))


def bilinear(device):  # nn.Bilinear(5, 6, 7) on a batch of 3: aten._trilinear
    nn.Bilinear(5, 6, 7).to(device)(torch.zeros(3, 5, device=device), torch.zeros(3, 6, device=device))


def cdist_matmul(device):  # 2 x (30 x 8) against 2 x (40 x 8): more than 25 rows, the matmul path
    torch.cdist(torch.zeros(2, 30, 8, device=device), torch.zeros(2, 40, 8, device=device))


def cdist_direct(device):  # 2 x (3 x 8) against 2 x (4 x 8): the direct path
    torch.cdist(torch.zeros(2, 3, 8, device=device), torch.zeros(2, 4, 8, device=device))


def outer(device):  # torch.addr: (5, 6) + 5-vector outer 6-vector
    torch.addr(torch.zeros(5, 6, device=device), torch.zeros(5, device=device), torch.zeros(6, device=device))


def mm_out(device):  # PyTorch's test_addmm_out: 10 x 10 matrices, out= given
    y = torch.empty(10, 10, device=device)
    torch.mm(torch.zeros(10, 10, device=device), torch.zeros(10, 10, device=device), out=y)


# Hand counts, FLOPs (2 per multiply-add):
CASES = {
    # in-projection 2*B*T*E*3E = 2*20*64*192 = 491,520; QK^T 2*B*T*T*E = 2*2*10*10*64 = 25,600, attn@V the same;
    # out-projection 2*20*64*64 = 163,840; 491,520 + 25,600 + 25,600 + 163,840 = 706,560
    mha: 706_560,
    # the attention above 706,560 + FFN 2*20*64*128 * 2 = 655,360: 1,361,920
    encoder_layer: 1_361_920,
    # per layer 2*T*B*4H*(in + H): 2*21*128*(16 + 32) = 258,048 and 2*21*128*(32 + 32) = 344,064; sum 602,112
    lstm: 602_112,
    # x1 (3, 5) with W (7, 5, 6) first: 3*7*5*6 = 630 multiply-adds; then with x2 (3, 6): 3*7*6 = 126; 2*756 = 1,512
    bilinear: 1_512,
    # [-2*x1, |x1|^2, 1] (30, 10) @ (10, 40) per batch: 2*2*30*40*(8 + 2) = 48,000
    cdist_matmul: 48_000,
    # every pair's 8-long difference: 2*2*3*4*8 = 384
    cdist_direct: 384,
    # 5*6 products: 2*30 = 60
    outer: 60,
    # 10*10*10 multiply-adds: 2,000 (PyTorch's own test_addmm_out)
    mm_out: 2_000,
}


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_hand_count_on_cpu_and_on_meta(fn):
    assert total(fn, "cpu") == total(fn, "meta") == CASES[fn]


def test_fast_paths_are_the_kernels_counted_on_cpu():
    ops = {}
    for fn in (mha, encoder_layer, lstm):
        with torch.no_grad(), ExactCounter() as c:
            fn("cpu")
        ops[fn.__name__] = {r.op for r in c.result().counted}
    assert ops == {
        "mha": {"aten._native_multi_head_attention"},
        "encoder_layer": {"aten._transformer_encoder_layer_fwd"},
        "lstm": {"aten.mkldnn_rnn_layer"},
    }


def test_scaled_fp8_matmul():
    a = torch.empty(16, 32, device="meta", dtype=torch.float8_e4m3fn)
    b = torch.empty(48, 32, device="meta", dtype=torch.float8_e4m3fn).t()
    one = torch.empty((), device="meta")
    with ExactCounter() as c:
        torch._scaled_mm(a, b, one, one, out_dtype=torch.bfloat16)
    # (16, 32) @ (32, 48): 2*16*32*48 = 49,152
    assert c.result().total == 49_152


def test_variable_length_attention_counts_each_sequence():
    # one packed batch of 12 tokens, 3 heads of width 8: sequences of 4 and 8 tokens attend within themselves,
    # 4*4 + 8*8 = 80 query-key pairs, not 12*12 = 144. QK^T 2*3*80*8 = 3,840 and attn@V the same: 7,680
    q = torch.zeros(1, 12, 3, 8)
    offsets = torch.tensor([0, 4, 12])
    assert efficient_forward_flop(q, q, q, None, offsets, offsets).flops == 7_680
    assert flash_forward_flop(q, q, q, offsets, offsets).flops == 7_680
    # without offsets, the batch is dense: 2*3*12*12*8 * 2 = 13,824
    assert efficient_forward_flop(q, q, q, None, None, None).flops == 13_824


def test_torchvision_vit_b_16_on_cpu_equals_meta_and_its_published_figure():
    import torchvision

    model = torchvision.models.vit_b_16().eval()
    with torch.device("meta"):
        meta_model = torchvision.models.vit_b_16().eval()
    # T = 197 (196 patches + class token), d = 768, L = 12, MLP 3072. Patch conv 2*196*768*768 = 231,211,008;
    # per block linear 2*197*768*(2304 + 768 + 2*3072) = 2,788,687,872 and attention 4*197^2*768 = 119,221,248;
    # head 2*768*1000 = 1,536,000. 231,211,008 + 12*(2,788,687,872 + 119,221,248) + 1,536,000 = 35,127,656,448
    cpu = count_forward(model, (torch.zeros(1, 3, 224, 224),))
    meta = count_forward(meta_model, (torch.empty(1, 3, 224, 224, device="meta"),))
    assert cpu.total == meta.total == 35_127_656_448
    # torchvision's published 17.564 GFLOPS (weights meta "_ops", multiply-accumulates) holds as MACs
    assert assert_flops_close(model, torch.zeros(1, 3, 224, 224), 17.564e9, rtol=0.001, unit="MAC") == 35_127_656_448


class Inverts(nn.Module):
    """A linear layer, then a matrix inverse: multiply-adds flopcheck has no formula for."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        return torch.linalg.inv(self.proj(x))


def test_an_op_with_multiply_adds_and_no_formula_makes_the_count_incomplete():
    x = torch.eye(4).expand(3, 4, 4).contiguous()
    count = count_forward(Inverts(), (x,))
    assert not count.complete and count.incomplete == ("aten.linalg_inv_ex",)
    # what it did count, the Linear: 2*3*4*4*4 = 384, a lower bound
    assert count.total == 384
    assert count.incompleteness().startswith("INCOMPLETE: the count has no formula for aten.linalg_inv_ex")
    with pytest.raises(FlopAssertionError, match="INCOMPLETE: the count has no formula for aten.linalg_inv_ex"):
        assert_flops_close(Inverts(), x, 384)
    with pytest.raises(FlopAssertionError, match="INCOMPLETE"):
        assert_reconciles(Inverts(), x, 384)


# A user's own operator (torch.library), opaque to the count: it reaches the dispatch whole, like torchvision's
_LIB = torch.library.Library("flopcheck_test", "DEF")
_LIB.define("fused_mm(Tensor a, Tensor b) -> Tensor")
_LIB.impl("fused_mm", lambda a, b: a @ b, "CompositeExplicitAutograd")
_LIB.impl("fused_mm", lambda a, b: a.new_empty(a.shape[0], b.shape[1]), "Meta")


class DeformAndCustom(nn.Module):
    """An offset conv (4 -> 18 channels, 3x3), torchvision's deformable conv (4 -> 6, 3x3) on its offsets, a region
    pool, a profiler mark, then the custom (2, 6*8*8) @ (384, 4) product."""

    def __init__(self):
        super().__init__()
        from torchvision.ops import DeformConv2d

        self.offset = nn.Conv2d(4, 18, 3, padding=1)
        self.dcn = DeformConv2d(4, 6, 3, padding=1)
        self.w = nn.Parameter(torch.zeros(384, 4))

    def forward(self, x):  # x (2, 4, 8, 8)
        from torchvision.ops import roi_align

        y = self.dcn(x, self.offset(x))  # (2, 6, 8, 8)
        boxes = torch.tensor([[0, 0.0, 0.0, 4.0, 4.0]], device=x.device)
        roi_align(y, boxes, output_size=2)  # sampling: no multiply-adds
        with torch.autograd.profiler.record_function("mark"):  # profiler::_record_function_enter_new
            return torch.ops.flopcheck_test.fused_mm(y.flatten(1), self.w)  # (2, 4)


def test_a_custom_operator_is_counted_by_its_formula_or_makes_the_count_incomplete():
    from flopcheck.custom_ops import CUSTOM, register_custom
    from flopcheck.exact.cost import OpCost, Piece
    from flopcheck.exact.ops import FORMULAS

    x = torch.zeros(2, 4, 8, 8)
    count = count_forward(DeformAndCustom(), (x,))
    # offset conv: 2 x 18 x 8 x 8 = 2,304 outputs x (4 x 3 x 3 = 36) = 82,944 MACs = 165,888 FLOPs;
    # deformable conv: 2 x 6 x 8 x 8 = 768 outputs x 36 = 27,648 MACs = 55,296 FLOPs (before: not counted, and the
    # count said complete); roi_align and the profiler mark are no multiply-adds; the custom product is opaque
    assert count.total == 165_888 + 55_296
    assert count.incomplete == ("flopcheck_test.fused_mm",)
    assert "flopcheck_test.fused_mm is a custom operator flopcheck cannot see inside" in count.incompleteness()
    assert "register_custom('flopcheck_test::fused_mm')" in count.incompleteness()

    @register_custom("flopcheck_test::fused_mm")
    def fused_mm(a, b, out=None):
        """(m, k) @ (k, n): 2 m k n."""
        return OpCost((Piece(2 * a.shape[0] * a.shape[1] * b.shape[1]),))

    try:  # its formula, as a plugin gives it: 2 x 2 x 384 x 4 = 6,144 FLOPs, and the count is complete
        count = count_forward(DeformAndCustom(), (x,))
        assert count.complete and count.total == 165_888 + 55_296 + 6_144
    finally:
        del CUSTOM["flopcheck_test::fused_mm"]
        FORMULAS.pop(torch.ops.flopcheck_test.fused_mm, None)
    for bad in ("fused_mm", "::", "mylib::", "::fused_mm", "a::b::c"):  # one 'namespace::op', both parts given
        with pytest.raises(ValueError, match="namespace::op"):
            register_custom(bad)


def test_incomplete_in_the_first_lines_of_a_count_and_in_its_json():
    from flopcheck.render.count import to_dict, to_text
    from flopcheck.subject import resolve
    from flopcheck.verbs.count import run as count

    r = count(resolve("DiT-S/8"))
    complete = to_dict(r)
    assert complete["complete"] is True and complete["incomplete_ops"] == []
    # the same result with an op that had no formula, as the counter records it
    from dataclasses import replace

    from flopcheck.counted import OpRecord
    from flopcheck.types import Work

    lost = OpRecord("blocks.*.attn", "aten.linalg_inv_ex", Work.NO_FORMULA, 0, 16, 1)
    r = replace(r, exact=replace(r.exact, uncounted=r.exact.uncounted + (lost,)))
    assert to_dict(r)["complete"] is False and to_dict(r)["incomplete_ops"] == ["aten.linalg_inv_ex"]
    assert to_text(r).splitlines()[1].startswith("INCOMPLETE: the count has no formula for aten.linalg_inv_ex")


@pytest.mark.integration
def test_an_audit_against_an_incomplete_count_gives_no_verdict(tmp_path, monkeypatch):
    from flopcheck.auditor import judge, parse_claim

    (tmp_path / "inverting_model.py").write_text(
        "import torch\nfrom torch import nn\n\n"
        "class M(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.proj = nn.Linear(224, 224)\n\n"
        "    def forward(self, x):\n        return torch.linalg.inv(self.proj(x))\n\n"
        "def build():\n    return M()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    # the Linear on (1, 3, 224, 224): 2*3*224*224*224 = 67,436,544 FLOPs, which "67.4 MFLOPs" would match; but the
    # inverse after it is uncounted, so no reading of a lower bound can vouch for the claim
    v = judge(parse_claim("67.4 MFLOPs", model="inverting_model:build"))
    assert v.verdict == "incomplete" and "aten.linalg_inv_ex" in v.reference


def test_flex_attention_is_counted_as_one_attention_op():
    import warnings

    from torch.nn.attention.flex_attention import flex_attention

    q = torch.zeros(1, 2, 16, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = flex_attention(q, q, q)
        with torch.no_grad(), ExactCounter() as c:
            got = flex_attention(q, q, q)
    # b = 1, h = 2, T = 16, e = 8: QK^T 2*1*2*16*16*8 = 8,192 and attn@V the same; 16,384
    assert c.result().total == 16_384 and c.result().complete
    assert torch.equal(got, expected)


# ---------------------------------------------------------------------------------------------
# Backward kernels (what a count around loss.backward() reaches)
# ---------------------------------------------------------------------------------------------


def test_resnet18_forward_and_backward_is_pytorchs_own_literal():
    import torchvision

    model = torchvision.models.resnet18()
    x = torch.zeros(1, 3, 224, 224, requires_grad=True)
    with ExactCounter() as c:
        model(x).sum().backward()
    # PyTorch's test_flop_counter pins resnet18 forward + backward at 10,884,440,064 FLOPs: the forward
    # 3,628,146,688 (1,814,073,344 multiply-adds), and every convolution_backward and mm of the backward
    assert c.result().total == 10_884_440_064 and c.result().complete
    # an input that needs no gradient spares the first conv's input gradient, the size of its forward:
    # 2 * 112*112 outputs * 64 channels * (3*7*7) = 236,027,904; 10,884,440,064 - 236,027,904 = 10,648,412,160
    with ExactCounter() as c:
        model(torch.zeros(1, 3, 224, 224)).sum().backward()
    assert c.result().total == 10_648_412_160


@pytest.mark.parametrize("path", ["fused", "explicit"])
def test_attention_forward_and_backward_is_three_forwards_on_either_path(path):
    import torch.nn.functional as F

    q = torch.zeros(2, 4, 64, 16, requires_grad=True)

    def attention():
        if path == "fused":  # on CPU: _scaled_dot_product_flash_attention_for_cpu and its backward
            return F.scaled_dot_product_attention(q, q, q)
        return torch.softmax(q @ q.transpose(-1, -2) / 4, -1) @ q

    with ExactCounter() as forward:
        attention()
    with ExactCounter() as both:
        attention().sum().backward()
    # QK^T 2*b*h*T*T*e = 2*2*4*64*64*16 = 1,048,576 and attn@V the same: 2,097,152 forward; the backward's dQ, dK,
    # dV and dP are four more of those matmuls, 4,194,304; in all 6,291,456 = 3 x forward (PyTorch's own relation)
    assert forward.result().total == 2_097_152 and both.result().total == 6_291_456 and both.result().complete


def test_convolution_backward_counts_the_gradients_asked_for():
    from flopcheck.exact.ops.conv import conv_backward_flop

    x, w, grad = torch.zeros(1, 3, 8, 8), torch.zeros(4, 3, 3, 3), torch.zeros(1, 4, 6, 6)
    # forward 2 * 144 outputs * 27 = 7,776 per gradient: input and weight 15,552; weight only 7,776
    assert (
        conv_backward_flop(grad, x, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1, [True, True, True]).flops
        == 15_552
    )
    assert (
        conv_backward_flop(grad, x, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1, [False, True, True]).flops
        == 7_776
    )
