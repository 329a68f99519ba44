"""Pure functions from results to text and JSON-ready dicts: rendering starts no process and builds no model."""

from __future__ import annotations

import json
import math
from typing import Any


def _finite(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite(v) for v in x]
    return x


def to_json(obj: Any) -> str:
    """Strict JSON (a non-finite number, which JSON has none of, becomes null), indented, full integers."""
    return json.dumps(_finite(obj), indent=2, allow_nan=False)
