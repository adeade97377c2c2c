"""Time the cart synthesizer on a paper split and score it with the harness metrics.

Fits on the paper's T (`paper_study/<ds>_trn.csv.gz`), samples n rows (the study's
50,000 by default) and prints fit/sample seconds with F1/F2/F3 ratios and dcr_share
against the paper's H. `--reference` also scores the paper's own synthpop output, so
the two rows come from the same metric code. Run from the repo root:

    python scripts/bench/bench_cart.py [--dataset adult] [--n 50000] [--seed 0] [--reference]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from holdbench.benchmark.config import build_synthesizer, synthesizer_config
from holdbench.benchmark.data.tables import dataset_schema
from holdbench.synthesizers.base import FitContext

PAPER = ROOT.parent / "shared" / "datasets" / "paper_study"
KEYS = ("F1_ratio", "F2_ratio", "F3_ratio", "dcr_share")


def score(train: pd.DataFrame, holdout: pd.DataFrame, synthetic: pd.DataFrame) -> dict:
    """The docs/definitions/paper.md §3-4 figures from holdbench.metrics.evaluate, kinds from T's read_csv dtypes."""
    from holdbench.metrics import evaluate, kinds_from_dtypes

    result = evaluate(train, holdout, synthetic, kinds_from_dtypes(train), holdout_row=False, n_jobs=1)
    return {k: result.to_dict()[k] for k in KEYS}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="adult")
    ap.add_argument("--n", type=int, default=50_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--reference", action="store_true", help="also score the paper's synthpop output")
    args = ap.parse_args(argv)

    train = pd.read_csv(PAPER / f"{args.dataset}_trn.csv.gz")
    holdout = pd.read_csv(PAPER / f"{args.dataset}_val.csv.gz")
    schema = dataset_schema(args.dataset)
    synth = build_synthesizer(synthesizer_config("cart"))

    start = time.perf_counter()
    synth.fit(schema.coerce(train, "T"), FitContext(schema, args.seed, args.dataset))
    fitted = time.perf_counter()
    synthetic = synth.sample(args.n, args.seed + 1)
    sampled = time.perf_counter()
    print(f"{args.dataset}: T {train.shape}, fit {fitted - start:.2f} s, "
          f"sample {args.n} rows {sampled - fitted:.2f} s")

    rows = {"cart": score(train, holdout, synthetic)}
    if args.reference:
        rows["paper synthpop"] = score(train, holdout, pd.read_csv(PAPER / f"{args.dataset}_synthpop.csv.gz"))
    for name, figures in rows.items():
        print(f"{name:>15}: " + "  ".join(f"{k} {v:.4f}" for k, v in figures.items()))


if __name__ == "__main__":
    main()
