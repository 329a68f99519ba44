"""Two independent implementations agree: seed 001's six models as diffusers implements them, built from their
published configs (flopcheck/data/diffusers/, each with its source URL), counted exactly on meta, equal to
flopcheck's reference models to the FLOP, at the seed's input and at a small one. Needs the diffusers extra
(CI installs it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("diffusers")

from flopcheck.formula import formula_breakdown  # noqa: E402
from flopcheck.specs import parse  # noqa: E402
from flopcheck.specs.child import measured  # noqa: E402
from reference_models import get_config  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "flopcheck" / "data" / "diffusers"

SEED_001 = [  # (diffusers class, config file, flopcheck's reference model)
    ("SD3Transformer2DModel", "sd3-medium.json", "SD3-medium"),
    ("FluxTransformer2DModel", "flux1-dev.json", "FLUX.1-dev"),
    ("WanTransformer3DModel", "wan2.1-t2v-1.3b.json", "Wan2.1-1.3B"),
    ("WanTransformer3DModel", "wan2.1-t2v-14b.json", "Wan2.1-14B"),
    ("CogVideoXTransformer3DModel", "cogvideox-5b.json", "CogVideoX-5B"),
    ("HunyuanVideoTransformer3DModel", "hunyuanvideo.json", "HunyuanVideo"),
]


def _small(ref: str) -> dict:
    """The small input: 160x96 x 5 frames for a video model, 256 px for an image one."""
    video = getattr(get_config(ref), "video", False)
    return {"resolution": (160, 96), "frames": 5} if video else {"resolution": (256, 256)}


def _spec(cls: str, config: str, ref: str, resolution=None, frames=None):
    """The diffusers class from its config, on the reference's input (its own when none is given)."""
    cfg = get_config(ref, **{k: v for k, v in (("resolution", resolution), ("frames", frames)) if v})
    video = getattr(cfg, "video", False)
    given = {"resolution": cfg.resolution, "frames": cfg.frames if video else None, "text_tokens": cfg.text_tokens}
    return parse(f"diffusers:{cls}", config=str(DATA / config), **given), cfg


@pytest.fixture(scope="module", autouse=True)
def _every_input_measured_in_one_child():
    """The module's specs at both inputs, measured in one child (torch and diffusers imported once, not per test)."""
    from flopcheck.specs.child import measure_all

    dit = [_dit(side) for side in (256, 128)]
    measure_all([_spec(*row, **given)[0] for row in SEED_001 for given in ({}, _small(row[2]))] + dit)


def _dit(side: int):
    """diffusers' DiT-XL/2 from its published config at side x side px."""
    return parse("diffusers:DiTTransformer2DModel", config=str(DATA / "dit-xl-2-256.json"), resolution=(side, side))


def _both(cls: str, config: str, ref: str, resolution=None, frames=None) -> tuple[int, int]:
    """(diffusers' exact count, flopcheck's formula) at one input: the reference's own when none is given."""
    spec, cfg = _spec(cls, config, ref, resolution, frames)
    m = measured(spec)
    assert m.exact.complete, m.exact.incompleteness()
    return m.exact.total, formula_breakdown(ref, cfg).total


@pytest.mark.parametrize("cls, config, ref", SEED_001)
def test_diffusers_equals_the_reference_at_the_seeds_input(cls, config, ref):
    ours, theirs = _both(cls, config, ref)
    assert ours == theirs


@pytest.mark.parametrize("cls, config, ref", SEED_001)
def test_diffusers_equals_the_reference_at_a_small_input(cls, config, ref):
    ours, theirs = _both(cls, config, ref, **_small(ref))
    assert ours == theirs


def test_the_configs_name_their_source_and_class():
    for cls, config, _ in SEED_001:
        data = json.loads((DATA / config).read_text())
        assert data["_class_name"] == cls and data["_source"].startswith("https://huggingface.co/")


@pytest.mark.parametrize("resolution, size", [(256, 32), (128, 16)])
def test_diffusers_dit_differs_from_the_paper_by_its_per_block_timestep_mlp(resolution, size):
    # diffusers' DiTTransformer2DModel gives every block's AdaLayerNormZero its own timestep embedder (and runs the
    # first block's again for the final layer): 28 + 1 timestep MLPs where the paper's DiT has 1. One MLP is
    # Linear(256 -> 1152) + Linear(1152 -> 1152) per sample: 2 * (256*1152 + 1152*1152) = 3,244,032 FLOPs;
    # 28 more of them: 28 * 3,244,032 = 90,832,896 FLOPs, whatever the input size (it is per sample)
    m = measured(_dit(resolution))
    paper = formula_breakdown("DiT-XL/2", get_config("DiT-XL/2", input_size=size)).total
    assert m.exact.total - paper == 90_832_896


def test_the_block_linears_found_by_structure_equal_the_references_at_256_px(capsys):
    # diffusers' FLUX keeps its blocks in transformer_blocks and single_transformer_blocks, flopcheck's in
    # double_blocks and single_blocks: found from each module tree, the blocks' per-token linears are the same
    # FLOPs (the modulation linears write one row per sample: per-sample, not block linears, in both).
    # By hand at 256 px: T = (256/16)^2 + 512 = 768, d = 3072, MLP 4d; a double block's two streams are
    # 2*T*d*(3d + d + 2*4d) = 24*T*d^2, a single block's linear1 (d -> 3d + 4d) and linear2 (5d -> d) are also
    # 2*T*d*7d + 2*T*5d*d = 24*T*d^2: (19 + 38) * 24 * 768 * 3072^2 = 57 * 173,946,175,488 = 9,914,932,002,816
    from flopcheck.cli import main

    assert main(["audit", "FLUX.1-dev 1 GFLOPs", "--part", "linear", "--resolution", "256", "--json"]) in (0, 1)
    (ours,) = json.loads(capsys.readouterr().out)
    assert main(
        [
            "audit",
            "1 GFLOPs",
            "--model",
            "diffusers:FluxTransformer2DModel",
            "--config",
            str(DATA / "flux1-dev.json"),
            "--part",
            "linear",
            "--resolution",
            "256",
            "--json",
        ]
    ) in (0, 1)
    (theirs,) = json.loads(capsys.readouterr().out)
    assert ours["true_flops"] == theirs["true_flops"] == 9_914_932_002_816
