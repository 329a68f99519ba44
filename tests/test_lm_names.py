"""Published language models by name (flopcheck.specs.lms): the spellings people write, the near misses, the shipped
configs against the models' published parameter counts, the doors that take a name, and the exact forward of one."""

import json
import sys
from pathlib import Path

import pytest

from flopcheck.auditor.claims import parse_claim
from flopcheck.cli import main
from flopcheck.specs import SpecError, parse
from flopcheck.specs.config import SHIPPED
from flopcheck.specs.lms import LMS, find, key
from flopcheck.verbs.list_models import run as list_models

# helper D's files for issue 49 item 2 (another branch): checked once they are here
ELSEWHERE = {"deepseek-v3", "gemma-2-9b", "qwen2.5-7b", "qwen3-30b-a3b", "gpt-oss-20b"}


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    "text", ["Llama-3-8B", "Llama 3 8B", "llama3-8b", "Meta-Llama-3-8B", "meta-llama/Meta-Llama-3-8B-Instruct"]
)
def test_every_spelling_of_llama_3_8b_is_one_spec(text):
    spec = parse(text)
    assert (spec.text, spec.source, spec.name) == ("Llama-3-8B", "transformers", "LlamaForCausalLM")


@pytest.mark.parametrize(
    "text, name",
    [
        ("DeepSeek-V3", "DeepSeek-V3"),
        ("deepseek-ai/DeepSeek-V3", "DeepSeek-V3"),
        ("Qwen3 30B A3B", "Qwen3-30B-A3B"),
        ("Qwen2.5-7B-Instruct", "Qwen2.5-7B"),
        ("gemma-2-9b-it", "Gemma-2-9B"),
        ("gpt-oss-20b", "GPT-OSS-20B"),
        ("Mixtral 8x7B", "Mixtral-8x7B"),
        ("Llama-2-70b-chat-hf", "Llama-2-70B"),
        ("LLaMA-30B", "Llama-33B"),  # the hub's name of the paper's 33B
        ("Llama 3.1 405B", "Llama-3.1-405B"),
        ("PaLM 540B", "PaLM-540B"),
    ],
)
def test_names_people_write_resolve_to_the_registry_name(text, name):
    lm = find(text)
    assert lm is not None and lm.name == name


def test_a_near_miss_gets_did_you_mean_and_a_name_takes_no_config():
    with pytest.raises(SpecError, match="unknown model 'Llama-3-8X'; did you mean Llama-3-8B"):
        parse("Llama-3-8X")
    with pytest.raises(SpecError, match=r"Llama-3-8B runs on the config flopcheck ships for it \(llama-3-8b\)"):
        parse("Llama 3 8B", config="other.json")


def test_the_keys_ignore_case_spacing_hub_and_fine_tune_suffix():
    # 'Llama 3 8B' -> 'llama38b'; the hub organisation and '-Instruct' go; dots stay (3.1 is not 31)
    assert key("meta-llama/Meta-Llama-3-8B-Instruct") == "metallama38b"
    assert key("Llama 3.1 8B") == "llama3.18b" != key("Llama 31 8B")


@pytest.mark.parametrize("lm", LMS, ids=lambda lm: lm.name)
def test_each_registry_model_has_its_config_its_source_and_its_class(lm):
    import transformers

    path = SHIPPED / "transformers" / f"{lm.config}.json"
    if lm.config in ELSEWHERE and not path.exists():
        pytest.skip(f"{lm.config}.json comes from issue 49 item 2's branch")
    config = json.loads(path.read_text())
    assert config["_source"] and "auto_map" not in config
    cls = getattr(transformers, lm.cls)
    assert config["model_type"] == cls.config_class.model_type  # the class reads this config's kind


