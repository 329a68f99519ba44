"""Hostile input at the Python doors and at the process edges: the verbs (flopcheck.api), the pipelines and the
pytest helpers refuse what the command line refuses, with the same words (one rule each, flopcheck/checks.py); a
model cannot forge the children's answers; Ctrl-C stops everything flopcheck started, at once; a forward that reads
its input's values runs its user's own inputs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

import flopcheck
from flopcheck import checks
from flopcheck.children import framed, kill_tree
from flopcheck.cli import main
from flopcheck.errors import InputError
from flopcheck.pipelines import count_pipeline, estimate_pipeline
from flopcheck.testing import assert_mfu_close

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "tests" / "models"
WHOLE = "must be a whole number from 1 to 2,147,483,647"
SECONDS = "must be a positive number of seconds, at most 604,800"
NET, X = torch.nn.Linear(4, 12), torch.zeros(2, 4)


# -- the Python doors: each refusal before anything is built or counted ------------------------------------------------
DOORS = [
    # estimate(gpus=0) gave an MFU of 844%, gpus=-4 a negative one, gpus=True "True x TPU-v3"
    (lambda: flopcheck.estimate("DiT-S/8", training=True, throughput="3 it/s", gpus=0), f"gpus {WHOLE}, got 0"),
    (lambda: flopcheck.estimate("DiT-S/8", training=True, throughput="3 it/s", gpus=-4), f"gpus {WHOLE}, got -4"),
    (lambda: flopcheck.estimate("DiT-S/8", gpu="TPU-v3", gpus=True), f"gpus {WHOLE}, got True"),
    (lambda: flopcheck.estimate("DiT-S/8", steps=True), f"steps {WHOLE}, got True"),
    (lambda: flopcheck.estimate("DiT-S/8", cfg="no"), "cfg must be True or False, got 'no'"),
    (lambda: flopcheck.estimate("DiT-S/8", mfu=-0.5), "mfu must be a fraction in (0, 1], like 0.45, got -0.5"),
    # a throughput that is not text was an AttributeError ('float' object has no attribute 'strip')
    (lambda: flopcheck.estimate("DiT-S/8", training=True, throughput=5.7), "throughput must be a string, like"),
    (lambda: flopcheck.estimate("DiT-S/8", training=True, throughput=["3 it/s"]), "throughput must be a string"),
    (lambda: flopcheck.audit("DiT-S/8 1 GFLOPs", timeout_s=-1), f"timeout_s {SECONDS}, got -1"),
    # 1e10 s is past time_t: an OverflowError in select, in every row of compare, exit 0
    (lambda: flopcheck.audit("DiT-S/8 1 GFLOPs", timeout_s=1e10), f"timeout_s {SECONDS}, got 10000000000.0"),
    (lambda: flopcheck.compare(NET, X, timeout_s=1e10), f"timeout_s {SECONDS}"),
    (lambda: flopcheck.count("DiT-S/8", timeout_s=True), f"timeout_s {SECONDS}, got True"),
    (lambda: flopcheck.audit(118.64), "claim must be a string, like 'DiT-XL/2 118.64 GFLOPs', got 118.64"),
    # formulas=[None] was an AttributeError ('NoneType' object has no attribute 'strip')
    (lambda: flopcheck.reconcile("DiT-S/8", formulas=[None]), "formulas must be a list of names, like"),
    (lambda: flopcheck.compare(NET, X, counters=[3]), "counters must be a list of names, like"),
    (lambda: flopcheck.report("DiT-S/8", workers=0), f"workers {WHOLE}, got 0"),
    # count_pipeline(cfg="no") turned CFG on; estimate_pipeline(..., 0) divided by zero; -0.5 gave negative seconds
    (lambda: count_pipeline("diffusers-pipeline:FLUX.1-dev", cfg="no"), "cfg must be True or False, got 'no'"),
    (lambda: estimate_pipeline("diffusers-pipeline:FLUX.1-dev", "H100", 0), "mfu must be a fraction in (0, 1]"),
    (lambda: estimate_pipeline("diffusers-pipeline:FLUX.1-dev", "H100", -0.5), "got -0.5"),
    (lambda: count_pipeline("diffusers-pipeline:FLUX.1-dev", timeout_s=1e10), f"timeout_s {SECONDS}"),
    # a named model's options: batch=0 counted 0 FLOPs, batch=True counted as 1, resolution='abc' a ValueError
    (lambda: flopcheck.count("DiT-S/8", options={"batch": 0}), f"batch {WHOLE}, got 0"),
    (lambda: flopcheck.count("DiT-S/8", options={"batch": True}), f"batch {WHOLE}, got True"),
    (lambda: flopcheck.count("DiT-S/8", options={"resolution": "abc"}), "resolution must be one side or (W, H)"),
    (lambda: flopcheck.count("timm:resnet18", options={"input_shape": (1, -3, 8, 8)}), "input_shape must be whole"),
    # audit's scope: a throughput of 5.7 was an AttributeError in the rate reader
    (
        lambda: flopcheck.audit("DiT-S/8 45% MFU", counters=False, scope={"gpu": "H100", "throughput": 5.7}),
        "throughput must be a string, like '3.1 it/s', got 5.7",
    ),
    (lambda: assert_mfu_close(NET, X, 0.4, samples_per_second=10, gpu="H100", gpus=True), f"gpus {WHOLE}, got True"),
    (lambda: assert_mfu_close(NET, X, 1.5, samples_per_second=10, gpu="H100"), "mfu must be a fraction in (0, 1]"),
]


@pytest.mark.parametrize("call, words", DOORS, ids=[str(i) for i in range(len(DOORS))])
def test_a_python_door_refuses_what_the_command_line_refuses_in_one_line(call, words):
    with pytest.raises(InputError) as err:
        call()
    assert words in str(err.value) and "\n" not in str(err.value)


def test_an_omission_limit_of_nan_is_refused_not_an_invalid_operation():
    # Decimal('NaN') compared with 0 raised decimal.InvalidOperation out of audit(scope={'omission_limit': 'nan'})
    with pytest.raises(InputError, match="omission_limit must be a finite number, like 0.10, got 'nan'"):
        flopcheck.audit("DiT-S/8 1 GFLOPs", counters=False, scope={"omission_limit": "nan"})


@pytest.mark.parametrize(
    "argv, words",
    [
        (["estimate", "DiT-S/8", "--training", "--throughput", "3 it/s", "--gpus", "0"], f"{WHOLE}, got '0'"),
        (["compare", "DiT-S/8", "--timeout", "1e10"], f"{SECONDS}, got '1e10'"),
        (["estimate", "DiT-S/8", "--mfu", "-0.5"], "must be a fraction in (0, 1], like 0.45, got '-0.5'"),
    ],
)
def test_the_command_line_says_the_same_rule_as_the_python_door(argv, words, capsys):
    # the same Rule (flopcheck.checks) words both: the flag's text here, the Python value at the door
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1


@pytest.mark.parametrize(
    "rule, value, holds",
    [
        (checks.WHOLE, True, False),  # a bool is no count
        (checks.WHOLE, 2.0, False),  # nor a float, whole or not
        (checks.WHOLE, 2**31 - 1, True),
        (checks.WHOLE, 2**31, False),
        (checks.WHOLE, 10**400, False),  # past a float's range: refused, not an OverflowError
        (checks.SECONDS, 604_800, True),  # a week
        (checks.SECONDS, 604_801, False),
        (checks.SECONDS, float("nan"), False),
        (checks.FRACTION, 1, True),
        (checks.FRACTION, 0, False),
        (checks.SHARE, 0, True),
        (checks.SHARE, 1, False),
        (checks.SHARE, "0.1", False),  # text is the command line's to parse, not a number here
    ],
)
def test_a_rule_holds_for_its_numbers_only(rule, value, holds):
    assert rule.holds(value) is holds


def test_a_config_with_a_negative_count_is_refused_naming_the_key():
    # num_hidden_layers: -2 was built and evaluated (a __len__ error blamed on the inputs), never refused
    config = {"hidden_size": 64, "text_config": {"num_hidden_layers": -2}, "pad_token_id": -1}
    with pytest.raises(InputError, match=r"text_config.num_hidden_layers is -2: a count or size is a whole number"):
        checks.config_counts(config)
    checks.config_counts({"pad_token_id": -1, "sliding_window": -1, "hidden_size": 0})  # not counts: as they are


@pytest.mark.integration  # its spec is read in a child that imports transformers
def test_a_negative_layer_count_in_a_config_file_is_one_line_exit_2(tmp_path, capsys):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": -2}))
    assert main(["count", "transformers:LlamaForCausalLM", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert f"--config {config}: num_hidden_layers is -2" in err and err.count("\n") == 1


# -- the children's answers cannot be forged ---------------------------------------------------------------------------
def test_an_answer_is_the_json_after_the_last_token_and_nothing_else_is():
    token = b"0123abcd"
    assert framed(b'{"done": true}', token) is None  # no token: the model's line, never an answer
    assert framed(b'half a {"line' + token + b'{"flops": 32}', token) == {"flops": 32}  # a partial write before
    assert framed(token + b"{bad json", token) is None
    assert framed(token + b"[1, 2]", token) is None  # an answer is one JSON object


@pytest.mark.integration
def test_a_model_that_forges_the_child_protocol_is_counted_as_it_is(capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(MODELS))
    # it writes {"done": true}, a fake count and '{"total_flops": 1' into every descriptor, in its factory (the
    # spec's child) and its forward (the counters' worker and their forked children): a JSONDecodeError traceback in
    # the parent before; now Linear(4 -> 4) on one row, 2 x 4 x 4 = 32 FLOPs, from every door
    assert main(["count", "forges:build", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["total_flops"] == 32
    assert main(["compare", "forges:build", "--counter", "torch_dispatch", "--counter", "fvcore_jit", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    # torch_dispatch counts FLOPs (32), fvcore MACs (16 = 32 / 2)
    assert [(r["counter"], r["reported"]) for r in rows] == [("torch_dispatch", 32), ("fvcore_jit", 16)]


# -- Ctrl-C: one line, exit 130, every process gone --------------------------------------------------------------------
def _running(pid: int) -> bool:
    """The process exists and is not a zombie (a dead one its new parent has not reaped yet)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != b"Z"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="the process tree is read from /proc")
