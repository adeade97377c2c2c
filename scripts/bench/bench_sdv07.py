"""Why the SDV rows differ from the paper, measured (issue 14 item 2).

For each dataset and SDV synthesizer, three synthetic tables on the paper's split
(T = <ds>_trn.csv.gz, H = <ds>_val.csv.gz, n = 50,000, fit and sample seed 0):

- ``default``: SDV 2.x with its defaults (the synthesizer config as it is);
- ``sdv07``: the config's ``sdv07`` preset (SDV 0.7's behaviour where 2.x changed defaults);
- ``published``: the paper's own SDV 0.7 file <ds>_<synth>.csv.gz (read as the harness reads
  files made elsewhere, values="pandas").

Each is scored with the paper's measures (``holdbench.metrics.evaluate`` with ``paper_families()``,
kinds from the dataset schema): F1-F3 ratios and dcr_share, plus the share of values outside
T's [min, max] in each zero-inflated numeric column (at least ZERO_SHARE of T's values are 0)
and the share of True in each boolean column.
One JSON line per result is appended to --out as soon as it exists (a rerun skips the rows
already there), with fit/sample/evaluate seconds; the epoch progress of the neural ones
goes to the log (stderr) every 10 epochs.

    HOLDBENCH_DATA_DIR=../shared/datasets OMP_NUM_THREADS=1 \\
        python scripts/bench/bench_sdv07.py --datasets online-shoppers --out /tmp/sdv07_os.jsonl
    python scripts/bench/bench_sdv07.py --table /tmp/sdv07_os.jsonl /tmp/sdv07_adult.jsonl
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import sys
import time
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("HOLDBENCH_SHARED_DIR", REPO.parent / "shared")).resolve()
PAPER = SHARED / "datasets" / "paper_study"
sys.path.insert(0, str(REPO))

from holdbench.benchmark.cell.checks import check_output
from holdbench.benchmark.config import build_synthesizer, synthesizer_config
from holdbench.benchmark.data.tables import dataset_schema
from holdbench.benchmark.data.split import provided_split
from holdbench.metrics import evaluate, paper_families
from holdbench.synthesizers.base import FitContext

SYNTHS = ("gaussian_copula", "tvae", "ctgan", "copulagan")
VARIANTS = ("published", "default", "sdv07")
#: a numeric column is zero-inflated when at least this share of T's values are 0
ZERO_SHARE = 0.3
SCORES = ("F1_ratio", "F2_ratio", "F3_ratio", "dcr_share")
LOG = logging.getLogger("bench_sdv07")


def zero_inflated(train: pd.DataFrame, schema) -> list[str]:
    return [c.name for c in schema.columns if c.kind == "numeric" and c.dtype != "bool"
            and float((train[c.name] == 0).mean()) >= ZERO_SHARE]


def out_of_range(train: pd.DataFrame, synthetic: pd.DataFrame, columns: list[str]) -> dict[str, float]:
    """Share of S's rows whose value lies outside T's [min, max] (missing values count as inside)."""
    out = {}
    for col in columns:
        s = pd.to_numeric(synthetic[col], errors="coerce").astype(float)
        out[col] = float(((s < train[col].min()) | (s > train[col].max())).mean())
    return out


def true_shares(table: pd.DataFrame, schema) -> dict[str, float]:
    """Share of True in each boolean column (0.7 read any non-zero rounded number as True)."""
    return {c.name: float(pd.to_numeric(table[c.name], errors="coerce").astype(float).mean())
            for c in schema.columns if c.dtype == "bool"}


def synthetic_table(dataset: str, synth: str, variant: str, train: pd.DataFrame, schema, n: int,
                    seed: int) -> tuple[pd.DataFrame, dict]:
    """(S, timings) for one variant."""
    if variant == "published":
        raw = pd.read_csv(PAPER / f"{dataset}_{synth}.csv.gz")
        return check_output(raw, schema, len(raw), f"published_{synth}", values="pandas"), {}
    cfg = synthesizer_config(synth, preset=None if variant == "default" else variant)
    model = build_synthesizer(cfg)
    wall, cpu = time.monotonic(), time.process_time()
    model.fit(train, FitContext(schema=schema, seed=seed, dataset=dataset))
    fit_s, fit_cpu_s = time.monotonic() - wall, time.process_time() - cpu
    wall = time.monotonic()
    out = check_output(model.sample(n, seed=seed), schema, n, synth)
    return out, {"fit_s": round(fit_s, 1), "fit_cpu_s": round(fit_cpu_s, 1),
                 "sample_s": round(time.monotonic() - wall, 1), "epochs": cfg.get("epochs")}


def run(args) -> None:
    out_path = Path(args.out)
    done = set()
    if out_path.exists():
        done = {(r["dataset"], r["synthesizer"], r["variant"]) for r in map(json.loads, out_path.read_text().splitlines())}
    for dataset in args.datasets:
        schema = dataset_schema(dataset)
        train, holdout = provided_split(schema, PAPER / f"{dataset}_trn.csv.gz", PAPER / f"{dataset}_val.csv.gz")
        kinds = {c.name: c.kind for c in schema.columns}
        zeros = zero_inflated(train, schema)
        for synth in args.synths:
            for variant in args.variants:
                if (dataset, synth, variant) in done:
                    continue
                LOG.info("%s / %s / %s: start", dataset, synth, variant)
                synthetic, timing = synthetic_table(dataset, synth, variant, train, schema, args.n, args.seed)
                wall = time.monotonic()
                res = evaluate(train, holdout, synthetic, kinds, families=paper_families(), seed=args.seed).to_dict()
                oor = out_of_range(train, synthetic, zeros)
                row = {"dataset": dataset, "synthesizer": synth, "variant": variant, "n": len(synthetic),
                       **{k: res[k] for k in SCORES}, "oor_mean": sum(oor.values()) / len(oor) if oor else None,
                       "oor": oor, "true_share": true_shares(synthetic, schema), **timing, "eval_s": round(time.monotonic() - wall, 1),
                       "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}
                with out_path.open("a") as fh:
                    fh.write(json.dumps(row) + "\n")
                LOG.info("%s", json.dumps(row))


def table(paths: list[str]) -> str:
    """Markdown tables (one per dataset) from the JSON lines."""
    rows = [json.loads(line) for p in paths for line in Path(p).read_text().splitlines()]
    lines = []
    for dataset in dict.fromkeys(r["dataset"] for r in rows):
        sub = [r for r in rows if r["dataset"] == dataset]
        cols = list(sub[0]["oor"])
        lines += [f"**{dataset}** (out of T's range: share of S's values per zero-inflated column)", "",
                  "| synthesizer | variant | F1 ratio | F2 ratio | F3 ratio | dcr_share | " + " | ".join(cols)
                  + " | fit s (cpu s) |",
                  "|---|---|" + "---:|" * (5 + len(cols))]
        for synth in SYNTHS:
            for variant in VARIANTS:
                r = next((r for r in sub if r["synthesizer"] == synth and r["variant"] == variant), None)
                if r is None:
                    continue
                fit = f"{r['fit_s']:.0f} ({r['fit_cpu_s']:.0f})" if "fit_s" in r else "–"
                lines.append(f"| {synth} | {variant} | " + " | ".join(f"{r[k]:.3f}" for k in SCORES) + " | "
                             + " | ".join(f"{100 * r['oor'][c]:.0f}%" for c in cols) + f" | {fit} |")
        lines.append("")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=["online-shoppers", "adult"])
    ap.add_argument("--synths", nargs="+", default=list(SYNTHS), choices=SYNTHS)
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    ap.add_argument("--n", type=int, default=50_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="sdv07.jsonl", help="JSON lines, appended to as results come")
    ap.add_argument("--table", nargs="+", metavar="JSONL", help="only print the tables of these files")
    args = ap.parse_args()
    if args.table:
        print(table(args.table))
        return 0
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", stream=sys.stderr)
    run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
