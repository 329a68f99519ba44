"""flopcheck.codec, the one JSON codec of the result dataclasses: a Count to JSON and back, field for field, and the
committed report's counts written by it byte for byte."""

import json
from pathlib import Path

import pytest

from flopcheck.codec import decode, encode
from flopcheck.types import Count, Failed, Item, Mechanism, Skip, Unit, Work, outcome_of

REPORT = Path(__file__).resolve().parents[1] / "reports" / "results.json"

COUNT = Count(
    "thop_hooks",
    "thop",
    "2.0",
    Unit.MAC,
    "DiT-S/2",
    32,
    "math",
    reported=1.5,
    flops=3,
    detail=(Item("blocks.0.attn.qkv", 1.0, 2, 3, Mechanism.MODULE, "Linear", False),),
    skipped=(Skip("Attention", 12, "no rule", Mechanism.MODULE, Work.ATTENTION, True),),
    time_s=0.25,
    samples_divided=4,
)


def test_a_count_goes_to_json_and_back():
    data = json.loads(json.dumps(encode(COUNT)))
    assert decode(Count, data) == COUNT
    assert data["unit"] == "MAC" and data["detail"][0]["where"] == "module" and data["samples_divided"] == 4
    assert list(data) == [f for f in Count.__dataclass_fields__]


def test_a_field_at_its_omitted_default_stays_out_and_comes_back():
    one = Count("c", "lib", "1", Unit.FLOP, "m", 32, "sdpa", reported=2.0, flops=2)
    assert "samples_divided" not in encode(one) and decode(Count, encode(one)) == one


def test_a_key_that_is_no_field_is_refused():
    with pytest.raises(TypeError, match="no field bogus"):
        decode(Count, {**encode(COUNT), "bogus": 1})


def test_the_committed_reports_counts_are_what_the_codec_writes():
    counts = json.loads(REPORT.read_text())["counts"]
    for c in counts:
        got = outcome_of(c)
        assert isinstance(got, Failed if c["error"] else Count), c
        again = encode(got)
        assert json.dumps({k: v for k, v in again.items() if k in c}) == json.dumps(c)
    # the committed report holds both kinds: of its 374 counts, 34 with an error (deepspeed not installed)
    assert (len(counts), sum(isinstance(outcome_of(c), Failed) for c in counts)) == (374, 34)


def test_a_failed_count_writes_the_json_a_count_does_its_number_null():
    failed = Failed("thop_hooks", "thop", "2.0", Unit.MAC, "DiT-S/2", 32, "math", peak_rss_mb=80.0, error="boom")
    assert encode(failed) == {
        "counter": "thop_hooks",
        "library": "thop",
        "version": "2.0",
        "unit": "MAC",
        "model": "DiT-S/2",
        "input_size": 32,
        "attn": "math",
        "batch": 1,
        "device": "cpu",
        "reported": None,
        "flops": None,
        "detail": [],
        "skipped": [],
        "time_s": None,
        "peak_rss_mb": 80.0,
        "error": "boom",
    }
    # the keys of a Count's JSON, in its order, but the one left out at its default
    assert list(encode(failed)) == [f for f in Count.__dataclass_fields__ if f != "samples_divided"]
    assert outcome_of(json.loads(json.dumps(encode(failed)))) == failed
    assert outcome_of(encode(COUNT)) == COUNT and repr(failed) == "Failed(thop_hooks on DiT-S/2: boom)"


def test_an_attention_call_goes_to_a_row_and_back_its_mask_an_enum():
    from flopcheck.codec import decode_row, encode_row
    from flopcheck.exact.attention_work import AttentionCall, MaskKind

    # 2 heads of a 4 x 4 causal matrix: 32 pairs dense, 2 x 4 x 5 / 2 = 20 needed; one flash tile holds them all
    call = AttentionCall("blocks.*.attn", MaskKind.CAUSAL, 2, 4, 4, 8, 8, 32, 20, 32, pattern="causal")
    row = json.loads(json.dumps(encode_row(call)))
    assert row == ["blocks.*.attn", "causal", 2, 4, 4, 8, 8, 32, 20, 32, 1, "causal", 0, False]
    back = decode_row(AttentionCall, row)
    assert back == call and back.mask is MaskKind.CAUSAL


def test_a_row_written_before_a_field_was_added_takes_its_default():
    from flopcheck.codec import decode_row
    from flopcheck.exact.attention_work import AttentionCall, MaskKind

    # the ten fields rows had before calls, pattern, padded and eager
    back = decode_row(AttentionCall, ["", "none", 1, 3, 3, 4, 4, 9, 9, 9])
    assert (back.mask, back.calls, back.pattern, back.padded, back.eager) == (MaskKind.NONE, 1, "", 0, False)
    with pytest.raises(TypeError, match="AttentionCall has 14 fields, the row 15"):
        decode_row(AttentionCall, [*([0] * 15)])
