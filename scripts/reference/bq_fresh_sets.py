"""Fresh-set pMSE ratios of tuned Bale & Quick synthesizers and synthpop's CART beside them.

For each `--datasets` paper T (or `--table sk-proxy`, see bq_objective_noise.py) and each
`--synths` config (bq_cart, bq_mnl at their config's defaults unless `--overrides`; synthpop,
R's synthpop CART at its defaults), the synthesizer is fitted on T (seed `--seed`), then
`--fresh` synthetic sets of |T| rows are drawn by `sample` with seeds no tuning set used and each
is scored against T in Bale & Quick's pMSE form (degree 3): the mean with a 95% t-interval over the
sets, the SD of one set's ratio, the share of sets in [0.9, 1.15]. For bq_* also the kept
parameters, the fit's own check sets (`info()`: scored after the choice, on seeds of their own)
and where K sits in `k_range`, for bq_mnl the number of points of its C grid and its feature map; fit CPU and wall
seconds. One CSV row per fit is appended to `--out` (header written when the file is new; a file of
other columns is refused), so one fit at a time can be run and collected.

    OMP_NUM_THREADS=1 nice -n 10 python scripts/reference/bq_fresh_sets.py --datasets online-shoppers \
        --synths bq_cart --out results/published/bale_quick/fresh_sets.csv
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "reference"))

from bq_objective_noise import SK_PROXY, load_table

FIELDS = ["table", "synthesizer", "fit seed", "rows", "fresh sets", "fresh ratio, mean", "fresh ratio, 95% CI low",
          "fresh ratio, 95% CI high", "fresh ratio, set SD", "sets in [0.9, 1.15]", "check sets, mean",
          "check sets, 95% CI", "m", "K", "k_range", "C grid", "MNL features", "kept parameters", "evaluations", "fit CPU s", "fit wall s"]


FIRST_SEED = 90_000  # the first fresh set's sample seed; set i draws with FIRST_SEED + i


def fresh_ratios(synth, train, schema, n_sets: int, first_seed: int = FIRST_SEED,
                 save_first: Path | None = None) -> np.ndarray:
    """The B&Q-form pMSE ratio of n_sets fresh sets; save_first: write the first set there (CSV) as it is drawn."""
    from holdbench.metrics.pmse import pmse_ratio

    ratios = []
    for i in range(n_sets):
        synthetic = synth.sample(len(train), first_seed + i)
        if i == 0 and save_first is not None:
            save_first.parent.mkdir(parents=True, exist_ok=True)
            synthetic.to_csv(save_first, index=False)
        ratios.append(pmse_ratio(train, synthetic, schema.kinds, degree=3, seed=i).ratio_bq)
    return np.array(ratios)


def check_out(out: Path | None) -> None:
    """Refuse, before any fit, an --out file whose header is not this script's columns (rows would not line up)."""
    if out is None or not out.exists():
        return
    with out.open(newline="") as fh:
        header = next(csv.reader(fh), [])
    if header != FIELDS:
        raise SystemExit(f"bq_fresh_sets: {out} has columns {header}, this script writes {FIELDS}; "
                         "write to a new file")


def main(argv: list[str] | None = None) -> None:
    from scipy import stats

    from holdbench.benchmark.config import build_synthesizer, synthesizer_config
    from holdbench.synthesizers.base import FitContext

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=[])
    ap.add_argument("--table", choices=["sk-proxy"])
    ap.add_argument("--synths", nargs="+", default=["bq_cart", "bq_mnl", "synthpop"])
    ap.add_argument("--overrides", nargs="*", default=[], help="for the bq_* configs, e.g. k_range=[10,200]")
    ap.add_argument("--fresh", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--save-set", type=Path, metavar="DIR",
                    help="also write each fit's first fresh set to DIR/<table>_<synth>_K<low>-<high>.csv.gz "
                         "(for `holdbench evaluate` or `holdbench report` against the table's holdout)")
    args = ap.parse_args(argv)
    tables = [("sk-proxy", SK_PROXY["dataset"], SK_PROXY["columns"], SK_PROXY["rows"])] if args.table else []
    tables += [(d, d, None, None) for d in args.datasets]
    if not tables:
        raise SystemExit("bq_fresh_sets: name --datasets or --table")
    check_out(args.out)
    for label, dataset, columns, rows in tables:
        train, schema = load_table(dataset, columns, rows)  # the table's sample is seed 0's; --seed is the fit's
        for name in args.synths:
            bq = name.startswith("bq_")
            cfg = synthesizer_config(name, overrides=args.overrides if bq else [])
            synth = build_synthesizer(cfg)
            wall, cpu = time.perf_counter(), time.process_time()
            synth.fit(train, FitContext(schema, args.seed, dataset))
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            tag = f"_K{synth.k_range[0]}-{synth.k_range[1]}" if bq else ""
            save = None if args.save_set is None else args.save_set / f"{label}_{name}{tag}.csv.gz"
            r = fresh_ratios(synth, train, schema, args.fresh, save_first=save)
            sd = float(r.std(ddof=1))
            half = float(stats.t.ppf(0.975, len(r) - 1) * sd / np.sqrt(len(r)))
            row = dict.fromkeys(FIELDS, "")
            row.update({"table": label, "synthesizer": name, "fit seed": args.seed, "rows": len(train), "fresh sets": len(r),
                        "fresh ratio, mean": round(float(r.mean()), 3),
                        "fresh ratio, 95% CI low": round(float(r.mean()) - half, 3),
                        "fresh ratio, 95% CI high": round(float(r.mean()) + half, 3),
                        "fresh ratio, set SD": round(sd, 3),
                        "sets in [0.9, 1.15]": f"{int(np.sum((r >= 0.9) & (r <= 1.15)))}/{len(r)}",
                        "fit CPU s": round(cpu), "fit wall s": round(wall)})
            if bq:
                info = synth.info()
                params = info["best_params"]
                row.update({"m": synth.m, "K": params.get("K", ""), "k_range": f"[{synth.k_range[0]}, {synth.k_range[1]}]",
                            "C grid": getattr(synth, "c_grid", None) or "",
                            "MNL features": getattr(synth, "features", ""),
                            "kept parameters": json.dumps({k: (round(v, 4) if isinstance(v, float) else v)
                                                           for k, v in params.items() if k != "K"}),
                            "evaluations": info["n_distinct_evaluations"]})
                if info["check_sets"]:
                    lo, hi = info["check_ci95"]
                    row.update({"check sets, mean": round(info["check_mean_pmse_ratio"], 3),
                                "check sets, 95% CI": f"[{lo:.3f}, {hi:.3f}]"})
            print(json.dumps(row), flush=True)
            if args.out is not None:
                new = not args.out.exists()
                with args.out.open("a", newline="") as fh:
                    writer = csv.DictWriter(fh, fieldnames=FIELDS)
                    if new:
                        writer.writeheader()
                    writer.writerow(row)


if __name__ == "__main__":
    main()
