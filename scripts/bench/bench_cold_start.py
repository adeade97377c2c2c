"""Cold start of one `holdbench evaluate` job against a pandas groupby baseline (issue 15, item 4).

What is timed, each run in the same loop so that machine load hits both alike:
  CLI       `python -m holdbench evaluate --metrics paper --skip privacy` on credit-default
            (T, H, the paper's synthpop S): a fresh process each time, so it pays every import,
            numba's cache load, CSV reading, the discretisation and F1-F3 of S and of H.
  baseline  in this process, tables already read: holdbench.metrics._discretise.Discretiser codes for
            each k, then `DataFrame.groupby(cols).size()` per 1-, 2- and 3-way combination for
            T, S and H, and the TVDs of S and of H against T. Asserted equal (<= 1e-12) to the
            TVDs the package computes, per combination, and to F1-F3 the CLI wrote.
Rounds are interleaved (CLI, baseline, [CLI of --compare tree], ...), the load average is
printed with every round, and the ratio reported is median(baseline) / median(CLI), wall and
CPU (user + sys of the child, process time of the baseline).

--compare DIR times a second checkout's CLI in the same rounds (e.g. a copy of the code before
a change: `cp -r benchmark conf contracts metrics synthesizers pyproject.toml DIR/`).
--imports runs one cold CLI under `python -X importtime` and prints where import time goes and
whether sklearn / scipy.stats were imported (a fidelity-only run should import neither).
--paths compares holdbench.metrics.fidelity's two exact ways of counting (numpy bincount, the numba kernel)
on the same codes, asserts identical TVDs, and measures numba's load in a fresh process.
A "floor" row times `python -c "import pandas"` in the same rounds: the ratio no CLI that reads
its tables with pandas can exceed on this machine at this load.

Usage: python scripts/bench/bench_cold_start.py [--shared DIR] [--repeats 5] [--compare DIR] [--imports] [--paths]
Not collected by pytest.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from holdbench.metrics._discretise import Discretiser
from holdbench.metrics.evaluate import kinds_from_dtypes
from holdbench.metrics.fidelity import BUCKET_CAPS, FidelityModel


def shared_dir(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    return Path(os.environ.get("HOLDBENCH_SHARED_DIR", ROOT.parent / "shared"))


def _load() -> str:
    return "load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONHASHSEED="0")
    env.pop("PYTHONPATH", None)
    return env


def cli_command(files: dict[str, Path], out: Path, extra: tuple[str, ...] = ()) -> list[str]:
    return [sys.executable, *extra, "-m", "holdbench", "evaluate", "--metrics", "paper", "--skip", "privacy",
            "--train", str(files["trn"]), "--holdout", str(files["val"]), "--synthetic", str(files["syn"]),
            "--out", str(out)]


def run_cli(tree: Path, files: dict[str, Path], out: Path | None) -> tuple[float, float, dict]:
    """(wall s, CPU s of the child, the JSON it wrote) of one cold CLI run from `tree`;
    out=None runs the floor instead: a process that only imports pandas (the CLI's least cost)."""
    cmd = [sys.executable, "-c", "import pandas"] if out is None else cli_command(files, out)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=tree, env=child_env(), capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"CLI in {tree} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, {} if out is None else json.loads(out.read_text())


def baseline_tvds(train: pd.DataFrame, holdout: pd.DataFrame, synthetic: pd.DataFrame,
                  kinds: dict[str, str]) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """{k: (TVDs of S, TVDs of H)} per k-combination, by groupby().size() on Discretiser codes."""
    out = {}
    p = train.shape[1]
    for k, cap in BUCKET_CAPS.items():
        disc = Discretiser(train, kinds, cap)
        t, s, h = (pd.DataFrame(disc.transform(x).T) for x in (train, synthetic, holdout))
        tvd_s, tvd_h = [], []
        for combo in itertools.combinations(range(p), k):
            cols = list(combo)
            ft = t.groupby(cols).size() / len(t)
            for frame, acc in ((s, tvd_s), (h, tvd_h)):
                fo = frame.groupby(cols).size() / len(frame)
                both = pd.concat([ft, fo], axis=1).fillna(0.0)
                acc.append(0.5 * float((both.iloc[:, 0] - both.iloc[:, 1]).abs().sum()))
        out[k] = (np.array(tvd_s), np.array(tvd_h))
    return out


def check_same(base: dict, train, holdout, synthetic, kinds, cli_json: dict) -> float:
    """Largest difference between the baseline's TVDs and the package's (per combination) and
    the CLI's F_k / F_k of H. Raises AssertionError above 1e-12."""
    marg = FidelityModel(train, holdout, kinds).score(synthetic).marginals
    worst = 0.0
    for k, (tvd_s, tvd_h) in base.items():
        rows = marg[marg["k"] == k]
        worst = max(worst, float(np.max(np.abs(rows["tvd_synthetic"].to_numpy() - tvd_s))),
                    float(np.max(np.abs(rows["tvd_holdout"].to_numpy() - tvd_h))),
                    abs(cli_json[f"F{k}"] - float(np.mean(tvd_s))),
                    abs(cli_json[f"F{k}_holdout"] - float(np.mean(tvd_h))))
    assert worst <= 1e-12, f"baseline TVDs differ from holdbench.metrics.fidelity / the CLI by {worst:g}"
    return worst


def import_report(tree: Path, files: dict[str, Path], out: Path) -> None:
    """One cold CLI under -X importtime: cumulative import seconds of the heaviest top-level packages."""
    proc = subprocess.run(cli_command(files, out, ("-X", "importtime")), cwd=tree, env=child_env(),
                          capture_output=True, text=True, check=True)
    own: dict[str, float] = {}
    names = set()
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line or "self [us]" in line:
            continue
        self_us, _, name = line.split(":", 1)[1].split("|")
        name = name.strip()
        names.add(name)
        top = name.split(".")[0]
        own[top] = own.get(top, 0.0) + int(self_us) / 1e6
    print(f"\n-- imports of one cold CLI ({tree}), self time summed per top-level package ({_load()}) --")
    for top, sec in sorted(own.items(), key=lambda kv: -kv[1])[:12]:
        print(f"  {top:<20} {sec:6.3f} s")
    print(f"  total {sum(own.values()):.3f} s over {len(names)} modules; imported: "
          + ", ".join(f"{m} {'YES' if any(n == m or n.startswith(m + '.') for n in names) else 'no'}"
                      for m in ("sklearn", "scipy.stats", "scipy", "numba", "hydra", "joblib")))


NUMBA_CHILD = """
import numpy as np, pandas
{load}
"""
NUMBA_LOAD = """from holdbench.metrics._kernels import marginal_tvds
c = np.zeros((2, 8), np.uint8)
marginal_tvds(c, c, np.array([8]), np.array([1, 1]), np.array([[0, 1]]))"""


def bench_paths(train, holdout, synthetic, kinds, repeats: int) -> None:
    """numpy's and numba's counting on the same codes (interleaved, CPU s), numba's load in a fresh
    process against the same process without it, and the break-even work of holdbench.metrics.fidelity."""
    from holdbench.metrics import fidelity
    from holdbench.metrics._kernels import marginal_tvds

    model = FidelityModel(train, holdout, kinds)
    s_codes = model._codes(synthetic)
    work = sum((model.n_train + model.n_holdout + len(synthetic)) * len(model.combos[k]) for k in model.caps)

    def numpy_path():
        return {k: fidelity._numpy_tvds(model.train_codes[k], [model.holdout_codes[k], s_codes[k]],
                                        model.discretisers[k].cardinalities, model.combos[k], None)[0]
                for k in model.caps}

    def numba_path():
        out = {}
        for k in model.caps:
            h, s = model.holdout_codes[k], s_codes[k]
            out[k] = marginal_tvds(model.train_codes[k], np.ascontiguousarray(np.concatenate([h, s], axis=1)),
                                   np.array([h.shape[1], s.shape[1]]), model.discretisers[k].cardinalities,
                                   model.combos[k])
        return out

    numba_path()  # compile / load
    cpu = {"numpy": [], "numba": []}
    for _ in range(repeats):
        for name, fn in (("numpy", numpy_path), ("numba", numba_path)):
            t = time.process_time()
            res = fn()
            cpu[name].append(time.process_time() - t)
            if name == "numpy":
                ref = res
            else:
                same = all(np.array_equal(ref[k], res[k]) for k in ref)
                assert same, "numpy and numba TVDs differ"
    env = child_env()
    load = {"without": [], "with": []}
    for _ in range(repeats):
        for name, code in (("without", ""), ("with", NUMBA_LOAD)):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run([sys.executable, "-c", NUMBA_CHILD.format(load=code)], cwd=ROOT, env=env, check=True)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            load[name].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    med = {k: statistics.median(v) for k, v in {**cpu, **load}.items()}
    extra = (med["numpy"] - med["numba"]) / work
    numba_load = med["with"] - med["without"]
    print(f"\n-- counting paths on the same codes: T, H and S, k = 1..3, {work / 1e6:.0f}M rows x combinations, "
          f"median of {repeats}, CPU s ({_load()}) --")
    print(f"  numpy bincount  {med['numpy']:6.3f} s  ({med['numpy'] / work * 1e9:.2f} ns per row x combination)")
    print(f"  numba kernel    {med['numba']:6.3f} s  ({med['numba'] / work * 1e9:.2f} ns), loaded and warm; "
          f"TVDs identical to the last bit: yes")
    print(f"  loading numba in a fresh process: {numba_load:.3f} s CPU (import + cache load: {med['with']:.3f} s "
          f"against {med['without']:.3f} s for the same process without it)")
    if extra > 0:
        print(f"  break-even: numpy is cheaper below {numba_load / extra / 1e6:,.0f}M rows x combinations per "
              f"process; holdbench.metrics.fidelity switches to numba above {fidelity._NUMPY_MAX_WORK / 1e6:,.0f}M per call")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", help="the shared dir (default ../shared or $HOLDBENCH_SHARED_DIR)")
    ap.add_argument("--dataset", default="credit-default")
    ap.add_argument("--synthesizer", default="synthpop", help="which published S (paper_study/<ds>_<synth>)")
    ap.add_argument("--repeats", type=int, default=5, help="interleaved rounds (default 5)")
    ap.add_argument("--compare", type=Path, help="also time the CLI of this checkout, in the same rounds")
    ap.add_argument("--imports", action="store_true", help="print an import-time report of one cold CLI")
    ap.add_argument("--paths", action="store_true", help="also compare fidelity's numpy and numba counting")
    args = ap.parse_args()
    data = shared_dir(args.shared) / "datasets" / "paper_study"
    files = {"trn": data / f"{args.dataset}_trn.csv.gz", "val": data / f"{args.dataset}_val.csv.gz",
             "syn": data / f"{args.dataset}_{args.synthesizer}.csv.gz"}
    trees = {"CLI": ROOT} | ({"CLI compare": args.compare.resolve()} if args.compare else {})
    train, holdout, synthetic = (pd.read_csv(files[r]) for r in ("trn", "val", "syn"))
    kinds = kinds_from_dtypes(train)
    n_comb = sum(len(list(itertools.combinations(range(train.shape[1]), k))) for k in BUCKET_CAPS)
    print(f"== cold `holdbench evaluate --metrics paper --skip privacy`: {args.dataset}, T {len(train):,}, "
          f"H {len(holdout):,}, S {len(synthetic):,} ({args.synthesizer}), {train.shape[1]} columns, "
          f"{n_comb:,} marginals ==")
    if args.paths:
        bench_paths(train, holdout, synthetic, kinds, args.repeats)
    with tempfile.TemporaryDirectory() as tmp:
        outs = {name: Path(tmp) / f"{i}.json" for i, name in enumerate(trees)}
        for name, tree in trees.items():  # warm-up: numba's on-disk cache, the page cache
            run_cli(tree, files, outs[name])
        if args.imports:
            for tree in trees.values():
                import_report(tree, files, Path(tmp) / "imports.json")
        names = [*trees, "floor", "baseline"]
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in names}
        base = None
        print(f"\n{'round':>5} {'what':<12} {'wall s':>8} {'CPU s':>8}   load average (1, 5, 15 min)")
        for r in range(args.repeats):
            for name in names if r % 2 == 0 else names[::-1]:
                if name == "baseline":
                    wall, cpu = time.perf_counter(), time.process_time()
                    base = baseline_tvds(train, holdout, synthetic, kinds)
                    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                elif name == "floor":
                    wall, cpu, _ = run_cli(ROOT, files, None)
                else:
                    wall, cpu, _ = run_cli(trees[name], files, outs[name])
                times[name].append((wall, cpu))
                print(f"{r + 1:>5} {name:<12} {wall:8.2f} {cpu:8.2f}   {_load()}", flush=True)
        for name in trees:
            worst = check_same(base, train, holdout, synthetic, kinds, json.loads(outs[name].read_text()))
            print(f"baseline TVDs equal to {name}'s (per marginal, S and H; and its F1-F3): "
                  f"max |diff| {worst:.1e}")
    med = {name: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for name, v in times.items()}
    print(f"\nmedians over {args.repeats} interleaved rounds ({_load()} at the end):")
    for name, (w, c) in med.items():
        print(f"  {name:<12} {w:8.2f} s wall {c:8.2f} s CPU")
    for name in [*trees, "floor"]:
        per_round = [b[0] / t[0] for b, t in zip(times["baseline"], times[name], strict=True)]
        print(f"ratio baseline / {name + ':':<13} {med['baseline'][0] / med[name][0]:5.1f}x wall "
              f"(per round {min(per_round):.1f}-{max(per_round):.1f}), "
              f"{med['baseline'][1] / med[name][1]:5.1f}x CPU"
              + ("  (target >= 30x)" if name != "floor" else "  (the most any CLI that imports pandas can reach)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
