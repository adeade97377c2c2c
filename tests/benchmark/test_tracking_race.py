"""Two studies tracked at once into one fresh MLflow store (issue 36, item 4): both log, neither fails with
"table ... already exists" (creating the sqlite store is serialised by a lock next to the database)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import pytest

pytestmark = pytest.mark.slow

# each process imports MLflow first, then waits for the same start signal: the store is created by both at once
RACER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    import mlflow.tracking  # noqa: F401 - the slow import happens before the start signal
    from holdbench.benchmark.outputs.tracking import TrackingError, log_study
    go = Path(sys.argv[3])
    Path(sys.argv[4]).touch()
    while not go.exists():
        time.sleep(0.005)
    try:
        info = log_study(sys.argv[1], sys.argv[2])
    except TrackingError as exc:
        print("FAILED", exc)
        sys.exit(1)
    print("OK", len(info["runs"]))
""")


def test_two_studies_racing_to_create_a_fresh_store_both_log(study_factory, tmp_path):
    studies = [study_factory(name=f"race{i}") for i in range(3)]
    uri = f"sqlite:///{tmp_path / 'fresh' / 'mlflow.db'}"
    go = tmp_path / "go"
    procs = []
    for i, s in enumerate(studies):
        procs.append(subprocess.Popen([sys.executable, "-c", RACER, str(s.path), uri, str(go), str(tmp_path / f"ready{i}")],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    deadline = time.monotonic() + 300
    while not all((tmp_path / f"ready{i}").exists() for i in range(len(studies))):
        assert time.monotonic() < deadline, "the racers did not start"
        time.sleep(0.05)
    go.touch()
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0 and out.startswith("OK"), (out + err)[-2000:]
