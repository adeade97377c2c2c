"""How long `mlflow ui` takes to answer on a study's store, with MLflow's default 4 workers and with the
one worker `holdbench track` prints (issue 24: the UI took 100 s to start on a loaded 2-core machine).

    python scripts/bench/bench_mlflow_ui.py results/demo [--repeat 2]

Logs the study into a fresh sqlite store in a temporary directory (prints that time too), then starts
`mlflow ui` on a free port per setting, waits for /health, prints the seconds and stops the server's
process group.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_seconds(uri: str, workers: int | None, limit: float = 600.0) -> float:
    port = _free_port()
    cmd = [sys.executable, "-m", "mlflow", "ui", "--backend-store-uri", uri, "--host", "127.0.0.1", "--port", str(port)]
    cmd += ["--workers", str(workers)] if workers else []
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                            env={**os.environ, "MLFLOW_DISABLE_TELEMETRY": "true"})
    try:
        while time.monotonic() - start < limit:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as r:
                    if r.status == 200:
                        return time.monotonic() - start
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"mlflow ui did not answer within {limit:.0f} s")
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=60)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("study_dir", type=Path)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    from holdbench.benchmark.outputs.tracking import log_study

    with tempfile.TemporaryDirectory() as tmp:
        uri = f"sqlite:///{Path(tmp) / 'mlflow.db'}"
        t0 = time.monotonic()
        log_study(args.study_dir, uri)
        print(f"holdbench track into a fresh store: {time.monotonic() - t0:.1f} s")
        for workers, label in ((None, "mlflow ui (default: 4 workers)"), (1, "mlflow ui --workers 1")):
            times = [start_seconds(uri, workers) for _ in range(args.repeat)]
            print(f"{label}: " + ", ".join(f"{t:.1f} s" for t in times) + " to answer /health")


if __name__ == "__main__":
    main()
