"""zoo:NAME, a model of the third-party zoo: the spec its entry names, built as that spec is."""

from __future__ import annotations

from flopcheck.specs import ModelSpec, parse, zoo_entry
from flopcheck.specs.build import build
from flopcheck.specs.built import Built


def from_zoo(spec: ModelSpec, device: str, notes: list[str]) -> Built:
    """The zoo entry's own spec (flopcheck.zoo), built as that spec is, with the zoo spec's batch; the notes say
    which spec it is."""
    e = zoo_entry(spec.name)
    built = build(parse(e.spec, batch=spec.options.batch, **e.options_given()), device)
    built.notes.insert(0, f"zoo:{e.name} is {e.spec}" + "".join(f", {k} {v}" for k, v in e.options.items()))
    return built
