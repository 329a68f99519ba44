"""Shared helpers: the 12 DiT configs of the paper's Table 4, and one run of every counter that
the counter and reconciler tests share (counters are slow: torch and a library per process)."""

import os
import tempfile
from pathlib import Path

import pytest

# counters' outputs are audit readings, cached on disk: one folder for this test session (and its CLI children),
# never the user's ~/.cache
os.environ.setdefault("FLOPCHECK_CACHE", tempfile.mkdtemp(prefix="flopcheck-test-cache-"))

MODELS = Path(__file__).resolve().parent / "models"  # small user models, importable as specs once on sys.path
DIT_NAMES = [f"DiT-{s}/{p}" for s in ("S", "B", "L", "XL") for p in (2, 4, 8)]
SMALL = [n for n in DIT_NAMES if n[4] in "SB"]
LARGE = [n for n in DIT_NAMES if n[4] in "LX"]


def _jobs(names, sizes=(None,)):
    from flopcheck.counters.pool import Job

    return [Job(n, s, a) for n in names for s in sizes for a in ("sdpa", "math")]


# DiT-S/2 at input 128 (T = 4,096), where attention is 64% of a block, on 2 of its 12 blocks: what the test of it
# proves is per block, and the whole model on real tensors was 80 of the fixture's 130 s
S2_T4096 = {"input_size": 128, "depth": 2}
WORKERS = min(2, os.cpu_count() or 1)  # as the auditor runs its pool: 100 s for the large configs, not 130 on one


@pytest.fixture(scope="session")
def counter_results():
    """Every registered counter on the S and B configs at 256 px, DiT-S/2 at input 64 and a 2-block DiT-S/2 at
    input 128, both attention paths: {(counter, model, input_size, attn): Count}."""
    from flopcheck.counters import COUNTERS
    from flopcheck.counters.pool import Job, run_counters

    jobs = _jobs(SMALL) + _jobs(["DiT-S/2"], (64,)) + [Job.stand_in("DiT-S/2", a, **S2_T4096) for a in ("sdpa", "math")]
    return _seeded(
        {
            (c.counter, c.model, c.input_size, c.attn): c
            for c in run_counters(list(COUNTERS), jobs, timeout_s=600, workers=WORKERS)
        }
    )


@pytest.fixture(scope="session")
def large_counter_results():
    """Every registered counter on the L and XL configs, both attention paths (slow)."""
    from flopcheck.counters import COUNTERS
    from flopcheck.counters.pool import run_counters

    return _seeded(
        {
            (c.counter, c.model, c.input_size, c.attn): c
            for c in run_counters(list(COUNTERS), _jobs(LARGE), timeout_s=900, workers=WORKERS)
        }
    )


def _seeded(counts: dict) -> dict:
    """The counts, also kept in this session's audit cache under the keys the auditor looks them up by (the same
    counters on the same jobs): an audit of these models reads them instead of running every counter again."""
    from flopcheck.auditor import readings
    from flopcheck.counters.pool import Job

    for c in (c for c in counts.values() if c.model in DIT_NAMES):  # as the auditor keeps them, errors too
        readings.keep(c, Job(c.model, c.input_size, c.attn, c.batch).resolved())
    return counts


# The fast lane (`pytest -m "not integration"`, under 2 minutes) leaves out the real-counter integration tests:
# every test that runs a library counter or builds a third-party model (timm, torchvision, diffusers, a factory) in
# a child process. These modules do nothing else; elsewhere a test says so with @pytest.mark.integration, and a
# test that takes the shared counter runs is one by its fixture.
INTEGRATION_MODULES = {
    "test_specs",
    "test_diffusers",
    "test_diffusers_classes",
    "test_encoders",
    "test_pipelines",
    "test_plugins",
    "test_verdicts",
    "test_one_path",
    "test_hostile",
    "test_counters",
    "test_zoo",
}
COUNTER_FIXTURES = {"counter_results", "large_counter_results"}


def pytest_collection_modifyitems(items):
    for item in items:
        module = item.module.__name__.rpartition(".")[2]
        if module in INTEGRATION_MODULES or COUNTER_FIXTURES & set(item.fixturenames):
            item.add_marker(pytest.mark.integration)
