"""The commands that compute metrics in-process run BLAS and OpenMP on one thread, as a study's evaluate
child does: a multi-threaded BLAS sums in another order, and an evaluation's last digits then followed
the machine's number of cores (seen on adult's paper files: the pMSE ratio of one S moved in its 9th digit
between one and two BLAS threads)."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from holdbench.benchmark import cli
from holdbench.benchmark.cell.isolation import THREAD_ENV, one_numeric_thread
from holdbench.benchmark.data.demo import make_demo


def _record(seen: dict):
    def run(args) -> int:
        seen["command"] = args.command
        seen["pools"] = [p["num_threads"] for p in threadpool_info()]
        seen["env"] = {k: os.environ.get(k) for k in THREAD_ENV}
        return 0
    return run


@pytest.mark.parametrize("command", cli.NUMERIC_COMMANDS)
def test_metric_commands_run_on_one_numeric_thread_and_restore_the_environment(command, monkeypatch):
    seen: dict = {}
    monkeypatch.setattr(importlib.import_module(f"holdbench.benchmark.cli.{command}"), "run", _record(seen))
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    monkeypatch.delenv("MKL_NUM_THREADS", raising=False)
    with threadpool_limits(limits=2):
        assert all(p["num_threads"] == 2 for p in threadpool_info())  # the test can tell 2 from 1
        assert cli.main([command]) == 0
        after = [p["num_threads"] for p in threadpool_info()]
    assert seen["command"] == command
    assert seen["pools"] and set(seen["pools"]) == {1}
    assert seen["env"] == dict.fromkeys(THREAD_ENV, "1")
    assert after and set(after) == {2}  # the limit ends with the command
    assert os.environ["OMP_NUM_THREADS"] == "2" and "MKL_NUM_THREADS" not in os.environ


def test_a_study_command_keeps_the_callers_threads(monkeypatch):
    seen: dict = {}
    monkeypatch.setattr(importlib.import_module("holdbench.benchmark.cli.compare"), "_compare", _record(seen))
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    with threadpool_limits(limits=2):
        assert cli.main(["compare", "a", "b"]) == 0
    assert set(seen["pools"]) == {2} and seen["env"]["OMP_NUM_THREADS"] == "2"


def test_one_numeric_thread_restores_the_environment_after_an_error(monkeypatch):
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "3")
    with pytest.raises(RuntimeError), one_numeric_thread():
        assert os.environ["OPENBLAS_NUM_THREADS"] == "1"
        raise RuntimeError("boom")
    assert os.environ["OPENBLAS_NUM_THREADS"] == "3"


def _metrics(path) -> dict:
    """metrics.json's numbers but its timings."""
    got = json.loads(path.read_text())
    return {k: v for k, v in got.items() if "seconds" not in k}


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="two BLAS threads need two cores to split a product")
def test_evaluate_on_files_gives_the_same_numbers_with_one_or_two_blas_threads(tmp_path):
    """A shuffled S of the demo table (6,000 rows each): its pMSE's logistic fit is large enough for
    OpenBLAS to split its products over two threads, which moved the pMSE ratio in its 8th digit
    (12.43734299602015 on one thread, 12.437343385926939 on two) before the command pinned BLAS."""
    table = make_demo(12000, 0)
    train, holdout = table.iloc[:6000], table.iloc[6000:]
    rng = np.random.default_rng(1)
    shuffled = pd.DataFrame({c: rng.permutation(train[c].to_numpy()) for c in train.columns})
    for name, frame in (("t", train), ("h", holdout), ("s", shuffled)):
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
    got = {}
    for threads in ("1", "2"):
        env = {**os.environ, **dict.fromkeys(THREAD_ENV, threads)}
        out = tmp_path / f"m{threads}.json"
        done = subprocess.run(
            [sys.executable, "-m", "holdbench", "evaluate", "--train", "t.csv", "--holdout", "h.csv",
             "--synthetic", "s.csv", "--out", str(out), "--n-jobs", "1", "--no-extended",
             *[a for f in ("panel", "legal", "disclosure", "attacks", "anonymeter") for a in ("--skip", f)]],
            check=False, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        got[threads] = _metrics(out)
    assert got["1"]["pmse_ratio"] > 5  # the shuffle broke the pairs: a large, well-fitted ratio
    assert got["1"] == got["2"]


def test_environ_set_restores_set_and_unset_variables_also_when_the_block_raises(monkeypatch):
    from holdbench.contracts.environ import environ_set

    monkeypatch.setenv("HB_ENV_SET_A", "before")
    monkeypatch.delenv("HB_ENV_SET_B", raising=False)
    with pytest.raises(KeyError), environ_set({"HB_ENV_SET_A": "a", "HB_ENV_SET_B": "b"}):
        assert (os.environ["HB_ENV_SET_A"], os.environ["HB_ENV_SET_B"]) == ("a", "b")
        raise KeyError("inside")
    assert os.environ["HB_ENV_SET_A"] == "before"
    assert "HB_ENV_SET_B" not in os.environ
