"""Files someone sends (a claims file, a config.json, a pipeline folder's model_index.json): read only when each is a
plain file of bounded size (a FIFO would block, a device never end), and parsed only within a bounded depth and size
(a YAML alias bomb or a document nested thousands deep is refused in one line, not expanded)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from flopcheck.errors import InputError

MAX_BYTES = 8 << 20  # 8 MiB: a claims file of ~40,000 claims, a config.json 1,000x the largest published
MAX_DEPTH = 32  # nesting: a claims entry is 3 deep, a diffusers config 4
MAX_NODES = 200_000  # values, aliases counted each time they are used


def plain_bytes(path: str | Path, what: str, limit: int = MAX_BYTES, follow: bool = True) -> bytes:
    """The bytes of `path` if it is a plain file of at most `limit` bytes (not through a link unless `follow`); else
    bad input naming `what` it should be."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | (0 if follow else getattr(os, "O_NOFOLLOW", 0))
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise InputError(f"{path}: No such file or directory; give {what}") from None
    except OSError as err:
        raise InputError(f"{path}: cannot be read ({err.strerror}): give {what}") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"{path} is not a plain file (a folder, a FIFO or a device): give {what}")
        if st.st_size > limit:
            raise InputError(f"{path} is {st.st_size:,} bytes, over the {limit:,} flopcheck reads: give {what}")
        return f.read(limit + 1)


def read_sent(path: str | Path, what: str, limit: int = MAX_BYTES) -> str:
    """The text of `path` if it is a plain file of at most `limit` bytes; else bad input naming `what` it should be."""
    try:
        return plain_bytes(path, what, limit).decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path} is not UTF-8 text: give {what}") from None


def json_sent(path: str | Path, what: str) -> Any:
    """A JSON file someone sent, read bounded (read_sent) and parsed within MAX_DEPTH; bad JSON is one line."""
    text = read_sent(path, what)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(f"{path}: not JSON ({err.msg} at line {err.lineno}): give {what}") from None
    except RecursionError:
        raise InputError(f"{path}: nested deeper than flopcheck reads: give {what}") from None
    check_shape(value, f"{path}", what)
    return value


def check_shape(value: Any, where: str, what: str) -> None:
    """Bad input if a parsed value nests deeper than MAX_DEPTH or holds more than MAX_NODES values (each use of a
    shared value counted: a YAML alias bomb is millions of uses of a few values)."""
    todo, seen = [(value, 1)], 0
    while todo:
        item, depth = todo.pop()
        seen += 1
        if depth > MAX_DEPTH:
            raise InputError(f"{where}: nested more than {MAX_DEPTH} deep: give {what}")
        if seen > MAX_NODES:
            raise InputError(f"{where}: more than {MAX_NODES:,} values (aliases expanded): give {what}")
        if isinstance(item, dict):
            todo += [(v, depth + 1) for v in item.values()]
        elif isinstance(item, list | tuple):
            todo += [(v, depth + 1) for v in item]