# Published totals (each source's own rounding: 1% either way). Text decoders only: Llama 4's and Gemma 3's vision
# encoders are not counted, so their figures are not pinned here.
PUBLISHED = [
    ("Llama-3.1-405B", 405.0e9, "Llama 3 paper (arXiv:2407.21783) Table 3: 405B"),
    ("Llama-4-Maverick", 400.0e9, "meta-llama/Llama-4-Maverick-17B-128E model card: 400B total"),
    ("Mixtral-8x22B", 141.0e9, "Mistral AI, 'Cheaper, Better, Faster, Stronger' (2024): 141B total"),
    ("Qwen2.5-72B", 72.7e9, "Qwen/Qwen2.5-72B model card: 72.7B"),
    ("Qwen3-235B-A22B", 235.0e9, "Qwen/Qwen3-235B-A22B model card: 235B total"),
    ("Gemma-2-27B", 27.2e9, "Gemma 2 paper (arXiv:2408.00118) Table 2: 27.2B (embedding 1.2B + 26.0B)"),
    ("DeepSeek-V2", 236.0e9, "DeepSeek-V2 paper (arXiv:2405.04434) abstract: 236B total"),
    ("GPT-OSS-120B", 116.83e9, "gpt-oss model card (OpenAI 2025) Table 1: 116.83B total"),
    ("OLMoE-1B-7B", 6.9e9, "OLMoE paper (arXiv:2409.02060): 6.9B total"),
    ("Falcon-40B", 41.3e9, "tiiuae/falcon-40b model card: 40B (41.3B in its safetensors index)"),
    ("BLOOM-176B", 176.2e9, "BLOOM paper (arXiv:2211.05100) Table 3: 176,247M"),
    ("OPT-66B", 66.0e9, "OPT paper (arXiv:2205.01068) Table 1: 66B"),
]


@pytest.mark.parametrize("name, published, source", PUBLISHED, ids=[p[0] for p in PUBLISHED])
def test_a_shipped_config_builds_the_published_model(name, published, source):
    import torch
    import transformers

    lm = find(name)
    assert lm is not None
    config = json.loads((SHIPPED / "transformers" / f"{lm.config}.json").read_text())
    cls = getattr(transformers, lm.cls)
    with torch.device("meta"):
        model = cls(cls.config_class.from_dict({k: v for k, v in config.items() if not k.startswith("_")}))
    assert sum(p.numel() for p in model.parameters()) == pytest.approx(published, rel=0.01), source


def test_llama_3_8b_parameters_by_hand():
    import torch
    import transformers

    config = json.loads((SHIPPED / "transformers" / "llama-3-8b.json").read_text())
    with torch.device("meta"):
        model = transformers.LlamaForCausalLM(
            transformers.LlamaConfig.from_dict({k: v for k, v in config.items() if not k.startswith("_")})
        )
    # d 4096, kv width 8 x 128 = 1024, MLP 14336, V 128256, 32 layers, untied head:
    # a layer: q, o 2 x 4096^2 = 33,554,432; k, v 2 x 4096 x 1024 = 8,388,608; MLP 3 x 4096 x 14336 = 176,160,768;
    # two norms 8,192: 218,112,000; x 32 = 6,979,584,000; embedding and head 2 x 128256 x 4096 = 1,050,673,152;
    # final norm 4,096: 8,030,261,248
    assert sum(p.numel() for p in model.parameters()) == 8_030_261_248


@pytest.mark.integration
def test_count_llama_3_8b_by_name_is_its_forward_by_hand(capsys):
    code, out, _ = run(capsys, "count", "Llama 3 8B", "--text-tokens", "4096", "--json")
    assert code == 0
    # T 4096, d 4096, kv width 1024, MLP 14336, V 128256, 32 layers; FLOPs = 2 per multiply-add:
    # a layer's linears 2T x (2 x 4096^2 + 2 x 4096 x 1024 + 3 x 4096 x 14336)
    #   = 8192 x (33,554,432 + 8,388,608 + 176,160,768) = 8192 x 218,103,808 = 1,786,706,395,136
    # a layer's attention, dense (QK^T and attn@V): 2 x 2 x T^2 x 4096 = 274,877,906,944
    # 32 layers: 32 x 2,061,584,302,080 = 65,970,697,666,560; head 2T x 4096 x 128256 = 4,303,557,230,592
    # total 70,274,254,897,152
    assert json.loads(out)["total_flops"] == 70_274_254_897_152


