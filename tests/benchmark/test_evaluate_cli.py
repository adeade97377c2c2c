"""`holdbench evaluate` through its own argparse registration (holdbench.benchmark.cli's other commands
may not exist yet, so the subcommand is mounted on a bare parser here)."""

from __future__ import annotations

import argparse
import json
import sys
import types

import numpy as np
import pandas as pd
import pytest

from holdbench.benchmark.cli import evaluate as cli
from holdbench.contracts.io import InputError


def run(argv):
    parser = argparse.ArgumentParser(prog="holdbench")
    sub = parser.add_subparsers(dest="command", required=True)
    cli.register(sub)
    args = parser.parse_args(argv)
    return args.func(args)


@pytest.fixture
def tables(tmp_path):
    rng = np.random.default_rng(0)

    def make(n):
        return pd.DataFrame({"age": rng.integers(18, 80, n), "job": rng.choice(["a", "b", "c"], n),
                             "flag": rng.random(n) < 0.3})

    paths = {}
    for name, n in (("train", 120), ("holdout", 100), ("synthetic", 150)):
        paths[name] = tmp_path / f"{name}.csv"
        make(n).to_csv(paths[name], index=False)
    pq = tmp_path / "synthetic.parquet"
    pd.read_csv(paths["synthetic"]).to_parquet(pq)
    paths["parquet"] = pq
    return paths


def test_evaluate_writes_json_and_prints_summary(tables, tmp_path, capsys):
    out = tmp_path / "res" / "metrics.json"
    assert run(["evaluate", "--train", str(tables["train"]), "--holdout", str(tables["holdout"]),
                "--synthetic", str(tables["synthetic"]), "--out", str(out), "--seed", "2"]) == 0
    printed = capsys.readouterr().out
    assert "DCR share" in printed and "F3 ratio" in printed and "95% CI" in printed
    d = json.loads(out.read_text())
    assert d["n_train"] == 120 and d["n_synthetic"] == 150 and d["seed"] == 2
    assert d["synthetic"].endswith("synthetic.csv") and d["dataset"] is None
    assert d["ims_synthetic"] is not None


def test_parquet_and_options(tables, tmp_path):
    out = tmp_path / "m.json"
    run(["evaluate", "--train", str(tables["train"]), "--holdout", str(tables["holdout"]),
         "--synthetic", str(tables["parquet"]), "--out", str(out), "--max-combinations", "2",
         "--privacy-sample", "40", "--no-extended", "--n-jobs", "2"])
    d = json.loads(out.read_text())
    assert d["combinations_sampled"] and d["n_combinations_2"] == 2 and d["n_privacy"] == 40
    assert d["families"].startswith("fidelity,privacy") and "panel" not in d["families"].split(",")
    assert "gower_dcr_share" not in d


def test_holdout_row_needs_no_synthetic(tables, tmp_path, capsys):
    out = tmp_path / "h.json"
    run(["evaluate", "--train", str(tables["train"]), "--holdout", str(tables["holdout"]),
         "--holdout-row", "--out", str(out)])
    d = json.loads(out.read_text())
    assert d["holdout_row"] and d["F2_ratio"] == 1.0 and d["n_synthetic"] == 100 and d["synthetic"] is None
    assert "holdout reference row" in capsys.readouterr().out


def test_errors_are_value_errors_with_clear_messages(tables, tmp_path):
    base = ["evaluate", "--train", str(tables["train"]), "--holdout", str(tables["holdout"])]
    with pytest.raises(ValueError, match="--synthetic is required"):
        run(base)
    with pytest.raises(InputError, match="nope.csv: no such file"):
        run(base + ["--synthetic", str(tmp_path / "nope.csv")])
    bad = tmp_path / "bad.csv"
    pd.read_csv(tables["synthetic"]).drop(columns="job").to_csv(bad, index=False)
    with pytest.raises(ValueError, match="missing \\['job'\\]"):
        run(base + ["--synthetic", str(bad)])
    # an empty T, H or S, a --target T has not and an S over --max-rows are named before anything is read whole
    empty = tmp_path / "empty.csv"
    pd.read_csv(tables["synthetic"]).head(0).to_csv(empty, index=False)
    for argv, message in (
            (["evaluate", "--train", str(empty), "--holdout", str(tables["holdout"]), "--synthetic",
              str(tables["synthetic"])], r"train \(T\) .*empty.csv: the file has a header but no rows"),
            (base + ["--synthetic", str(empty)], r"synthetic .*empty.csv: the file has a header but no rows"),
            (base + ["--synthetic", str(tables["synthetic"]), "--target", "income"],
             r"--target 'income' is not a column of T \(.*train.csv\)"),
            (base + ["--synthetic", str(tables["synthetic"]), "--max-rows", "149"],
             r"synthetic .*synthetic.csv: about 150 rows, more than --max-rows 149"),
            (base + ["--synthetic", str(tables["synthetic"]), "--max-rows", "0"], "--max-rows must be a positive")):
        with pytest.raises(ValueError, match=message):
            run(argv)
    assert run(base + ["--synthetic", str(tables["synthetic"]), "--max-rows", "150", "--skip", "utility"]) == 0


def test_dataset_option_takes_kinds_from_the_dataset_schema(tables, tmp_path, monkeypatch):
    calls = []

    def dataset_schema(name):
        calls.append(name)
        return types.SimpleNamespace(kinds={"age": "categorical", "job": "categorical", "flag": "numeric"}, dates=(),
                                     drop=())

    stub = types.SimpleNamespace(dataset_schema=dataset_schema, flat_config=lambda name: {})  # a config without drop
    monkeypatch.setitem(sys.modules, "holdbench.benchmark.data.tables", stub)
    out_ds, out_plain = tmp_path / "ds.json", tmp_path / "plain.json"
    common = ["evaluate", "--train", str(tables["train"]), "--holdout", str(tables["holdout"]),
              "--synthetic", str(tables["synthetic"]), "--no-extended"]
    run(common + ["--dataset", "mine", "--out", str(out_ds)])
    run(common + ["--out", str(out_plain)])
    assert calls == ["mine"]
    ds, plain = json.loads(out_ds.read_text()), json.loads(out_plain.read_text())
    assert ds["dataset"] == "mine"
    # age as categorical keeps every distinct age in F1, as numeric it is cut into quantile bins
    assert ds["F1"] != plain["F1"]


def test_a_familys_warnings_are_one_plain_line_each_after_its_time(capsys):
    import warnings

    class Family:
        name = "fake"

        def compute(self, data):
            warnings.warn("pMSE: logistic fit did not converge", RuntimeWarning, stacklevel=1)
            warnings.warn("pMSE: logistic fit did not converge", RuntimeWarning, stacklevel=1)
            return data + 1

    family = Family()
    cli._announce(family)
    assert family.compute(1) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("[holdbench] fake ... ") and err[0].endswith(" s")
    assert err[1:] == ["[holdbench] fake: warning: pMSE: logistic fit did not converge"]  # once, no source line

    class Failing(Family):
        def compute(self, data):
            warnings.warn("about to fail", UserWarning, stacklevel=1)
            raise ValueError("broken")

    failing = Failing()
    cli._announce(failing)
    with pytest.raises(ValueError, match="broken"):
        failing.compute(1)
    err = capsys.readouterr().err.splitlines()
    assert "failed after" in err[0] and err[1:] == ["[holdbench] fake: warning: about to fail"]
