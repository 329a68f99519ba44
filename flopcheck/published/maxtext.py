"""MaxText's `calculate_tflops_training_per_device` (src/maxtext/utils/maxtext_utils.py at e591f30c): per device per
step, 3 x (ffn + qkv + proj) per layer + 3 x the unembedding + 3 x causal attention, halved since PR #1988
(commit a4c01726, 2025-07-18); a sliding window as 4 b (T W - W^2/2) H dh."""

from __future__ import annotations

from flopcheck.published import LM, Exact, Formula, Found, register
from flopcheck.published import common as c
from flopcheck.published.structure import Structure


def attention(s: Structure) -> int:
    """Per layer, forward: 4 b T^2 H dh / 2 causal; with a window W < T, 4 b (T W - W^2 / 2) H dh."""
    W = min(s.W, s.T) if s.W else s.T
    return s.B * (4 * s.T * W - 2 * W * W) * s.q


def value(s: Structure) -> int:
    """3 * ((ffn + qkv + proj) * L + emb) + 3 * attention * L; ffn = 2bTFd m k (+ 2bTdE router), emb = 2bTdV."""
    n, d = s.n, s.d
    ffn = 2 * n * s.F * d * s.m * s.k + (2 * n * d * s.E if s.moe else 0)
    qkv = 2 * n * d * (s.H + 2 * s.G) * s.dh
    proj = 2 * n * d * s.H * s.dh
    return 3 * ((ffn + qkv + proj) * s.L + 2 * n * d * s.V) + 3 * attention(s) * s.L


def causes(s: Structure, e: Exact) -> list[Found]:
    """Causal attention halved; a window's share where the window is shorter than the sequence."""
    found = c.causal_halved(s, 3, e, "'attn_causal = 4 b T^2 H dh / 2'")
    if s.W and s.W < s.T:
        found += c.window(s, 3, 3 * s.L * attention(s), 3 * e.attention // 2, "4 b (T W - W^2/2) H dh per layer")
    return found


register(
    Formula(
        "maxtext",
        "MaxText calculate_tflops_training_per_device",
        "AI-Hypercomputer/maxtext src/maxtext/utils/maxtext_utils.py at e591f30c",
        training=True,
        per="per step (per device)",
        conventions="3 x forward; GQA and gated MLPs handled; causal attention halved, a window exact; the router "
        "and the unembedding counted; no input embedding, norms or biases",
        kinds=(LM,),
        value=value,
        causes=causes,
    )
)
