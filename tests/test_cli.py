"""The command line: `main(argv) -> exit code`, called directly."""

import json

import pytest

from flopcheck.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_count_json_dit_xl2(capsys):
    code, out, _ = run(capsys, "count", "DiT-XL/2", "--json")
    data = json.loads(out)
    assert code == 0
    # 237,242,843,136 FLOPs, derived by hand in test_formula_dit.test_dit_xl2_forward_by_hand
    assert data["total_flops"] == 237_242_843_136
    assert data["exact_count_flops"] == 237_242_843_136
    assert data["total_macs"] == 118_621_421_568
    assert (data["model"], data["tokens"], data["attn"]) == ("DiT-XL/2", 256, "sdpa")
    terms = {t["path"]: t for t in data["terms"]}
    assert terms["blocks.*.attn.av"] == {
        "path": "blocks.*.attn.av",
        "kind": "attn_value",
        "flops": 4_227_858_432,
        "macs": 2_113_929_216,
        "formula": "L*2*N*T^2*d",
    }
    assert sum(t["flops"] for t in data["terms"]) == data["total_flops"]


def test_count_text_shows_both_units_and_what_was_not_counted(capsys):
    code, out, _ = run(capsys, "count", "DiT-S/2", "--attn", "math")
    assert code == 0
    assert "12,111,347,712" in out and "MACs" in out and "attn math" in out
    assert "equal to the formula term by term" in out
    assert "norm" in out and "softmax" in out


def test_count_scopes(capsys):
    # DiT-S/2, 50 steps, CFG: 50 * 2 * 12,111,347,712 = 1,211,134,771,200
    code, out, _ = run(capsys, "count", "DiT-S/2", "--steps", "50", "--cfg", "--json")
    data = json.loads(out)
    assert data["total_flops"] == data["exact_count_flops"] == 1_211_134_771_200
    # input 64, batch 2, math: T = 1024, d = 384, L = 12
    #   per block 24*1024*384^2 + 4*1024^2*384 + 12*384^2 = 3,623,878,656 + 1,610,612,736 + 1,769,472
    #   = 5,236,260,864; x 12 = 62,835,130,368
    #   + conv 2*1024*384*16 = 12,582,912 + timestep 491,520 + final adaLN 589,824 + linear 2*1024*384*32 = 25,165,824
    #   = 62,873,960,448 per sample; x 2 samples = 125,747,920,896
    code, out, _ = run(capsys, "count", "DiT-S/2", "--input-size", "64", "--batch", "2", "--attn", "math", "--json")
    data = json.loads(out)
    assert data["total_flops"] == data["exact_count_flops"] == 125_747_920_896


def test_a_huge_count_reads_in_exaflops(capsys):
    # DiT-S/2 over 10^8 steps with CFG: 2 x 10^8 x 12,111,347,712 = 2,422,269,542,400,000,000 FLOPs: 2.42 EFLOPs, and
    # 1.21 EMACs (the claim parser reads E too)
    code, out, _ = run(capsys, "count", "DiT-S/2", "--steps", "100000000", "--cfg")
    assert code == 0 and "2,422,269,542,400,000,000" in out and "2.42 EFLOPs" in out and "1.21 EMACs" in out


def test_unknown_model_is_one_line_and_exit_2(capsys):
    code, out, err = run(capsys, "count", "DiT-XXL/2")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "DiT-XL/2" in err and "unknown model" in err


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["count", "DiT-S/8", "--input-size", "36"], "not divisible"),
        (["count", "DiT-S/2", "--training", "--steps", "50"], "training"),
        (["count", "DiT-S/2", "--batch", "0"], "--batch"),
        (["list-models", "ViT*"], "no model matches"),
    ],
)
def test_bad_input_exit_2(capsys, argv, needle):
    code, _, err = run(capsys, *argv)
    assert code == 2 and needle in err and err.count("\n") == 1


def test_list_models(capsys):
    code, out, _ = run(capsys, "list-models", "DiT-S/*")
    assert code == 0
    assert [line.split()[0] for line in out.splitlines()] == ["DiT-S/2", "DiT-S/4", "DiT-S/8"]


def test_default_job_counts_dit_xl2(capsys):
    code, out, _ = run(capsys)
    assert code == 0 and out.startswith("DiT-XL/2") and "237,242,843,136" in out


@pytest.mark.parametrize("verb", ["count", "estimate", "compare", "reconcile"])
def test_an_unknown_model_name_is_refused_before_torch_is_imported(verb):
    # held-out round 4: an unknown name took 13 s to refuse (count imported torch, 2+ s warm, before reading the name)
    import subprocess
    import sys

    code = (
        "import sys\nfrom flopcheck.cli import main\n"
        f"rc = main([{verb!r}, 'NoSuchModel'])\nprint(rc, 'torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert out.stdout.split() == ["2", "False"] and out.stderr.count("\n") == 1
    assert "unknown model 'NoSuchModel'" in out.stderr
