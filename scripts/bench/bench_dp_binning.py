"""MST's F3 ratio by numeric binning: equal-width vs quantile bins of the DP domain step
(synthesizers/plugins/dp/domain.py), on the datasets' 50/50 random split (seed 0) as the studies use.
`--generator domain` fits no generator: T itself is coded into the domain and decoded back (the
loss the binning alone causes, at the domain step's noise), which costs seconds instead of minutes.

    python scripts/bench/bench_dp_binning.py [--datasets adult online-shoppers] [--eps 1 10]
        [--shares 0.3] [--variants uniform:10 quantile:16 quantile:32 quantile:64] [--n 10000] [--seed 0]
        [--generator mst|aim|privbayes|domain] [--rows N] [--out CSV]

Each row: one fit (seed --seed) at ε with the binning, sampled --n rows, F1-F3 ratios against the
holdout (holdbench.metrics.fidelity, the paper's definition), fit seconds. Needs the `dp` plug-in venv.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

import numpy as np
from holdbench.benchmark.data.split import random_split
from holdbench.benchmark.data.tables import dataset_schema, load_dataset
from holdbench.metrics.fidelity import FidelityModel, scores
from holdbench.synthesizers.base import FitContext
from holdbench.synthesizers.plugins.dp import AIM, MST, PrivBayes
from holdbench.synthesizers.plugins.dp.domain import estimate

GENERATORS = {"mst": MST, "aim": AIM, "privbayes": PrivBayes}
COLUMNS = ["dataset", "rows", "generator", "epsilon", "domain_share", "binning", "bins", "seed", "F1_ratio", "F2_ratio", "F3_ratio",
           "numeric_bins_mean", "fit_s", "sample_s", "error"]


def run(dataset: str, generator: str, eps: float, share: float, binning: str, bins: int, n: int, seed: int,
        extra: dict, rows: int | None = None) -> dict:
    schema = dataset_schema(dataset)
    train, holdout = random_split(load_dataset(dataset), 0)
    if rows is not None and rows < len(train):  # a seeded subset of T (the fit's size); H stays whole
        train = train.sample(rows, random_state=seed).reset_index(drop=True)
    model = FidelityModel(train, holdout, schema.kinds, seed=0)
    t0 = time.perf_counter()
    if generator == "domain":  # the domain step alone, with MST's defaults for its share of epsilon
        ref = MST(epsilon=eps, domain_share=share, binning=binning, bins=bins)
        coded = schema.coerce(train, "T")
        d = estimate(coded, schema, epsilon=eps * ref.domain_share, delta=ref.delta / 2, binning=binning,
                     bins=bins, rng=np.random.default_rng([seed, 7_004_001]))
        synthetic = d.decode(d.encode(coded), np.random.default_rng([seed, 7_004_002]))
        for c in schema.columns:
            if c.dtype in ("int", "bool") and synthetic[c.name].dtype.kind == "f":
                synthetic[c.name] = np.rint(synthetic[c.name])
        synthetic = schema.coerce(synthetic, "domain step")
        t1 = t2 = time.perf_counter()
        dom = d.summary()
    else:
        synth = GENERATORS[generator](epsilon=eps, domain_share=share, binning=binning, bins=bins, **extra)
        synth.fit(train, FitContext(schema=schema, seed=seed, dataset=dataset))
        t1 = time.perf_counter()
        synthetic = synth.sample(n, seed=seed)
        t2 = time.perf_counter()
        dom = synth.info()["domain"]
    s = scores(list(train.columns), model.combos, model.tvds(synthetic), model.sampled)
    nb = [d["bins"] for d in dom.values() if "bins" in d]
    return {"dataset": dataset, "rows": len(train), "generator": generator, "epsilon": eps, "domain_share": share, "binning": binning, "bins": bins,
            "seed": seed, "F1_ratio": round(s.ratio(1), 3), "F2_ratio": round(s.ratio(2), 3),
            "F3_ratio": round(s.ratio(3), 3), "numeric_bins_mean": round(sum(nb) / len(nb), 1) if nb else "",
            "fit_s": round(t1 - t0, 1), "sample_s": round(t2 - t1, 1)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", nargs="+", default=["adult", "online-shoppers"])
    ap.add_argument("--generator", default="mst", choices=sorted(GENERATORS) + ["domain"])
    ap.add_argument("--eps", nargs="+", type=float, default=[1.0, 10.0])
    ap.add_argument("--shares", nargs="+", type=float, default=[0.3], help="domain_share values")
    ap.add_argument("--variants", nargs="+", default=["uniform:10", "quantile:16", "quantile:32", "quantile:64"])
    ap.add_argument("--n", type=int, default=10000, help="rows sampled")
    ap.add_argument("--rows", type=int, default=None, help="fit on a seeded subset of T of this many rows")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=None, help="AIM's rounds")
    ap.add_argument("--out", type=Path, default=None, help="append rows to this CSV")
    a = ap.parse_args(argv)
    extra = {"rounds": a.rounds} if a.generator == "aim" and a.rounds else {}
    writer = csv.DictWriter(sys.stdout, COLUMNS)
    writer.writeheader()
    for dataset in a.datasets:
        for eps in a.eps:
            for share, v in ((sh, v) for sh in a.shares for v in a.variants):
                binning, bins = v.split(":")
                try:
                    row = run(dataset, a.generator, eps, share, binning, int(bins), a.n, a.seed, extra, a.rows)
                except ValueError as exc:  # the domain step refused (no level passed): a row saying why
                    row = {"dataset": dataset, "generator": a.generator, "epsilon": eps, "domain_share": share,
                           "binning": binning, "bins": bins, "seed": a.seed, "error": str(exc).split(":")[0]}
                writer.writerow(row)
                sys.stdout.flush()
                if a.out:
                    new = not a.out.exists()
                    with a.out.open("a", newline="") as fh:
                        w = csv.DictWriter(fh, COLUMNS)
                        if new:
                            w.writeheader()
                        w.writerow(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
