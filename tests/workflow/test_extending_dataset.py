"""docs/extending/dataset.md followed as written: the table, the dataset YAML and the study outside the
checkout (config search path); `holdbench load` prints what the page says, and the study runs."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.docs_blocks import REPO, block
from tests.workflow.recipes import bash, cells, write


def _exports() -> str:
    return block("docs/extending/dataset.md", "export HOLDBENCH_CONFIG_PATH=$HOME/holdbench-conf  # your YAMLs, beside the shipped ones (as PATH: dir1:dir2)")


def _setup(home) -> dict:
    table = block("docs/extending/dataset.md", "python3 - <<'EOF'")
    proc = bash(_exports() + "\n" + table, home, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return write(home, block("docs/extending/dataset.md", "# ~/holdbench-conf/dataset/visits.yaml"),
                 block("docs/extending/dataset.md", "# ~/holdbench-conf/study/visits_study.yaml"))


def test_the_page_dataset_loads_as_the_page_says(tmp_path):
    _setup(tmp_path)
    assert len(pd.read_csv(tmp_path / "data" / "visits.csv")) == 4000
    proc = bash(_exports() + "\n" + block("docs/extending/dataset.md", "holdbench load visits"), tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    # the line the page quotes (children counted categorical through the override)
    assert proc.stdout.startswith("visits: 4,000 rows x 11 columns (5 categorical, 6 numeric)"), proc.stdout
    page = (REPO / "docs/extending/dataset.md").read_text()
    assert "visits: 4,000\nrows x 11 columns (5 categorical, 6 numeric)" in page


@pytest.mark.slow
def test_the_page_study_runs_on_the_users_table(tmp_path):
    files = _setup(tmp_path)
    run = block("docs/extending/dataset.md", "holdbench run visits_study --cores 2 --no-track")
    proc = bash(_exports() + "\n" + run, tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    done = cells(tmp_path, "visits_study")
    assert set(done) == {f"visits/seed0/{s}" for s in ("cart", "flip10", "flip90", "holdout")}
    for cell, status in done.items():
        assert status["status"] == "ok", (cell, status)
        assert status["config_files"]["dataset"] == str(files["holdbench-conf/dataset/visits.yaml"].resolve())
        assert status["config"]["split"]["dataset"]["path"] == "~/data/visits.csv"
    board = pd.read_csv(tmp_path / "results" / "visits_study" / "leaderboard.csv")
    assert set(board["synthesizer"]) == {"cart", "flip10", "flip90", "holdout"}
