"""Levanter's `lm_flops_per_token` (src/levanter/utils/flop_utils.py at 9263f81e): forward per token, head dim d/H
(a float), the output projection as d x d, "assume full attention map like megatron-lm" plus 3 T H per token for the
softmax, the MLP at (top-k + shared) experts of one width and the router; training 3 x per example. Each model's
config passes its own `glu` (src/levanter/models/*.py): llama, mistral, mixtral, qwen True; gemma and gpt2 False.
No definition for multi-head latent attention or dense-first layers."""

from __future__ import annotations

from fractions import Fraction

from flopcheck.published import LM, Exact, Formula, Found, no_mla, refusing, register
from flopcheck.published import common as c
from flopcheck.published.structure import Structure

NO_GLU = ("gemma", "gemma2", "gemma3", "gpt2")  # Levanter's GemmaConfig and Gpt2Config pass glu=False


def glu(s: Structure) -> bool:
    """The `glu` the model's Levanter config passes: gated MLP and not a Gemma or GPT-2 config."""
    return s.m == 3 and s.family not in NO_GLU


def value(s: Structure) -> int:
    """3 * D * (L * (2 (3 if glu else 2) d F (k + shared) + 2dE + 2d (H dh + 2 G dh) + 2d^2 + 4 T H dh + 3 T H)
    + 2 d V), dh = d / H."""
    d, dh = s.d, Fraction(s.d, s.H)
    shared = s.F_shared // s.F if s.F else 0
    mlp = 2 * (3 if glu(s) else 2) * d * s.F * (s.k + shared) + (2 * d * s.E if s.moe else 0)
    layer = mlp + 2 * d * (s.H * dh + 2 * s.G * dh) + 2 * d * d + 4 * s.T * s.H * dh + 3 * s.T * s.H
    return int(3 * s.n * (s.L * layer + 2 * d * s.V))


def causes(s: Structure, e: Exact) -> list[Found]:
    """Softmax at 3 per score; a gated MLP taken as two matrices where the config passes glu=False."""
    return [*c.softmax(s, 3), *(c.glu_as_two(s, 3) if s.m == 3 and not glu(s) else [])]


def no_dense_first(s: Structure) -> str:
    """Levanter's one MLP width: no dense-first layers."""
    return f"levanter has one MLP width for every layer: no term for {s.L_dense} dense-first layers" * bool(s.L_dense)


register(
    Formula(
        "levanter",
        "Levanter lm_flops_per_token",
        "stanford-crfm/levanter src/levanter/utils/flop_utils.py at 9263f81e",
        training=True,
        per="per token forward (3 x per example)",
        conventions="GQA, top-k and shared experts and the router handled; gated MLPs as each config's glu (Gemma's "
        "False); head dim d/H; attention dense plus softmax at 3 per score; the LM head counted; no embedding, norms "
        "or biases",
        kinds=(LM,),
        value=value,
        causes=causes,
        refuses=refusing(no_mla("levanter"), no_dense_first),
    )
)
