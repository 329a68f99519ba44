"""flex_attention with a BlockMask: dense, needed and executed attention work from its blocks, exact by hand."""

from __future__ import annotations

import torch
from torch.nn.attention.flex_attention import BlockMask, create_block_mask, flex_attention

from flopcheck.exact import count_forward
from flopcheck.exact.attention_work import to_dict, totals
from flopcheck.exact.block_mask import listed
from flopcheck.render.attention import to_lines

# q, k, v (1, 2, 256, 16), BLOCK_SIZE 64: 4 x 4 blocks of 64 x 64 = 4,096 pairs; 2 heads; a pair costs
# 2 * (e + ev) = 2 * 32 = 64 FLOPs (QK^T + attn@V)
DENSE = 4 * 16 * 65_536 * 2  # 65,536 pairs a head x 64 FLOPs x 2 heads = 8,388,608
LISTED = 4 * 16 * 40_960 * 2  # blocks j <= i: 10 of 16 x 4,096 = 40,960 pairs a head: 5,242,880


def _block_causal(device: str = "cpu", t: int = 256) -> BlockMask:
    """Row block i lists key blocks 0..i, all full (no mask_mod): 1 + 2 + 3 + 4 = 10 of 16 blocks."""
    num = torch.arange(1, 5, dtype=torch.int32).reshape(1, 1, 4)
    idx = torch.arange(4, dtype=torch.int32).expand(4, 4).reshape(1, 1, 4, 4).contiguous()
    num, idx = num.to(device), idx.to(device)
    return BlockMask.from_kv_blocks(torch.zeros_like(num), idx, num, idx, BLOCK_SIZE=64, seq_lengths=(t, t))


class Flex(torch.nn.Module):
    def __init__(self, block_mask: BlockMask | None) -> None:
        super().__init__()
        self.block_mask = block_mask

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = flex_attention(q, k, v, block_mask=self.block_mask)
        return out


def test_listed_blocks_by_hand():
    # row 0 lists [2, 0] of its indices [2, 0, 1] (num 2), row 1 lists [1] of [1, 1, 0]: blocks (0,0), (0,2), (1,1)
    got = listed(torch.tensor([[[2, 1]]]), torch.tensor([[[[2, 0, 1], [1, 1, 0]]]]), 3)
    assert got.tolist() == [[[[1, 0, 1], [0, 1, 0]]]]


def test_full_blocks_block_causal_by_hand():
    q = torch.randn(1, 2, 256, 16)
    count = count_forward(Flex(_block_causal()), (q, q, q))
    (call,) = count.attention
    assert (call.mask, call.pattern, call.heads) == ("block", "block mask", 2)
    # dense 65,536 x 2 heads = 131,072 pairs; needed = executed = 40,960 x 2 = 81,920
    assert (call.dense, call.needed, call.flash) == (131_072, 81_920, 81_920)
    t = totals(count.attention)
    assert (t["dense"], t["needed"], t["executed_flash"]) == (8_388_608, 5_242_880, 5_242_880)
    assert (DENSE, LISTED) == (8_388_608, 5_242_880)
    assert sum(r.flops for r in count.counted) == 8_388_608  # the headline stays dense
    assert not to_dict(count.attention)["masks_unknown"]
    assert any("block mask (blocks read)" in line for line in to_lines(count.attention))


def test_partial_blocks_read_by_their_mask_mod():
    # create_block_mask(q >= k): 6 full blocks below the diagonal, 4 partial on it; the mask_mod read on the CPU:
    # needed = causal T(T+1)/2 = 256 x 257 / 2 = 32,896 a head; executed = the 10 listed blocks' 40,960
    block_mask = create_block_mask(lambda b, h, qi, ki: qi >= ki, None, None, 256, 256, device="cpu", BLOCK_SIZE=64)
    q = torch.randn(1, 2, 256, 16)
    (call,) = count_forward(Flex(block_mask), (q, q, q)).attention
    assert (call.mask, call.needed, call.flash) == ("block", 65_792, 81_920)
    # FLOPs: needed 64 x 65,792 = 4,210,688; executed 5,242,880
    assert call.conventions()["needed"] == 4_210_688 and call.conventions()["executed_flash"] == 5_242_880


def test_clipped_edge_blocks_by_hand():
    # T = 200 at 64 x 64 blocks: extents 64, 64, 64, 8; block-causal: rows r_i x sum_{j<=i} c_j =
    # 64x64 + 64x128 + 64x192 + 8x200 = 4,096 + 8,192 + 12,288 + 1,600 = 26,176 pairs a head, 1 head
    q = torch.randn(1, 1, 200, 8)
    (call,) = count_forward(Flex(_block_causal(t=200)), (q, q, q)).attention
    assert (call.dense, call.needed, call.flash) == (40_000, 26_176, 26_176)


def test_no_block_mask_records_nothing():
    q = torch.randn(1, 2, 64, 16)
    assert count_forward(Flex(None), (q, q, q)).attention == ()


def test_block_mask_on_meta_counts_dense_and_says_so():
    q = torch.empty(1, 2, 256, 16, device="meta")
    count = count_forward(Flex(_block_causal("meta")), (q, q, q))
    (call,) = count.attention
    assert (call.mask, call.needed, call.flash) == ("block-unknown", 131_072, 131_072)
    assert to_dict(count.attention)["masks_unknown"]
    assert any("block mask on meta has no values" in line for line in to_lines(count.attention))


def test_partial_blocks_unread_count_whole_and_say_so(monkeypatch):
    # the mask_mod past the CPU limit: its 4 partial diagonal blocks count whole, needed = executed = 40,960 a head
    import flopcheck.exact.block_mask as bm

    monkeypatch.setattr(bm, "CPU_LIMIT", 0)
    block_mask = create_block_mask(lambda b, h, qi, ki: qi >= ki, None, None, 256, 256, device="cpu", BLOCK_SIZE=64)
    q = torch.randn(1, 2, 256, 16)
    count = count_forward(Flex(block_mask), (q, q, q))
    (call,) = count.attention
    assert (call.mask, call.needed, call.flash) == ("block-approx", 81_920, 81_920)
    assert any("mask_mod was not read" in line for line in to_lines(count.attention))
