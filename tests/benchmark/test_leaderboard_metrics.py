"""A study's `leaderboard_metrics`: shown after the headline metrics in leaderboard.md, report.html and the
exported table, a pass/fail metric as pass, fail or its pass rate; names checked when the study loads."""

from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path

import pytest

from holdbench.benchmark.config import ConfigError
from tests.benchmark.conftest import CORRUPT_CELL, ERROR_CELL, SKIPPED_CELL, build_study

ROOT = Path(__file__).resolve().parents[2]
LEGAL = "B&Q all three pass vs holdout"
DISCLOSURE = "Disclosure max (T targets)"
#: (dataset, synthesizer) -> legal_pass_all_holdout of seed 0 and seed 1
PASSES = {("alpha", "holdout"): (True, True), ("alpha", "gauss"): (True, False), ("alpha", "ctgan"): (False, None),
          ("beta", "holdout"): (False, False), ("beta", "gauss"): (None, True), ("beta", "ctgan"): (True, None)}


def _study(tmp_path: Path):
    """The toy study with the legal and disclosure families, showing a pass flag and a ratio of each."""
    study = build_study(tmp_path)
    doc = json.loads((study.path / "study.json").read_text())
    doc["metrics"] = {"families": {
        "fidelity": {"_target_": "holdbench.metrics.fidelity.Fidelity"},
        "privacy": {"_target_": "holdbench.metrics.privacy.DCRShare"},
        "legal": {"_target_": "holdbench.metrics.legal.LegalCriteria"},
        "disclosure": {"_target_": "holdbench.metrics.disclosure.AttributeDisclosure"}}}
    doc["leaderboard_metrics"] = ["legal_pass_all_holdout", "disclosure_max_train"]
    (study.path / "study.json").write_text(json.dumps(doc))
    for (dataset, synth), flags in PASSES.items():
        for seed, flag in enumerate(flags):
            key = (dataset, synth, seed)
            if key in (ERROR_CELL, SKIPPED_CELL, CORRUPT_CELL):
                continue
            path = study.cell_dir(*key) / "metrics.json"
            metrics = json.loads(path.read_text())
            metrics.update(legal_pass_all_holdout=flag, disclosure_max_train=1.5 + seed)
            path.write_text(json.dumps(metrics))
    return study


def _expected(dataset: str, synth: str) -> str:
    """The pass rate over the ok seeds as the tables must say it (from PASSES, not from the code)."""
    known = [f for seed, f in enumerate(PASSES[(dataset, synth)])
             if (dataset, synth, seed) not in (ERROR_CELL, SKIPPED_CELL, CORRUPT_CELL) and f is not None]
    if not known:
        return ""
    rate = sum(known) / len(known)
    return "pass" if rate == 1 else "fail" if rate == 0 else f"{rate:.0%} pass"


def test_the_tables_show_them_after_the_headline_metrics(tmp_path):
    from holdbench.benchmark.outputs.leaderboard import write_leaderboard
    from holdbench.benchmark.outputs.report import render_report
    from holdbench.benchmark.outputs.results import load_results

    study = _study(tmp_path)
    results = load_results(study.path)
    paths = write_leaderboard(results)
    md = paths["md"].read_text()
    header = next(line for line in md.splitlines() if line.startswith("| synthesizer"))
    cols = [c.strip().replace("\\&", "&") for c in header.strip("|").split("|")]  # as markdown escapes it
    assert cols.index("F3 ratio →1") < cols.index("B&Q all three pass vs holdout ↑") < cols.index(
        "Disclosure max (T targets) ↓") < cols.index("fit s")
    flag_col = cols.index("B&Q all three pass vs holdout ↑")
    seen = {}
    dataset = None
    for line in md.splitlines():
        if line.startswith("## "):
            dataset = line[3:]
        elif line.startswith("| ") and not line.startswith("| synthesizer") and dataset in ("alpha", "beta"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            seen[(dataset, cells[0].split(" ")[0])] = cells[flag_col]
    assert seen == {k: _expected(*k) for k in PASSES}
    assert "**pass**" not in md and "**fail**" not in md, "a pass/fail column has no best mean"
    html = render_report(results)
    assert "B&amp;Q all three pass vs holdout ↑" in html and "50% pass" in html

    spec = importlib.util.spec_from_file_location("export_results", ROOT / "docs" / "gen" / "export_results.py")
    export = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(export)
    out = tmp_path / "published" / "toy"
    export.export(study.path, out, machine_text="m")
    rows = list(csv.DictReader((out / "leaderboard.csv").open()))
    by_key = {(r["dataset"], r["synthesizer"], int(r["seed"])): r for r in rows}
    for (dataset, synth), flags in PASSES.items():
        for seed, flag in enumerate(flags):
            r = by_key[(dataset, synth, seed)]
            if r["status"] != "ok":
                assert r[LEGAL] == "" and r[DISCLOSURE] == ""
                continue
            assert r[LEGAL] == {True: "pass", False: "fail", None: ""}[flag], (dataset, synth, seed)
            assert r[DISCLOSURE] == f"{1.5 + seed:.3f}"


@pytest.mark.parametrize(("names", "says"), [
    (["legal_pass_all_holdot"], "leaderboard_metrics ['legal_pass_all_holdot'] are not metrics of metrics config "
                                "'default' (did you mean 'legal_pass_all_holdout'"),
    (["F3_ratio"], "leaderboard_metrics ['F3_ratio'] are headline metrics, shown already"),
])
def test_a_name_that_is_not_a_metric_of_the_study_or_already_shown_is_refused(names, says):
    from holdbench.benchmark.workflow.study import load_study

    with pytest.raises(ConfigError) as err:
        load_study("demo", [f"leaderboard_metrics=[{','.join(names)}]", "metrics=default"])
    assert says in str(err.value)


def test_the_bale_quick_study_shows_the_legal_criteria_and_disclosure():
    from holdbench.benchmark.workflow.study import load_study

    study = load_study("bale_quick")
    assert study.summary()["leaderboard_metrics"] == list(study.leaderboard_metrics)
    assert {"legal_pass_all_holdout", "legal_pass_all_loo", "disclosure_max_train"} <= set(study.leaderboard_metrics)
