"""Cost and values of the anonymeter family on adult paper_study (issue #11). Not collected by pytest.

T = adult_trn, H = adult_val, S = the published synthpop file (50,000 rows); kinds: object ->
categorical, anything else -> numeric (docs/definitions/paper.md §1). Runs the family through the real bridge on one
core (n_jobs = 1: the worker gets OMP/NUMBA/POLARS threads = 1) at anonymeter's default setting
(500 attacks, 10,000,000 multivariate query attempts, 1 linkability neighbour) and at holdbench's study setting (the
`Anonymeter()` defaults), and prints per evaluator: risk, 95% interval, attack/baseline/control
rates, whether anonymeter judged the attack meaningful, and the worker's CPU seconds (CPU, not
wall, because the machine is shared; on an idle core they are the same).

  --repeat          run the study setting twice and check the two results are identical
  --singling-out    the univariate singling-out puzzle (README): T = adult_trn as `ori`, H as
                    control, S = (a) each column of T permuted independently, (b) T resampled
                    with replacement (|T| rows), (c) H itself; prints the bridge's risks and, from
                    anonymeter's own query builder in the venv, where the queries come from
  --neighbours      linkability and inference (study setting) through the worker with its head sort
                    (head_neighbours.py, the default) and with anonymeter's own full sort (`head_sort: false`), in
                    one run: each one's CPU per evaluator, the ratio, and whether the results are identical
  --install-time    time `python3 -m venv` + `pip install -r metrics/plugins/anonymeter/requirements.txt`
                    into a temporary directory (downloads ~200 MB) and report its size

Usage: python scripts/bench/bench_anonymeter.py [--shared DIR] [--synth synthpop] [--only study|default]
       [--repeat] [--singling-out] [--neighbours] [--install-time]
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

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from holdbench.metrics.anonymeter_bridge import (
    ENV,
    EVALUATORS,
    Anonymeter,
    _checked_kinds,
    anonymeter_python,
    install_command,
    run_worker,
    write_inputs,
)
from holdbench.metrics.registry import EvalData, scalars

SETTINGS = {
    # anonymeter's own defaults
    "default": {"n_attacks": 500, "n_attacks_multi": 500, "max_attempts": 10_000_000, "n_neighbors": 1},
    "study": {},  # holdbench's documented defaults (the Anonymeter() defaults)
}


def shared_dir(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    return Path(os.environ.get("HOLDBENCH_SHARED_DIR", ROOT.parent / "shared"))


def load(shared: Path, synth: str) -> EvalData:
    paper = shared / "datasets" / "paper_study"
    t = pd.read_csv(paper / "adult_trn.csv.gz")
    h = pd.read_csv(paper / "adult_val.csv.gz")[t.columns]
    s = pd.read_csv(paper / f"adult_{synth}.csv.gz")[t.columns]
    kinds = {c: "categorical" if t[c].dtype == object else "numeric" for c in t.columns}
    return EvalData(train=t, holdout=h, synthetic=s, kinds=kinds, target="income", seed=0, n_jobs=1)


def show(label: str, res, wall: float) -> None:
    print(f"\n[{label}] n_attacks={res.anonymeter_n_attacks} (multivariate {res.anonymeter_n_attacks_multi})  "
          f"worker wall {wall:.1f} s, worker CPU {res.seconds_anonymeter_cpu:.1f} s "
          f"(anonymeter {res.anonymeter_version}); reason: {res.anonymeter_reason}")
    print(f"{'evaluator':15s} {'risk':>7s} {'ci':>17s} {'attack':>7s} {'base':>7s} {'control':>7s} "
          f"{'ok':>5s} {'cpu s':>7s}")
    total = 0.0
    for e in EVALUATORS:
        def g(k: str, e: str = e):
            return getattr(res, f"anonymeter_{e}_{k}")
        cpu = getattr(res, f"seconds_anonymeter_{e}_cpu")
        total += 0.0 if math.isnan(cpu) else cpu
        print(f"{e:15s} {g('risk'):7.4f} [{g('ci_low'):6.4f}, {g('ci_high'):6.4f}] {g('attack_rate'):7.4f} "
              f"{g('baseline_rate'):7.4f} {g('control_rate'):7.4f} {g('meaningful')!s:>5s} "
              f"{cpu:7.1f}")
        if g("warning"):
            print(f"{'':15s} warning: {g('warning')[:160]}")
    print(f"{'sum of evaluators':>60s} {total:7.1f} cpu s")


BREAKDOWN = """
import collections, sys
import numpy as np, pandas as pd, polars as pl
import anonymeter.evaluators.singling_out_evaluator as so
group_by = pl.DataFrame.group_by  # first-appearance order, as the bridge's worker runs anonymeter
pl.DataFrame.group_by = lambda self, *by, **kw: group_by(self, *by, maintain_order=True, **kw)
d = sys.argv[1]
prep = lambda df: pl.DataFrame(so._safe_column_names(df)).unique(maintain_order=True)
t, h, s = (pd.read_parquet(f"{d}/{k}.parquet", pre_buffer=False) for k in ("t", "h", "s"))
T, H, S = prep(t), prep(h), prep(s)
queries = so.univariate_singling_out_queries(df=S, n_queries=10**9, rng=np.random.default_rng(0))
in_t = np.array(so._evaluate_queries(T, queries))
in_h = np.array(so._evaluate_queries(H, queries))
hist = collections.Counter(np.minimum(in_t, 5).tolist())
print(f"  S: {len(s)} rows, {len(S)} distinct; one-column queries isolating one S record: {len(queries)}; "
      f"of those isolating one T record {np.mean(in_t == 1):.3f}, one H record {np.mean(in_h == 1):.3f}")
