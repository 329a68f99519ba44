"""A published config.json, read without running anything it names."""

from __future__ import annotations

from flopcheck.errors import InputError
from flopcheck.sent import json_sent
from flopcheck.specs import SpecError


def read_config(path: str) -> dict:
    """A config.json as a dict; a missing or malformed file, or one with auto_map (code to download: diffusers' and
    transformers' alike), is one line."""
    try:  # someone else's file: a plain file of bounded size and depth
        config = json_sent(path, "a config.json")
    except InputError as err:
        raise SpecError(f"--config {err}") from None
    if not isinstance(config, dict):
        raise SpecError(f"--config {path}: a config.json is one JSON object, got a {type(config).__name__}")
    if "auto_map" in config:
        raise SpecError(
            f"--config {path} has auto_map: it names code to download and run, which flopcheck never does "
            f"(no trust_remote_code); give a config of a class diffusers or transformers ships"
        )
    return config
