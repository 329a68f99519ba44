"""The published formulas past dense Llama (issue 49): the structure read from the modules a model runs, and each
formula as its framework defines it for that architecture, pinned by hand on Gemma-2-9B, DeepSeek-V3, Qwen2.5-7B,
Qwen3-30B-A3B and GPT-OSS-20B (their public config.json, flopcheck/data/transformers/).

Shapes (config.json): Gemma-2-9B L 42, d 3584, H 16, G 8, head_dim 256 (not d/H = 224), GeGLU F 14336, V 256000,
tied, window 4096 on the even layers (21 local, 21 global). DeepSeek-V3 L 61 (3 dense at F 18432 first, 58 MoE),
d 7168, H 128, MLA q_lora 1536, kv_lora 512, nope 128, rope 64, v 128, 256 routed experts of 2048 top-8 and one
shared of 2048, V 129280. Qwen2.5-7B L 28, d 3584, H 28, G 4, dh 128, F 18944, V 152064, q/k/v biases. Qwen3-30B-A3B
L 48, d 2048, H 32, G 4, head_dim 128, 128 experts of 768 top-8, V 151936. GPT-OSS-20B L 24, d 2880, H 64, G 8,
head_dim 64, 32 experts of 2880 top-4, V 201088, window 128 on the even layers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import shared_once

from flopcheck.published import FORMULAS, Exact
from flopcheck.published.reconcile import explain
from flopcheck.published.structure import LM, Structure

GEMMA2_9B = Structure(
    kind=LM, L=42, d=3584, H=16, G=8, dh=256, F=14336, m=3, V=256000, tied=True, W=4096, windows=(4096, 0) * 21,
    T=8192, context=8192, n_all=9_241_705_984, n_embed=917_504_000, n_norm=605_696, n_norm_final=3584,
    family="gemma2", softcap=50.0,
)  # fmt: skip
DEEPSEEK_V3 = Structure(
    kind=LM, L=61, d=7168, H=128, G=128, dh=192, F=2048, m=3, V=129280, E=256, k=8, T=4096, context=163840,
    n_all=671_026_404_352, n_embed=926_679_040, n_head=926_679_040, n_norm=1_006_592, n_experts=653_908_770_816,
    n_router=106_430_464, n_shared=2_554_331_136, n_norm_final=7168, n_qk_norm=124_928, L_dense=3, F_dense=18432,
    F_shared=2048, q_lora=1536, kv_lora=512, dh_nope=128, dh_rope=64, dh_v=128, family="deepseek_v3",
)  # fmt: skip
QWEN25_7B = Structure(
    kind=LM, L=28, d=3584, H=28, G=4, dh=128, F=18944, m=3, V=152064, T=4096, context=131072,
    n_all=7_615_616_512, n_embed=544_997_376, n_head=544_997_376, n_norm=204_288, n_bias=129_024,
    n_norm_final=3584, n_attn_bias=129_024, family="qwen2",
)  # fmt: skip
QWEN3_30B = Structure(
    kind=LM, L=48, d=2048, H=32, G=4, dh=128, F=768, m=3, V=151936, E=128, k=8, T=4096, context=40960,
    n_all=30_532_122_624, n_embed=311_164_928, n_head=311_164_928, n_norm=210_944, n_experts=28_991_029_248,
    n_router=12_582_912, n_norm_final=2048, n_qk_norm=12288, family="qwen3_moe",
)  # fmt: skip
GPT_OSS_20B = Structure(
    kind=LM, L=24, d=2880, H=64, G=8, dh=64, F=2880, m=3, V=201088, E=32, k=4, W=128, windows=(128, 0) * 12,
    T=4096, context=131072, n_all=20_914_757_184, n_embed=579_133_440, n_head=579_133_440, n_norm=141_120,
    n_bias=192_000, n_experts=19_116_933_120, n_router=2_212_608, n_norm_final=2880, n_attn_bias=192_000,
    n_sinks=1536, n_bias_router=24 * 32, n_bias_experts=24 * 32 * (5760 + 2880), family="gpt_oss", sinks=True,
)  # fmt: skip

PINNED = [
    # MaxText's Gemma 2 (calculate_gemma2_tflops_training_per_device), T 8192, b 1: per layer ffn 2 T F d 2 + 2 T F d
    # = 6 * 8192 * 14336 * 3584 = 2,525,440,770,048, qkv 2 T d (H + 2G) dh = 481,036,337,152, proj 2 T d H dh =
    # 240,518,168,576; x 42 layers, + the unembedding 2 T d V = 15,032,385,536,000; x 3. Attention per pair: global
    # 2 T^2 H dh = 549,755,813,888 + local 4 (T W - W^2 / 2) H dh = 412,316,860,416; x 21 pairs x 3.
    ("maxtext", GEMMA2_9B, 514_829_139_836_928),
    # OLMo-core: per token 6 x (attention 42 * (3584 * 8192 + 4096 * 3584) = 1,849,688,064 + ffn 42 * 3 * 3584 *
    # 14336 = 6,473,908,224 + final norm 3584 + V d 917,504,000 = 9,241,103,872) + 12 H dh (21 * 8192 + 21 * 4096)
    # = 12,683,575,296; x 8192 tokens
    ("olmo", GEMMA2_9B, 558_122_586_341_376),
    # Levanter's GemmaConfig passes glu=False and head dim d/H = 224: per layer 2 * 2 * d * F = 205,520,896 + qkv
    # 2d (3584 + 2 * 8 * 224) = 51,380,224 + 2d^2 = 25,690,112 + 4 T H 224 = 117,440,512 + 3 T H = 393,216 ->
    # 400,424,960; x 42 + 2 d V 1,835,008,000 = 18,652,856,320 per token; x 3 x 8192
    ("levanter", GEMMA2_9B, 458_412_596_920_320),
    # torchtitan, head_dims 2 * head_dim = 512 (not 2 (d // H) = 448): 6 N with N every parameter (tied: the
    # embedding kept) 6 * 9,241,705,984 = 55,450,235,904 + 6 * 42 * 16 * 512 * 8192 = 16,911,433,728; x 8192
    ("torchtitan", GEMMA2_9B, 592_786_797_625_344),
    # Megatron-LM (transformer_flops) on DeepSeek-V3, T 4096: MLP widths 18432 x 3 dense + (2048 x 8 + 2048 shared)
    # x 58 = 1,124,352, x 6 d 3; MLA per layer q_term 1536 (7168 + 128 x 192 + 1) + 512 (7168 + 128 x 256 + 1) +
    # 7168 x 64 + 128 x 128 x 7168 = 187,107,328, x 6 x 61; logits 6 d V: 219,109,748,736 per token, x 4096 =
    # 897,473,530,822,656; core 3 H (192 + 128) = 122,880 x T^2 x 61 = 125,756,642,426,880
    ("megatron", DEEPSEEK_V3, 1_023_230_173_249_536),
    # MaxText's DeepSeek: ffn 3 dense 2 T 18432 d 3 + 58 x (gate 2 T d 256 + routed 2 T 2048 d 3 x 8 + shared 2 T 2048
    # d 3) = 198,938,590,183,424; MLA q 2 T (d 1536 + 1536 x 128 x 192) = 399,431,958,528, kv 2 T (d (512 + 64) + 512
    # x 128 x 256) = 171,261,820,928, proj 2 T d 128 x 128 = 962,072,674,304, x 61; emb 2 T d V; x 3; attention
    # 2 T T H (192 + 128) / 2 = 687,194,767,360 x 61 x 3
    ("maxtext", DEEPSEEK_V3, 1_025_842_738_102_272),
    # nanoGPT at T = the step's 4096 (not max_position_embeddings 131072): 6 N = 6 * 7,615,616,512 =
    # 45,693,699,072 + 12 L H (d // H) T = 12 * 28 * 28 * 128 * 4096 = 4,932,501,504; x 4096
    ("nanogpt", QWEN25_7B, 207_364_917_559_296),
    # OLMo-core counts the q/k/v biases: attention 28 * (3584 * 4608 + 3584^2) + 28 * (3584 + 1024) = 822,212,608,
    # ffn 28 * 3 * 3584 * 18944 = 5,703,204,864, final norm 3584, V d 544,997,376: 7,070,418,432 x 6 + 12 * 3584 *
    # 28 * 4096 = 4,932,501,504; x 4096
    ("olmo", QWEN25_7B, 193_966_129_545_216),
    # Megatron-LM on Qwen3-30B-A3B: per token 6 d 3 (768 x 8) 48 = 10,871,635,968 + 6 x 48 (2048 x 5120 + 4096 x
    # 2048) = 5,435,817,984 + 6 d V = 1,866,989,568 -> 18,174,443,520, x 4096; core 6 q T^2 48 = 19,791,209,299,968
    ("megatron", QWEN3_30B, 94_233_729_957_888),
    # MaxText's GPT-OSS (mixed attention, pattern 2: 12 global, 12 local at W 128): per layer ffn 2 T d E + 2 T F d 3
    # k = 816,127,672,320, qkv 2 T d (64 + 16) 64 = 120,795,955,200, proj 2 T d 4096 = 96,636,764,160, x 24, + emb
    # 2 T d V = 4,744,261,140,480, x 3; attention 12 x 2 T^2 q (137,438,953,472) + 12 x (4 T W - 2 W^2) q
    # (8,455,716,864), x 3
    ("maxtext", GPT_OSS_20B, 93_901_339_754_496),
    # NeMo's deepseekv3, T 4096: attention 6 x 0.5 (128 x 192 + 128 x 128) T^2 x 61 = 125,756,642,426,880; MLA
    # params per layer d 1536 + 1536 x 192 x 128 + d 64 + d 512 + 512 x 256 x 128 + 128 x 128 x d = 187,105,280
    # (no norms), ffn 3 x 3 d 18432 + 58 x (3 d 2048 + 3 d 2048 x 8) = 24,178,065,408; 6 T (61 x mla + ffn) +
    # 6 T V d
    ("nemo", DEEPSEEK_V3, 1_023_227_103_019_008),
    # NeMo's gpt_oss: per layer 6 x (T d dh (H + 2G) + T d dh H = 108,716,359,680); attention 12 full layers at
    # 6 H T (T + 1) dh = 412,417,523,712 and 12 windowed at 6 H (W (W + 1) + 2 (T - W) W) dh = 25,370,296,320; MLP
    # 24 x 6 x 3 T k d F, no router; loss 6 T d V
    ("nemo", GPT_OSS_20B, 93_848_227_282_944),
    # NeMo's qwen3, q taken as d: 6 L T d^2 (2 G/H + 1 + T/d + 1) = 21,028,159,881,216 + 6 L T d 3 F k =
    # 44,530,220,924,928 + 6 T d V = 7,647,189,270,528
    ("nemo", QWEN3_30B, 73_205_570_076_672),
    # verl's qwen2 estimate on Qwen2.5-7B (no biases): ((3 d F + d (2q + 2kv)) L + 2 V d) = 7,615,283,200 x 6 x 4096
    # = 187,153,199,923,200 + 6 T^2 dh H L = 10,101,763,080,192
    ("verl", QWEN25_7B, 197_254_963_003_392),
    # verl's deepseek_v3: MLA per layer 187,105,280; 58 x (d 256 + d 2048 (8 + 1) 3 + mla) + 3 x (d 18432 x 3 + mla)
    # = 35,697,917,952; 6 (that + 2 V d) T = 922,860,159,762,432 + 3 T^2 61 (192 + 128) 128 = 125,756,642,426,880
    ("verl", DEEPSEEK_V3, 1_048_616_802_189_312),
    # verl's gpt_oss: (d E + d F 3 k + d (2 H dh + 2 G dh)) 24 + 2 V d = 4,186,275,840 x 6 x 4096 + 6 dh H (12 T^2 +
    # 12 T W) = 6 x 64 x 64 x 207,618,048
    ("verl", GPT_OSS_20B, 107_984_336_191_488),
    # verl's qwen3_moe (qwen2_moe): (d k F 3 + d E + d (2 H dh + 2 G dh)) 48 + 2 V d = 3,352,821,760 x 6 x 4096 +
    # 6 T^2 dh H L = 19,791,209,299,968
    ("verl", QWEN3_30B, 102_190_156_873_728),
]


@pytest.mark.parametrize(("name", "s", "expected"), PINNED, ids=[f"{n}-{s.family}" for n, s, _ in PINNED])
def test_each_formula_as_its_framework_defines_it_for_the_architecture(name, s, expected):
    assert FORMULAS[name].value(s) == expected


def test_a_framework_without_mla_says_so_in_one_line():
    for name in ("levanter", "megatron-v0.9", "olmo", "nanogpt", "palm", "chinchilla", "kaplan-forward"):
        why = FORMULAS[name].does_not_apply(DEEPSEEK_V3)
        assert why and "\n" not in why, name
    assert "no definition for multi-head latent attention (q lora 1,536, kv lora 512)" in (
        FORMULAS["levanter"].does_not_apply(DEEPSEEK_V3)
    )
    assert not FORMULAS["megatron"].does_not_apply(DEEPSEEK_V3) and not FORMULAS["maxtext"].does_not_apply(DEEPSEEK_V3)


def test_a_model_its_source_has_no_formula_for_is_refused_in_one_line():
    assert FORMULAS["verl"].does_not_apply(GEMMA2_9B) == (
        "verl has no estimate for model_type 'gemma2': its FlopsCounter logs 0 (_estimate_unknown_flops)"
    )
    assert FORMULAS["nemo"].does_not_apply(QWEN25_7B).startswith("nemo has no formula for qwen2 in NVIDIA/NeMo")


def test_gpt3s_compute_table_is_6_x_all_parameters_x_tokens():
    # Brown et al. 2020, Table D.1: GPT-3 175B, 174,600M parameters, 300B tokens, 3.64E+03 PF-days. 6 x
    # 174,600,000,000 x 2048 tokens per sequence = 2,145,484,800,000,000 per sequence; x 300e9 / 2048 sequences /
    # 8.64e19 FLOPs per PF-day = 3,637.5 PF-days: the table's 3.64E+03 to its three digits
    s = Structure(kind=LM, L=96, d=12288, H=96, G=96, dh=128, F=49152, V=50257, T=2048, n_all=174_600_000_000)
    assert FORMULAS["gpt3-6n"].value(s) == 2_145_484_800_000_000
    assert round(FORMULAS["gpt3-6n"].value(s) * 300e9 / 2048 / 8.64e19, -1) == 3640


def test_6n_active_counts_the_experts_a_token_runs():
    # DeepSeek-V3 at 4096 tokens: 6 x 36,625,603,584 (torchtitan's N) x 4096 = 900,110,833,680,384; HF's 6N counts
    # all 256 experts: 6 x (671,026,404,352 - 926,679,040) x 4096
    assert FORMULAS["6n-active"].value(DEEPSEEK_V3) == 900_110_833_680_384
    assert FORMULAS["hf"].value(DEEPSEEK_V3) == 16_468_370_849_267_712


def test_torchtitan_on_qwen3_30b_a3b_is_torchtitans_own_figure():
    # torchtitan's num_flops_per_token for Qwen3-30B-A3B at seq_len 8192, as its own code printed it in
    # github.com/pytorch/torchtitan/pull/4300 (2026-08-24, the table under review thread on utils.py): 37,578,559,488.
    # By hand: N = 30,532,122,624 - the embedding 311,164,928 - 120/128 of the experts 27,179,089,920 =
    # 3,041,867,776; 6N = 18,251,206,656 + 6 x 48 x 32 x (2 x 128) x 8192 = 19,327,352,832
    assert FORMULAS["torchtitan"].value(QWEN3_30B.scoped(8192, 1)) == 37_578_559_488 * 8192


def test_torchtitan_active_parameters_match_deepseek_v3s_published_37b():
    # DeepSeek-V3 technical report (arXiv:2412.19437) abstract: "671B total parameters with 37B activated for each
    # token". torchtitan's N: 671,026,404,352 - the embedding 926,679,040 - 248/256 of the routed experts
    # 653,908,770,816 = 36,625,603,584 (the report's 37B counts the MTP module too): within 2%
    from flopcheck.published.torchtitan import n_matmul

    assert n_matmul(DEEPSEEK_V3) == 36_625_603_584
    assert abs(n_matmul(DEEPSEEK_V3) / 37e9 - 1) < 0.02


def test_a_window_cause_only_on_the_windowed_layers():
    # Gemma-2-9B at 8192: the exact (dense) attention of one forward 4 T^2 q per layer = 4 * 8192^2 * 4096 * 42 =
    # 46,179,488,366,592; 21 of 42 layers windowed
    exact = Exact(forward=0, attention=46_179_488_366_592, step=0)
    maxtext = {f.code: f.delta for f in explain(FORMULAS["maxtext"], GEMMA2_9B, exact, "m").findings}
    # causal halved on all: -3 x 46,179,488,366,592 / 2; the window on 21 layers: 3 x 21 x 412,316,860,416 less their
    # causal half 3 x 21 x 549,755,813,888: -8,658,654,068,736 (not on the 21 global layers)
    assert maxtext["FC215"] == -69_269_232_549_888 and maxtext["FC219"] == -8_658_654_068_736
    olmo = {f.code: f.delta for f in explain(FORMULAS["olmo"], GEMMA2_9B, exact, "m").findings}
    # OLMo-core: 12 q W T on 21 layers = 12 * 4096 * 4096 * 8192 * 21 = 34,634,616,274,944 against their dense share
    # 3 x 46,179,488,366,592 / 2 = 69,269,232,549,888
    assert olmo["FC219"] == -34_634_616_274_944
    # a window as long as the sequence is no window: at T = 4096 no FC219
    at_4096 = GEMMA2_9B.scoped(4096, 1)
    assert "FC219" not in {f.code for f in explain(FORMULAS["maxtext"], at_4096, exact, "m").findings}


def test_olmo_names_qwen25s_attention_biases():
    # 129,024 q/k/v biases x 6 FLOPs per token x 4096 tokens = 3,170,893,824
    found = {f.code: f.delta for f in explain(FORMULAS["olmo"], QWEN25_7B, Exact(0, 0, 0), "m").findings}
    assert found["FC304"] == 3_170_893_824


DATA = Path(__file__).resolve().parent.parent / "flopcheck" / "data" / "transformers"


def _built(name: str):
    """The model of a shipped config, on meta."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    cfg = json.loads((DATA / f"{name}.json").read_text())
    keys = {k: v for k, v in cfg.items() if not k.startswith("_") and k not in ("architectures", "model_type")}
    config = transformers.AutoConfig.for_model(cfg["model_type"], **keys)
    with torch.device("meta"):
        return getattr(transformers, cfg["architectures"][0])(config)


