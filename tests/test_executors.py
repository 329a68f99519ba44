"""Executors (flopcheck.executors): the local pool or Ray behind `report --models` and `audit --file`; a run
interrupted and run again redoes only the unfinished models; either executor writes the same report, byte for byte."""

from __future__ import annotations

import importlib.util
import json
import sys
from dataclasses import dataclass, field

import pytest

from flopcheck.cache import COUNTS
from flopcheck.cli import main
from flopcheck.counters import COUNTERS
from flopcheck.counters.pool import Job
from flopcheck.executors import Finished, LocalExecutor, count_jobs, executor_of
from flopcheck.types import Count, Failed, Unit

RAY = importlib.util.find_spec("ray") is not None


def _cli(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------------------------------------
# bad input: one line, exit 2
# ---------------------------------------------------------------------------------------------


def test_ray_not_installed_is_one_line_naming_the_extra(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError, as where it is not installed
    argv = ["report", "--models", "DiT-S/8", "--no-sweep", "--executor", "ray", "--out", str(tmp_path / "r")]
    code, _, err = _cli(argv, capsys)
    assert code == 2
    assert err == "flopcheck: --executor ray needs Ray, which is not installed: pip install 'flopcheck[ray]'\n"


def test_an_unknown_executor_is_one_line_naming_the_choices(tmp_path, capsys):
    argv = ["report", "--models", "DiT-S/8", "--executor", "dask", "--out", str(tmp_path / "r")]
    code, _, err = _cli(argv, capsys)
    assert code == 2 and err.count("\n") == 1
    assert "no executor 'dask': give local, ray, or ray://HOST:PORT" in err


def test_the_python_report_refuses_a_bad_executor_before_counting():
    import flopcheck
    from flopcheck.errors import InputError

    with pytest.raises(InputError, match="no executor 'dask': give local, ray, or ray://HOST:PORT"):
        flopcheck.report("DiT-S/8", executor="dask")
    with pytest.raises(InputError, match="executor must be a string"):
        flopcheck.report("DiT-S/8", executor=2)


def test_executor_beside_one_typed_claim_is_refused(capsys):
    code, _, err = _cli(["audit", "DiT-XL/2 118.64 GFLOPs", "--executor", "local"], capsys)
    assert code == 2 and err == "flopcheck: --executor runs the models of a claims file: give --file CLAIMS.yaml\n"


def test_executor_beside_from_is_refused(tmp_path, capsys):
    argv = ["report", "--from", "reports/results.json", "--executor", "ray", "--out", str(tmp_path / "r")]
    code, _, err = _cli(argv, capsys)
    assert code == 2 and "--executor shapes what is counted" in err


# ---------------------------------------------------------------------------------------------
# resuming: an interrupted run's finished models come from the cache
# ---------------------------------------------------------------------------------------------

# DiT-S/8 at its default 256 px (latent 32, T = (32/8)^2 = 16 tokens): the flops here are stand-in numbers a fake
# executor returns, so the test follows each model's counts through the cache without running a counter
FLOPS = {"sdpa": 1_000, "math": 2_000, "fake": 3_000}


@dataclass
class Interrupted:
    """An executor that finishes `finish` jobs (a count of FLOPS[attn] each) and is then interrupted (Ctrl-C)."""

    finish: int
    ran: list[str] = field(default_factory=list)
    name: str = "fake"

    def run(self, specs, jobs, timeout_s, on_done):
        for i, job in enumerate(jobs):
            if i == self.finish:
                raise KeyboardInterrupt
            self.ran.append(job.attn)
            r = job.resolved()
            flops = FLOPS[job.attn]
            where = {k: r[k] for k in ("model", "input_size", "attn", "batch")}
            made = [Count(s.name, s.library, "1", Unit.FLOP, **where, reported=flops, flops=flops) for s in specs]
            on_done(Finished(job, tuple(made)))
        return {}


def test_a_run_interrupted_then_run_again_counts_only_the_unfinished_models(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FLOPCHECK_CACHE", str(tmp_path))
    specs = [COUNTERS["torch_dispatch"]]
    jobs = [Job("DiT-S/8", attn="sdpa"), Job("DiT-S/8", attn="math")]
    with COUNTS.isolated():
        first = Interrupted(finish=1)
        with pytest.raises(KeyboardInterrupt):
            count_jobs(specs, jobs, first)
        assert first.ran == ["sdpa"]
        COUNTS.clear()  # a new process: only the disk is left
        second = Interrupted(finish=2)
        run = count_jobs(specs, jobs, second)
    assert second.ran == ["math"]  # the sdpa model finished before the Ctrl-C: not counted again
    assert "1 of 2 models from the cache" in capsys.readouterr().err
    assert [c.flops for c in run.counts] == [1_000, 2_000]  # job order, whichever came from where
    assert run.stats["from_cache"] == 1


def test_a_failed_model_is_counted_again_on_the_next_run(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FLOPCHECK_CACHE", str(tmp_path))
    specs = [COUNTERS["torch_dispatch"]]
    jobs = [Job("DiT-S/8", attn="sdpa")]

    @dataclass
    class Failing:
        name: str = "fake"

        def run(self, specs, jobs, timeout_s, on_done):
            r = jobs[0].resolved()
            c = Failed(specs[0].name, "torch", "1", Unit.FLOP, r["model"], r["input_size"], r["attn"], error="boom")
            on_done(Finished(jobs[0], (c,)))
            return {}

    with COUNTS.isolated():
        count_jobs(specs, jobs, Failing())
        err = capsys.readouterr().err
        assert err == "flopcheck: DiT-S/8: boom\n"  # one line, the rest would go on
        again = Interrupted(finish=1)
        count_jobs(specs, jobs, again)
    assert again.ran == ["sdpa"]


def test_the_local_executor_keeps_today_s_pool_and_two_workers_by_default():
    assert executor_of("local") == LocalExecutor(workers=2)
    assert executor_of("local", 3) == LocalExecutor(workers=3)


# ---------------------------------------------------------------------------------------------
# the same report from either executor (a local Ray: CPU only, 2 CPUs)
# ---------------------------------------------------------------------------------------------

SMALL = ["--models", "DiT-S/8,zoo:timm-resnet18", "--no-sweep", "--counter", "torch_dispatch", "--workers", "2"]


@pytest.mark.integration
@pytest.mark.skipif(not RAY, reason="Ray is not installed: pip install 'flopcheck[ray]'")
def test_ray_writes_the_local_pool_s_report_byte_for_byte(tmp_path, monkeypatch, capsys):
    folders = {}
    for name in ("local", "ray"):
        monkeypatch.setenv("FLOPCHECK_CACHE", str(tmp_path / f"cache-{name}"))  # each counts every model itself
        folders[name] = tmp_path / name
        with COUNTS.isolated():
            code, out, err = _cli(["report", *SMALL, "--executor", name, "--out", str(folders[name])], capsys)
        assert code == 0, err
        assert "from the cache" not in err
    names = sorted(p.name for p in folders["local"].iterdir())
    assert names == sorted(p.name for p in folders["ray"].iterdir())
    for n in names:
        assert (folders["ray"] / n).read_bytes() == (folders["local"] / n).read_bytes(), n
    res = json.loads((folders["ray"] / "results.json").read_text())
    flops = {(c["model"], c["attn"]): c["flops"] for c in res["counts"]}
    # DiT-S/8 at 256 px, explicit attention: 2 x 357,974,016 MACs (DiT's Table 4 S/8, 0.36 GFLOPs) = 715,948,032 FLOPs
    assert flops[("DiT-S/8", "math")] == 715_948_032
    assert all(r["closed"] for r in res["reconciliations"]) and len(res["reconciliations"]) == 3


def test_the_progress_line_counts_models_and_closed_counts_on_a_terminal(monkeypatch):
    import io

    from flopcheck.executors import Progress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    screen = Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    job = Job("DiT-S/8", attn="sdpa")
    r = job.resolved()
    where = {k: r[k] for k in ("model", "input_size", "attn", "batch")}
    ok = Count("torch_dispatch", "torch", "1", Unit.FLOP, **where, reported=1, flops=1)
    failed = Failed("thop_hooks", "thop", "1", Unit.MAC, **where, error="boom")
    shown = Progress(models=2, counters=2)
    shown(Finished(job, (ok, failed)))  # one of its two counts closed: the model did not fail as a whole
    assert screen.getvalue().startswith("\r1/2 models, 1 counts closed, about ")
    shown(Finished(job, (failed, failed)))
    lines = screen.getvalue().split("\n")
    assert lines[1] == "flopcheck: DiT-S/8: boom"  # below the progress line, which goes on
    assert lines[2].startswith("\r2/2 models, 1 counts closed, about 0 s left")


# ---------------------------------------------------------------------------------------------
# a second run from the cache: the specs' measurements are kept on disk too, so it builds no model
# ---------------------------------------------------------------------------------------------


def _forward_key(text, **options):
    """A spec's forward-on-meta key, as specs.child.measured makes it."""
    from flopcheck.cache import FORWARD
    from flopcheck.specs import parse

    return json.dumps({**parse(text, **options).to_dict(), **FORWARD}, sort_keys=True)


def test_a_spec_s_measurement_is_kept_on_disk_and_read_back_by_a_new_process(tmp_path, monkeypatch):
    from flopcheck.cache import MEASURED

    monkeypatch.setenv("FLOPCHECK_CACHE", str(tmp_path))
    key, answer = _forward_key("timm:resnet18"), {"spec": {"text": "timm:resnet18"}, "exact": [[], []]}
    failed = _forward_key("timm:resnet50")
    with MEASURED.isolated():
        MEASURED.put(key, answer)
        MEASURED.put(failed, {"error": "model 'timm:resnet50' raised MemoryError: "})
        MEASURED.clear()  # a new process: only the disk is left
        assert MEASURED.get(key) == answer
        assert MEASURED.get(failed) is None  # an error is measured again next run, never kept
    assert len(list((tmp_path / "flopcheck-measured").iterdir())) == 1


def test_a_measurement_s_disk_key_follows_its_input_its_config_file_and_never_holds_user_code(tmp_path, monkeypatch):
    from flopcheck.cache import FORWARD, measured_key

    # the user's package, findable (a module no finder knows is refused before any key is made)
    (tmp_path / "my_models").mkdir()
    for name in ("__init__", "nets", "inputs"):
        (tmp_path / "my_models" / f"{name}.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    config = tmp_path / "config.json"
    config.write_text('{"num_layers": 2}')
    one = measured_key(_forward_key("diffusers:DiTTransformer2DModel", config=str(config)))
    assert one is not None and one == measured_key(_forward_key("diffusers:DiTTransformer2DModel", config=str(config)))
    config.write_text('{"num_layers": 3}')  # the same path, another model: another key
    assert measured_key(_forward_key("diffusers:DiTTransformer2DModel", config=str(config))) not in (one, None)
    assert measured_key(_forward_key("timm:resnet18")) != measured_key(
        _forward_key("timm:resnet18", resolution=(64, 64))
    )
    # the user's code can change between runs unseen (flopcheck never imports it in this process): never on disk
    assert measured_key(_forward_key("my_models.nets:build")) is None
    assert measured_key(_forward_key("timm:resnet18", inputs="my_models.inputs:make")) is None
    # a training step or a real-tensor run: this process only
    forward = json.loads(_forward_key("timm:resnet18"))
    assert measured_key(json.dumps({**forward, "training": True}, sort_keys=True)) is None
    assert measured_key(json.dumps({**forward, **FORWARD, "device": "cpu"}, sort_keys=True)) is None


@pytest.mark.integration
def test_a_second_report_from_the_cache_builds_no_model(tmp_path, monkeypatch, capsys):
    from flopcheck import children
    from flopcheck.cache import MEASURED

    monkeypatch.setenv("FLOPCHECK_CACHE", str(tmp_path / "cache"))
    argv = ["report", "--models", "zoo:timm-resnet18", "--no-sweep", "--counter", "torch_dispatch", "--workers", "1"]
    started: list[str] = []
    real = children.Child.__init__

    def spied(self, module, *args, **env):
        started.append(module)
        real(self, module, *args, **env)

    monkeypatch.setattr(children.Child, "__init__", spied)
    with COUNTS.isolated(), MEASURED.isolated():
        code, _, err = _cli([*argv, "--out", str(tmp_path / "first")], capsys)
        assert code == 0, err
        assert started == ["flopcheck.specs.child", "flopcheck.counters.worker"]  # measured, then counted
        COUNTS.clear()  # a new process: only the disk is left
        MEASURED.clear()
        started.clear()
        code, _, err = _cli([*argv, "--out", str(tmp_path / "second")], capsys)
    assert code == 0 and "1 of 1 models from the cache" in err
    assert started == []  # no child: no model built, measured or counted
    for name in ("results.json", "index.md"):
        assert (tmp_path / "second" / name).read_bytes() == (tmp_path / "first" / name).read_bytes()
    res = json.loads((tmp_path / "second" / "results.json").read_text())
    # the zoo's resnet18 at 64 px: every feature map 64/224 = 1/3.5 of the side of timm:resnet18's hand count at
    # 224 px (tests/test_specs.py, 3,628,146,688 FLOPs, fc 1,024,000 of it), so its convs do 1/12.25 of their work:
    # (3,628,146,688 - 1,024,000) / 12.25 + 1,024,000 = 297,115,648 FLOPs
    assert [f["total_flops"] for f in res["formulas"]] == [297_115_648]


# ---------------------------------------------------------------------------------------------
# Ray's actor: one of the pool's workers kept across its models (torch imported once), run here without Ray
# ---------------------------------------------------------------------------------------------


@pytest.mark.integration
def test_a_ray_actor_keeps_one_worker_across_models_and_a_fresh_one_after_a_counter_kills_it(request, monkeypatch):
    from flopcheck.counters import CounterSpec
    from flopcheck.executors import KeptWorker
    from flopcheck.types import outcome_of

    monkeypatch.setenv("PYTHONPATH", str(request.path.parent))  # tests/fake_counters: a counter that kills its worker
    killer = CounterSpec("killer", "fake_counters.killer", "pytest", Unit.FLOP, install="-", convention="-")
    job = Job("DiT-S/8", 32, "math").resolved()
    kept = KeptWorker([COUNTERS["torch_dispatch"]], timeout_s=120)
    killed = KeptWorker([killer, COUNTERS["torch_dispatch"]], timeout_s=120)
    try:
        (worker,) = kept.pool.idle  # started with the actor: its imports overlap the jobs' dispatch
        twice = [outcome_of(d) for _ in range(2) for d in kept.count(job)["counts"]]
        assert kept.pool.idle == [worker]  # one worker (one import of torch) for both models
        (first,) = killed.pool.idle
        dead, after = (outcome_of(d) for d in killed.count(job)["counts"])
        (fresh,) = killed.pool.idle
        assert fresh is not first and first.proc.poll() is not None  # the killer's worker is gone; a fresh one counted
    finally:
        kept.close()
        killed.close()
    assert kept.pool.idle == killed.pool.idle == [] and worker.proc.poll() is not None  # closed: the workers stopped
    assert (
        dead.error == "the worker it ran in died (signal SIGKILL); the job's later counters counted in a fresh worker"
    )
    # DiT-S/8 at 256 px, explicit attention: 2 x 357,974,016 MACs (DiT's Table 4 S/8, 0.36 GFLOPs) = 715,948,032 FLOPs
    assert [c.flops for c in twice] == [715_948_032, 715_948_032] and after.flops == 715_948_032


@pytest.mark.integration
def test_a_kept_pool_kills_a_worker_past_its_job_deadline_and_keeps_no_dead_worker(request):
    import time

    from flopcheck.counters import CounterSpec
    from flopcheck.counters.pool import Workers

    hang = CounterSpec("hang", "fake_counters.hang", "pytest", Unit.FLOP, install="-", convention="-")
    pool = Workers([hang], timeout_s=300, paths=(str(request.path.parent),))
    pool.job_deadline_s = 15.0  # the job's deadline first: the count's own (300 s, in its forked child) never comes
    start = time.monotonic()
    try:
        (c,) = pool.run([Job("DiT-S/8", 32).resolved()]).counts
        kept = list(pool.idle)
    finally:
        pool.close()
    assert c.error == "its worker ran past its deadline and was killed" and c.flops is None
    assert time.monotonic() - start < 60 and kept == []  # killed at 15 s, and not kept for the next call
