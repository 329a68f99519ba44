"""A counter and a cause added from one new file each (tests/plugins/), touching no other file: each runs,
is reconciled, and shows in `counters`, `reconcile`, `report` and `causes`, through the real command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

PLUGINS = Path(__file__).parent / "plugins"

# DiT-S/8 at 256 px (latent 32, T = 16), math path: the exact count is 715,948,032 FLOPs (Table 4's S/8,
# 357,974,016 MACs x 2). Softmax elements: L x heads x T x T = 12 x 6 x 16 x 16 = 18,432; at 5 FLOPs each 92,160.
EXACT, SOFTMAX5 = 715_948_032, 92_160


def flopcheck(*args: str, plugins: tuple[str, ...]) -> subprocess.CompletedProcess:
    """`python -m flopcheck.cli ARGS` with the plugins named in FLOPCHECK_PLUGINS, importable from tests/plugins."""
    env = dict(
        os.environ,
        FLOPCHECK_PLUGINS=",".join(plugins),
        PYTHONPATH=os.pathsep.join([str(PLUGINS), os.environ.get("PYTHONPATH", "")]),
    )
    return subprocess.run(
        [sys.executable, "-m", "flopcheck.cli", *args], env=env, capture_output=True, text=True, timeout=600
    )


def test_a_counter_from_one_file_runs_in_counters():
    out = flopcheck(
        "compare", "DiT-S/8", "--attn", "math", "--counter", "plugin_softmax", "--json", plugins=("plugin_softmax",)
    )
    assert out.returncode == 0, out.stderr
    (count,) = json.loads(out.stdout)
    # 715,948,032 + 92,160 = 716,040,192
    assert (count["counter"], count["flops"], count["error"]) == ("plugin_softmax", 716_040_192, None)


def test_its_number_is_reconciled_and_what_no_cause_names_is_left_unexplained():
    out = flopcheck(
        "reconcile", "DiT-S/8", "--attn", "math", "--counter", "plugin_softmax", "--json", plugins=("plugin_softmax",)
    )
    assert out.returncode == 1  # a residual no cause explains
    (r,) = json.loads(out.stdout)
    assert r["reference_flops"] == EXACT and r["residual_flops"] == SOFTMAX5
    assert [f["code"] for f in r["findings"]] == ["FC901"]


def test_a_cause_from_one_file_closes_it():
    out = flopcheck(
        "reconcile",
        "DiT-S/8",
        "--attn",
        "math",
        "--counter",
        "plugin_softmax",
        "--json",
        plugins=("plugin_softmax", "plugin_softmax_cause"),
    )
    assert out.returncode == 0, out.stdout + out.stderr
    (r,) = json.loads(out.stdout)
    assert r["findings"] == [
        {
            "code": "FC391",
            "title": "softmax-five-per-element",
            "delta_flops": SOFTMAX5,
            "evidence": "softmax (5 per element)",
        }
    ]
    assert r["residual_flops"] == 0 and r["closed"] is True


def test_both_show_in_the_report_and_the_causes_table(tmp_path):
    out = flopcheck(
        "report",
        "--models",
        "DiT-S/8",
        "--no-sweep",
        "--counter",
        "plugin_softmax",
        "--counter",
        "torch_dispatch",
        "--out",
        str(tmp_path),
        plugins=("plugin_softmax", "plugin_softmax_cause"),
    )
    assert out.returncode == 0, out.stderr
    index = (tmp_path / "index.md").read_text()
    assert "| plugin_softmax | FLOP |" in index and "FC391 · closed" in index
    causes = flopcheck("causes", plugins=("plugin_softmax_cause",))
    assert causes.returncode == 0 and "FC391 softmax-five-per-element: softmax was counted at 5" in causes.stdout
