"""Libraries' untyped corners, typed once: torch's mode classes, and the patch of a library's name for a block.

torch's TorchDispatchMode and TorchFunctionMode have no annotations on __init__, __enter__, __exit__ or
__init_subclass__ (torch 2.1 to 2.9), so strict mypy refuses every subclass and every call of them. DispatchMode and
FunctionMode are those classes at run time; for the checker they are declared here with the types torch's code has.
Importing this module imports torch.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing_extensions import Self

    class DispatchMode:
        """torch.utils._python_dispatch.TorchDispatchMode: __torch_dispatch__ sees every aten op while entered."""

        supports_higher_order_operators: bool

        def __init__(self) -> None: ...
        def __enter__(self) -> Self: ...
        def __exit__(self, *exc: object) -> None: ...

    class FunctionMode:
        """torch.overrides.TorchFunctionMode: __torch_function__ sees every torch function called while entered."""

        def __init__(self) -> None: ...
        def __enter__(self) -> Self: ...
        def __exit__(self, *exc: object) -> None: ...

else:
    from torch.overrides import TorchFunctionMode as FunctionMode
    from torch.utils._python_dispatch import TorchDispatchMode as DispatchMode


@contextlib.contextmanager
def patched(owner: object, name: str, value: object) -> Iterator[Any]:
    """owner.name is `value` for the block, and what it was after; yields what it was (a class or function patched
    in a library: mypy checks no assignment of another signature to a module's function or class)."""
    original = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield original
    finally:
        setattr(owner, name, original)


__all__ = ["DispatchMode", "FunctionMode", "patched"]
