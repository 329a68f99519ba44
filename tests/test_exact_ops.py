"""Op formulas and the bookkeeping of the exact count, on tensors small enough to count by hand."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from flopcheck.exact import ExactCounter, count_forward
from flopcheck.types import Kind

aten = torch.ops.aten


def T(*shape):
    return torch.empty(*shape, device="meta")


def counted(fn):
    with ExactCounter() as c:
        fn()
    return c.result()


def test_mm():
    # (4 x 5) @ (5 x 6): 4 * 6 * 2 * 5 = 240
    assert counted(lambda: torch.mm(T(4, 5), T(5, 6))).total == 240


def test_addmm_counts_the_product_and_records_the_bias():
    # (4 x 5) @ (5 x 6) + bias: 240 FLOPs; the 4 * 6 = 24 bias adds are recorded, not counted
    r = counted(lambda: torch.addmm(T(6), T(4, 5), T(5, 6)))
    assert r.total == 240
    assert r.uncounted_by_category()["bias"] == (1, 24)


def test_qr_counts_lapacks_operations_for_each_mode():
    # LAPACK Working Note 41, multiplications + additions, A (5, 3), m > n, k = 3:
    #   xGEQRF: muls n(n(1/2 - n/3 + m) + m + 23/6) = 3(3 * 4.5 + 5 + 23/6) = 67, adds n(n * 4.5 + 5/6) = 43: 110
    #   xORGQR, Q (5, 3) from 3 reflectors: muls k(2mn + 2n - 5/3 + k(2k/3 - (m+n) - 1)) = 3(34 1/3 - 21) = 40,
    #     adds k(2mn + n - m + 1/3 + k(2k/3 - (m+n))) = 3(28 1/3 - 18) = 31: 71
    #   'complete', Q (5, 5): muls 3(58 1/3 - 27) = 94, adds 3(50 1/3 - 24) = 79: 173
    # and a batch of 2 wide (3, 5) matrices, m < n, 'r': xGEQRF's other branch m(m(-1/2 - m/3 + n) + 2n + 23/6) +
    # m(m(-1/2 - m/3 + n) + n + 5/6) = 3(10.5 + 13 5/6) + 3(10.5 + 5 5/6) = 73 + 49 = 122 each
    got = [counted(lambda m=m: torch.linalg.qr(T(5, 3), mode=m)).total for m in ("reduced", "complete", "r")]
    assert got == [110 + 71, 110 + 173, 110]
    assert counted(lambda: torch.linalg.qr(T(2, 3, 5), mode="r")).total == 2 * 122


def test_bmm_and_baddbmm():
    # 3 x (4 x 5) @ (5 x 6): 3 * 4 * 6 * 2 * 5 = 720, twice
    r = counted(lambda: (torch.bmm(T(3, 4, 5), T(3, 5, 6)), torch.baddbmm(T(3, 4, 6), T(3, 4, 5), T(3, 5, 6))))
    assert r.total == 1440


def test_linear_on_3d_input():
    # (2, 7, 5) @ (5 -> 3): 2 * 7 * 3 outputs * 2 * 5 = 420
    lin = nn.Linear(5, 3, device="meta")
    assert count_forward(lin, (T(2, 7, 5),)).total == 420


def test_conv_patch_embed():
    # conv 4 -> 8, kernel 2, stride 2 on (1, 4, 6, 6): 3 * 3 positions * 8 channels = 72 outputs,
    # each a 4 * 2 * 2 = 16-long dot product: 72 * 2 * 16 = 2,304; the 72 bias adds are recorded
    conv = nn.Conv2d(4, 8, 2, stride=2, device="meta")
    r = count_forward(conv, (T(1, 4, 6, 6),))
    assert r.total == 2304
    assert r.by_kind() == {Kind.CONV: 2304}
    assert r.uncounted_by_category()["bias"] == (1, 72)


class _ConvThenWeight(nn.Module):
    """A module whose own forward runs a conv and a weight matmul, as Mamba's mixer does (F.conv1d, w @ x)."""

    def __init__(self):
        super().__init__()
        self.k = nn.Parameter(torch.empty(4, 1, 3, device="meta"))
        self.w = nn.Parameter(torch.empty(2, 4, device="meta"))

    def forward(self, x):  # x (1, 4, 8)
        y = F.conv1d(x, self.k, groups=4, padding=2)[..., :8]  # (1, 4, 8)
        return self.w @ y[0]  # (2, 8)


def test_a_path_with_two_kinds_gives_a_term_of_each():
    # depthwise conv1d, 4 channels, kernel 3, padding 2 on length 8: 4 x 10 outputs x 2 x 3 = 240 (conv); w (2, 4) @
    # (4, 8): 2 x 8 x 2 x 4 = 128 (linear); one path (''), two terms, never 368 'linear' and conv 0
    r = count_forward(_ConvThenWeight(), (T(1, 4, 8),))
    assert [(t.kind, t.flops) for t in r.terms()] == [(Kind.CONV, 240), (Kind.LINEAR, 128)]


def test_transposed_conv():
    # conv-transpose 3 -> 5, kernel 2 on (1, 3, 4, 4): each of 16 * 3 inputs times 5 * 2 * 2 weights:
    # 2 * 48 * 20 = 1,920
    deconv = nn.ConvTranspose2d(3, 5, 2, device="meta")
    assert count_forward(deconv, (T(1, 3, 4, 4),)).total == 1920


