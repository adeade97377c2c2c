"""The noise of Bale & Quick's tuning objective (holdbench.synthesizers.bale_quick) at a fixed point.

The tuning objective is -(1 - r)^2 with r the mean pMSE ratio (Bale & Quick's form, `ratio_bq`)
of k synthetic sets of |T| rows, each scored against T. This script fixes the parameters (K and
one b or C for every column: zero-width ranges, so `fit` makes one evaluation), draws `--sets`
synthetic sets of |T| rows from `sample` with seeds no tuning used, scores each against T, and
prints the mean and SD of one set's ratio, the SD of a k-set mean (SD / sqrt(k)) for each `--k`,
the empirical SD of disjoint k-set means where there are at least 3 of them, and the SD of the
objective implied at that mean (delta method: 2 |1 - r| SD_k, plus SD_k^2 at r = 1).

Tables: a paper T (`--dataset`), optionally reduced to `--columns` and to a seeded sample of
`--rows` rows. `--table sk-proxy` is the stand-in used while Bale & Quick's SK table is not in
this checkout: adult's paper T reduced to age, fnlwgt (numeric, the mixture's two columns like
SK's latitude and longitude) and sex, race, income (categorical), 5,000 seeded rows.

    OMP_NUM_THREADS=1 nice python scripts/reference/bq_objective_noise.py --table sk-proxy --K 20 --step 50
    OMP_NUM_THREADS=1 nice python scripts/reference/bq_objective_noise.py --dataset online-shoppers \
        --synth bq_cart --K 200 --step 50 --sets 20
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
PAPER = ROOT.parent / "shared" / "datasets" / "paper_study"

# the stand-in for Bale & Quick's SK table (module doc)
SK_PROXY = {"dataset": "adult", "columns": ["age", "fnlwgt", "sex", "race", "income"], "rows": 5000}


def load_table(dataset: str, columns: list[str] | None, rows: int | None, seed: int = 0):
    """(T, schema) for a paper T, reduced to `columns` (schema order kept) and a seeded sample of `rows`."""
    from holdbench.benchmark.data.tables import dataset_schema

    schema = dataset_schema(dataset)
    path = PAPER / f"{dataset}_trn.csv.gz"
    if not path.is_file():
        raise SystemExit(f"bq_objective_noise: {path} not found (set up ../shared/datasets/paper_study)")
    train = pd.read_csv(path)
    if columns:
        unknown = [c for c in columns if c not in schema.names]
        if unknown:
            raise SystemExit(f"bq_objective_noise: --columns {unknown} are not columns of {dataset}")
        keep = tuple(c for c in schema.columns if c.name in columns)
        roles = {"target": schema.target if schema.target in columns else None, "sensitive": None,
                 "quasi_identifiers": ()}
        schema = dataclasses.replace(schema, columns=keep, **roles)
        train = train[[c.name for c in keep]]
    train = schema.coerce(train, str(path))
    if rows is not None and rows < len(train):
        idx = np.sort(np.random.default_rng(seed).choice(len(train), rows, replace=False))
        train = train.iloc[idx].reset_index(drop=True)
    return train, schema


def fixed_point(synth: str, k: int, step: float, pmse_degree: int) -> dict:
    """Constructor overrides pinning K and every column's b (bq_cart) or C (bq_mnl) to one value."""
    box = {"bq_cart": "leaf_range", "bq_mnl": "c_range"}[synth]
    value = int(step) if synth == "bq_cart" else float(step)
    return {"k_range": [k, k], box: [value, value], "m": 1, "rescore_top": 0, "check_sets": 0,
            "pmse_degree": pmse_degree, **({"c_grid": None} if synth == "bq_mnl" else {})}


def set_ratios(synth, train, schema, n_sets: int, first_seed: int = 50_000) -> np.ndarray:
    """Bale & Quick-form pMSE ratios of n_sets synthetic |T|-row sets, each against T."""
    from holdbench.metrics.pmse import pmse_ratio

    return np.array([pmse_ratio(train, synth.sample(len(train), first_seed + i), schema.kinds,
                                degree=synth.pmse_degree, seed=i).ratio_bq for i in range(n_sets)])


def main(argv: list[str] | None = None) -> None:
    from holdbench.benchmark.config import build_synthesizer, synthesizer_config
    from holdbench.synthesizers.base import FitContext

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--table", choices=["sk-proxy"], help="a named stand-in table (module doc)")
    ap.add_argument("--dataset", default="adult")
    ap.add_argument("--columns", nargs="+")
    ap.add_argument("--rows", type=int)
    ap.add_argument("--synth", default="bq_cart", choices=["bq_cart", "bq_mnl"])
    ap.add_argument("--K", type=int, default=20, help="mixture components")
    ap.add_argument("--step", type=float, default=50, help="every column's b (bq_cart) or C (bq_mnl)")
    ap.add_argument("--sets", type=int, default=20)
    ap.add_argument("--k", type=int, nargs="+", default=[1, 3, 5, 10])
    ap.add_argument("--pmse-degree", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.table == "sk-proxy":
        args.dataset, args.columns, args.rows = SK_PROXY["dataset"], SK_PROXY["columns"], SK_PROXY["rows"]
    if args.sets < 2:
        raise SystemExit("bq_objective_noise: --sets must be >= 2 for an SD")

    train, schema = load_table(args.dataset, args.columns, args.rows, args.seed)
    overrides = fixed_point(args.synth, args.K, args.step, args.pmse_degree)
    synth = build_synthesizer(synthesizer_config(args.synth, overrides=[
        f"{k}={'null' if v is None else v}" for k, v in overrides.items()]))
    t0 = time.process_time()
    synth.fit(train, FitContext(schema, args.seed, args.dataset))
    fit_cpu = time.process_time() - t0
    t0 = time.process_time()
    ratios = set_ratios(synth, train, schema, args.sets)
    per_set = (time.process_time() - t0) / args.sets
    mean, sd = float(ratios.mean()), float(ratios.std(ddof=1))
    print(f"{args.synth} on {args.dataset} T {train.shape} (columns {list(train.columns)}), "
          f"K = {args.K}, {'b' if args.synth == 'bq_cart' else 'C'} = {args.step:g} everywhere; "
          f"fit (one evaluation of 1 set) {fit_cpu:.1f} s CPU, one more set {per_set:.1f} s CPU")
    print(f"one set's Bale & Quick-form pMSE ratio over {args.sets} sets: mean {mean:.3f}, SD {sd:.3f} "
          f"(min {ratios.min():.3f}, max {ratios.max():.3f})")
    for k in args.k:
        sd_k = sd / np.sqrt(k)
        groups = args.sets // k
        emp = (f", empirical SD of {groups} disjoint {k}-set means "
               f"{ratios[:groups * k].reshape(groups, k).mean(axis=1).std(ddof=1):.3f}") if groups >= 3 and k > 1 else ""
        obj_sd = 2 * abs(1 - mean) * sd_k + sd_k ** 2
        print(f"  mean of k = {k:>2} sets: SD {sd_k:.3f}{emp}; objective -(1 - r)^2 SD ~ {obj_sd:.4f}")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
