"""Results kept by key, in one kind of object: in this process, and (for counters' counts) on disk between runs.

`COUNTS` holds counters' counts, keyed by `count_key(counter, job)`: the counter's adapter source, flopcheck's shared
counting code, the library's version and the job, so a change to any of them makes a new key. It lives in
$FLOPCHECK_CACHE (or ~/.cache)/flopcheck-counts ('off': this process only). Beside it, flopcheck-reports keeps
what each report wrote into its folder (flopcheck.render.files): the two folders flopcheck writes there.
`MEASURED` holds the specs' measurements (their child processes' answers) for this process.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from flopcheck import codec
from flopcheck.types import outcome_of

CACHE_ENV = "FLOPCHECK_CACHE"
CACHE_FOLDER = "flopcheck-counts"  # the one folder flopcheck writes its counts in; nothing else is touched


RECORDS_FOLDER = "flopcheck-reports"  # what each report wrote, by folder: the proof that lets it remove a file


def _base() -> Path | None:
    """$FLOPCHECK_CACHE, or $XDG_CACHE_HOME, or ~/.cache; None when the cache is off."""
    root = os.environ.get(CACHE_ENV, "")
    if root.lower() in ("off", "0", "none"):
        return None
    return Path(root) if root else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


def cache_dir() -> Path | None:
    """Where counts are kept between runs: $FLOPCHECK_CACHE (or ~/.cache)/flopcheck-counts; None when off."""
    base = _base()
    return None if base is None else base / CACHE_FOLDER


def records_dir() -> Path | None:
    """Where the record of each report's files is kept: $FLOPCHECK_CACHE (or ~/.cache)/flopcheck-reports."""
    base = _base()
    return None if base is None else base / RECORDS_FOLDER


class Cache:
    """Values by key in this process; with a folder, also on disk as one JSON file a key, written atomically (a
    damaged file is a miss, and is written again: the folder is flopcheck's own)."""

    def __init__(
        self,
        folder: Callable[[], Path | None] | None = None,
        encode: Callable[[Any], dict[str, Any]] | None = None,
        decode: Callable[[dict[str, Any]], Any] | None = None,
    ):
        self._memory: dict[str, Any] = {}
        self._folder, self._encode, self._decode = folder, encode, decode

    def get(self, key: str) -> Any:
        """The value kept under key, or None."""
        if key in self._memory:
            return self._memory[key]
        folder = self._folder() if self._folder else None
        if folder is None or self._decode is None or not (folder / f"{key}.json").is_file():
            return None
        try:
            self._memory[key] = self._decode(json.loads((folder / f"{key}.json").read_text()))
        except (OSError, ValueError, TypeError, KeyError):
            return None
        return self._memory[key]

    def put(self, key: str, value: Any, keep: bool = True) -> None:
        """Keep value under key; `keep`: on disk too (where this cache has a folder)."""
        self._memory[key] = value
        folder = self._folder() if self._folder else None
        if folder is None or self._encode is None or not keep:
            return
        try:
            folder.mkdir(parents=True, exist_ok=True)
            tmp = folder / f".{key}.{os.getpid()}.tmp"
            tmp.write_text(json.dumps(self._encode(value)))
            tmp.replace(folder / f"{key}.json")
        except OSError:
            pass  # a read-only home: counted again next time, nothing else changes

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not None

    def clear(self) -> None:
        """Forget what this process holds (the disk is left as it is)."""
        self._memory.clear()

    @contextlib.contextmanager
    def isolated(self) -> Iterator[Cache]:
        """Within the block this process holds nothing from before (a test's own cache); after it, what it held."""
        saved, self._memory = self._memory, {}
        try:
            yield self
        finally:
            self._memory = saved


_SHARED: list[str] = []


def _shared_source() -> str:
    """The hash of flopcheck's counting code every adapter shares (the counters' package, the exact count): a
    change there makes every cached count stale."""
    if not _SHARED:
        root = Path(__file__).resolve().parent
        digest = hashlib.sha256()
        for f in sorted([*(root / "counters").glob("*.py"), *(root / "exact").glob("*.py"), root / "children.py"]):
            digest.update(f.name.encode() + f.read_bytes())
        _SHARED.append(digest.hexdigest())
    return _SHARED[0]


def count_key(counter: str, job: dict[str, Any]) -> str:
    """A count's identity: its adapter's source, the shared counting code, its library's version, and the job
    (model, input, path) as the worker takes it."""
    # lazy: door start-up (the counters' registry imports every adapter; see subject.counts_of), and the worker
    # may import torch
    from flopcheck.counters import COUNTERS
    from flopcheck.counters.worker import version

    spec = COUNTERS[counter]
    found = importlib.util.find_spec(spec.module)
    source = Path(found.origin).read_bytes() if found and found.origin else b""
    ident = json.dumps(
        {
            "counter": counter,
            "source": hashlib.sha256(source).hexdigest(),
            "shared": _shared_source(),
            "version": version(spec.library),
            "job": job,
        },
        sort_keys=True,
    )
    return hashlib.sha256(ident.encode()).hexdigest()[:32]


COUNTS = Cache(cache_dir, encode=codec.encode, decode=outcome_of)
MEASURED = Cache()  # spec JSON -> its child's answer: each spec and input is measured once a process
FINGERPRINTS = Cache()  # a count on a claim's model -> its convention in words

__all__ = ["COUNTS", "FINGERPRINTS", "MEASURED", "Cache", "cache_dir", "count_key"]
