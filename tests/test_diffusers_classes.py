"""Every diffusers transformer class from its config: each family's input builder (flopcheck/specs/inputs/) pinned at
a small config, its exact count equal to torch.utils.flop_counter's on the same inputs with attention on the
explicit-matmul path; and the committed list of what each class gives from its defaults
(flopcheck/data/diffusers/classes.json) checked against the installed diffusers."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

import pytest

diffusers = pytest.importorskip("diffusers")

from flopcheck.specs import SpecError, parse  # noqa: E402
from flopcheck.specs.build import build  # noqa: E402

LIST = Path(__file__).resolve().parents[1] / "flopcheck" / "data" / "diffusers" / "classes.json"
sys.path.insert(0, str(LIST.parents[3] / "scripts"))  # the census's own rule of which classes it takes
from diffusers_census import transformer_classes  # noqa: E402

PINNED = "0.42.1"  # the diffusers extra's pin (pyproject.toml)

# (class, its defaults overridden by, exact FLOPs at 256x256 px (a 3D class: 256x160 px x 9 frames, Mochi 7; Kandinsky
# 6 SR: 256x256 x 9, its NABLA blocks need rows and columns of 8 tokens; a 1D audio class: its 1500 latents), 16 text
# tokens (CogVideoX and ConsisID: their 226; DiT, MiniMax Music 3 and Kandinsky 6 SR, no text: none), batch 1). Each
# integer is the exact count that flopcheck printed for the class at this config (diffusers 0.42.1); the test asserts
# that torch.utils.flop_counter, counting only matmuls and convolutions with its own formulas, gives the same on the
# same inputs with SDPA on the math path (plus BEYOND, what it has no formula for), so no figure here rests on
# flopcheck's count alone.
PINS = [
    ("AceStepTransformer1DModel", {"num_hidden_layers": 2}, 187_668_430_848),
    ("AllegroTransformer3DModel", {"num_layers": 2}, 148_376_125_440),
    ("AnyFlowFARTransformer3DModel", {"num_layers": 2, "chunk_partition": [1, 2]}, 591_601_336_320),
    ("AnyFlowTransformer3DModel", {"num_layers": 2}, 590_301_102_080),
    ("AuraFlowTransformer2DModel", {"num_mmdit_layers": 2, "num_single_dit_layers": 2}, 258_514_354_176),
    ("BriaFibo2Transformer2DModel", {"n_layers": 2, "injection_layer_ids": [0, 1]}, 728_531_468_288),
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
    ("Ideogram4Transformer2DModel", {"num_layers": 2}, 414_207_651_840),
    ("JoyImageEditPlusTransformer3DModel", {"num_layers": 2}, 231_942_389_760),
    ("JoyImageEditTransformer3DModel", {"num_layers": 2}, 231_942_389_760),
    ("Kandinsky5Transformer3DModel", {"num_text_blocks": 2, "num_visual_blocks": 2}, 95_809_699_840),
    ("Kandinsky6SRTransformer3DModel", {"num_visual_blocks": 2}, 128_981_516_288),
    ("Kandinsky6Transformer3DModel", {"num_text_blocks": 2, "num_visual_blocks": 2}, 488_810_479_616),
    (
        "Krea2Transformer2DModel",
        {"num_layers": 2, "num_layerwise_text_blocks": 2, "num_refiner_text_blocks": 2},
        550_076_612_608,
    ),
    ("LTX2VideoTransformer3DModel", {"num_layers": 2}, 93_780_459_520),
    ("LTXVideoTransformer3DModel", {"num_layers": 2}, 19_999_490_048),
    ("LongCatImageTransformer2DModel", {"num_layers": 2, "num_single_layers": 2}, 251_238_285_312),
    ("Lumina2Transformer2DModel", {"num_layers": 2, "num_refiner_layers": 2}, 172_306_726_912),
    ("MiniMaxH3Transformer3DModel", {"num_layers": 2}, 828_922_658_816),
    ("MiniMaxMusic3Transformer1DModel", {"num_layers": 2}, 470_760_833_280),
    ("MochiTransformer3DModel", {"num_layers": 2}, 151_239_868_416),
    ("MotifVideoTransformer3DModel", {"num_layers": 2, "num_single_layers": 2}, 463_360_229_376),
    ("NucleusMoEImageTransformer2DModel", {"num_layers": 2}, 53_636_759_552),
    ("OvisImageTransformer2DModel", {"num_layers": 2, "num_single_layers": 2}, 333_228_539_904),
    ("PRXTransformer2DModel", {"depth": 2}, 49_436_950_528),
    ("PixArtTransformer2DModel", {"num_layers": 2}, 19_885_916_160),
    ("QwenImage21Transformer2DModel", {"num_layers": 2}, 241_344_446_464),
    ("QwenImageTransformer2DModel", {"num_layers": 2}, 126_094_934_016),
    ("SD3Transformer2DModel", {"num_layers": 2}, 17_921_802_240),
    ("SanaTransformer2DModel", {"num_layers": 2}, 18_480_537_600),
    ("SanaVideoTransformer3DModel", {"num_layers": 2}, 161_571_020_800),
    ("SanaWMTransformer3DModel", {"num_layers": 2, "chunk_plucker_post_attn_blocks": 2}, 41_894_171_680),
    ("SkyReelsV2Transformer3DModel", {"num_layers": 2}, 117_894_545_408),
    ("WanAnimateTransformer3DModel", {"num_layers": 2, "inject_face_latents_blocks": 1}, 1_346_502_098_576),
    ("WanTransformer3DModel", {"num_layers": 2}, 589_396_705_280),
    ("WanVACETransformer3DModel", {"num_layers": 2, "vace_layers": [0]}, 935_059_783_680),
    ("ZImageTransformer2DModel", {"n_layers": 2, "n_refiner_layers": 2}, 413_210_116_096),
]

# what flopcheck counts beyond torch.utils.flop_counter, which has no QR formula: Wan Animate's motion encoder runs
# torch.linalg.qr on its (512, 20) weight once per 8 face frames, twice for 9 frames. LAPACK Working Note 41's counts,
# m = 512, n = k = 20, multiplications + additions:
#   xGEQRF n(n(1/2 - n/3 + m) + m + 23/6) + n(n(1/2 - n/3 + m) + 5/6) = 212,650 + 202,350 = 415,000
#   xORGQR k(2mn + 2n - 5/3 + k(2k/3 - (m+n) - 1)) + k(2mn + n - m + 1/3 + k(2k/3 - (m+n))) = 202,500 + 192,300
BEYOND = {"WanAnimateTransformer3DModel": 2 * (415_000 + 394_800)}
# flex attention: torch 2.14's FlopCounterMode cannot run it eagerly (no implementation for the higher-order op), so
# for the independent count it is swapped for dense SDPA on the same q, k, v, which is what flopcheck counts a block
# mask as (its skipped blocks too); and these forwards read no values, which the flex op would refuse under Values
FLEX = {"AnyFlowFARTransformer3DModel", "Kandinsky6SRTransformer3DModel"}
NO_TEXT = {"DiTTransformer2DModel", "MiniMaxMusic3Transformer1DModel", "Kandinsky6SRTransformer3DModel"}


def _small(tmp_path: Path, cls: str, overrides: dict):
    """The class at its small config and small input, built on meta."""
    path = tmp_path / f"{cls}.json"
    path.write_text(json.dumps({"_class_name": cls, **overrides}))
    tokens = 226 if cls in ("CogVideoXTransformer3DModel", "ConsisIDTransformer3DModel") else 16
    tokens = None if cls in NO_TEXT else tokens
    frames = 7 if cls == "MochiTransformer3DModel" else 9  # its VAE: 6x per frame
    side = 256 if cls == "Kandinsky6SRTransformer3DModel" else 160
    options = {"resolution": (256, side), "frames": frames} if "3D" in cls else {"resolution": (256, 256)}
    return build(parse(f"diffusers:{cls}", config=str(path), text_tokens=tokens, **({} if "1D" in cls else options)))


@contextlib.contextmanager
def _dense_flex():
    """flex_attention as dense SDPA on its q, k and v, for FlopCounterMode (FLEX)."""
    import torch.nn.attention.flex_attention as flex
    import torch.nn.functional as F

    saved = flex.flex_attention
    flex.flex_attention = lambda query, key, value, scale=None, enable_gqa=False, **_: F.scaled_dot_product_attention(
        query, key, value, scale=scale, enable_gqa=enable_gqa
    )
    try:
        yield
    finally:
        flex.flex_attention = saved


@pytest.mark.parametrize("cls, overrides, flops", PINS, ids=[p[0] for p in PINS])
def test_each_family_counts_exactly_at_a_small_config(tmp_path, cls, overrides, flops):
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.utils.flop_counter import FlopCounterMode

    from flopcheck.exact import count_forward
    from flopcheck.exact.counter import meta_autocast
    from flopcheck.exact.values import Values

    # Lumina 2, Mochi, GLM-Image, HunyuanVideo 1.5, Qwen-Image 2.1 and others read their masks' values (exact/values.py)
    with contextlib.nullcontext() if cls in FLEX else Values():
        built = _small(tmp_path, cls, overrides)
        exact = count_forward(built.model, built.args, kwargs=built.kwargs)
        built.model.requires_grad_(False)  # FlopCounterMode's module tracker trips on a view of a parameter (FIBO 2)
        independent = contextlib.ExitStack()
        independent.enter_context(_dense_flex()) if cls in FLEX else None
        with independent, meta_autocast(), sdpa_kernel(SDPBackend.MATH), FlopCounterMode(display=False) as mode:
            with torch.no_grad():
                built.model(*built.args, **built.kwargs)
    assert exact.complete, exact.incompleteness()
    assert (exact.total, mode.get_total_flops() + BEYOND.get(cls, 0)) == (flops, flops)


def test_the_list_names_every_transformer_class_of_the_pinned_diffusers():
    committed = json.loads(LIST.read_text())
    assert committed["diffusers"] == PINNED
    if diffusers.__version__ != PINNED:
        pytest.skip(f"the list is checked against diffusers {PINNED}; this is {diffusers.__version__}")
    # every model class of diffusers' models.transformers package, by what it is (before: by "Transformer" in its
    # name, which left out HunyuanDiT2DModel and LuminaNextDiT2DModel)
    names = transformer_classes()
    assert {"HunyuanDiT2DModel", "LuminaNextDiT2DModel"} <= set(names)
    assert len(names) == 75 and sorted(committed["classes"]) == names


def _from_defaults(names: list[str]) -> dict[str, str]:
    """What each class gives from its defaults alone, counted as the CLI counts less the real-tensor fallback (which
    would run a full-size model on CPU): 'complete', 'incomplete', or 'refused' in one line (a refusal over several
    lines is said so, and fails the comparison with the list)."""
    from flopcheck.specs.measure import Measured, measure

    got = {}
    for name in names:
        try:
            m = Measured.from_dict(measure(parse(f"diffusers:{name}").to_dict(), real=False))
            got[name] = "complete" if m.exact.complete else "incomplete"
        except SpecError as err:
            got[name] = "refused" if "\n" not in str(err) else f"refused in several lines: {err}"
        except Exception:  # noqa: BLE001 - the class's own forward failed on meta: the list says refused
            got[name] = "refused"
    return got


def test_every_class_gives_from_its_defaults_what_the_list_says():
    """Complete where the list says complete; refused, in one line, where it says refused. Each class is built at its
    full default size on meta (65 of them, a minute on one core): half in a second process, started with
    nothing imported, at once with the other half here."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    committed = json.loads(LIST.read_text())
    if diffusers.__version__ != committed["diffusers"]:
        pytest.skip("the list is for another diffusers")
    names = list(committed["classes"])
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        there = pool.submit(_from_defaults, names[1::2])
        got = {**_from_defaults(names[0::2]), **there.result(timeout=600)}
    assert got == {n: next(iter(v)) for n, v in committed["classes"].items()}
    # 55 of the 75 count complete from their defaults alone (the list's own tally)
    assert sum(v == "complete" for v in got.values()) == 55


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


