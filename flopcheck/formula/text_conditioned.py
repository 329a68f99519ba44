"""Forward FLOPs of the text-conditioned transformers, derived by hand, one named term per matmul.

FLOPs, 2 per multiply-add. Symbols: N samples, I image/video tokens, S text tokens, T = I + S,
d width, h MLP width, L blocks (joint / double-stream), Ls single-stream blocks, R refiner blocks,
C latent channels, P = p_t*p_h*p_w latent cells per token, C_out output channels, f sinusoid width,
k text-token width (4096), q pooled-text width, E timestep width (CogVideoX).

Every transformer block is the per-layer shortcut's 24*T*d^2 + 4*T^2*d only where all T tokens go through every
projection: MMDiT, FLUX/HunyuanVideo and CogVideoX (d x 3d qkv, d x d out, 2 x d x 4d MLP). Wan
sends only the I video tokens through its blocks (the text enters as cross-attention keys and
values) and its MLP is not 4d wide. Per-sample layers (adaLN, timestep and pooled-text MLPs) are
counted once per sample, not per token. Norms, RoPE, modulation and residuals are elementwise.
"""

from __future__ import annotations

from collections.abc import Callable

from flopcheck.types import Breakdown, Kind, Term
from reference_models.configs import LatentTransformerConfig

LIN, PS, CONV, HEAD = Kind.LINEAR, Kind.PER_SAMPLE, Kind.CONV, Kind.HEAD
QK, AV = Kind.ATTN_SCORE, Kind.ATTN_VALUE


def _symbols(cfg: LatentTransformerConfig, batch: int) -> dict[str, int]:
    return {
        "N": batch,
        "I": cfg.image_tokens,
        "S": cfg.text_tokens,
        "T": cfg.tokens,
        "d": cfg.hidden_size,
        "h": cfg.mlp_hidden,
        "L": cfg.depth,
        "Ls": cfg.single_depth,
        "R": cfg.refiner_depth,
        "C": cfg.in_channels,
        "P": cfg.patch_volume,
        "C_out": cfg.out_channels,
        "f": cfg.freq_dim,
        "k": cfg.text_dim,
        "q": cfg.pooled_dim,
        "E": cfg.timestep_width,
    }


def mmdit_terms(cfg: LatentTransformerConfig, batch: int = 1) -> tuple[Term, ...]:
    """SD3: image and text streams with separate weights, joint attention; the last block's text stream is pre-only."""
    s = _symbols(cfg, batch)
    N, I, S, T, d, h, L = s["N"], s["I"], s["S"], s["T"], s["d"], s["h"], s["L"]
    blk = "transformer_blocks.*."
    return (
        # conv C -> d, kernel p x p: each image token a (C*P) . (C*P x d) product
        Term("patch_embed", CONV, 2 * N * I * d * s["C"] * s["P"], "2*N*I*d*C*P"),
        # T5/CLIP tokens (N*S, k) @ (k, d)
        Term("context_embedder", LIN, 2 * N * S * s["k"] * d, "2*N*S*k*d"),
        # vec = MLP(sinusoid(t)) + MLP(pooled text): (N, f) and (N, q) in, once per sample
        Term("time_text_embed.timestep_embedder.linear_1", PS, 2 * N * s["f"] * d, "2*N*f*d"),
        Term("time_text_embed.timestep_embedder.linear_2", PS, 2 * N * d * d, "2*N*d^2"),
        Term("time_text_embed.text_embedder.linear_1", PS, 2 * N * s["q"] * d, "2*N*q*d"),
        Term("time_text_embed.text_embedder.linear_2", PS, 2 * N * d * d, "2*N*d^2"),
        # adaLN-Zero per stream: vec (N, d) @ (d, 6d); the last block's text stream needs only 2d
        Term(blk + "norm1.linear", PS, L * 2 * N * d * 6 * d, "L*2*N*d*6d"),
        Term(
            blk + "norm1_context.linear",
            PS,
            (L - 1) * 2 * N * d * 6 * d + 2 * N * d * 2 * d,
            "(L-1)*2*N*d*6d + 2*N*d*2d",
        ),
        # q, k, v per stream: (N*I, d) @ (d, d) and (N*S, d) @ (d, d)
        *(Term(blk + f"attn.to_{x}", LIN, L * 2 * N * I * d * d, "L*2*N*I*d^2") for x in "qkv"),
        *(Term(blk + f"attn.add_{x}_proj", LIN, L * 2 * N * S * d * d, "L*2*N*S*d^2") for x in "qkv"),
        # joint attention over T = I + S tokens: T^2 d MACs for QK^T and again for attn@V
        Term(blk + "attn.qk", QK, L * 2 * N * T * T * d, "L*2*N*T^2*d"),
        Term(blk + "attn.av", AV, L * 2 * N * T * T * d, "L*2*N*T^2*d"),
        Term(blk + "attn.to_out", LIN, L * 2 * N * I * d * d, "L*2*N*I*d^2"),
        Term(blk + "attn.to_add_out", LIN, (L - 1) * 2 * N * S * d * d, "(L-1)*2*N*S*d^2"),
        # MLP d -> h -> d per stream; the last block has no text MLP
        Term(blk + "ff.fc1", LIN, L * 2 * N * I * d * h, "L*2*N*I*d*h"),
        Term(blk + "ff.fc2", LIN, L * 2 * N * I * h * d, "L*2*N*I*h*d"),
        Term(blk + "ff_context.fc1", LIN, (L - 1) * 2 * N * S * d * h, "(L-1)*2*N*S*d*h"),
        Term(blk + "ff_context.fc2", LIN, (L - 1) * 2 * N * S * h * d, "(L-1)*2*N*S*h*d"),
        Term("norm_out.linear", PS, 2 * N * d * 2 * d, "2*N*d*2d"),
        Term("proj_out", HEAD, 2 * N * I * d * s["P"] * s["C_out"], "2*N*I*d*P*C_out"),
    )


