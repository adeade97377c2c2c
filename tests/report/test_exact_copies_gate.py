"""A good S with a few of T's records pasted in verbatim: the distance gates look at S's bulk and pass it, the
exact-copy gate fails it, the ranking puts it behind the clean S and the exposure list names the pasted rows."""

from __future__ import annotations

import json

import pandas as pd

from holdbench.benchmark.cli import main
from tests.report.conftest import FAST

PASTED = list(range(100, 108))  # 8 of T's 400 records, 2% of S


def test_pasted_training_records_fail_the_exact_copy_gate_alone(files, tmp_path):
    t, fresh = pd.read_csv(files["train"]), pd.read_csv(files["fresh"])
    pasted = fresh.copy()
    pasted.iloc[:len(PASTED)] = t.iloc[PASTED].to_numpy()
    path = tmp_path / "pasted.csv"
    pasted.to_csv(path, index=False)
    out = tmp_path / "out"
    code = main(["report", "--train", str(files["train"]), "--holdout", str(files["holdout"]), "--synthetic",
                 str(files["fresh"]), str(path), "--out", str(out), "--metrics", "demo", "--n-jobs", "1"]
                + [x for o in FAST for x in ("--set", o)])
    rep = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert code == 1
    h = pd.read_csv(files["holdout"])
    h_copies = len(h.merge(t.drop_duplicates(), how="inner"))  # H's records found verbatim in T
    m = rep["synthetic"]["pasted"]["metrics"]
    assert m["n_exact_copies"] == len(PASTED) + len(fresh.iloc[len(PASTED):].merge(t.drop_duplicates(), how="inner"))
    assert m["exact_copy_share_holdout"] == h_copies / len(h)
    rows = {r["gate"]: r["verdict"] for r in rep["synthetic"]["pasted"]["verdict"]["rows"]}
    clean = {r["gate"]: r["verdict"] for r in rep["synthetic"]["fresh"]["verdict"]["rows"]}
    assert rows == {**clean, "exact_copies": "FAIL"} and set(clean.values()) == {"pass"}
    assert rep["ranking"]["order"] == ["fresh", "pasted"]
    exposed = [r["row"] for r in rep["synthetic"]["pasted"]["views"]["exposure"]["records"][:len(PASTED)]]
    assert sorted(exposed) == PASTED
