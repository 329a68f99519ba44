"""Model families, one object each: how to build a model and its inputs, its hand formula, whether
counters can execute it on real tensors, where its blocks are, and its notes.

No torch here: builders, input makers and formulas are named as 'module:function' and imported on
demand (the torch models in reference_models, the formulas in flopcheck.formula).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Family:
    """One model family."""

    name: str
    prepare: str  # 'module:function' (config, batch, device, cfg) -> (model, inputs, forward)
    build: str  # 'module:function' (config, device) -> model
    formula: str  # 'module:function' (name, config, batch) -> the hand-derived Breakdown of one forward
    executes: bool  # counters can run it on real tensors (False: built on meta only)
    blocks: tuple[str, ...]  # the module lists of its repeated transformer blocks
    why: tuple[str, str]  # why its block linears and its attention differ from 24*T*d^2 and 4*T^2*d over T = I + S
    model: str = ""  # 'module:Class' of the torch model, for families built by a shared builder
    joint_attention: bool = True  # the text tokens join self-attention (Wan: only the video tokens attend)
    pixel_space: bool = False  # it can be counted on pixels (no VAE)
    embeddings: tuple[str, ...] = ()  # the input and output embedding layers ('embeddings' part of a claim)
    parts: tuple[str, ...] = ("model", "linear", "attention")  # what a claim may cover (block: one of identical blocks)

    def load(self, what: str):
        """One of its 'module:function' fields, imported."""
        module, _, attr = getattr(self, what).partition(":")
        return getattr(importlib.import_module(module), attr)


FAMILIES: dict[str, Family] = {}


def register_family(family: Family) -> Family:
    """Add a family; a name registers once."""
    if family.name in FAMILIES:
        raise ValueError(f"family {family.name!r} is registered twice")
    FAMILIES[family.name] = family
    return family


def family_of(config) -> Family:
    """The family object of a config."""
    return FAMILIES[config.family]


_LATENT = dict(
    prepare="reference_models.text_conditioned:prepare_latent_transformer",
    build="reference_models.text_conditioned:build_latent_transformer",
    executes=False,
)

register_family(
    Family(
        "dit",
        prepare="reference_models.dit:prepare_dit",
        build="reference_models.dit:build_dit",
        formula="flopcheck.formula.dit:dit_breakdown",
        executes=True,
        blocks=("blocks",),
        pixel_space=True,
        embeddings=("x_embedder.proj", "final_layer.linear"),
        parts=("model", "linear", "attention", "embeddings", "block"),
        why=("none: DiT's blocks are exactly 24*T*d^2", "none: self-attention over all T tokens"),
    )
)
register_family(
    Family(
        "mmdit",
        **_LATENT,
        model="reference_models.mmdit:MMDiT",
        formula="flopcheck.formula.text_conditioned:mmdit",
        blocks=("transformer_blocks",),
        why=(
            "the last block's text stream stops after q/k/v: no text output projection, no text MLP",
            "none: joint attention over T = I + S in every block",
        ),
    )
)
register_family(
    Family(
        "flux",
        **_LATENT,
        model="reference_models.flux:DualStreamDiT",
        formula="flopcheck.formula.text_conditioned:flux",
        blocks=("double_blocks", "single_blocks"),
        why=(
            "none: a double block is 24*T*d^2 over both streams and a single block's Linear(d, 3d+4d) and "
            "Linear(5d, d) are 14*T*d^2 + 10*T*d^2; the per-layer shortcut's one width costs nothing",
            "none: joint attention over T = I + S in every block",
        ),
    )
)
register_family(
    Family(
        "wan",
        **_LATENT,
        model="reference_models.wan:WanModel",
        formula="flopcheck.formula.text_conditioned:wan",
        blocks=("blocks",),
        joint_attention=False,
        why=(
            "the S text tokens never pass through the blocks' projections (only cross-attention k and v, "
            "4*S*d^2 per block), and the FFN is h = {h} = {ratio:.2f}d wide, not 4d",
            "self-attention is over the I video tokens only, plus I x S cross-attention: 4*(I^2 + I*S)*d, "
            "not 4*(I+S)^2*d",
        ),
    )
)
register_family(
    Family(
        "cogvideox",
        **_LATENT,
        model="reference_models.cogvideox:CogVideoXTransformer",
        formula="flopcheck.formula.text_conditioned:cogvideox",
        blocks=("transformer_blocks",),
        why=("none: shared projections over [text; video], 24*T*d^2", "none: full attention over T = S + I"),
    )
)

# the module lists of transformer blocks across the families ("txt_in.blocks.*." is HunyuanVideo's refiner, not one)
BLOCK_LISTS = tuple(dict.fromkeys(f"{b}.*." for f in FAMILIES.values() for b in f.blocks))
