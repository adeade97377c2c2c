"""The live progress line of `holdbench run` (issue 24), on fabricated cell directories: what counts as
done and running, the time left, the printing rules, and what a failed Snakemake leaves on screen."""

from __future__ import annotations

import io
import json
import os

import pytest

from holdbench.benchmark.cli.progress import SCAN_SECONDS, Progress, Scan, estimate, progress_line, scan
from holdbench.benchmark.cli.study import _LogLines, failure_tail
from holdbench.benchmark.cell.isolation import SCRATCH_PREFIX

CELLS = [("d", "cart", 0), ("d", "cart", 1), ("d", "ctgan", 0), ("d", "ctgan", 1)]
NOW = 1_000_000.0


def _cell(root, synth, seed, status=None, gen_at=None, status_at=None, scratch_at=None, gen=None):
    cdir = root / "d" / f"seed{seed}" / synth
    cdir.mkdir(parents=True, exist_ok=True)
    if gen_at is not None:
        (cdir / "generate.json").write_text(json.dumps(gen or {}))
        os.utime(cdir / "generate.json", (gen_at, gen_at))
    if status_at is not None:
        (cdir / "status.json").write_text(json.dumps(status or {}))
        os.utime(cdir / "status.json", (status_at, status_at))
    if scratch_at is not None:
        (cdir / f"{SCRATCH_PREFIX}123-abc").mkdir()
        os.utime(cdir / f"{SCRATCH_PREFIX}123-abc", (scratch_at, scratch_at))


def test_scan_tells_done_running_and_pending(tmp_path):
    _cell(tmp_path, "cart", 0, {"wall_seconds": 12.5}, gen_at=NOW - 100, status_at=NOW - 90)
    # generating for 40 s (no generate.json yet)
    _cell(tmp_path, "cart", 1, scratch_at=NOW - 40)
    # evaluating for 5 s after a 30 s generate stage: 35 s so far
    _cell(tmp_path, "ctgan", 0, gen_at=NOW - 6, scratch_at=NOW - 5, gen={"job_wall_seconds": 30})
    # regenerated since its status.json was written: not done
    _cell(tmp_path, "ctgan", 1, {"wall_seconds": 99}, gen_at=NOW - 10, status_at=NOW - 50)
    state = scan(tmp_path, CELLS, now=NOW)
    assert state.total == 4
    assert state.done == {"d/seed0/cart": ("cart", 12.5)}
    assert state.running == {"d/seed1/cart": ("cart", pytest.approx(40)),
                             "d/seed0/ctgan": ("ctgan", pytest.approx(35))}
    assert state.pending == ["ctgan"]


def test_scan_of_an_empty_study_has_everything_pending(tmp_path):
    state = scan(tmp_path, CELLS, now=NOW)
    assert (state.done, state.running, state.pending) == ({}, {}, ["cart", "cart", "ctgan", "ctgan"])


def test_no_estimate_until_a_cell_is_done():
    state = Scan(total=4, running={"d/seed0/cart": ("cart", 10.0)}, pending=["cart", "ctgan", "ctgan"])
    assert estimate(state, cores=2) == (None, [])
    line = progress_line(state, cores=2)
    assert line.startswith("[holdbench] 0/4 cells done; running d/seed0/cart")
    assert line.endswith("time left: estimating…")


def test_estimate_uses_the_synthesizers_own_wall_times():
    # cart cells took 10 and 20 s (mean 15), ctgan 300 s; left: one cart pending, one ctgan running
    # for 100 s (200 to go), one ctgan pending (300): 515 s of work on 2 cores = 257.5 s, more than
    # the longest single cell (300)? no: 300 > 257.5, so 300
    state = Scan(total=6, done={"a": ("cart", 10.0), "b": ("cart", 20.0), "c": ("ctgan", 300.0)},
                 running={"r": ("ctgan", 100.0)}, pending=["cart", "ctgan"])
    assert estimate(state, cores=2) == (pytest.approx(300.0), [])
    assert estimate(state, cores=1) == (pytest.approx(515.0), [])
    assert progress_line(state, cores=1).endswith("about 9 min left")


def test_an_untimed_synthesizer_makes_the_estimate_a_named_lower_bound():
    state = Scan(total=5, done={"a": ("cart", 10.0), "b": ("cart", 30.0)}, pending=["tvae", "tvae", "cart"])
    seconds, untimed = estimate(state, cores=1)
    assert seconds == pytest.approx(20 + 20 + 20) and untimed == ["tvae"]
    assert progress_line(state, cores=1).endswith("at least 1 min left (no cell of tvae done yet)")


