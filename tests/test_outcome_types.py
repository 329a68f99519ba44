"""A reconciliation's success and failure are two types (Reconciled, Unreconciled), its formula a field, and a
decision on an error reads its class, never its class's name."""

from __future__ import annotations

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from flopcheck.published import FORMULAS, Exact
from flopcheck.published.reconcile import explain
from flopcheck.published.structure import DIT, Structure
from flopcheck.render.reconcile import proof, summary
from flopcheck.specs.fallbacks import _data_dependent
from flopcheck.types import Reconciled, Reconciliation, Unreconciled

# DiT-XL/2 at 256 px (T 256, d 1152, 28 blocks), its term-by-term formula 237,242,843,136 FLOPs
DIT_XL2 = Structure(kind=DIT, L=28, d=1152, H=16, G=16, dh=72, F=4608, T=256, hand=237_242_843_136)


def test_a_formula_that_applies_is_reconciled_with_its_name_and_residual():
    # 24 T d^2 + 4 T^2 d per block = 8,455,716,864, x 28 = 236,760,072,192 FLOPs, against a forward of
    # 236,760,072,192 + 1: residual -1
    r = explain(FORMULAS["blocks-24td2"], DIT_XL2, Exact(forward=236_760_072_193, attention=0), "DiT-XL/2")
    assert isinstance(r, Reconciled) and isinstance(r, Reconciliation)
    assert (r.formula, r.counter_flops, r.residual, r.error) == ("blocks-24td2", 236_760_072_192, -1, None)
    assert repr(r).startswith("Reconciliation(formula blocks-24td2 on DiT-XL/2: 236,760,072,192 FLOPs = ")


def test_a_formula_that_does_not_apply_is_unreconciled_and_said_by_its_field():
    r = explain(FORMULAS["palm"], DIT_XL2, Exact(forward=1, attention=0), "DiT-XL/2")
    assert isinstance(r, Unreconciled) and (r.formula, r.residual, r.counter_flops) == ("palm", None, None)
    assert r.error.startswith("palm is a formula for a decoder-only language model")
    assert proof(r).splitlines()[1].startswith("  does not apply: palm is a formula for")
    # the summary's refusal names the formula by its field, its name taken out of the reason once
    said = summary([r, r])
    assert said.startswith("0 of 2 formulas against their reference") and "does not apply: palm, palm: it" in said


def test_a_data_dependent_op_is_known_by_its_exception_class_not_its_name():
    with FakeTensorMode():
        with pytest.raises(RuntimeError) as raised:
            torch.unique(torch.ones(4))  # its output's shape depends on the values: torch's fake tensors refuse
    assert _data_dependent(raised.value)

    class DynamicOutputShapeException(RuntimeError):  # the same name, not torch's class
        pass

    assert not _data_dependent(DynamicOutputShapeException("a model's own error"))
