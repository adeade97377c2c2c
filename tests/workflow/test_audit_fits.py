"""The audit's shadow-fit jobs (holdbench.benchmark.workflow.audit.do_fits) on a tiny study directory: a rerun
computes only the missing fits, a changed generator config recomputes them all, every fit file carries its
cell, and the evaluate payload tells the audit family the fit files and the configured ε."""

from __future__ import annotations

import json

import pandas as pd
from holdbench.benchmark.config import synthesizer_config
from holdbench.benchmark.data.demo import make_demo
from holdbench.benchmark.data.tables import dataset_schema
from holdbench.benchmark.layout import StudyLayout
from holdbench.benchmark.workflow import audit
from holdbench.benchmark.workflow.cellconfig import synth_snapshot
from holdbench.contracts.io import write_json, write_parquet
from holdbench.metrics.registry import EvalData

SETTINGS = {"_target_": "holdbench.metrics.audit.Audit", "columns": {"demo": ["age", "education", "debt"]},
            "n_targets": 2, "reference_rows": 100, "n_fits_train": 10, "n_fits_test": 10, "fits_per_job": 20}


def study(tmp_path, synth="flip10", **params):
    lay = StudyLayout(tmp_path / "s")
    table, schema = make_demo(600), dataset_schema("demo")
    write_parquet(lay.train("demo", 0), table.iloc[:300].reset_index(drop=True))
    write_parquet(lay.holdout("demo", 0), table.iloc[300:].reset_index(drop=True))
    write_json(lay.schema("demo", 0), schema.to_dict())
    write_json(lay.metrics_config, {"n_jobs": 1, "seed": 0, "families": {"audit": SETTINGS}})
    write_json(lay.synth_config(synth), synth_snapshot(synthesizer_config(synth, None, params=params), 100))
    return lay


def test_rerun_computes_only_missing_fits_and_a_new_config_all(tmp_path):
    lay = study(tmp_path)
    first = audit.do_fits(lay.root, "demo", 0, "flip10", 0)
    assert first["failed"] == "" and first["computed"] == list(range(20))
    audit.fit_file(lay, "demo", 0, "flip10", 7).unlink()
    again = audit.do_fits(lay.root, "demo", 0, "flip10", 0)
    assert again["computed"] == [7] and len(again["kept"]) == 19
    study(tmp_path, p=0.3)  # the same synthesizer name, another setting: every fit is stale
    assert audit.do_fits(lay.root, "demo", 0, "flip10", 0)["computed"] == list(range(20))


def test_a_newly_declared_public_domain_makes_the_fits_stale(tmp_path):
    # a DP generator spends no budget on declared levels: fits made before the declaration are another domain's
    lay = study(tmp_path)
    assert audit.do_fits(lay.root, "demo", 0, "flip10", 0)["computed"] == list(range(20))
    doc = json.loads(lay.schema("demo", 0).read_text())
    edu = next(c for c in doc["columns"] if c["name"] == "education")
    edu["levels"] = sorted(make_demo(600)["education"].unique().tolist())
    write_json(lay.schema("demo", 0), doc)
    assert audit.do_fits(lay.root, "demo", 0, "flip10", 0)["computed"] == list(range(20))
    doc["columns"] = [c for c in doc["columns"] if c["name"] != "education"] + [edu | {"levels": edu["levels"]}]
    write_json(lay.schema("demo", 0), doc)  # an unaudited column's place moved: the audited columns are the same
    assert audit.do_fits(lay.root, "demo", 0, "flip10", 0)["kept"] == list(range(20))


def test_evaluate_payload_names_the_cells_fits_and_epsilon(tmp_path):
    lay = study(tmp_path)
    audit.do_fits(lay.root, "demo", 0, "flip10", 0)
    cfg = audit.with_audit(json.loads(lay.metrics_config.read_text()), lay, "demo", 0, "flip10")
    cell = cfg["families"]["audit"]["cell"]
    assert cell["epsilon"] is None and cell["failed"] == ""
    assert cell["fits"] == [str(audit.fit_file(lay, "demo", 0, "flip10", j)) for j in range(20)]
    assert all(str(lay.cell_dir("demo", 0, "flip10")) in f for f in cell["fits"])


