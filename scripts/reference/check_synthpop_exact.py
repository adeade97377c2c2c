"""Does a `paper_synthpop_exact` run reproduce the paper's published synthpop files value for value?

    python scripts/reference/check_synthpop_exact.py [results/paper_synthpop_exact [DATASET ...]]

For each dataset: the cell's synthetic.parquet against ../shared/datasets/paper_study/<ds>_synthpop.csv.gz,
both coerced to the cell's schema; prints the number of differing values per column and PASS/FAIL.
Exits 1 on any difference or missing cell (a skipped cell says why, from its status.json).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from holdbench.contracts.io import read_parquet
from holdbench.benchmark.layout import StudyLayout  # noqa: E402
from holdbench.contracts.schema import Schema  # noqa: E402

SHARED = Path(os.environ.get("HOLDBENCH_SHARED_DIR", REPO.parent / "shared"))
DATASETS = ("adult", "bank-marketing", "credit-default", "online-shoppers")


def differences(ours: pd.DataFrame, theirs: pd.DataFrame) -> dict[str, int]:
    out = {}
    for col in ours.columns:
        a, b = ours[col].astype(object), theirs[col].astype(object)
        both_missing = a.isna() & b.isna()
        same = both_missing | (a == b)
        if pd.api.types.is_numeric_dtype(ours[col]) and pd.api.types.is_numeric_dtype(theirs[col]):
            same |= np.isclose(ours[col].astype(float), theirs[col].astype(float), rtol=0, atol=1e-9)
        out[col] = int((~same).sum())
    return out


def main(study_dir: str = "results/paper_synthpop_exact", *datasets: str) -> int:
    """Check `datasets` (default: all four) of the study; 0 when every one is PASS."""
    lay = StudyLayout(Path(study_dir))
    failed = False
    for ds in datasets or DATASETS:
        cell = lay.cell_dir(ds, 0, "synthpop")
        status = json.loads((cell / "status.json").read_text()) if (cell / "status.json").exists() else {}
        if status.get("status") != "ok":
            print(f"{ds}: FAIL (cell {status.get('status', 'missing')}: {status.get('reason', 'no status.json')})")
            failed = True
            continue
        schema = Schema.from_dict(json.loads(lay.schema(ds, 0).read_text()))
        ours = schema.coerce(read_parquet(cell / "synthetic.parquet"), f"{ds} cell")
        theirs = schema.coerce(pd.read_csv(SHARED / "datasets" / "paper_study" / f"{ds}_synthpop.csv.gz"),
                               f"{ds} published")
        if len(ours) != len(theirs):
            print(f"{ds}: FAIL ({len(ours)} rows, the published file has {len(theirs)})")
            failed = True
            continue
        diff = {c: n for c, n in differences(ours, theirs).items() if n}
        failed |= bool(diff)
        print(f"{ds}: {'FAIL ' + json.dumps(diff) if diff else 'PASS'} ({len(ours):,} rows x {ours.shape[1]} columns)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
