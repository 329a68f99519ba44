"""Attention work under its mask, three conventions, exact integers in FLOPs (2 per multiply-add).

Every attention call has q (..., tq, e), k (..., tk, e), v (..., tk, ev) and `heads` = prod(...) score matrices of
tq x tk query-key pairs. Each pair costs 2*e FLOPs in QK^T and 2*ev in attn@V. Three counts of the pairs:
- dense: every pair, heads * tq * tk; the exact count's headline (PaLM's and torchtitan's convention);
- needed: the pairs its mask lets through: causal (SDPA's is_causal, top-left aligned) sum_i min(i+1, tk), i.e.
  T(T+1)/2 per head when tq = tk = T; a sliding window of W sum_i min(i+1, W); a mask tensor its allowed entries
  (MaxText's "causal halved" is this convention);
- executed: what a kernel computes. math does every pair (= dense); flash computes whole tiles of FLASH_TILE and
  skips a tile only when its mask allows none of its pairs, so it executes every pair of a tile that holds a needed
  one (a tile at the matrix's edge is clipped to it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from flopcheck import codec
from flopcheck.types import Word

MASKED_BELOW = -1e4  # a float mask's entry at or below it masks its pair (exp(-1e4) is 0 in fp32, bf16, fp16)
# (query rows, key columns) of one tile: FlashAttention-2's forward kernel, head dim 128 on A100/H100 without dropout
# (Dao-AILab/flash-attention, csrc/flash_attn/src/flash_fwd_launch_template.h, run_mha_fwd_hdim128: kBlockM=128,
# kBlockN=64); assumed for every head dim. Measured on an H200 with torch 2.11's flash_fwd_kernel<128, 128, 64>: causal
# at T = 4,096 ran 17,301,504 of the dense 33,554,432 tensor-core instructions, this tile's 0.515625 (docs/count.md)
FLASH_TILE = (128, 64)
KERNELS = ("flash", "math")  # the kernels whose executed work is given
HEADLINE = "dense"  # the convention of the exact count's headline total


class MaskKind(Word):
    """What an attention call's mask is, as read: none, causal, a mask tensor, or a flex_attention BlockMask
    (exact/block_mask.py); a mask whose values could not be read counts dense in every convention."""

    NONE = "none"
    CAUSAL = "causal"  # SDPA's is_causal
    TENSOR = "tensor"  # a mask tensor, its values read
    UNKNOWN = "unknown"  # a mask tensor on meta: no values, dense
    UNREAD = "unread"  # a mask too large (or of a layout not read): dense
    BLOCK = "block"  # a BlockMask, its blocks read: flash = the listed blocks' pairs
    BLOCK_APPROX = "block-approx"  # its mask_mod's pairs not read: needed = the listed blocks'
    BLOCK_UNKNOWN = "block-unknown"  # a BlockMask on meta: dense


@dataclass(frozen=True)
class AttentionCall:
    """One attention call's shapes and its query-key pairs in each convention (all heads together)."""

    path: str  # normalised module path of the call
    mask: MaskKind
    heads: int  # batch x query heads: score matrices
    tq: int
    tk: int
    e: int  # q/k head width
    ev: int  # v head width
    dense: int  # query-key pairs, all heads
    needed: int  # pairs the mask allows
    flash: int  # pairs in flash tiles holding a needed pair
    calls: int = 1
    # what the mask's values are, read (masks.pattern_of): 'causal', 'window:W', 'padding', 'causal-padding', 'packed',
    # 'packed-causal', 'other'; '' with no mask, or a mask whose values nobody has
    pattern: str = ""
    padded: int = 0  # a packed mask's pairs as a padded batch computes them: n sequences x max_len^2 per matrix
    eager: bool = False  # attention outside SDPA (matmul, softmax, matmul): every kernel runs its every pair

    def flops(self, pairs: int) -> int:
        """2 * pairs * e (QK^T) + 2 * pairs * ev (attn@V), summed over its calls."""
        return 2 * pairs * (self.e + self.ev) * self.calls

    def conventions(self) -> dict[str, int]:
        """FLOPs of its calls: dense, needed, executed by each kernel."""
        return {
            "dense": self.flops(self.dense),
            "needed": self.flops(self.needed),
            "executed_flash": self.flops(self.flash),
            "executed_math": self.flops(self.dense),
        }


def causal_pairs(tq: int, tk: int) -> int:
    """Pairs under SDPA's causal mask (query i sees keys 0..i): sum_{i<tq} min(i+1, tk); T(T+1)/2 when tq = tk = T."""
    full = min(tq, tk)  # rows 0..full-1 see i+1 keys, the rest all tk
    return full * (full + 1) // 2 + (tq - full) * tk


