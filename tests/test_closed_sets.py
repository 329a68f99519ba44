"""Closed sets carried as enums (issue 50): a claim's part and space, a rate's kind, a spec's source and an attention
call's mask are read once at the edge into their enum, compared as members inside, and written as the same text."""

import json

import pytest

from flopcheck.auditor import formulas, parse_claim
from flopcheck.auditor.claims import ClaimError
from flopcheck.auditor.rates import RateKind, Thing, parse_rate
from flopcheck.specs import SpecSource, parse
from flopcheck.types import ModelPart, Space, Tier


def test_a_claims_part_space_and_pinned_verdict_are_read_once_into_their_enums():
    claim = parse_claim("DiT-XL/2 5.3 GFLOPs", part="block", space="pixel", expect="close")
    assert claim.part is ModelPart.BLOCK and claim.space is Space.PIXEL and claim.expect is Tier.CLOSE
    plain = parse_claim("DiT-XL/2 118.64 GFLOPs")
    assert plain.part is ModelPart.MODEL and plain.space is Space.LATENT
    # written as the text it was read from: a str enum, so json and f-strings give the word
    assert json.dumps([claim.part, claim.space]) == '["block", "pixel"]' and f"{claim.part}" == "block"


@pytest.mark.parametrize(
    "scope, message",
    [
        ({"part": "moon"}, "part must be one of model, linear, attention, embeddings, block, got 'moon'"),
        ({"space": "moon"}, "space must be latent or pixel, got 'moon'"),
        ({"expect": "fine"}, "expect must be one of consistent, close, wrong, unexplained, incomplete, got 'fine'"),
    ],
)
def test_a_bad_part_space_or_pinned_verdict_is_one_line_naming_the_choices(scope, message):
    with pytest.raises(ClaimError) as err:
        parse_claim("DiT-XL/2 118.64 GFLOPs", **scope)
    assert str(err.value) == message


def test_a_claim_built_by_hand_with_text_for_an_enum_is_refused():
    from dataclasses import replace

    claim = parse_claim("DiT-XL/2 118.64 GFLOPs")
    with pytest.raises(ClaimError, match="part must be a ModelPart, read by parse_claim, got 'block'"):
        replace(claim, part="block")


@pytest.mark.parametrize(
    "text, kind",
    [
        ("45.5% MFU", RateKind.MFU),
        ("38% HFU", RateKind.HFU),
        ("225 TFLOP/s per GPU", RateKind.FLOPS),
        ("5.7 it/s", RateKind.THROUGHPUT),
        ("2.1 s/it", RateKind.THROUGHPUT),
        ("675 A100 GPU-days", RateKind.COST),
        ("7 days on 8 A100s", RateKind.COST),
        ("3,640 PF-days", RateKind.COMPUTE),
    ],
)
def test_a_rates_kind_is_its_enum(text, kind):
    assert parse_rate(text).kind is kind


@pytest.mark.parametrize(
    "text, thing, label",
    [
        ("1,350 img/s", Thing.IMAGE, "images/s"),
        ("5.7 it/s", Thing.ITERATION, "iterations/s"),
        ("2.1 s/it", Thing.ITERATION, "s/it"),
        ("3,000 tokens/s/GPU", Thing.TOKEN, "tokens/s"),
        ("12 clips/s", Thing.VIDEO, "videos/s"),
        ("45.5% MFU", None, "% MFU"),  # not a throughput: it counts no thing
    ],
)
def test_a_throughputs_thing_is_its_enum_and_its_label_the_same_words(text, thing, label):
    rate = parse_rate(text)
    assert rate.thing is thing and rate.label == label


@pytest.mark.parametrize(
    "text, source",
    [
        ("DiT-XL/2", SpecSource.REFERENCE),
        ("Llama-3-8B", SpecSource.TRANSFORMERS),  # a published LM's name: transformers' class on its shipped config
        ("timm:resnet50", SpecSource.TIMM),
        ("torchvision:resnet50", SpecSource.TORCHVISION),
        ("transformers:CLIPTextModel", SpecSource.TRANSFORMERS),
        ("zoo:user-packed-sequences", SpecSource.ZOO),
        ("mypackage.models:build", SpecSource.MODULE),
    ],
)
def test_a_specs_source_is_its_enum(text, source):
    from flopcheck.specs import ModelSpec

    assert ModelSpec(text).source is source
    if source is SpecSource.REFERENCE:
        assert parse(text).source is source


def test_a_formula_reading_carries_its_name_not_text_to_parse_back():
    # the 'dit' formula is flopcheck's term-by-term derivation: DiT-S/2's exact count, 12,111,347,712 FLOPs a forward
    found, notes = formulas.readings(parse_claim("DiT-S/2 12.11 GFLOPs"))
    dit = next(r for r in found if r.formula == "dit")
    assert dit.count.flops == 12_111_347_712 and not notes
    assert dit.describe() == "what the published formula dit (DiT term by term) gives"
    assert dit.tool == "formula dit (DiT term by term)"


def test_every_verdict_and_estimate_renders_by_its_type():
    from flopcheck.arithmetic import Estimate, ExactEstimate, TrainingEstimate
    from flopcheck.auditor import Verdict
    from flopcheck.auditor.pipeline import PipelineVerdict
    from flopcheck.auditor.utilization import UtilizationVerdict
    from flopcheck.render.estimate import RENDERERS
    from flopcheck.verbs.audit import RENDERINGS

    assert set(RENDERINGS) == {Verdict, PipelineVerdict, UtilizationVerdict}
    assert set(RENDERERS) == {Estimate, ExactEstimate, TrainingEstimate}
