"""Scale of one exact paper evaluation, 50k to 1M rows (issue 15, item 3).

For each size n: the demo table `make_demo(n, seed)`, the harness's seeded 50/50 split (T and H
of n/2 rows), S of |T| rows from `flip50` and `cart` (built with holdbench.benchmark.config, fitted with
FitContext, checked with holdbench.benchmark.cell.checks.check_output as a cell's generate stage does), then
the exact paper evaluation (`holdbench.metrics.evaluate`, families=paper_families(), n_jobs=2: F1-F3 over
every 1-, 2- and 3-way marginal, the DCR share over all of S) in a fresh subprocess: its wall
and CPU seconds and its peak RSS: getrusage(RUSAGE_CHILDREN) in a lean process that starts only
that evaluation (a child of this large process would inherit its peak RSS through fork/exec),
cross-checked with the child's own VmHWM.

The machine may be shared, so each evaluation at size n is interleaved with the evaluation of
the same synthesizer's cell at the smallest size (the baseline: base, n, base, n, ..., base)
and reported as a ratio to it, with the load average. CPU seconds are the least load-sensitive
figure: on 2 dedicated cores an evaluation's wall time lies between CPU/2 (both threads busy)
and CPU.

--shards N (N > 1) also evaluates each cell sharded as the workflow's evaluate_shard jobs do:
N fresh processes each computing one shard's partials (holdbench.metrics.evaluate.evaluate_shard, saved as
.npz), then one merging them (holdbench.metrics.registry.MergedFamily); reported: the shards' summed CPU,
the slowest shard's wall and the merge's (a cluster running the shards side by side waits for
slowest shard + merge), the largest peak RSS of any of those processes, and whether the merged
metrics (every field but timings, as JSON) are byte-identical to the unsharded evaluation's.

Tables are generated once into --work (parquet, one folder per size and seed) and reused.

Usage: nice python scripts/bench/bench_scale.py [--sizes 50000 250000 1000000] [--synthesizers flip50 cart]
       [--repeats 1] [--work DIR] [--seed 0] [--n-jobs 2] [--shards N]
Not collected by pytest.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from holdbench.contracts.io import read_parquet

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

#: what the evaluation subprocess runs: argv[1] = the cell's folder, argv[2] = n_jobs
CHILD = """
import hashlib, json, sys, time
import pandas as pd
sys.path.insert(0, {root!r})
from holdbench.contracts.io import read_parquet
from holdbench.metrics import evaluate, paper_families
cell, n_jobs = sys.argv[1], int(sys.argv[2])
kinds = json.load(open(cell + "/../kinds.json"))
t, h = read_parquet(cell + "/../train.parquet"), read_parquet(cell + "/../holdout.parquet")
s = read_parquet(cell + "/synthetic.parquet")
start = time.perf_counter()
shard, of = int(sys.argv[3]), int(sys.argv[4])
if shard < 0:  # merge the shards' partials (shard -1), or evaluate unsharded (of 1)
    families = paper_families()
    if of > 1:
        import numpy as np
        from holdbench.metrics.registry import MergedFamily
        npz = [np.load(f"{{cell}}/shards/{{i}}-of-{{of}}.npz") for i in range(of)]
        families = [MergedFamily(f, [{{k.split(".", 1)[1]: z[k] for k in z.files if k.startswith(f.name + ".")}}
                                     for z in npz]) for f in families]
    r = evaluate(t, h, s, kinds, families=families, n_jobs=n_jobs).to_dict()
    r["digest"] = hashlib.sha256(json.dumps({{k: v for k, v in r.items() if not k.startswith("seconds_")}},
                                            sort_keys=True).encode()).hexdigest()[:16]
else:
    import numpy as np
    from holdbench.metrics.evaluate import evaluate_shard
    parts = evaluate_shard(t, h, s, kinds, families=paper_families(), shard=shard, of=of, n_jobs=n_jobs)
    import os
    os.makedirs(cell + "/shards", exist_ok=True)
    np.savez(f"{{cell}}/shards/{{shard}}-of-{{of}}.npz", **{{f"{{f}}.{{k}}": v for f, a in parts.items() for k, v in a.items()}})
    r = dict.fromkeys(("seconds_fidelity", "seconds_privacy", "F1_ratio", "F2_ratio", "F3_ratio", "dcr_share",
                       "digest"), 0.0) | {{"n_train": len(t), "n_synthetic": len(s)}}
r["seconds_evaluate"] = time.perf_counter() - start
out = {{k: r[k] for k in ("seconds_evaluate", "seconds_fidelity", "seconds_privacy", "F1_ratio", "F2_ratio",
                         "F3_ratio", "dcr_share", "n_train", "n_synthetic", "digest")}}
