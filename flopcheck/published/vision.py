"""The vision transformers' formulas: a DiT's own, term by term (flopcheck's hand derivation: per block
24Td^2 + 4T^2d, adaLN, embeddings, timestep MLP, final layer); the block formula L (24Td^2 + 4T^2d) alone; and the
ViT shortcut 12Td^2 per layer in MACs (the blocks' linear layers only). Forward, per sample x B."""

from __future__ import annotations

from flopcheck.published import DIT, Applies, Exact, Formula, Found, register
from flopcheck.published.structure import Structure
from flopcheck.reconciler import causes as K
from flopcheck.types import Unit

BLOCK_LINEAR = ("blocks.*.attn.qkv", "blocks.*.attn.proj", "blocks.*.mlp.fc1", "blocks.*.mlp.fc2")
BLOCK_ATTENTION = ("blocks.*.attn.qk", "blocks.*.attn.av")


def _outside(e: Exact, kept: tuple[str, ...]) -> tuple[int, str]:
    """The exact FLOPs at paths outside `kept`, and the largest of them in words."""
    rest = {p: f for p, f in (e.by_path or {}).items() if p not in kept}
    words = ", ".join(f"{p} {f:,}" for p, f in sorted(rest.items(), key=lambda x: -x[1])[:4])
    return sum(rest.values()), words


def hand(s: Structure) -> int:
    """flopcheck's term-by-term formula (flopcheck.formula.dit) for the step."""
    return s.hand


def blocks(s: Structure) -> int:
    """B * L * (24 T d^2 + 4 T^2 d)."""
    return s.B * s.L * (24 * s.T * s.d * s.d + 4 * s.T * s.T * s.d)


def blocks_causes(s: Structure, e: Exact) -> list[Found]:
    """Everything outside the blocks' attention and MLP left out."""
    out, words = _outside(e, BLOCK_LINEAR + BLOCK_ATTENTION)
    return [(K.BLOCKS_ONLY, -out, f"the exact count outside the blocks' attention and MLP: {words}")] if out else []


def shortcut(s: Structure) -> int:
    """B * L * 12 T d^2, in MACs."""
    return s.B * s.L * 12 * s.T * s.d * s.d


def shortcut_causes(s: Structure, e: Exact) -> list[Found]:
    """Only the blocks' linear layers: attention and everything outside the blocks left out."""
    out, words = _outside(e, BLOCK_LINEAR)
    return [(K.VIT_SHORTCUT, -out, f"the exact count outside the blocks' linear layers: {words}")] if out else []


FORWARD = Applies(kinds=(DIT,), training=False)
register(
    Formula(
        "dit",
        "DiT term by term",
        "flopcheck's derivation from Peebles & Xie 2023 (arXiv:2212.09748), the official architecture",
        per="per sample",
        conventions="every multiply-add: blocks 24Td^2 + 4T^2d, adaLN per sample, embeddings, timestep MLP, final "
        "layer",
        value=hand,
        causes=lambda s, e: [],
        **FORWARD,
    )
)
register(
    Formula(
        "blocks-24td2",
        "transformer blocks 24Td^2 + 4T^2d",
        "the per-layer count of Narayanan et al. 2021 (24 B s h^2 + 4 B s^2 h) applied to a DiT's blocks",
        per="per layer per sample",
        conventions="the blocks' QKV, output projection, MLP (4d) and QK^T + attn@V; nothing outside the blocks",
        value=blocks,
        causes=blocks_causes,
        **FORWARD,
    )
)
register(
    Formula(
        "vit-12td2",
        "ViT shortcut 12Td^2 (MACs)",
        "the per-layer parameter count times tokens (12 d^2 per token) quoted for ViTs and DiTs",
        per="per layer per sample",
        conventions="MACs; the blocks' linear layers only: no attention, embeddings, adaLN or head",
        value=shortcut,
        causes=shortcut_causes,
        unit=Unit.MAC,
        **FORWARD,
    )
)