def test_einsum_contraction_and_permutation():
    # 'bij,bjk->bik' over b=2, i=3, j=4, k=5: 2 * (2*3*4*5) = 240; a permutation multiplies nothing: 0
    r = counted(lambda: torch.einsum("bij,bjk->bik", T(2, 3, 4), T(2, 4, 5)))
    assert r.total == 240
    assert counted(lambda: torch.einsum("nhwc->nchw", T(1, 2, 3, 4))).total == 0


# q (b=2, h=3, t=5, e=4), v with ev = 6: QK^T 2*2*3*5*5*4 = 1,200; attn@V 2*2*3*5*5*6 = 1,800
BHTE = [(2, 3, 5, 4), (2, 3, 5, 4), (2, 3, 5, 6)]
SDPA_KERNELS = {
    "math": lambda q, k, v: aten._scaled_dot_product_attention_math(q, k, v),
    "flash (CUDA)": lambda q, k, v: aten._scaled_dot_product_flash_attention(q, k, v),
    "flash (CPU)": lambda q, k, v: aten._scaled_dot_product_flash_attention_for_cpu(q, k, v),
    "efficient": lambda q, k, v: aten._scaled_dot_product_efficient_attention(q, k, v, None, False),
    "cuDNN": lambda q, k, v: aten._scaled_dot_product_cudnn_attention(q, k, v, None, False),
}


@pytest.mark.parametrize("kernel", list(SDPA_KERNELS))
def test_every_sdpa_kernel_splits_into_qk_and_av(kernel):
    q, k, v = (T(*s) for s in BHTE)
    r = counted(lambda: SDPA_KERNELS[kernel](q, k, v))
    assert r.by_kind() == {Kind.ATTN_SCORE: 1200, Kind.ATTN_VALUE: 1800}
    assert r.by_path() == {"qk": 1200, "av": 1800}


def test_low_level_flash_kernel_layout():
    # _flash_attention_forward takes (b, t, h, e): same 1,200 + 1,800
    q, v = T(2, 5, 3, 4), T(2, 5, 3, 6)
    r = counted(lambda: aten._flash_attention_forward(q, q, v, None, None, 5, 5, 0.0, False, False))
    assert r.by_kind() == {Kind.ATTN_SCORE: 1200, Kind.ATTN_VALUE: 1800}


def test_fused_sdpa_on_cpu_runs_the_cpu_flash_kernel():
    # q = k = v (2, 3, 5, 4): 2 * 2*3*5*5*4 = 1,200 for QK^T and 1,200 for attn@V
    q = torch.randn(2, 3, 5, 4)
    r = counted(lambda: F.scaled_dot_product_attention(q, q, q))
    assert {x.op for x in r.counted} == {"aten._scaled_dot_product_flash_attention_for_cpu"}
    assert r.by_kind() == {Kind.ATTN_SCORE: 1200, Kind.ATTN_VALUE: 1200}


class ExplicitAttention(nn.Module):
    """softmax(q k^T) v with the matmuls written out."""

    def forward(self, q, k, v):
        return (q @ k.transpose(-2, -1)).softmax(-1) @ v


def test_explicit_attention_split_by_data_flow_even_when_shapes_tie():
    # t = e = ev = 4: QK^T and attn@V have identical shapes (6 x 4 x 4 @ 6 x 4 x 4); data flow tells them apart
    # 2 * 2 * 3 * 4 * 4 * 4 = 768 each
    q = T(2, 3, 4, 4)
    r = count_forward(ExplicitAttention(), (q, q, q))
    assert r.by_path() == {"qk": 768, "av": 768}
    assert r.by_kind() == {Kind.ATTN_SCORE: 768, Kind.ATTN_VALUE: 768}


class TwoMatmuls(nn.Module):
    def forward(self, a, b):
        return (a @ b) @ b


def test_matmul_without_softmax_is_not_attention():
    # (3 x 3) @ (3 x 3) twice: 2 * 3 * 3 * 3 * 2 = 108, a plain matmul
    r = count_forward(TwoMatmuls(), (T(3, 3), T(3, 3)))
    assert r.by_kind() == {Kind.MATMUL: 108}


def test_uncounted_ops_are_recorded_not_zeroed():
    # layer norm of (2, 8, 16): 256 elements written; GELU 256; the view writes nothing
    x = T(2, 8, 16)
    r = counted(lambda: F.gelu(F.layer_norm(x, (16,))).view(16, 16))
    cats = r.uncounted_by_category()
    assert cats["norm"] == (1, 256)
    assert cats["elementwise"] == (1, 256)
    assert cats["view"] == (1, 0)
    assert r.total == 0


def test_kind_map_and_module_paths():
    # Sequential(Linear(4, 8), Linear(8, 2)) on (3, 4): 3*8*2*4 = 192 and 3*2*2*8 = 96
    net = nn.Sequential(nn.Linear(4, 8), nn.Linear(8, 2)).to("meta")
    r = count_forward(net, (T(3, 4),), kind_map=[("1", "head")])
    assert r.by_path() == {"0": 192, "1": 96}
    assert r.by_kind() == {Kind.LINEAR: 192, Kind.HEAD: 96}


def test_module_list_indices_fold_into_a_star():
    # 3 x Linear(4, 4) on (1, 4): each 1*4*2*4 = 32, summed under 'layers.*' = 96
    class Stack(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return x

    r = count_forward(Stack().to("meta"), (T(1, 4),))
    assert r.by_path() == {"layers.*": 96}
    assert sum(x.calls for x in r.counted) == 3


def test_hooks_are_removed_afterwards():
    lin = nn.Linear(4, 4, device="meta")
    count_forward(lin, (T(1, 4),))
    assert not lin._forward_hooks and not lin._forward_pre_hooks
