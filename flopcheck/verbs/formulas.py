"""The published formulas on a subject, for the verbs (reconcile, compare) and the docs: a door over
flopcheck.published.applied, where the auditor reads them too."""

from __future__ import annotations

from flopcheck.published.applied import formula_results

__all__ = ["formula_results"]
