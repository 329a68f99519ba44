"""Shared helpers: the 12 DiT configs of the paper's Table 4."""
DIT_NAMES = [f"DiT-{s}/{p}" for s in ("S", "B", "L", "XL") for p in (2, 4, 8)]
