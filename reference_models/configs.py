"""Model configs as plain dataclasses (no torch): the formula reads these, the builders build them."""
from __future__ import annotations

from dataclasses import dataclass

ATTN_PATHS = ("sdpa", "math")  # fused F.scaled_dot_product_attention, or explicit q @ k^T, softmax, @ v
VAE_FACTOR = 8  # the SD VAE downsamples 256 px to a 32 x 32 latent (DiT paper, section 3.1)


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
            raise ValueError(f"attn must be one of {ATTN_PATHS}, got {self.attn!r}")
        if self.input_size % self.patch_size:
            raise ValueError(
                f"input_size {self.input_size} is not divisible by patch_size {self.patch_size}: "
                f"pick a multiple of {self.patch_size}"
            )
        if self.hidden_size % self.num_heads:
            raise ValueError(f"hidden_size {self.hidden_size} is not divisible by num_heads {self.num_heads}")

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


def pixel_space(cfg: DiTConfig, image_size: int | None = None) -> DiTConfig:
    """The same DiT run on pixels: 3 channels, input side = image side (default: the latent's image)."""
    from dataclasses import replace

    return replace(cfg, space="pixel", in_channels=3, input_size=image_size or cfg.image_size)
