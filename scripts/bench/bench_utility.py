"""CPU time, peak memory and values of the utility family, base code against current code (not a test).

Per dataset (the paper's files: T = <ds>_trn, H = <ds>_val, S = <ds>_<synth>), the default
utility family (`holdbench.metrics.utility.Utility()`: degree-3 pMSE, TSTR, CI overlap) is run

  base      with the code of a base worktree (`git worktree add /tmp/hb/base-A HEAD`, --base),
  current   with this checkout,
  current, pmse_subsample=True   the cheaper estimator (S reduced to a seeded sample of |T| rows
            before the pMSE, c = 1/2), to print its effect on the values,

each in its own subprocess with one BLAS/OpenMP thread, in the same run. Printed: CPU seconds
(time.process_time of compute(), data loading excluded), peak RSS of the process (getrusage,
loading included), the pMSE parts' CPU seconds when the code reports them, and the values
(pMSE ratio, its Bale & Quick form when present, c, m, TSTR AUC ratio, CI overlap mean), then
current/base CPU ratios and the value differences.

Usage: python scripts/bench/bench_utility.py [--base DIR] [--shared DIR] [--datasets adult,credit-default]
                                          [--synth synthpop] [--no-subsample]
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
TARGETS = {"adult": "income", "credit-default": "default payment next month", "bank-marketing": "y"}
VALUES = ("pmse_ratio", "pmse_ratio_bq", "pmse", "pmse_c", "pmse_n_terms", "pmse_degree", "tstr_auc_ratio",
          "ci_overlap_mean")


def shared_dir(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    return Path(os.environ.get("HOLDBENCH_SHARED_DIR", ROOT.parent / "shared"))


def one(job: dict) -> dict:
    """Run one measurement in this process (a subprocess whose sys.path starts at job['code'])."""
    sys.path.insert(0, job["code"])
    import pandas as pd

    from holdbench.metrics.registry import EvalData
    from holdbench.metrics.utility import Utility

    paper = Path(job["shared"]) / "datasets" / "paper_study"
    ds = job["ds"]
    t = pd.read_csv(paper / f"{ds}_trn.csv.gz")
    h = pd.read_csv(paper / f"{ds}_val.csv.gz")
    s = pd.read_csv(paper / f"{ds}_{job['synth']}.csv.gz")
    kinds = {c: "categorical" if t[c].dtype == object else "numeric" for c in t.columns}
    data = EvalData(t, h, s, kinds, target=TARGETS[ds], seed=0)
    family = Utility(**job["options"])
    cpu = time.process_time()
    result = family.compute(data)
    out = {"cpu": time.process_time() - cpu,
           "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    out.update({k: getattr(result, k) for k in VALUES if hasattr(result, k)})
    return out


def spawn(job: dict) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, __file__, "--one", json.dumps(job)], env=env, capture_output=True,
                          text=True, check=False, cwd=job["code"])
    if proc.returncode != 0:
        return {"error": " | ".join(proc.stderr.strip().splitlines()[-3:])}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def fmt(d: dict) -> str:
    return ", ".join(f"{k}={v:.6g}" if isinstance(v, float) else f"{k}={v}" for k, v in d.items())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", default="/tmp/hb/base-A", help="worktree with the base code")
    ap.add_argument("--shared")
    ap.add_argument("--datasets", default="adult,credit-default")
    ap.add_argument("--synth", default="synthpop")
    ap.add_argument("--no-subsample", action="store_true", help="skip the pmse_subsample=True run")
    ap.add_argument("--one")
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(json.loads(args.one)), default=str))
        return
    shared = str(shared_dir(args.shared))
    runs = [("base", args.base, {}), ("current", str(ROOT), {})]
    if not args.no_subsample:
        runs.append(("current, pmse_subsample=True", str(ROOT), {"pmse_subsample": True}))
    print(f"utility family, one core (OMP_NUM_THREADS=1); load average at start {os.getloadavg()[0]:.1f}; "
          f"base = {args.base}", flush=True)
    for ds in args.datasets.split(","):
        got = {}
        for label, code, options in runs:
            got[label] = spawn({"code": code, "shared": shared, "ds": ds, "synth": args.synth, "options": options})
            print(f"{ds}/{args.synth} {label}: {fmt(got[label])}", flush=True)
        base = got["base"]
        for label, new in got.items():
            if label == "base" or "error" in new or "error" in base:
                continue
            diffs = ", ".join(f"{k} {base[k]:.6g} -> {new[k]:.6g}" for k in VALUES
                              if isinstance(base.get(k), float) and isinstance(new.get(k), float))
            print(f"  {ds} {label} / base: CPU x{new['cpu'] / base['cpu']:.2f}, peak RSS "
                  f"x{new['peak_rss_mb'] / base['peak_rss_mb']:.2f}; values: {diffs}", flush=True)


if __name__ == "__main__":
    main()