@pytest.mark.parametrize(
    ("name", "expected"),
    [("gemma-2-9b", GEMMA2_9B), ("deepseek-v3", DEEPSEEK_V3), ("qwen2.5-7b", QWEN25_7B), ("qwen3-30b-a3b", QWEN3_30B),
     ("gpt-oss-20b", GPT_OSS_20B)],
)  # fmt: skip
def test_the_structure_is_read_from_the_modules_the_model_runs(name, expected):
    from flopcheck.published.structure import of_model

    s = of_model(_built(name), expected.T, 1)
    # every field the hand structures above state (their parameter counts: Gemma-2-9B 42 x 198,195,200 per layer
    # + 917,504,000 + 3584; Qwen2.5-7B 28 x 233,057,792 + 2 x 544,997,376 + 3584), read from the built model
    stated = {k: v for k, v in expected.to_dict().items() if k not in ("T", "B")}
    assert {k: getattr(s, k) for k in stated} == stated


TINY = {
    # Gemma 2's shape, small: 4 layers, window 8 on layers 0 and 2, d 48, 4 heads of 16 (q 64 != d), 2 kv heads
    "gemma2": {
        "architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2", "hidden_size": 48, "intermediate_size": 96,
        "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "num_hidden_layers": 4,
        "vocab_size": 128, "sliding_window": 8, "max_position_embeddings": 64, "query_pre_attn_scalar": 16,
    },
    # DeepSeek-V3's shape, small: 3 layers (1 dense of 128 first), MLA q_lora 24, kv_lora 16, nope 16, rope 8, v 16,
    # 8 routed experts of 32 top-2 and one shared of 32
    "deepseek": {
        "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 64,
        "intermediate_size": 128, "moe_intermediate_size": 32, "num_hidden_layers": 3, "first_k_dense_replace": 1,
        "num_attention_heads": 4, "num_key_value_heads": 4, "n_shared_experts": 1, "n_routed_experts": 8,
        "num_experts_per_tok": 2, "n_group": 1, "topk_group": 1, "q_lora_rank": 24, "kv_lora_rank": 16,
        "qk_rope_head_dim": 8, "qk_nope_head_dim": 16, "v_head_dim": 16, "vocab_size": 128,
        "max_position_embeddings": 64,
    },
    # GPT-OSS's shape, small: 2 layers (window 8 on layer 0), 4 heads of 32, 4 experts of 64 top-2, biases, sinks
    "gptoss": {
        "architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "hidden_size": 64, "intermediate_size": 64,
        "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32, "num_hidden_layers": 2,
        "num_local_experts": 4, "num_experts_per_tok": 2, "vocab_size": 128, "sliding_window": 8,
        "layer_types": ["sliding_attention", "full_attention"], "max_position_embeddings": 64,
    },
    # Qwen3-MoE's shape, small: 2 layers, 4 heads of 32 (q 128, d 64), 2 kv heads, 4 experts of 32 top-2
    "qwen3moe": {
        "architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 64, "intermediate_size": 64,
        "moe_intermediate_size": 32, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32,
        "num_hidden_layers": 2, "num_experts": 4, "num_experts_per_tok": 2, "vocab_size": 128,
        "max_position_embeddings": 64, "decoder_sparse_step": 1, "mlp_only_layers": [],
    },
}  # fmt: skip


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """Every formula reconciled against the exact training step of each tiny model at 32 tokens."""
    import flopcheck

    def run() -> dict:
        out = {}
        for name, cfg in TINY.items():
            path = tmp_path_factory.mktemp("cfg") / f"{name}.json"
            path.write_text(json.dumps(cfg))
            cls = f"transformers:{cfg['architectures'][0]}"
            found = flopcheck.reconcile(
                cls, options={"config": str(path), "text_tokens": 32}, formulas=["all"], training=True
            )
            out[name] = {r.counter.removeprefix("formula "): r for r in found if "dit" not in r.counter}
        return out

    return shared_once("published_archs_tiny", run)


