"""The quality gates' verdicts on a study's cells, one row per cell, for a results page.

Reads the verdict table `holdbench check STUDY --out VERDICTS.csv` writes (one row per cell and target) and
writes one row per judged cell: dataset, synthesizer, the cell's verdict (FAIL if a target fails, else pass
if one passes, else n/a), the targets it fails, and for each target its value as `holdbench check` prints it
(a distribution test's effect with its sign) followed by the target's verdict. The holdout reference row,
which the gates never judge, is left out.

Usage: python scripts/docs/gate_table.py VERDICTS.csv OUT.csv
"""

from __future__ import annotations

import argparse
import sys

import pandas as pd

from holdbench.benchmark.cli.check import value_text
from holdbench.benchmark.outputs.gates import cell_verdicts


def gate_table(verdicts: pd.DataFrame) -> pd.DataFrame:
    judged = verdicts[~verdicts["reference"].astype(bool)]
    per_cell = cell_verdicts(judged).set_index("cell_id")
    targets = list(dict.fromkeys(judged["target"]))
    rows = []
    for cell_id, group in judged.groupby("cell_id", sort=False):
        first, by_target = group.iloc[0], group.set_index("target")
        row = {"dataset": first["dataset"], "synthesizer": first["synthesizer"],
               "verdict": per_cell.loc[cell_id, "verdict"], "failed": per_cell.loc[cell_id, "failed"]}
        for t in targets:
            if t not in by_target.index:
                row[t] = ""
                continue
            r = by_target.loc[t]
            row[t] = f"{value_text(float(r['value']), pd.notna(r['pvalue']))} {r['verdict']}"
        rows.append(row)
    return pd.DataFrame(rows, columns=["dataset", "synthesizer", "verdict", "failed", *targets])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("verdicts", help="the CSV of `holdbench check STUDY --out`")
    ap.add_argument("out", help="the one-row-per-cell CSV to write")
    args = ap.parse_args(argv)
    gate_table(pd.read_csv(args.verdicts)).to_csv(args.out, index=False)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
