"""Shared helpers: the 12 DiT configs of the paper's Table 4, and one run of every counter that
the counter and reconciler tests share (counters are slow: torch and a library per process)."""

import glob
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

T = TypeVar("T")

# counters' outputs are audit readings, cached on disk: one folder for this test session (and its CLI children),
# never the user's ~/.cache; made by the controller where the user set none, and removed by it at the end
MADE_CACHE = "FLOPCHECK_CACHE" not in os.environ
if MADE_CACHE:
    os.environ["FLOPCHECK_CACHE"] = tempfile.mkdtemp(prefix="flopcheck-test-cache-")
# the session's shared folder, made by the controller before its workers start (they inherit the variable):
# shared_once's results and locks (removed at the end by the process that made it)
MADE_SHARED = "FLOPCHECK_TEST_SHARED" not in os.environ
if MADE_SHARED:  # made here only (a worker's inherited folder is its controller's)
    os.environ["FLOPCHECK_TEST_SHARED"] = tempfile.mkdtemp(prefix="flopcheck-test-shared-")
SHARED = Path(os.environ["FLOPCHECK_TEST_SHARED"])
if os.environ.get("PYTEST_XDIST_WORKER"):  # two workers on two cores: one torch thread each (their children too)
    os.environ.setdefault("OMP_NUM_THREADS", "1")

TIMM_CLAIMS = "claims/timm_infer_gmacs.yaml"  # audited with fvcore alone (test_verdicts)
RATE_CLAIMS = "claims/utilization.yaml"  # judged claim by claim in test_utilization (they read no counter)
AUDITED_APART = {TIMM_CLAIMS, RATE_CLAIMS}
MODELS = Path(__file__).resolve().parent / "models"  # small user models, importable as specs once on sys.path
DIT_NAMES = [f"DiT-{s}/{p}" for s in ("S", "B", "L", "XL") for p in (2, 4, 8)]
SMALL = [n for n in DIT_NAMES if n[4] in "SB"]
# Of the L and XL configs, XL/2 runs whole on real tensors (every counter's own output on it is pinned,
# test_verdicts.PRINTED), as do those under CARRY_OVER_FLOPS (L/4 39.4, XL/8 14.8, L/8 9.9 GFLOPs); L/2 (161) and
# XL/4 (58 GFLOPs) run as the auditor runs a model it does not execute whole: their 1-block stand-ins on real
# tensors, at the model's width, heads and tokens, each counter's count carried to every block (XL/2's too, for the
# audits). The convention per layer is the same at every depth; the whole L/2 and XL/4 were 42% of the forward work.
CARRY_OVER_FLOPS = 50 * 10**9  # over DiT-B/2's 46.0 GFLOPs: every S and B config still runs whole
LARGE_WHOLE = ["DiT-XL/2", "DiT-L/4", "DiT-L/8", "DiT-XL/8"]
LARGE_ONE_BLOCK = ["DiT-L/2", "DiT-XL/2", "DiT-XL/4"]


# A tiny causal LM's config (transformers' Llama, Mistral, Mixtral names): 2 layers of width 64, 4 heads of 16 with
# 2 kv heads, MLP 128, vocabulary 128; its counts are derived by hand where a test uses it
TINY_LM = dict(
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    vocab_size=128,
    max_position_embeddings=1024,
    tie_word_embeddings=False,
)


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
    from flopcheck.counters.pool import Job

    jobs = _jobs(SMALL) + _jobs(["DiT-S/2"], (64,)) + [Job.stand_in("DiT-S/2", a, **S2_T4096) for a in ("sdpa", "math")]
    return shared_once("counter_results", lambda: _seeded(jobs, timeout_s=600))


@pytest.fixture(scope="session")
def large_counter_results():
    """Every registered counter on XL/2, L/4, L/8 and XL/8 whole and on the 1-block stand-ins of L/2, XL/2 and XL/4
    (the auditor's, see CARRY_OVER_FLOPS), both attention paths."""
    from flopcheck.counters.pool import Job

    stand_ins = [Job.stand_in(n, a, depth=1) for n in LARGE_ONE_BLOCK for a in ("sdpa", "math")]
    jobs = _jobs(LARGE_WHOLE) + stand_ins
    return shared_once("large_counter_results", lambda: _seeded(jobs, timeout_s=900))


def _seeded(jobs: list, timeout_s: float) -> dict:
    """Every registered counter on the jobs, {(counter, model label, input_size, attn): Count}, each count also kept
    in this session's audit cache under the key the auditor looks it up by (the same counter on the same job): an
    audit of these models reads them instead of running every counter again."""
    from flopcheck.auditor import readings
    from flopcheck.counters import COUNTERS
    from flopcheck.counters.pool import run_counters

    by_label = {(r["model"], r["input_size"], r["attn"]): r for r in (j.resolved() for j in jobs)}
    counts = {}
    for c in run_counters(list(COUNTERS), jobs, timeout_s=timeout_s, workers=WORKERS):
        counts[(c.counter, c.model, c.input_size, c.attn)] = c
        readings.keep(c, by_label[(c.model, c.input_size, c.attn)])  # as the auditor keeps them, errors too
    return counts


