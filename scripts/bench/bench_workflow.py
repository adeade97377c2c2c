"""Benchmark of the workflow itself: per-cell overhead and parallel efficiency.

Runs a study (default: demo) from scratch in a temporary directory with Snakemake and
prints, from the cells' status.json and Snakemake's benchmark files:
- per-cell overhead = generate + evaluate job wall time - (loading the synthesizer's library +
  fit + sample + evaluate), target < 2 s;
- study wall time / sum of all jobs' times, target <= 0.6 on 2 cores.

    python scripts/bench/bench_workflow.py [--study demo] [--cores 2] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.workflow.helpers import env_for, snakemake_cmd


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--study", default="demo")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--keep", type=Path, help="run in this directory instead of a temporary one")
    a = ap.parse_args()
    tmp = a.keep or Path(tempfile.mkdtemp(prefix="bench_workflow_"))
    tmp.mkdir(parents=True, exist_ok=True)
    env = env_for(tmp)
    t0 = time.perf_counter()
    proc = subprocess.run(snakemake_cmd(a.study, track=True, cores=a.cores), cwd=tmp, env=env,
                          capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        print(proc.stdout[-2000:], proc.stderr[-2000:])
        return 1
    root = tmp / "results" / a.study
    statuses = [json.loads(p.read_text()) for p in root.glob("*/seed*/*/status.json")]
    job_secs = sum(float(pd.read_csv(p, sep="\t")["s"].iloc[0]) for p in root.glob("benchmarks/**/*.tsv"))
    print(f"study {a.study!r}: {len(statuses)} cells on {a.cores} cores, wall {wall:.1f} s")
    print(f"{'cell':<34}{'status':<8}{'load':>7}{'fit':>7}{'sample':>8}{'eval':>7}{'wall':>7}{'overhead':>10}")
    for s in sorted(statuses, key=lambda s: s["cell_id"]):
        print(f"{s['dataset'] + '/' + s['synthesizer']:<34}{s['status']:<8}{s['load_seconds'] or 0:>7.2f}"
              f"{s['fit_seconds'] or 0:>7.2f}"
              f"{s['sample_seconds'] or 0:>8.2f}{s['evaluate_seconds'] or 0:>7.2f}{s['wall_seconds']:>7.2f}"
              f"{s['overhead_seconds']:>10.2f}")
    over = [s["overhead_seconds"] for s in statuses]
    print(f"per-cell overhead: median {statistics.median(over):.2f} s, max {max(over):.2f} s (target < 2 s)")
    print(f"sum of all jobs' times (Snakemake benchmark files): {job_secs:.1f} s")
    print(f"wall / sum of job times = {wall / job_secs:.2f} (target <= 0.6 on 2 cores)")
    print(f"results kept in {tmp}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
