"""One truth per question (held-out round 5, item 4): count and estimate of a causal LM print the same headline
(attention dense: every query-key pair) and the same second figure (attention at the pairs its mask lets through)."""

from __future__ import annotations

import contextlib
import io

import pytest

from flopcheck.cli import main

pytestmark = pytest.mark.integration  # each builds a transformers model in a spec child

TINY = ["transformers:LlamaForCausalLM", "--config", "tests/data/llama_tiny.json", "--text-tokens", "16"]

# llama_tiny: d 256, 4 heads of 64, 2 layers, T 16. Attention dense per layer: QK^T 2 x 16 x 16 x 256 = 131,072 and
# attn@V as much: 2 layers x 262,144 = 524,288. Causal pairs per head 16 x 17 / 2 = 136: needed 136 x 4 heads x 64
# x 2 FLOPs x 2 products x 2 layers = 278,528. The headline 55,115,776 (the exact count's total, as count prints its
# terms: linear 54,591,488 + 524,288); needed = 55,115,776 - (524,288 - 278,528) = 54,870,016.
HEADLINE = "model FLOPs 55,115,776 (55.12 MFLOPs): the headline, attention dense"
NEEDED = "needed      54,870,016 (54.87 MFLOPs): attention at the pairs its mask lets through"


def _out(argv: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0
    return out.getvalue()


@pytest.mark.parametrize("verb", [["count"], ["estimate", "--gpu", "H100"]])
def test_count_and_estimate_print_the_same_two_figures(verb):
    text = _out([*verb, *TINY])
    assert HEADLINE in text and NEEDED in text
