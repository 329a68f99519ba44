"""Each F.scaled_dot_product_attention call's mask, read: the query-key pairs it needs and the pairs flash executes.

`MaskLog.note(args, kwargs, path)` is called by the exact count for every SDPA call. is_causal is counted by hand
(attention_work). A mask tensor on a real device is read: its allowed entries (a boolean True; a float one masks a
pair at or below MASKED_BELOW, -1e4: -inf, transformers' finfo.min and BERT's -10000) per score matrix, and the flash
tiles holding one. On meta a tensor has no values; the one exception is a mask transformers' own mask function made
(`create_causal_mask`, sliding windows, chunks): while the log is entered, that function runs a second time on the
CPU beside the meta one and its values are kept, so a Mistral's sliding window on meta is read. Any other meta mask
is 'unknown': counted dense, and said so.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from math import prod
from typing import Any

import torch
from torch.utils.weak import WeakTensorKeyDictionary

from flopcheck.exact.attention_work import (
    FLASH_TILE,
    MASKED_BELOW,
    AttentionCall,
    MaskKind,
    causal_flash_pairs,
    causal_pairs,
)

CPU_LIMIT = 1 << 28  # mask elements computed on the CPU beside a meta mask (256 Mi booleans); past it: unknown
MASK_MAKERS = ("sdpa", "eager")  # transformers' mask interface entries whose masks get CPU values


def _shape(t: torch.Tensor) -> tuple[int, ...]:
    return tuple(int(s) for s in t.shape)


def _allowed(mask: torch.Tensor) -> torch.Tensor:
    """True where a pair takes part: a boolean mask's True, a float mask's entries above MASKED_BELOW (-10000, -inf
    and the dtype's minimum mask a pair; a bias of -3 lets it through)."""
    if mask.dtype == torch.bool:
        return mask
    if mask.is_floating_point():
        return mask > MASKED_BELOW
    return mask != 0


def _compact(mask: torch.Tensor) -> tuple[torch.Tensor, int]:
    """(the mask with broadcast leading axes (stride 0 or size 1) cut to one, how many slices each stands for)."""
    factor, index = 1, []
    for size, stride in zip(mask.shape[:-2], mask.stride()[:-2]):
        index.append(slice(0, 1) if stride == 0 and size > 1 else slice(None))
        factor *= int(size) if stride == 0 and size > 1 else 1
    return mask[tuple(index)], factor


def tile_pairs(allowed: torch.Tensor, tile: tuple[int, int] = FLASH_TILE) -> int:
    """Pairs in the (Br, Bc) tiles of each (tq, tk) slice that hold an allowed pair, each tile clipped to the matrix."""
    br, bc = tile
    tq, tk = allowed.shape[-2:]
    lead = allowed.reshape(-1, tq, tk)
    padded = torch.zeros(lead.shape[0], -(-tq // br) * br, -(-tk // bc) * bc, dtype=torch.bool)
    padded[:, :tq, :tk] = lead
    tiles = padded.reshape(lead.shape[0], -(-tq // br), br, -(-tk // bc), bc).any(dim=4).any(dim=2)
    rows = torch.tensor([min(br, tq - i) for i in range(0, tq, br)], dtype=torch.int64)
    cols = torch.tensor([min(bc, tk - j) for j in range(0, tk, bc)], dtype=torch.int64)
    return int((tiles.to(torch.int64) * rows[:, None] * cols[None, :]).sum())


PATTERN_SLICES = 256  # score matrices a mask's pattern is read from, one by one; past it: 'other'


def _segments(allowed: torch.Tensor) -> list[int] | None:
    """The lengths of the documents of a block-diagonal (tq = tk) matrix, read both ways (a pair i, j in one
    document if either direction is allowed, so a causal one reads too); None if it is not block diagonal."""
    t = allowed.shape[0]
    if allowed.shape[1] != t or t < 2:
        return None
    both = allowed | allowed.T
    starts = [0] + [i for i in range(1, t) if not bool(both[i, i - 1])]
    lengths = [b - a for a, b in zip(starts, [*starts[1:], t])]
    doc = torch.repeat_interleave(torch.arange(len(lengths)), torch.tensor(lengths))
    return lengths if torch.equal(both, doc[:, None] == doc[None, :]) else None


def _pattern(allowed: torch.Tensor) -> tuple[str, int]:
    """(pattern, padded pairs) of one (tq, tk) matrix's allowed pairs: causal (j <= i, or bottom-right aligned
    j <= i + tk - tq), a causal window of W keys, documents packed block-diagonal (each to itself, or causal within;
    padded: n documents x max_len^2, causal max_len(max_len+1)/2), key padding (every row the same keys, or causal
    over those keys), else 'other'; '' where every pair is allowed."""
    tq, tk = allowed.shape
    if bool(allowed.all()):
        return "", 0
    ones = torch.ones(tq, tk, dtype=torch.bool)
    causal = next((c for c in (ones.tril(), ones.tril(tk - tq)) if torch.equal(allowed, c)), None)
    if causal is not None:
        return "causal", 0
    w = int(allowed[-1].sum())
    if 0 < w < tk and torch.equal(allowed, ones.tril(tk - tq) & ~ones.tril(tk - tq - w)):
        return f"window:{w}", 0
    lengths = _segments(allowed)
    if lengths is not None and len(lengths) > 1:
        doc = torch.repeat_interleave(torch.arange(len(lengths)), torch.tensor(lengths))
        block = doc[:, None] == doc[None, :]
        m = max(lengths)
        if torch.equal(allowed, block):
            return "packed", len(lengths) * m * m
        if torch.equal(allowed, block & ones.tril()):
            return "packed-causal", len(lengths) * m * (m + 1) // 2
    keys = allowed.any(dim=0)
    if torch.equal(allowed, keys[None, :].expand(tq, tk)):
        return "padding", 0
    if torch.equal(allowed, ones.tril(tk - tq) & keys[None, :]):
        return "causal-padding", 0
    return "other", 0


def pattern_of(allowed: torch.Tensor) -> tuple[str, int]:
    """(pattern, padded pairs) of a mask's (..., tq, tk) matrices: the one pattern they share (a window of one W),
    else 'other'; padded summed over them."""
    tq, tk = allowed.shape[-2:]
    slices = allowed.reshape(-1, tq, tk)
    if slices.shape[0] > PATTERN_SLICES:
        return "other", 0
    found = [_pattern(s) for s in slices]
    kinds = {p for p, _ in found}
    if len(kinds) != 1:
        return "other", 0
    return kinds.pop(), sum(padded for _, padded in found)


def read_pairs(mask: torch.Tensor, lead: tuple[int, ...], tq: int, tk: int) -> tuple[int, int, str, int]:
    """(allowed pairs, pairs in flash tiles holding one, its pattern, padded pairs: pattern_of) of a mask with
    values, broadcast to (*lead, tq, tk)."""
    full = mask.expand(*lead, tq, tk) if mask.dim() <= len(lead) + 2 else mask
    small, factor = _compact(full)
    if small.numel() > CPU_LIMIT:
        raise ValueError(f"a mask of {small.numel():,} elements, past {CPU_LIMIT:,}")
    allowed = _allowed(small.to("cpu"))
    pattern, padded = pattern_of(allowed)
    return int(allowed.sum()) * factor, tile_pairs(allowed) * factor, pattern, padded * factor


class MaskLog:
    """The attention calls of a count, each with its mask read; while entered, transformers' masks get CPU values."""

    def __init__(self) -> None:
        self.calls: list[AttentionCall] = []
        self.values = WeakTensorKeyDictionary()  # a meta mask transformers made -> its values on the CPU
        # one mask shared by every layer: read once (the entry holds the mask, so its id is not reused)
        self._read: dict[tuple[Any, ...], tuple[torch.Tensor, tuple[int, int, str, int]]] = {}
        self._saved: dict[str, Callable[..., Any]] = {}
        # eager scores -> (its mask, True: masked_fill's, QK^T's e or 0, the softmax's shape or ())
        self._scores = WeakTensorKeyDictionary()
        self._flipped: dict[tuple[Any, ...], tuple[torch.Tensor, torch.Tensor]] = {}  # masked_fill's, inverted
        self.within_sdpa = 0  # > 0 while an SDPA call runs (its math path is matmuls and a softmax, noted as SDPA)

    def __enter__(self) -> MaskLog:
        interface = _mask_interface()
        if interface is not None:
            for name in MASK_MAKERS:
                if name in interface._global_mapping:
                    self._saved[name] = original = interface._global_mapping[name]
                    interface._global_mapping[name] = self._beside(original)
        return self

    def __exit__(self, *exc: object) -> None:
        interface = _mask_interface()
        if interface is not None:
            interface._global_mapping.update(self._saved)
        self._saved.clear()

    def _beside(self, original: Callable[..., Any]) -> Callable[..., Any]:
        """transformers' mask function, run again on the CPU when it made a meta mask: the values kept beside it."""

        def make(*args: Any, **kwargs: Any) -> Any:
            out = original(*args, **kwargs)
            if isinstance(out, torch.Tensor) and out.device.type == "meta" and out.numel() <= CPU_LIMIT:
                try:
                    real = original(*args, **{**kwargs, "device": torch.device("cpu")})
                except Exception:  # noqa: BLE001 - a mask built from meta inputs (padding): values unknown
                    return out
                if isinstance(real, torch.Tensor) and _shape(real) == _shape(out):
                    self.values[out] = real
                    if out._base is not None and real._base is not None:  # a view (an expand): its base's values too
                        self.values[out._base] = real._base
            return out

        return make

    def _values_of(self, mask: torch.Tensor) -> torch.Tensor | None:
        """A mask's values: its own on a real device; on meta, those kept for it (or for the tensor it views)."""
        if mask.device.type != "meta":
            return mask
        if mask in self.values:
            known: torch.Tensor = self.values[mask]
            return known
        shadow = _shadow(mask)
        if shadow is not None:
            return shadow
        base = mask._base
        if base is not None and base in self.values:
            real: torch.Tensor = self.values[base]
            if real.stride() == base.stride():
                return real.as_strided(mask.shape, mask.stride(), mask.storage_offset())
        return None

    def _pairs(self, values: torch.Tensor, lead: tuple[int, ...], tq: int, tk: int) -> tuple[int, int, str, int]:
        """read_pairs, once per mask and shape (the entry holds the mask, so its id is not reused)."""
        key = (id(values), _shape(values), values.stride(), lead, tq, tk)
        if key not in self._read:
            self._read[key] = (values, read_pairs(values, lead, tq, tk))
        return self._read[key][1]

    def note(self, args: tuple[Any, ...], kwargs: dict[str, Any], path: str) -> None:
        """Record one SDPA call (q, k, v, attn_mask=None, dropout_p, is_causal, ...) with its pairs read."""
        names = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal")
        given = {**dict(zip(names, args)), **kwargs}
        q, k, v = given.get("query"), given.get("key"), given.get("value")
        if not (isinstance(q, torch.Tensor) and isinstance(k, torch.Tensor) and isinstance(v, torch.Tensor)):
            return
        if min(q.dim(), k.dim(), v.dim()) < 2 or q.is_nested or k.is_nested:
            return  # nested (padded) inputs: their formula records them as not counted
        *lead, tq, e = _shape(q)
        tk, ev = int(k.shape[-2]), int(v.shape[-1])
        mask, causal = given.get("attn_mask"), bool(given.get("is_causal", False))
        self._record(path, tuple(lead), tq, tk, e, ev, mask if isinstance(mask, torch.Tensor) else None, causal)

    def _record(
        self,
        path: str,
        lead: tuple[int, ...],
        tq: int,
        tk: int,
        e: int,
        ev: int,
        mask: torch.Tensor | None,
        causal: bool = False,
        eager: bool = False,
        fills: bool = False,
    ) -> None:
        """One attention call with its pairs read: causal by hand, a mask tensor from its values (`fills`: a boolean
        mask whose True marks the pairs masked, as masked_fill takes it)."""
        heads = prod(lead)
        dense = heads * tq * tk
        kind, needed, flash, pattern, padded = MaskKind.NONE, dense, dense, "", 0
        if causal:
            kind, needed, flash = MaskKind.CAUSAL, heads * causal_pairs(tq, tk), heads * causal_flash_pairs(tq, tk)
            pattern = "causal"
        elif mask is not None:
            values = self._values_of(mask)
            if values is None:
                kind = MaskKind.UNKNOWN
            else:
                try:
                    read = self._pairs(self._inverted(values) if fills else values, lead, tq, tk)
                    kind, (needed, flash, pattern, padded) = MaskKind.TENSOR, read
                except Exception:  # noqa: BLE001 - a mask too large or of a layout not read: dense, and said
                    kind, needed, flash = MaskKind.UNREAD, dense, dense
        call = AttentionCall(path, kind, heads, tq, tk, e, ev, dense, needed, flash, 1, pattern, padded, eager)
        self.calls.append(call)

    def _inverted(self, values: torch.Tensor) -> torch.Tensor:
        """A masked_fill mask's allowed pairs (its False), made once per mask: every layer shares one."""
        key = (id(values), _shape(values), values.stride())
        if key not in self._flipped:
            self._flipped[key] = (values, ~values.to(torch.bool))  # the entry holds the mask: its id is not reused
        return self._flipped[key][1]

    def carry(
        self, name: str, args: tuple[Any, ...], outs: list[torch.Tensor], scored: list[torch.Tensor], e: int = 0
    ) -> None:
        """An op on attention scores outside SDPA (eager attention: matmul, its scale, softcap and mask, softmax):
        the mask it adds (a float tensor beside the scores) or fills in (masked_fill's boolean) kept with its output,
        with the QK^T's width e once a softmax gives it, so the matmul the probabilities feed (attn@V) reads them."""
        if self.within_sdpa:
            return
        known = next((self._scores[t] for t in scored if t in self._scores), None)
        mask, fills, width, shape = known if known is not None else (None, False, 0, ())
        if e and scored:  # a softmax: the scores' own shape (..., tq, tk), before matmul folds its heads into a batch
            width, shape = e, _shape(scored[0])
        ids = {id(t) for t in scored}
        others = [a for a in args if isinstance(a, torch.Tensor) and id(a) not in ids and a.dim() >= 2]
        if name in ("add", "add_") and others and others[0].is_floating_point():
            mask, fills = others[0], False  # an additive mask (-inf, finfo.min, -10000 where masked)
        elif name in ("masked_fill", "masked_fill_") and others and others[0].dtype == torch.bool:
            mask, fills = others[0], True  # True: the pair is masked
        for t in outs:
            self._scores[t] = (mask, fills, width, shape)

    def note_eager(self, probs: torch.Tensor, v: torch.Tensor, path: str) -> None:
        """One eager attention call, at its attn@V matmul: probabilities (..., tq, tk) times v (..., tk, ev), with
        the mask and QK^T width carried to the probabilities (none carried: not a softmax's, not recorded)."""
        if self.within_sdpa or probs not in self._scores or probs.dim() < 2 or v.dim() < 2:
            return
        known: tuple[torch.Tensor | None, bool, int, tuple[int, ...]] = self._scores[probs]
        mask, fills, e, shape = known
        if not e:
            return
        *lead, tq, tk = shape if prod(shape) == probs.numel() else _shape(probs)
        self._record(path, tuple(lead), tq, tk, e, int(v.shape[-1]), mask, eager=True, fills=fills)


def _shadow(mask: torch.Tensor) -> torch.Tensor | None:
    """The mask's values kept by an entered exact.values.Values (a forward counted with its small tensors' values)."""
    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

    from flopcheck.exact.values import Values

    for mode in _get_current_dispatch_mode_stack():
        if isinstance(mode, Values) and mask in mode.shadow:
            shadow: torch.Tensor = mode.shadow[mask]
            return shadow
    return None


def _mask_interface() -> Any:
    """transformers' AttentionMaskInterface, if transformers' masking is already imported (never imported here)."""
    module = sys.modules.get("transformers.masking_utils")
    return getattr(module, "AttentionMaskInterface", None)
