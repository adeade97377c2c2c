"""`holdbench run` stopped by SIGINT or SIGTERM sent to its pid (issue 24): one line saying what
finished, what was interrupted and how to resume; no traceback; nothing left running; the same
command then finishes the study and closes with a summary."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from tests.workflow.helpers import faulty, make_conf
from tests.workflow.test_no_silent_mixing import _env, _study, _study_processes, _wait

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_stop_prints_one_line_and_resumes(tmp_path, sig):
    conf = make_conf(tmp_path, {"halt": _study("halt", ["flip10", "faulty_slow"])}, {"faulty_slow": faulty("slow")})
    root = tmp_path / "results" / "halt"
    argv = ["run", "halt", "--no-track", "--cores", "2"]
    cmd = [sys.executable, "-m", "holdbench", *argv]
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=_env(tmp_path, conf, HOLDBENCH_TEST_SLOW="600"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait(lambda: (root / "demo/seed0/flip10/status.json").exists()
              and (root / "logs/demo/seed0/faulty_slow.generate.log").exists(), 300, "flip10 done, slow started")
        time.sleep(2)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + sig, err[-3000:]
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err[-3000:]
    stop = [ln for ln in err.splitlines() if ln.startswith("[holdbench] stopped")]
    assert stop == [(f"[holdbench] stopped ({sig.name}): 1 cell(s) finished, 1 interrupted (demo/seed0/faulty_slow), "
                     "0 not started; resume with the same command: holdbench run halt --no-track --cores 2")], err[-3000:]
    _wait(lambda: not _study_processes(root), 30, "every process of the study to end")
    # the job got the SIGINT holdbench passes on; it names the signal holdbench itself received (issue 36)
    job_log = (root / "logs/demo/seed0/faulty_slow.generate.log").read_text()
    told = ("received SIGINT (holdbench passing on the SIGTERM it received)" if sig == signal.SIGTERM
            else "received SIGINT")
    assert f"generate stopped, nothing written: {told}\n" in job_log, job_log[-2000:]

    again = subprocess.run(cmd, cwd=tmp_path, env=_env(tmp_path, conf, HOLDBENCH_TEST_SLOW="1"),
                           capture_output=True, text=True, timeout=600, check=False)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "[holdbench] halt: 2 cell(s): 2 ok" in again.stdout
    assert "[holdbench] report: results/halt/report.html" in again.stdout  # relative to the cwd
    assert "[holdbench] slowest: " in again.stdout
    assert not (root / ".stop_signal").exists()          # the note of the stopped run is gone


def test_a_run_started_with_sigint_ignored_still_stops_on_sigint(tmp_path):
    """A script that starts `holdbench run ... &` (no job control) starts it with SIGINT ignored, and a
    child keeps an ignored signal: Snakemake then ignored the Ctrl-C holdbench passed on, the runner
    stopped the running cell and Snakemake went on with the next one (seen on a real paper study)."""
    conf = make_conf(tmp_path, {"halt": _study("halt", ["faulty_slow", "faulty_slow2"])},
                     {"faulty_slow": faulty("slow"), "faulty_slow2": faulty("slow")})
    root = tmp_path / "results" / "halt"
    cmd = [sys.executable, "-m", "holdbench", "run", "halt", "--no-track", "--cores", "1"]
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=_env(tmp_path, conf, HOLDBENCH_TEST_SLOW="600"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    logs = [root / f"logs/demo/seed0/{s}.generate.log" for s in ("faulty_slow", "faulty_slow2")]
    try:
        _wait(lambda: any(p.exists() for p in logs), 300, "a slow cell started")
        time.sleep(2)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err[-3000:]
    assert sum(p.exists() for p in logs) == 1, "Snakemake started the other cell after the Ctrl-C"
    assert "1 interrupted" in err and "1 not started" in err, err[-3000:]
    _wait(lambda: not _study_processes(root), 30, "every process of the study to end")
