"""A flex_attention call's BlockMask, read: the query-key pairs of the blocks it lists, exact integers.

flex_attention's higher-order op gets the BlockMask as a tuple (BlockMask.as_tuple()): q_len, kv_len, kv_num_blocks
(B, H, nQ), kv_indices (B, H, nQ, nK), full_kv_num_blocks, full_kv_indices, ..., Q_BLOCK, KV_BLOCK, mask_mod. Row
block i runs the first kv_num_blocks[b, h, i] blocks of kv_indices[b, h, i] with mask_mod applied (partial blocks)
and the first full_kv_num_blocks[b, h, i] of full_kv_indices[b, h, i] without it (full blocks). A block (i, j) holds
min(Q_BLOCK, tq - i*Q_BLOCK) x min(KV_BLOCK, tk - j*KV_BLOCK) pairs (clipped to the matrix). Per head:
- executed: every listed block's pairs (flex runs each listed block whole);
- needed: the full blocks' pairs, plus the partial blocks' pairs the mask_mod allows: read exactly by evaluating the
  mask_mod on the CPU (torch's create_mask) when its matrices hold at most CPU_LIMIT elements, exact with torch's
  noop_mask, else counted as the blocks' pairs (and said: kind 'block-approx').
On meta the tensors have no values: the call counts dense (kind 'block-unknown'), and the count says so.
"""

from __future__ import annotations

from math import prod
from typing import Any

import torch

from flopcheck.exact.attention_work import AttentionCall, MaskKind

CPU_LIMIT = 1 << 26  # mask_mod elements evaluated on the CPU (B x H x tq x tk of the block mask); past it: not read
PATTERN = "block mask"


def _sizes(n: int, block: int, length: int) -> torch.Tensor:
    """Each of n blocks' extent along one axis, clipped to `length` (0 past it)."""
    return torch.tensor([max(0, min(block, length - i * block)) for i in range(n)], dtype=torch.int64)


def listed(num: torch.Tensor, indices: torch.Tensor, n_kv: int) -> torch.Tensor:
    """(B, H, nQ, n_kv) int64: 1 where row block i lists key block j among its first num[b, h, i] indices."""
    k = indices.shape[-1]
    valid = torch.arange(k)[None, None, None, :] < num.to(torch.int64)[..., None]
    out = torch.zeros((*indices.shape[:-1], max(n_kv, int(indices.max()) + 1 if indices.numel() else 0)))
    out = out.to(torch.int64)
    out.scatter_add_(-1, indices.to(torch.int64), valid.to(torch.int64))
    return out[..., :n_kv].clamp(max=1)


def _block_counts(allowed: torch.Tensor, qb: int, kb: int, nq: int, nk: int) -> torch.Tensor:
    """(B, H, nQ, nK) int64: the allowed pairs of each block of a (B, H, tq, tk) boolean matrix."""
    b, h, tq, tk = allowed.shape
    padded = torch.zeros(b, h, nq * qb, nk * kb, dtype=torch.int64)
    padded[:, :, : min(tq, nq * qb), : min(tk, nk * kb)] = allowed[:, :, : nq * qb, : nk * kb].to(torch.int64)
    return padded.reshape(b, h, nq, qb, nk, kb).sum(dim=(3, 5))


def _mask_mod_counts(
    mask_mod: Any, shape: tuple[int, int], tq: int, tk: int, blocks: tuple[int, int, int, int]
) -> torch.Tensor | None:
    """The allowed pairs of every block under the mask_mod, evaluated on the CPU; None when not read (too large, or
    the mask_mod fails there)."""
    from torch.nn.attention.flex_attention import create_mask

    b, h = shape
    if b * h * tq * tk > CPU_LIMIT:
        return None
    try:
        allowed = create_mask(mask_mod, b, h, tq, tk, device="cpu")
    except Exception:  # noqa: BLE001 - a mask_mod that needs another device or its buffers: not read, said so
        return None
    return _block_counts(allowed.to(torch.bool), *blocks)


def read(block_mask: tuple[Any, ...], tq: int, tk: int) -> tuple[int, int, bool, int]:
    """(needed pairs, executed pairs, needed exact, B x H of the block mask) of one block mask's matrices, summed
    over its (B, H) (its broadcast heads once each)."""
    from torch.nn.attention.flex_attention import noop_mask

    num, indices, full_num, full_indices = block_mask[2:6]
    qb, kb, mask_mod = int(block_mask[-3]), int(block_mask[-2]), block_mask[-1]
    nq, nk = int(num.shape[-1]), -(-tk // kb)
    rows, cols = _sizes(nq, qb, tq), _sizes(nk, kb, tk)
    size = rows[:, None] * cols[None, :]  # (nQ, nK) pairs of each block
    partial = listed(num, indices, nk)
    full = listed(full_num, full_indices, nk) if full_num is not None else torch.zeros_like(partial)
    executed = int(((partial | full) * size).sum())
    full_pairs, partial_pairs = int((full * size).sum()), int((partial * size).sum())
    exact = mask_mod is noop_mask or not bool(partial.any())
    needed = full_pairs + partial_pairs
    if not exact:
        counts = _mask_mod_counts(mask_mod, (int(num.shape[0]), int(num.shape[1])), tq, tk, (qb, kb, nq, nk))
        if counts is not None:
            needed, exact = full_pairs + int((partial * counts).sum()), True
    return needed, executed, exact, int(num.shape[0]) * int(num.shape[1])


def note(op: Any, args: tuple[Any, ...], path: str) -> AttentionCall | None:
    """The AttentionCall of a higher-order op that is one flex_attention call (query, key, value, score_mod,
    block_mask tuple, ...) with a BlockMask; None otherwise, and for torch's own when none is given (one block of
    2^30, every pair)."""
    from torch.nn.attention.flex_attention import _LARGE_SPARSE_BLOCK_SIZE

    if getattr(op, "_name", "") != "flex_attention" or len(args) < 5:
        return None
    q, k, v, _, block_mask = args[:5]
    if not isinstance(block_mask, tuple) or len(block_mask) < 9:
        return None
    if int(block_mask[-2]) == _LARGE_SPARSE_BLOCK_SIZE:  # torch's own: no BlockMask given
        return None
    *lead, tq, e = (int(s) for s in q.shape)
    tk, ev = int(k.shape[-2]), int(v.shape[-1])
    heads = prod(lead)
    dense = heads * tq * tk
    if block_mask[2].device.type == "meta":
        return AttentionCall(path, MaskKind.BLOCK_UNKNOWN, heads, tq, tk, e, ev, dense, dense, dense)
    try:
        needed, executed, exact, matrices = read(block_mask, tq, tk)
        if heads % matrices:
            raise ValueError(f"a block mask of {matrices} matrices for {heads} heads")
    except Exception:  # noqa: BLE001 - a block mask of a layout not read: dense, and said
        return AttentionCall(path, MaskKind.UNREAD, heads, tq, tk, e, ev, dense, dense, dense)
    factor = heads // matrices  # a block mask broadcast over batch or heads (B or H of 1) stands for each
    kind = MaskKind.BLOCK if exact else MaskKind.BLOCK_APPROX
    return AttentionCall(path, kind, heads, tq, tk, e, ev, dense, needed * factor, executed * factor, 1, PATTERN)
