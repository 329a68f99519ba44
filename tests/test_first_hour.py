"""A new user's first hour (issue 48, items 7 and 9): every sentence true, one source of truth for what a verdict
says, and output a newcomer can read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from torch import nn

from flopcheck.cli import main

# DiT-S/2 at 256 px (T = 256, d = 384, 12 blocks): the exact count 12,111,347,712 FLOPs (README, tests/test_formula_dit
# derives it); its attention QK^T + attn@V = 2 x 12 x 2 x 256^2 x 384 = 1,207,959,552 FLOPs
DIT_S2 = 12_111_347_712
DIT_S2_ATTENTION = 1_207_959_552


def test_the_audits_json_says_of_attention_what_its_sentence_says(capsys):
    # (12,111,347,712 - 1,207,959,552) / 2 = 5,451,694,080 MACs = 5.45 GMACs: the digits of the reading that leaves
    # attention out; the nearest count (MACs, attention counted: 6.06 G) is the sentence's first clause. Before, the
    # JSON's attention said "counted" (the nearest count's) while the sentence and fingerprint said "attention missing"
    assert main(["audit", "DiT-S/2 5.45 GMACs", "--no-counters", "--json"]) == 0
    (d,) = json.loads(capsys.readouterr().out)
    assert "its digits are MACs, attention missing = 5.45 GMACs" in d["sentence"]
    assert "attention missing" in d["fingerprint"]
    assert (d["attention"], d["coverage"], d["unit"]) == ("missing", "attention-missing", "MAC")
    # the judged reading leaves out 1,207,959,552 / 12,111,347,712 = 9.974% of the model's work
    assert d["departure"] == pytest.approx(DIT_S2_ATTENTION / DIT_S2, rel=1e-12)


def test_published_formulas_that_do_not_apply_say_so_in_one_line():
    # Wan2.1 is a text-to-video transformer: neither an LM nor a class-conditioned DiT (before: "AttributeError:
    # 'LatentTransformerConfig' object has no attribute 'mlp_ratio'" as the audit's note)
    from flopcheck.auditor import formulas, parse_claim

    claim = parse_claim("Wan2.1-1.3B 1 TFLOPs", resolution=(256, 256), frames=5)
    assert formulas.readings(claim) == (
        [],
        ["published formulas: none applies (Wan2.1-1.3B is neither a decoder-only LM nor a class-conditioned DiT)"],
    )


class _Flex(nn.Module):
    """x (1, 16, 16) -> qkv (1, 16, 48) -> q, k, v (1, 2, 16, 8) -> flex_attention (1, 2, 16, 8)."""

    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(16, 48)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        from torch.nn.attention.flex_attention import flex_attention

        q, k, v = self.qkv(x).view(1, 16, 3, 2, 8).permute(2, 0, 3, 1, 4)  # 3 x (1, 2, 16, 8)
        return flex_attention(q, k, v)  # type: ignore[no-any-return]


def test_an_op_flopchecks_own_watcher_has_no_rule_for_is_not_blamed_on_the_library():
    # torch_dispatch counts FlopCounterMode beside flopcheck's op watcher (counters.base.watching_ops), a dispatch mode
    # with no rule for the higher-order op flex_attention; torch raises in its own _ops.py, which read as "torch cannot
    # count this model: it failed in its own code"
    from flopcheck.counters import COUNTERS
    from flopcheck.counters.torch_dispatch import run
    from flopcheck.counters.worker import _in_library

    with pytest.raises(NotImplementedError) as raised, torch.no_grad():  # as the counters' workers count
        run(_Flex(), (torch.randn(1, 16, 16),))
    said = str(_in_library(raised.value, COUNTERS["torch_dispatch"].payload()))
    assert said.startswith("flopcheck's op watcher, run beside torch to list what it skips, has no rule for ")
    assert "HigherOrderOperator flex_attention: flopcheck's limit, not one of torch" in said
    assert "failed in its own code" not in said


def test_reconcile_of_every_formula_opens_with_a_summary_that_fits_100_columns(capsys):
    # DiT-S/8 at 256 px: T = 16, d = 384, L = 12; the exact count 715,948,032 FLOPs (tests/test_report derives it).
    # blocks-24td2: 12 x (24 x 16 x 384^2 + 4 x 16^2 x 384) = 684,195,840 FLOPs, 684,195,840 / 715,948,032 = 0.956;
    # vit-12td2: 12 x 12 x 16 x 384^2 = 339,738,624 MACs = 679,477,248 FLOPs, / 715,948,032 = 0.949
    assert main(["reconcile", "DiT-S/8", "--formula", "all"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[:6] == [
        "3 of 21 formulas against their reference (the exact count); each proof below",
        "formula       unit     as FLOPs  / reference  residual  causes",
        "------------  ----  -----------  -----------  --------  ------",
        "dit           FLOP  715,948,032        1.000  closed    none",
        "blocks-24td2  FLOP  684,195,840        0.956  closed    FC208",
        "vit-12td2     MAC   679,477,248        0.949  closed    FC203",
    ]
    assert lines[6].startswith("does not apply: ")  # the 18 LM formulas, said once
    assert out.count("does not apply") == 1 and max(len(line) for line in lines) <= 100
    # a cause's evidence too long for its line wraps under it, every word kept
    assert "  FC208 blocks-only                                    -31,752,192\n      the exact count outside" in out


def test_python_results_read_as_the_cli_prints_them():
    # nn.Linear(4, 12) on x (2, 4): 2 x 4 x 12 = 96 multiply-adds = 192 FLOPs, all in one addmm (a bias add beside)
    import flopcheck
    from flopcheck.types import Tier

    net, x = nn.Linear(4, 12), torch.zeros(2, 4)
    assert repr(flopcheck.count(net, x)) == "ExactCount(Linear: 192 FLOPs = 96 MACs, one forward; per_sample 192)"
    v = flopcheck.audit("96 MACs", net, x, counters=False)
    assert repr(v.verdict) == "'consistent'" and f"{Tier.CLOSE!r}" == "'close'"  # not <Tier.CONSISTENT: ...>
    assert repr(v) == "Verdict('96 MACs': consistent: 96 MACs is MACs, every layer counted = 96 MACs (exact))"
    assert str(v).splitlines()[1] == "  verdict     consistent: 96 MACs is MACs, every layer counted = 96 MACs (exact)"
    (r,) = flopcheck.reconcile(net, x, counters=["torch_dispatch"])
    assert repr(r) == (
        "Reconciliation(torch_dispatch on Linear: 192 FLOPs = 192 FLOPs against the exact count 192 FLOPs, causes "
        "none, residual 0: closed)"
    )
    assert str(r).splitlines()[-1] == "  residual" + " " * 55 + "0  closed"  # the proof, as reconcile prints it


SMALL_REPORT = Path(__file__).resolve().parent / "data" / "report_small" / "results.json"


def test_a_report_with_no_sweeps_has_no_sweep_section():
    # the small report (DiT-S/8 at 32, a sweep at 16, 32, 64) with its sweep taken out: 4 counts at 32 remain
    from flopcheck.render.report import render

    res = json.loads(SMALL_REPORT.read_text())
    res["plan"]["sweeps"], res["sweeps"] = {}, []
    res["reconciliations"] = [r for r in res["reconciliations"] if r["input_size"] == 32]
    res["counts"] = [c for c in res["counts"] if c["input_size"] == 32]
    res["formulas"] = [f for f in res["formulas"] if f["input_size"] == 32]
    files = render(res)
    assert "T-sweep" not in files["index.html"] and "T-sweep" not in files["index.md"]
    assert "<h2>Every reconciliation, as a proof</h2>" in files["index.html"]
    assert sorted(files) == ["config-DiT-S-8.svg", "index.html", "index.md", "results.csv", "results.json", "terms.svg"]


def test_a_long_row_label_widens_the_chart_instead_of_being_clipped():
    from flopcheck.render import svg

    # 25 characters at 10 px, 0.55 em each: 138 px, + 12 = a 150 px label column (the 90 px one clipped 48 px of it);
    # the bars keep their 640 - 90 - 20 = 530 px, so the chart is 700 px wide
    chart = svg.stacked("terms", [("timm:vit_tiny_patch16_224", [("linear", 1)])], {"linear": "#000"})
    assert chart.startswith('<svg xmlns="http://www.w3.org/2000/svg" width="700" height="85"')
    assert '<text x="144.0" y="42.0" font-size="10" text-anchor="end"' in chart
    assert '<rect x="150.0" y="30" width="530.0" height="16"' in chart
    # DiT's labels fit the 90 px column: unchanged (the committed reports' bytes; tests/test_report.py)
    assert 'width="640"' in svg.stacked("terms", [("DiT-XL/2", [("linear", 1)])], {"linear": "#000"})


def test_the_estimate_and_the_audit_fit_100_columns(capsys):
    import flopcheck

    assert main(["estimate", "FLUX.1-dev", "--resolution", "1024", "--steps", "28", "--gpu", "H100"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= 100
    # the family's note on the block linears (221 characters) wrapped 4 columns in from its own line, every word kept
    i = lines.index(
        "  block linears: none: a double block is 24*T*d^2 over both streams and a single block's Linear(d,"
    )
    assert lines[i + 2] == "      nothing" and lines[i + 1].startswith("      3d+4d) and Linear(5d, d)")
    # the audit's verdict printed (str) wraps its sentence under the sentence, past the 14-column label
    text = str(flopcheck.audit("DiT-S/2 5.45 GMACs", counters=False)).splitlines()
    assert max(len(line) for line in text) <= 100 and text[2].startswith(" " * 14 + "are MACs, attention missing")
