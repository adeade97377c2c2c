"""Fit + sample seconds of each generator on the audit's domain (reference-set rows x kept columns of
conf/metrics/audit.yaml): what one shadow fit of the audit (holdbench.metrics.audit) costs.

    python scripts/bench/audit_fit_times.py [--dataset adult] [--rows 1000] [--repeats 3] [SYNTH ...]

Prints one line per generator: median and max seconds of fit + sample over the repeats (each repeat a
fresh generator on a fresh seeded sample of the dataset's rows; scripts/bench/audit_tables.py --fit-times
parses these lines), then a `#` line with the CPU seconds of the generator's worker processes (plug-in
generators: process start, imports, the library). A generator that refuses the reference set (a DP
generator whose domain step finds no level above its threshold in 1,000 rows) prints a `#` line naming
the reason instead. The schema is the dataset config's, with the public levels it declares.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time

from holdbench.benchmark.config import build_synthesizer, group_config, synthesizer_config
from holdbench.benchmark.data.tables import dataset_schema, load_dataset
from holdbench.benchmark.workflow.audit import audit_schema, family
from holdbench.synthesizers.base import FitContext

DEFAULT = ["cart", "gaussian_copula", "flip10", "holdout", "synthpop", "mst_eps1", "privbayes_eps1"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("synths", nargs="*", default=DEFAULT)
    ap.add_argument("--dataset", default="adult")
    ap.add_argument("--rows", type=int, default=None, help="default: the audit config's reference_rows")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    settings = family(group_config("metrics", "audit")["families"]["audit"]).settings  # the family's defaults filled
    rows = a.rows or settings["reference_rows"]
    schema = audit_schema(dataset_schema(a.dataset), settings["columns"][a.dataset])
    table = load_dataset(a.dataset)[schema.names]
    for name in a.synths:
        times, cpu = [], []
        for r in range(a.repeats):
            data = table.sample(rows, random_state=r).reset_index(drop=True)
            other = table.drop(data.index).sample(rows, random_state=100 + r).reset_index(drop=True)
            synth = build_synthesizer(synthesizer_config(name, None))
            c0, t0 = _child_cpu(), time.perf_counter()
            try:
                synth.fit(data, FitContext(schema=schema, seed=r, dataset=a.dataset,
                                           holdout=other if synth.needs_holdout else None))
            except ValueError as exc:  # the generator refuses this reference set: no time to report
                print(f"# {a.dataset} {name}: fit refused on repeat {r}: {exc}", flush=True)
                break
            synth.sample(rows, seed=r)
            times.append(time.perf_counter() - t0)
            cpu.append(_child_cpu() - c0)
        if len(times) < a.repeats:
            continue
        print(f"{a.dataset} {name:18s} rows {rows} cols {len(schema.names)}: fit+sample median "
              f"{statistics.median(times):.2f} s, max {max(times):.2f} s over {a.repeats}", flush=True)
        if any(cpu):  # a plug-in generator: its workers' CPU (under load a fairer figure than the wall clock)
            print(f"# {a.dataset} {name}: worker processes' CPU median {statistics.median(cpu):.2f} s, max "
                  f"{max(cpu):.2f} s", flush=True)


def _child_cpu() -> float:
    """CPU seconds (user + system) of the finished child processes so far (a plug-in generator's workers)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


if __name__ == "__main__":
    main()
