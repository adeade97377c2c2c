"""The privacy side of Bale & Quick fresh sets: one row per synthetic file of a `holdbench report` run.

    python scripts/reference/bq_set_privacy.py REPORT_JSON --table NAME --out CSV [--k-range S=[10, 1600] ...]

`bq_fresh_sets.py --save-set DIR` writes each fit's first fresh set (|T| rows); `holdbench report --train T
--holdout H --synthetic NAME=FILE ... --dataset D --out R` judges them; this script reads R/report.json and
writes, per S: Bale & Quick's legal criteria against the holdout and against leave-one-out T (pass/fail, and the
5th percentiles of DCR and NNDR for S, H and leave-one-out T), the DCR share with its 95% interval, the best
membership-inference AUC, the worst attribute-disclosure ratio for targets in T and in H, anonymeter's inference
risk, and the quality gates that fail. Rows are added to CSV (header written when the file is new); a row of
the same table and S is replaced.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

FIELDS = ["table", "synthesizer", "k_range", "legal criteria vs H", "legal criteria vs LOO",
          "DCR p05 S", "DCR p05 H", "DCR p05 LOO", "NNDR p05 S", "NNDR p05 H", "NNDR p05 LOO",
          "DCR share", "DCR share 95%", "MIA AUC (max)", "max disclosure ratio, targets in T",
          "max disclosure ratio, targets in H", "anonymeter inference risk", "gates failed"]


def _num(v, digits: int = 3) -> str:
    return "" if v is None else f"{float(v):.{digits}f}"


def _pass(v) -> str:
    return "" if v is None else ("pass" if v else "fail")


def rows(report: dict, table: str, k_ranges: dict[str, str]) -> list[dict]:
    out = []
    for name, s in report["synthetic"].items():
        m = s["metrics"]
        out.append({
            "table": table, "synthesizer": name, "k_range": k_ranges.get(name, ""),
            "legal criteria vs H": _pass(m.get("legal_pass_all_holdout")),
            "legal criteria vs LOO": _pass(m.get("legal_pass_all_loo")),
            **{f"{what} p05 {who}": _num(m.get(f"legal_{key}_p05_{ref}"), 4)
               for what, key in (("DCR", "dcr"), ("NNDR", "nndr"))
               for who, ref in (("S", "synthetic"), ("H", "holdout"), ("LOO", "loo"))},
            "DCR share": _num(m.get("dcr_share")),
            "DCR share 95%": (f"[{_num(m['dcr_share_ci_low'])}, {_num(m['dcr_share_ci_high'])}]"
                              if m.get("dcr_share_ci_low") is not None else ""),
            "MIA AUC (max)": _num(m.get("mia_auc_max")),
            "max disclosure ratio, targets in T": _num(m.get("disclosure_max_train"), 2),
            "max disclosure ratio, targets in H": _num(m.get("disclosure_max_holdout"), 2),
            "anonymeter inference risk": _num(m.get("anonymeter_inference_risk")),
            "gates failed": " ".join(s["verdict"].get("failed") or []),
        })
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report", type=Path, help="report.json of `holdbench report`")
    ap.add_argument("--table", required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--k-range", nargs="*", default=[], metavar="S=RANGE", help="the k_range each bq_* S was searched over")
    a = ap.parse_args(argv)
    bad = [x for x in a.k_range if "=" not in x]
    if bad:
        raise SystemExit(f"bq_set_privacy: --k-range takes S=RANGE, got {bad}")
    new = rows(json.loads(a.report.read_text()), a.table, dict(x.split("=", 1) for x in a.k_range))
    old = []
    if a.out.is_file():
        with a.out.open(newline="") as fh:
            old = list(csv.DictReader(fh))
        if old and list(old[0]) != FIELDS:
            raise SystemExit(f"bq_set_privacy: {a.out} has columns {list(old[0])}, not {FIELDS}")
    ran = {(r["table"], r["synthesizer"]) for r in new}
    kept = [r for r in old if (r["table"], r["synthesizer"]) not in ran]
    with a.out.open("w", newline="") as fh:
        w = csv.DictWriter(fh, FIELDS, lineterminator="\n")
        w.writeheader()
        w.writerows(kept + new)
    print(f"{a.out}: {len(kept) + len(new)} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