def _refiner_terms(s: dict[str, int]) -> tuple[Term, ...]:
    """HunyuanVideo's token refiner over the S text tokens: R blocks of self-attention and a SiLU MLP."""
    N, S, d, h, R, k = s["N"], s["S"], s["d"], s["h"], s["R"], s["k"]
    blk = "txt_in.blocks.*."
    return (
        Term("txt_in.t_embedder.linear_1", PS, 2 * N * s["f"] * d, "2*N*f*d"),
        Term("txt_in.t_embedder.linear_2", PS, 2 * N * d * d, "2*N*d^2"),
        # the mean text token (N, k) -> d -> d: once per sample
        Term("txt_in.c_embedder.linear_1", PS, 2 * N * k * d, "2*N*k*d"),
        Term("txt_in.c_embedder.linear_2", PS, 2 * N * d * d, "2*N*d^2"),
        Term("txt_in.input_embedder", LIN, 2 * N * S * k * d, "2*N*S*k*d"),
        Term(blk + "adaLN_modulation.linear", PS, R * 2 * N * d * 2 * d, "R*2*N*d*2d"),
        Term(blk + "self_attn_qkv", LIN, R * 2 * N * S * d * 3 * d, "R*2*N*S*d*3d"),
        Term(blk + "qk", QK, R * 2 * N * S * S * d, "R*2*N*S^2*d"),
        Term(blk + "av", AV, R * 2 * N * S * S * d, "R*2*N*S^2*d"),
        Term(blk + "self_attn_proj", LIN, R * 2 * N * S * d * d, "R*2*N*S*d^2"),
        Term(blk + "mlp.fc1", LIN, R * 2 * N * S * d * h, "R*2*N*S*d*h"),
        Term(blk + "mlp.fc2", LIN, R * 2 * N * S * h * d, "R*2*N*S*h*d"),
    )


