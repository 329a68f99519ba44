"""Every diffusers transformer class from its config: each family's input builder (flopcheck/specs/inputs.py) pinned at
a small config, its exact count equal to torch.utils.flop_counter's on the same inputs with attention on the
explicit-matmul path; and the committed list of what each class gives from its defaults
(flopcheck/data/diffusers/classes.json) checked against the installed diffusers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

diffusers = pytest.importorskip("diffusers")

from flopcheck.specs import SpecError, parse  # noqa: E402
from flopcheck.specs.sources import build  # noqa: E402

LIST = Path(__file__).resolve().parents[1] / "flopcheck" / "data" / "diffusers" / "classes.json"
PINNED = "0.42.1"  # the diffusers extra's pin (pyproject.toml)

# (class, its defaults overridden by, exact FLOPs at 256x256 px (a 3D class: 256x160 px x 9 frames, Mochi 7), 16 text
# tokens (CogVideoX and ConsisID: their 226; DiT, class-conditioned: none), batch 1). Each integer is the exact count
# that flopcheck printed for the class at this config (diffusers 0.42.1); the test asserts that
# torch.utils.flop_counter, counting only matmuls and convolutions with its own formulas, gives the same on the
# same inputs with SDPA on the math path, so no figure here rests on flopcheck's count alone.
PINS = [
    ("AllegroTransformer3DModel", {"num_layers": 2}, 148_376_125_440),
    ("AnyFlowTransformer3DModel", {"num_layers": 2}, 590_301_102_080),
    ("AuraFlowTransformer2DModel", {"num_mmdit_layers": 2, "num_single_dit_layers": 2}, 258_514_354_176),
    ("BriaFiboTransformer2DModel", {"num_layers": 2, "num_single_layers": 2}, 251_691_270_144),
    ("BriaTransformer2DModel", {"num_layers": 2, "num_single_layers": 2}, 251_288_616_960),
    ("ChromaTransformer2DModel", {"num_layers": 2, "num_single_layers": 2}, 268_469_010_432),
    ("ChronoEditTransformer3DModel", {"num_layers": 2}, 589_396_705_280),
    ("CogVideoXTransformer3DModel", {"num_layers": 2}, 136_424_910_848),
    ("CogView3PlusTransformer2DModel", {"num_layers": 2}, 87_655_710_720),
    ("CogView4Transformer2DModel", {"num_layers": 2}, 87_655_710_720),
    ("ConsisIDTransformer3DModel", {"num_layers": 2}, 136_424_910_848),
    ("CosmosTransformer3DModel", {"num_layers": 2}, 460_019_728_384),
    ("DiTTransformer2DModel", {"num_layers": 2}, 16_977_199_104),
    ("ErnieImageTransformer2DModel", {"num_layers": 2}, 125_885_743_104),
    ("Flux2Transformer2DModel", {"num_layers": 2, "num_single_layers": 2}, 1_080_375_115_776),
    ("Flux3Transformer2DModel", {"num_layers": 2, "num_single_layers": 2}, 313_317_654_528),
    ("FluxTransformer2DModel", {"num_layers": 2, "num_single_layers": 2}, 251_312_209_920),
    ("GlmImageTransformer2DModel", {"num_layers": 2}, 94_358_732_800),
    ("HeliosTransformer3DModel", {"num_layers": 2}, 589_766_328_320),
    (
        "HunyuanImageTransformer2DModel",
        {"num_layers": 2, "num_single_layers": 2, "num_refiner_layers": 2},
        110_390_411_264,
    ),
    ("HunyuanVideo15Transformer3DModel", {"num_layers": 2, "num_refiner_layers": 2}, 349_258_563_584),
    (
        "HunyuanVideoTransformer3DModel",
        {"num_layers": 2, "num_single_layers": 2, "num_refiner_layers": 2},
        470_295_773_184,
    ),
    ("JoyImageEditPlusTransformer3DModel", {"num_layers": 2}, 231_942_389_760),
    ("JoyImageEditTransformer3DModel", {"num_layers": 2}, 231_942_389_760),
    ("Kandinsky5Transformer3DModel", {"num_text_blocks": 2, "num_visual_blocks": 2}, 95_809_699_840),
    ("Kandinsky6Transformer3DModel", {"num_text_blocks": 2, "num_visual_blocks": 2}, 488_810_479_616),
    (
        "Krea2Transformer2DModel",
        {"num_layers": 2, "num_layerwise_text_blocks": 2, "num_refiner_text_blocks": 2},
        550_076_612_608,
    ),
    ("LTXVideoTransformer3DModel", {"num_layers": 2}, 19_999_490_048),
    ("LongCatImageTransformer2DModel", {"num_layers": 2, "num_single_layers": 2}, 251_238_285_312),
    ("Lumina2Transformer2DModel", {"num_layers": 2, "num_refiner_layers": 2}, 172_306_726_912),
    ("MochiTransformer3DModel", {"num_layers": 2}, 151_239_868_416),
    ("MotifVideoTransformer3DModel", {"num_layers": 2, "num_single_layers": 2}, 463_360_229_376),
    ("NucleusMoEImageTransformer2DModel", {"num_layers": 2}, 53_636_759_552),
    ("OvisImageTransformer2DModel", {"num_layers": 2, "num_single_layers": 2}, 333_228_539_904),
    ("PRXTransformer2DModel", {"depth": 2}, 49_436_950_528),
    ("PixArtTransformer2DModel", {"num_layers": 2}, 19_885_916_160),
    ("QwenImageTransformer2DModel", {"num_layers": 2}, 126_094_934_016),
    ("SD3Transformer2DModel", {"num_layers": 2}, 17_921_802_240),
    ("SanaTransformer2DModel", {"num_layers": 2}, 18_480_537_600),
    ("SanaVideoTransformer3DModel", {"num_layers": 2}, 161_571_020_800),
    ("SkyReelsV2Transformer3DModel", {"num_layers": 2}, 117_894_545_408),
    ("WanTransformer3DModel", {"num_layers": 2}, 589_396_705_280),
    ("WanVACETransformer3DModel", {"num_layers": 2, "vace_layers": [0]}, 935_059_783_680),
    ("ZImageTransformer2DModel", {"n_layers": 2, "n_refiner_layers": 2}, 413_210_116_096),
]


def _small(tmp_path: Path, cls: str, overrides: dict):
    """The class at its small config and small input, built on meta."""
    path = tmp_path / f"{cls}.json"
    path.write_text(json.dumps({"_class_name": cls, **overrides}))
    video = "3D" in cls
    tokens = 226 if cls in ("CogVideoXTransformer3DModel", "ConsisIDTransformer3DModel") else 16
    tokens = None if cls == "DiTTransformer2DModel" else tokens  # class-conditioned: no text
    frames = 7 if cls == "MochiTransformer3DModel" else 9  # its VAE: 6x per frame
    options = {"resolution": (256, 160), "frames": frames} if video else {"resolution": (256, 256)}
    return build(parse(f"diffusers:{cls}", config=str(path), text_tokens=tokens, **options))


@pytest.mark.parametrize("cls, overrides, flops", PINS, ids=[p[0] for p in PINS])
def test_each_family_counts_exactly_at_a_small_config(tmp_path, cls, overrides, flops):
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.utils.flop_counter import FlopCounterMode

    from flopcheck.exact import count_forward
    from flopcheck.exact.counter import meta_autocast
    from flopcheck.exact.values import Values

    with Values():  # Lumina 2, Mochi, GLM-Image and HunyuanVideo 1.5 read their masks' values (exact/values.py)
        built = _small(tmp_path, cls, overrides)
        exact = count_forward(built.model, built.args, kwargs=built.kwargs)
        with meta_autocast(), sdpa_kernel(SDPBackend.MATH), FlopCounterMode(display=False) as mode, torch.no_grad():
            built.model(*built.args, **built.kwargs)
    assert exact.complete, exact.incompleteness()
    assert (exact.total, mode.get_total_flops()) == (flops, flops)


def test_the_list_names_every_transformer_class_of_the_pinned_diffusers():
    committed = json.loads(LIST.read_text())
    assert committed["diffusers"] == PINNED
    if diffusers.__version__ != PINNED:
        pytest.skip(f"the list is checked against diffusers {PINNED}; this is {diffusers.__version__}")
    names = sorted(n for n in dir(diffusers) if "Transformer" in n and n.endswith("Model"))
    assert len(names) == 65 and sorted(committed["classes"]) == names


def test_every_class_gives_from_its_defaults_what_the_list_says():
    """Complete where the list says complete; refused, in one line, where it says refused (counted as the CLI counts,
    less the real-tensor fallback, which would run a full-size model on CPU)."""
    from flopcheck.specs.measure import Measured, measure

    committed = json.loads(LIST.read_text())
    if diffusers.__version__ != committed["diffusers"]:
        pytest.skip("the list is for another diffusers")
    got = {}
    for name in committed["classes"]:
        try:
            m = Measured.from_dict(measure(parse(f"diffusers:{name}").to_dict(), real=False))
            got[name] = "complete" if m.exact.complete else "incomplete"
        except SpecError as err:
            assert "\n" not in str(err)
            got[name] = "refused"
        except Exception:  # noqa: BLE001 - the class's own forward failed on meta: the list says refused
            got[name] = "refused"
    assert got == {n: next(iter(v)) for n, v in committed["classes"].items()}
    # 44 of the 65 count complete from their defaults alone (the list's own tally)
    assert sum(v == "complete" for v in got.values()) == 44


def test_pixart_alpha_at_1024_px_with_120_text_tokens_by_hand(tmp_path):
    from flopcheck.exact import count_forward

    # PixArt-alpha XL/2 (the class's defaults: 28 blocks of width d = 1152, patch 2; its T5's caption_channels 4096)
    # at 1024 px: a 128x128 latent, T = 64*64 = 4096 tokens; S = 120 text tokens. Per block, in FLOPs:
    #   self-attention projections 2*4*T*d^2 + its scores and values 4*T^2*d
    #   cross-attention q and out on T, k and v on S: 2*(2*T*d^2 + 2*S*d^2), its scores and values 4*T*S*d
    #   MLP (4d): 2*8*T*d^2
    # once: caption projection 2*S*(4096*d + d*d), patch embed 2*T*(4*2*2)*d, timestep MLP 2*(256*d + d*d),
    # adaLN-single 2*d*6d, final linear 2*T*d*(2*2*8), and the micro-conditions (resolution: 2 rows, aspect ratio: 1
    # row, each 256 -> 384 -> 384): 3 * 2*(256*384 + 384*384) = 1,474,560
    T, S, d = 4096, 120, 1152
    block = 8 * T * d * d + 4 * T * T * d + 2 * (2 * T * d * d + 2 * S * d * d) + 4 * T * S * d + 16 * T * d * d
    once = 2 * S * (4096 * d + d * d) + 2 * T * 16 * d + 2 * (256 * d + d * d) + 12 * d * d + 64 * T * d + 1_474_560
    assert 28 * block + once == 6_509_523_566_592
    path = tmp_path / "pixart.json"
    path.write_text(json.dumps({"_class_name": "PixArtTransformer2DModel", "caption_channels": 4096}))
    built = build(parse("diffusers:PixArtTransformer2DModel", config=str(path), resolution=(1024, 1024)))
    assert count_forward(built.model, built.args, kwargs=built.kwargs).total == 6_509_523_566_592
