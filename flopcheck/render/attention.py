"""Attention work under its masks in words: the headline beside the needed figure, and each call in every
convention (the numbers: exact/attention_work.py)."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable

from flopcheck.exact.attention_work import (
    FLASH_TILE,
    HEADLINE,
    KERNELS,
    MASKED_BELOW,
    TENSOR_MASKS,
    AttentionCall,
    MaskKind,
    executed,
    masked,
    needed_total,
    totals,
)
from flopcheck.fmt import commas, si, table


def needed_line(total: int, calls: Iterable[AttentionCall], indent: str = "") -> list[str]:
    """The headline and the second figure in words, the same in every verb (none when no mask makes them differ)."""
    n = needed_total(total, calls)
    if n is None:
        return []
    width = max(len(commas(total)), len(commas(n)))
    return [
        f"{indent}model FLOPs {commas(total):>{width}} ({si(total)}): the headline, attention dense",
        f"{indent}needed      {commas(n):>{width}} ({si(n)}): attention at the pairs its mask lets through",
    ]


MASK_WORDS = {
    MaskKind.NONE: "no mask",
    MaskKind.CAUSAL: "causal",
    MaskKind.TENSOR: "mask tensor (values read)",
    MaskKind.UNKNOWN: "mask on meta: values unknown, counted dense",
    MaskKind.UNREAD: "mask not read (too large): counted dense",
    MaskKind.BLOCK: "block mask (blocks read)",
    MaskKind.BLOCK_APPROX: "block mask (blocks read; mask_mod's pairs not read)",
    MaskKind.BLOCK_UNKNOWN: "block mask on meta: blocks unknown, counted dense",
}


def _mask_words(c: AttentionCall) -> str:
    """The call's mask in words, with the pattern its values were read as ('mask tensor (values read): packed')."""
    read = f": {c.pattern.replace(':', ' of ')}" if c.mask is MaskKind.TENSOR and c.pattern else ""
    return MASK_WORDS[c.mask] + read + (", eager" if c.eager else "")


def to_lines(calls: tuple[AttentionCall, ...], kernel: str = "") -> list[str]:
    """The calls' work in every convention, and which one the headline uses ('' when no call has a mask)."""
    if not masked(calls):
        return []
    rows = [
        [c.path or "(top)", _mask_words(c), str(c.calls), *(commas(v) for v in c.conventions().values())] for c in calls
    ]
    t = totals(calls)
    rows.append(["total", "", str(sum(c.calls for c in calls)), *(commas(v) for v in t.values())])
    br, bc = FLASH_TILE
    lines = [
        *textwrap.wrap(
            f"attention under its masks (FLOPs, QK^T + attn@V): the headline counts it {HEADLINE}, every query-key "
            f"pair (PaLM's and torchtitan's convention); needed: the pairs the mask lets through (MaxText's); "
            f"executed: flash runs every {br}x{bc} tile that holds a needed pair (FlashAttention-2's forward tile), "
            f"math every pair",
            100,
        ),
        table(
            rows,
            ["call", "mask", "calls", "dense", "needed", "executed, flash", "executed, math"],
            right={2, 3, 4, 5, 6},
        ),
        f"  headline ({HEADLINE}) - needed: {t['dense'] - t['needed']:+,} FLOPs",
    ]
    if kernel:
        note = "" if kernel in KERNELS else " (its tiles are not modelled: counted as math, every pair)"
        lines.append(f"  executed on the {kernel} kernel: {commas(executed(calls, kernel))} FLOPs of attention{note}")
        lines.extend(_flash_refused(calls, kernel))
    if any(c.eager for c in calls):
        lines.append(
            "  eager attention (matmul, softmax, matmul; 'eager' above): no kernel skips a pair of it, so it executes "
            "dense whatever --attn-kernel says; its mask read from the tensor added to (or filled into) its scores"
        )
    if any(c.mask is MaskKind.TENSOR for c in calls):
        lines.append(
            f"  a float mask tensor masks a pair at or below {MASKED_BELOW:g} (-inf, the dtype's minimum, BERT's "
            f"-10000); a bias above it lets the pair through"
        )
    if any(c.mask is MaskKind.UNREAD for c in calls):
        lines.append("  a mask too large to read (past 2^28 elements a score matrix) counts dense in every convention")
    if any(c.mask is MaskKind.UNKNOWN for c in calls):
        lines.append(
            "  a mask given as a tensor on meta has no values: those calls count dense in every convention; count "
            "on real tensors (--device cpu) to read it"
        )
    lines.extend(_block_notes(calls))
    return lines


def _flash_refused(calls: tuple[AttentionCall, ...], kernel: str) -> list[str]:
    """On flash, the calls given a mask tensor, said: SDPA runs them on the efficient kernel, every pair."""
    refused = [c for c in calls if c.mask in TENSOR_MASKS]
    if kernel != "flash" or not refused:
        return []
    return [
        f"  {sum(c.calls for c in refused)} calls give SDPA a mask tensor, which its flash backend refuses: torch "
        f"runs them on the efficient kernel (or math), every pair, {commas(sum(c.flops(c.dense) for c in refused))} "
        f"FLOPs; the flash column is FlashAttention's own kernel given that mask as causal or a window"
    ]


def _block_notes(calls: tuple[AttentionCall, ...]) -> list[str]:
    """What a flex_attention BlockMask's calls count, in words (none without one)."""
    kinds = {c.mask for c in calls}
    lines = []
    if kinds & {MaskKind.BLOCK, MaskKind.BLOCK_APPROX}:
        lines.append(
            "  a flex_attention block mask: needed counts its listed blocks' pairs (a partial block's under its "
            "mask_mod), executed (flash column) every listed block whole, as flex runs it"
        )
    if MaskKind.BLOCK_APPROX in kinds:
        lines.append("  a block mask whose mask_mod was not read: its partial blocks count whole in needed too")
    if MaskKind.BLOCK_UNKNOWN in kinds:
        lines.append(
            "  a flex_attention block mask on meta has no values: those calls count dense in every convention; "
            "count on real tensors (--device cpu) to read its blocks"
        )
    return lines
