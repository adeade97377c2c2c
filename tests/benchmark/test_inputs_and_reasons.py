"""Issue 13, the parts testable without Snakemake: one --config for `holdbench run` (item 10),
`holdbench evaluate` reading T, H, S with one schema (item 8), reason strings (item 9),
the leaderboard refusing mixed configs (item 1), a later attempt stopping an earlier one
(item 3) and the repair scan (items 4, 5)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pandas as pd
import psutil
import pytest

from holdbench.benchmark.cli import parse_args
from holdbench.benchmark.cli import evaluate as evaluate_cli
from holdbench.benchmark.cli.study import snakemake_command

# ---- item 10: holdbench run --------------------------------------------------------------------

def _config_of(cmd: list[str]) -> dict[str, str]:
    assert cmd.count("--config") == 1, cmd  # Snakemake keeps only the last --config
    pairs = cmd[cmd.index("--config") + 1:]
    return dict(p.split("=", 1) for p in pairs)


def test_run_merges_the_users_config_with_its_own():
    cmd = snakemake_command(parse_args(["run", "--no-track", "demo", "--", "--config",
                                        "study_overrides=n_synthetic=100"]))
    assert _config_of(cmd) == {"study": "demo", "track": "False", "study_overrides": "n_synthetic=100"}


def test_run_datasets_and_synthesizers_become_study_overrides():
    cmd = snakemake_command(parse_args(["run", "paper", "--datasets", "online-shoppers", "adult",
                                        "--synthesizers", "cart", "--", "-n", "--config",
                                        "study_overrides=seeds=[0]"]))
    cfg = _config_of(cmd)
    assert cfg["study"] == "paper"
    assert cfg["study_overrides"] == "datasets=[online-shoppers,adult],synthesizers=[cart],seeds=[0]"
    assert "-n" in cmd and cmd.index("-n") < cmd.index("--config")


@pytest.mark.parametrize("argv, words", [
    (["run", "demo", "--", "--config", "study=paper"], "contradicts holdbench's own study=demo"),
    (["run", "--no-track", "demo", "--", "--config", "track=True"], "contradicts holdbench's own track=False"),
    (["run", "demo", "--datasets", "demo", "--", "--config", "study_overrides=datasets=[adult]"],
     "overridden twice"),
    (["run", "demo", "--", "--cores", "4"], "holdbench run --cores N"),
    (["run", "demo", "--", "--configfile", "x.yaml"], "--configfile"),
    (["run", "demo", "--datasets", "../etc"], "not allowed"),
])
def test_run_rejects_what_cannot_be_merged(argv, words):
    with pytest.raises(ValueError, match=None) as err:
        snakemake_command(parse_args(argv))
    assert words in str(err.value)


@pytest.mark.parametrize("dry", [False, True])
@pytest.mark.parametrize("argv, said", [
    (["--synthesizers", "ctgn", "cart"], "--synthesizers: unknown synthesizer 'ctgn' (did you mean 'ctgan'?) (known: "),
    (["--datasets", "adlt"], "--datasets: unknown dataset 'adlt' (did you mean 'adult'?) (known: adult, "),
    (["--cores", "0"], "argument --cores: must be a positive integer or 'all', got '0'"),
    (["--cores", "two"], "argument --cores: must be a positive integer or 'all', got 'two'"),
])
def test_run_refuses_unknown_names_and_cores_before_snakemake(tmp_path, monkeypatch, capsys, argv, said, dry):
    """A misspelt name was Snakemake's parse error with Python frames in its log's tail; a --cores of 0 was
    handed on. Nothing is written (no results directory, no log)."""
    from holdbench.benchmark.cli import main

    monkeypatch.setenv("HOLDBENCH_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setattr(subprocess, "call", lambda *a, **k: pytest.fail("Snakemake was started"))
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: pytest.fail("Snakemake was started"))
    try:
        code = main(["run", "demo", "--no-track", *argv, *(["-n"] if dry else [])])
    except SystemExit as stop:  # argparse's usage error
        code = stop.code
    assert code == 2
    assert said in capsys.readouterr().err
    assert not (tmp_path / "results").exists()


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc (a place nobody may write)")
def test_run_names_a_results_directory_it_cannot_create(monkeypatch, capsys):
    from holdbench.benchmark.cli import main

    monkeypatch.setenv("HOLDBENCH_RESULTS_DIR", "/proc/holdbench-no")
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: pytest.fail("Snakemake was started"))
    assert main(["run", "demo", "--no-track", "--synthesizers", "cart"]) == 2
    assert ("the study's results directory /proc/holdbench-no/demo ($HOLDBENCH_RESULTS_DIR) cannot be created: "
            "No such file or directory: /proc/holdbench-no") in capsys.readouterr().err


def test_validate_restricts_the_study(capsys):
    from holdbench.benchmark.cli import main

    assert main(["validate", "demo", "--synthesizers", "flip10", "holdout"]) == 0
    out = capsys.readouterr().out
    assert "2 synthesizer(s)" in out and "demo/demo/seed0/flip10" in out and "cart" not in out


# ---- item 8: holdbench evaluate ----------------------------------------------------------------

def _eval(argv) -> int:
    parser = argparse.ArgumentParser(prog="holdbench")
    evaluate_cli.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


@pytest.fixture
def text_and_numbers(tmp_path):
    """T's `code` is text (one value is not a number); S holds the same codes, but pandas reads
    them as floats (a missing value), so before they were compared as '1' against '1.0'."""
    rng = np.random.default_rng(3)

    def table(n, seed_codes):
        codes = rng.choice(["1", "2", "3"], n).astype(object)
        codes[:seed_codes] = "x9"
        return pd.DataFrame({"age": rng.integers(20, 70, n), "code": codes})

    t, h = table(200, 3), table(200, 0)
    s_text = t.sample(frac=1.0, random_state=1).reset_index(drop=True)
    s_text.loc[s_text["code"] == "x9", "code"] = None
    s_num = s_text.assign(code=pd.to_numeric(s_text["code"]))
    paths = {}
    for name, df in {"t": t, "h": h, "s_text": s_text, "s_num": s_num}.items():
        paths[name] = tmp_path / f"{name}.csv"
        df.to_csv(paths[name], index=False)
    assert pd.read_csv(paths["s_num"])["code"].dtype == float
    return paths


def _only_paper_families() -> list[str]:
    """--skip options leaving fidelity and privacy of the default metrics config."""
    import yaml

    from holdbench.benchmark.config import conf_dir

    families = yaml.safe_load((conf_dir() / "metrics" / "default.yaml").read_text())["families"]
    return [a for f in families if f not in ("fidelity", "privacy") for a in ("--skip", f)]


def test_evaluate_reads_s_with_t_s_column_types(text_and_numbers, tmp_path):
    p = text_and_numbers
    res = {}
    for s in ("s_text", "s_num"):
        out = tmp_path / f"{s}.json"
        _eval(["evaluate", "--train", str(p["t"]), "--holdout", str(p["h"]), "--synthetic", str(p[s]),
               "--out", str(out), *_only_paper_families()])
        res[s] = json.loads(out.read_text())
    # S is T shuffled, with T's 3 non-numeric codes missing: by hand, the 1-way TVD of `code` is
    # 3/200 and of `age` 0, so F1 = 0.0075; the one pair moves the same 3 rows, F2 = 0.015.
    # Read as floats ('1.0' against T's '1'), every code would mismatch: F1 = 0.5.
    for s in ("s_text", "s_num"):
        assert res[s]["F1"] == pytest.approx(0.0075, abs=1e-12), s
        assert res[s]["F2"] == pytest.approx(0.015, abs=1e-12), s
    for key in ("dcr_share", "dcr_train_mean"):
        assert res["s_num"][key] == res["s_text"][key], key


def test_evaluate_refuses_an_all_missing_train_column(tmp_path):
    t, h = tmp_path / "t.csv", tmp_path / "h.csv"
    pd.DataFrame({"a": [1, 2, 3, 4], "gone": [None] * 4, "no data": [None] * 4}).to_csv(t, index=False)
    pd.DataFrame({"a": [5, 6, 7, 8], "gone": [None] * 4, "no data": [None] * 4}).to_csv(h, index=False)
    # the message names the option that leaves them out, quoted for a shell
    with pytest.raises(ValueError, match=r"train .*column\(s\) \['gone', 'no data'\] are entirely missing; .*"
                                         r"Leave them out \(--drop gone 'no data'\)"):
        _eval(["evaluate", "--train", str(t), "--holdout", str(h), "--holdout-row"])
    # ... and the option as printed is accepted
    _eval(["evaluate", "--train", str(t), "--holdout", str(h), "--holdout-row", "--drop", "gone", "no data"])


@pytest.mark.parametrize("out", ["folder", "newdir/", "t.csv"])
def test_evaluate_refuses_an_unusable_out_before_reading_anything(tmp_path, out):
    (tmp_path / "folder").mkdir()
    (tmp_path / "t.csv").write_text("a\n1\n2\n")
    target = str(tmp_path / out) + ("/" if out.endswith("/") else "")
    # the tables named here do not exist: the --out check must come first
    with pytest.raises(ValueError, match="--out"):
        _eval(["evaluate", "--train", str(tmp_path / "t.csv"), "--holdout", str(tmp_path / "nope.csv"),
               "--synthetic", str(tmp_path / "nope2.csv"), "--out", target])
    assert not (tmp_path / "newdir").exists()


def test_probe_directory_tries_the_nearest_existing_place_and_leaves_nothing(tmp_path):
    from holdbench.contracts.io import probe_directory

    assert probe_directory(tmp_path / "a" / "b") == tmp_path
    assert list(tmp_path.iterdir()) == [], "the probe left its scratch directory or made the path"
    (tmp_path / "f").write_text("x")
    with pytest.raises(NotADirectoryError) as err:
        probe_directory(tmp_path / "f" / "sub")
    assert err.value.filename == str(tmp_path / "f")
    if os.path.isdir("/proc/self"):  # a place even root cannot write: named as the place, not the scratch name
        with pytest.raises(OSError) as err:
            probe_directory("/proc/holdbench-no/deeper")
        assert err.value.filename == "/proc"


# ---- item 9: reasons ---------------------------------------------------------------------------

def test_reasons_are_one_printable_line():
    from holdbench.benchmark.cell.isolation import failure
    from holdbench.contracts.io import clean_line

    raw = "bad\x00 \x1b[31mred\x1b[0m\x1b]0;title\x07 \u202eevil\nnext\tline \x9b2J"
    got = failure("error", raw)["reason"]
    assert got == "bad red evil next line"
    assert clean_line("x" * 900) == "x" * 500


def test_unprintable_exception_names_its_type():
    from holdbench.benchmark.cell._child import classify

    class Weird(Exception):
        def __str__(self):
            raise RuntimeError("no")

    status, reason = classify(Weird())
    assert status == "error" and "Weird" in reason


def test_crash_reasons_do_not_guess():
    from holdbench.benchmark.cell.isolation import _crash_status

    plain = _crash_status("generate", 5, 2 * 1024**3, 1024, None, 100.0, False)
    assert plain["reason"] == "generate process exited with code 5 without writing a result"
    assert "sys.exit" not in plain["reason"] and "os._exit" not in plain["reason"]
    called = _crash_status("generate", 7, 2 * 1024**3, 1024, 7, 100.0, False)
    assert "os._exit(7)" in called["reason"]
    killed = _crash_status("generate", -9, 2 * 1024**3, 1024, None, 100.0, False)
    assert killed["status"] == "error" and "no out-of-memory kill was recorded" in killed["reason"]
    oom = _crash_status("generate", -9, 2 * 1024**3, 1024, None, 100.0, True)
    assert oom["status"] == "oom" and "the kernel recorded an OOM kill" in oom["reason"]


def test_leaderboard_files_carry_no_control_characters_or_entities(tmp_path):
    from holdbench.benchmark.outputs.leaderboard import write_leaderboard
    from holdbench.benchmark.outputs.results import load_results

    cell = tmp_path / "s" / "d" / "seed0" / "g"
    cell.mkdir(parents=True)
    (tmp_path / "s" / "study.json").write_text(json.dumps({"name": "s", "datasets": ["d"], "synthesizers": ["g"],
                                                           "seeds": [0]}))
    (cell / "status.json").write_text(json.dumps({"status": "error", "stage": "generate",
                                                  "reason": "x\x00\x1b[31m<b>&amp;</b>\x1b[0m | y"}))
    (cell / "metrics.json").write_text("{}")
    paths = write_leaderboard(load_results(tmp_path / "s"))
    for key in ("csv", "md"):
        text = paths[key].read_text()
        assert "\x00" not in text and "\x1b" not in text, key
    md = paths["md"].read_text()
    assert "&lt;" not in md and "&gt;" not in md and "\\<b\\>\\&amp;\\</b\\> \\| y" in md


# ---- item 1: the leaderboard never averages cells made under different configs -----------------

def test_aggregate_refuses_cells_with_different_config_digests():
    from holdbench.benchmark.outputs.leaderboard import MixedConfigError, aggregate

    cells = pd.DataFrame({
        "dataset": ["d", "d", "d", "d"], "synthesizer": ["a", "a", "b", "b"], "seed": [0, 1, 0, 1],
        "status": ["ok"] * 4, "reason": [""] * 4, "F1": [0.1, 0.2, 0.3, 0.4],
        "config_digest": ["aaaa", "aaaa", "bbbb", "cccc"],
    })
    with pytest.raises(MixedConfigError, match=r"d/b: seed0 \(bbbb\), seed1 \(cccc\)") as err:
        aggregate(cells, [])
    assert "d/a" not in str(err.value)
    same = aggregate(cells.assign(config_digest=["aaaa", "aaaa", "bbbb", "bbbb"]), [])
    assert same["F1_mean"].tolist() == pytest.approx([0.15, 0.35])


def test_a_process_start_tells_a_live_process_from_a_gone_or_zombie_one():
    from holdbench.benchmark.cell.isolation import process_start

    kid = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    start = process_start(kid.pid)
    assert start is not None and process_start(kid.pid) == start
    assert process_start(os.getpid()) not in (None, start)
    kid.kill()
    deadline = time.monotonic() + 10
    while process_start(kid.pid) is not None and time.monotonic() < deadline:  # a zombie until waited for
        time.sleep(0.05)
    assert process_start(kid.pid) is None, "a killed (zombie) process still reads as started"
    kid.wait()
    assert process_start(kid.pid) is None


def test_the_supervisor_does_not_take_a_stepped_clock_for_its_parents_death(monkeypatch):
    """psutil's create_time is boot time (from the wall clock) + ticks: when a VM's host pauses it, that boot
    time moves, and every running cell read its live job shell and Snakemake as gone and stopped."""
    import psutil

    from holdbench.benchmark.cell.isolation import _Watch

    watch = _Watch()
    assert watch.chain, "no ancestor to watch"
    assert watch.lost() is None
    real = psutil.Process.create_time
    monkeypatch.setattr(psutil.Process, "create_time", lambda self: real(self) + 1.0)  # the clock stepped 1 s
    assert watch.lost() is None


# ---- item 3: a later attempt of a cell stops an earlier one ------------------------------------

_HOLDER = textwrap.dedent("""
    import fcntl, json, os, subprocess, sys, time
    from holdbench.benchmark.cell.isolation import process_start
    cell = sys.argv[1]
    fd = os.open(os.path.join(cell, ".cell.lock"), os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    me = os.getpid()
    os.pwrite(fd, json.dumps({"pid": me, "started": process_start(me), "attempt": "old"}).encode(), 0)
    env = dict(os.environ, HOLDBENCH_CELL=os.path.realpath(cell), HOLDBENCH_ATTEMPT="old")
    kid = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], env=env,
                           start_new_session=True)
    os.makedirs(os.path.join(cell, ".attempt-old"), exist_ok=True)
    print(kid.pid, flush=True)
    time.sleep(600)