def _codes(r):
    return [f.code for f in r.findings]


@pytest.mark.integration
def test_each_framework_that_defines_the_architecture_closes_with_causes_true_of_it(tiny):
    g, ds, oss = tiny["gemma2"], tiny["deepseek"], tiny["gptoss"]
    closes = ("maxtext", "olmo", "megatron", "megatron-v0.9", "torchtitan", "palm", "hf", "kaplan-6nd", "chinchilla")
    assert all(g[n].residual == 0 for n in closes)
    # Gemma 2: MaxText's window on the 2 local layers only: 3 x 2 x (4 x 32 x 8 - 2 x 64) x 64 = 344,064 against
    # their causal half 3 x 2 x 2 x 32^2 x 64 = 786,432: -442,368 (all 4 layers would be -884,736)
    assert {f.code: f.delta for f in g["maxtext"].findings}["FC219"] == -442_368
    # OLMo-core: 12 x 64 x 8 x 32 tokens x 2 local layers = 393,216 against their dense 3 x 2 x 2 x 2 x 32^2 x 64 =
    # 1,572,864: -1,179,648
    assert {f.code: f.delta for f in g["olmo"].findings}["FC219"] == -1_179_648
    assert "FC219" not in _codes(g["megatron"]) and "FC219" not in _codes(g["torchtitan"])
    # DeepSeek-V3: MLA and the experts at their real widths close MaxText, Megatron, torchtitan and NeMo
    for n in ("maxtext", "megatron", "torchtitan", "nemo", "verl", "hf", "kaplan-6nd"):
        assert ds[n].residual == 0, n
    # Megatron's router left out on the 2 MoE layers only: 3 x 2 x 32 tokens x 64 x 8 experts x 2 = -196,608; its MLA
    # "+ 1" norms 3 x 2 x 32 x 3 layers x (24 + 16) = 23,040
    assert [(f.code, f.delta) for f in ds["megatron"].findings if f.code in ("FC218", "FC312")] == [
        ("FC218", -196_608),
        ("FC312", 23_040),
    ]
    assert all(ds[n].error and "multi-head latent attention" in ds[n].error for n in ("levanter", "olmo", "palm"))
    # GPT-OSS: biases, router biases, the active experts' biases and the sinks named; every one closes
    assert all(oss[n].residual == 0 for n in ("maxtext", "olmo", "megatron", "torchtitan", "nemo", "verl", "palm"))


