"""What every input builder shares: a config's first set size, and pixels through a VAE's strides into latents."""

from __future__ import annotations

from typing import Any

from flopcheck.specs import SpecError


def first_set(c: Any, keys: tuple[str, ...]) -> int | None:  # c: a library's config, or a dict
    """The first of the config's keys that is set."""
    for k in keys:
        v = getattr(c, k, None) if not isinstance(c, dict) else c.get(k)
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            return v
    return None


def latent_side(side: int, stride: int, what: str) -> int:
    if side % stride:
        raise SpecError(f"{what} {side} is not a multiple of {stride} (the VAE's stride x the patch): give one that is")
    return side // stride


def latent_frames(f: int, temporal: int) -> int:
    """Latent frames of a temporal VAE: (F - 1) / t + 1."""
    if f < 1 or (f - 1) % temporal:
        examples = "81, 49, 129" if temporal == 4 else f"{temporal + 1}, {2 * temporal + 1}, {3 * temporal + 1}"
        raise SpecError(
            f"frames {f} must be {temporal}k+1 for a VAE of {temporal} frames per latent frame ({examples}, ...)"
        )
    return (f - 1) // temporal + 1
