"""Build a spec's model and inputs: its source's builder (SOURCES names one per prefix, builders/), then the model
in its mode, its weights zeroed off meta, and cut to its first blocks when asked."""

from __future__ import annotations

import importlib

from flopcheck.children import one_line
from flopcheck.specs import SOURCES, ModelSpec, SpecError, SpecSource
from flopcheck.specs.blocks import keep_blocks
from flopcheck.specs.built import Built
from flopcheck.specs.meta import zeroed

# what a forward counted in the factory's train mode says (a training step is train mode whatever: not said there)
TRAIN_MODE_NOTE = (
    "counted in train mode, as the factory returned it: no eval-only fast path (MultiheadAttention's fused "
    "kernel) runs, and every counter sees the model so; call .eval() in the factory to count inference"
)


def build(spec: ModelSpec, device: str = "meta") -> Built:
    """The spec's model (weights zeroed off meta) and inputs; a library's model in eval mode, a factory's in the mode
    it returned (its user's: train mode takes no eval-only fast path, and the notes say so). Its code's failures are
    SpecErrors."""
    notes: list[str] = []
    try:
        module, _, name = SOURCES[spec.source].build.partition(":")
        built: Built = getattr(importlib.import_module(module), name)(spec, device, notes)
    except SpecError:
        raise
    except Exception as err:  # noqa: BLE001 - whatever the user's or the library's code raised: one line
        raise SpecError(f"cannot build model {spec.text!r}: {one_line(err)}") from None
    if spec.source not in (
        SpecSource.MODULE,
        SpecSource.ZOO,
    ):  # a zoo entry was built as its own spec: its mode is that spec's
        built.model.eval()
    elif built.model.training:
        built.notes.append(TRAIN_MODE_NOTE)
    built.model = zeroed(built.model)
    if spec.options.blocks:
        keep_blocks(built.model, spec.options.blocks, spec.text)
    return built
