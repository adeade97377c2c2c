"""Time, peak memory and values of the legal (Bale & Quick) and disclosure families on adult.

T = adult_trn, H = adult_val, S = the paper's published synthpop, flip10, flip90 files and the
holdout row (S = H); kinds as the paper read them (object -> categorical, else numeric). One
core. Peak memory is tracemalloc's peak of Python/numpy allocations during `compute`. Scaling:
the synthpop file cut to three sizes of S. Not collected by pytest.

Usage: python tests/perf/bench_legal_disclosure.py [--shared DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import pandas as pd
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from metrics.disclosure import AttributeDisclosure
from metrics.legal import LegalCriteria
from metrics.registry import EvalData, scalars

SENSITIVE = "income"
QIS = ("age", "sex", "race", "marital-status", "relationship", "education", "native-country")
SYNTHS = ("holdout", "synthpop", "flip10", "flip90")
SIZES = (12_500, 25_000, 50_000)


def measure(family, data: EvalData):
    """(result, wall seconds, CPU seconds, peak MiB)."""
    tracemalloc.start()
    wall, cpu = time.perf_counter(), time.process_time()
    out = family.compute(data)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return out, wall, cpu, peak


def show(values: dict) -> str:
    return ", ".join(f"{k}={v:.4f}" if isinstance(v, float) else f"{k}={v}" for k, v in values.items()
                     if not k.endswith("_reason"))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", default=os.environ.get("HOLDBENCH_SHARED_DIR", str(ROOT.parent / "shared")))
    args = parser.parse_args()
    paper = Path(args.shared) / "datasets" / "paper_study"
    train = pd.read_csv(paper / "adult_trn.csv.gz")
    holdout = pd.read_csv(paper / "adult_val.csv.gz")[train.columns]
    kinds = {c: "categorical" if train[c].dtype == object else "numeric" for c in train.columns}
    families = (LegalCriteria(), AttributeDisclosure())

    def cell(synthetic: pd.DataFrame, holdout_row: bool = False) -> EvalData:
        return EvalData(train, holdout, synthetic, kinds, holdout_row=holdout_row, sensitive=SENSITIVE,
                        quasi_identifiers=QIS, seed=0, n_jobs=1)

    with threadpool_limits(limits=1):
        print(f"adult: |T|={len(train)}, |H|={len(holdout)}, one core; sensitive {SENSITIVE}, QIs {QIS}")
        for synth in SYNTHS:
            is_h = synth == "holdout"
            synthetic = holdout if is_h else pd.read_csv(paper / f"adult_{synth}.csv.gz")[train.columns]
            for fam in families:
                out, wall, cpu, peak = measure(fam, cell(synthetic, is_h))
                print(f"\n[{synth}] {fam.name}: |S|={len(synthetic)} wall {wall:.2f} s, CPU {cpu:.2f} s, "
                      f"peak {peak:.0f} MiB")
                print("  " + show(scalars(out)))
                if fam.name == "disclosure":
                    print(out.disclosure_curve.to_string(index=False, float_format="%.4f"))
        synthpop = pd.read_csv(paper / "adult_synthpop.csv.gz")[train.columns]
        print("\nscaling with |S| (synthpop, first n rows): CPU seconds")
        for n in SIZES:
            times = []
            for fam in families:
                _, wall, cpu, peak = measure(fam, cell(synthpop.iloc[:n].reset_index(drop=True)))
                times.append(f"{fam.name} {cpu:.2f} s (wall {wall:.2f}, peak {peak:.0f} MiB)")
            print(f"  |S|={n:>6}: " + "; ".join(times))


if __name__ == "__main__":
    main()