print("  T records each query matches: " + ", ".join(f"{'5+' if k == 5 else k}: {hist[k]}" for k in sorted(hist)))
cells = []
for c in t.columns:
    vt, vs = t[c].value_counts(), s[c].value_counts()
    ut, us = set(vt.index[vt == 1]), set(vs.index[vs == 1])
    if ut or us:
        cells.append(f"{c} {len(ut)}/{len(us)}/{len(ut & us)}")
print("  values unique in T / unique in S / both, per column: " + "; ".join(cells))
"""


def singling_out(data: EvalData, python: Path) -> None:
    """Column-shuffled copy, bootstrap copy and H as S: the bridge's risks and the query breakdown."""
    t = data.train
    rng = np.random.default_rng(0)
    copies = {
        "S = each column of T permuted": pd.DataFrame({c: t[c].to_numpy()[rng.permutation(len(t))] for c in t.columns}),
        "S = T resampled with replacement": t.iloc[np.random.default_rng(1).integers(0, len(t), len(t))]
                                             .reset_index(drop=True),
        "S = H (control)": data.holdout.sample(frac=1.0, random_state=2).reset_index(drop=True)}
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(OMP_NUM_THREADS="1", POLARS_MAX_THREADS="1", NUMBA_NUM_THREADS="1")
    for label, s in copies.items():
        res = Anonymeter().compute(EvalData(train=t, holdout=data.holdout, synthetic=s, kinds=data.kinds,
                                            target=data.target, seed=0, n_jobs=1))
        print(f"\n{label}: univariate singling-out risk {res.anonymeter_singling_uni_risk:.3f} "
              f"[{res.anonymeter_singling_uni_ci_low:.3f}, {res.anonymeter_singling_uni_ci_high:.3f}], "
              f"attack rate {res.anonymeter_singling_uni_attack_rate:.3f}, control rate "
              f"{res.anonymeter_singling_uni_control_rate:.3f}; multivariate {res.anonymeter_singling_multi_risk:.3f}, "
              f"linkability {res.anonymeter_linkability_risk:.3f}, inference {res.anonymeter_inference_risk:.3f}")
        with tempfile.TemporaryDirectory(prefix="singling-out-") as tmp:
            for key, frame in (("t", t), ("h", data.holdout), ("s", s)):
                frame.to_parquet(Path(tmp) / f"{key}.parquet", index=False)
            out = subprocess.run([str(python), "-I", "-c", BREAKDOWN, tmp], check=True, capture_output=True,
                                 text=True, env=env)
            print(out.stdout.rstrip())


