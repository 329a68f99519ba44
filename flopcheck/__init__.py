"""flopcheck: is this FLOP number true?

Exact integers in FLOPs (2 per multiply-add) inside; MACs and G/T suffixes only at the edge.
Importing this package imports no torch.
"""
from flopcheck.types import Breakdown, Kind, Scope, Term, Unit

__version__ = "0.1.0"
__all__ = ["Breakdown", "Kind", "Scope", "Term", "Unit", "__version__"]