D_OVER_H = ("nanogpt", "levanter", "megatron-paper", "torchtitan-2024", "nemo")


@pytest.mark.integration
def test_a_head_dim_taken_as_d_over_h_closes_with_fc411_where_the_source_takes_it(tiny):
    # the tiny models' head dim is not d/H: Gemma 2 16 (48 / 4 = 12), GPT-OSS and Qwen3-MoE 32 (64 / 4 = 16); every
    # formula that applies closes, FC411 only on the five whose source takes d/H (and NeMo's only with its Qwen3)
    for name in ("gemma2", "gptoss", "qwen3moe"):
        for formula, r in tiny[name].items():
            assert r.error or r.residual == 0, (name, formula)
            assert ("FC411" in _codes(r)) == (formula in D_OVER_H and not r.error and formula != "nemo" or (
                formula == "nemo" and name == "qwen3moe")), (name, formula)  # fmt: skip
    fc411 = {(n, f): {x.code: x.delta for x in r.findings}.get("FC411") for n in tiny for f, r in tiny[n].items()}
    # Gemma 2 tiny (L 4, T 32, d 48, H 4, G 2, dh 16, h = 12): nanoGPT and torchtitan-2024 -12 n L H (16 - 12) T =
    # -12 x 32 x 4 x 4 x 4 x 32 = -786,432
    assert fc411["gemma2", "nanogpt"] == fc411["gemma2", "torchtitan-2024"] == -786_432
    # Levanter: 3 x (2 n L d (H + 2G + H) = 2 x 32 x 4 x 48 x 12 = 147,456 + 2 x 2 L T^2 H = 65,536) x -4 = -2,555,904
    assert fc411["gemma2", "levanter"] == -2_555_904
    # Megatron's paper, K and V at H after FC408: 3 x (2 x 32 x 4 x 48 x 16 = 196,608 + 65,536) x -4 = -3,145,728
    assert fc411["gemma2", "megatron-paper"] == -3_145_728
    # GPT-OSS and Qwen3-MoE tiny (L 2, T 32, d 64, H 4, G 2, dh 32, h = 16): nanoGPT -12 x 32 x 2 x 4 x 16 x 32 =
    # -1,572,864; Levanter 3 x (2 x 32 x 2 x 64 x 12 = 98,304 + 4 x 2 x 1024 x 4 = 32,768) x -16 = -6,291,456
    for name in ("gptoss", "qwen3moe"):
        assert (fc411[name, "nanogpt"], fc411[name, "levanter"]) == (-1_572_864, -6_291_456)
    # NeMo's qwen3, attention halved: 3 x (98,304 + 2 x 2 x 1024 x 4 = 16,384) x -16 = -5,505,024
    assert fc411["qwen3moe", "nemo"] == -5_505_024
    # GPT-OSS's NeMo formula sizes by head_dim (no FC411)
    assert fc411["gptoss", "nemo"] is None


