"""Counters: one module per library and mechanism, each registering itself with `@counter`.

A counter module (see fvcore_jit.py) defines its adapter, `run(model, inputs) -> Measurement`,
decorated with `@counter(name, library=..., unit=..., install=..., convention=...)`, and, where
its detail needs a rule of its own, the reading of that detail as exact parts (`reader=`), beside it.
Importing this package imports every counter module here (they import no torch and no counter
library until `run`), then the plugin modules (flopcheck.plugins): a counter from elsewhere is one file.
The worker pool (pool.py, worker.py) runs them, each count in its own forked process.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from flopcheck.errors import InputError
from flopcheck.types import Count, Unit

if TYPE_CHECKING:
    from torch import nn

    from flopcheck.counters.base import Measurement
    from flopcheck.reconciler.parts import Part
    from flopcheck.reconciler.reference import Reference

Reader = Callable[[Count, "Reference"], list["Part"]]  # a counter's detail read as exact parts
Adapter = Callable[["nn.Module", tuple[Any, ...]], "Measurement"]  # run(model, inputs), called in a worker only

INFRASTRUCTURE = frozenset({"base", "pool", "worker"})  # the modules here that are not counters


@dataclass(frozen=True)
class CounterSpec:
    """A counter: its adapter (module and function), its library, the unit its docs define, how to install it,
    and how to read its detail (None: by the kinds its items state, or op by op)."""

    name: str
    module: str  # the module that holds the adapter
    library: str  # distribution name, for its version
    unit: Unit
    install: str  # the fix when it is missing
    convention: str  # the library's own words on its unit
    mechanism: str = ""  # how it sees the work: a jit trace, module hooks, a dispatch mode, ...
    skips: str = ""  # what it leaves out or adds, in words (the causes name each exactly)
    required: bool = False  # on the card: must give a number or a named error
    import_name: str = ""  # what must import for it to be available (default: the library)
    function: str = "run"
    order: int = 1000  # where it stands in tables: the card's counters first
    on_meta: bool = False  # reads shapes only: counted on meta tensors, as it is designed to run
    reader: Reader | None = field(default=None, compare=False, repr=False)

    def payload(self) -> dict[str, Any]:
        """What a worker process needs to load and run it, JSON-ready."""
        return {
            "name": self.name,
            "module": self.module,
            "function": self.function,
            "library": self.library,
            "import_name": self.import_name or self.library,
            "unit": self.unit.value,
            "install": self.install,
            "on_meta": self.on_meta,
        }


COUNTERS: dict[str, CounterSpec] = {}


def add_counter(spec: CounterSpec) -> CounterSpec:
    """Add a counter; a name registers once. COUNTERS stays in table order."""
    if spec.name in COUNTERS:
        raise ValueError(f"counter {spec.name!r} is registered twice")
    COUNTERS[spec.name] = spec
    ordered = sorted(COUNTERS.values(), key=lambda s: (s.order, s.name))
    COUNTERS.clear()
    COUNTERS.update((s.name, s) for s in ordered)
    return spec


def counter(
    name: str, *, library: str, unit: Unit, install: str, convention: str, **options: Any
) -> Callable[[Adapter], Adapter]:
    """Decorator: the function is the adapter of counter `name` (`options`: CounterSpec's other fields)."""

    def wrap(run: Adapter) -> Adapter:
        add_counter(
            CounterSpec(
                name=name,
                module=run.__module__,
                function=run.__name__,
                library=library,
                unit=unit,
                install=install,
                convention=convention,
                **options,
            )
        )
        return run

    return wrap


def get_spec(name: str) -> CounterSpec:
    """The spec of a registered counter; an unknown name lists the known ones."""
    if name not in COUNTERS:
        raise InputError(f"unknown counter {name!r}; known: {', '.join(COUNTERS)}")
    return COUNTERS[name]


for _info in pkgutil.iter_modules(__path__):
    if _info.name not in INFRASTRUCTURE:
        importlib.import_module(f"{__name__}.{_info.name}")

from flopcheck import plugins  # noqa: E402  (after the built-ins: a plugin may refer to them)

plugins.load()
REQUIRED = tuple(n for n, s in COUNTERS.items() if s.required)  # the card's: a number or a named error, always
