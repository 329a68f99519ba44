"""Generation on the models people train (issue 49 item 5): a mixture of experts' decode step reads the experts its
tokens reach, not all of them; MLA's cache is its compressed latent, in bytes per token."""

from __future__ import annotations

import contextlib
import io

import pytest

from flopcheck.cli import main

pytestmark = pytest.mark.integration  # builds a transformers model in a spec child


def test_deepseek_v3_decode_reads_its_routed_experts_and_its_latent_cache():
    out = io.StringIO()
    argv = ["count", "transformers:DeepseekV3ForCausalLM", "--config", "tests/models/deepseek_v3_tiny.json"]
    with contextlib.redirect_stdout(out):
        assert main([*argv, "--generate", "2", "--prompt-tokens", "6"]) == 0
    text = out.getvalue()
    # tests/models/deepseek_v3_tiny.json: d 32, 2 layers (the first dense), 4 routed experts of width 16, top 2.
    # An expert: gate_up (2 x 16) x 32 = 1,024 + down 32 x 16 = 512 -> 1,536; a decode step of 1 token reaches
    # min(4, 1 x 2) = 2 of 4: 3,072 of 6,144 read. The embedding table 100 x 32 = 3,200: one row read (32).
    # The model's parameters: embedding and lm_head 2 x 3,200, final norm 32; a layer's two norms 64 and MLA 2,848
    # (q_a 32 x 16 = 512, its norm 16, q_b 16 x 32 = 512, kv_a 32 x 24 = 768, its norm 16, kv_b 16 x 32 = 512, o 16 x 32
    # = 512); layer 0's dense MLP 3 x 32 x 64 = 6,144; layer 1's experts 6,144, shared expert 3 x 32 x 16 = 1,536 and
    # router 4 x 32 = 128 (its score bias a buffer): 6,432 + 9,056 + 10,720 = 26,208.
    # Unread 3,072 + 3,168 = 6,240: 19,968 read.
    assert "weights read: 19,968 of 26,208 parameters" in text
    # the latent per token: kv_lora_rank 16 + qk_rope_head_dim 8 = 24 a layer, x 2 layers = 48 elements, 96 bytes
    # (K and V per head would be 2 heads x (16 + 8) + 2 x 8 = 64 a layer)
    assert "cache per token: 48 elements = 96 bytes (bf16): MLA's compressed latent" in text
