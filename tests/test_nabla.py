"""Kandinsky 5's NABLA sparse attention (flopcheck.zoo.kandinsky_nabla): diffusers' own BlockMask, its blocks read
on real CPU tensors, every figure by hand.

The tiny model: width D = 32, 2 heads of e = 16, time dim 16, FF 64, 1 text and 2 visual blocks; latent (1, 2, 32,
16, 4) in 2 x 2 patches: S = 2 frames x 16 x 8 = 256 visual tokens (4 NABLA blocks of 64: 2 a frame), L = 8 text
tokens. On --device cpu a spec's weights are zero, so every query and key is 0 and NABLA's block map
softmax(q_avg k_avg^T) is uniform, 1/4 a block; P = 0.2 keeps the blocks whose ascending cumulative mass reaches
1 - P = 0.8: 0.25, 0.5, 0.75 fall short, 1.0 reaches it, so one block a row, the last in sorted order. torch's CPU
sort keeps the order of 4 equal values, so that block is key block 3. OR'd with the STA mask (wT = 1: the row's own
frame, blocks {0, 1} or {2, 3}): rows 0, 1 list {0, 1, 3}, rows 2, 3 list {2, 3}: 3 + 3 + 2 + 2 = 10 of 16 blocks.
"""

from __future__ import annotations

import json

import pytest

SPEC = "flopcheck.zoo.kandinsky_nabla:factory"

# linear layers, 2 x rows x in x out FLOPs (no bias: flopcheck's convention):
#   embeddings: text 2x8x16x32 = 8,192; time 2x32x16 + 2x16x16 = 1,536; pooled 2x16x16 = 512;
#     visual (patch 1x2x2x4 = 16 in) 2x256x16x32 = 262,144                                             -> 272,384
#   text block: modulation 2x16x(6x32) = 6,144; q, k, v, out 4 x 2x8x32x32 = 65,536;
#     FF 2 x 2x8x32x64 = 65,536                                                                        -> 137,216
#   visual block: modulation 2x16x(9x32) = 9,216; self q, k, v, out 4 x 2x256x32x32 = 2,097,152;
#     cross q, out 2 x 524,288 + k, v 2 x 2x8x32x32 = 1,081,344; FF 2 x 2x256x32x64 = 2,097,152       -> 5,284,864
#   out layer: modulation 2x16x(2x32) = 2,048; 2x256x32x16 = 262,144                                    -> 264,192
LINEAR = 272_384 + 137_216 + 2 * 5_284_864 + 264_192  # 11,243,520
# attention, 2 x h x tq x tk x e a product (QK^T, attn@V): text self 2 x 2x2x8x8x16 = 8,192; cross, a visual block,
# 2 x 2x2x256x8x16 = 262,144; NABLA's block map q_avg @ k_avg^T 2x2x4x4x16 = 1,024 a visual block
SELF_DENSE = 2 * 2 * 2 * 256 * 256 * 16  # 8,388,608 a visual block: 65,536 pairs x 2 heads x 64 FLOPs a pair
SELF_NEEDED = 2 * 2 * 2 * 10 * 64 * 64 * 16  # 10 blocks of 64 x 64 = 40,960 pairs a head: 5,242,880
OTHER_ATTENTION = 8_192 + 2 * (262_144 + 1_024)  # 534,528
TOTAL = LINEAR + OTHER_ATTENTION + 2 * SELF_DENSE  # the headline: dense, 28,555,264


@pytest.mark.integration
def test_kandinsky5_nabla_on_cpu_through_the_cli_by_hand(capsys):
    from flopcheck.cli import main

    assert (LINEAR, OTHER_ATTENTION, SELF_DENSE, SELF_NEEDED) == (11_243_520, 534_528, 8_388_608, 5_242_880)
    assert main(["count", SPEC, "--device", "cpu", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["total_flops"] == TOTAL == 28_555_264
    a = d["attention"]
    # the two visual self-attentions: dense 2 x 8,388,608; needed = executed (every block full, no mask_mod) 2 x
    # 5,242,880; the text and cross attentions run flex without a BlockMask and are no masked call
    assert (a["dense_flops"], a["needed_flops"], a["executed_flash_flops"]) == (16_777_216, 10_485_760, 10_485_760)
    assert not a["masks_unknown"]
    (call,) = a["calls"]
    assert (call["path"], call["mask"], call["calls"], call["heads"], call["tq"]) == (
        "visual_transformer_blocks.*.self_attention",
        "block",
        2,
        2,
        256,
    )
    # pairs a call: dense 256 x 256 x 2 heads = 131,072; needed 10 x 4,096 x 2 = 81,920
    assert (call["dense"], call["needed"], call["flash"]) == (131_072, 81_920, 81_920)


@pytest.mark.integration
def test_nabla_selects_the_last_tied_block_and_its_frame():
    import torch
    from diffusers.models.transformers.transformer_kandinsky import nablaT_v2

    from flopcheck.zoo.kandinsky_nabla import inputs, model

    net = model()
    _, kwargs = inputs(net)
    sta = kwargs["sparse_params"]["sta_mask"]
    assert sta.int().tolist() == [[[[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1], [0, 0, 1, 1]]]]  # each its own frame
    q = torch.zeros(1, 256, 2, 16)  # (B, S, heads, e): a zeroed model's queries and keys
    blocks = nablaT_v2(q, q, sta, thr=0.2).to_dense()  # torch's own reading of the BlockMask: (B, H, 4, 4)
    rows = [[1, 1, 0, 1], [1, 1, 0, 1], [0, 0, 1, 1], [0, 0, 1, 1]]  # STA | key block 3: 10 of 16
    assert blocks.int().tolist() == [[rows, rows]]
