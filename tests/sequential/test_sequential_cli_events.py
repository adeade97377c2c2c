"""`holdbench evaluate` and `holdbench check` on event files without subject attributes (--train-events,
--holdout-events, --synthetic-events with --key and --order): no config needed, nothing synthetic added,
and bad input named before any metric runs."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from holdbench.benchmark.cli import main

FAST = ["--skip", "subject_panel", "--skip", "subject_legal", "--skip", "subject_attacks"]


def _events(n: int, seed: int) -> pd.DataFrame:
    """n sequences in file row order (no order column), with a timestamp and two event columns."""
    rng = np.random.default_rng(seed)
    rows = []
    for k in range(n):
        t = pd.Timestamp("2024-03-01") + pd.Timedelta(hours=int(rng.integers(0, 500)))
        for _ in range(int(rng.integers(1, 6))):
            rows.append({"account": f"a{seed}-{k}", "ts": t.strftime("%Y-%m-%d %H:%M"),
                         "channel": str(rng.choice(["web", "app", "shop"])), "amount": int(rng.integers(1, 90))})
            t += pd.Timedelta(hours=float(rng.exponential(30)) + 1)
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("events")
    out = {}
    for role, seed in (("train", 0), ("holdout", 1), ("synthetic", 2)):
        out[role] = tmp / f"{role}.csv"
        _events(120, seed).to_csv(out[role], index=False)
    return out


def _argv(files, order=("row",), **replaced) -> list[str]:
    paths = {**files, **replaced}
    return ([f"--{r}-events={paths[r]}" for r in ("train", "holdout", "synthetic")]
            + ["--key", "account", "--order", *order])


def test_evaluate_scores_event_files_with_key_and_row_order(files, tmp_path, capsys):
    out = tmp_path / "m.json"
    assert main(["evaluate", *_argv(files), "--out", str(out), *FAST]) == 0
    text = capsys.readouterr().out
    assert "sequences without subject attributes (train.csv: key 'account', order row, datetimes ['ts'])" in text
    assert "H floored to" in text or "each sequential ratio is S's distance / max(H's distance, 0.01)" in text
    d = json.loads(out.read_text())
    assert d["n_subjects_train"] == 120 and d["n_subjects_synthetic"] == 120
    assert d["train_subjects"] is None and d["train_events"] == str(files["train"])
    assert 0 < d["seq_F3_ratio"] < 5 and d["seq_keys_interleaved"] == 0
    assert d["seq_gap_ratio"] is None  # row order, no time column: no gap measure


def test_order_by_a_datetime_column_measures_gaps(files, capsys):
    assert main(["evaluate", *_argv(files, order=("ts",)), *FAST]) == 0
    text = capsys.readouterr().out
    assert "order ['ts'], datetimes ['ts'], time 'ts'" in text
    assert "Inter-event gap ratio" in text and "Sequences out of order" in text


def test_row_order_with_a_time_column_reports_events_out_of_time_order(files, tmp_path, capsys):
    late = tmp_path / "synthetic.csv"
    # each account's rows reversed: in row order its timestamps now go backwards
    _events(120, 2).iloc[::-1].to_csv(late, index=False)
    out = tmp_path / "m.json"
    assert main(["evaluate", *_argv(files, synthetic=late), "--time", "ts", "--out", str(out), *FAST]) == 0
    d = json.loads(out.read_text())
    assert d["seq_out_of_order"] == 1.0 and d["seq_out_of_order_holdout"] == 0.0 and d["seq_gap_ratio"] > 1
    assert "S has events out of order" in capsys.readouterr().out


def test_check_takes_the_same_event_files(files, capsys):
    code = main(["check", *_argv(files), *FAST])
    text = capsys.readouterr().out
    assert code in (0, 1) and "subject_dcr_share_interval" in text


def test_a_missing_key_column_is_named_with_the_file(files, tmp_path, capsys):
    bad = tmp_path / "synthetic.csv"
    _events(30, 2).drop(columns=["account"]).to_csv(bad, index=False)
    assert main(["evaluate", *_argv(files, synthetic=bad), *FAST]) == 2
    assert f"synthetic data {bad}: the key column 'account' is missing" in capsys.readouterr().err
    assert main(["evaluate", *_argv(files)[:3], "--key", "acount", "--order", "row", *FAST]) == 2
    assert "the key column 'acount' (--key) is missing (did you mean 'account'" in capsys.readouterr().err


def test_an_event_column_missing_from_s_is_named_alone(files, tmp_path, capsys):
    bad = tmp_path / "synthetic.csv"
    _events(30, 2).drop(columns=["amount"]).to_csv(bad, index=False)
    assert main(["evaluate", *_argv(files, synthetic=bad), *FAST]) == 2
    err = capsys.readouterr().err
    assert f"{bad} (events table): columns differ" in err and "missing ['amount']" in err
    assert "unexpected" not in err, "an empty side of the difference is named"


@pytest.mark.parametrize("argv, message", [
    (["--order", "row"], "need --key"),
    (["--key", "account"], "need --key"),
    (["--key", "account", "--order", "row", "ts"], "`row` stands alone"),
    (["--key", "account", "--order", "when"], "order column(s) ['when'] (--order) are missing"),
    (["--key", "account", "--order", "tss"], "order column(s) ['tss'] (--order) are missing (did you mean 'ts'?)"),
])
def test_usage_errors_of_the_event_form(files, argv, message, capsys):
    base = [f"--{r}-events={files[r]}" for r in ("train", "holdout", "synthetic")]
    assert main(["evaluate", *base, *argv, *FAST]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("command", ["evaluate", "check", "report"])
def test_holdout_events_that_are_the_training_events_are_refused(files, tmp_path, capsys, command):
    out = {"evaluate": ["--out", str(tmp_path / "m.json")], "report": ["--out", str(tmp_path / "r")], "check": []}
    assert main([command, *_argv(files, holdout=files["train"]), *out[command], *FAST]) == 2
    assert (f"--holdout-events {files['train']}: the same table as --train-events {files['train']}; H must hold real "
            "records the generator never saw") in capsys.readouterr().err


def test_a_datetime_column_that_does_not_parse_is_named(files, tmp_path, capsys):
    bad = tmp_path / "holdout.csv"
    _events(30, 1).assign(ts=lambda d: d["ts"].where(d.index != 3, "31/02/2024")).to_csv(bad, index=False)
    assert main(["evaluate", *_argv(files, holdout=bad), *FAST]) == 2
    err = capsys.readouterr().err
    assert f"{bad}: datetime column 'ts'" in err and "'31/02/2024'" in err


def test_the_example_script_writes_event_files_the_cli_reads(tmp_path, capsys):
    import importlib.util

    from holdbench.benchmark.config import REPO_ROOT

    path = REPO_ROOT / "scripts" / "data" / "make_events_example.py"
    spec = importlib.util.spec_from_file_location("make_events_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main([str(tmp_path), "--source", "transactions", "--accounts", "300"]) == 0
    t = pd.read_csv(tmp_path / "train.csv")
    assert t.columns.tolist() == ["account", "booked_at", "channel", "amount"] and t["account"].nunique() == 300
    assert all(g["booked_at"].is_monotonic_increasing for _, g in t.groupby("account"))  # rows in time order
    capsys.readouterr()
    out = tmp_path / "m.json"
    argv = [f"--train-events={tmp_path / 'train.csv'}", f"--holdout-events={tmp_path / 'holdout.csv'}",
            f"--synthetic-events={tmp_path / 'synthetic_shuffled.csv'}", "--key", "account", "--order", "row"]
    assert main(["evaluate", *argv, "--out", str(out), *FAST]) == 0
    d = json.loads(out.read_text())
    # a copy of T whose rows were shuffled: its sequences' first events are no longer T's first events
    assert d["seq_ims"] < 0.5 and d["seq_keys_interleaved"] > 0.5
    assert "its event order is lost" in capsys.readouterr().out


def test_check_takes_several_synthetic_event_files_each_judged_as_alone(files, tmp_path, capsys):
    """`check --synthetic-events S1 copy=S2`: one cell per S with the rows it gets checked alone; a copy of T
    fails, so the run does."""
    base = [f"--train-events={files['train']}", f"--holdout-events={files['holdout']}", "--key", "account",
            "--order", "row", *FAST]
    cols = ["synthesizer", "target", "value", "verdict"]
    alone = []
    for item, out in ((str(files["synthetic"]), "s.csv"), (f"copy={files['train']}", "copy.csv")):
        main(["check", *base, "--synthetic-events", item, "--out", str(tmp_path / out)])
        alone.append(pd.read_csv(tmp_path / out)[cols])
    assert set(alone[1]["verdict"]) >= {"FAIL"}
    capsys.readouterr()
    assert main(["check", *base, "--synthetic-events", str(files["synthetic"]), f"copy={files['train']}",
                 "--out", str(tmp_path / "both.csv")]) == 1
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "both.csv")[cols], pd.concat(alone, ignore_index=True))
    assert list(dict.fromkeys(pd.read_csv(tmp_path / "both.csv")["synthesizer"])) == ["synthetic.csv", "copy"]
    assert "2 cell(s):" in capsys.readouterr().out
