"""flopcheck: is this FLOP number true?

One convention for every verb: `verb(model, *args, **kwargs)`, where `model` is an nn.Module and `*args, **kwargs`
its inputs, or a name ('DiT-XL/2', 'timm:resnet50') whose inputs flopcheck builds; options are keyword-only.

    >>> import torch, flopcheck
    >>> net, x = torch.nn.Linear(4, 12), torch.zeros(2, 4)
    >>> flopcheck.count(net, x).total               # exact FLOPs of one forward (2 per multiply-add): 2 x 2 x 4 x 12
    192
    >>> [c.flops for c in flopcheck.compare(net, x, counters=["torch_dispatch"])]  # what each counter says
    [192]
    >>> [r.residual for r in flopcheck.reconcile(net, x, counters=["torch_dispatch"])]  # each explained
    [0]
    >>> print(flopcheck.audit("96 MACs", net, x, counters=["torch_dispatch"]).verdict)  # a published figure judged
    consistent
    >>> with flopcheck.FlopCounter(net) as c:       # or count any block of code
    ...     _ = net(x)
    >>> c.total
    192

Exact integers in FLOPs inside; MACs and G/T suffixes only at the edge. Importing this package
imports no torch: the verbs import it when they are called.
"""

from typing import Any

from flopcheck.counted import ExactCount
from flopcheck.types import (
    Breakdown,
    Count,
    Failed,
    Kind,
    Outcome,
    Reconciled,
    Reconciliation,
    Scope,
    Term,
    Unit,
    Unreconciled,
)

__version__ = "0.1.0"
__all__ = [
    "Breakdown",
    "Count",
    "ExactCount",
    "Failed",
    "FlopCounter",
    "Kind",
    "Outcome",
    "Reconciled",
    "Reconciliation",
    "Scope",
    "Term",
    "Unit",
    "Unreconciled",
    "Verdict",
    "__version__",
    "audit",
    "compare",
    "count",
    "estimate",
    "reconcile",
    "report",
]
_VERBS = ("FlopCounter", "audit", "compare", "count", "estimate", "reconcile", "report")


def __getattr__(name: str) -> Any:
    if name in _VERBS:
        from flopcheck import api  # lazy (PEP 562): door start-up; `import flopcheck` loads the vocabulary only

        return getattr(api, name)
    if name == "Verdict":
        from flopcheck.auditor import Verdict

        return Verdict
    raise AttributeError(f"module 'flopcheck' has no attribute {name!r}")
