"""Inputs of one forward of a text encoder, 'transformers:CLASS': S token ids of zeros."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import torch

from flopcheck.specs import Options, SpecError
from flopcheck.specs.inputs.common import first_set

TEXT_DEFAULT = 512  # tokens, where the config states no maximum (T5: the FLUX pipeline's max_sequence_length)
# tokens at most by default: a long-context model (Llama 3.1's 131,072, Llama 4 Scout's 10,485,760) is counted at this
# length unless --text-tokens says otherwise (its max_position_embeddings is the longest it takes, not how it is run)
LONG_DEFAULT = 32_768
# no attention_mask: every token attends, as FLUX's and SD3's pipelines call their text encoders (a mask of ones would
# cost no FLOPs, but transformers reads its values to skip it, which meta tensors have none of)
TEXT_RULES: dict[str, Callable[[int, int, str], torch.Tensor]] = {
    "input_ids": lambda n, s, d: torch.zeros(n, s, dtype=torch.long, device=d),  # id 0: in every vocabulary
    "token_type_ids": lambda n, s, d: torch.zeros(n, s, dtype=torch.long, device=d),
}


def text_inputs(
    cls: str, model: Any, o: Options, device: str
) -> tuple[tuple[torch.Tensor], dict[str, Any], str]:  # model: a transformers model
    """(args, kwargs, words) for one forward of a text encoder on S tokens: --text-tokens, else the config's
    max_position_embeddings (CLIP: 77), else 512."""
    most = first_set(model.config, ("max_position_embeddings",))
    s = o.text_tokens or min(most or TEXT_DEFAULT, LONG_DEFAULT)
    if most and s > most:
        raise SpecError(f"--text-tokens {s}: {cls} takes at most {most} (its max_position_embeddings)")
    kwargs: dict[str, Any] = {}
    missing: list[str] = []
    decoder = bool(getattr(model.config, "is_encoder_decoder", False))  # T5, BART: the decoder runs on S tokens too
    for p in inspect.signature(type(model).forward).parameters.values():
        if decoder and p.name == "decoder_input_ids":
            kwargs[p.name] = TEXT_RULES["input_ids"](o.batch, s, device)
        elif p.name in TEXT_RULES and (p.name != "token_type_ids" or p.default is p.empty):
            kwargs[p.name] = TEXT_RULES[p.name](o.batch, s, device)
        elif p.name not in ("self", "return_dict") and p.default is p.empty and p.kind not in (p.VAR_KEYWORD,):
            missing.append(p.name)
    if missing:
        raise SpecError(
            f"flopcheck cannot build {cls}'s input{'s' if len(missing) > 1 else ''} {', '.join(missing)}: count its "
            f"encoder (T5EncoderModel, CLIPTextModel) or give --inputs module:fn"
        )
    ids = kwargs.pop("input_ids", None)
    if ids is None:
        raise SpecError(f"{cls}'s forward takes no input_ids: give its inputs with --inputs module:fn")
    kwargs["return_dict"] = False
    words = f"{s} tokens" + _why_length(o, most, s)
    words += f", and {s} decoder tokens" if "decoder_input_ids" in kwargs else ""
    return (ids,), kwargs, words + f", batch {o.batch}"


def _why_length(o: Options, most: int | None, s: int) -> str:
    """Why S tokens, in words: given, the config's maximum, flopcheck's cap below a longer maximum, or its default."""
    if o.text_tokens:
        return ""
    if most and most > s:
        return f" (flopcheck's default at most; its max_position_embeddings is {most:,}: give --text-tokens)"
    return " (its max_position_embeddings)" if most else " (flopcheck's default)"
