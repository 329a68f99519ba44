"""Model configs as plain dataclasses (no torch): the formula reads these, the builders build them."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Attn(str, Enum):
    """The attention path: fused F.scaled_dot_product_attention, or explicit q @ k^T, softmax, @ v."""

    SDPA = "sdpa"
    MATH = "math"

    __str__ = str.__str__
    __format__ = str.__format__


ATTN_PATHS = tuple(Attn)
VAE_FACTOR = 8  # the SD VAE downsamples 256 px to a 32 x 32 latent (DiT paper, section 3.1)
STAND_IN_SIDE = 4  # a stand-in's token grid is 4 x 4 (x 2 latent frames for a video model): 16 or 32 tokens


class ConfigError(ValueError):
    """A config that cannot be: the message names the field and a value that works."""


@dataclass(frozen=True)
class DiTConfig:
    """One DiT: the paper's Table 4 architecture plus the input it is run on."""

    depth: int  # L: DiT blocks (S 12, B 12, L 24, XL 28; DiT paper Table 1)
    hidden_size: int  # d: token width (S 384, B 768, L 1024, XL 1152)
    num_heads: int  # heads (S 6, B 12, L 16, XL 16); changes no FLOP count
    patch_size: int  # p: 2, 4 or 8; T = (input_size / p)^2
    input_size: int = 32  # latent side: 256 px / VAE_FACTOR
    in_channels: int = 4  # C: SD VAE latent channels (3 in pixel space)
    mlp_ratio: float = 4.0  # MLP hidden = int(d * mlp_ratio), as timm's Mlp is built
    class_dropout_prob: float = 0.1  # > 0 adds the CFG null class row to the label table
    num_classes: int = 1000  # ImageNet
    learn_sigma: bool = True  # output 2C channels: epsilon and the variance interpolation
    frequency_embedding_size: int = 256  # f: sinusoid width fed to the timestep MLP
    attn: str = "sdpa"  # attention path, one of ATTN_PATHS; set per model, never by environment
    space: str = "latent"  # 'latent' (after the VAE) or 'pixel' (3 channels, no VAE)

    def __post_init__(self) -> None:
        if self.attn not in ATTN_PATHS:
            raise ConfigError(f"attn must be one of {[a.value for a in ATTN_PATHS]}, got {self.attn!r}")
        if self.input_size < self.patch_size:
            raise ConfigError(
                f"input_size {self.input_size} is smaller than one patch ({self.patch_size}): "
                f"give a positive multiple of {self.patch_size}, like 32"
            )
        if self.input_size % self.patch_size:
            raise ConfigError(
                f"input_size {self.input_size} is not divisible by patch_size {self.patch_size}: "
                f"pick a multiple of {self.patch_size}"
            )
        if self.hidden_size % self.num_heads:
            raise ConfigError(f"hidden_size {self.hidden_size} is not divisible by num_heads {self.num_heads}")

    @property
    def tokens(self) -> int:
        """T = (input_size / p)^2."""
        return (self.input_size // self.patch_size) ** 2

    @property
    def out_channels(self) -> int:
        """C_out = 2C with learn_sigma, else C."""
        return self.in_channels * (2 if self.learn_sigma else 1)

    @property
    def mlp_hidden(self) -> int:
        """MLP hidden width, int(d * mlp_ratio)."""
        return int(self.hidden_size * self.mlp_ratio)

    @property
    def image_size(self) -> int:
        """Pixel side of the image this input stands for."""
        return self.input_size * (VAE_FACTOR if self.space == "latent" else 1)

    @property
    def family(self) -> str:
        """The formula family: 'dit'."""
        return "dit"

    @property
    def resolution(self) -> tuple[int, int]:
        """(W, H) pixels of the image this input stands for."""
        return self.image_size, self.image_size

    @property
    def attended_tokens(self) -> int:
        """The sequence of the largest attention: all T tokens."""
        return self.tokens

    def resolution_fields(self, resolution: tuple[int, int], space: str | None = None) -> dict:
        """(W, H) pixels as fields: the square latent side (or the pixel side on pixels)."""
        width, height = resolution
        if width != height:
            raise ConfigError(f"DiT is square: give one side, a resolution of 256 or 512 (got {width}x{height})")
        if space == "pixel":
            return {"input_size": width}
        step = VAE_FACTOR * self.patch_size
        if width % step:
            raise ConfigError(
                f"resolution {width} is not a multiple of {VAE_FACTOR} (VAE) x {self.patch_size} "
                f"(patch) = {step}: try {width // step * step or step}"
            )
        return {"input_size": width // VAE_FACTOR}

    def norm_outputs_per_token(self, part: str) -> int:
        """LayerNorm output elements per token of a claim's part: norm1 and norm2 per block and norm_final, d each
        ((2L + 1) d for the model, 2d for one block, none for the other parts)."""
        return {"model": 2 * self.depth + 1, "block": 2}.get(part, 0) * self.hidden_size

    def stand_ins(self) -> list[tuple[str, dict]]:
        """Smaller configs of the same architecture for counters that cannot run this one: one block at its width,
        a STAND_IN_SIDE x STAND_IN_SIDE token grid, on both attention paths, as (attn, overrides)."""
        return [(attn.value, {"depth": 1, "input_size": STAND_IN_SIDE * self.patch_size}) for attn in ATTN_PATHS]

    def input_fields(self) -> dict[str, int]:
        """The fields that fix its input: the latent side."""
        return {"input_size": self.input_size}

    def on_pixels(self, image_size: int | None = None) -> DiTConfig:
        """The same DiT on pixels (3 channels, no VAE); already there, unchanged."""
        return self if self.space == "pixel" else pixel_space(self, image_size)

    def describe_input(self) -> str:
        """'latent 32x32 (256 px) -> T=256 tokens'."""
        return f"{self.space} {self.input_size}x{self.input_size} ({self.image_size} px) -> T={self.tokens} tokens"

    def summary(self) -> str:
        """One line for `list-models`."""
        return (
            f"L={self.depth:<3d} d={self.hidden_size:<5d} heads={self.num_heads:<3d} p={self.patch_size} "
            f"input={self.input_size} T={self.tokens}"
        )


def pixel_space(cfg: DiTConfig, image_size: int | None = None) -> DiTConfig:
    """The same DiT run on pixels: 3 channels, input side = image side (default: the latent's image)."""
    from dataclasses import replace

    return replace(cfg, space="pixel", in_channels=3, input_size=image_size or cfg.image_size)


# ---------------------------------------------------------------------------------------------
# Text-conditioned latent transformers: SD3 (MMDiT), FLUX.1, HunyuanVideo, Wan 2.1, CogVideoX
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LatentTransformerConfig:
    """A text-to-image or text-to-video transformer at its published dimensions, plus the input it runs on.

    Pixels (width x height x frames) -> VAE latents (/ vae_stride) -> patches (/ patch) -> I tokens;
    the text encoder's S tokens come in as embeddings (the text encoder and the VAE are not counted).
    """

    family: str  # a family in reference_models.families (mmdit, flux, wan, cogvideox): builder, formula, notes
    hidden_size: int  # d
    num_heads: int
    mlp_hidden: int  # h: the MLP's inner width (4d, except Wan: 13824 for 14B, 8960 for 1.3B)
    depth: int  # L: joint / double-stream / DiT blocks
    text_tokens: int  # S: text-encoder tokens the model attends to (SD3 77 + 256, FLUX-dev 512, ...)
    width: int  # pixels
    height: int  # pixels
    frames: int = 1  # pixel frames; 1 for an image model
    single_depth: int = 0  # L_s: single-stream blocks (FLUX.1 38, HunyuanVideo 40)
    in_channels: int = 16  # C: VAE latent channels
    out_channels: int = 16
    patch: tuple[int, int, int] = (1, 2, 2)  # (t, h, w) latent cells per token
    vae_stride: tuple[int, int, int] = (1, 8, 8)  # (t, h, w) pixels per latent cell; video VAEs (4, 8, 8)
    text_dim: int = 4096  # width of the text encoder's per-token states (T5-XXL, LLaVA-LLaMA)
    pooled_dim: int = 0  # width of the pooled text vector (SD3 2048 = CLIP-L + CLIP-G, FLUX/Hunyuan 768)
    freq_dim: int = 256  # f: sinusoid width fed to the timestep MLP
    time_embed_dim: int = 0  # E: CogVideoX's timestep width (512); 0 = d
    guidance_embed: bool = False  # guidance-distilled: a second timestep MLP for the guidance scale
    refiner_depth: int = 0  # HunyuanVideo's token-refiner blocks over the text tokens
    video: bool = False
    attn: str = "sdpa"  # fused scaled_dot_product_attention (the only path these models are built with)
    space: str = "latent"

    def __post_init__(self) -> None:
        from reference_models.families import FAMILIES

        if self.family not in FAMILIES:
            raise ConfigError(f"family must be one of {tuple(FAMILIES)}, got {self.family!r}")
        if self.attn != "sdpa":
            raise ConfigError(f"{self.family} models run fused attention only (attn='sdpa'), got {self.attn!r}")
        if self.space != "latent":
            raise ConfigError(f"{self.family} models run on VAE latents only; pixel space applies to DiT")
        _, sh, sw = (s * p for s, p in zip(self.vae_stride, self.patch))  # pixels per token along h, w
        for side, name, step in ((self.width, "width", sw), (self.height, "height", sh)):
            if side <= 0 or side % step:
                raise ConfigError(
                    f"{name} {side} is not a positive multiple of {step} (VAE x patch): "
                    f"try {max(step, side // step * step)}"
                )
        if not self.video and self.frames != 1:
            raise ConfigError(f"frames apply to video models; this is an image model (frames={self.frames})")
        if self.video and (self.frames < 1 or (self.frames - 1) % self.vae_stride[0]):
            k = max(0, (self.frames - 1) // self.vae_stride[0])
            raise ConfigError(
                f"frames {self.frames} must be {self.vae_stride[0]}k+1 for a {self.vae_stride[0]}x "
                f"temporal VAE: try {self.vae_stride[0] * k + 1}"
            )

    @property
    def grid(self) -> tuple[int, int, int]:
        """Tokens along (t, h, w): latent frames / p_t, H / 8 / p_h, W / 8 / p_w."""
        latent_frames = (self.frames - 1) // self.vae_stride[0] + 1 if self.video else 1
        return (
            latent_frames // self.patch[0],
            self.height // self.vae_stride[1] // self.patch[1],
            self.width // self.vae_stride[2] // self.patch[2],
        )

    @property
    def image_tokens(self) -> int:
        """I: image or video tokens, the product of the grid."""
        t, h, w = self.grid
        return t * h * w

    @property
    def tokens(self) -> int:
        """T = I + S: the joint sequence of the models that attend over image and text together."""
        return self.image_tokens + self.text_tokens

    @property
    def attended_tokens(self) -> int:
        """The sequence of the largest attention: the joint T, but Wan's self-attention is over its I video
        tokens only (the text enters through cross-attention)."""
        from reference_models.families import FAMILIES

        return self.tokens if FAMILIES[self.family].joint_attention else self.image_tokens

    @property
    def resolution(self) -> tuple[int, int]:
        """(W, H) pixels."""
        return self.width, self.height

    def resolution_fields(self, resolution: tuple[int, int], space: str | None = None) -> dict:
        """(W, H) pixels as fields."""
        return {"width": resolution[0], "height": resolution[1]}

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_heads

    def norm_outputs_per_token(self, part: str) -> int:
        """LayerNorm output elements per token: not modelled for a text-conditioned transformer (0)."""
        return 0

    def stand_ins(self) -> list[tuple[str, dict]]:
        """A smaller config of the same architecture for counters that cannot run this one: two blocks (SD3's last
        differs), one of each other kind, d = 64 over 2 heads (its MLP ratio kept), 8 text tokens of width 32, a
        STAND_IN_SIDE^2 token grid (2 latent frames for video); fused attention, its only path."""
        d = 64
        fields = {
            "depth": 2,
            "hidden_size": d,
            "num_heads": 2,
            "mlp_hidden": round(d * self.mlp_hidden / self.hidden_size),
            "text_tokens": 8,
            "text_dim": 32,
            "width": self.vae_stride[2] * self.patch[2] * STAND_IN_SIDE,
            "height": self.vae_stride[1] * self.patch[1] * STAND_IN_SIDE,
        }
        optional = {"single_depth": 1, "refiner_depth": 1, "pooled_dim": 16, "time_embed_dim": 32}
        fields.update({k: v for k, v in optional.items() if getattr(self, k)})
        if self.video:
            fields["frames"] = self.vae_stride[0] * (2 * self.patch[0] - 1) + 1  # 2 p_t latent frames: 2 token rows
        return [(Attn.SDPA.value, fields)]

    def input_fields(self) -> dict[str, int]:
        """The fields that fix its input: frames, height and width in pixels."""
        return {"frames": self.frames, "height": self.height, "width": self.width}

    @property
    def patch_volume(self) -> int:
        """p_t * p_h * p_w latent cells per token."""
        return self.patch[0] * self.patch[1] * self.patch[2]

    @property
    def timestep_width(self) -> int:
        """E: the timestep embedding's width (d unless the model says otherwise)."""
        return self.time_embed_dim or self.hidden_size

    def summary(self) -> str:
        """One line for `list-models`."""
        depth = f"{self.depth}+{self.single_depth}" if self.single_depth else str(self.depth)
        return (
            f"L={depth:<5s} d={self.hidden_size:<5d} heads={self.num_heads:<3d} {self.describe_input()}, "
            f"I={self.image_tokens} S={self.text_tokens}"
        )

    def describe_input(self) -> str:
        """'1024x1024 px -> 64x64 tokens' or '1280x720 px x 81 frames -> 21x45x80 tokens'."""
        t, h, w = self.grid
        if self.video:
            return f"{self.width}x{self.height} px x {self.frames} frames -> {t}x{h}x{w} tokens"
        return f"{self.width}x{self.height} px -> {h}x{w} tokens"
