"""nanoGPT's `GPT.estimate_mfu` (karpathy/nanoGPT model.py at 3adf61e1): PaLM's 6N + 12 L H Q T per token with
N every parameter but the position embedding, Q = n_embd // n_head and T = block_size; nanoGPT trains at T =
block_size (train.py crops every batch to it), so T is the step's sequence length."""

from __future__ import annotations

from flopcheck.published import LM, Exact, Formula, Found, no_mla, register
from flopcheck.published import common as c
from flopcheck.published.structure import Structure


def value(s: Structure) -> int:
    """D * (6N + 12 * L * H * (d // H) * T), N = every parameter less the position embedding, T = block_size = the
    step's sequence length."""
    return s.n * (6 * (s.n_all - s.n_pos) + 12 * s.L * s.H * (s.d // s.H) * s.T)


def causes(s: Structure, e: Exact) -> list[Found]:
    """An untied token embedding, norms, biases and every expert in N."""
    return [
        *c.embedding_in_n(s, 3, 0 if s.tied else s.n_embed),
        *c.norms_in_n(s, 3),
        *c.biases_in_n(s, 3),
        *c.all_experts(s, 3),
    ]


register(
    Formula(
        "nanogpt",
        "nanoGPT estimate_mfu",
        "karpathy/nanoGPT model.py GPT.estimate_mfu at 3adf61e1",
        training=True,
        per="per token (x block_size per sequence)",
        conventions="N = parameters less the position embedding (an untied token embedding, norms, biases in); "
        "attention dense at T = block_size, the step's sequence length, head dim n_embd // n_head",
        kinds=(LM,),
        value=value,
        causes=causes,
        refuses=no_mla("nanogpt"),
    )
)
