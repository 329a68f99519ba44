"""Seed 001's models: published parameter counts, token counts, hand-derived totals, formula == exact count."""

from __future__ import annotations

import json

import pytest

from flopcheck.cli import main
from flopcheck.subject import resolve
from flopcheck.types import Kind, Scope
from flopcheck.verbs.count import run as count
from reference_models import create_model, get_config

# Published transformer parameter counts (safetensors totals of the released checkpoints):
#   SD3-medium 2,028,328,000 (stabilityai/stable-diffusion-3-medium-diffusers, transformer/)
#   FLUX.1-dev 11,901,408,320 (black-forest-labs/FLUX.1-dev, flux1-dev.safetensors)
#   Wan2.1-T2V-14B 14,288,491,584 (same architecture as each Wan2.2-A14B expert)
#   Wan2.1-T2V-1.3B 1,418,996,800
#   CogVideoX-5B 5,570,283,072 (finetrainers' full-finetune "trainable parameters")
PUBLISHED_PARAMS = {
    "SD3-medium": 2_028_328_000,
    "FLUX.1-dev": 11_901_408_320,
    "Wan2.1-14B": 14_288_491_584,
    "Wan2.1-1.3B": 1_418_996_800,
    "CogVideoX-5B": 5_570_283_072,
}


@pytest.mark.parametrize("name", sorted(PUBLISHED_PARAMS))
def test_parameter_count_equals_the_published_checkpoint(name):
    model = create_model(name)
    assert sum(p.numel() for p in model.parameters()) == PUBLISHED_PARAMS[name]
    assert all(p.is_meta for p in model.parameters())  # nothing allocated


def test_hunyuanvideo_parameters_by_hand_and_the_papers_13b():
    # d = 3072, h = 12288. Double block = FLUX's: 2 x (adaLN 3072*18432+18432 + qkv 3072*9216+9216 + 256 qk-norm
    #   + proj 3072^2+3072 + MLP 2*3072*12288+12288+3072) = 339,831,296; x 20 = 6,796,625,920.
    # Single block: linear1 3072*21504+21504 + linear2 15360*3072+3072 + 256 + adaLN 3072*9216+9216
    #   = 141,591,808; x 40 = 5,663,672,320.
    # Token refiner: t 10,229,760 + c (4096->3072->3072) 22,026,240 + input 12,585,984
    #   + 2 blocks x (2 LN 12,288 + qkv/proj 37,761,024 + MLP 75,512,832 + adaLN 18,880,512) = 309,175,296.
    # img_in 199,680 + time/guidance 2 x 10,229,760 + vector (768) 11,802,624 + final 18,880,512 + 196,672.
    # Sum: 12,821,012,544. The HunyuanVideo paper says "13B": within 2%.
    n = sum(p.numel() for p in create_model("HunyuanVideo").parameters())
    assert n == 12_821_012_544
    assert abs(n - 13e9) / 13e9 < 0.02


# Seed 001's token counts: image tokens + text tokens.
SEED_TOKENS = {
    "SD3-medium": (4096, 333),  # (1024/8/2)^2; 77 CLIP + 256 T5
    "FLUX.1-dev": (4096, 512),
    "CogVideoX-5B": (17550, 226),  # 13 latent frames x 30 x 45
    "Wan2.1-14B": (75600, 512),  # 21 x 45 x 80
    "Wan2.1-1.3B": (32760, 512),  # 21 x 30 x 52 (seed exercise: 480p, 81 frames)
    "HunyuanVideo": (118800, 256),  # 33 x 45 x 80
}


@pytest.mark.parametrize("name", sorted(SEED_TOKENS))
def test_token_counts_match_the_seed(name):
    cfg = get_config(name)
    assert (cfg.image_tokens, cfg.text_tokens) == SEED_TOKENS[name]


# Hand arithmetic, one forward, batch 1, FLOPs.
# FLUX.1-dev 1024^2: every one of the 19 + 38 blocks is 24*T*d^2 + 4*T^2*d with T = 4608, d = 3072:
#   24*4608*3072^2 = 1,043,677,052,928 and 4*4608^2*3072 = 260,919,263,232, x 57 = 74,361,990,021,120.
#   Outside the blocks: img_in and final linear 2 x 2*4096*64*3072 = 3,221,225,472; txt_in 2*512*4096*3072
#   = 12,884,901,888; time and guidance MLPs 2 x 2*(256*3072 + 3072^2) = 40,894,464; vector_in
#   2*(768*3072 + 3072^2) = 23,592,960; adaLN 19*2*2*3072*18432 + 38*2*3072*9216 + 2*3072*6144
#   = 6,492,782,592. Together 22,663,397,376. Total 74,384,653,418,496.
# SD3-medium 1024^2, T = 4429, d = 1536, h = 6144: 24 x (24*T*d^2 + 4*T^2*d) = 8,911,312,404,480, less the
#   last block's missing text output projection and MLP 2*333*d^2 + 4*333*d*h = 14,141,620,224, plus patch
#   embed, context embedder, embed MLPs, adaLN (24 + 23 six-way, 1 two-way, out two-way) and proj_out
#   = 7,166,754,816. Total 8,904,337,539,072.
# Wan2.1-14B 1280x720x81, I = 75600, S = 512, d = 5120, h = 13824, per block: self q/k/v/o 8*I*d^2, cross
#   q/o 4*I*d^2, cross k/v 4*S*d^2, FFN 4*I*d*h, self-attention 4*I^2*d, cross 4*I*S*d = 163,082,220,339,200;
#   x 40 = 6,523,288,813,568,000; plus patch embed and head 2 x 2*I*d*64, text 2*512*(4096*d + d^2),
#   time 2*(256*d + d^2) + 2*d*6d = 147,778,437,120. Total 6,523,436,592,005,120.
# CogVideoX-5B 720x480x49, T = 17776, d = 3072: 42 x (24*T*d^2 + 4*T^2*d) = 332,176,627,335,168; plus
#   patch embed and proj_out 2 x 2*17550*d*64, text_proj 2*226*4096*d, time 2*(d*512 + 512^2), expert adaLN
#   42*2*2*512*6d, norm_out 2*512*2d = 21,084,766,208. Total 332,197,712,101,376.
# HunyuanVideo 1280x720x129, T = 119056, d = 3072: 60 x (24*T*d^2 + 4*T^2*d) = 12,068,367,724,707,840;
#   token refiner (embedders, 2 blocks over 256 tokens) 124,157,165,568; patch embed, head, time/guidance/
#   vector MLPs, adaLN 20*2*2*d*6d + 40*2*d*3d + 2*d*2d = 100,325,130,240. Total 12,068,592,207,003,648.
HAND_TOTALS = {
    "FLUX.1-dev": 74_384_653_418_496,
    "SD3-medium": 8_904_337_539_072,
    "Wan2.1-14B": 6_523_436_592_005_120,
    "CogVideoX-5B": 332_197_712_101_376,
    "HunyuanVideo": 12_068_592_207_003_648,
}