def neighbours(data: EvalData, python: Path) -> None:
    """Linkability and inference with the worker's head sort and with anonymeter's full sort, same files."""
    columns = list(data.train.columns)
    family = Anonymeter()
    config, _, _ = family._config(data, columns, _checked_kinds(data, columns))
    config["evaluators"] = ["linkability", "inference"]
    keys = ("risk", "ci_low", "ci_high", "attack_rate", "baseline_rate", "control_rate", "n_success", "warnings")
    results = {}
    frames = {"train": data.train, "control": data.holdout, "synthetic": data.synthetic}
    with tempfile.TemporaryDirectory(prefix="anonymeter-neighbours-") as tmp:
        for head in (True, True, False):  # the first run fills numba's cache for the head sort; not reported
            write_inputs(Path(tmp), frames, columns, data.kinds, {**config, "head_sort": head})
            payload, _, _ = run_worker(python, Path(tmp), 1800, 1)
            results[head] = payload["results"]
    print(f"\n{'evaluator':12s} {'head sort cpu s':>16s} {'full sort cpu s':>16s} {'ratio':>7s} identical")
    for e in config["evaluators"]:
        head, full = results[True][e], results[False][e]
        same = {k: head[k] for k in keys} == {k: full[k] for k in keys}
        print(f"{e:12s} {head['cpu_seconds']:16.2f} {full['cpu_seconds']:16.2f} "
              f"{full['cpu_seconds'] / head['cpu_seconds']:6.2f}x {same}")
        if not same:
            sys.exit(f"{e}: the head sort and anonymeter's full sort give different results")


def install_time() -> None:
    with tempfile.TemporaryDirectory(prefix="anonymeter-venv-") as tmp:
        venv = Path(tmp) / "venv"
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "-r", str(ENV.requirements_path)],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        seconds = time.perf_counter() - start
        size = subprocess.run(["du", "-sm", str(venv)], check=True, capture_output=True, text=True).stdout.split()[0]
        print(f"clean venv install: {seconds:.0f} s wall, {size} MB")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared")
    ap.add_argument("--synth", default="synthpop")
    ap.add_argument("--only", choices=sorted(SETTINGS))
    ap.add_argument("--repeat", action="store_true")
    ap.add_argument("--install-time", action="store_true")
    ap.add_argument("--singling-out", action="store_true")
    ap.add_argument("--neighbours", action="store_true")
    args = ap.parse_args()
    if args.install_time:
        install_time()
    python = anonymeter_python()
    if not python.exists():
        sys.exit(f"anonymeter not installed: {install_command()}")
    du = subprocess.run(["du", "-sm", str(python.parents[1])], check=True, capture_output=True, text=True)
    print(f"interpreter {python}; venv size {du.stdout.split()[0]} MB")
    data = load(shared_dir(args.shared), args.synth)
    if args.singling_out:
        singling_out(data, python)
        return
    if args.neighbours:
        neighbours(data, python)
        return
    print(f"adult: |T| = {len(data.train)}, |H| = {len(data.holdout)}, |S| = {len(data.synthetic)} ({args.synth})")
    for label, opts in SETTINGS.items():
        if args.only and label != args.only:
            continue
        start = time.perf_counter()
        res = Anonymeter(**opts).compute(data)
        show(label, res, time.perf_counter() - start)
        if args.repeat and label == "study":
            again = Anonymeter(**opts).compute(data)
            timing = {f"seconds_anonymeter_{e}_cpu" for e in EVALUATORS} | {"seconds_anonymeter",
                                                                             "seconds_anonymeter_cpu"}
            a, b = ({k: v for k, v in scalars(r).items() if k not in timing} for r in (res, again))
            same = json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
            print(f"repeat run identical: {same}")
            if not same:
                sys.exit("anonymeter results differ between two runs with the same seed")


if __name__ == "__main__":
    main()
