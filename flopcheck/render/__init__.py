"""Pure functions from results to text and JSON-ready dicts: rendering starts no process and builds no model."""

from __future__ import annotations

import json
import math
import textwrap
from typing import Any

COLUMNS = 100  # the width a verb's text fits in a terminal (a proof's or a table's long note wraps under its line)


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


def fit(line: str, width: int = COLUMNS, at: int = 0) -> list[str]:
    """A line as lines of at most `width` columns: where it is longer, the text after column `at` (a note beside a
    label and a number; 0: the whole line) wrapped onto lines of its own, indented under it; a word longer than the
    width (a path) stays whole."""
    if len(line) <= width:
        return [line]
    indent = " " * (len(line) - len(line.lstrip()) + 4)
    head, note = (line[:at].rstrip(), line[at:].strip()) if at else ("", line.strip())
    wrapped = textwrap.wrap(
        note,
        width,
        initial_indent=indent if head else line[: len(line) - len(line.lstrip())],
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    )
    return [head, *wrapped] if head else wrapped


def hang(line: str, indent: int, width: int = COLUMNS) -> list[str]:
    """A 'label  text' line within `width` columns: the text wrapped, its next lines indented `indent` (under the
    text, past the label); a word longer than the width (a path) stays whole."""
    if len(line) <= width:
        return [line]
    return textwrap.wrap(line, width, subsequent_indent=" " * indent, break_long_words=False, break_on_hyphens=False)
