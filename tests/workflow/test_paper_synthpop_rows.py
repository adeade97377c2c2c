"""The paper study's rows run after its committed run (scripts/docs/fresh_rows.py): the committed
files agree with each other, and the script takes fresh values from the cells and published ones from the
leaderboard, refusing a cell the committed run already has."""

from __future__ import annotations

import csv
import importlib.util
import json
import sys
from pathlib import Path

import pytest
from scipy.stats import spearmanr

REPO = Path(__file__).resolve().parents[2]
PAPER = REPO / "results" / "published" / "paper"


def _script():
    spec = importlib.util.spec_from_file_location("fresh_rows", REPO / "scripts" / "docs" / "fresh_rows.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def _rho(rows: list[dict[str, str]]) -> tuple[int, str]:
    both = [r for r in rows if r["synthesizer"] != "holdout" and r["F3 ratio"] and r["F3 ratio, published"]]
    rho = spearmanr([float(r["F3 ratio"]) for r in both], [float(r["F3 ratio, published"]) for r in both])[0]
    return len(both), f"{rho:.3f}"


@pytest.mark.parametrize("study", ["paper"])
def test_committed_fresh_rows_sit_beside_the_skipped_ones(study):
    folder = PAPER.parent / study
    tables = {t["file"] for t in json.loads((folder / "provenance.json").read_text())["tables"]}
    if "fresh_rows.csv" not in tables:
        pytest.skip(f"no fresh rows committed for the {study} study")
    board, fresh = _rows(folder / "leaderboard.csv"), _rows(folder / "fresh_rows.csv")
    assert list(fresh[0]) == list(board[0])
    by_key = {(r["dataset"], r["synthesizer"]): r for r in board}
    for r in fresh:
        old = by_key[(r["dataset"], r["synthesizer"])]
        assert old["status"].endswith("skipped") and r["status"].endswith("ok"), r
        for col in r:
            if col.endswith(", published"):
                assert r[col] == old[col], (r["dataset"], col)


def test_committed_spearman_uses_the_paper_fresh_rows():
    tables = {t["file"] for t in json.loads((PAPER / "provenance.json").read_text())["tables"]}
    if "fresh_rows.csv" not in tables:
        pytest.skip("no fresh rows committed for the paper study")
    board, fresh = _rows(PAPER / "leaderboard.csv"), _rows(PAPER / "fresh_rows.csv")
    replaced = {(r["dataset"], r["synthesizer"]) for r in fresh}
    spearman = _rows(PAPER / "spearman.csv")
    assert [s["dataset"] for s in spearman] == list(dict.fromkeys(r["dataset"] for r in board))
    for s in spearman:
        mine = [r for r in board if r["dataset"] == s["dataset"]]
        with_fresh = [r for r in mine if (r["dataset"], r["synthesizer"]) not in replaced] + \
            [r for r in fresh if r["dataset"] == s["dataset"]]
        assert _rho(with_fresh) == (int(s["synthesizers ok on both sides"]), s["Spearman rho of F3 ratio"]), s
        assert _rho(mine)[1] == s["Spearman rho of F3 ratio, without the fresh rows"], s


def _published(tmp_path: Path, status: str) -> Path:
    """A committed-results folder for the toy study: its 'sp0' and 'sp' rows with `status` and published values."""
    out = tmp_path / "published" / "paper"
    out.mkdir(parents=True)
    header = ["dataset", "synthesizer", "status", "F3 ratio", "F3 ratio, published", "DCR share",
              "DCR share, published", "fit s"]
    rows = []
    for d, dataset in enumerate(["alpha", "beta"]):
        rows.append([dataset, "holdout", "2 ok", "1.000", "1.000", "0.500", "0.500", "0.0"])
        rows.append([dataset, "sp0", status, "", f"{2.5 + d:.3f}", "", "0.7", ""])
        rows.append([dataset, "sp", status, "", f"{1.5 + d:.3f}", "", "0.6", ""])
        for k, name in enumerate(["a", "b", "c"]):  # fresh a<b<c; published the same order on alpha, reversed on beta
            pub = [1.1, 2.2, 3.3][k] if d == 0 else [3.3, 2.2, 1.1][k]
            rows.append([dataset, name, "2 ok", f"{2.0 + k:.3f}", f"{pub:.3f}", "0.5", "0.5", "1.0"])
    with (out / "leaderboard.csv").open("w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows([header, *rows])
    (out / "provenance.json").write_text(json.dumps({"study": "paper", "tables": [
        {"file": "leaderboard.csv", "title": "t", "command": "holdbench run paper", "run_commit": "05f5b49",
         "machine": "m", "date": "2026-01-01", "source": "s"}]}))
    return out


def test_the_script_takes_fresh_values_from_the_cells_and_published_ones_from_the_leaderboard(tmp_path):
    from tests.benchmark.conftest import build_study, fake_metrics

    study = build_study(tmp_path / "results", name="paper", synthesizers=["sp0", "sp"])
    out = _published(tmp_path, "1 skipped")
    board = _rows(out / "leaderboard.csv")
    doc = _script().write(study.path, out, machine_text="test machine")
    assert [t["file"] for t in doc["tables"]] == ["leaderboard.csv", "fresh_rows.csv", "spearman.csv"]
    assert doc["tables"][1]["run_commit"] == "abc123" and doc["tables"][1]["machine"] == "test machine"
    assert _rows(out / "leaderboard.csv") == board  # the committed run's table is not touched
    fresh = _rows(out / "fresh_rows.csv")
    assert sorted((r["dataset"], r["synthesizer"]) for r in fresh) == \
        [("alpha", "sp"), ("alpha", "sp0"), ("beta", "sp"), ("beta", "sp0")]
    for d, dataset in enumerate(["alpha", "beta"]):
        r = next(r for r in fresh if r["dataset"] == dataset and r["synthesizer"] == "sp")
        f3 = [fake_metrics(d, 1, seed)["F3_ratio"] for seed in (0, 1)]
        assert r["F3 ratio"] == f"{sum(f3) / 2:.3f}" and r["status"] == "2 ok"
        assert r["F3 ratio, published"] == f"{1.5 + d:.3f}" and r["DCR share, published"] == "0.6"
    for s in _rows(out / "spearman.csv"):
        mine = [r for r in board if r["dataset"] == s["dataset"]]
        with_fresh = [r for r in mine if not r["synthesizer"].startswith("sp")] + \
            [r for r in fresh if r["dataset"] == s["dataset"]]
        assert _rho(with_fresh) == (5, s["Spearman rho of F3 ratio"])
        assert _rho(mine) == (3, s["Spearman rho of F3 ratio, without the fresh rows"])
    assert [s["Spearman rho of F3 ratio, without the fresh rows"] for s in _rows(out / "spearman.csv")] == \
        ["1.000", "-1.000"]


def test_the_script_refuses_a_cell_the_committed_run_already_has(tmp_path):
    from tests.benchmark.conftest import build_study

    study = build_study(tmp_path / "results", name="paper", synthesizers=["sp0", "sp"])
    out = _published(tmp_path, "1 ok")
    with pytest.raises(ValueError, match=r"alpha/sp0: leaderboard.csv's row is '1 ok', not skipped"):
        _script().write(study.path, out, machine_text="m")
