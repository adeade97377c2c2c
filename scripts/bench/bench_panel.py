"""CPU seconds and peak memory of each metric family of the default panel, today's code against a
base revision, in the same run (issue 21, item 3). Not collected by pytest.

For each dataset (the paper's split files: T = <ds>_trn, H = <ds>_val, S = <ds>_synthpop, or
<ds>_flip50 where no synthpop file exists) and each family of conf/metrics/default.yaml except
anonymeter (its own interpreter and cost, see bench_anonymeter.py), one fresh subprocess per
(code, family) with OMP_NUM_THREADS=1 and n_jobs=1 builds the family from the YAML exactly as
`holdbench evaluate` does (holdbench.benchmark.config.group_config + check_metrics_config), reads the files
as `holdbench evaluate --dataset <ds>` does (holdbench.benchmark.cli.evaluate.read_inputs: the dataset's
kinds, target, sensitive attribute and quasi-identifiers) and runs holdbench.metrics.evaluate.evaluate on it.

Measured in the child: CPU seconds of evaluate() (user + system, this process and any process it
waited for; imports done lazily inside a family, e.g. numba, count), and peak RSS of the whole
process (VmHWM: interpreter, tables and the family). The base code runs from a git worktree of
--base-rev made (or moved to that revision) under the temp dir; the working tree is measured as it
is, uncommitted changes included. Targets (issue 21): the families together <= 60 s CPU on adult,
<= 120 s on credit-default, peak <= 3 GB.

Usage: python scripts/bench/bench_panel.py [--base-rev HEAD~1|none] [--all] [--quick] [--families a,b]
                                        [--synthetic NAME]
  default datasets adult and credit-default; --all adds bank-marketing and online-shoppers;
  --quick runs adult only; --synthetic flip50 evaluates <ds>_flip50 instead of synthpop (flip50
  on credit-default is the hard case: S almost separable from T, the pMSE fit runs to its
  iteration cap); --base-rev none measures the working tree only. HEAD~1 moves with every commit: name the revision of the code to
  compare with (e.g. the commit before a round of changes) when HEAD has moved on.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FAMILIES = ("fidelity", "privacy", "panel", "utility", "legal", "disclosure", "attacks")
TARGET_CPU = {"adult": 60.0, "credit-default": 120.0}
TARGET_PEAK_MB = 3 * 1024

CHILD = r"""
import argparse, json, math, resource, sys, time
tree, family, ds, synth, data, rows = sys.argv[1:7]
sys.path.insert(0, tree)
from holdbench.benchmark.cli.evaluate import read_inputs
from holdbench.benchmark.config import check_metrics_config, group_config
from holdbench.metrics.evaluate import evaluate
from holdbench.metrics.registry import specs_of

def cpu():
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

def peak_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            own = int(line.split()[1]) / 1024
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return max(own, kids)

cfg = group_config("metrics", "default", ["n_jobs=1"])
others = [f for f in cfg["families"] if f != family]
fams = check_metrics_config("default", cfg, skip=[f for f in others if f not in family.split(",")])
args = argparse.Namespace(train=f"{data}/{ds}_trn.csv.gz", holdout=f"{data}/{ds}_val.csv.gz",
                          synthetic=f"{data}/{ds}_{synth}.csv.gz", sep=None, dataset=ds, values="pandas",
                          holdout_row=False, target=None)
t, h, s, schema, _ = read_inputs(args)
roles = {"target": schema.target, "sensitive": schema.sensitive,
         "quasi_identifiers": tuple(schema.quasi_identifiers)}
if int(rows):  # warm-up on a slice, family by family: fills numba's on-disk cache of this tree
    t, h, s = t.iloc[:int(rows)], h.iloc[:int(rows)], s.iloc[:int(rows)]
    for fam in fams:
        try:
            evaluate(t, h, s, schema.kinds, families=[fam], n_jobs=1, **roles)
        except Exception as exc:  # noqa: BLE001 - a family that needs more rows only misses its warm-up
            print(f"warm-up {fam.name}: {type(exc).__name__}", file=sys.stderr)
    fams = fams[:1]
