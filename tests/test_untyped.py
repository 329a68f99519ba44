"""flopcheck.untyped: torch's mode classes are torch's own at run time, and a patch is undone however its block
ends."""

import types

import pytest
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from flopcheck.untyped import DispatchMode, FunctionMode, patched


def test_the_typed_modes_are_torchs_own_classes_at_run_time():
    assert DispatchMode is TorchDispatchMode and FunctionMode is TorchFunctionMode


def test_a_patch_holds_in_its_block_and_is_undone_after_an_error():
    owner = types.SimpleNamespace(f=len)
    with pytest.raises(RuntimeError, match="inside"), patched(owner, "f", abs) as was:
        assert owner.f is abs and was is len and owner.f(-3) == 3
        raise RuntimeError("inside")
    assert owner.f is len