def test_a_failing_generator_is_recorded_in_the_chunk(tmp_path):
    lay = study(tmp_path)
    bad = {**SETTINGS, "columns": {"demo": ["age", "no_such_column"]}}
    write_json(lay.metrics_config, {"n_jobs": 1, "seed": 0, "families": {"audit": bad}})
    rec = audit.do_fits(lay.root, "demo", 0, "flip10", 0)
    assert "no_such_column" in rec["failed"]
    cfg = audit.with_audit(json.loads(lay.metrics_config.read_text()), lay, "demo", 0, "flip10")
    assert "no_such_column" in cfg["families"]["audit"]["cell"]["failed"]


def test_targets_are_selected_once_per_split_and_reused_by_every_cell_and_the_evaluation(tmp_path, monkeypatch):
    from holdbench.metrics import audit as metrics_audit
    from holdbench.metrics.audit import Audit, select_targets

    lay = study(tmp_path)
    write_json(lay.synth_config("holdout"), synth_snapshot(synthesizer_config("holdout", None), 100))
    assert audit.do_fits(lay.root, "demo", 0, "flip10", 0)["failed"] == ""
    stored = json.loads(audit.targets_file(lay, "demo", 0).read_text())
    train = make_demo(600).iloc[:300].reset_index(drop=True)[SETTINGS["columns"]["demo"]]
    rows, scores = select_targets(train, dataset_schema("demo").kinds, 5, 2, seed=0)
    assert stored["rows"] == rows.tolist() and stored["scores"] == scores.tolist()

    def refuse(*a, **k):
        raise AssertionError("targets selected again")

    monkeypatch.setattr(metrics_audit, "select_targets", refuse)
    monkeypatch.setattr("holdbench.metrics.audit.game.select_targets", refuse)
    assert audit.do_fits(lay.root, "demo", 0, "holdout", 0)["failed"] == ""  # another cell of the split
    cell = audit.with_audit(json.loads(lay.metrics_config.read_text()), lay, "demo", 0, "flip10")["families"]["audit"]["cell"]
    assert cell["targets"] == {"rows": rows.tolist(), "scores": scores.tolist()}
    table = make_demo(600)
    data = EvalData(table.iloc[:300].reset_index(drop=True), table.iloc[300:].reset_index(drop=True),
                    table.iloc[300:].reset_index(drop=True), dataset_schema("demo").kinds)
    options = {k: v for k, v in SETTINGS.items() if k != "_target_"}
    given = Audit(**options, cell=cell).compute(data).audit_targets
    monkeypatch.undo()
    selected = Audit(**options, cell={k: v for k, v in cell.items() if k != "targets"}).compute(data).audit_targets
    pd.testing.assert_frame_equal(given, selected)
    assert given["row_of_T"].tolist() == rows.tolist()


def test_a_targets_file_of_another_T_is_not_reused(tmp_path):
    lay = study(tmp_path)
    audit.do_fits(lay.root, "demo", 0, "flip10", 0)
    write_parquet(lay.train("demo", 0), make_demo(600).iloc[300:].reset_index(drop=True))  # T changed
    assert audit.stored_targets(lay, "demo", 0, audit.family(SETTINGS).settings, SETTINGS["columns"]["demo"]) is None
    rec = audit.do_fits(lay.root, "demo", 0, "flip10", 0)
    assert rec["failed"] == "" and rec["computed"] == list(range(20))  # the fits' identity names the targets
    assert audit.stored_targets(lay, "demo", 0, audit.family(SETTINGS).settings, SETTINGS["columns"]["demo"])