def test_ltx_video_at_704x480_and_161_frames_with_128_text_tokens_by_hand():
    from flopcheck.exact import count_forward

    # LTX-Video (the class's defaults: 28 blocks of width d = 2048, patch 1, 128 latent channels, cross-attention
    # width 2048, caption_channels 4096) at 704x480 x 161 frames through its 32x / 8x VAE: 21 latent frames of 15 x 22,
    # T = 6,930 tokens; S = 128 text tokens. Per block, in FLOPs:
    #   self-attention projections 2*4*T*d^2 + its scores and values 4*T^2*d
    #   cross-attention q and out on T, k and v on S: 2*(2*T*d^2 + 2*S*d^2), its scores and values 4*T*S*d
    #   feed-forward (4d): 2*8*T*d^2
    # once: proj_in 2*T*128*d, caption projection 2*S*(4096*d + d*d), timestep MLP 2*(256*d + d*d), adaLN-single
    # 2*d*6d, proj_out 2*T*d*128
    T, S, d = 21 * 15 * 22, 128, 2048
    block = 8 * T * d * d + 4 * T * T * d + 2 * (2 * T * d * d + 2 * S * d * d) + 4 * T * S * d + 16 * T * d * d
    once = 2 * T * 128 * d + 2 * S * (4096 * d + d * d) + 2 * (256 * d + d * d) + 12 * d * d + 2 * T * d * 128
    assert 28 * block + once == 34_078_059_266_048
    built = build(parse("diffusers:LTXVideoTransformer3DModel", resolution=(704, 480), frames=161, text_tokens=128))
    assert count_forward(built.model, built.args, kwargs=built.kwargs).total == 34_078_059_266_048


def test_a_video_model_whose_pipeline_pads_its_latent_frames_takes_81_frames(tmp_path):
    # held-out round 4: --frames 81 failed on CogVideoX 1.5 (patch_size_t 2): 81 frames are (81 - 1) / 4 + 1 = 21
    # latent frames, which its pipeline pads to 22, a multiple of the temporal patch; 256 px / 8 = 32 latent rows
    config = json.loads((LIST.parent / "cogvideox-5b.json").read_text())
    config.update(patch_size_t=2, num_layers=2, ofs_embed_dim=None, use_learned_positional_embeddings=False)
    path = tmp_path / "cogvideox-1.5.json"
    path.write_text(json.dumps(config))
    built = build(parse("diffusers:CogVideoXTransformer3DModel", config=str(path), frames=81, resolution=(256, 256)))
    assert tuple(built.args[0].shape if built.args else built.kwargs["hidden_states"].shape) == (1, 22, 16, 32, 32)
    assert "x 81 frames (21 latent frames padded to 22, as its pipeline pads them)" in built.notes[-1]
