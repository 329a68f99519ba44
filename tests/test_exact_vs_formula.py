"""The exact count equals the hand formula, in total, per kind and per term, on every config."""

import pytest
from conftest import DIT_NAMES
from hypothesis import given, settings
from hypothesis import strategies as st

from flopcheck.exact import exact_count
from flopcheck.formula import formula_breakdown
from flopcheck.types import Kind
from reference_models import DiTConfig, get_config


def assert_agree(name, cfg, batch=1, device="meta", cfg_guidance=False):
    exact = exact_count(name, cfg, batch=batch, device=device, cfg=cfg_guidance)
    formula = formula_breakdown(name, cfg, batch=batch * (2 if cfg_guidance else 1))
    assert exact.by_path() == formula.by_path()
    assert exact.by_kind() == formula.by_kind()
    assert exact.total == formula.total
    return exact


@pytest.mark.parametrize("attn", ["sdpa", "math"])
@pytest.mark.parametrize("name", DIT_NAMES)
def test_twelve_configs_on_meta(name, attn):
    assert_agree(name, get_config(name, attn=attn))


# on real tensors, the S and B widths at patch 8: what a real run adds to the meta runs above (every config) is the
# CPU's own kernels, the same at every patch size and depth; the other four S and B configs were 80% of its time
@pytest.mark.parametrize("attn", ["sdpa", "math"])
@pytest.mark.parametrize("name", ["DiT-S/8", "DiT-B/8"])
def test_small_configs_on_real_cpu_tensors(name, attn):
    exact = assert_agree(name, get_config(name, attn=attn), device="cpu")
    ops = {r.op for r in exact.counted if r.kind.startswith("attn")}
    # on CPU the fused path runs the CPU flash kernel, the math path two bmm per block
    assert ops == ({"aten._scaled_dot_product_flash_attention_for_cpu"} if attn == "sdpa" else {"aten.bmm"})


def test_dit_xl2_exact_count_by_hand():
    # the integer derived by hand in test_formula_dit.test_dit_xl2_forward_by_hand
    assert exact_count("DiT-XL/2", get_config("DiT-XL/2")).total == 237_242_843_136


def test_cfg_forward_counts_twice_the_batch():
    # forward_with_cfg runs [cond; uncond]: 2 x 12,111,347,712 (DiT-S/2) = 24,222,695,424
    exact = assert_agree("DiT-S/2", get_config("DiT-S/2"), cfg_guidance=True)
    assert exact.total == 24_222_695_424


def test_high_resolution_where_attention_dominates():
    # DiT-S/2 at input 128: T = 4,096 > 6d = 2,304, so 4*T^2*d > 24*T*d^2 per block
    exact = assert_agree("DiT-S/2", get_config("DiT-S/2", input_size=128))
    kinds = exact.by_kind()
    attention = kinds[Kind.ATTN_SCORE] + kinds[Kind.ATTN_VALUE]
    assert attention > kinds[Kind.LINEAR]


@st.composite
def dit_configs(draw):
    patch = draw(st.sampled_from([1, 2, 4]))
    heads = draw(st.integers(1, 4))
    return DiTConfig(
        depth=draw(st.integers(1, 3)),
        hidden_size=heads * draw(st.sampled_from([4, 8, 16])),
        num_heads=heads,
        patch_size=patch,
        input_size=patch * draw(st.integers(1, 6)),
        in_channels=draw(st.sampled_from([3, 4])),
        mlp_ratio=draw(st.sampled_from([4.0, 2.0, 1.5])),
        learn_sigma=draw(st.booleans()),
        frequency_embedding_size=draw(st.sampled_from([256, 32, 7])),
        num_classes=10,
        attn=draw(st.sampled_from(["sdpa", "math"])),
    )


@settings(max_examples=40, deadline=None)
@given(cfg=dit_configs(), batch=st.integers(1, 3))
def test_property_random_configs(cfg, batch):
    assert_agree("random", cfg, batch=batch)
