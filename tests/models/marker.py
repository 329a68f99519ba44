"""A factory with a side effect: it writes the file named in $FLOPCHECK_TEST_MARKER when it is called."""

import os

from torch import nn


def make():
    """Writes the marker, then returns a small model."""
    with open(os.environ["FLOPCHECK_TEST_MARKER"], "w") as f:
        f.write("called")
    return nn.Linear(4, 4)
