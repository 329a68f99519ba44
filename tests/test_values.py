"""Values beside meta tensors (flopcheck/exact/values.py): a forward that reads its masks' values counts on meta."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch

from flopcheck.exact import count_forward
from flopcheck.exact.values import Values

MODELS = Path(__file__).resolve().parent / "models"
sys.path.insert(0, str(MODELS))

from reads_values import ReadsMask  # noqa: E402


def _meta_inputs():
    mask = torch.cat([torch.ones(1, 5, device="meta"), torch.zeros(1, 3, device="meta")], dim=1)
    return torch.empty(1, 8, 8, device="meta"), mask


def test_a_forward_that_reads_its_mask_counts_on_meta_with_values():
    # 5 kept tokens, twice through Linear(8 -> 4): 2 * (2 * 5 * 8 * 4) = 640 FLOPs (the bias adds, not counted)
    with torch.device("meta"):
        model = ReadsMask()
    with Values():
        x, mask = _meta_inputs()
        assert count_forward(model, (x, mask)).total == 640


def test_without_values_the_same_forward_cannot_run_on_meta():
    with torch.device("meta"):
        model = ReadsMask()
    x, mask = _meta_inputs()
    with pytest.raises((RuntimeError, NotImplementedError)):
        count_forward(model, (x, mask))


def test_a_tensor_of_unknown_values_is_never_given_values():
    with Values():
        x = torch.empty(3, device="meta")  # torch.empty: whatever memory held
        with pytest.raises((RuntimeError, NotImplementedError)):
            x.sum().item()
        y = torch.ones(3, device="meta")
        y.mul_(x)  # a tensor of values written with unknown ones: its values are unknown now
        with pytest.raises((RuntimeError, NotImplementedError)):
            y.sum().item()
        assert torch.arange(4, device="meta").sum().item() == 6  # 0 + 1 + 2 + 3


def test_a_literal_and_a_filled_tensor_on_meta_keep_their_values():
    with Values():
        ids = torch.tensor([4, 1, 7], device="meta")  # made below every dispatch mode, then moved: its values kept
        assert ids.sum().item() == 12
        mask = torch.zeros_like(ids, dtype=torch.bool)  # empty_like then a fill: a known value however it started
        mask[ids > 3] = True
        assert int(mask.sum()) == 2
        filled = torch.empty(3, device="meta").fill_(2.0)  # whatever it held, the fill wrote every element
        assert filled.sum().item() == 6.0


@pytest.mark.integration
def test_a_spec_that_reads_values_counts_on_meta_and_says_so(capsys, monkeypatch):
    from flopcheck.cli import main

    monkeypatch.syspath_prepend(str(MODELS))
    assert main(["count", "reads_values:build", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    # the factory runs on meta (its ones and zeros too): the first count fails on mask.sum().item(), the second
    # counts with the mask's values beside it: the hand count, 640 FLOPs, and a note that says how
    assert d["total_flops"] == 640
    assert any("counted on meta with the values of its small tensors" in n for n in d["notes"])


@pytest.mark.integration
def test_a_read_of_an_activation_falls_back_to_real_tensors_and_says_so(capsys, monkeypatch):
    from flopcheck.cli import main

    monkeypatch.syspath_prepend(str(MODELS))
    assert main(["count", "reads_values:build_activation", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    # the branch reads x.sum(), an activation: no shadow has it, so the count runs on real CPU tensors (its
    # factory's inputs): Linear(8 -> 4) on one row, 2 * 8 * 4 = 64 FLOPs
    assert d["total_flops"] == 64 and d["exact_count_device"] == "cpu"
    assert any("counted on real CPU tensors" in n for n in d["notes"])


@pytest.mark.integration
def test_a_real_tensor_fallback_whose_weights_would_not_fit_is_one_line(capsys, monkeypatch):
    from flopcheck.cli import main

    monkeypatch.syspath_prepend(str(MODELS))
    # built on meta (free), it reads an activation, so it counts only on real tensors; its 2^36 + 2^18 =
    # 68,719,738,880 parameters take 275 GB in fp32, over half of any machine this suite runs on: refused, not tried
    assert main(["count", "reads_values:build_huge"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "68,719,738,880 parameters (275 GB in fp32) do not fit in half this machine" in err