# FC411 on the public configs, T as PINNED above (Gemma-2-9B 8192, the others 4096), all five training formulas
D_OVER_H_PINNED = [
    # nanoGPT: 12 n L H (h - dh) T = 12 x 8192 x 42 x 16 x (224 - 256) x 8192 = -17,317,308,137,472
    ("nanogpt", GEMMA2_9B, -17_317_308_137_472),
    # 12 x 4096 x 48 x 32 x (64 - 128) x 4096 = -19,791,209,299,968
    ("nanogpt", QWEN3_30B, -19_791_209_299_968),
    # 12 x 4096 x 24 x 64 x (45 - 64) x 4096 = -5,875,515,260,928
    ("nanogpt", GPT_OSS_20B, -5_875_515_260_928),
    # torchtitan before PR #280, 12 l h q t with q = dim // n_heads: as nanoGPT's
    ("torchtitan-2024", GEMMA2_9B, -17_317_308_137_472),
    # Levanter, q, k, v, o and attention by h: 3 x (2 n L d (H + 2G + H) = 2 x 8192 x 42 x 3584 x 48 =
    # 118,380,036,096 + 4 B L T^2 H = 4 x 42 x 8192^2 x 16 = 180,388,626,432) x -32 = -28,681,791,602,688
    ("levanter", GEMMA2_9B, -28_681_791_602_688),
    # 3 x (2 x 4096 x 48 x 2048 x 72 = 57,982,058,496 + 4 x 48 x 4096^2 x 32 = 103,079,215,104) x -64
    ("levanter", QWEN3_30B, -30_923_764_531_200),
    # 3 x (2 x 4096 x 24 x 2880 x 144 = 81,537,269,760 + 4 x 24 x 4096^2 x 64 = 103,079,215,104) x -19
    ("levanter", GPT_OSS_20B, -10_523_139_637_248),
    # Megatron's paper, q, k, v, o all d x d (K and V at H after FC408): 3 n L 8 d (d - q) = 3 x 8192 x 42 x 8 x 3584
    # x -512 = -15,152,644,620,288 + 12 B L T^2 (d - q) = 12 x 42 x 8192^2 x -512 = -17,317,308,137,472
    ("megatron-paper", GEMMA2_9B, -32_469_952_757_760),
    # NeMo's qwen3, q and o as d x d, K and V at G d/H, attention halved: 3 x (2 x 4096 x 48 x 2048 x 72 =
    # 57,982,058,496 + 2 x 48 x 4096^2 x 32 = 51,539,607,552) x -64 = -21,028,159,881,216
    ("nemo", QWEN3_30B, -21_028_159_881_216),
]


