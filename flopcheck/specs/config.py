"""A published config.json, read without running anything it names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flopcheck import checks
from flopcheck.errors import InputError
from flopcheck.sent import json_sent
from flopcheck.specs import SpecError

SHIPPED = Path(__file__).resolve().parent.parent / "data"


def shipped(name: str) -> Path | None:
    """A config flopcheck ships (data/transformers/NAME.json, data/diffusers/NAME.json), named without a folder."""
    if "/" in name or name.endswith(".json"):
        return None
    found = [
        p for p in (SHIPPED / "transformers" / f"{name}.json", SHIPPED / "diffusers" / f"{name}.json") if p.exists()
    ]
    return found[0] if found else None


def read_config(path: str) -> dict[str, Any]:
    """A config.json as a dict (a name without a folder, like llama-3-8b, is a config flopcheck ships when no such
    file is here); a missing or malformed file, or one with auto_map (code to download: diffusers' and transformers'
    alike), is one line."""
    if not Path(path).exists() and "/" not in path and not path.endswith(".json"):
        if shipped(path) is None:
            names = sorted(p.stem for p in SHIPPED.glob("transformers/*.json"))
            raise SpecError(
                f"--config {path}: no such file and no shipped config of that name (transformers: {', '.join(names)})"
            )
        path = str(shipped(path))
    try:  # someone else's file: a plain file of bounded size and depth
        config = json_sent(path, "a config.json")
    except InputError as err:
        raise SpecError(f"--config {err}") from None
    if not isinstance(config, dict):
        raise SpecError(f"--config {path}: a config.json is one JSON object, got a {type(config).__name__}")
    try:
        checks.config_counts(config)
    except InputError as err:
        raise SpecError(f"--config {path}: {err}") from None
    if "auto_map" in config:
        raise SpecError(
            f"--config {path} has auto_map: it names code to download and run, which flopcheck never does "
            f"(no trust_remote_code); give a config of a class diffusers or transformers ships"
        )
    return config
