"""Results kept by key, in one kind of object: in this process, and (for counters' counts) on disk between runs.

`COUNTS` holds counters' counts, keyed by `count_key(counter, job)`: the counter's adapter source, flopcheck's shared
counting code, the library's version and the job, so a change to any of them makes a new key. It lives in
$FLOPCHECK_CACHE (or ~/.cache)/flopcheck-counts ('off': this process only). Beside it, flopcheck-reports keeps
what each report wrote into its folder (flopcheck.render.files), and flopcheck-measured the specs' measurements:
the three folders flopcheck writes there.
`MEASURED` holds the specs' measurements (their child processes' answers), keyed by the spec's JSON and its step.
A forward on meta of a spec whose code is flopcheck's or an installed library's is kept on disk too
(`measured_key`: the spec's text and options, its config file's bytes, flopcheck's code and the builders' library
versions), so a second report or audit of the same models builds none of them; a user's module, a training step
or an error is measured again in each process.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from flopcheck import codec
from flopcheck.types import outcome_of

CACHE_ENV = "FLOPCHECK_CACHE"
# the three folders flopcheck writes under the cache's base; nothing else there is touched
CACHE_FOLDER = "flopcheck-counts"  # the counters' counts, one file a count
RECORDS_FOLDER = "flopcheck-reports"  # what each report wrote, by folder: the proof that lets it remove a file
MEASURED_FOLDER = "flopcheck-measured"  # the specs' measurements (a forward on meta), one file a spec


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


def measured_dir() -> Path | None:
    """Where the specs' measurements are kept between runs: $FLOPCHECK_CACHE (or ~/.cache)/flopcheck-measured."""
    base = _base()
    return None if base is None else base / MEASURED_FOLDER


def records_dir() -> Path | None:
    """Where the record of each report's files is kept: $FLOPCHECK_CACHE (or ~/.cache)/flopcheck-reports."""
    base = _base()
    return None if base is None else base / RECORDS_FOLDER


def _same(key: str) -> str | None:
    return key


class Cache:
    """Values by key in this process; with a folder, also on disk as one JSON file a key (its file's name:
    `on_disk(key)`, None for a key kept in this process only; a value that is not `lasting` is kept in this process
    only too), written atomically (a damaged file is a miss, and is
    written again: the folder is flopcheck's own)."""

    def __init__(
        self,
        folder: Callable[[], Path | None] | None = None,
        encode: Callable[[Any], dict[str, Any]] | None = None,
        decode: Callable[[dict[str, Any]], Any] | None = None,
        on_disk: Callable[[str], str | None] = _same,
        lasting: Callable[[Any], bool] = bool,
    ):
        self._memory: dict[str, Any] = {}
        self._folder, self._encode, self._decode, self._on_disk = folder, encode, decode, on_disk
        self._lasting = lasting

    def _file(self, key: str) -> Path | None:
        """The file that keeps key's value, or None (no folder, the cache off, or a key for this process only)."""
        folder = self._folder() if self._folder else None
        name = self._on_disk(key) if folder is not None else None
        return None if folder is None or name is None else folder / f"{name}.json"

    def get(self, key: str) -> Any:
        """The value kept under key, or None."""
        if key in self._memory:
            return self._memory[key]
        file = self._file(key)
        if file is None or self._decode is None or not file.is_file():
            return None
        try:
            self._memory[key] = self._decode(json.loads(file.read_text()))
        except (OSError, ValueError, TypeError, KeyError):
            return None
        return self._memory[key]

    def put(self, key: str, value: Any, keep: bool = True) -> None:
        """Keep value under key; `keep`: on disk too (where this cache has a folder)."""
        self._memory[key] = value
        file = self._file(key) if self._encode is not None and keep and self._lasting(value) else None
        if file is None or self._encode is None:
            return
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
            tmp = file.with_name(f".{file.stem}.{os.getpid()}.{threading.get_ident()}.tmp")
            tmp.write_text(json.dumps(self._encode(value)))
            tmp.replace(file)
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


# the libraries whose code builds a spec's model (specs.builders): a new version of one is a new measurement
BUILDERS = ("torch", "timm", "torchvision", "diffusers", "transformers")
FORWARD = {"training": False, "frozen": [], "checkpointed": [], "optimizer": ""}  # specs.child's forward-only step
_OWN: list[str] = []


def _version(library: str) -> str:
    """Its installed version, or '' (not installed): without importing it, or flopcheck's counters."""
    import importlib.metadata  # lazy: door start-up (75 ms), paid where a spec is measured

    try:
        return importlib.metadata.version(library)
    except importlib.metadata.PackageNotFoundError:
        return ""


def _own_code() -> str:
    """The hash of flopcheck's and reference_models' code and shipped data (configs, the zoo), and the builders'
    library versions: what a spec's measurement is made by besides the spec itself."""
    if not _OWN:
        digest = hashlib.sha256()
        for package in ("flopcheck", "reference_models"):
            root = Path(__file__).resolve().parent.parent / package
            for f in sorted(p for p in root.rglob("*") if p.suffix in (".py", ".json", ".yaml") and p.is_file()):
                digest.update(str(f.relative_to(root)).encode() + f.read_bytes())
        digest.update(json.dumps({lib: _version(lib) for lib in ("flopcheck", *BUILDERS)}).encode())
        _OWN.append(digest.hexdigest())
    return _OWN[0]


def measured_key(key: str) -> str | None:
    """The file name of a spec's measurement on disk: the hash of its key (the spec's text and options, which name
    its input) with its config file's bytes and flopcheck's own code and versions (_own_code); None (this process
    only) for any other step than a forward on meta (a training step, a generation, a real-tensor run) and for code
    flopcheck cannot hash without running it: a user's module spec or inputs function."""
    from flopcheck.specs import ModelSpec, SpecSource  # lazy: the cache is imported before the specs' package

    try:
        asked = json.loads(key)
        spec = ModelSpec.from_dict(asked)
    except (ValueError, TypeError, KeyError):
        return None
    step = {k: v for k, v in asked.items() if k not in ("text", "options")}
    if step != FORWARD or spec.source is SpecSource.MODULE or spec.options.inputs:
        return None
    config = spec.options.config
    config_bytes = Path(config).read_bytes() if config and Path(config).is_file() else b""
    ident = [key, hashlib.sha256(config_bytes).hexdigest(), _own_code()]
    return hashlib.sha256(json.dumps(ident).encode()).hexdigest()[:32]


def _answer(d: dict[str, Any]) -> dict[str, Any]:
    """A measurement as read from its file (one that is not, an error or no object, is a miss)."""
    if not _measurement(d):
        raise ValueError("not a measurement")
    return d


def _measurement(d: Any) -> bool:
    """A child's answer that lasts between runs: a measurement, never an error (a failed build is measured again)."""
    return isinstance(d, dict) and "error" not in d


COUNTS = Cache(cache_dir, encode=codec.encode, decode=outcome_of)
# spec JSON -> its child's answer: each spec and input measured once a process, a forward on meta once a machine
MEASURED = Cache(measured_dir, encode=_answer, decode=_answer, on_disk=measured_key, lasting=_measurement)
FINGERPRINTS = Cache()  # a count on a claim's model -> its convention in words

__all__ = ["COUNTS", "FINGERPRINTS", "MEASURED", "Cache", "cache_dir", "count_key", "measured_dir", "measured_key"]
