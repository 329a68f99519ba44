"""The causes verb: the registry of causes (a plugin's too) and, measured, which counter does what on DiT-S/2."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flopcheck import plugins
from flopcheck.counters import COUNTERS
from flopcheck.counters.pool import Job, run_counters
from flopcheck.reconciler import explain
from flopcheck.render.causes import causes_table, who_does_what
from flopcheck.types import Count
from flopcheck.verbs.reconcile import DEFAULT_RECONCILE
from reference_models import ATTN_PATHS


@dataclass
class CausesTable:
    """The registry of causes, and (measured) which counter does what on DiT-S/2."""

    who: Any = None
    exit_code: int = 0

    def to_text(self, markdown: bool = False) -> str:
        return causes_table(self.who, markdown=markdown)


def run(measure: bool = False) -> CausesTable:
    """The causes (a plugin's too); with measure, every counter reconciled on DiT-S/2 at 256 px on both paths names
    who does what."""
    plugins.load()  # a plugin's causes are in the table
    if not measure:
        return CausesTable()

    jobs = [Job(DEFAULT_RECONCILE[0], DEFAULT_RECONCILE[1], a) for a in ATTN_PATHS]
    return CausesTable(who_does_what([explain(c) for c in run_counters(list(COUNTERS), jobs) if isinstance(c, Count)]))
