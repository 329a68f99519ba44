"""Levanter's `lm_flops_per_token` (src/levanter/utils/flop_utils.py at 9263f81e): forward per token, the output
projection as d x d, head dim d/H, "assume full attention map like megatron-lm" plus 3 T H per token for the
softmax; training 3 x per example."""

from __future__ import annotations

from flopcheck.published import LM, Exact, Formula, Found, register
from flopcheck.published import common as c
from flopcheck.published.structure import Structure


def value(s: Structure) -> int:
    """3 * D * (L * (2 m d F k + 2dE + 2d (H dh + 2 G dh) + 2d^2 + 4 T H dh + 3 T H) + 2 d V), dh = d // H."""
    d, dh = s.d, s.d // s.H
    layer = 2 * s.m * d * s.F * s.k + (2 * d * s.E if s.moe else 0) + 2 * d * (s.H * dh + 2 * s.G * dh) + 2 * d * d
    layer += 4 * s.T * s.H * dh + 3 * s.T * s.H
    return 3 * s.n * (s.L * layer + 2 * d * s.V)


def causes(s: Structure, e: Exact) -> list[Found]:
    """Softmax at 3 per score."""
    return c.softmax(s, 3)


register(
    Formula(
        "levanter",
        "Levanter lm_flops_per_token",
        "stanford-crfm/levanter src/levanter/utils/flop_utils.py at 9263f81e",
        training=True,
        per="per token forward (3 x per example)",
        conventions="GQA, gated MLPs, top-k experts and the router handled; attention dense plus softmax at 3 per "
        "score; the LM head counted; no embedding, norms or biases",
        kinds=(LM,),
        value=value,
        causes=causes,
    )
)