def window_pairs(t: int, w: int) -> int:
    """Pairs under a causal sliding window of W keys (query i sees keys i-W+1..i): sum_{i<t} min(i+1, W)."""
    full = min(t, w)
    return full * (full + 1) // 2 + (t - full) * w


def causal_flash_pairs(tq: int, tk: int, tile: tuple[int, int] = FLASH_TILE) -> int:
    """Pairs flash computes under the causal mask: row tile I (rows I*Br..last) needs keys 0..last, so it runs
    ceil((last+1)/Bc) key tiles, clipped to tk."""
    br, bc = tile
    pairs = 0
    for start in range(0, tq, br):
        rows = min(br, tq - start)
        keys = min(start + rows, tk)  # the tile's last row sees keys 0..start+rows-1
        pairs += rows * min(-(-keys // bc) * bc, tk)
    return pairs


def collect(calls: Iterable[AttentionCall]) -> tuple[AttentionCall, ...]:
    """Calls with the same path, mask and shapes as one, their calls summed."""
    from dataclasses import replace

    out: dict[AttentionCall, AttentionCall] = {}
    for c in calls:
        key = replace(c, calls=1)
        seen = out.get(key)
        out[key] = c if seen is None else replace(seen, calls=seen.calls + c.calls)
    return tuple(out.values())


def scaled(calls: Iterable[AttentionCall], factor: int) -> tuple[AttentionCall, ...]:
    """The calls of `factor` forwards (sampling steps): each kind's calls times factor."""
    from dataclasses import replace

    return tuple(replace(c, calls=c.calls * factor) for c in calls)


def totals(calls: Iterable[AttentionCall]) -> dict[str, int]:
    """FLOPs of all calls in each convention."""
    out = {"dense": 0, "needed": 0, "executed_flash": 0, "executed_math": 0}
    for c in calls:
        for k, v in c.conventions().items():
            out[k] += v
    return out


TENSOR_MASKS = (
    MaskKind.TENSOR,
    MaskKind.UNKNOWN,
    MaskKind.UNREAD,
)  # an SDPA call given attn_mask as a tensor (read or not)


def executed(calls: Iterable[AttentionCall], kernel: str) -> int:
    """FLOPs the kernel runs: on flash, each call's flash tiles, but a call given a mask tensor every pair (SDPA's
    flash backend refuses any attn_mask, so torch runs it on the efficient or math kernel); on any other, every pair."""
    return sum(
        c.flops(c.flash if kernel == "flash" and c.mask not in TENSOR_MASKS and not c.eager else c.dense) for c in calls
    )


def needed_total(total: int, calls: Iterable[AttentionCall]) -> int | None:
    """The second figure beside a headline: the same FLOPs with attention at the pairs its masks let through,
    total - (dense - needed) (None when no call has a mask: the two are one figure)."""
    calls = tuple(calls)
    if not masked(calls):
        return None
    t = totals(calls)
    return total - (t["dense"] - t["needed"])


def masked(calls: Iterable[AttentionCall]) -> bool:
    """A call whose mask matters: one that restricts pairs, or one whose mask could not be read."""
    return any(c.mask is not MaskKind.NONE for c in calls)


def to_dict(calls: tuple[AttentionCall, ...], kernel: str = "") -> dict[str, Any]:
    """JSON-ready: the headline's convention, the totals in each, and every call kind (what a cause would need)."""
    t = totals(calls)
    return {
        "headline_convention": HEADLINE,
        "flash_tile": list(FLASH_TILE),
        "dense_flops": t["dense"],
        "needed_flops": t["needed"],
        "executed_flash_flops": t["executed_flash"],
        "executed_math_flops": t["executed_math"],
        **({"attn_kernel": kernel, "executed_flops": executed(calls, kernel)} if kernel else {}),
        "masked_below": MASKED_BELOW,
        "masks_unknown": any(c.mask in (MaskKind.UNKNOWN, MaskKind.UNREAD, MaskKind.BLOCK_UNKNOWN) for c in calls),
        "calls": [{**codec.encode(c), **{f"{k}_flops": v for k, v in c.conventions().items()}} for c in calls],
    }


def from_rows(rows: Iterable[Iterable[Any]]) -> tuple[AttentionCall, ...]:
    """AttentionCalls from their JSON rows (a child's measurement read back)."""
    return tuple(codec.decode_row(AttentionCall, r) for r in rows)


def to_rows(calls: Iterable[AttentionCall]) -> list[list[Any]]:
    """AttentionCalls as JSON rows (field order)."""
    return [codec.encode_row(c) for c in calls]
