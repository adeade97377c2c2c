"""Issue 13 through the real workflow: nothing silently mixed, lost or wrong.

1. a dry run or a refused second invocation never changes a running study;
2. nothing a synthesizer starts outlives its cell (setsid, double fork, a lingering thread,
   Snakemake killed by SIGTERM or SIGKILL);
3. a rerun right after `kill -9` of Snakemake completes without a cell failing because of the
   orphans of the killed run;
4. damaged outputs are recomputed; 5. timeout cells are retried when the limit grows;
9. reasons are sanitised and never guess.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pandas as pd
import psutil
import pytest

from tests.workflow.helpers import (
    WORKFLOW_METRICS,
    cells,
    env_for,
    faulty,
    jobs_run,
    make_conf,
    run_study,
    snakemake_cmd,
)

pytestmark = pytest.mark.slow


def _study(name: str, synths: list[str], seeds=(0,), timeout=120, n=300) -> str:
    return (f"name: {name}\ndatasets: [demo]\nsynthesizers: [{', '.join(synths)}]\nseeds: {list(seeds)}\n"
            f"n_synthetic: {n}\ntimeout_seconds: {timeout}\nmemory_gb: 3\nmetrics: {WORKFLOW_METRICS}\n")


def _env(tmp: Path, conf: Path, **extra) -> dict:
    env = env_for(tmp, conf)
    pids = tmp / "pids"
    pids.mkdir(exist_ok=True)
    env["HOLDBENCH_TEST_PIDS"] = str(pids)
    env.update(extra)
    return env


def _noted(tmp: Path, mode: str) -> list[int]:
    f = tmp / "pids" / f"{mode}.pids"
    return [int(x) for x in f.read_text().split()] if f.exists() else []


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _wait(cond, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


def _study_processes(root: Path) -> list[int]:
    out = []
    for p in psutil.process_iter():
        try:
            if p.environ().get("HOLDBENCH_STUDY") == str(root.resolve()) and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p.pid)
        except psutil.Error:
            continue
    return out


def _snapshot_state(root: Path) -> dict[str, tuple[bytes, int]]:
    files = list((root / ".config").rglob("*")) + [root / "study.json"]
    return {str(f.relative_to(root)): (f.read_bytes(), f.stat().st_mtime_ns) for f in files if f.is_file()}


def test_dry_run_and_second_invocation_never_change_a_running_study(tmp_path):
    # faulty_busy's cells stay busy until the test releases them, after the dry run and the second invocation
    conf = make_conf(tmp_path, {"busy": _study("busy", ["faulty_busy", "flip10"], seeds=(0, 1))},
                     {"faulty_busy": faulty("until_released")})
    release = tmp_path / "release"
    env = _env(tmp_path, conf, HOLDBENCH_TEST_RELEASE=str(release))
    root = tmp_path / "results" / "busy"
    with open(tmp_path / "a.log", "w") as log:
        first = subprocess.Popen(snakemake_cmd("busy"), cwd=tmp_path, env=env, stdout=log, stderr=log)
    try:
        _wait(lambda: (root / "logs/demo/seed0/faulty_busy.generate.log").exists(), 300, "the first run's jobs")
        before = _snapshot_state(root)
        dry = run_study(tmp_path, "busy", "-n", env=env, config={"study_overrides": "n_synthetic=200"})
        assert dry.returncode == 0, dry.stderr[-2000:]
        assert "a real run would first update" in dry.stdout + dry.stderr
        assert _snapshot_state(root) == before, "a dry run changed the study's saved config"
        assert not (root / ".config" / "pending").exists()
        second = run_study(tmp_path, "busy", env=env, config={"study_overrides": "n_synthetic=200"})
        assert second.returncode != 0
        assert "is being run by another invocation" in second.stdout + second.stderr
        assert _snapshot_state(root) == before, "a refused invocation changed the study's saved config"
        assert first.poll() is None, "the first run ended before the checks: they tested nothing"
        release.touch()
        assert first.wait(timeout=600) == 0, (tmp_path / "a.log").read_text()[-3000:]
    finally:
        if first.poll() is None:
            first.kill()
    got = cells(tmp_path, "busy")
    assert {c["status"] for c in got.values()} == {"ok"}
    assert {c["n_synthetic"] for c in got.values()} == {300}
    assert {c["config"]["n_synthetic"] for c in got.values()} == {300}
    for synth in ("faulty_busy", "flip10"):
        assert len({c["config_digest"] for k, c in got.items() if k.endswith(synth)}) == 1
    assert (root / "leaderboard.csv").exists()
    # and the changed config, once nobody runs the study, recomputes every cell under it
    again = run_study(tmp_path, "busy", env=env, config={"study_overrides": "n_synthetic=200"})
    assert again.returncode == 0, again.stderr[-3000:]
    assert {c["n_synthetic"] for c in cells(tmp_path, "busy").values()} == {200}


CONTAINED = {
    "setsid_child": ("ok", None),
    "double_fork": ("ok", None),
    "thread_linger": ("ok", None),
    "libc_exit": ("error", "generate process exited with code 5 without writing a result"),
    "os_exit": ("error", "the synthesizer called os._exit(7)"),
    "unprintable": ("error", "_Unprintable"),
    "escape_reason": ("error", "RuntimeError: bad red <b>&amp; | x"),
    "inf_in_int": ("error", "synthesizer 'faulty_inf_in_int': column 'age' (int)"),
}


def test_nothing_a_cell_starts_outlives_it_and_reasons_are_exact(tmp_path):
    synths = {f"faulty_{m}": faulty(m) for m in CONTAINED}
    conf = make_conf(tmp_path, {"contain": _study("contain", list(synths), timeout=150)}, synths)
    env = _env(tmp_path, conf)
    proc = run_study(tmp_path, "contain", env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    got = cells(tmp_path, "contain")
    for mode, (status, words) in CONTAINED.items():
        cell = got[f"demo/seed0/faulty_{mode}"]
        assert cell["status"] == status, (mode, cell["reason"])
        if words:
            assert words in cell["reason"], (mode, cell["reason"])
        assert "sys.exit/os._exit?" not in cell["reason"]
    # a lingering non-daemon thread: the cell ended when its result was written, not at the timeout
    assert got["demo/seed0/faulty_thread_linger"]["wall_seconds"] < 100
    noted = {m: _noted(tmp_path, m) for m in ("setsid_child", "double_fork")}
    assert all(noted.values()), noted
    assert [p for pids in noted.values() for p in pids if _alive(p)] == []
    md = (tmp_path / "results/contain/leaderboard.md").read_text()
    csv = (tmp_path / "results/contain/leaderboard.csv").read_text()
    for text in (md, csv):
        assert "\x00" not in text and "\x1b" not in text
    assert "&lt;" not in md and "\\<b\\>\\&amp; \\| x" in md


def _start(tmp: Path, env: dict, name: str, group: bool = False) -> tuple[subprocess.Popen, Path]:
    (tmp / "pids" / "hang_spawn.pids").unlink(missing_ok=True)
    log = tmp / f"{name}.log"
    with open(log, "w") as fh:
        run = subprocess.Popen(snakemake_cmd("kill"), cwd=tmp, env=env, stdout=fh, stderr=fh,
                               start_new_session=group)
    _wait(lambda: len(_noted(tmp, "hang_spawn")) >= 2 or run.poll() is not None, 300, f"the hanging cell ({log})")
    assert run.poll() is None, log.read_text()[-3000:]
    return run, log


def test_killed_snakemake_leaves_nothing_running_and_a_rerun_is_clean(tmp_path):
    conf = make_conf(tmp_path, {"kill": _study("kill", ["faulty_hang_spawn", "flip10", "holdout"], timeout=25)},
                     {"faulty_hang_spawn": faulty("hang_spawn")})
    env = _env(tmp_path, conf)
    root = tmp_path / "results" / "kill"
    hang_cell = root / "demo/seed0/faulty_hang_spawn"

    # SIGTERM to Snakemake: it lets running jobs finish; the hanging cell ends at its timeout, and
    # the child it detached (setsid) dies with it
    run, _ = _start(tmp_path, env, "sigterm")
    pids = _noted(tmp_path, "hang_spawn")
    run.send_signal(signal.SIGTERM)
    run.wait(timeout=200)
    _wait(lambda: not any(_alive(p) for p in pids), 20, "the cell's processes to die after SIGTERM")
    _wait(lambda: not _study_processes(root), 20, "every job process to die after SIGTERM")
    (hang_cell / "generate.json").unlink(missing_ok=True)

    # Ctrl-C (SIGINT to the process group): the cell is killed at once, nothing is written
    run, _ = _start(tmp_path, env, "sigint", group=True)
    pids = _noted(tmp_path, "hang_spawn")
    os.killpg(run.pid, signal.SIGINT)
    run.wait(timeout=120)
    _wait(lambda: not any(_alive(p) for p in pids), 20, "the cell's processes to die after SIGINT")
    _wait(lambda: not _study_processes(root), 20, "every job process to die after SIGINT")
    assert not (hang_cell / "generate.json").exists()

    # kill -9 of Snakemake alone, and a rerun at once: the orphans die by themselves, and no cell
    # of the rerun fails because of them
    run, _ = _start(tmp_path, env, "sigkill")
    pids = _noted(tmp_path, "hang_spawn")
    os.kill(run.pid, signal.SIGKILL)
    run.wait()
    (tmp_path / "pids" / "hang_spawn.pids").unlink()
    with open(tmp_path / "rerun.log", "w") as fh:
        rerun = subprocess.Popen(snakemake_cmd("kill"), cwd=tmp_path, env=env, stdout=fh, stderr=fh)
    _wait(lambda: not any(_alive(p) for p in pids), 20, "the killed run's processes to die")
    assert rerun.wait(timeout=900) == 0, (tmp_path / "rerun.log").read_text()[-3000:]
    got = cells(tmp_path, "kill")
    assert got["demo/seed0/faulty_hang_spawn"]["status"] == "timeout"
    assert got["demo/seed0/flip10"]["status"] == "ok" and got["demo/seed0/holdout"]["status"] == "ok"
    assert not any(_alive(p) for p in _noted(tmp_path, "hang_spawn"))
    assert not _study_processes(root)
    assert not list(root.rglob(".attempt-*")), "scratch of an attempt left behind"


def test_damaged_outputs_are_recomputed_and_timeouts_retried_when_the_limit_grows(tmp_path):
    studies = {"repair": _study("repair", ["flip10", "holdout"], seeds=(0, 1)),
               "retry": _study("retry", ["faulty_slow"], timeout=6)}
    conf = make_conf(tmp_path, studies, {"faulty_slow": faulty("slow")})
    env = _env(tmp_path, conf, HOLDBENCH_TEST_SLOW="15")
    first = run_study(tmp_path, "repair", env=env)
    assert first.returncode == 0, first.stderr[-3000:]
    root = tmp_path / "results" / "repair"
    names = ["demo/seed0/flip10", "demo/seed1/flip10", "demo/seed0/holdout", "demo/seed1/holdout"]
    metrics = {c: (root / c / "metrics.json").read_bytes() for c in names}
    synthetic = {c: pd.read_parquet(root / c / "synthetic.parquet") for c in names}
    (root / "demo/seed0/flip10/metrics.json").write_text("{}")
    (root / "demo/seed1/flip10/metrics.json").write_bytes(metrics["demo/seed1/flip10"][:20])
    (root / "demo/seed0/holdout/status.json").unlink()
    syn = root / "demo/seed1/holdout/synthetic.parquet"
    syn.write_bytes(syn.read_bytes()[: syn.stat().st_size // 2])
    cache = next((tmp_path / "cache").glob("demo-*.parquet"))
    cache.write_bytes(cache.read_bytes()[:100])

    second = run_study(tmp_path, "repair", env=env)
    out = second.stdout + second.stderr
    assert second.returncode == 0, out[-3000:]
    assert jobs_run(second, "generate") == 1 and jobs_run(second, "evaluate") == 4, out[-3000:]
    assert "recomputing evaluate: metrics.json has" in out and "recomputing generate: synthetic.parquet has" in out
    got = cells(tmp_path, "repair")
    assert {got[c]["status"] for c in names} == {"ok"}
    for c in names:
        assert (root / c / "metrics.json").read_bytes() == metrics[c], c
        pd.testing.assert_frame_equal(pd.read_parquet(root / c / "synthetic.parquet"), synthetic[c])

    slow = run_study(tmp_path, "retry", env=env)
    assert slow.returncode == 0, slow.stderr[-3000:]
    assert cells(tmp_path, "retry")["demo/seed0/faulty_slow"]["status"] == "timeout"
    same = run_study(tmp_path, "retry", env=env)
    assert jobs_run(same, "generate") == 0, "a timeout is retried only when the limit grows"
    grown = run_study(tmp_path, "retry", env=env, config={"study_overrides": "timeout_seconds=200"})
    assert grown.returncode == 0, grown.stderr[-3000:]
    assert "the study now allows 200 s" in grown.stdout + grown.stderr
    cell = cells(tmp_path, "retry")["demo/seed0/faulty_slow"]
    assert cell["status"] == "ok" and cell["limits"]["timeout_seconds"] == 200
