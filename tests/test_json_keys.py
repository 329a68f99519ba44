"""Every command's --json keeps its keys: the lists below are what each printed before the one-path redesign
(89b0a4b); a later version may add keys, never drop one."""
from __future__ import annotations

import json

import pytest

from flopcheck.cli import main

KEYS = {
    'count': (["count", "DiT-S/8", "--json"], ["attn", "batch", "by_kind", "complete", "config", "exact_by_path",
        "exact_count_device", "exact_count_flops", "exact_matches_formula", "incomplete_ops", "model", "scope",
        "space", "terms", "tokens", "total_flops", "total_macs", "uncounted", "unit"]),
    'count_spec': (["count", "timm:resnet18", "--json"], ["batch", "blocks", "by_kind", "complete", "incomplete_ops",
        "inputs", "model", "notes", "parameters", "reference", "scope", "terms", "total_flops", "total_macs",
        "uncounted", "unit"]),
    'count_training': (["count", "DiT-S/8", "--training", "--json"], ["attn", "backward_by_kind",
        "backward_complete", "backward_flops", "backward_incomplete_ops", "batch", "by_kind", "complete", "config",
        "differences", "exact_by_path", "exact_count_device", "exact_count_flops", "exact_matches_formula",
        "exact_minus_rule_flops", "forward_flops", "incomplete_ops", "model", "optimizer", "rule_3x_flops", "scope",
        "space", "terms", "tokens", "total_flops", "total_macs", "trainable_parameters", "training_flops",
        "uncounted", "unit"]),
    'estimate': (["estimate", "DiT-S/8", "--json"], ["arithmetic_intensity", "attended_tokens", "attention_flops",
        "attention_share", "batch", "batches", "bound", "cfg", "crossover_tokens", "differences",
        "exact_matches_formula", "flops", "flops_per_forward", "flops_per_step", "gpu", "input", "mfu", "model",
        "params", "ridge", "seconds", "seed_estimate_flops", "seed_seconds", "step_seconds", "steps", "unit",
        "weight_bytes"]),
    'estimate_spec': (["estimate", "timm:resnet18", "--json"], ["arithmetic_intensity", "attention_share", "bound",
        "cfg", "flops", "flops_per_forward", "flops_per_step", "gpu", "inputs", "mfu", "model", "notes", "params",
        "reference", "seconds", "step_seconds", "steps", "unit", "weight_bytes"]),
    'estimate_training': (["estimate", "DiT-S/8", "--training", "--json"], ["backward_flops", "batch", "flops",
        "flops_per_step", "forward_flops", "gpu", "gpu_hours", "inputs", "mfu", "model", "rule_3x_flops", "seconds",
        "step_seconds", "steps", "unit"]),
    'counters': (["compare", "DiT-S/8", "--counter", "fvcore_jit", "--json"], ["attn", "batch", "counter", "detail",
        "device", "error", "flops", "formula_flops", "input_size", "library", "model", "peak_rss_mb", "reported",
        "skipped", "time_s", "unit", "version"]),
    'reconcile': (["reconcile", "DiT-S/8", "--counter", "fvcore_jit", "--json"], ["attn", "closed", "counter",
        "counter_flops", "error", "findings", "input_size", "mode", "model", "reference_flops", "reported",
        "residual_flops", "unit"]),
    'audit': (["audit", "DiT-XL/2 118.64 GFLOPs", "--no-counters", "--json"], ["also", "attention", "candidates",
        "carried_from", "cause", "claim", "claimed_flops", "coverage", "findings", "fingerprint", "id", "inputs",
        "model", "notes", "passed", "reading_flops", "relative_error", "scope", "sentence", "source", "space",
        "tools", "true_flops", "unit", "verdict"]),
}


@pytest.mark.parametrize("name", list(KEYS))
def test_json_keys_are_kept(name, capsys):
    argv, keys = KEYS[name]
    assert main(argv) in (0, 1)
    data = json.loads(capsys.readouterr().out)
    row = data[0] if isinstance(data, list) else data
    assert sorted(set(keys) - set(row)) == []  # additions only
