"""Writing a report's files into a folder, and never touching a file flopcheck did not write there.

A report leaves a manifest (MANIFEST, in `sha256sum`'s format: the SHA-256 of each file it wrote and its name, a
line each). A file in the folder is flopcheck's only while its bytes still hash to what the manifest says: a
manifest is a file anyone can put in a folder, so its word alone proves nothing. Writing again replaces and removes
only flopcheck's files; a file the new report would replace that is not flopcheck's stops the report before anything
is written, and a stale one that is not is left where it is. A manifest of names alone (reports before the hashes)
proves a file by the previous report's results.json: the file is flopcheck's if rendering that results.json gives
its bytes. A folder with files but no manifest is refused, unless it is a report from before manifests.

Each file is written to a new temporary name in the folder and renamed over the old one, so a hard link or a
symbolic link at a report's name is replaced, never written through. Names are checked (letters, digits, '.', '_',
'-'); the manifest is bounded in size before it is read.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from flopcheck.errors import InputError
from flopcheck.render.report import read_results, render
from flopcheck.sent import plain_bytes

MANIFEST = "flopcheck-manifest.txt"
MANIFEST_MAX_BYTES = 1 << 20  # 1 MiB: ~10,000 lines, 20x the largest report
_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*")
_HASHED = re.compile(r"([0-9a-f]{64})  (\S+)")


def _checked(name: str) -> str:
    """A file name a report may write: one plain name, no folder, no leading dot."""
    if not _NAME.fullmatch(name):
        raise InputError(f"a report file would be named {name!r}: only letters, digits, '.', '_' and '-' are written")
    return name


def _digest(data: bytes) -> str:
    """SHA-256 of `data`, in hex."""
    return hashlib.sha256(data).hexdigest()


def _read_plain(path: Path, limit: int) -> bytes | None:
    """The bytes of a regular file (not a link, FIFO or device) of at most `limit` bytes; None otherwise."""
    try:
        return plain_bytes(path, "a report's file", limit, follow=False)
    except InputError:
        return None


@dataclass
class Owned:
    """What flopcheck wrote in a report folder: name -> the SHA-256 it had when written (None: proven otherwise)."""

    names: dict[str, str | None] = field(default_factory=dict)
    legacy: dict[str, str] = field(default_factory=dict)  # name -> SHA-256 of the previous report's re-rendered file

    def proves(self, path: Path) -> bool:
        """True if the file at `path` is still exactly as flopcheck wrote it."""
        name = path.name
        want = self.names.get(name) or self.legacy.get(name)
        if name not in self.names or want is None:
            return False
        data = _read_plain(path, 1 << 30)
        return data is not None and _digest(data) == want


def _manifest(out: Path) -> dict[str, str | None] | None:
    """The manifest's names and hashes; None if there is none; bad input if it is not one flopcheck writes."""
    path = out / MANIFEST
    if not path.exists() and not path.is_symlink():
        return None
    data = _read_plain(path, MANIFEST_MAX_BYTES)
    if data is None:
        raise InputError(
            f"{path} is not a plain file of at most {MANIFEST_MAX_BYTES:,} bytes: flopcheck wrote no such manifest;"
            " give an empty or new folder"
        )
    try:
        lines = data.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        raise InputError(f"{path} is not text: flopcheck wrote no such manifest; give an empty or new folder") from None
    names: dict[str, str | None] = {}
    for line in filter(None, (ln.strip() for ln in lines)):
        hashed = _HASHED.fullmatch(line)
        name, digest = (hashed.group(2), hashed.group(1)) if hashed else (line, None)
        names[_checked(name)] = digest
    return names


def _legacy(out: Path, names: dict[str, str | None] | None) -> dict[str, str]:
    """SHA-256 of each file the previous report's results.json renders to (the proof for a manifest of names alone)."""
    legacy = out / "results.json"
    if (names is not None and all(names.values())) or _read_plain(legacy, 1 << 30) is None:
        return {}

    try:
        return {n: _digest(t.encode("utf-8")) for n, t in render(read_results(legacy)).items()}
    except (InputError, KeyError, TypeError, ValueError):
        return {}


def previous(out: Path | None) -> Owned:
    """What the last report in `out` wrote, each file proven by its bytes; bad input if `out` holds a file flopcheck
    did not write and there is no report there at all (or `out` is not given)."""
    if out is None:
        raise InputError("--out is empty: name the report's folder, like reports")
    if not out.exists():
        return Owned()
    if out.is_symlink() or not out.is_dir():
        raise InputError(f"{out} is not a folder (or is a link): give a folder for the report")
    entries = sorted(os.listdir(out))
    names = _manifest(out)
    legacy = _legacy(out, names) if entries else {}
    if names is None:
        names = dict.fromkeys(legacy)
    owned = Owned({**names, MANIFEST: None}, legacy) if names else Owned()
    if entries and not names:
        shown = ", ".join(entries[:3]) + (f" (+{len(entries) - 3} more)" if len(entries) > 3 else "")
        raise InputError(f"{out} holds files no flopcheck report wrote ({shown}): give an empty or new folder")
    return owned


def _write(path: Path, text: str) -> None:
    """Write `text` to a new temporary file beside `path`, then rename it over `path` (a link there is replaced)."""
    tmp = path.with_name(f".{path.name}.flopcheck-{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _refuse_foreign(out: Path, names: list[str], files: dict[str, str], owned: Owned) -> None:
    """Bad input if the report would replace a file in `out` that flopcheck did not write (or that changed since)."""
    for name in names:
        path = out / name
        if not (path.exists() or path.is_symlink()):
            continue
        if path.is_symlink():
            raise InputError(f"{path} is a symbolic link: flopcheck writes no file through a link; remove it first")
        same = _read_plain(path, 1 << 30) == files[name].encode("utf-8")
        if not same and not owned.proves(path):
            raise InputError(
                f"{path} is not as a flopcheck report wrote it (not in its manifest, or changed since):"
                " move it away or give an empty or new folder"
            )


def write_report(out: Path, files: dict[str, str]) -> tuple[list[str], list[str]]:
    """Write `files` (name -> text) into `out` with a manifest of their SHA-256; remove what the last report there
    wrote, is still as written, and this one does not write. Returns the names written and the stale ones kept."""
    names = [_checked(n) for n in files]
    owned = previous(out)
    _refuse_foreign(out, names, files, owned)
    stale = [out / n for n in sorted(set(owned.names) - set(names) - {MANIFEST})]
    out.mkdir(parents=True, exist_ok=True)
    for name in names:
        _write(out / name, files[name])
    kept = [p.name for p in stale if (p.exists() or p.is_symlink()) and not owned.proves(p)]
    for path in stale:
        if path.name not in kept and path.exists():
            path.unlink()
    lines = (f"{_digest(files[n].encode('utf-8'))}  {n}\n" for n in sorted(names))
    _write(out / MANIFEST, "".join(lines))
    return names, kept
