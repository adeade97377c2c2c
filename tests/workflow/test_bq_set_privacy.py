"""scripts/reference/bq_set_privacy.py: a report.json's S rows become table rows (legal criteria as pass/fail, the
percentiles, the DCR share interval, the failed gates); a rerun replaces the rows of its table and S, keeps others."""

from __future__ import annotations

import csv
import json
import runpy
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "reference" / "bq_set_privacy.py"


def _report(share: float, loo: bool) -> dict:
    metrics = {"legal_pass_all_holdout": False, "legal_pass_all_loo": loo, "legal_dcr_p05_synthetic": 0.20189,
               "legal_dcr_p05_holdout": 0.32502, "legal_dcr_p05_loo": 0.28485, "dcr_share": share,
               "dcr_share_ci_low": share - 0.012, "dcr_share_ci_high": share + 0.012, "mia_auc_max": 0.5248,
               "disclosure_max_train": 6.2399, "disclosure_max_holdout": 4.1599, "anonymeter_inference_risk": None}
    return {"synthetic": {"bq": {"metrics": metrics, "verdict": {"failed": ["dcr_distribution", "dcr_share_interval"]}},
                          "ok": {"metrics": {}, "verdict": {"failed": []}}}}


def _read(path: Path) -> list[dict]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def test_rows_and_replacement(tmp_path):
    main = runpy.run_path(str(SCRIPT))["main"]
    out = tmp_path / "privacy.csv"
    for table, share, loo in (("shop", 0.651, False), ("adult", 0.5, True), ("shop", 0.6, True)):
        path = tmp_path / f"{table}{share}.json"
        path.write_text(json.dumps(_report(share, loo)))
        assert main([str(path), "--table", table, "--out", str(out), "--k-range", "bq=[10, 3200]"]) == 0
    rows = _read(out)
    assert [(r["table"], r["synthesizer"]) for r in rows] == [("adult", "bq"), ("adult", "ok"), ("shop", "bq"), ("shop", "ok")]
    shop = rows[2]
    assert shop["DCR share"] == "0.600" and shop["DCR share 95%"] == "[0.588, 0.612]"   # the rerun's, not 0.651
    assert shop["legal criteria vs H"] == "fail" and shop["legal criteria vs LOO"] == "pass"
    assert (shop["DCR p05 S"], shop["DCR p05 H"], shop["DCR p05 LOO"]) == ("0.2019", "0.3250", "0.2848")
    assert shop["k_range"] == "[10, 3200]" and shop["gates failed"] == "dcr_distribution dcr_share_interval"
    assert shop["anonymeter inference risk"] == "" and shop["max disclosure ratio, targets in H"] == "4.16"
    assert rows[3]["legal criteria vs H"] == "" and rows[3]["gates failed"] == ""


def test_refuses_a_table_of_other_columns_and_a_bad_k_range(tmp_path):
    main = runpy.run_path(str(SCRIPT))["main"]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(_report(0.5, True)))
    out = tmp_path / "other.csv"
    out.write_text("table,synthesizer,other\nshop,bq,1\n")
    with pytest.raises(SystemExit, match="has columns"):
        main([str(path), "--table", "shop", "--out", str(out)])
    with pytest.raises(SystemExit, match="S=RANGE"):
        main([str(path), "--table", "shop", "--out", str(tmp_path / "new.csv"), "--k-range", "bq"])
