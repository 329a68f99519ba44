"""flopcheck: is this FLOP number true?

    import flopcheck
    flopcheck.reference_count(model, x).total          # exact FLOPs of one forward (2 per multiply-add)
    with flopcheck.FlopCounter(model) as c:   # or count any block of code
        model(x)
    flopcheck.audit("DiT-XL/2 118.64 GFLOPs").verdict

Exact integers in FLOPs inside; MACs and G/T suffixes only at the edge. Importing this package
imports no torch: the verbs import it when they are called.
"""
from flopcheck.types import Breakdown, Kind, Scope, Term, Unit

__version__ = "0.1.0"
__all__ = ["Breakdown", "FlopCounter", "Kind", "Scope", "Term", "Unit", "__version__", "audit", "count"]
_VERBS = ("FlopCounter", "audit", "count")


def __getattr__(name: str):
    if name in _VERBS:
        from flopcheck import api

        return getattr(api, name)
    raise AttributeError(f"module 'flopcheck' has no attribute {name!r}")