c0, w0 = cpu(), time.perf_counter()
res = evaluate(t, h, s, schema.kinds, families=fams, n_jobs=1, seed=int(cfg.get("seed", 0)), **roles)
c1, w1 = cpu(), time.perf_counter()
out = res.to_dict()
def plain(v):
    if isinstance(v, float) and math.isnan(v):
        return None
    return v if isinstance(v, (bool, int, float, str)) or v is None else str(v)
values = {spec.name: plain(out.get(spec.name)) for fam in fams for spec in specs_of(fam.result_type)}
print("RESULT " + json.dumps({"cpu": c1 - c0, "wall": w1 - w0, "peak_mb": peak_mb(), "values": values}))
"""


def base_worktree(rev: str) -> Path:
    """A detached worktree of `rev` under the temp dir, created or moved to `rev` (never the main tree)."""
    sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", f"{rev}^{{commit}}"],
                         capture_output=True, text=True, check=True).stdout.strip()
    path = Path(tempfile.gettempdir()) / "holdbench-bench-panel-base"
    if path.exists():
        have = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=False)
        if have.returncode == 0 and have.stdout.strip() == sha:
            return path
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(path)],
                       capture_output=True, check=False)
        subprocess.run(["git", "-C", str(ROOT), "worktree", "prune"], capture_output=True, check=False)
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(path), sha],
                   capture_output=True, text=True, check=True)
    return path


def synthetic_name(data: Path, ds: str) -> str:
    return "synthpop" if (data / f"{ds}_synthpop.csv.gz").exists() else "flip50"


def run_child(tree: Path, family: str, ds: str, synth: str, data: Path, timeout: float, rows: int = 0) -> dict:
    """One evaluation in a fresh interpreter of `tree`: `family` (comma-separated names) on all rows
    of the dataset's files, or on the first `rows` of each (a warm-up)."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
               NUMBA_NUM_THREADS="1", PYTHONPATH=str(tree))
    try:
        proc = subprocess.run([sys.executable, "-c", CHILD, str(tree), family, ds, synth, str(data), str(rows)],
                              cwd=tree, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {timeout:.0f} s wall"}
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    tail = " ".join((proc.stderr or proc.stdout).strip().splitlines()[-1:])
    return {"error": f"exit {proc.returncode}: {tail[:200]}"}


def fmt(x: float | None, spec: str) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def same_value(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return a == b


def report(rows: list) -> None:
    """The table family x dataset, the totals against the targets and the values base -> new."""
    values = []
    print()
    head = f"{'dataset':<16} {'S':<9} {'family':<11} {'base CPU s':>10} {'new CPU s':>10} {'ratio':>6} " \
           f"{'base MB':>8} {'new MB':>8}  values"
    print(head)
    print("-" * len(head))
    totals: dict[str, dict[str, float]] = {}
    for ds, synth, fam, b, n in rows:
        ok = "error" not in b and "error" not in n
        ratio = n["cpu"] / b["cpu"] if ok and b["cpu"] > 0 else None
        if ok:
            bv, nv = b["values"], n["values"]
            changed = [k for k in sorted(set(bv) | set(nv)) if not same_value(bv.get(k), nv.get(k))]
            note = f"{len(changed)} of {len(set(bv) | set(nv))} changed" if changed else "all equal"
            values.append((ds, fam, bv, nv, changed))
        else:
            note = "; ".join(f"{k}: {v['error']}" for k, v in (("base", b), ("new", n)) if "error" in v)
        tot = totals.setdefault(ds, {"base": 0.0, "new": 0.0, "base_mb": 0.0, "new_mb": 0.0})
        for label, r in (("base", b), ("new", n)):
            if "error" not in r:
                tot[label] += r["cpu"]
                tot[f"{label}_mb"] = max(tot[f"{label}_mb"], r["peak_mb"])
        print(f"{ds:<16} {synth:<9} {fam:<11} {fmt(b.get('cpu'), '10.1f')} {fmt(n.get('cpu'), '10.1f')} "
              f"{fmt(ratio, '6.2f')} {fmt(b.get('peak_mb'), '8.0f')} {fmt(n.get('peak_mb'), '8.0f')}  {note}")
    print()
    for ds, tot in totals.items():
        target = TARGET_CPU.get(ds)
        verdict = "" if target is None else \
            f" -> target <= {target:.0f} s: {'met' if tot['new'] <= target else 'NOT met'}"
        print(f"total {ds:<16} CPU base {tot['base']:7.1f} s, new {tot['new']:7.1f} s{verdict}; "
              f"peak base {tot['base_mb']:.0f} MB, new {tot['new_mb']:.0f} MB -> target <= {TARGET_PEAK_MB} MB: "
              f"{'met' if tot['new_mb'] <= TARGET_PEAK_MB else 'NOT met'}")
    print("\nheadline values, base -> new (* = changed):")
    for ds, fam, bv, nv, changed in values:
        items = [f"{'*' if k in changed else ''}{k} {bv.get(k)!r}" + (f" -> {nv.get(k)!r}" if k in changed else "")
                 for k in sorted(set(bv) | set(nv))]
        print(f"  {ds}/{fam}: " + "; ".join(items))
    sys.stdout.flush()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base-rev", default="HEAD~1", help="revision of the base code (default HEAD~1)")
    ap.add_argument("--all", action="store_true", help="also bank-marketing and online-shoppers")
    ap.add_argument("--quick", action="store_true", help="adult only")
    ap.add_argument("--families", help=f"comma-separated subset of {','.join(FAMILIES)}")
    ap.add_argument("--shared", help="the shared dir (default $HOLDBENCH_SHARED_DIR or ../shared)")
    ap.add_argument("--synthetic", help="S file <ds>_<NAME> of the paper study (default: synthpop, else flip50)")
    ap.add_argument("--timeout", type=float, default=1800.0, help="wall seconds allowed per child (default 1800)")
    args = ap.parse_args()
    families = args.families.split(",") if args.families else list(FAMILIES)
    bad = sorted(set(families) - set(FAMILIES))
    if bad:
        raise ValueError(f"--families: unknown {bad} (known: {list(FAMILIES)})")
    datasets = ["adult"] if args.quick else ["adult", "credit-default"]
    if args.all:
        datasets += ["bank-marketing", "online-shoppers"]
    shared = Path(args.shared or os.environ.get("HOLDBENCH_SHARED_DIR", ROOT.parent / "shared"))
    data = shared / "datasets" / "paper_study"
    os.environ.setdefault("HOLDBENCH_SHARED_DIR", str(shared))
    os.environ.setdefault("HOLDBENCH_DATA_DIR", str(shared / "datasets"))
    if args.base_rev.lower() == "none":
        trees, subject = {"new": ROOT}, "none (working tree only)"
    else:
        base = base_worktree(args.base_rev)
        trees = {"base": base, "new": ROOT}
        subject = subprocess.run(["git", "-C", str(base), "log", "-1", "--format=%h %s"], capture_output=True,
                                 text=True, check=True).stdout.strip()[:100]
    print(f"base {args.base_rev} = {subject} ; new = {ROOT} (working tree); "
          f"load average {os.getloadavg()[0]:.2f} "
          f"at start on {os.cpu_count()} cores; CPU = user+system seconds of evaluate() in a fresh process, "
          "1 thread; peak = VmHWM of that process")
    grand = []
    for ds in datasets:
        synth = args.synthetic or synthetic_name(data, ds)
        if not (data / f"{ds}_{synth}.csv.gz").exists():
            raise FileNotFoundError(f"--synthetic {synth}: {data / f'{ds}_{synth}.csv.gz'} does not exist")
        for label, tree in trees.items():  # numba compiles into a fresh worktree's cache once, not in a timing
            warm = run_child(tree, ",".join(families), ds, synth, data, args.timeout, rows=400)
            print(f"  warm-up {ds} {label}: {warm.get('error') or 'ok'}", flush=True)
        rows = []
        for fam in families:
            got = {}
            for label, tree in trees.items():
                start = time.perf_counter()
                got[label] = run_child(tree, fam, ds, synth, data, args.timeout)
                print(f"  ran {ds}/{synth} {fam:<10} {label}: "
                      + (got[label].get("error") or f"{got[label]['cpu']:.1f} s CPU, {got[label]['peak_mb']:.0f} MB")
                      + f"  ({time.perf_counter() - start:.0f} s wall)", flush=True)
            rows.append((ds, synth, fam, got.get("base", {"error": "not measured"}), got["new"]))
        grand += rows
        report(rows)  # each dataset as soon as it is done
    if len(datasets) > 1:
        print("\n== all datasets ==")
        report(grand)
    return 0


if __name__ == "__main__":
    sys.exit(main())
