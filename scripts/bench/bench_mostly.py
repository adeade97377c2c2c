"""The MOSTLY AI row: the open-source engine under several configs vs the paper's published row.

Usage (in the venv that has mostlyai-engine, see README):
    OMP_NUM_THREADS=1 .venv-mostly/bin/python scripts/bench/bench_mostly.py \
        --datasets online-shoppers credit-default --variants default digit digit_novp \
        --out /tmp/bench_mostly.jsonl
    .venv-mostly/bin/python scripts/bench/bench_mostly.py --table /tmp/bench_mostly.jsonl

On the paper's split (T = <ds>_trn, H = <ds>_val in ../shared/datasets/paper_study), fits
the engine on T with each variant (the conf/synthesizer/mostly_ai.yaml defaults plus the
variant's overrides; `paper` is the YAML's `paper` preset), samples --n records, checks
them against the dataset's schema like a cell does, and scores F1-F3 ratios and the DCR
share with holdbench's metrics (the paper's families). The published MOSTLY AI file is
scored the same way. One JSON line per (dataset, variant) is appended to --out, with fit
and sample seconds, epochs trained and the encoding the engine used for every column.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from holdbench.contracts.io import read_parquet
from holdbench.benchmark.cell.checks import check_output
from holdbench.benchmark.config import synthesizer_config
from holdbench.benchmark.data.tables import dataset_schema
from holdbench.metrics import evaluate
from holdbench.synthesizers.base import FitContext
from holdbench.synthesizers.mostly import MostlyAI

DATASETS = ("adult", "bank-marketing", "credit-default", "online-shoppers")
DIGIT = {"numeric_encoding": "TABULAR_NUMERIC_DIGIT"}
#: overrides of the YAML defaults; "paper" is the YAML's preset
VARIANTS: dict[str, dict] = {
    "smoke": {"max_epochs": 1, "model": "MOSTLY_AI/Small"},
    "default": {},
    "auto_novp": {"value_protection": False},
    "auto_digit": {"binned_to_digit": True, "point_mass": 0.0},
    "paper_pm2": {"binned_to_digit": True, "point_mass": 0.02},
    "paper_fixed": {"binned_to_digit": True, "enable_flexible_generation": False},
    "default_fixed": {"enable_flexible_generation": False},
    "digit": DIGIT,
    "digit_sample": {**DIGIT, "rare_category_replacement": "SAMPLE"},
    "digit_novp": {**DIGIT, "value_protection": False},
    "digit_novp_fixed": {**DIGIT, "value_protection": False, "enable_flexible_generation": False},
    "digit_novp_large": {**DIGIT, "value_protection": False, "model": "MOSTLY_AI/Large"},
    "discrete_novp": {"numeric_encoding": "TABULAR_NUMERIC_DISCRETE", "value_protection": False},
}
SCORES = ("F1_ratio", "F2_ratio", "F3_ratio", "dcr_share")


def shared_dir() -> Path:
    env = os.environ.get("HOLDBENCH_SHARED_DIR")
    return Path(env) if env else REPO.parent / "shared"


def variant_config(name: str) -> dict:
    if name == "paper":
        cfg = synthesizer_config("mostly_ai", preset="paper")
    elif name in VARIANTS:
        cfg = synthesizer_config("mostly_ai")
        cfg.update(VARIANTS[name])
    else:
        raise ValueError(f"unknown variant {name!r}; known: paper, {', '.join(VARIANTS)}")
    return {k: v for k, v in cfg.items() if k != "_target_"}


def score(train: pd.DataFrame, holdout: pd.DataFrame, synthetic: pd.DataFrame, kinds: dict) -> dict:
    """The paper's measures (F1-F3 ratios, DCR share) with holdbench's metrics."""
    try:
        from holdbench.metrics.evaluate import paper_families
    except ImportError:  # the metrics API before metric families
        res = evaluate(train, holdout, synthetic, kinds, extended=False)
    else:
        res = evaluate(train, holdout, synthetic, kinds, families=paper_families())
    got = res.to_dict()
    return {k: float(got[k]) for k in SCORES}


def load(ds: str):
    schema = dataset_schema(ds)
    paper = shared_dir() / "datasets" / "paper_study"
    train = schema.coerce(pd.read_csv(paper / f"{ds}_trn.csv.gz"), f"{ds} T")
    holdout = schema.coerce(pd.read_csv(paper / f"{ds}_val.csv.gz"), f"{ds} H")
    published = pd.read_csv(paper / f"{ds}_mostly.csv.gz")
    published = check_output(published, schema, len(published), "published_mostly", values="pandas")
    return schema, train, holdout, published


def run_variant(ds: str, variant: str, schema, train, holdout, n: int, seed: int, raw: bool,
                save_dir: Path | None = None) -> dict:
    cfg = variant_config(variant)
    synth = MostlyAI(**cfg)
    t0 = time.perf_counter()
    synth.fit(train, FitContext(schema=schema, seed=seed, dataset=ds))
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    out = synth.sample(n, seed=seed)
    sample_s = time.perf_counter() - t0
    dtypes_match = {c: str(out[c].dtype) == str(train[c].dtype) for c in train.columns}
    checked = check_output(out, schema, n, "mostly_ai")
    if save_dir is not None:
        save_dir.mkdir(parents=True, exist_ok=True)
        checked.to_parquet(save_dir / f"{ds}_{variant}.parquet")
    row = {
        "dataset": ds, "variant": variant, "config": cfg, **score(train, holdout, checked, schema.kinds),
        "fit_seconds": round(fit_s, 1), "sample_seconds": round(sample_s, 1),
        "dtypes_as_T": all(dtypes_match.values()), "dtype_mismatch": [c for c, ok in dtypes_match.items() if not ok],
        **synth.fit_record, **synth.sample_record,
    }
    if raw:  # the engine's own output, unconverted, fed to the metrics
        files = sorted((synth._workspace / "SyntheticData").glob("*.parquet"))
        engine_out = pd.concat([read_parquet(f) for f in files], ignore_index=True)[list(train.columns)]
        row["raw_engine_output"] = score(train, holdout, engine_out, schema.kinds)
    return row


def table(paths: list[Path]) -> str:
    """Markdown table of results files: per dataset the published row, then the variants."""
    rows = [json.loads(line) for p in paths for line in p.read_text().splitlines() if line.strip()]
    order = {"published": 0, "default": 1, "paper": 2}
    rows.sort(key=lambda r: (r["dataset"], order.get(r["variant"], 3), r["variant"]))
    lines = ["| dataset | row | F1 ratio | F2 ratio | F3 ratio | DCR share | fit s | epochs |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        epochs = r.get("epochs")
        lines.append(
            f"| {r['dataset']} | {r['variant']} | {r['F1_ratio']:.3f} | {r['F2_ratio']:.3f} | {r['F3_ratio']:.3f} "
            f"| {r['dcr_share']:.3f} | {r.get('fit_seconds', '')} | {'' if epochs is None else f'{epochs:g}'} |"
        )
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    ap.add_argument("--variants", nargs="+", default=["default", "paper"])
    ap.add_argument("--n", type=int, default=50_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=Path("/tmp/bench_mostly.jsonl"))
    ap.add_argument("--no-published", action="store_true", help="skip scoring the published MOSTLY AI file")
    ap.add_argument("--raw", action="store_true", help="also score the engine's unconverted output")
    ap.add_argument("--save-dir", type=Path, help="write each synthetic table there as <ds>_<variant>.parquet")
    ap.add_argument("--table", type=Path, nargs="+", help="only print the markdown table of results files")
    args = ap.parse_args()
    if args.table:
        print(table(args.table))
        return 0
    for v in args.variants:
        variant_config(v)  # unknown names fail before any fit
    for ds in args.datasets:
        schema, train, holdout, published = load(ds)
        rows = [] if args.no_published else [{"dataset": ds, "variant": "published", **score(train, holdout, published, schema.kinds)}]
        for r in rows:
            _append(args.out, r)
        for v in args.variants:
            row = run_variant(ds, v, schema, train, holdout, args.n, args.seed, args.raw, args.save_dir)
            _append(args.out, row)
    print(table([args.out]))
    return 0


def _append(path: Path, row: dict) -> None:
    with path.open("a") as fh:
        fh.write(json.dumps(row, default=str) + "\n")
    shown = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()
             if k in ("dataset", "variant", *SCORES, "fit_seconds", "sample_seconds", "epochs", "dtypes_as_T")}
    print(json.dumps(shown), flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