out["vmhwm_mib"] = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM")) / 1024
print(json.dumps(out))
"""
#: a lean process that starts the evaluation and reports getrusage(RUSAGE_CHILDREN) for it: a
#: child started straight from this (large) process would inherit its peak RSS through fork/exec
SPAWN = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
code = subprocess.run(sys.argv[1:]).returncode
wall = time.perf_counter() - start
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall": wall, "cpu": u.ru_utime + u.ru_stime, "rss_mib": u.ru_maxrss / 1024}))
sys.exit(code)
"""


def _load() -> str:
    return "{:.1f} {:.1f} {:.1f}".format(*os.getloadavg())


def prepare(work: Path, n: int, seed: int, synthesizers: list[str]) -> Path:
    """Write T, H, kinds and each synthesizer's S for size n (skipped when already there)."""
    from holdbench.benchmark.cell.checks import check_output
    from holdbench.benchmark.config import build_synthesizer, synthesizer_config
    from holdbench.benchmark.data.tables import dataset_schema
    from holdbench.benchmark.data.demo import make_demo
    from holdbench.benchmark.data.split import random_split
    from holdbench.synthesizers.base import FitContext

    folder = work / f"demo_n{n}_seed{seed}"
    folder.mkdir(parents=True, exist_ok=True)
    schema = dataset_schema("demo")
    if not (folder / "holdout.parquet").exists():
        start = time.perf_counter()
        train, holdout = random_split(make_demo(n, seed), seed)
        train, holdout = schema.coerce(train, "T"), schema.coerce(holdout, "H")
        train.to_parquet(folder / "train.parquet")
        holdout.to_parquet(folder / "holdout.parquet")
        (folder / "kinds.json").write_text(json.dumps(dict(schema.kinds)))
        print(f"  n={n:,}: demo table and split in {time.perf_counter() - start:.1f} s (load {_load()})", flush=True)
    train = read_parquet(folder / "train.parquet")
    for name in synthesizers:
        out = folder / name / "synthetic.parquet"
        if out.exists():
            continue
        out.parent.mkdir(exist_ok=True)
        synth = build_synthesizer(synthesizer_config(name))
        start = time.perf_counter()
        synth.fit(train, FitContext(schema=schema, seed=seed, dataset="demo"))
        fitted = time.perf_counter()
        values = getattr(synth, "output_values", "lenient" if getattr(synth, "lenient_output", False) else "strict")
        s = check_output(synth.sample(len(train), seed=seed), schema, len(train), name, values=values)
        s.to_parquet(out)
        print(f"  n={n:,} {name}: fit {fitted - start:.1f} s, sample {time.perf_counter() - fitted:.1f} s "
              f"(load {_load()})", flush=True)
    return folder


