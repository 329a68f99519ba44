"""Bad input, as one type: the CLI turns exactly these into one line on stderr and exit code 2.

Anything else that escapes is a bug in flopcheck and keeps its traceback.
"""

from __future__ import annotations

from reference_models.configs import ConfigError
from reference_models.registry import UnknownModelError


class InputError(ValueError):
    """Bad input (a model, a claim, a number, a file): the message names the problem and the fix."""


def bad_input() -> tuple[type[BaseException], ...]:
    """The exception types that mean bad input: ours, the reference models' and a file that cannot be read."""
    return InputError, ConfigError, UnknownModelError, OSError
