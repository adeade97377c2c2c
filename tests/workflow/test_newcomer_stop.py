"""`holdbench run` stopped by SIGINT or SIGTERM sent to its pid (issue 24): one line saying what
finished, what was interrupted and how to resume; no traceback; nothing left running; the same
command then finishes the study and closes with a summary."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from tests.workflow.helpers import make_conf
from tests.workflow.test_reliability import _env, _faulty, _study, _study_processes, _wait

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_stop_prints_one_line_and_resumes(tmp_path, sig):
    conf = make_conf(tmp_path, {"halt": _study("halt", ["flip10", "faulty_slow"])}, {"faulty_slow": _faulty("slow")})
    root = tmp_path / "results" / "halt"
    argv = ["run", "halt", "--no-track", "--cores", "2"]
    cmd = [sys.executable, "-m", "benchmark.cli", *argv]
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

    again = subprocess.run(cmd, cwd=tmp_path, env=_env(tmp_path, conf, HOLDBENCH_TEST_SLOW="1"),
                           capture_output=True, text=True, timeout=600, check=False)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "[holdbench] halt: 2 cell(s): 2 ok" in again.stdout
    assert "[holdbench] report: results/halt/report.html" in again.stdout  # relative to the cwd
    assert "[holdbench] slowest: " in again.stdout
