"""Packed sequences (the zoo's user-packed-sequences): three documents of 3, 5 and 8 tokens in one row of 16 under a
block-diagonal mask, as a spec the tests name by file (packed:model, packed:inputs)."""

from flopcheck.zoo.packed import inputs, model

__all__ = ["inputs", "model"]