def flux_terms(cfg: LatentTransformerConfig, batch: int = 1) -> tuple[Term, ...]:
    """FLUX.1 and HunyuanVideo: L double-stream blocks, then Ls single-stream blocks over T = S + I."""
    s = _symbols(cfg, batch)
    N, I, S, T, d, h, L, Ls = s["N"], s["I"], s["S"], s["T"], s["d"], s["h"], s["L"], s["Ls"]
    dbl, sgl = "double_blocks.*.", "single_blocks.*."
    guidance = (
        (
            Term("guidance_in.linear_1", PS, 2 * N * s["f"] * d, "2*N*f*d"),
            Term("guidance_in.linear_2", PS, 2 * N * d * d, "2*N*d^2"),
        )
        if cfg.guidance_embed
        else ()
    )
    text = _refiner_terms(s) if cfg.refiner_depth else (Term("txt_in", LIN, 2 * N * S * s["k"] * d, "2*N*S*k*d"),)
    return (
        # patches of C*P latent values -> d (FLUX: Linear on packed 2x2 patches; Hunyuan: Conv3d (1, 2, 2))
        Term("img_in.proj", CONV, 2 * N * I * s["C"] * s["P"] * d, "2*N*I*C*P*d"),
        Term("time_in.linear_1", PS, 2 * N * s["f"] * d, "2*N*f*d"),
        Term("time_in.linear_2", PS, 2 * N * d * d, "2*N*d^2"),
        *guidance,
        Term("vector_in.linear_1", PS, 2 * N * s["q"] * d, "2*N*q*d"),
        Term("vector_in.linear_2", PS, 2 * N * d * d, "2*N*d^2"),
        *text,
        # double-stream: adaLN 6d per stream, per sample
        Term(dbl + "img_mod.linear", PS, L * 2 * N * d * 6 * d, "L*2*N*d*6d"),
        Term(dbl + "txt_mod.linear", PS, L * 2 * N * d * 6 * d, "L*2*N*d*6d"),
        Term(dbl + "img_attn.qkv", LIN, L * 2 * N * I * d * 3 * d, "L*2*N*I*d*3d"),
        Term(dbl + "txt_attn.qkv", LIN, L * 2 * N * S * d * 3 * d, "L*2*N*S*d*3d"),
        Term(dbl + "qk", QK, L * 2 * N * T * T * d, "L*2*N*T^2*d"),
        Term(dbl + "av", AV, L * 2 * N * T * T * d, "L*2*N*T^2*d"),
        Term(dbl + "img_attn.proj", LIN, L * 2 * N * I * d * d, "L*2*N*I*d^2"),
        Term(dbl + "img_mlp.fc1", LIN, L * 2 * N * I * d * h, "L*2*N*I*d*h"),
        Term(dbl + "img_mlp.fc2", LIN, L * 2 * N * I * h * d, "L*2*N*I*h*d"),
        Term(dbl + "txt_attn.proj", LIN, L * 2 * N * S * d * d, "L*2*N*S*d^2"),
        Term(dbl + "txt_mlp.fc1", LIN, L * 2 * N * S * d * h, "L*2*N*S*d*h"),
        Term(dbl + "txt_mlp.fc2", LIN, L * 2 * N * S * h * d, "L*2*N*S*h*d"),
        # single-stream: adaLN 3d; (N*T, d) @ (d, 3d + h) for q, k, v and the MLP in; (d + h) -> d out
        Term(sgl + "modulation.linear", PS, Ls * 2 * N * d * 3 * d, "Ls*2*N*d*3d"),
        Term(sgl + "linear1", LIN, Ls * 2 * N * T * d * (3 * d + h), "Ls*2*N*T*d*(3d+h)"),
        Term(sgl + "qk", QK, Ls * 2 * N * T * T * d, "Ls*2*N*T^2*d"),
        Term(sgl + "av", AV, Ls * 2 * N * T * T * d, "Ls*2*N*T^2*d"),
        Term(sgl + "linear2", LIN, Ls * 2 * N * T * (d + h) * d, "Ls*2*N*T*(d+h)*d"),
        Term("final_layer.adaLN_modulation.linear", PS, 2 * N * d * 2 * d, "2*N*d*2d"),
        Term("final_layer.linear", HEAD, 2 * N * I * d * s["P"] * s["C_out"], "2*N*I*d*P*C_out"),
    )


def wan_terms(cfg: LatentTransformerConfig, batch: int = 1) -> tuple[Term, ...]:
    """Wan 2.1: self-attention over I video tokens, cross-attention to S text tokens, an h-wide MLP."""
    s = _symbols(cfg, batch)
    N, I, S, d, h, L = s["N"], s["I"], s["S"], s["d"], s["h"], s["L"]
    blk = "blocks.*."
    return (
        Term("patch_embedding", CONV, 2 * N * I * d * s["C"] * s["P"], "2*N*I*d*C*P"),
        # umT5 tokens: k -> d -> d, once per call (not per block)
        Term("text_embedding.0", LIN, 2 * N * S * s["k"] * d, "2*N*S*k*d"),
        Term("text_embedding.2", LIN, 2 * N * S * d * d, "2*N*S*d^2"),
        Term("time_embedding.0", PS, 2 * N * s["f"] * d, "2*N*f*d"),
        Term("time_embedding.2", PS, 2 * N * d * d, "2*N*d^2"),
        # the 6 modulations, once per sample for all blocks (each block adds a learned offset)
        Term("time_projection.1", PS, 2 * N * d * 6 * d, "2*N*d*6d"),
        *(Term(blk + f"self_attn.{x}", LIN, L * 2 * N * I * d * d, "L*2*N*I*d^2") for x in "qkv"),
        Term(blk + "self_attn.qk", QK, L * 2 * N * I * I * d, "L*2*N*I^2*d"),
        Term(blk + "self_attn.av", AV, L * 2 * N * I * I * d, "L*2*N*I^2*d"),
        Term(blk + "self_attn.o", LIN, L * 2 * N * I * d * d, "L*2*N*I*d^2"),
        # cross-attention: queries from the I video tokens, keys and values from the S text tokens
        Term(blk + "cross_attn.q", LIN, L * 2 * N * I * d * d, "L*2*N*I*d^2"),
        Term(blk + "cross_attn.k", LIN, L * 2 * N * S * d * d, "L*2*N*S*d^2"),
        Term(blk + "cross_attn.v", LIN, L * 2 * N * S * d * d, "L*2*N*S*d^2"),
        Term(blk + "cross_attn.qk", QK, L * 2 * N * I * S * d, "L*2*N*I*S*d"),
        Term(blk + "cross_attn.av", AV, L * 2 * N * I * S * d, "L*2*N*I*S*d"),
        Term(blk + "cross_attn.o", LIN, L * 2 * N * I * d * d, "L*2*N*I*d^2"),
        Term(blk + "ffn.fc1", LIN, L * 2 * N * I * d * h, "L*2*N*I*d*h"),
        Term(blk + "ffn.fc2", LIN, L * 2 * N * I * h * d, "L*2*N*I*h*d"),
        Term("head.head", HEAD, 2 * N * I * d * s["P"] * s["C_out"], "2*N*I*d*P*C_out"),
    )


