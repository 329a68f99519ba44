"""flopcheck audit --log: one log per format, written in the framework's own print format (tests/data/logs/), each
figure's reading and the true MFU derived by hand above its assertion.

tests/data/llama_tiny.json at 128 tokens (tests/test_utilization.py derives these): the exact step per sample is
1,410,859,008 FLOPs with causal attention dense: the model's FLOPs, the truth of an MFU (as PaLM, Megatron's paper,
torchtitan and flopcheck's count define it); its attention 100,663,296, half of it masked, so the work causal
attention needs is 1,410,859,008 - 50,331,648 = 1,360,527,360 (MaxText's and Megatron-core's convention: a figure
made with it reads close, named). torchtitan's 6N + 12LHQT per token: N = 1,963,264 parameters
less the 256,000 of the token embedding = 1,707,264; 6N = 10,243,584, + 12 x 2 layers x 4 heads x 64 x 128 = 786,432
-> 11,030,016 per token. DiT-XL/2 (256 px): 711,718,502,400 per sample (tests/test_utilization.py).
"""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from flopcheck.auditor.logs import audit_log
from flopcheck.cli import main
from flopcheck.errors import InputError
from flopcheck.types import Tier

LOGS = "tests/data/logs/"
LLAMA = dict(model="transformers:LlamaForCausalLM", config="tests/data/llama_tiny.json", text_tokens=128)
LLAMA_TRUE = 1_410_859_008
LLAMA_NEEDED = 1_360_527_360
DIT = 711_718_502_400


def _audit(name: str, **run):
    run = {**run}
    return audit_log(LOGS + name, run.pop("model"), **run)


@pytest.mark.integration
def test_nanogpt_gpt2_124m_on_8_a100s_reads_as_its_own_formula(capsys):
    # GPT-2 124M (HF config, V 50,257) at T 1,024: forward per sequence = 12 layers x 2T x 12d^2 (173,946,175,488)
    # + LM head 2 x T x d x V (79,047,426,048) + attention 12 x 2 x 2 x T^2 x d (38,654,705,664) = 291,648,307,200;
    # the step is 3x: 874,944,921,600; causal halves 3 x 38,654,705,664 / 2 = 57,982,058,496 -> 816,962,863,104.
    # 60 sequences per iteration per GPU / 0.4 s x 8 GPUs = 1,200 sequences/s.
    # nanoGPT: N = 124,439,808 - 786,432 (wpe) = 123,653,376; 6N + 12 x 12 x 12 x 64 x 1,024 = 741,920,256 +
    # 113,246,208 = 855,166,464 per token x 1,024 = 875,690,459,136 per sequence; x 1,200 / (8 x 312e12) = 42.1005%
    # true (attention dense, as nanoGPT's own 12LHQT counts it): 874,944,921,600 x 1,200 / (8 x 312e12) = 42.065%:
    # the logged 42.10% is nanoGPT's formula over the true peak, a documented convention 0.085% from the truth: close
    argv = ["audit", "--log", LOGS + "nanogpt_gpt2.log", "--model", "transformers:GPT2LMHeadModel", "--config"]
    argv += ["gpt2", "--text-tokens", "1024", "--gpu", "A100", "--gpus", "8", "--batch", "60", "--json"]
    assert main(argv) == 0  # close: exit 0
    v = json.loads(capsys.readouterr().out)
    assert 741_920_256 + 113_246_208 == 855_166_464 and 855_166_464 * 1024 == 875_690_459_136
    assert f"{875_690_459_136 * 1200 / (8 * 312e12):.2%}" == "42.10%"
    (f,) = v["figures"]
    assert (f["reading"]["numerator"], f["reading"]["denominator"]) == ("formula nanogpt", "job") and f["fits"]
    assert "over 8 x A100's BF16 dense peak" in f["reading"]["words"]
    assert v["mfu"] == float(Fraction(874_944_921_600 * 1200, 8 * 312 * 10**12)) and f"{v['mfu']:.3%}" == "42.065%"
    assert v["warmup_skipped"] == 5 and v["lines"] == 8 and f["verdict"] == "close"  # the five -100.00% lines


@pytest.mark.integration
def test_torchtitan_reads_as_its_formula_over_the_a100():
    # 12,800,000 tokens/s per GPU x 8 / 128 = 800,000 sequences/s; torchtitan: 11,030,016 x 12.8e6 = 141.18 TFLOP/s,
    # / 312e12 = 45.25%; true: 1,410,859,008 x 800,000 / (8 x 312e12) = 45.220%; step 1 (tps 81,920) is warm-up
    v = _audit("torchtitan_llama_tiny.log", **LLAMA, gpu="A100", gpus=8)
    mfu, flops = v.figures
    assert (mfu.reading.top.name, mfu.reading.bottom.name) == ("formula torchtitan", "job") and mfu.fits
    assert flops.reading.top.name == "formula torchtitan" and flops.reading.value == 11_030_016 * 12_800_000
    assert v.mfu == Fraction(LLAMA_TRUE * 800_000, 8 * 312 * 10**12) and v.skipped == 1
    assert v.verdict is Tier.CLOSE  # torchtitan's formula over the true peak: a convention, 0.07% from 45.22%


