"""The list-models verb: the reference models (or the zoo's) matching a pattern, one line each."""

from __future__ import annotations

from flopcheck.errors import InputError
from flopcheck.zoo import BY_NAME, names
from reference_models import get_config, list_models


def run(pattern: str = "*") -> str:
    """The reference models matching a shell pattern ('DiT-XL/*'), one line each: name and configuration; a pattern
    of the zoo's ('zoo:*', 'zoo:timm-*'): each zoo model, the spec it is and what it puts to the counters."""
    if pattern.startswith("zoo:"):
        found = [BY_NAME[n.removeprefix("zoo:")] for n in names(pattern)]
        if not found:
            raise InputError(f"no zoo model matches {pattern!r}; try `flopcheck list-models 'zoo:*'`")
        return "\n".join(f"zoo:{e.name:32s} {e.spec:41s} {e.what}" for e in found)
    models = list_models(pattern)
    if not models:
        raise InputError(
            f"no model matches {pattern!r}; try `flopcheck list-models` or `flopcheck list-models 'zoo:*'`"
        )
    return "\n".join(f"{name:12s} {get_config(name).summary()}" for name in models)