@pytest.mark.parametrize(
    ("name", "s", "expected"), D_OVER_H_PINNED, ids=[f"{n}-{s.family}" for n, s, _ in D_OVER_H_PINNED]
)
def test_fc411_is_exact_from_the_structure_on_the_public_configs(name, s, expected):
    r = explain(FORMULAS[name], s, Exact(0, 0, 0), "m")
    found = [f for f in r.findings if f.code == "FC411"]
    assert [f.delta for f in found] == [expected]
    assert f"= {s.d // s.H} where the model's is {s.dh}" in found[0].evidence


PUBLIC = {  # the shipped config, its class, T (as the structures above), what each of the five does there
    "gemma-2-9b": ("Gemma2ForCausalLM", GEMMA2_9B, ("nanogpt", "levanter", "megatron-paper", "torchtitan-2024")),
    "qwen3-30b-a3b": ("Qwen3MoeForCausalLM", QWEN3_30B, ("nanogpt", "levanter", "nemo")),
    "gpt-oss-20b": ("GptOssForCausalLM", GPT_OSS_20B, ("nanogpt", "levanter")),
}


@pytest.mark.integration
@pytest.mark.parametrize("name", list(PUBLIC))
def test_the_five_close_on_the_public_configs_with_fc411(name):
    # on meta, the exact training step of the public config (about 20 s each): every one of the five that applies
    # closes to 0, its FC411 the hand figure of D_OVER_H_PINNED; the rest say in one line why they do not apply
    import flopcheck

    cls, s, closing = PUBLIC[name]
    found = flopcheck.reconcile(
        f"transformers:{cls}", options={"config": str(DATA / f"{name}.json"), "text_tokens": s.T},
        formulas=list(D_OVER_H), training=True,
    )  # fmt: skip
    by = {r.counter.removeprefix("formula "): r for r in found}
    hand = {n: d for n, a, d in D_OVER_H_PINNED if a is s}
    for n, r in by.items():
        if r.error:  # no expert term, no NeMo Gemma 2 formula: one line
            assert n not in closing and "\n" not in r.error, n
            continue
        assert r.residual == 0 and r.closed, n
        # FC411 on the ones whose source takes d/H here; NeMo's GPT-OSS formula sizes by head_dim: none
        assert {f.code: f.delta for f in r.findings}.get("FC411") == hand.get(n), n
    assert all(not by[n].error for n in closing)


