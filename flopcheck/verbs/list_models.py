"""The list-models verb: the reference models, the published language models (by family) or the zoo's, matching a
pattern, one line each."""

from __future__ import annotations

import fnmatch
import json
from typing import Any

from flopcheck.errors import InputError
from flopcheck.specs.config import SHIPPED
from flopcheck.specs.lms import LM, families
from flopcheck.zoo import BY_NAME, names
from reference_models import get_config, list_models

LM_PREFIX = "lm:"  # a pattern of the language models alone: 'lm:*', 'lm:Qwen*'
LM_HEADER = "language models by name: shape, the transformers class and the config flopcheck ships (--config NAME)"


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
            lines += [f"  {family}"] + [f"    {lm.name:17s}{shape(lm):42s}{lm.cls} {lm.config}" for lm in members]
    return "\n".join(lines)


def _language_models(pattern: str) -> dict[str, list[LM]]:
    """The language models whose name, hub repository or alias matches the pattern (case-blind), by family."""
    pattern = pattern.lower()

    def matches(lm: LM) -> bool:
        return any(fnmatch.fnmatchcase(n.lower(), pattern) for n in (lm.name, lm.hub, *lm.aliases) if n)

    grouped = {family: [lm for lm in found if matches(lm)] for family, found in families().items()}
    return {family: found for family, found in grouped.items() if found}


# a config's value under the first of its names that it has (GPT-2's n_layer, Llama's num_hidden_layers, ...)
SHAPE_KEYS = {
    "L": ("num_hidden_layers", "n_layer"),
    "d": ("hidden_size", "n_embd"),
    "heads": ("num_attention_heads", "n_head"),
    "kv": ("num_key_value_heads", "num_kv_heads"),
    "experts": ("num_local_experts", "n_routed_experts", "num_experts"),
    "top": ("num_experts_per_tok",),
}


def shape(lm: LM) -> str:
    """Its shape from its shipped config: 'L=32 d=4096 heads=32/8' (query/key-value heads), ' experts=8 top-2'."""
    path = SHIPPED / "transformers" / f"{lm.config}.json"
    if not path.exists():
        return f"(no {lm.config}.json in this install)"
    config: dict[str, Any] = json.loads(path.read_text())

    def value(name: str) -> Any:
        return next((config[k] for k in SHAPE_KEYS[name] if config.get(k) is not None), None)

    heads = value("heads")
    kv = 1 if config.get("multi_query") else value("kv") or heads
    text = f"L={value('L')} d={value('d')} heads={heads}" + (f"/{kv}" if kv != heads else "")
    return text + (f" experts={value('experts')} top-{value('top')}" if value("experts") else "")
