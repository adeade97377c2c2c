"""Fit + sample seconds of each generator on the audit's domain (reference-set rows x kept columns of
conf/metrics/audit.yaml): what one shadow fit of the audit (holdbench.metrics.audit) costs.

    python scripts/bench/audit_fit_times.py [--dataset adult] [--rows 1000] [--repeats 3] [SYNTH ...]

Prints one line per generator: median and max seconds of fit + sample over the repeats (each repeat a
fresh generator on a fresh seeded sample of the dataset's rows).
"""

from __future__ import annotations

import argparse
import statistics
import time

from holdbench.benchmark.config import build_synthesizer, group_config, synthesizer_config
from holdbench.benchmark.data.tables import dataset_schema, load_dataset
from holdbench.benchmark.workflow.audit import audit_schema
from holdbench.synthesizers.base import FitContext

DEFAULT = ["cart", "gaussian_copula", "flip10", "holdout", "synthpop", "mst_eps1", "privbayes_eps1"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("synths", nargs="*", default=DEFAULT)
    ap.add_argument("--dataset", default="adult")
    ap.add_argument("--rows", type=int, default=None, help="default: the audit config's reference_rows")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    settings = group_config("metrics", "audit")["families"]["audit"]
    rows = a.rows or settings["reference_rows"]
    schema = audit_schema(dataset_schema(a.dataset), settings["columns"][a.dataset])
    table = load_dataset(a.dataset)[schema.names]
    for name in a.synths:
        times = []
        for r in range(a.repeats):
            data = table.sample(rows, random_state=r).reset_index(drop=True)
            other = table.drop(data.index).sample(rows, random_state=100 + r).reset_index(drop=True)
            synth = build_synthesizer(synthesizer_config(name, None))
            t0 = time.perf_counter()
            synth.fit(data, FitContext(schema=schema, seed=r, dataset=a.dataset,
                                       holdout=other if synth.needs_holdout else None))
            synth.sample(rows, seed=r)
            times.append(time.perf_counter() - t0)
        print(f"{a.dataset} {name:18s} rows {rows} cols {len(schema.names)}: fit+sample median "
              f"{statistics.median(times):.2f} s, max {max(times):.2f} s over {a.repeats}", flush=True)


if __name__ == "__main__":
    main()
