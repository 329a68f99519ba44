"""The pytest plugin (entry point `pytest11: flopcheck`): a `flopcheck` fixture. Imports nothing
heavy: torch and the counters load when a test first uses the fixture."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from torch import nn


class FlopcheckFixture:
    """What the `flopcheck` fixture hands a test: the exact count and the assertions."""

    @staticmethod
    def count(model: nn.Module, inputs: Any) -> int:
        """Exact FLOPs of model(*inputs)."""
        from flopcheck.testing import exact_flops  # lazy: torch-free door (flopcheck.testing imports torch)

        return exact_flops(model, inputs)

    @staticmethod
    def assert_close(model: nn.Module, inputs: Any, expected: float, *, rtol: float = 0.10, unit: str = "FLOP") -> int:
        """flopcheck.testing.assert_flops_close."""
        from flopcheck.testing import assert_flops_close  # lazy: torch-free door (flopcheck.testing imports torch)

        return assert_flops_close(model, inputs, expected, rtol=rtol, unit=unit)

    @staticmethod
    def assert_reconciles(model: nn.Module, inputs: Any, reference: float, *, unit: str = "FLOP") -> None:
        """flopcheck.testing.assert_reconciles."""
        from flopcheck.testing import assert_reconciles  # lazy: torch-free door (flopcheck.testing imports torch)

        assert_reconciles(model, inputs, reference, unit=unit)

    @staticmethod
    def assert_mfu(model: nn.Module, inputs: Any, mfu: float, **options: Any) -> float:
        """flopcheck.testing.assert_mfu_close: a logger's MFU against the exact training step."""
        from flopcheck.testing import assert_mfu_close

        return assert_mfu_close(model, inputs, mfu, **options)


@pytest.fixture
def flopcheck() -> FlopcheckFixture:
    """Exact FLOP counts and FLOP assertions whose failures explain themselves."""
    return FlopcheckFixture()