""")


def _dead(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_a_new_attempt_stops_an_orphaned_one_and_its_detached_children(tmp_path):
    from holdbench.benchmark.cell.isolation import cell_attempt

    cell = tmp_path / "cell"
    cell.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(cell)], stdout=subprocess.PIPE, text=True)
    kid = int(holder.stdout.readline())
    try:
        t0 = time.monotonic()
        with cell_attempt(cell, wait_seconds=1.0) as att:
            assert att.scratch.is_dir() and att.scratch.name != ".attempt-old"
            assert not (cell / ".attempt-old").exists()
            holder.wait(timeout=10)
            deadline = time.monotonic() + 10
            while not _dead(kid) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert _dead(kid), "the old attempt's detached child survived"
        assert time.monotonic() - t0 < 30
        assert not att.scratch.exists()
        with cell_attempt(cell) as again:
            assert again.scratch != att.scratch
    finally:
        for pid in (holder.pid, kid):
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass


# ---- item 2: containment, with and without a cgroup --------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("cgroup", [True, False], ids=["cgroup-if-available", "sweep-only"])
@pytest.mark.parametrize("mode", ["double_fork", "setsid_child", "thread_linger"])
def test_run_isolated_kills_what_the_synthesizer_left(tmp_path, monkeypatch, cgroup, mode):
    from holdbench.benchmark.cell.isolation import cell_attempt, run_isolated
    from holdbench.contracts.schema import Schema

    if not cgroup:
        monkeypatch.setenv("HOLDBENCH_NO_CGROUP", "1")
    monkeypatch.setenv("HOLDBENCH_TEST_PIDS", str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(__import__("pathlib").Path(__file__).parents[2]),
                                                      os.environ.get("PYTHONPATH", "")]))
    train = pd.DataFrame({"age": np.arange(20), "job": list("ab") * 10})
    train.to_parquet(tmp_path / "train.parquet")
    schema = Schema.infer("t", train)
    (tmp_path / "schema.json").write_text(json.dumps(schema.to_dict()))
    cell = tmp_path / "cell"
    with cell_attempt(cell) as att:
        payload = {"dataset": "t", "seed": 0, "synthesizer": mode, "n_synthetic": 10,
                   "config": {"_target_": "tests.workflow.faulty_synths.Faulty", "mode": mode},
                   "schema": str(tmp_path / "schema.json"), "train": str(tmp_path / "train.parquet"),
                   "holdout": str(tmp_path / "train.parquet"), "synthetic": str(att.scratch / "s.parquet"),
                   "cell_dir": str(att.scratch)}
        t0 = time.monotonic()
        res = run_isolated("generate", payload, att, timeout_seconds=120, memory_gb=3)
        took = time.monotonic() - t0
    assert res["status"] == "ok", res
    assert took < 90, "a lingering thread held the cell"
    pids = [int(x) for x in (tmp_path / f"{mode}.pids").read_text().split()] if mode != "thread_linger" else []
    assert all(_dead(p) for p in pids), pids


# ---- item 4: the leaderboard does not trust an output that differs from what was written ------

def test_results_reject_metrics_that_differ_from_their_checksum(tmp_path):
    from holdbench.benchmark.outputs.results import load_results
    from holdbench.benchmark.workflow.cellconfig import file_record

    cell = tmp_path / "s" / "d" / "seed0" / "g"
    cell.mkdir(parents=True)
    (tmp_path / "s" / "study.json").write_text(json.dumps({"name": "s", "datasets": ["d"], "synthesizers": ["g"],
                                                           "seeds": [0]}))
    (cell / "metrics.json").write_text(json.dumps({"F1": 0.1}))
    status = {"status": "ok", "reason": "", "outputs": {"metrics.json": file_record(cell / "metrics.json")}}
    (cell / "status.json").write_text(json.dumps(status))
    assert load_results(tmp_path / "s").table["status"].tolist() == ["ok"]
    (cell / "metrics.json").write_text(json.dumps({"F1": 0.9}))  # same size, other content
    row = load_results(tmp_path / "s").table.iloc[0]
    assert row["status"] == "error" and "checksum" in row["reason"]
    (cell / "metrics.json").write_text("{}")
    assert "holds no metrics" in load_results(tmp_path / "s").table.iloc[0]["reason"] or \
        "bytes" in load_results(tmp_path / "s").table.iloc[0]["reason"]


def test_repair_scan_finds_each_kind_of_damage(tmp_path):
    """scan_cell/scan_split on a hand-made cell: each damage is named, an intact cell is left alone."""
    from holdbench.benchmark.layout import StudyLayout
    from holdbench.benchmark.workflow.cellconfig import cell_config, digest, file_record
    from holdbench.benchmark.workflow.integrity import scan_cell, scan_split

    lay = StudyLayout(tmp_path / "s")
    split, synth, metrics = {"split": "random"}, {"config": {"p": 0.1}, "n_synthetic": 10}, {"families": {}}
    limits = {"timeout_seconds": 60, "memory_gb": 2}
    cdir = lay.cell_dir("d", 0, "g")
    cdir.mkdir(parents=True)
    pd.DataFrame({"a": [1, 2]}).to_parquet(cdir / "synthetic.parquet")
    (cdir / "metrics.json").write_text('{"F1": 0.1}')
    (cdir / "marginals.csv").write_text("columns,k\n")
    gen = {"status": "ok", "generate_digest": digest(cell_config(split, synth)), "limits": limits,
           "outputs": {"synthetic.parquet": file_record(cdir / "synthetic.parquet")}}
    status = {"status": "ok", "config_digest": digest(cell_config(split, synth, metrics)), "limits": limits,
              "outputs": {n: file_record(cdir / n) for n in ("metrics.json", "marginals.csv", "synthetic.parquet")}}

    def write():
        (cdir / "generate.json").write_text(json.dumps(gen))
        (cdir / "status.json").write_text(json.dumps(status))

    def scan(**kw):
        args = {"split": split, "synth_snap": synth, "metrics": metrics, "limits": limits, "old_limits": None} | kw
        return scan_cell(lay, "d", 0, "g", **args)

    write()
    assert scan() is None
    assert scan(synth_snap={**synth, "n_synthetic": 20}).reason == "it was generated under another config"
    assert scan(metrics={"families": {"x": {}}}).reason == "it was evaluated under another config"
    (cdir / "metrics.json").write_text("{}")
    r = scan()
    assert (r.job, r.reason) == ("evaluate", "metrics.json has 2 bytes, 11 were written")
    (cdir / "metrics.json").write_text('{"F1": 0.1}')
    (cdir / "status.json").unlink()
    assert (scan().job, scan().reason) == ("evaluate", "status.json is missing")
    write()
    data = (cdir / "synthetic.parquet").read_bytes()
    (cdir / "synthetic.parquet").write_bytes(data[: len(data) // 2])
    assert scan().job == "generate" and "synthetic.parquet has" in scan().reason
    (cdir / "synthetic.parquet").write_bytes(data)
    gen.update(status="timeout", limits={"timeout_seconds": 30, "memory_gb": 2})
    write()
    assert "ended timeout under timeout_seconds 30 s; the study now allows 60 s" in scan().reason
    assert scan(limits={"timeout_seconds": 30, "memory_gb": 2}) is None or scan(
        limits={"timeout_seconds": 30, "memory_gb": 2}).job != "generate"
    # a split whose parquet is truncated
    lay.split_dir("d", 0).mkdir(parents=True, exist_ok=True)
    pd.DataFrame({"a": [1]}).to_parquet(lay.train("d", 0))
    pd.DataFrame({"a": [1]}).to_parquet(lay.holdout("d", 0))
    (lay.schema("d", 0)).write_text(json.dumps({"files": {"train.parquet": file_record(lay.train("d", 0))}}))
    assert scan_split(lay, "d", 0) is None
    lay.train("d", 0).write_bytes(b"PAR1")
    assert "train.parquet has 4 bytes" in scan_split(lay, "d", 0).reason