@pytest.mark.parametrize("name", sorted(HAND_TOTALS))
def test_formula_and_exact_count_equal_the_hand_total(name):
    r = count(resolve(name))
    assert r.formula.total == HAND_TOTALS[name]
    assert r.exact_total == HAND_TOTALS[name]
    assert r.agrees  # term by term as well


def test_wan_13b_at_the_seed_exercise_size():
    # 832x480x81: I = 32760, S = 512, d = 1536, h = 8960, L = 30. Attention: 30 x 4*I^2*d = 197,815,468,032,000
    # self + 30 x 4*I*S*d = 3,091,621,478,400 cross. The seed's 200 TFLOP for attention is right to 2 digits.
    r = count(resolve("Wan2.1-1.3B"))
    by_kind = r.formula.by_kind()
    assert by_kind[Kind.ATTN_SCORE] + by_kind[Kind.ATTN_VALUE] == 197_815_468_032_000 + 3_091_621_478_400
    assert r.agrees


@pytest.mark.parametrize(
    "name, overrides",
    [
        ("SD3-medium", dict(resolution=(512, 768))),
        ("FLUX.1-dev", dict(resolution=(2048, 2048))),
        ("Wan2.1-1.3B", dict(resolution=(1280, 720), frames=17)),
        ("CogVideoX-5B", dict(frames=9)),
        ("HunyuanVideo", dict(resolution=(320, 192), frames=5)),
    ],
)
def test_exact_count_equals_formula_at_other_inputs_batch_and_cfg(name, overrides):
    r = count(resolve(name, batch=2, **overrides), Scope(steps=3, cfg=True))
    assert r.agrees
    assert r.exact_total == 3 * count(resolve(name, batch=4, **overrides)).exact_total  # CFG is batch x2


def test_flux_2048_attention_share_near_the_seeds_48_percent():
    # T = 16384 + 512 = 16896 < 6d = 18432: attention / (blocks) = T / (6d + T) = 16896 / 35328 = 47.8%
    r = count(resolve("FLUX.1-dev", resolution=(2048, 2048)))
    kinds = r.formula.by_kind()
    share = (kinds[Kind.ATTN_SCORE] + kinds[Kind.ATTN_VALUE]) / r.formula.total
    assert 0.477 < share < 0.479


@pytest.mark.parametrize(
    "name, overrides, message",
    [
        ("FLUX.1-dev", dict(resolution=(1000, 1000)), "not a positive multiple of 16"),
        ("Wan2.1-14B", dict(frames=80), r"must be 4k\+1"),
        ("FLUX.1-dev", dict(frames=5), "apply to video models"),
        ("Wan2.1-14B", dict(input_size=64), r"set the resolution \(WxH\)"),
        ("Wan2.1-14B", dict(space="pixel"), "pixel space applies to DiT"),
        ("DiT-XL/2", dict(resolution=(512, 256)), "is square"),
    ],
)
def test_bad_inputs_name_the_fix(name, overrides, message):
    with pytest.raises(ValueError, match=message):
        get_config(name, **overrides)


def test_dit_takes_resolution_too():
    assert get_config("DiT-XL/2", resolution=(512, 512)).input_size == 64


def test_count_cli_wan_14b_json(capsys):
    assert main(["count", "Wan2.1-14B", "--resolution", "1280x720", "--frames", "81", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["total_flops"] == out["exact_count_flops"] == 6_523_436_592_005_120


def test_count_cli_refuses_a_real_device_for_big_models(capsys):
    assert main(["count", "FLUX.1-dev", "--device", "cpu"]) == 2
    assert "meta device only" in capsys.readouterr().err


def test_count_cli_bad_frames_is_one_line_exit_2(capsys):
    assert main(["count", "Wan2.1-14B", "--frames", "80"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "try 77" in err


@pytest.mark.parametrize("command", ["compare", "reconcile"])
def test_counters_refuse_meta_only_models_in_one_line(capsys, command):
    # 14,288,491,584 parameters x 4 bytes = 57 GB: no counter that executes the model can run it here
    assert main([command, "Wan2.1-14B"]) == 2
    err = capsys.readouterr().err.strip()
    assert "exists on meta only (57 GB of fp32 weights)" in err and "flopcheck count Wan2.1-14B" in err
    assert "Traceback" not in err
    assert "\n" not in err
