"""One broken synthesizer must not corrupt or stop a study: each fault, its status, the rest ok."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.workflow.helpers import cells, env_for, faulty, make_conf, run_study

pytestmark = pytest.mark.slow

#: mode -> (status, words the one-line reason must contain)
FAULTS = {
    "raise_fit": ("error", "boom in fit"),
    "raise_sample": ("error", "boom in sample"),
    "hang": ("timeout", "wall-clock limit"),
    "hog": ("oom", "memory"),
    "wrong_columns": ("error", "not_a_column"),
    "wrong_rows": ("error", "rows"),
    "all_missing": ("error", "region"),
    "wrong_type": ("error", "age"),
    "flood": ("error", "flooding"),
    "sys_exit": ("error", "sys.exit(3)"),
    "os_exit": ("error", "the synthesizer called os._exit(7)"),
    "segfault": ("error", "SIGSEGV"),
}


@pytest.fixture(scope="module")
def faults_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("faults")
    synths = {f"faulty_{m}": faulty(m) for m in FAULTS}
    names = ", ".join(["flip10", "cart", *synths])
    study = (f"name: faults\ndatasets: [demo]\nsynthesizers: [{names}]\nseeds: [0]\nn_synthetic: 500\n"
             "timeout_seconds: 25\nmemory_gb: 2.5\nmetrics: demo\n")
    conf = make_conf(tmp, {"faults": study}, synths)
    proc = run_study(tmp, "faults", env=env_for(tmp, conf), timeout=900)
    return tmp, proc


def test_study_completes_despite_faults(faults_run):
    tmp, proc = faults_run
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert (tmp / "results/faults/leaderboard.csv").exists()


@pytest.mark.parametrize("mode", list(FAULTS))
def test_each_fault_is_named_in_one_line(faults_run, mode):
    status, words = FAULTS[mode]
    cell = cells(faults_run[0], "faults")[f"demo/seed0/faulty_{mode}"]
    assert cell["status"] == status, cell
    assert words in cell["reason"], cell["reason"]
    assert "\n" not in cell["reason"] and len(cell["reason"]) <= 500


def test_healthy_cells_ok_and_leaderboard_shows_every_cell(faults_run):
    tmp = faults_run[0]
    got = cells(tmp, "faults")
    assert got["demo/seed0/flip10"]["status"] == "ok" and got["demo/seed0/cart"]["status"] == "ok"
    board = pd.read_csv(tmp / "results/faults/leaderboard.csv")
    assert len(board) == len(FAULTS) + 2
    shown = dict(zip(board["synthesizer"], board["status"]))
    assert shown["faulty_hang"] == "timeout" and shown["faulty_hog"] == "oom" and shown["flip10"] == "ok"
    assert not list((tmp / "results").rglob("synthetic.parquet.*")), "no half-written outputs"
