"""The reference DiTs: parameter counts, module paths, shapes, attention path, CFG, pixel space."""

import pytest
import torch

from reference_models import DiTConfig, UnknownModelError, create_model, get_config, list_models, pixel_space
from reference_models.dit import build_dit, initialize_weights, make_inputs

# Parameter count of DiT-{size}/p with L blocks, width d, patch p, T = (32/p)^2 tokens, C = 4, C_out = 8:
#   x_embedder conv  4*p^2*d + d           pos_embed (fixed, counted)  T*d
#   t_embedder       256*d + d + d^2 + d   y_embedder (1000 + null row) 1001*d
#   per block        qkv 3d^2+3d, proj d^2+d, fc1 4d^2+4d, fc2 4d^2+d, adaLN 6d^2+6d  = 18d^2 + 15d
#   final layer      adaLN 2d^2+2d, linear d*8p^2 + 8p^2
# DiT-S/2 (L=12, d=384, p=2, T=256):
#   6,528 + 98,304 + 246,528 + 384,384 + 12*(18*147,456 + 5,760) + (294,912 + 768 + 12,288 + 32)
#   = 6,528 + 98,304 + 246,528 + 384,384 + 31,919,616 + 308,000 = 32,963,360
# The /2 figures are those the paper's code prints (issue #2); the others follow from the same sum.
PARAMS = {
    "DiT-S/2": 32_963_360,
    "DiT-S/4": 32_945_024,
    "DiT-S/8": 33_148_160,
    "DiT-B/2": 130_512_416,
    "DiT-B/4": 130_475_648,
    "DiT-B/8": 130_881_536,
    "DiT-L/2": 458_102_816,
    "DiT-L/4": 458_053_760,
    "DiT-L/8": 458_594_816,
    "DiT-XL/2": 675_129_632,
    "DiT-XL/4": 675_074_432,
    "DiT-XL/8": 675_683_072,
}


@pytest.mark.parametrize("name", list(PARAMS))
def test_parameter_count(name):
    model = create_model(name)
    assert sum(p.numel() for p in model.parameters()) == PARAMS[name]


def test_param_count_s4_by_hand():
    # DiT-S/4: T = 64, p = 2 -> 4: conv 4*16*384 + 384 = 24,960; pos 64*384 = 24,576;
    # final linear 384*128 + 128 = 49,280; the rest as S/2: 246,528 + 384,384 + 31,919,616 + 295,680
    # = 24,960 + 24,576 + 246,528 + 384,384 + 31,919,616 + 295,680 + 49,280 = 32,945,024
    assert sum(p.numel() for p in create_model("DiT-S/4").parameters()) == 32_945_024


def test_registry_lists_the_twelve_paper_configs():
    assert len(list_models("DiT-*")) == 12
    assert list_models("DiT-XL/*") == ["DiT-XL/2", "DiT-XL/4", "DiT-XL/8"]
    assert list_models("nothing*") == []


def test_unknown_model_names_the_closest():
    with pytest.raises(UnknownModelError) as err:
        create_model("DiT-XXL/2")
    assert "DiT-XL/2" in str(err.value) and "list-models" in str(err.value)


def test_module_paths_match_the_paper():
    names = dict(create_model("DiT-S/8").named_modules())
    for path in (
        "x_embedder.proj",
        "t_embedder.mlp.0",
        "t_embedder.mlp.2",
        "y_embedder.embedding_table",
        "blocks.11.attn.qkv",
        "blocks.11.attn.proj",
        "blocks.11.mlp.fc1",
        "blocks.11.mlp.fc2",
        "blocks.0.adaLN_modulation.1",
        "final_layer.linear",
        "final_layer.adaLN_modulation.1",
    ):
        assert path in names, path
    assert "blocks.12.attn" not in names


def test_meta_build_allocates_nothing():
    model = create_model("DiT-XL/2")
    assert {p.device.type for p in model.parameters()} == {"meta"}


@pytest.mark.parametrize("attn,fused", [("sdpa", True), ("math", False)])
def test_attention_path_is_config(attn, fused):
    model = create_model("DiT-S/8", attn=attn)
    assert {b.attn.fused_attn for b in model.blocks} == {fused}
    assert model.config.attn == attn


def test_bad_attention_path_and_indivisible_input():
    with pytest.raises(ValueError, match="attn"):
        get_config("DiT-S/2", attn="flash")
    with pytest.raises(ValueError, match="not divisible"):
        get_config("DiT-S/8", input_size=36)


def test_input_size_sets_tokens():
    # T = (64 / 2)^2 = 1024
    assert get_config("DiT-S/2", input_size=64).tokens == 1024
    assert create_model("DiT-S/2", input_size=64).pos_embed.shape == (1, 1024, 384)


def test_pixel_space_variant():
    cfg = pixel_space(get_config("DiT-XL/2"))
    # 256 px on pixels, p = 2: T = (256 / 2)^2 = 16,384; 3 channels in, 6 out (learn_sigma)
    assert (cfg.in_channels, cfg.input_size, cfg.tokens, cfg.out_channels) == (3, 256, 16384, 6)
    assert get_config("DiT-XL/2", space="pixel") == cfg


def test_forward_shapes_on_meta():
    cfg = get_config("DiT-B/4")
    model = build_dit(cfg)
    x, t, y = make_inputs(cfg, batch=3)
    assert model(x, t, y).shape == (3, 8, 32, 32)


def test_cfg_doubles_the_batch():
    cfg = get_config("DiT-S/8")
    model = build_dit(cfg)
    x, t, y = make_inputs(cfg, batch=2, cfg=True)
    assert x.shape[0] == 4
    assert model.forward_with_cfg(x, t, y, cfg_scale=4.0).shape == (4, 8, 32, 32)


def _randomised(cfg: DiTConfig) -> torch.nn.Module:
    model = build_dit(cfg, device="cpu")
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.05)
    return model


def test_sdpa_and_math_paths_compute_the_same_function():
    # 2 of DiT-S/4's 12 blocks: the two paths differ only inside each block's attention, and 12 of them cost 6x more
    cfg = get_config("DiT-S/4", depth=2)
    fused = _randomised(cfg)
    explicit = _randomised(get_config("DiT-S/4", attn="math", depth=2))
    inputs = make_inputs(cfg, batch=2, device="cpu")
    with torch.no_grad():
        torch.testing.assert_close(fused(*inputs), explicit(*inputs), rtol=1e-4, atol=1e-5)


def test_paper_initialisation_zeroes_the_output():
    # adaLN-Zero: every block is the identity and the final linear is 0, so the prediction is exactly 0
    cfg = get_config("DiT-S/8")
    model = initialize_weights(build_dit(cfg, device="cpu"))
    with torch.no_grad():
        out = model(*make_inputs(cfg, batch=2, device="cpu"))
    assert torch.count_nonzero(out) == 0
    assert model.pos_embed.abs().max() <= 1.0 and model.pos_embed.abs().sum() > 0
