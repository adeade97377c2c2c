"""CPU time, peak memory and values of the legal (Bale & Quick) and disclosure families: this
code against a baseline checkout, in the same run, on adult and credit-default.

T = <ds>_trn, H = <ds>_val, S = the paper's published synthetic files (synthpop, flip50) and the
holdout row (S = H); kinds as the paper read them (object -> categorical, else numeric);
sensitive attribute and QIs as conf/dataset/<ds>.yaml. Each (code, cell, family) runs in a fresh
subprocess on one core (OMP_NUM_THREADS=1, threadpoolctl 1): CPU = process time of `compute`;
peak RSS = the subprocess's ru_maxrss (data loading included), and the RSS added by `compute`.
Values: every scalar the two versions share is compared; the leave-one-out fields changed on
purpose (T's scaler, as Bale & Quick's code), the others must agree to rounding (the new code
recomputes distances exactly, the old one kept scikit-learn's |x|²−2x·y+|y|² values).

Usage: python scripts/bench/bench_legal_disclosure.py [--base /tmp/hb/base-B] [--shared DIR]
  (make the baseline with `git worktree add /tmp/hb/base-B <commit>`). Not collected by pytest.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CELLS = (("adult", "synthpop"), ("adult", "holdout"), ("credit-default", "synthpop"),
         ("credit-default", "flip50"))
CONFIG = {"adult": ("income", ["age", "sex", "race", "marital-status", "relationship", "education",
                               "native-country"]),
          "credit-default": ("default payment next month", ["SEX", "EDUCATION", "MARRIAGE", "AGE"])}
CHANGED_ON_PURPOSE = ("legal_ims_loo", "legal_dcr_p05_loo", "legal_nndr_p05_loo", "legal_ims_pass_loo",
                      "legal_dcr_pass_loo", "legal_nndr_pass_loo", "legal_pass_all_loo")

CHILD = r"""
import json, os, resource, sys, time
os.environ["OMP_NUM_THREADS"] = "1"
root, paper, ds, synth, family, sensitive, qis = sys.argv[1:8]
sys.path.insert(0, root)
import pandas as pd
from threadpoolctl import threadpool_limits
from holdbench.metrics.registry import EvalData, scalars
t = pd.read_csv(f"{paper}/{ds}_trn.csv.gz")
h = pd.read_csv(f"{paper}/{ds}_val.csv.gz")[t.columns]
s = h if synth == "holdout" else pd.read_csv(f"{paper}/{ds}_{synth}.csv.gz")[t.columns]
kinds = {c: "categorical" if t[c].dtype == object else "numeric" for c in t.columns}
data = EvalData(t, h, s, kinds, holdout_row=synth == "holdout", sensitive=sensitive,
                quasi_identifiers=tuple(json.loads(qis)), seed=0, n_jobs=1)
if family == "legal":
    from holdbench.metrics.legal import LegalCriteria as F
else:
    from holdbench.metrics.disclosure import AttributeDisclosure as F
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
with threadpool_limits(limits=1):
    cpu = time.process_time()
    out = F().compute(data)
    cpu = time.process_time() - cpu
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
values = {k: v for k, v in scalars(out).items() if not k.startswith("seconds")}
print(json.dumps({"cpu": cpu, "rss_mib": rss / 1024, "added_mib": (rss - rss0) / 1024, "n_s": len(s),
                  "values": values}))
"""


def run(root: Path, paper: Path, ds: str, synth: str, family: str) -> dict:
    sensitive, qis = CONFIG[ds]
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", CHILD, str(root), str(paper), ds, synth, family, sensitive,
                           json.dumps(qis)], capture_output=True, text=True, env=env, cwd=str(root), check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{root} {ds}/{synth}/{family} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def compare(old: dict, new: dict) -> list[str]:
    lines = []
    for key in sorted(set(old) | set(new)):
        if key not in old:
            lines.append(f"    new field   {key} = {new[key]}")
            continue
        if key not in new:
            lines.append(f"    GONE        {key} (was {old[key]})")
            continue
        a, b = old[key], new[key]
        if a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)):
            continue
        tag = "on purpose " if key in CHANGED_ON_PURPOSE else "DIFFERS    "
        if isinstance(a, float) and isinstance(b, float):
            rel = abs(a - b) / max(abs(a), abs(b), 1e-300)
            if tag != "on purpose " and rel < 1e-9:
                tag = "rounding   "  # exact distances now, the old |x|²−2x·y+|y|² values before
            lines.append(f"    {tag} {key}: {a!r} -> {b!r} (rel {rel:.1e})")
        else:
            lines.append(f"    {tag} {key}: {a!r} -> {b!r}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", default="/tmp/hb/base-B", help="checkout of the baseline code")
    parser.add_argument("--shared", default=os.environ.get("HOLDBENCH_SHARED_DIR", str(ROOT.parent / "shared")))
    args = parser.parse_args()
    base, paper = Path(args.base), Path(args.shared) / "datasets" / "paper_study"
    if not (base / "metrics" / "legal.py").is_file():
        sys.exit(f"no baseline at {base}: git worktree add {base} <commit>")
    print(f"baseline {base}, new {ROOT}; one core; CPU = process time of compute; RSS = subprocess peak")
    totals = {"base": {}, "new": {}}
    for ds, synth in CELLS:
        for family in ("legal", "disclosure"):
            old, new = run(base, paper, ds, synth, family), run(ROOT, paper, ds, synth, family)
            for tag, r in (("base", old), ("new", new)):
                totals[tag][ds] = totals[tag].get(ds, 0.0) + r["cpu"]
            print(f"\n{ds}/{synth} (|S|={new['n_s']}) {family}: CPU base {old['cpu']:.2f} s -> new "
                  f"{new['cpu']:.2f} s (x{old['cpu'] / max(new['cpu'], 1e-9):.2f}); peak RSS base "
                  f"{old['rss_mib']:.0f} MiB (+{old['added_mib']:.0f} in compute) -> new {new['rss_mib']:.0f} MiB "
                  f"(+{new['added_mib']:.0f})")
            diffs = compare(old["values"], new["values"])
            print("\n".join(diffs) if diffs else "    all shared values equal")
    print("\nCPU seconds per dataset, both families over the cells above:")
    for ds in totals["new"]:
        print(f"  {ds}: base {totals['base'][ds]:.2f} s, new {totals['new'][ds]:.2f} s")


if __name__ == "__main__":
    main()
