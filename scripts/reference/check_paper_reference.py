"""Check every published adult number (fidelity and privacy) and print a pass/fail table.

Usage: python scripts/reference/check_paper_reference.py [--shared DIR] [--n-jobs N]
Exit status 0 when all 17 rows match: F1-F3 and ratios to 1e-9 (relative), dcr_share at the
published precision (10 significant digits), dcr means to 1e-6, n_synthetic exactly.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from holdbench.metrics import evaluate, kinds_from_dtypes

FIDELITY = ["F1", "F2", "F3", "F1_ratio", "F2_ratio", "F3_ratio"]
MEANS = ["dcr_train_mean", "dcr_holdout_mean"]


def shared_dir(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    env = os.environ.get("HOLDBENCH_SHARED_DIR")
    return Path(env) if env else Path(__file__).resolve().parents[2].parent / "shared"


def same_published(value: float, published: float) -> bool:
    """Equal at the 10 significant digits the CSV was written with."""
    return f"{value:.10g}" == f"{published:.10g}" or math.isclose(value, published, rel_tol=1e-12)


def check_row(row: pd.Series, res: dict) -> list[str]:
    """Names of the mismatching fields of one published row."""
    bad = [c for c in FIDELITY if not math.isclose(res[c], row[c], rel_tol=1e-9, abs_tol=1e-12)]
    if not same_published(res["dcr_share"], row["dcr_share"]):
        bad.append("dcr_share")
    bad += [c for c in MEANS if abs(res[c] - row[c]) > 1e-6]
    if res["n_synthetic"] != row["n_synthetic"]:
        bad.append("n_synthetic")
    return bad


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", help="the shared dir (default ../shared or $HOLDBENCH_SHARED_DIR)")
    ap.add_argument("--n-jobs", type=int, default=1)
    args = ap.parse_args()
    shared = shared_dir(args.shared)
    data = shared / "datasets" / "paper_study"
    expected = pd.read_csv(shared / "reference" / "paper_adult_expected.csv")
    train = pd.read_csv(data / "adult_trn.csv.gz")
    holdout = pd.read_csv(data / "adult_val.csv.gz")
    kinds = kinds_from_dtypes(train)

    print(f"{'synthesizer':<16}{'F1':>14}{'F3_ratio':>14}{'dcr_share':>14}{'dcr_train_mean':>16}"
          f"{'seconds':>9}  result")
    failures = 0
    for _, row in expected.iterrows():
        name = row["synthesizer"]
        start = time.perf_counter()
        if name == "holdout":
            res = evaluate(train, holdout, None, kinds, holdout_row=True, extended=False, n_jobs=args.n_jobs)
        else:
            synthetic = pd.read_csv(data / f"adult_{name}.csv.gz")
            res = evaluate(train, holdout, synthetic, kinds, extended=False, n_jobs=args.n_jobs)
        got = res.to_dict()
        bad = check_row(row, got)
        failures += bool(bad)
        verdict = "PASS" if not bad else "FAIL " + ", ".join(
            f"{c}: got {got[c]!r} want {row[c]!r}" for c in bad)
        print(f"{name:<16}{got['F1']:>14.10g}{got['F3_ratio']:>14.10g}{got['dcr_share']:>14.10g}"
              f"{got['dcr_train_mean']:>16.10g}{time.perf_counter() - start:>9.2f}  {verdict}")
    print(f"\n{len(expected) - failures}/{len(expected)} rows match the published adult numbers")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
