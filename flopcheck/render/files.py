"""Writing a report's files into a folder, and never touching a file flopcheck did not write there.

A report leaves a manifest (MANIFEST: the names it wrote, one a line). Writing again removes only the
files the last manifest names and this report does not write. A folder with files but no manifest is
refused, unless it is a report from before manifests (its results.json says which files it made).
Names are checked (letters, digits, '.', '_', '-'), and no file is written through a symbolic link.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from flopcheck.errors import InputError

MANIFEST = "flopcheck-manifest.txt"
_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*")


def _checked(name: str) -> str:
    """A file name a report may write: one plain name, no folder, no leading dot."""
    if not _NAME.fullmatch(name):
        raise InputError(f"a report file would be named {name!r}: only letters, digits, '.', '_' and '-' are written")
    return name


def previous(out: Path | None) -> set[str]:
    """The files the last report in `out` wrote; bad input if `out` holds anything else (or is not given)."""
    if out is None:
        raise InputError("--out is empty: name the report's folder, like reports")
    if not out.exists():
        return set()
    if out.is_symlink() or not out.is_dir():
        raise InputError(f"{out} is not a folder (or is a link): give a folder for the report")
    entries = sorted(os.listdir(out))
    manifest = out / MANIFEST
    if manifest.is_file() and not manifest.is_symlink():
        return {_checked(n) for n in manifest.read_text(encoding="utf-8").split()} | {MANIFEST}
    legacy = out / "results.json"
    if entries and legacy.is_file() and not legacy.is_symlink():
        from flopcheck.render.render import read_results, render

        try:
            return set(render(read_results(legacy)))
        except (InputError, KeyError, TypeError, ValueError):
            pass
    if entries:
        shown = ", ".join(entries[:3]) + (f" (+{len(entries) - 3} more)" if len(entries) > 3 else "")
        raise InputError(f"{out} holds files no flopcheck report wrote ({shown}): give an empty or new folder")
    return set()


def _write(path: Path, text: str) -> None:
    """Write without following a link at `path` (a link there is refused, not replaced)."""
    if path.is_symlink():
        raise InputError(f"{path} is a symbolic link: flopcheck writes no file through a link; remove it first")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)


def write_report(out: Path, files: dict[str, str]) -> list[str]:
    """Write `files` (name -> text) into `out` with a manifest; remove what the last report there wrote and this one
    does not. Returns the names written."""
    names = [_checked(n) for n in files]
    stale = previous(out) - set(names) - {MANIFEST}
    out.mkdir(parents=True, exist_ok=True)
    for name in names:
        _write(out / name, files[name])
    for name in sorted(stale):
        path = out / name
        if path.is_file() and not path.is_symlink():
            path.unlink()
    _write(out / MANIFEST, "".join(f"{n}\n" for n in sorted(names)))
    return names
