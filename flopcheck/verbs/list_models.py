"""The list-models verb: the reference models, the published language models (by family) or the zoo's, matching a
pattern, one line each."""

from __future__ import annotations

import fnmatch

from flopcheck.errors import InputError
from flopcheck.specs.lms import LM, families
from flopcheck.zoo import BY_NAME, names
from reference_models import get_config, list_models

LM_PREFIX = "lm:"  # a pattern of the language models alone: 'lm:*', 'lm:Qwen*'
LM_HEADER = "language models by name (transformers' class on the config.json flopcheck ships; count NAME):"


def run(pattern: str = "*") -> str:
    """The reference models and the language models matching a shell pattern ('DiT-XL/*', 'Llama*', case-blind for
    the language models), one line each: name and configuration, the language models grouped by family; 'lm:*' the
    language models alone; a pattern of the zoo's ('zoo:*', 'zoo:timm-*'): each zoo model, the spec it is and what
    it puts to the counters."""
    if pattern.startswith("zoo:"):
        found = [BY_NAME[n.removeprefix("zoo:")] for n in names(pattern)]
        if not found:
            raise InputError(f"no zoo model matches {pattern!r}; try `flopcheck list-models 'zoo:*'`")
        return "\n".join(f"zoo:{e.name:32s} {e.spec:41s} {e.what}" for e in found)
    models = [] if pattern.startswith(LM_PREFIX) else list_models(pattern)
    grouped = _language_models(pattern.removeprefix(LM_PREFIX))
    if not models and not grouped:
        raise InputError(
            f"no model matches {pattern!r}; try `flopcheck list-models`, `flopcheck list-models 'lm:*'` or "
            f"`flopcheck list-models 'zoo:*'`"
        )
    lines = [f"{name:12s} {get_config(name).summary()}" for name in models]
    if grouped:
        lines += ([""] if lines else []) + [LM_HEADER]
        for family, members in grouped.items():
            lines += [f"  {family}"] + [f"    {lm.name:18s} {lm.spec}" for lm in members]
    return "\n".join(lines)


def _language_models(pattern: str) -> dict[str, list[LM]]:
    """The language models whose name, hub repository or alias matches the pattern (case-blind), by family."""
    pattern = pattern.lower()

    def matches(lm: LM) -> bool:
        return any(fnmatch.fnmatchcase(n.lower(), pattern) for n in (lm.name, lm.hub, *lm.aliases) if n)

    grouped = {family: [lm for lm in found if matches(lm)] for family, found in families().items()}
    return {family: found for family, found in grouped.items() if found}