@pytest.fixture(scope="session")
def committed_verdicts(counter_results, large_counter_results):  # noqa: ARG001  (they seed the audit cache)
    """Every committed claim but timm's table and the utilization claims (AUDITED_APART), audited once as `flopcheck
    audit --file` does (every counter a reading, in one pool; L/2, XL/2 and XL/4 carried, CARRY_OVER_FLOPS): {claims
    file: {id: (claim, verdict)}}, for test_verdicts (each pinned `expect`) and test_audit (what each verdict is made
    of)."""
    from flopcheck.auditor import load_claims
    from flopcheck.auditor.tools import prefetch
    from flopcheck.verbs.audit import judge_claim

    def audit() -> dict:
        files = {p: load_claims(p) for p in sorted(glob.glob("claims/*.yaml")) if p not in AUDITED_APART}
        with pytest.MonkeyPatch.context() as mp:
            carry_large_configs(mp)
            prefetch([c for claims in files.values() for c in claims])
            return {p: {c.id: (c, judge_claim(c)) for c in claims} for p, claims in files.items()}

    return shared_once("committed_verdicts", audit)


@pytest.fixture
def large_configs_carried(monkeypatch):
    """Within the test the auditor carries counters' readings of L/2, XL/2 and XL/4 from their 1-block stand-ins."""
    carry_large_configs(monkeypatch)


def carry_large_configs(mp: pytest.MonkeyPatch) -> None:
    """The auditor's real-tensor limit lowered from 250 to 50 GFLOPs a forward (CARRY_OVER_FLOPS): over it, as over
    250, it reads each counter on the model's stand-ins (large_counter_results seeds them) and carries it."""
    mp.setattr("flopcheck.auditor.readings.REAL_TENSOR_LIMIT", CARRY_OVER_FLOPS)


def reconciled(runs: dict[str, tuple[str, tuple[str, ...], dict]], paths: tuple[str, ...] = ()) -> dict[str, dict]:
    """Each run {name: (spec, counters, its options as `resolve` takes them: config, text_tokens, ...)} reconciled as
    `flopcheck reconcile SPEC --counter ... --json` reconciles it, all in one batch: the exact counts in as few spec
    children as can be, every counter in one pool (a worker imports torch and the libraries once and counts model
    after model): {name: {counter: its reconciliation as the JSON gives it}}. `paths`: folders the specs' modules are
    imported from (on sys.path while it runs, as a user's PYTHONPATH)."""
    import json
    import sys

    from flopcheck.render import to_json
    from flopcheck.subject import measure_all, resolve
    from flopcheck.verbs.reconcile import run as reconcile

    sys.path[:0] = paths
    try:
        subjects = {name: resolve(spec, **options) for name, (spec, _, options) in runs.items()}
        by_text = {s.text: name for name, s in subjects.items()}
        assert len(by_text) == len(runs), "one run a spec: its rows are found by the spec's text"
        measure_all(list(subjects.values()))
        counters = list(dict.fromkeys(c for _, names, _ in runs.values() for c in names))
        rows = json.loads(to_json(reconcile(list(subjects.values()), counters).to_data()))
    finally:
        del sys.path[: len(paths)]
    found: dict[str, dict] = {name: {} for name in runs}
    for r in rows:
        name = by_text[r["model"]]
        if r["counter"] in runs[name][1]:  # a counter another run asked for counted this model too: not read
            found[name][r["counter"]] = r
    return found


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


# The suite runs on two pytest-xdist workers (pyproject's addopts, `-n 2 --dist worksteal`): each worker takes a
# half of the tests in file order and steals from the other when it runs dry, so a module's tests mostly run on one
# worker. A run that tests on both workers share (the session's counter runs, a module's batch of counter runs) is
# made once, by `shared_once`: xdist's documented recipe for session-scoped fixtures, a file lock in a folder the
# session shares (SHARED) and the result pickled beside it.


def shared_once(name: str, compute: Callable[[], T]) -> T:
    """compute() once per test session: under xdist the first worker to ask computes it under a file lock in the
    session's shared folder (SHARED) and pickles it there; a worker that asks later (or while it is made) reads it."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):  # one process: the caller's scope (fixture, @cache) holds it
        return compute()
    import pickle

    from filelock import FileLock  # a dependency of torch

    done = SHARED / f"{name}.pickle"
    with FileLock(str(SHARED / f"{name}.lock")):
        if done.is_file():
            result: T = pickle.loads(done.read_bytes())
            return result
        result = compute()
        done.write_bytes(pickle.dumps(result))
        return result


def pytest_unconfigure(config: pytest.Config) -> None:
    if MADE_SHARED:  # the controller (or the one process): its workers are done
        shutil.rmtree(SHARED, ignore_errors=True)
    if MADE_CACHE:  # the folder this session made, never one the user named
        shutil.rmtree(os.environ["FLOPCHECK_CACHE"], ignore_errors=True)


def pytest_collection_modifyitems(items):
    for item in items:
        module = item.module.__name__.rpartition(".")[2]
        if module in INTEGRATION_MODULES or COUNTER_FIXTURES & set(item.fixturenames):
            item.add_marker(pytest.mark.integration)