def test_all_cells_done_says_what_follows():
    state = Scan(total=1, done={"a": ("cart", 1.0)})
    assert progress_line(state, cores=2) == "[holdbench] 1/1 cells done; writing the leaderboard, figures and report"


def _study(root, cells=CELLS):
    (root / "logs").mkdir(parents=True, exist_ok=True)
    (root / "study.json").write_text(json.dumps({"name": root.name, "datasets": ["d"], "synthesizers": ["cart", "ctgan"],
                                                 "seeds": [0, 1]}))


def test_progress_waits_for_a_job_of_this_run_then_prints_on_change_only(tmp_path):
    root = tmp_path / "s"
    _study(root)
    out = io.StringIO()
    p = Progress(root, cores=2, out=out, tty=False, since=NOW)
    p.poll(now=NOW)
    assert out.getvalue() == ""  # no job of this run started: study.json may be the last run's
    (root / "logs" / "split.log").write_text("")
    os.utime(root / "logs" / "split.log", (NOW + 1, NOW + 1))
    p.poll(now=NOW + SCAN_SECONDS)
    assert out.getvalue() == "[holdbench] 0/4 cells done; time left: estimating…\n"
    p.poll(now=NOW + 2 * SCAN_SECONDS)  # nothing changed, and not yet 30 s: no new line
    assert out.getvalue().count("\n") == 1
    _cell(root, "cart", 0, {"wall_seconds": 4.0}, gen_at=NOW + 5, status_at=NOW + 6)
    p.poll(now=NOW + 3 * SCAN_SECONDS)
    assert out.getvalue().splitlines()[-1].startswith("[holdbench] 1/4 cells done; at least")
    p.poll(now=NOW + 3 * SCAN_SECONDS + 31)  # unchanged, but 30 s passed: the line again
    assert out.getvalue().count("\n") == 3


def test_on_a_terminal_the_line_is_rewritten_and_echoed_lines_go_above_it(tmp_path):
    root = tmp_path / "s"
    _study(root)
    (root / "logs" / "split.log").write_text("")
    out = io.StringIO()
    p = Progress(root, cores=2, out=out, tty=True, since=0)
    p.poll(now=NOW)
    assert out.getvalue() == "\r[holdbench] 0/4 cells done; time left: estimating…\x1b[K"
    p.echo("[holdbench] d/seed0/cart: ok")
    p.close()
    assert out.getvalue().endswith("\r\x1b[K[holdbench] d/seed0/cart: ok\n"
                                   "[holdbench] 0/4 cells done; time left: estimating…\r\x1b[K")


def test_failure_tail_shows_the_last_lines_and_the_log(tmp_path):
    log = tmp_path / "snakemake.log"
    log.write_text("".join(f"line {i}\n" for i in range(100)))
    lines = failure_tail(log, 1)
    assert lines[0] == f"[holdbench] Snakemake failed (exit status 1); the last 30 line(s) of its output ({log}):"
    assert lines[1:-1] == [f"line {i}" for i in range(70, 100)]
    assert lines[-1] == f"[holdbench] Snakemake's full output: {log}"


def test_failure_tail_of_a_refused_study_is_its_message_without_frames(tmp_path):
    log = tmp_path / "snakemake.log"
    log.write_text(
        "$ python -m snakemake --snakefile /x/Snakefile --cores all\n"
        "Using workflow specific profile /x/profiles/default for setting default command line arguments.\n"
        'ConfigError in file "/x/Snakefile", line 14:\n'
        "/x/conf/study/demo.yaml: `n_synthetic`: -5 is less than the minimum of 1\n"
        "(a second line of the message)\n"
        '  File "/x/Snakefile", line 14, in <module>\n'
        '  File "/x/benchmark/workflow/prepare.py", line 129, in prepare\n')
    assert failure_tail(log, 1) == [
        "[holdbench] Snakemake stopped before any job (exit status 1): the study was refused:",
        "ConfigError: /x/conf/study/demo.yaml: `n_synthetic`: -5 is less than the minimum of 1",
        "(a second line of the message)",
        f"[holdbench] Snakemake's full output: {log}"]
    # a job's failure is not a refused study: the log's last lines, as before
    log.write_text("Error in rule generate:\n    jobid: 3\n")
    assert failure_tail(log, 1)[0].startswith("[holdbench] Snakemake failed (exit status 1); the last 2 line(s)")


def test_log_lines_returns_complete_lines_once(tmp_path):
    log = tmp_path / "x.log"
    follow = _LogLines(log)
    assert follow.new_lines() == []
    log.write_text("a\nb")
    assert follow.new_lines() == ["a"]
    with open(log, "a") as fh:
        fh.write("c\nd\n")
    assert follow.new_lines() == ["bc", "d"]
    assert follow.new_lines() == []
