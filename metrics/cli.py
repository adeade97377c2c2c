"""`holdbench evaluate`: score one synthetic table (or the holdout reference row) from files."""

from __future__ import annotations

import argparse
import math

from benchmark.io import read_table, write_json


def register(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "evaluate",
        help="fidelity (F1-F3 vs holdout) and privacy (DCR share) of one synthetic table",
        description="Score a synthetic table S against its training table T and holdout H "
                    "(Platzer & Reutterer 2021; SPEC §3, §4, §7).",
    )
    p.add_argument("--train", required=True, help="training table T (.csv, .csv.gz, .parquet)")
    p.add_argument("--holdout", required=True, help="holdout table H, never seen by the synthesizer")
    p.add_argument("--synthetic", help="synthetic table S (optional with --holdout-row)")
    p.add_argument("--out", help="write all metrics as JSON to this file")
    p.add_argument("--holdout-row", action="store_true",
                   help="evaluate S = H: the reference row every synthesizer is compared with")
    p.add_argument("--dataset", help="take column kinds from this dataset's config instead of T's dtypes")
    p.add_argument("--n-jobs", type=int, default=1, help="worker threads (-1 = all cores)")
    p.add_argument("--max-combinations", type=int, default=None,
                   help="cap k-way marginals per k by seeded sampling (default: all, as the paper)")
    p.add_argument("--privacy-sample", type=int, default=None,
                   help="compute privacy on a seeded subsample of S of this size (default: all)")
    p.add_argument("--seed", type=int, default=0, help="seed of every sampling choice")
    p.add_argument("--no-extended", action="store_true", help="skip the IMS/NNDR/Gower panel")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from metrics.evaluate import evaluate, kinds_from_dtypes

    if not args.holdout_row and not args.synthetic:
        raise ValueError("--synthetic is required unless --holdout-row is given")
    train = read_table(args.train)
    holdout = read_table(args.holdout)
    synthetic = None
    if args.synthetic and not args.holdout_row:
        synthetic = read_table(args.synthetic)
    if args.dataset:
        from benchmark.data import dataset_schema

        kinds = dataset_schema(args.dataset).kinds
    else:
        kinds = kinds_from_dtypes(train)
    res = evaluate(train, holdout, synthetic, kinds, holdout_row=args.holdout_row, n_jobs=args.n_jobs,
                   max_combinations=args.max_combinations, privacy_sample=args.privacy_sample,
                   extended=not args.no_extended, seed=args.seed)
    out = res.to_dict()
    out["train"], out["holdout"] = str(args.train), str(args.holdout)
    out["synthetic"] = None if args.holdout_row else str(args.synthetic)
    out["dataset"] = args.dataset
    print(summary(out))
    if args.out:
        write_json(args.out, out)
        print(f"\nwrote {args.out}")
    return 0


def _f(v, fmt: str = ".4f") -> str:
    return "n/a" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, fmt)


def summary(d: dict) -> str:
    """A short human-readable report of a to_dict() result."""
    what = "holdout reference row (S = H)" if d["holdout_row"] else "synthetic data"
    lines = [
        (f"{what}: T {d['n_train']:,} rows, H {d['n_holdout']:,}, S {d['n_synthetic']:,}, "
         f"{d['n_columns']} columns"),
        "",
        "Fidelity: mean TVD of k-way marginals (lower is better); ratio to H's (1 is ideal)",
    ]
    for k in (1, 2, 3):
        sampled = " (sampled)" if d["combinations_sampled"] else ""
        lines.append(f"  F{k} {_f(d[f'F{k}'])}   holdout {_f(d[f'F{k}_holdout'])}   "
                     f"ratio {_f(d[f'F{k}_ratio'], '.3f')}   "
                     f"over {d[f'n_combinations_{k}']} marginals{sampled}")
    ratio = d["F3_ratio"]
    if ratio is not None:
        hint = ("below 1: closer to T than fresh real data would be (possible overfitting)" if ratio < 0.95
                else "about 1: as faithful as a fresh real sample" if ratio <= 1.05
                else "above 1: marginals less faithful than a fresh real sample")
        lines.append(f"  reading: {hint}")
    sample = f" on a sample of {d['n_privacy']:,}" if d["privacy_sampled"] else ""
    lines += [
        "",
        f"Privacy: DCR share{sample} (0.5 is ideal; above = S sits closer to T than to unseen H)",
        (f"  dcr_share {_f(d['dcr_share'])}  95% CI [{_f(d['dcr_share_ci_low'])}, "
         f"{_f(d['dcr_share_ci_high'])}]  p(share > 0.5) = {_f(d['dcr_share_pvalue'], '.3g')}"),
        (f"  mean distance to T {_f(d['dcr_train_mean'], '.3f')}, to H {_f(d['dcr_holdout_mean'], '.3f')}"
         f"  (closer to T {d['n_closer_train']:,}, to H {d['n_closer_holdout']:,}, ties {d['n_ties']:,})"),
    ]
    if d["dcr_share_ci_low"] is not None and d["dcr_share_ci_low"] > 0.5:
        lines.append("  reading: significantly closer to T than to H: records of T may be leaking")
    if d["extended"]:
        lines += [
            "",
            "Extended panel (Bale & Quick: S should be no riskier than H)",
            (f"  identical matches  S {_f(d['ims_synthetic'])}  H {_f(d['ims_holdout'])}  "
             f"pass {d['bq_ims_pass']}"),
            (f"  DCR 5th pct        S {_f(d['dcr_p05_synthetic'], '.2f')}  "
             f"H {_f(d['dcr_p05_holdout'], '.2f')}  pass {d['bq_dcr_pass']}"),
            (f"  NNDR(5) 5th pct    S {_f(d['nndr5_p05_synthetic'])}  H {_f(d['nndr5_p05_holdout'])}  "
             f"pass {d['bq_nndr_pass']}"),
            f"  Gower DCR share    {_f(d['gower_dcr_share'])}",
        ]
    secs = [d["seconds_fidelity"], d["seconds_privacy"], d.get("seconds_extended") or 0.0]
    lines += ["", f"time: fidelity {secs[0]:.1f}s, privacy {secs[1]:.1f}s, extended {secs[2]:.1f}s"]
    return "\n".join(lines)
