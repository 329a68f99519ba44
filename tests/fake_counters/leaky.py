"""An adapter that runs the model, then monkeypatches torch and never restores it: if the patch
leaked into the next count, that count's forward would fail."""

import torch

from flopcheck.counters.base import Measurement


def run(model, inputs):
    model(*inputs)
    torch.nn.functional.linear = None
    torch.Tensor.__matmul__ = None
    return Measurement(1.0)