@pytest.mark.integration
def test_megatron_throughput_per_gpu_is_the_truth():
    # global batch 65,536 / 0.4 s = 163,840 sequences/s; Megatron (core_v0.12+) halves causal attention, so its
    # figure is the needed work: 1,360,527,360 x 163,840 / 8 GPUs = 27.864e12 FLOP/s per GPU, logged '27.9'; the
    # truth is 1,410,859,008 x 163,840 / 8 = 28.894e12; iteration 1 (5,000 ms) is warm-up
    v = _audit("megatron_llama_tiny.log", **LLAMA, gpu="A100", gpus=8)
    (f,) = v.figures
    assert f.true == Fraction(LLAMA_TRUE * 163_840, 8) and f.fits and f.reading.convention
    assert f.reading.value == Fraction(LLAMA_NEEDED * 163_840, 8) and f.verdict is Tier.CLOSE
    assert v.verdict is Tier.CLOSE and v.skipped == 1


@pytest.mark.integration
def test_maxtext_tflops_per_device_reads_as_the_needed_work():
    # 2,048 sequences per device / 0.4 s x 4 chips = 20,480 sequences/s; MaxText halves causal attention:
    # 1,360,527,360 x 5,120 per device = 6.966e12 FLOP/s, logged '6.966': the needed work, a documented convention;
    # the truth 1,410,859,008 x 5,120 = 7.2236e12; MFU 1,410,859,008 x 20,480 / (4 x 459e12) = 1.5738%
    v = _audit("maxtext_llama_tiny.log", **LLAMA, gpu="TPU-v5p", gpus=4, batch=2048)
    (f,) = v.figures
    assert f.true == LLAMA_TRUE * 5120 and f.fits and f.reading.value == LLAMA_NEEDED * 5120
    assert f.reading.convention and v.verdict is Tier.CLOSE
    assert v.mfu == Fraction(LLAMA_TRUE * 20_480, 4 * 459 * 10**12)


@pytest.mark.integration
def test_nanochat_reads_as_its_formula_over_its_h100_constant():
    # tok/sec 131,072,000 (the job's) / 128 = 1,024,000 sequences/s; nanochat: 6 x (N - embedding) + 12lhqt =
    # 11,030,016 per token x 131,072,000 / (989e12 x 8) = 18.27% (its own H100 peak, not the datasheet's 989.4);
    # true: 1,410,859,008 x 1,024,000 / (8 x 989.4e12) = 18.253%: 18.27% is 0.10% from it, close
    v = _audit("nanochat_llama_tiny.log", **LLAMA, gpu="H100", gpus=8)
    (f,) = v.figures
    assert (f.reading.top.name, f.reading.bottom.name) == ("formula torchtitan", "framework") and f.fits
    assert f.reading.bottom.value == 8 * 989 * 10**12
    assert v.mfu == Fraction(LLAMA_TRUE * 1_024_000 * 10, 8 * 9894 * 10**12) and v.verdict is Tier.CLOSE


def test_hf_trainer_samples_per_second_mean_the_true_mfu():
    # train_samples_per_second 1,024 (the job's) on 16 H100s: 711,718,502,400 x 1,024 / (16 x 989.4e12) = 4.604%
    v = _audit("hf_trainer_dit.log", model="DiT-XL/2", gpu="H100", gpus=16)
    assert v.mfu == Fraction(DIT * 1024 * 10, 16 * 9894 * 10**12) and f"{float(v.mfu):.3%}" == "4.604%"
    assert v.figures == () and v.verdict is Tier.CONSISTENT and v.skipped == 0


def test_key_value_lines_skip_the_compile_step():
    # 64 samples per iteration per GPU x 16 / 1.0 s = 1,024 samples/s: the true MFU 4.6038%, logged 0.04604;
    # 711,718,502,400 x 64 = 45.55e12 FLOP/s per GPU, logged 45.55; step 1 (12.5 s) is warm-up
    v = _audit("keyvalue_dit.log", model="DiT-XL/2", gpu="H100", gpus=16, batch=64)
    mfu, flops = v.figures
    assert mfu.reading.departures == 0 and mfu.fits and flops.true == DIT * 64
    assert v.skipped == 1 and v.verdict is Tier.CONSISTENT


def test_a_log_in_no_known_format_is_one_line(capsys):
    argv = ["audit", "--log", LOGS + "unknown.log", "--model", "DiT-XL/2", "--gpu", "H100"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "no line in a format flopcheck reads: nanoGPT (iter N" in err and "Megatron-LM" in err


def test_a_step_time_without_its_batch_asks_for_it():
    with pytest.raises(InputError, match="give --batch"):
        _audit("keyvalue_dit.log", model="DiT-XL/2", gpu="H100", gpus=16)


def test_a_zero_step_time_is_left_out_and_an_all_zero_log_refused(tmp_path, capsys):
    log = tmp_path / "zero.log"
    # the zero line is left out; the two steady lines are 64 x 16 / 1.0 s = 1,024 samples/s: the true MFU 4.6038%
    log.write_text("step=1 seconds=0.0 mfu=0.0\nstep=2 seconds=1.0 mfu=0.04604\nstep=3 seconds=1.0 mfu=0.04604\n")
    v = audit_log(str(log), "DiT-XL/2", gpu="H100", gpus=16, batch=64)
    assert v.dropped == 1 and v.mfu == Fraction(DIT * 1024 * 10, 16 * 9894 * 10**12)
    log.write_text("step=1 seconds=0.0\n")
    assert main(["audit", "--log", str(log), "--model", "DiT-XL/2", "--gpu", "H100", "--batch", "64"]) == 2
    assert "nothing to divide by" in capsys.readouterr().err


def test_cli_json(capsys):
    argv = ["audit", "--log", LOGS + "keyvalue_dit.log", "--model", "DiT-XL/2", "--gpu", "H100", "--gpus", "16"]
    assert main([*argv, "--batch", "64", "--json"]) == 0
    out = capsys.readouterr().out
    assert '"format": "keyvalue"' in out and '"warmup_skipped": 1' in out