def test_fc411_where_the_five_do_not_apply_or_size_by_head_dim():
    # the other six of five formulas x three architectures: no expert term (Megatron's paper, torchtitan before
    # PR #280) on the two MoEs; NeMo has no Gemma 2 formula and its GPT-OSS one sizes by head_dim (no FC411)
    for name, s in [("megatron-paper", QWEN3_30B), ("megatron-paper", GPT_OSS_20B), ("torchtitan-2024", QWEN3_30B),
                    ("torchtitan-2024", GPT_OSS_20B), ("nemo", GEMMA2_9B)]:  # fmt: skip
        assert FORMULAS[name].does_not_apply(s), name
    assert "FC411" not in _codes(explain(FORMULAS["nemo"], GPT_OSS_20B, Exact(0, 0, 0), "m"))
    # a model whose head dim is d/H (Qwen2.5-7B: 3584 / 28 = 128) gets none
    assert "FC411" not in _codes(explain(FORMULAS["nanogpt"], QWEN25_7B, Exact(0, 0, 0), "m"))


LLAMA = Structure(kind=LM, L=32, d=4096, H=32, G=8, dh=128, F=14336, m=3, V=128256, T=4096, family="llama")
MIXTRAL = Structure(kind=LM, L=32, d=4096, H=32, G=8, dh=128, F=14336, m=3, V=32000, E=8, k=2, T=4096, family="mixtral")
ARCHS = {
    "Llama": LLAMA, "Mixtral": MIXTRAL, "Qwen2.5": QWEN25_7B, "Gemma-2": GEMMA2_9B, "DeepSeek-V3": DEEPSEEK_V3,
    "Qwen3-MoE": QWEN3_30B, "GPT-OSS": GPT_OSS_20B,
}  # fmt: skip
# where each source has no definition (its own files, read): the formulas with no expert term (Chinchilla, Kaplan's
# forward, Megatron's paper, torchtitan before PR #280) on every MoE; no MLA in Levanter, Megatron core_v0.9, OLMo-core,
# nanoGPT, PaLM; NeMo's flops_formulas has no Qwen2 or Gemma 2 function; verl's ESTIMATE_FUNC no mixtral or gemma2
REFUSED = {
    "chinchilla": {"Mixtral", "DeepSeek-V3", "Qwen3-MoE", "GPT-OSS"},
    "kaplan-forward": {"Mixtral", "DeepSeek-V3", "Qwen3-MoE", "GPT-OSS"},
    "megatron-paper": {"Mixtral", "DeepSeek-V3", "Qwen3-MoE", "GPT-OSS"},
    "torchtitan-2024": {"Mixtral", "DeepSeek-V3", "Qwen3-MoE", "GPT-OSS"},
    "levanter": {"DeepSeek-V3"},
    "megatron-v0.9": {"DeepSeek-V3"},
    "olmo": {"DeepSeek-V3"},
    "nanogpt": {"DeepSeek-V3"},
    "palm": {"DeepSeek-V3"},
    "nemo": {"Qwen2.5", "Gemma-2"},
    "verl": {"Mixtral", "Gemma-2"},
}


def test_which_formula_applies_to_which_architecture_in_one_line():
    lm = [n for n, f in FORMULAS.items() if LM in f.kinds]
    for name in lm:
        said = {a: FORMULAS[name].does_not_apply(s) for a, s in ARCHS.items()}
        assert {a for a, why in said.items() if why} == REFUSED.get(name, set()), name
        assert all("\n" not in why for why in said.values())
