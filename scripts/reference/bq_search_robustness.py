"""Which tuning of Bale & Quick's synthesizer survives its own noise: fresh-set ratios of the kept point.

For each search variant (constructor overrides of bq_cart / bq_mnl, every one at the default
budget unless `--budget` overrides it) the synthesizer is fitted `--fits` times (fit seeds 0, 1,
...) on one table; the parameter set each fit keeps is scored on `--fresh` synthetic sets of |T|
rows drawn by `sample` (seeds no tuning set used, so no selection ever saw them), each against T,
in Bale & Quick's pMSE form. Printed per variant: the mean over fits of the kept point's fresh-set
ratio with a 95% t-interval over the fits, the share of fits inside [0.9, 1.15] (the target), the
search's own (selected) mean ratio beside it (the winner's curse is the gap), the mean fresh |1 - r|,
and CPU seconds per fit. The table is as in bq_objective_noise.py (`--table sk-proxy` or a paper T).

    OMP_NUM_THREADS=1 nice python scripts/reference/bq_search_robustness.py --table sk-proxy --fits 5
    OMP_NUM_THREADS=1 nice python scripts/reference/bq_search_robustness.py --table sk-proxy --synth bq_mnl \
        --variants old new --fits 5
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "reference"))

from bq_objective_noise import SK_PROXY, load_table, set_ratios

# name: overrides of the synthesizer's config (its YAML and class defaults; `new` is those defaults)
OLD = ["m=3", "fresh_seeds=false", "gp_noise=null", "rescore_top=3", "rescore_sets=5"]
VARIANTS = {
    "old": OLD,  # the search before this comparison: 3 common-random-number sets, 3 finalists x 5 sets
    "crn_m10": [*OLD, "m=10"],
    "fresh_m10": [*OLD, "m=10", "fresh_seeds=true"],  # Bale & Quick: 10 fresh sets per evaluation
    "fresh_m5_white": [*OLD, "m=5", "fresh_seeds=true", "gp_noise=white"],
    "crn_m3_rescore10x10": [*OLD, "rescore_top=10", "rescore_sets=10"],
    "new": [],
    # bq_mnl's grid of C before the default became 17 points (the same c_range), alone and re-scored on 20 sets
    "mnl_grid9": ["c_grid=9"],
    "mnl_grid9_rescore20": ["c_grid=9", "rescore_sets=20"],
}


def main(argv: list[str] | None = None) -> None:
    from scipy import stats

    from holdbench.benchmark.config import build_synthesizer, synthesizer_config
    from holdbench.synthesizers.base import FitContext

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--table", choices=["sk-proxy"])
    ap.add_argument("--dataset", default="adult")
    ap.add_argument("--columns", nargs="+")
    ap.add_argument("--rows", type=int)
    ap.add_argument("--synth", default="bq_cart", choices=["bq_cart", "bq_mnl"])
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    ap.add_argument("--fits", type=int, default=5)
    ap.add_argument("--fresh", type=int, default=20)
    ap.add_argument("--budget", nargs="*", default=[], help="extra overrides for every variant, e.g. n_iter=10")
    ap.add_argument("--out", type=Path, help="also write one CSV row per variant here")
    args = ap.parse_args(argv)
    if args.table == "sk-proxy":
        args.dataset, args.columns, args.rows = SK_PROXY["dataset"], SK_PROXY["columns"], SK_PROXY["rows"]
    train, schema = load_table(args.dataset, args.columns, args.rows)
    print(f"{args.synth} on {args.dataset} T {train.shape}; {args.fits} fits per variant, kept point scored on "
          f"{args.fresh} fresh |T|-row sets (Bale & Quick's form); budget overrides {args.budget or 'none'}")
    print(f"{'variant':>28} | fresh ratio, mean over fits [95% CI] | in [0.9, 1.15] | search's mean | "
          f"fresh |1-r| | CPU s/fit | kept K per fit")
    rows = []
    for name in args.variants:
        fresh, searched, cpu, ks, checks = [], [], [], [], []
        for fit_seed in range(args.fits):
            synth = build_synthesizer(synthesizer_config(args.synth, overrides=[*VARIANTS[name], *args.budget]))
            t0 = time.process_time()
            synth.fit(train, FitContext(schema, fit_seed, args.dataset))
            cpu.append(time.process_time() - t0)
            info = synth.info()
            searched.append(info["best_mean_pmse_ratio"])
            ks.append(info["best_params"].get("K"))
            checks.append(info["check_mean_pmse_ratio"])
            fresh.append(float(set_ratios(synth, train, schema, args.fresh).mean()))
        fresh = np.array(fresh)
        half = stats.t.ppf(0.975, len(fresh) - 1) * fresh.std(ddof=1) / np.sqrt(len(fresh)) if len(fresh) > 1 else np.nan
        inside = np.mean((fresh >= 0.9) & (fresh <= 1.15))
        print(f"{name:>28} | {fresh.mean():.3f} [{fresh.mean() - half:.3f}, {fresh.mean() + half:.3f}] "
              f"(per fit {np.round(fresh, 3).tolist()}) | {inside:.0%} | {np.mean(searched):.3f} | "
              f"{np.mean(np.abs(1 - fresh)):.3f} | {np.mean(cpu):.0f} | {ks}"
              + ("" if checks[0] is None else f" | fit's own check sets {np.round(checks, 3).tolist()}"), flush=True)
        rows.append({"variant": name, "overrides": " ".join(VARIANTS[name]) or "(the defaults)",
                     "fits": len(fresh), "fresh ratio, mean": round(float(fresh.mean()), 3),
                     "95% CI low": round(float(fresh.mean() - half), 3),
                     "95% CI high": round(float(fresh.mean() + half), 3),
                     "fresh ratio per fit": " ".join(f"{v:.3f}" for v in fresh),
                     "fits in [0.9, 1.15]": f"{round(inside * len(fresh))}/{len(fresh)}",
                     "search's mean ratio": round(float(np.mean(searched)), 3),
                     "kept K per fit": " ".join(str(k) for k in ks), "CPU s per fit": round(float(np.mean(cpu)))})
    if args.out is not None:
        import pandas as pd

        pd.DataFrame(rows).to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
