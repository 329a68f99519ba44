"""Writing a report's files into a folder, and never touching a file flopcheck did not write there.

A report leaves a manifest (MANIFEST, in `sha256sum`'s format: the SHA-256 of each file it wrote and its name, a
line each) for people to read and check. It proves nothing: a manifest is a file anyone can put in a folder, with
the true SHA-256 of any file beside it. A file in the folder is flopcheck's only on proof kept where the folder's
sender cannot write:
- the record this machine's flopcheck keeps of what it wrote into that folder (names and SHA-256, outside the
  folder: $FLOPCHECK_CACHE or ~/.cache, in flopcheck-reports/, one file per folder's real path), while the file's
  bytes still hash to what was recorded; or
- its bytes are exactly what the folder's results.json renders that file to (a committed report from another
  machine: its files are flopcheck's output by construction).
Writing again replaces and removes only files so proven, and says each file it removes; a file the new report would
replace that is not proven stops the report before anything is written, and a stale one that is not is kept and
said. A folder with files but no manifest is refused.

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

from flopcheck.cache import records_dir
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
    """What flopcheck wrote in a report folder: the names its manifest lists (a listing, no proof), and name ->
    SHA-256 from a proof the folder's sender cannot forge (this machine's record, or the folder's re-rendered
    results.json)."""

    names: dict[str, str | None] = field(default_factory=dict)
    proven: dict[str, str] = field(default_factory=dict)

    def proves(self, path: Path) -> bool:
        """True if the file at `path` is still exactly as flopcheck wrote it, by a proof outside the manifest."""
        want = self.proven.get(path.name)
        if want is None:
            return False
        data = _read_plain(path, 1 << 30)
        return data is not None and _digest(data) == want


def _parse_listing(data: bytes, path: Path) -> dict[str, str | None]:
    """Names and SHA-256 of a `sha256sum`-format listing (a name alone: no hash); bad input if it is not text."""
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
    return _parse_listing(data, path)


def record_path(out: Path) -> Path | None:
    """Where this machine keeps what flopcheck wrote into `out`: records_dir()/<SHA-256 of its real path>.txt."""
    folder = records_dir()
    return None if folder is None else folder / f"{_digest(str(out.resolve()).encode('utf-8'))}.txt"


def _recorded(out: Path) -> dict[str, str]:
    """Name -> SHA-256 of the files this machine's flopcheck last wrote into `out` (none if never, or no record)."""
    path = record_path(out)
    data = None if path is None else _read_plain(path, MANIFEST_MAX_BYTES)
    if data is None or path is None:
        return {}
    try:
        return {n: d for n, d in _parse_listing(data, path).items() if d}
    except InputError:
        return {}


def _rendered(out: Path) -> dict[str, str]:
    """SHA-256 of each file the folder's results.json renders to: a file with those bytes is flopcheck's output."""
    if _read_plain(out / "results.json", 1 << 30) is None:
        return {}
    try:
        return {n: _digest(t.encode("utf-8")) for n, t in render(read_results(out / "results.json")).items()}
    except (InputError, KeyError, TypeError, ValueError):
        return {}


def previous(out: Path | None) -> Owned:
    """What the last report in `out` wrote, each file proven outside the manifest; bad input if `out` holds files
    and no manifest (or `out` is not given)."""
    if out is None:
        raise InputError("--out is empty: name the report's folder, like reports")
    if not out.exists():
        return Owned()
    if out.is_symlink() or not out.is_dir():
        raise InputError(f"{out} is not a folder (or is a link): give a folder for the report")
    entries = sorted(os.listdir(out))
    if not entries:
        return Owned()
    names = _manifest(out)
    if not names:
        shown = ", ".join(entries[:3]) + (f" (+{len(entries) - 3} more)" if len(entries) > 3 else "")
        raise InputError(f"{out} holds files no flopcheck report wrote ({shown}): give an empty or new folder")
    rendered = _rendered(out)
    proven = {**{n: d for n, d in rendered.items() if n in names}, **_recorded(out)}
    return Owned({**names, MANIFEST: None}, proven)


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


def _record(out: Path, lines: str) -> None:
    """Keep, outside the folder, what was written into it (the proof a later report needs to remove a file)."""
    path = record_path(out)
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    _write(path, lines)


def write_report(out: Path, files: dict[str, str]) -> tuple[list[str], list[str], list[str]]:
    """Write `files` (name -> text) into `out` with a manifest of their SHA-256; remove what the last report there
    wrote, is proven still as written, and this one does not write. Returns the names written, the stale ones kept
    (no proof they are flopcheck's as written) and the stale ones removed."""
    names = [_checked(n) for n in files]
    owned = previous(out)
    _refuse_foreign(out, names, files, owned)
    stale = [out / n for n in sorted((set(owned.names) | set(owned.proven)) - set(names) - {MANIFEST})]
    present = [p for p in stale if p.exists() or p.is_symlink()]
    removed = [p for p in present if owned.proves(p)]
    kept = [p.name for p in present if p not in removed]
    out.mkdir(parents=True, exist_ok=True)
    for name in names:
        _write(out / name, files[name])
    for path in removed:
        path.unlink()
    lines = "".join(f"{_digest(files[n].encode('utf-8'))}  {n}\n" for n in sorted(names))
    _write(out / MANIFEST, lines)
    _record(out, lines)
    return names, kept, [p.name for p in removed]
