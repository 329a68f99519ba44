"""The helpers people put in their own tests, and the pytest plugin, run through pytester."""

import sys

import pytest
import torch
from torch import nn

from flopcheck.testing import FlopAssertionError, assert_flops_close, assert_reconciles, exact_flops

pytest_plugins = ["pytester"]


def linear_and_input():
    # Linear(64 -> 32) on (1, 16, 64): 16 * 32 outputs, each a 64-long dot product: 2 * 16 * 32 * 64 = 65,536 FLOPs
    return nn.Linear(64, 32), torch.randn(1, 16, 64)


def test_exact_and_close():
    model, x = linear_and_input()
    assert exact_flops(model, x) == 65_536
    assert assert_flops_close(model, x, 62_000) == 65_536  # 5.4% under: within the default 10%
    assert_flops_close(model, x, 32_768, unit="MAC")


def test_a_mac_figure_asserted_as_flops_says_so():
    model, x = linear_and_input()
    with pytest.raises(FlopAssertionError) as err:
        assert_flops_close(model, x, 32_768)  # 16 * 32 * 64 multiply-adds, asserted as FLOPs
    message = str(err.value)
    assert "0.500x" in message and "FC101 mac-convention" in message and "MAC figure" in message


def test_assert_reconciles_explains_another_tools_number():
    from reference_models import get_config
    from reference_models.dit import build_dit, make_inputs

    cfg = get_config("DiT-S/8")
    model, inputs = build_dit(cfg), make_inputs(cfg)
    # DiT-S/8: 715,948,032 FLOPs (Table 4's 0.358 GMACs); attention 12 * 4 * 16^2 * 384 = 4,718,592 FLOPs.
    # A counter blind to fused attention, in MACs: (715,948,032 - 4,718,592) / 2 = 355,614,720
    assert_reconciles(model, inputs, 355_614_720, unit="MAC")
    with pytest.raises(FlopAssertionError, match="leaves \\+1 MACs unexplained"):
        assert_reconciles(model, inputs, 355_614_721, unit="MAC")


@pytest.mark.integration
def test_the_plugin_passes_and_fails_with_the_reconciliation(pytester):
    pytester.makepyfile(
        """
        import torch
        from torch import nn

        def test_right(flopcheck):
            flopcheck.assert_close(nn.Linear(64, 32), torch.randn(1, 16, 64), 65_536)

        def test_mac_as_flops(flopcheck):
            flopcheck.assert_close(nn.Linear(64, 32), torch.randn(1, 16, 64), 32_768)
        """
    )
    result = pytester.runpytest_subprocess()  # the installed pytest11 entry point loads the plugin
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*FC101 mac-convention*", "*MAC figure*asserted as FLOPs*"])


def test_the_plugin_module_imports_nothing_heavy():
    code = "import sys, flopcheck.pytest_plugin; print('torch' in sys.modules)"
    import subprocess

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