def test_kill_tree_stops_a_grandchild_that_left_the_session():
    script = (
        "import os, sys, time\n"
        "pid = os.fork()\n"
        "if pid == 0:\n    os.setsid(); print(os.getpid(), flush=True); time.sleep(60); os._exit(0)\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, start_new_session=True)
    assert proc.stdout is not None
    grandchild = int(proc.stdout.readline())
    assert _running(grandchild) and os.getsid(grandchild) != os.getsid(proc.pid)  # out of the child's session
    kill_tree(proc.pid)
    proc.wait(timeout=10)
    for _ in range(50):  # SIGKILL is delivered at once; its reaping by init is not ours to wait on
        if not _running(grandchild):
            break
        time.sleep(0.1)
    assert proc.returncode == -signal.SIGKILL and not _running(grandchild)


@pytest.mark.integration
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="the process tree is read from /proc")
@pytest.mark.parametrize(
    "argv",
    [
        ["report", "--models", "hangs:build", "--no-sweep", "--timeout", "300"],  # waited for the spec's deadline
        ["audit", "hangs:build 1 GFLOPs", "--timeout", "300"],  # 28-39 lines of traceback from children.py
    ],
    ids=["report", "audit"],
)
def test_ctrl_c_stops_at_once_in_one_line_with_every_process_gone(argv, tmp_path):
    marker = tmp_path / "grandchild.pid"
    env = dict(
        os.environ,
        FLOPCHECK_TEST_MARKER=str(marker),
        PYTHONPATH=os.pathsep.join([str(ROOT), str(MODELS), os.environ.get("PYTHONPATH", "")]),
    )
    out = ["--out", str(tmp_path / "report")] if argv[0] == "report" else []
    proc = subprocess.Popen(
        [sys.executable, "-m", "flopcheck.cli", *argv, *out], env=env, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 120
    while not (marker.is_file() and marker.read_text()) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    grandchild = int(marker.read_text())  # the hanging factory's grandchild, in a session of its own
    proc.send_signal(signal.SIGINT)
    start = time.monotonic()
    _, err = proc.communicate(timeout=60)
    assert time.monotonic() - start < 10  # at once: the spec's deadline is 300 s away
    assert proc.returncode == 130
    assert err == "flopcheck: interrupted (Ctrl-C): every process it started is stopped\n"
    for _ in range(50):
        if not _running(grandchild):
            break
        time.sleep(0.1)
    assert not _running(grandchild)


@pytest.mark.integration
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="the process tree is read from /proc")
def test_ctrl_c_in_a_python_verb_stops_its_children_and_raises_keyboard_interrupt(tmp_path):
    marker = tmp_path / "grandchild.pid"
    env = dict(
        os.environ,
        FLOPCHECK_TEST_MARKER=str(marker),
        PYTHONPATH=os.pathsep.join([str(ROOT), str(MODELS), os.environ.get("PYTHONPATH", "")]),
    )
    script = (
        "import flopcheck\n"
        "try:\n    flopcheck.count('hangs:build', timeout_s=300)\n"
        "except KeyboardInterrupt:\n    print('KeyboardInterrupt', flush=True)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (marker.is_file() and marker.read_text()) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    grandchild = int(marker.read_text())
    proc.send_signal(signal.SIGINT)
    start = time.monotonic()
    out, _ = proc.communicate(timeout=60)
    # the caller's own KeyboardInterrupt, at once (the count's deadline is 300 s away), its spec's child and the
    # grandchild that left the session gone
    assert out == "KeyboardInterrupt\n" and time.monotonic() - start < 10
    for _ in range(50):
        if not _running(grandchild):
            break
        time.sleep(0.1)
    assert not _running(grandchild)


# -- a forward that reads its input's values runs its user's own inputs ------------------------------------------------
@pytest.mark.integration
def test_a_data_dependent_loop_runs_the_factorys_own_inputs(capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(MODELS))
    assert main(["count", "reads_values:build_loop", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    # its input is 3.0 everywhere and too large for a value shadow on meta, so it counts on real CPU tensors: the
    # loop runs mean(x) = 3 times, Linear(4 -> 4) on one row each, 3 x 2 x 4 x 4 = 96 FLOPs (its inputs replaced by
    # zeros, it ran 0 times: 0 FLOPs, exit 0)
    assert d["total_flops"] == 96 and d["exact_count_device"] == "cpu"
    said = "its own inputs, from its factory or --inputs, as they were made: none replaced"
    assert any(said in n for n in d["notes"])
