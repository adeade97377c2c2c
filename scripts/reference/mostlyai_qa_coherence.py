"""holdbench's two further coherence parts against mostlyai-qa's own, on a small seeded example.

    python scripts/reference/mostlyai_qa_coherence.py [--out results/published/references/mostlyai_qa_coherence.csv]

The example: sequences without subject attributes (a key and five event columns: three categorical, one
of them with 14 levels and a rare 15th (3 events of T) so mostlyai-qa's top 9 and "(other)" are
exercised; a small-integer numeric; a continuous amount, cut by mostlyai-qa's bin search; 1-10 events each), T = 400 sequences from a seeded Markov chain and S = 400 from
a perturbed chain. holdbench side: holdbench.metrics.sequential_parts.coherence_parts (T vs S), its
accuracy 1 - TVD. mostlyai-qa side: its full report, run by the `mostlyai_qa` plug-in's worker
(metrics/plugins/mostlyai_qa/worker.py in its own venv, `python3 -m holdbench.contracts.plugin_env install
mostlyai_qa`) on the same T and S (no holdout, so its reference data is T alone), per column: the accuracy
of "distinct categories per sequence" and of "sequences per distinct category" (rounded by mostlyai-qa to
5 decimals). Prints both per column and part, and writes them with their difference to the CSV; exits 1
when any differs by more than 5e-6 (mostlyai-qa's rounding).

Both cut the columns with mostlyai-qa's rules, on T (docs/definitions/d22.md §11.2); mostlyai-qa itself cuts
on T and H together, so H is left out here and both compare S with T.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from holdbench.contracts.plugin_env import get, run_worker
from holdbench.metrics.sequential_parts import coherence_parts

KINDS = {"channel": "categorical", "status": "categorical", "product": "categorical", "items": "numeric",
         "amount": "numeric"}
CHANNELS = np.array(["web", "app", "store", "phone", "mail"])
STATUS = np.array(["new", "ok", "late"])
#: 14 products (more than mostlyai-qa's 9 top categories, so "(other)" is exercised) and a rare 15th
PRODUCTS = np.array([f"p{i:02d}" for i in range(14)])
PRODUCT_P = np.arange(14, 0, -1) / np.arange(14, 0, -1).sum()
RARE = "p14"
#: half a unit of mostlyai-qa's 5th decimal, plus floating-point noise
TOLERANCE = 5e-6 * (1 + 1e-6)


def example(n: int, seed: int, stickiness: float) -> pd.DataFrame:
    """n sequences: each event's channel stays the previous one with probability `stickiness`."""
    rng = np.random.default_rng(seed)
    rows = []
    for key in range(n):
        length = int(rng.integers(1, 11))
        ch = int(rng.integers(0, len(CHANNELS)))
        for _ in range(length):
            if rng.random() > stickiness:
                ch = int(rng.choice(len(CHANNELS), p=[0.4, 0.25, 0.15, 0.12, 0.08]))
            rows.append({"key": key, "channel": CHANNELS[ch], "status": STATUS[int(rng.integers(0, 3))],
                         "product": PRODUCTS[int(rng.choice(14, p=PRODUCT_P))],
                         "amount": round(float(rng.lognormal(3 + 0.3 * ch, 0.9)), 2),
                         "items": int(rng.integers(1, 7)) if ch < 3 else int(rng.integers(1, 3))})
    return pd.DataFrame(rows)


def holdbench_side(t: pd.DataFrame, s: pd.DataFrame) -> pd.DataFrame:
    parts = coherence_parts((t["key"].to_numpy(), t), [(s["key"].to_numpy(), s)], KINDS)
    return pd.concat([pd.DataFrame({"column": parts["column"], "part": name, "holdbench_accuracy": 1 - parts[col]})
                      for name, col in (("distinct_categories_per_sequence", "distinct_0"),
                                        ("sequences_per_distinct_category", "category_0"))])


def mostlyai_side(t: pd.DataFrame, s: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    plugin = get("mostlyai_qa")
    with tempfile.TemporaryDirectory(prefix="holdbench-qa-coherence-") as tmp:
        work = Path(tmp)
        t.to_parquet(work / "train.parquet", index=False)
        s.to_parquet(work / "synthetic.parquet", index=False)
        (work / "config.json").write_text(json.dumps({"seed": 0, "tgt_context_key": "key", "n_jobs": 1}))
        result, _, _ = run_worker("mostlyai_qa", plugin.python(), plugin.worker, work, timeout=1800)
    if "missing" in result:
        raise SystemExit(f"mostlyai-qa is not installed in the plug-in's venv: {result['missing']}")
    rows = [{"column": r["column"], "part": part, "mostlyai_qa_accuracy": r["accuracy"]}
            for part, per_column in result["coherence"].items() for r in per_column]
    return pd.DataFrame(rows), result.get("versions", {})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="results/published/references/mostlyai_qa_coherence.csv")
    args = ap.parse_args(argv)
    t = example(400, seed=1, stickiness=0.7)
    s = example(400, seed=2, stickiness=0.4)
    t.loc[[0, 50, 100], "product"] = RARE  # 3 events of T: under mostlyai-qa's 5, so "(other)"
    s.loc[[0, 7, 70, 700, 1000, 1500], "product"] = RARE
    ours = holdbench_side(t, s)
    theirs, versions = mostlyai_side(t, s)
    table = ours.merge(theirs, on=["column", "part"], how="outer")
    table["abs_diff"] = (table["holdbench_accuracy"] - table["mostlyai_qa_accuracy"]).abs()
    table["holdbench_accuracy"] = table["holdbench_accuracy"].round(6)
    table["abs_diff"] = table["abs_diff"].round(7)
    print(f"mostlyai-qa {versions.get('mostlyai-qa', versions)}; T {t['key'].nunique()} sequences "
          f"({len(t)} events), S {s['key'].nunique()} ({len(s)} events)")
    print(table.to_string(index=False))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out, index=False)
    print(f"wrote {args.out}")
    worst = table["abs_diff"].max()
    if not np.isfinite(worst) or worst > TOLERANCE:
        print(f"FAIL: largest difference {worst} > {TOLERANCE}", file=sys.stderr)
        return 1
    print(f"PASS: every accuracy within {TOLERANCE} of mostlyai-qa's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
