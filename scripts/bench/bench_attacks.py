"""Membership-inference panel (holdbench.metrics.attacks) on the paper's files: CPU, peak memory, values, old vs new.

Per dataset (adult, credit-default): T = <ds>_trn, H = <ds>_val, S = the paper's synthpop and
flip50 files (50,000 rows each); kinds as the paper: object -> categorical, else numeric.
Each measurement runs in its own subprocess on one thread (OMP_NUM_THREADS=1, n_jobs=1) so its
peak RSS (ru_maxrss, data loading included) is its own; CPU = time.process_time() of
`compute` alone. "base" is the code of a git worktree of the commit before this round's
speed-ups (`--base`, default /tmp/hb/base-C; made with `git worktree add /tmp/hb/base-C HEAD`),
"new" the working tree, both measured in the same run. The default panel must give the same
values in both (the speed-ups are exact: same targets, same bootstrap draws, same sums up to
rounding); every AUC, interval end and TPR is printed for both with the largest difference.
Cheaper, value-changing settings (fewer bootstrap rounds, smaller fit samples for the density
and classifier attacks) are options of MembershipInference, not defaults; their effect on
the values and the time is printed too (new code, default vs option).

Usage: python scripts/bench/bench_attacks.py [--shared DIR] [--base DIR] [--datasets adult,credit-default]
Not collected by pytest.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SYNTHS = ("synthpop", "flip50")
ATTACKS = ("dcr", "dcr_diff", "density", "classifier")
PARTS = ("auc", "auc_ci_low", "auc_ci_high", "tpr_at_fpr_1pct", "tpr_at_fpr_01pct")
CHEAPER = {"n_bootstrap=100": {"n_bootstrap": 100}, "fit_max_rows=10000": {"fit_max_rows": 10_000}}


def one(code: Path, shared: Path, ds: str, synth: str, options: dict) -> dict:
    """Run the panel once in this process with the metrics package of `code`; its figures."""
    sys.path.insert(0, str(code))
    import pandas as pd

    from holdbench.metrics.attacks import MembershipInference
    from holdbench.metrics.registry import EvalData, scalars

    paper = shared / "datasets" / "paper_study"
    t = pd.read_csv(paper / f"{ds}_trn.csv.gz")
    h = pd.read_csv(paper / f"{ds}_val.csv.gz")
    s = pd.read_csv(paper / f"{ds}_{synth}.csv.gz")
    kinds = {c: "categorical" if t[c].dtype == object else "numeric" for c in t.columns}
    data = EvalData(t, h, s, kinds, seed=0, n_jobs=1)
    family = MembershipInference(**options)
    cpu = time.process_time()
    res = family.compute(data)
    cpu = time.process_time() - cpu
    out = {k: v for k, v in scalars(res).items() if k.startswith("mia_") and isinstance(v, float)}
    out.update(cpu=cpu, peak_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
               shape=[len(t), len(h), len(s), t.shape[1]], module=sys.modules["holdbench.metrics.attacks"].__file__)
    return out


def spawn(code: Path, shared: Path, ds: str, synth: str, options: dict | None = None) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env.pop("PYTHONPATH", None)
    cmd = [sys.executable, __file__, "--one", json.dumps([str(code), str(shared), ds, synth, options or {}])]
    proc = subprocess.run(cmd, check=False, env=env, capture_output=True, text=True, cwd=code)
    if proc.returncode:
        raise RuntimeError(f"{code} {ds} {synth}: {proc.stderr[-2000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    if not out["module"].startswith(str(code)):
        raise RuntimeError(f"ran {out['module']}, not the code in {code}")
    return out


def _fields() -> list[str]:
    return ["mia_auc_max"] + [f"mia_{a}_{p}" for a in ATTACKS for p in PARTS]


def _diff(a: dict, b: dict) -> float:
    gaps = [abs(a[k] - b[k]) for k in _fields() if not (math.isnan(a[k]) and math.isnan(b[k]))]
    return max(gaps, default=0.0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--base", type=Path, default=Path("/tmp/hb/base-C"))
    ap.add_argument("--datasets", default="adult,credit-default")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        code, shared, ds, synth, options = json.loads(args.one)
        print(json.dumps(one(Path(code), Path(shared), ds, synth, options)))
        return
    if not (args.base / "metrics" / "attacks.py").exists():
        sys.exit(f"no base worktree at {args.base}: git -C {ROOT} worktree add {args.base} <commit>")
    for ds in args.datasets.split(","):
        print(f"\n=== {ds} (one thread; CPU s of compute, peak RSS MB of the whole subprocess)")
        for synth in SYNTHS:
            base, new = spawn(args.base, args.shared, ds, synth), spawn(ROOT, args.shared, ds, synth)
            t, h, s, p = new["shape"]
            print(f"\n{ds}/{synth}: |T| {t}, |H| {h}, |S| {s}, {p} columns")
            print(f"  base: {base['cpu']:6.2f} s CPU, peak {base['peak_mb']:6.0f} MB")
            print(f"  new : {new['cpu']:6.2f} s CPU, peak {new['peak_mb']:6.0f} MB   "
                  f"(CPU ratio new/base {new['cpu'] / base['cpu']:.2f})")
            print(f"  {'field':<34}{'base':>24}{'new':>24}")
            for k in _fields():
                print(f"  {k:<34}{base[k]:>24.17g}{new[k]:>24.17g}")
            print(f"  largest |base - new| over these fields: {_diff(base, new):.3g}")
            for label, options in CHEAPER.items():
                cheap = spawn(ROOT, args.shared, ds, synth, options)
                moved = {k: cheap[k] - new[k] for k in _fields()
                         if not (math.isnan(cheap[k]) and math.isnan(new[k])) and cheap[k] != new[k]}
                worst = max(moved.items(), key=lambda kv: abs(kv[1]), default=("-", 0.0))
                print(f"  option {label:<20}: {cheap['cpu']:6.2f} s CPU (default {new['cpu']:.2f}), "
                      f"peak {cheap['peak_mb']:.0f} MB; {len(moved)} fields moved, largest {worst[0]} "
                      f"{new.get(worst[0], math.nan):.4f} -> {cheap.get(worst[0], math.nan):.4f}; "
                      f"mia_auc_max {new['mia_auc_max']:.4f} -> {cheap['mia_auc_max']:.4f}")


if __name__ == "__main__":
    main()
