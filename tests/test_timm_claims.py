"""scripts/timm_claims.py: timm's benchmark table as a claims file flopcheck reads, figures carried as written."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
from timm_claims import claims_file, rows  # noqa: E402

from flopcheck.auditor import load_claims

# three rows of timm's results/benchmark-infer-amp-nchw-pt291-cu128-4090.csv (commit 90cae8c5), as published, and a
# row of a model no timm has
HEAD = "model,infer_img_size,infer_samples_per_sec,infer_step_time,infer_batch_size,param_count,infer_gmacs,infer_macts"
TABLE = f"""{HEAD}
resnet18,160,26589.31,38.488,1024,11.69,0.93,1.27
resnet18,224,13726.29,74.577,1024,11.69,1.82,2.48
efficientnet_b0,224,8794.71,116.41,1024,5.29,0.4,6.75
no_such_net,224,1.0,1.0,1024,1.0,9.99,1.0
"""


def test_each_row_timm_lists_is_a_claim_at_its_own_side_with_two_decimals(tmp_path):
    text = claims_file(rows(TABLE.splitlines()), lambda m: m != "no_such_net", None, 0)
    assert "# 4 rows; 1 left out (a model the installed timm does not list)." in text
    path = tmp_path / "timm.yaml"
    path.write_text(text)
    got = [(c.id, c.model, c.text, c.resolution) for c in load_claims(str(path))]
    assert got == [
        ("timm-resnet18@160", "timm:resnet18", "0.93 GMACs", (160, 160)),
        ("timm-resnet18@224", "timm:resnet18", "1.82 GMACs", (224, 224)),
        ("timm-efficientnet_b0@224", "timm:efficientnet_b0", "0.40 GMACs", (224, 224)),  # timm's round() wrote 0.4
    ]


def test_a_sample_is_that_many_rows_in_the_table_s_order():
    text = claims_file(rows(TABLE.splitlines()), lambda m: True, 2, 0)
    ids = [line.split('"')[1] for line in text.splitlines() if line.startswith("- ")]
    order = ["timm-resnet18@160", "timm-resnet18@224", "timm-efficientnet_b0@224", "timm-no_such_net@224"]
    assert len(ids) == 2 and "a random sample of 2 (seed 0)" in text
    assert ids == sorted(ids, key=order.index)


def test_the_audit_page_tallies_the_verdicts_and_gives_each_wrong_one_its_reason():
    from timm_audit_page import page, tally

    verdicts = [
        {"id": "timm-a@224", "claim": "1.82 GMACs", "verdict": "consistent", "true_flops": 3_640_000_000},
        {"id": "timm-b@224", "claim": "0.40 GMACs", "verdict": "close", "true_flops": 802_000_000},
        {
            "id": "timm-c@224",
            "claim": "4.00 GMACs",
            "verdict": "wrong",
            "true_flops": 10_000_000_000,
            "relative_error": 0.2,
            "sentence": "wrong: 4.00 GMACs is MACs | attention missing",
        },
    ]
    # one of each of three words; the two the sample lacks are there with 0
    assert tally(verdicts) == {"consistent": 1, "close": 1, "wrong": 1, "unexplained": 0, "incomplete": 0}
    text = page(verdicts, "| claim |\n|---|\n| timm-a@224 |", "here", ["flopcheck audit --file x.yaml"])
    # 1 of 3 = 33.3%; the wrong one's exact count 10,000,000,000 FLOPs, off by 0.2 = 20.00%, its sentence's '|' escaped
    assert "| wrong | 1 | 33.3% |" in text and "| all | 3 | 100.0% |" in text
    row = "| timm-c@224 | 4.00 GMACs | wrong | 10,000,000,000 | 20.00% | wrong: 4.00 GMACs is MACs \\| attention"
    assert row in text
    # the furthest from the exact count first: c (20.00%), then the two with no distance given
    furthest = text.partition("furthest from the exact count")[2].partition("## Every claim")[0]
    assert furthest.index("| timm-c@224 | 4.00 GMACs | wrong | 20.00% |") < furthest.index("| timm-a@224 |")
    assert "| timm-a@224 |" in text.partition("## Every claim")[2]  # the audit's own table, carried


def test_the_audit_page_refuses_a_verdict_word_it_does_not_know():
    from timm_audit_page import tally

    with pytest.raises(ValueError, match="maybe"):
        tally([{"verdict": "maybe"}])
