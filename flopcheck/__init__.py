"""flopcheck: is this FLOP number true?

    import flopcheck
    flopcheck.count(model, x).total           # exact FLOPs of one forward (2 per multiply-add)
    with flopcheck.FlopCounter(model) as c:   # or count any block of code
        model(x)
    flopcheck.counters(model, (x,))           # what fvcore, thop, the profiler ... say, each in its unit
    flopcheck.reconciler(model, (x,))          # each of those explained against the exact count
    flopcheck.audit("DiT-XL/2 118.64 GFLOPs").verdict

Exact integers in FLOPs inside; MACs and G/T suffixes only at the edge. Importing this package
imports no torch: the verbs import it when they are called.
"""
from flopcheck.types import Breakdown, Kind, Scope, Term, Unit

__version__ = "0.1.0"
__all__ = ["Breakdown", "FlopCounter", "Kind", "Scope", "Term", "Unit", "__version__", "audit", "count", "counters",
           "reconcile"]
_VERBS = ("FlopCounter", "audit", "count", "counters", "reconcile")


def __getattr__(name: str):
    if name in _VERBS:
        from flopcheck import api

        return getattr(api, name)
    raise AttributeError(f"module 'flopcheck' has no attribute {name!r}")
