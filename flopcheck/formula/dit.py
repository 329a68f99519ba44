"""DiT's forward FLOPs, derived by hand, one named term per matmul.

We count FLOPs, not MACs: 2*m*k*n for (m x k) @ (k x n). With N samples, T = (input/p)^2 tokens,
width d, L blocks, C input channels, C_out output channels, f = 256 sinusoid channels:
  per block, per sample: qkv 6Td^2, QK^T 2T^2d, attn@V 2T^2d, proj 2Td^2, MLP 16Td^2
                         (= 24Td^2 + 4T^2d), adaLN 12d^2 (per sample, not per token)
  once: patch embed 2TdCp^2, timestep MLP 2fd + 2d^2, final adaLN 4d^2, final linear 2Td*p^2*C_out.
Norms, softmax, GELU/SiLU, modulate and residual adds are not counted (elementwise, O(Td)).
"""

from __future__ import annotations

from flopcheck.types import Breakdown, Kind, Term
from reference_models.configs import DiTConfig


def dit_terms(cfg: DiTConfig, batch: int = 1) -> tuple[Term, ...]:
    """Every multiply-add of one DiT forward on `batch` samples, as named exact terms."""
    N, T, d, L = batch, cfg.tokens, cfg.hidden_size, cfg.depth
    C, p, C_out, f, h = cfg.in_channels, cfg.patch_size, cfg.out_channels, cfg.frequency_embedding_size, cfg.mlp_hidden
    return (
        # conv C -> d, kernel p x p, stride p: each of T outputs is a (C*p*p) . (C*p*p x d) product
        Term("x_embedder.proj", Kind.CONV, 2 * N * T * d * C * p * p, "2*N*T*d*C*p^2"),
        # sinusoid (N, f) @ (f, d), then (N, d) @ (d, d): once per sample
        Term("t_embedder.mlp.0", Kind.PER_SAMPLE, 2 * N * f * d, "2*N*f*d"),
        Term("t_embedder.mlp.2", Kind.PER_SAMPLE, 2 * N * d * d, "2*N*d^2"),
        # adaLN: c (N, d) @ (d, 6d) -> shift/scale/gate for attn and mlp; per sample, not per token
        Term("blocks.*.adaLN_modulation.1", Kind.PER_SAMPLE, L * 2 * N * d * 6 * d, "L*2*N*d*6d"),
        # x (N*T, d) @ W_qkv (d, 3d)
        Term("blocks.*.attn.qkv", Kind.LINEAR, L * 2 * N * T * d * 3 * d, "L*2*N*T*d*3d"),
        # q (N, h, T, d/h) @ k^T (N, h, d/h, T) -> scores (N, h, T, T): h * T*T*(d/h) = T^2 d MACs
        Term("blocks.*.attn.qk", Kind.ATTN_SCORE, L * 2 * N * T * T * d, "L*2*N*T^2*d"),
        # softmax(scores) (N, h, T, T) @ v (N, h, T, d/h) -> (N, h, T, d/h): T^2 d MACs
        Term("blocks.*.attn.av", Kind.ATTN_VALUE, L * 2 * N * T * T * d, "L*2*N*T^2*d"),
        # (N*T, d) @ W_o (d, d)
        Term("blocks.*.attn.proj", Kind.LINEAR, L * 2 * N * T * d * d, "L*2*N*T*d^2"),
        # (N*T, d) @ (d, h), then (N*T, h) @ (h, d); h = int(d * mlp_ratio) = 4d in DiT
        Term("blocks.*.mlp.fc1", Kind.LINEAR, L * 2 * N * T * d * h, "L*2*N*T*d*h"),
        Term("blocks.*.mlp.fc2", Kind.LINEAR, L * 2 * N * T * h * d, "L*2*N*T*h*d"),
        # final adaLN: c (N, d) @ (d, 2d) -> shift, scale
        Term("final_layer.adaLN_modulation.1", Kind.PER_SAMPLE, 2 * N * d * 2 * d, "2*N*d*2d"),
        # (N*T, d) @ (d, p*p*C_out): back to patches
        Term("final_layer.linear", Kind.HEAD, 2 * N * T * d * p * p * C_out, "2*N*T*d*p^2*C_out"),
    )


def dit_breakdown(name: str, cfg: DiTConfig, batch: int = 1) -> Breakdown:
    """The hand-derived Breakdown of one DiT forward."""
    symbols = (
        ("N", batch),
        ("T", cfg.tokens),
        ("d", cfg.hidden_size),
        ("L", cfg.depth),
        ("C", cfg.in_channels),
        ("p", cfg.patch_size),
        ("C_out", cfg.out_channels),
        ("f", cfg.frequency_embedding_size),
        ("h", cfg.mlp_hidden),
    )
    return Breakdown(model=name, terms=dit_terms(cfg, batch), symbols=symbols)