def evaluate_child(cell: Path, n_jobs: int, shard: int = -1, of: int = 1) -> dict:
    """One evaluation in a fresh process: its JSON line plus wall s, CPU s and peak RSS (MiB) from
    getrusage(RUSAGE_CHILDREN) in the lean process that started it (and its own VmHWM).
    shard >= 0: only that shard's partials of `of`; shard -1 with of > 1: the merge of them."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    cmd = [sys.executable, "-c", SPAWN, sys.executable, "-c", CHILD.format(root=str(ROOT)), str(cell), str(n_jobs),
           str(shard), str(of)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"evaluation of {cell} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    lines = proc.stdout.strip().splitlines()
    res = json.loads(lines[-2])
    res.update(json.loads(lines[-1]), load=_load())
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[50_000, 250_000, 1_000_000],
                    help="rows of the demo table before the 50/50 split (the smallest is the baseline)")
    ap.add_argument("--synthesizers", nargs="+", default=["flip50", "cart"])
    ap.add_argument("--repeats", type=int, default=1, help="evaluations per size (each between two baselines)")
    ap.add_argument("--work", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "holdbench_scale")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--shards", type=int, default=1, help="also evaluate each cell in this many shards (> 1)")
    args = ap.parse_args()
    sizes = sorted(set(args.sizes))
    print(f"== exact paper evaluation (F1-F3, DCR share), demo table, unsharded, n_jobs={args.n_jobs}; "
          f"{os.cpu_count()} cores, load {_load()} ==", flush=True)
    print("preparing tables (once; reused from --work):", flush=True)
    folders = {n: prepare(args.work, n, args.seed, args.synthesizers) for n in sizes}
    rows = []
    print(f"\n{'rows':>9} {'|T|=|S|':>9} {'synth':>7} {'role':>5} {'wall s':>8} {'CPU s':>8} {'RSS MiB':>8} "
          f"{'VmHWM':>6} {'fid s':>7} {'priv s':>8}  load 1/5/15", flush=True)
    for name in args.synthesizers:
        base_cell = folders[sizes[0]] / name
        for n in sizes:
            base, big = [], []
            seq = ["base"] + ["n", "base"] * args.repeats if n != sizes[0] else ["base"] * (args.repeats + 1)
            for role in seq:
                r = evaluate_child(folders[n] / name if role == "n" else base_cell, args.n_jobs)
                (big if role == "n" else base).append(r)
                print(f"{(n if role == 'n' else sizes[0]):>9,} {r['n_train']:>9,} {name:>7} {role:>5} "
                      f"{r['wall']:8.1f} {r['cpu']:8.1f} {r['rss_mib']:8.0f} {r['vmhwm_mib']:6.0f} "
                      f"{r['seconds_fidelity']:7.1f} "
                      f"{r['seconds_privacy']:8.1f}  {r['load']}", flush=True)
            big = big or base
            rows.append((n, name, big, base))
    print(f"\ngrowth (medians; ratio = this size / the {sizes[0]:,}-row cell of the same synthesizer, "
          f"measured interleaved):")
    print(f"{'rows':>9} {'synth':>7} {'wall s':>8} {'CPU s':>8} {'peak RSS':>9} {'wall x':>7} {'CPU x':>7} "
          f"{'RSS x':>6}  {'F3 ratio':>8} {'dcr_share':>9}")
    for n, name, big, base in rows:
        med = {k: statistics.median(r[k] for r in big) for k in ("wall", "cpu", "rss_mib")}
        ref = {k: statistics.median(r[k] for r in base) for k in ("wall", "cpu", "rss_mib")}
        print(f"{n:>9,} {name:>7} {med['wall']:8.1f} {med['cpu']:8.1f} {med['rss_mib']:7.0f}MB "
              f"{med['wall'] / ref['wall']:7.1f} {med['cpu'] / ref['cpu']:7.1f} {med['rss_mib'] / ref['rss_mib']:6.1f}"
              f"  {big[0]['F3_ratio']:8.3f} {big[0]['dcr_share']:9.3f}")
    top = [(n, name, big) for n, name, big, _ in rows if n == sizes[-1]]
    print(f"\ntarget at {sizes[-1]:,} rows: exact evaluation <= 15 min on 2 cores with <= 8 GB")
    for n, name, big in top:
        cpu = statistics.median(r["cpu"] for r in big)
        rss = max(r["rss_mib"] for r in big)
        print(f"  {name}: CPU {cpu / 60:.1f} min -> wall on 2 dedicated cores between {cpu / 120:.1f} and "
              f"{cpu / 60:.1f} min; peak RSS {rss / 1024:.2f} GiB: "
              f"{'holds' if cpu / 120 <= 15 and rss <= 8192 else 'does NOT hold'}"
              f"{'' if cpu / 60 <= 15 else ' (only if both threads stay busy)' if cpu / 120 <= 15 else ''}")
    if args.shards > 1:
        sharded_report(rows, folders, args)
    print(f"(load {_load()} at the end)")
    return 0


def sharded_report(rows: list, folders: dict, args: argparse.Namespace) -> None:
    """Each cell in args.shards shard processes plus a merge, against its unsharded evaluation."""
    of = args.shards
    print(f"\nsharded: {of} shard processes (run one after another here) + 1 merge, n_jobs={args.n_jobs} each")
    print(f"{'rows':>9} {'synth':>7} {'shards CPU':>10} {'max shard wall':>14} {'merge wall':>10} "
          f"{'merge CPU':>9} {'peak RSS':>9} {'unsharded wall':>14} {'identical':>9}  load 1/5/15")
    for n, name, big, _ in rows:
        cell = folders[n] / name
        shards = [evaluate_child(cell, args.n_jobs, i, of) for i in range(of)]
        merged = evaluate_child(cell, args.n_jobs, -1, of)
        rss = max(r["rss_mib"] for r in [*shards, merged])
        same = merged["digest"] == big[0]["digest"]
        print(f"{n:>9,} {name:>7} {sum(r['cpu'] for r in shards):10.1f} {max(r['wall'] for r in shards):14.1f} "
              f"{merged['wall']:10.1f} {merged['cpu']:9.1f} {rss:7.0f}MB {statistics.median(r['wall'] for r in big):14.1f} "
              f"{'yes' if same else 'NO':>9}  {merged['load']}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
