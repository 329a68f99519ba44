"""The measurement's parts that depend on what a model does with its data: a causal LM's generation with its KV
cache (exact.decode), and the note on the routing a mixture of experts was counted under (exact.routing)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flopcheck.exact.generation import Generation


def measure_generation(spec_dict: dict[str, Any], prompt: int, steps: int) -> dict[str, Any]:
    """A causal LM's generation counted on meta (exact.decode): its prefill of `prompt` tokens (0: as many as its
    counted forward's token ids) and `steps` decode steps with transformers' DynamicCache; a model that takes no cache
    is a SpecError."""
    from flopcheck.children import one_line
    from flopcheck.exact.decode import GenerationError, cache_keyword, count_generation
    from flopcheck.specs import ModelSpec, SpecError
    from flopcheck.specs.build import build

    spec = ModelSpec.from_dict(spec_dict)
    built = build(spec, "meta")
    try:
        cache_keyword(built.model)  # a model that takes no cache is refused before its prompt is asked for
        ids = next((a for a in built.args if hasattr(a, "shape") and len(a.shape) == 2), None)
        prompt = prompt or (int(ids.shape[1]) if ids is not None else 0)  # 0: the counted forward's tokens
        if not prompt:
            raise GenerationError("give the prompt's length: --prompt-tokens P")
        return count_generation(built.model, prompt, steps, spec.options.batch).to_dict()
    except GenerationError as err:
        raise SpecError(f"--generate: {err}") from None
    except Exception as err:  # noqa: BLE001 - the model's forward with a cache: one line
        raise SpecError(f"--generate: {spec.text} failed with a KV cache on meta: {one_line(err)}") from None


def routed(built: Any, count: Any) -> None:
    """The notes on what a count of routed experts assumed about its router, and on real tensors what each router
    was seen to do (the ExactCount's routing: exact.routing)."""
    from flopcheck.render.routing import routing_notes

    built.notes.extend(n for n in routing_notes(built.model, count.routing, count.device) if n not in built.notes)


def capacity_hint(model: Any) -> str:
    """'' unless the model routes experts with a capacity limit; else the refusal's pointer to --device cpu."""
    from flopcheck.render.routing import capacity_hint

    return capacity_hint(model)


def generation_of(d: dict[str, Any] | None) -> Generation | None:
    """A Generation from its JSON (None: not asked for)."""
    if d is None:
        return None
    from flopcheck.exact.generation import Generation

    return Generation.from_dict(d)