def test_a_claim_names_a_language_model_in_any_spelling():
    claim = parse_claim("Llama 3 8B 70.27 TFLOPs", model="Llama-3-8B")
    assert claim.subject.spec is not None and claim.subject.spec.text == "Llama-3-8B"
    rate = parse_claim("Meta-Llama-3-8B training 400 TFLOP/s per GPU", throughput="1 it/s", batch=1, gpus=1, gpu="H100")
    assert rate.subject.spec is not None and rate.subject.spec.text == "Llama-3-8B" and rate.training


def test_list_models_groups_the_language_models_by_family():
    out = list_models("lm:*")
    assert out.splitlines()[0].startswith("language models by name")
    # its shape read from its shipped config (query/key-value heads), its class and its config's name
    assert "  Llama 3\n    Llama-3-8B       L=32 d=4096 heads=32/8" + " " * 20 + "LlamaForCausalLM llama-3-8b\n" in out
    assert "    Mixtral-8x22B    L=56 d=6144 heads=48/8 experts=8 top-2" in out
    assert "DiT-XL/2" not in out  # 'lm:' lists the language models alone
    qwen3 = list_models("qwen3*").splitlines()  # case-blind, by family
    assert qwen3[1] == "  Qwen 3" and len(qwen3) == 2 + 8  # header, family, 6 dense + 2 MoE
    assert "language models by name" in list_models()  # the default lists them after the reference models


def test_help_shows_every_model_form(capsys):
    for verb in ("count", "reconcile", "audit"):
        with pytest.raises(SystemExit):
            main([verb, "--help"])
        out = " ".join(capsys.readouterr().out.split())
        for form in ("Llama-3-8B", "timm:NAME", "torchvision:NAME", "diffusers:CLASS", "transformers:CLASS"):
            assert form in out, (verb, form)
        assert "language model's sequence length" in out  # --text-tokens is not diffusers' alone


def test_transformers_missing_advises_its_own_extra(monkeypatch):
    from flopcheck.specs.builders.transformers import from_transformers

    monkeypatch.setitem(sys.modules, "transformers", None)  # import transformers raises ImportError
    with pytest.raises(SpecError, match=r"pip install 'flopcheck\[transformers\]'"):
        from_transformers(parse("Llama-3-8B"), "meta", [])
    extras = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    assert '\ntransformers = ["transformers' in extras


def test_a_functional_meta_op_is_run_once_per_signature():
    import torch

    from flopcheck.exact import meta_safe

    aten = torch.ops.aten
    a, b = torch.empty(3, 5, device="meta"), torch.empty(5, device="meta")
    first = meta_safe.call(aten.mul.Tensor, (a, b), {})
    key = meta_safe._signature(aten.mul.Tensor, (a, b), {})
    assert meta_safe.MEMO[key] == (((3, 5), (5, 1), torch.float32),)
    again = meta_safe.call(aten.mul.Tensor, (torch.empty(3, 5, device="meta"), torch.empty(5, device="meta")), {})
    assert again is not first and (again.shape, again.stride(), again.dtype) == (first.shape, (5, 1), torch.float32)
    # an in-place op returns its own argument: never answered from the memo
    assert meta_safe.call(aten.add_.Tensor, (a, b), {}) is a
    assert meta_safe._signature(aten.add_.Tensor, (a, b), {}) not in meta_safe.MEMO
    # a real tensor is not kept: its op runs
    assert meta_safe._signature(aten.mul.Tensor, (torch.ones(2), torch.ones(2)), {}) is None
