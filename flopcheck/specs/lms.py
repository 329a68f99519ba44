"""Published language models by name: 'Llama-3-8B' is transformers' LlamaForCausalLM on the config.json flopcheck
ships for it (data/transformers/llama-3-8b.json, its source in the file's "_source").

One normalizer reads the spellings people write ("Llama-3-8B", "Llama 3 8B", "llama3-8b", "Meta-Llama-3-8B",
"meta-llama/Meta-Llama-3-8B-Instruct"): case, spaces, dashes and underscores, a hub organisation and a chat or
instruct suffix (the same architecture: the same FLOPs) do not matter. Each model's name, its hub repository's
name and its aliases are keys; two models with one key are refused when this module loads.

No torch, no transformers here: a name resolves before anything is built.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import cache


@dataclass(frozen=True)
class LM:
    """One published language model: its name, the family list-models groups it in, the transformers class that runs
    it, the shipped config it runs on (data/transformers/CONFIG.json), the hub repository whose config.json that is
    ('' where the shape is a paper's) and the other names people write for it."""

    name: str
    family: str
    cls: str
    config: str
    hub: str = ""
    aliases: tuple[str, ...] = ()

    @property
    def spec(self) -> str:
        """The spec it is: 'transformers:LlamaForCausalLM --config llama-3-8b'."""
        return f"transformers:{self.cls} --config {self.config}"

    def keys(self) -> tuple[str, ...]:
        """Its name, its hub repository's name and its aliases, normalized."""
        names = (self.name, self.hub.rpartition("/")[2], *self.aliases)
        return tuple(dict.fromkeys(key(n) for n in names if n))


# a suffix that names a fine-tune of the same architecture, and text that is only punctuation
_TUNED = re.compile(r"(?:[-_ ](?:instruct|chat|it|base|hf|pt))+$")
_PUNCT = re.compile(r"[\s_\-]+")


def key(text: str) -> str:
    """The form a name is looked up by: lower case, no hub organisation ('meta-llama/'), no fine-tune suffix
    ('-Instruct', '-chat', '-it', '-hf'), no spaces, dashes or underscores ('Llama 3 8B' -> 'llama38b')."""
    name = text.strip().rpartition("/")[2].lower()
    return _PUNCT.sub("", _TUNED.sub("", name))


def _llama(name: str, family: str, config: str, hub: str = "", *aliases: str) -> LM:
    return LM(name, family, "LlamaForCausalLM", config, hub, aliases)


LMS: tuple[LM, ...] = (
    # Llama 1: Touvron et al. 2023; the hub's huggyllama checkpoints name 33B '30b'
    _llama("Llama-7B", "Llama 1", "llama-7b", "huggyllama/llama-7b", "LLaMA-7B", "Llama-1-7B"),
    _llama("Llama-13B", "Llama 1", "llama-13b", "huggyllama/llama-13b", "LLaMA-13B", "Llama-1-13B"),
    _llama("Llama-33B", "Llama 1", "llama-33b", "huggyllama/llama-30b", "LLaMA-33B", "Llama-1-33B", "LLaMA-30B"),
    _llama("Llama-65B", "Llama 1", "llama-65b", "huggyllama/llama-65b", "LLaMA-65B", "Llama-1-65B"),
    _llama("Llama-2-7B", "Llama 2", "llama-2-7b", "meta-llama/Llama-2-7b-hf"),
    _llama("Llama-2-13B", "Llama 2", "llama-2-13b", "meta-llama/Llama-2-13b-hf"),
    _llama("Llama-2-70B", "Llama 2", "llama-2-70b", "meta-llama/Llama-2-70b-hf"),
    _llama("Llama-3-8B", "Llama 3", "llama-3-8b", "meta-llama/Meta-Llama-3-8B"),
    _llama("Llama-3-70B", "Llama 3", "llama-3-70b", "meta-llama/Meta-Llama-3-70B"),
    _llama("Llama-3.1-8B", "Llama 3", "llama-3.1-8b", "meta-llama/Llama-3.1-8B", "Meta-Llama-3.1-8B"),
    _llama("Llama-3.1-70B", "Llama 3", "llama-3.1-70b", "meta-llama/Llama-3.1-70B", "Meta-Llama-3.1-70B"),
    _llama("Llama-3.1-405B", "Llama 3", "llama-3.1-405b", "meta-llama/Llama-3.1-405B", "Meta-Llama-3.1-405B"),
    LM(
        "Llama-4-Scout",
        "Llama 4",
        "Llama4ForCausalLM",
        "llama-4-scout-17b-16e",
        "meta-llama/Llama-4-Scout-17B-16E",
        ("Llama-4-Scout-109B",),
    ),
    LM(
        "Llama-4-Maverick",
        "Llama 4",
        "Llama4ForCausalLM",
        "llama-4-maverick-17b-128e",
        "meta-llama/Llama-4-Maverick-17B-128E",
        ("Llama-4-Maverick-400B",),
    ),
    LM("Mistral-7B", "Mistral", "MistralForCausalLM", "mistral-7b-v0.1", "mistralai/Mistral-7B-v0.1"),
    LM("Mixtral-8x7B", "Mistral", "MixtralForCausalLM", "mixtral-8x7b", "mistralai/Mixtral-8x7B-v0.1"),
    LM("Mixtral-8x22B", "Mistral", "MixtralForCausalLM", "mixtral-8x22b", "mistralai/Mixtral-8x22B-v0.1"),
    *(
        LM(f"Qwen2.5-{size}", "Qwen 2.5", "Qwen2ForCausalLM", f"qwen2.5-{size.lower()}", f"Qwen/Qwen2.5-{size}")
        for size in ("0.5B", "1.5B", "3B", "7B", "14B", "32B", "72B")
    ),
    *(
        LM(f"Qwen3-{size}", "Qwen 3", "Qwen3ForCausalLM", f"qwen3-{size.lower()}", f"Qwen/Qwen3-{size}")
        for size in ("0.6B", "1.7B", "4B", "8B", "14B", "32B")
    ),
    LM("Qwen3-30B-A3B", "Qwen 3", "Qwen3MoeForCausalLM", "qwen3-30b-a3b", "Qwen/Qwen3-30B-A3B"),
    LM("Qwen3-235B-A22B", "Qwen 3", "Qwen3MoeForCausalLM", "qwen3-235b-a22b", "Qwen/Qwen3-235B-A22B"),
    *(
        LM(f"Gemma-2-{size}", "Gemma", "Gemma2ForCausalLM", f"gemma-2-{size.lower()}", f"google/gemma-2-{size.lower()}")
        for size in ("2B", "9B", "27B")
    ),
    *(
        LM(f"Gemma-3-{size.upper()}", "Gemma", "Gemma3ForCausalLM", f"gemma-3-{size}", f"google/gemma-3-{size}-pt")
        for size in ("1b", "4b", "12b", "27b")
    ),
    LM("DeepSeek-V2", "DeepSeek", "DeepseekV2ForCausalLM", "deepseek-v2", "deepseek-ai/DeepSeek-V2"),
    LM("DeepSeek-V2-Lite", "DeepSeek", "DeepseekV2ForCausalLM", "deepseek-v2-lite", "deepseek-ai/DeepSeek-V2-Lite"),
    LM("DeepSeek-V3", "DeepSeek", "DeepseekV3ForCausalLM", "deepseek-v3", "deepseek-ai/DeepSeek-V3"),
    LM("GPT-OSS-20B", "GPT-OSS", "GptOssForCausalLM", "gpt-oss-20b", "openai/gpt-oss-20b"),
    LM("GPT-OSS-120B", "GPT-OSS", "GptOssForCausalLM", "gpt-oss-120b", "openai/gpt-oss-120b"),
    LM("OLMo-2-1B", "OLMo", "Olmo2ForCausalLM", "olmo-2-1b", "allenai/OLMo-2-0425-1B"),
    LM("OLMo-2-7B", "OLMo", "Olmo2ForCausalLM", "olmo-2-7b", "allenai/OLMo-2-1124-7B"),
    LM("OLMo-2-13B", "OLMo", "Olmo2ForCausalLM", "olmo-2-13b", "allenai/OLMo-2-1124-13B"),
    LM("OLMo-2-32B", "OLMo", "Olmo2ForCausalLM", "olmo-2-32b", "allenai/OLMo-2-0325-32B"),
    LM("OLMoE-1B-7B", "OLMo", "OlmoeForCausalLM", "olmoe-1b-7b", "allenai/OLMoE-1B-7B-0924", ("OLMoE",)),
    LM("Phi-3-mini", "Phi", "Phi3ForCausalLM", "phi-3-mini-4k", "microsoft/Phi-3-mini-4k-instruct", ("Phi-3-mini-4k",)),
    LM(
        "Phi-3-medium",
        "Phi",
        "Phi3ForCausalLM",
        "phi-3-medium-4k",
        "microsoft/Phi-3-medium-4k-instruct",
        ("Phi-3-medium-4k",),
    ),
    LM("Phi-4", "Phi", "Phi3ForCausalLM", "phi-4", "microsoft/phi-4"),
    # GPT-3: Brown et al. 2020 Table 2.1 as GPT-2's class. XL (24 heads of 128 in a width of 2048) and 13B (40 heads
    # of 128 in 5140) have no head count that divides their width: GPT-2's class cannot build them
    *(
        LM(f"GPT-3-{size}", "GPT-3", "GPT2LMHeadModel", f"gpt3-{size.lower()}", "", (f"GPT-3 {params}",))
        for size, params in (("Small", "125M"), ("Medium", "350M"), ("Large", "760M"))
    ),
    LM("GPT-3-2.7B", "GPT-3", "GPT2LMHeadModel", "gpt3-2.7b"),
    LM("GPT-3-6.7B", "GPT-3", "GPT2LMHeadModel", "gpt3-6.7b"),
    LM("GPT-3-175B", "GPT-3", "GPT2LMHeadModel", "gpt3-175b", "", ("GPT-3", "davinci")),
    LM("GPT-2", "GPT-3", "GPT2LMHeadModel", "gpt2", "openai-community/gpt2", ("GPT-2-124M",)),
    *(
        LM(f"OPT-{size}", "OPT", "OPTForCausalLM", f"opt-{size.lower()}", f"facebook/opt-{size.lower()}")
        for size in ("125M", "1.3B", "2.7B", "6.7B", "13B", "30B", "66B")
    ),
    LM("OPT-175B", "OPT", "OPTForCausalLM", "opt-175b"),
    *(
        LM(f"BLOOM-{size}", "BLOOM", "BloomForCausalLM", f"bloom-{size.lower()}", f"bigscience/bloom-{size.lower()}")
        for size in ("560M", "1B7", "3B", "7B1")
    ),
    LM("BLOOM-176B", "BLOOM", "BloomForCausalLM", "bloom-176b", "bigscience/bloom", ("BLOOM",)),
    LM("Falcon-7B", "Falcon", "FalconForCausalLM", "falcon-7b", "tiiuae/falcon-7b"),
    LM("Falcon-40B", "Falcon", "FalconForCausalLM", "falcon-40b", "tiiuae/falcon-40b"),
    LM("Falcon-180B", "Falcon", "FalconForCausalLM", "falcon-180b", "tiiuae/falcon-180B"),
    LM("Chinchilla-70B", "DeepMind", "GPT2LMHeadModel", "chinchilla-70b", "", ("Chinchilla",)),
    LM("PaLM-540B", "DeepMind", "LlamaForCausalLM", "palm-540b", "", ("PaLM",)),
)


def _index(models: tuple[LM, ...]) -> dict[str, LM]:
    """Every key of every model -> the model; a key two models share is refused (a name must mean one model)."""
    index: dict[str, LM] = {}
    for lm in models:
        for k in lm.keys():
            if k in index and index[k] is not lm:
                raise ValueError(f"the LM names {index[k].name!r} and {lm.name!r} share the key {k!r}")
            index[k] = lm
    return index


BY_KEY = _index(LMS)


@cache  # a spec's source and name ask on every read
def find(text: str) -> LM | None:
    """The published LM a name means, in any of the spellings people write, else None."""
    return BY_KEY.get(key(text)) if text and ":" not in text else None


def close(text: str, n: int = 3) -> list[str]:
    """The registry's names nearest to a name that is none of them (for 'did you mean')."""
    near = difflib.get_close_matches(key(text), BY_KEY, n=n * 3, cutoff=0.75)
    return list(dict.fromkeys(BY_KEY[k].name for k in near))[:n]


def families() -> dict[str, list[LM]]:
    """The models by family, in the registry's order."""
    grouped: dict[str, list[LM]] = {}
    for lm in LMS:
        grouped.setdefault(lm.family, []).append(lm)
    return grouped


__all__ = ["LM", "LMS", "close", "families", "find", "key"]
