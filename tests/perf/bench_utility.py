"""Speed, memory and sanity of the utility metrics on the paper's published data (not a test).

Every measurement runs in its own subprocess with OMP_NUM_THREADS=1 (one core), so the peak
RSS printed (getrusage ru_maxrss of that process) is the measurement's own, data loading
included.

  pmse      adult, T = adult_trn (24,421), S = synthpop (50,000), degree 3; and the same at
            25% / 50% / 100% of S (seeded row samples) to show how time grows with rows.
  tstr+ci   adult synthpop: TSTR (two HistGradientBoosting fits) and CI overlap (two logits).
  cart      adult synthpop: CART pMSE with 20 permutations (off by default in the family).
  credit    credit-default synthpop at degree 3 with max_design_mb=4096 (the degree used).
  ordering  pMSE ratio on adult for holdout, synthpop, flip10/50/90, gaussian_copula.

Usage: python tests/perf/bench_utility.py [--shared DIR] [--quick]
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
sys.path.insert(0, str(ROOT))


def shared_dir(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    return Path(os.environ.get("HOLDBENCH_SHARED_DIR", ROOT.parent / "shared"))


def load(shared: Path, ds: str, synth: str, frac: float = 1.0):
    import numpy as np
    import pandas as pd

    paper = shared / "datasets" / "paper_study"
    t = pd.read_csv(paper / f"{ds}_trn.csv.gz")
    h = pd.read_csv(paper / f"{ds}_val.csv.gz")
    s = h if synth == "holdout" else pd.read_csv(paper / f"{ds}_{synth}.csv.gz")
    if frac < 1.0:
        rows = np.sort(np.random.default_rng(0).choice(len(s), size=round(frac * len(s)), replace=False))
        s = s.iloc[rows].reset_index(drop=True)
    kinds = {c: "categorical" if t[c].dtype == object else "numeric" for c in t.columns}
    return t, h, s, kinds


TARGETS = {"adult": "income", "credit-default": "default payment next month"}


def one(job: dict) -> dict:
    """Run one measurement in this process (called in a subprocess)."""
    from metrics.pmse import pmse_cart, pmse_ratio
    from metrics.registry import EvalData
    from metrics.utility import _ci_overlap, _tstr

    t, h, s, kinds = load(Path(job["shared"]), job["ds"], job["synth"], job.get("frac", 1.0))
    wall, cpu = time.perf_counter(), time.process_time()
    out: dict = {}
    if job["what"] == "pmse":
        r = pmse_ratio(t, s, kinds, degree=3, seed=0, max_design_mb=job.get("max_design_mb"))
        out = {"ratio": r.ratio, "pmse": r.pmse, "expected": r.expected, "degree": r.degree, "m": r.n_terms,
               "columns": r.n_columns, "n": r.n, "iters": r.n_iter, "converged": r.converged, "reason": r.reason}
    elif job["what"] == "cart":
        r = pmse_cart(t, s, kinds, permutations=20, seed=0)
        out = {"ratio": r.ratio, "pmse": r.pmse, "null": r.null_mean, "reason": r.reason}
    elif job["what"] == "tstr+ci":
        data = EvalData(t, h, s, kinds, target=TARGETS[job["ds"]], seed=0)
        reasons: list[str] = []
        t0 = time.perf_counter()
        out.update(_tstr(data, data.target, reasons))
        out["seconds_tstr"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        ci = _ci_overlap(data, data.target, reasons)
        out["seconds_ci"] = time.perf_counter() - t0
        out.update({k: v for k, v in ci.items() if k != "ci_overlap_table"})
        out["reasons"] = "; ".join(reasons)
    out["wall"] = time.perf_counter() - wall
    out["cpu"] = time.process_time() - cpu
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def spawn(job: dict) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, __file__, "--one", json.dumps(job)], env=env, capture_output=True,
                          text=True, check=False)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def fmt(d: dict) -> str:
    return ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in d.items())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared")
    ap.add_argument("--quick", action="store_true", help="skip cart, credit-default and the ordering")
    ap.add_argument("--one")
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(json.loads(args.one))))
        return
    shared = str(shared_dir(args.shared))
    jobs = [("pmse adult synthpop 100%", {"what": "pmse", "ds": "adult", "synth": "synthpop"}),
            ("pmse adult synthpop 50%", {"what": "pmse", "ds": "adult", "synth": "synthpop", "frac": 0.5}),
            ("pmse adult synthpop 25%", {"what": "pmse", "ds": "adult", "synth": "synthpop", "frac": 0.25}),
            ("tstr+ci adult synthpop", {"what": "tstr+ci", "ds": "adult", "synth": "synthpop"})]
    if not args.quick:
        jobs += [("cart adult synthpop", {"what": "cart", "ds": "adult", "synth": "synthpop"}),
                 ("pmse credit-default synthpop, max_design_mb=4096",
                  {"what": "pmse", "ds": "credit-default", "synth": "synthpop", "max_design_mb": 4096})]
        jobs += [(f"pmse adult {s}", {"what": "pmse", "ds": "adult", "synth": s})
                 for s in ("holdout", "flip10", "flip50", "flip90", "gaussian_copula")]
    print(f"one core (OMP_NUM_THREADS=1), load average at start {os.getloadavg()[0]:.1f}", flush=True)
    for label, job in jobs:
        res = spawn({**job, "shared": shared})
        print(f"{label}: {fmt(res)}", flush=True)


if __name__ == "__main__":
    main()
