"""Plugins: modules that register counters, causes or custom-operator formulas from outside flopcheck, one file each.

A plugin module is imported once, when flopcheck.counters is first imported or an exact count begins:
the modules named in the environment variable FLOPCHECK_PLUGINS (comma-separated, importable from
sys.path), then those a distribution registers under the entry-point group `flopcheck.plugins`. Importing a plugin runs
its code: name only modules you trust. Worker processes inherit the variable and load the same.
"""

from __future__ import annotations

import importlib
import os
from importlib.metadata import entry_points

from flopcheck.errors import InputError

ENV = "FLOPCHECK_PLUGINS"
GROUP = "flopcheck.plugins"
LOADED: list[str] = []


def names() -> list[str]:
    """The plugin modules to load: FLOPCHECK_PLUGINS, then the `flopcheck.plugins` entry points."""
    listed = [n.strip() for n in os.environ.get(ENV, "").split(",") if n.strip()]
    return listed + [ep.value for ep in entry_points(group=GROUP)]


def load() -> list[str]:
    """Import every plugin module not yet imported; one that fails to import is bad input naming it."""
    for name in names():
        if name in LOADED:
            continue
        try:
            importlib.import_module(name)
        except (Exception, SystemExit) as err:  # whatever a plugin raises on import (sys.exit too): one line
            first = (str(err).strip().splitlines() or [""])[0]
            raise InputError(
                f"plugin {name!r} (named in {ENV} or a {GROUP!r} entry point) failed to import: "
                f"{type(err).__name__}: {first}; fix the module or remove it from {ENV}"
            ) from None
        LOADED.append(name)
    return list(LOADED)
