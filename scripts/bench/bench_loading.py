"""Benchmark of dataset loading: the four paper datasets from raw UCI files, then from cache.

Targets: under 10 s in total from raw files, under 1 s in total from the parquet cache.

    HOLDBENCH_DATA_DIR=../shared/datasets python scripts/bench/bench_loading.py
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

DATASETS = ("adult", "bank-marketing", "credit-default", "online-shoppers")


def main() -> int:
    os.environ.setdefault("HOLDBENCH_DATA_DIR", str(Path(__file__).resolve().parents[3] / "shared" / "datasets"))
    os.environ["HOLDBENCH_CACHE_DIR"] = tempfile.mkdtemp(prefix="holdbench_cache_")
    from holdbench.benchmark.data.tables import load_dataset

    print(f"raw files from {os.environ['HOLDBENCH_DATA_DIR']}, cache in {os.environ['HOLDBENCH_CACHE_DIR']}")
    totals = {}
    for label in ("raw files (parse, validate, write cache)", "from cache"):
        t_all = time.perf_counter()
        for name in DATASETS:
            t0 = time.perf_counter()
            df = load_dataset(name)
            print(f"  {label:<42} {name:<16} {df.shape[0]:>6,} x {df.shape[1]:<3} {time.perf_counter() - t0:6.2f} s")
        totals[label] = time.perf_counter() - t_all
        print(f"  {label:<42} {'total':<16} {'':>12} {totals[label]:6.2f} s")
    raw, cached = totals.values()
    print(f"raw {raw:.2f} s (target < 10 s), cache {cached:.2f} s (target < 1 s), raw/cache = {raw / cached:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