def cogvideox_terms(cfg: LatentTransformerConfig, batch: int = 1) -> tuple[Term, ...]:
    """CogVideoX: [text; video] through shared projections, expert adaLN from an E-wide timestep embedding."""
    s = _symbols(cfg, batch)
    N, I, S, T, d, h, L, E = s["N"], s["I"], s["S"], s["T"], s["d"], s["h"], s["L"], s["E"]
    blk = "transformer_blocks.*."
    return (
        # sinusoid of width d -> E -> E
        Term("time_embedding.linear_1", PS, 2 * N * d * E, "2*N*d*E"),
        Term("time_embedding.linear_2", PS, 2 * N * E * E, "2*N*E^2"),
        Term("patch_embed.proj", CONV, 2 * N * I * d * s["C"] * s["P"], "2*N*I*d*C*P"),
        Term("patch_embed.text_proj", LIN, 2 * N * S * s["k"] * d, "2*N*S*k*d"),
        # two expert adaLNs per block: (N, E) @ (E, 6d)
        Term(blk + "norm1.linear", PS, L * 2 * N * E * 6 * d, "L*2*N*E*6d"),
        *(Term(blk + f"attn1.to_{x}", LIN, L * 2 * N * T * d * d, "L*2*N*T*d^2") for x in "qkv"),
        Term(blk + "attn1.qk", QK, L * 2 * N * T * T * d, "L*2*N*T^2*d"),
        Term(blk + "attn1.av", AV, L * 2 * N * T * T * d, "L*2*N*T^2*d"),
        Term(blk + "attn1.to_out", LIN, L * 2 * N * T * d * d, "L*2*N*T*d^2"),
        Term(blk + "norm2.linear", PS, L * 2 * N * E * 6 * d, "L*2*N*E*6d"),
        Term(blk + "ff.fc1", LIN, L * 2 * N * T * d * h, "L*2*N*T*d*h"),
        Term(blk + "ff.fc2", LIN, L * 2 * N * T * h * d, "L*2*N*T*h*d"),
        Term("norm_out.linear", PS, 2 * N * E * 2 * d, "2*N*E*2d"),
        Term("proj_out", HEAD, 2 * N * I * d * s["P"] * s["C_out"], "2*N*I*d*P*C_out"),
    )


def _breakdown(
    terms: Callable[[LatentTransformerConfig, int], tuple[Term, ...]], used: str
) -> Callable[[str, LatentTransformerConfig, int], Breakdown]:
    """The family's Breakdown function: its terms and the symbols its formulas use."""

    def breakdown(name: str, cfg: LatentTransformerConfig, batch: int = 1) -> Breakdown:
        symbols = _symbols(cfg, batch)
        return Breakdown(model=name, terms=terms(cfg, batch), symbols=tuple((k, symbols[k]) for k in used.split()))

    breakdown.__doc__ = f"The hand-derived Breakdown of one forward ({terms.__name__}), symbols {used}."
    return breakdown


mmdit = _breakdown(mmdit_terms, "N I S T d h L C P C_out f k q")
flux = _breakdown(flux_terms, "N I S T d h L Ls R C P C_out f k q")
wan = _breakdown(wan_terms, "N I S T d h L C P C_out f k")
cogvideox = _breakdown(cogvideox_terms, "N I S T d h L C P C_out k E")
