"""Membership-inference panel (metrics.attacks) on the paper's adult files: AUCs, time, memory.

T = adult_trn, H = adult_val, S = the paper's published flip10, flip50, flip90, synthpop and
gaussian_copula files (50,000 rows each); kinds as the paper: object -> categorical, else
numeric. Every measurement runs in its own subprocess on one thread (OMP_NUM_THREADS=1,
n_jobs=1) so its peak RSS is its own; CPU seconds are reported beside wall seconds because
the machine is shared. Scaling: synthpop's S cut to its first 12,500 / 25,000 / 50,000 rows.
Not collected by pytest.

Usage: python tests/perf/bench_attacks.py [--shared DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SYNTHS = ("flip10", "flip50", "flip90", "synthpop", "gaussian_copula")
SIZES = (12_500, 25_000, 50_000)
ATTACKS = ("dcr", "dcr_diff", "density", "classifier")


def _rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def one(shared: Path, synth: str, rows: int) -> dict:
    """Run the panel once in this process and return its figures."""
    sys.path.insert(0, str(ROOT))
    import pandas as pd

    from metrics.attacks import MembershipInference
    from metrics.registry import EvalData, scalars

    paper = shared / "datasets" / "paper_study"
    t = pd.read_csv(paper / "adult_trn.csv.gz")
    h = pd.read_csv(paper / "adult_val.csv.gz")
    s = pd.read_csv(paper / f"adult_{synth}.csv.gz").iloc[:rows]
    kinds = {c: "categorical" if t[c].dtype == object else "numeric" for c in t.columns}
    data = EvalData(t, h, s, kinds, seed=0, n_jobs=1)
    before = _rss_mb()
    cpu, wall = time.process_time(), time.perf_counter()
    res = MembershipInference().compute(data)
    out = scalars(res)
    out.update(cpu=time.process_time() - cpu, wall=time.perf_counter() - wall, rss_before_mb=before,
               peak_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, rows=len(s), synth=synth)
    return out


def spawn(shared: Path, synth: str, rows: int) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, __file__, "--shared", str(shared), "--one", synth, "--rows", str(rows)],
                          env=env, capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--rows", type=int, default=50_000, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(args.shared, args.one, args.rows)))
        return
    runs = {synth: spawn(args.shared, synth, 50_000) for synth in SYNTHS}
    print("adult, n = 2000 members + 2000 non-members, |R| = 22,421, |S| = 50,000; AUC [95% CI] / TPR@FPR1%")
    print(f"{'S':<16}" + "".join(f"{a:>28}" for a in ATTACKS) + f"{'max':>8}  best")
    for synth, r in runs.items():
        cells = "".join(f"{r[f'mia_{a}_auc']:.3f} [{r[f'mia_{a}_auc_ci_low']:.3f},{r[f'mia_{a}_auc_ci_high']:.3f}]"
                        f" {r[f'mia_{a}_tpr_at_fpr_1pct']:.3f}".rjust(28) for a in ATTACKS)
        print(f"{synth:<16}{cells}{r['mia_auc_max']:>8.3f}  {r['mia_best_attack']}")
    print("\nTPR at FPR 0.1% (2 false positives of 2000):")
    for synth, r in runs.items():
        print(f"{synth:<16}" + "".join(f"{a}={r[f'mia_{a}_tpr_at_fpr_01pct']:.3f}  " for a in ATTACKS))
    print("\ntime and memory, one thread (synthpop's S cut to its first rows)")
    print(f"{'|S|':>7} {'cpu s':>7} {'wall s':>7} {'RSS before MB':>14} {'peak RSS MB':>12}")
    for rows in SIZES:
        r = runs["synthpop"] if rows == 50_000 else spawn(args.shared, "synthpop", rows)
        print(f"{rows:>7} {r['cpu']:>7.1f} {r['wall']:>7.1f} {r['rss_before_mb']:>14.0f} {r['peak_mb']:>12.0f}")
    print("\nother S at 50,000 rows: " + ", ".join(f"{s} {r['cpu']:.1f} s cpu / {r['peak_mb']:.0f} MB"
                                               for s, r in runs.items()))


if __name__ == "__main__":
    main()
