"""docs/extending/metric.md followed as written: the family's module on PYTHONPATH, the metrics config
and the study on the config search path, all outside the checkout. By hand on a tiny table, through
`holdbench evaluate`, and through the workflow (switching a study to the new metrics config
evaluates every cell again and refits nothing)."""

from __future__ import annotations

import importlib.util
import json
import sys

import pandas as pd
import pytest

from holdbench.metrics import evaluate, paper_families
from tests.docs_blocks import block
from tests.workflow.recipes import bash, cells, write


def _files(home):
    return write(home,
                 block("docs/extending/metric.md", "# ~/holdbench-code/support.py"),
                 block("docs/extending/metric.md", "# ~/holdbench-conf/metrics/demo_support.yaml"),
                 block("docs/extending/metric.md", "# ~/holdbench-conf/study/support_study.yaml"))


def _exports() -> str:
    return block("docs/extending/metric.md", "export PYTHONPATH=$HOME/holdbench-code            # your modules: `_target_: support.…` imports from here")


@pytest.fixture()
def support(tmp_path, monkeypatch):
    """The page's module, importable as `support` from a scratch HOME (not as part of the repo)."""
    files = _files(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path / "holdbench-code"))
    spec = importlib.util.spec_from_file_location("support", files["holdbench-code/support.py"])
    module = importlib.util.module_from_spec(spec)
    sys.modules["support"] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("support", None)


def test_the_page_metric_by_hand(support):
    t = pd.DataFrame({"c": ["a", "a", "b", "c"], "x": [1.0, 2.0, 3.0, 4.0]})
    s = pd.DataFrame({"c": ["a", "a", "z", "b"], "x": [0.5, 2.0, 4.0, 9.0]})
    d = evaluate(t, t, s, {"c": "categorical", "x": "numeric"},
                 families=[*paper_families(), support.Support()]).to_dict()
    # T's categories a, b, c; S uses a and b: 2/3. S's x: 0.5 and 9.0 fall outside [1, 4]: 2/4.
    assert d["category_coverage"] == pytest.approx(2 / 3) and d["out_of_range_share"] == 0.5
    strict = evaluate(t, t, s, {"c": "categorical", "x": "numeric"}, families=[support.Support(min_count=2)])
    assert strict.to_dict()["category_coverage"] == 1.0  # only 'a' occurs twice in T
    none = evaluate(t[["x"]], t[["x"]], s[["x"]], {"x": "numeric"}, families=[support.Support()]).to_dict()
    assert none["category_coverage"] is None and none["out_of_range_share"] == 0.5  # NaN is null in JSON


def test_the_page_metrics_config_scores_files_with_holdbench_evaluate(tmp_path):
    from holdbench.benchmark.data.demo import make_demo

    _files(tmp_path)
    (tmp_path / "data").mkdir()
    t, h = make_demo(1200, seed=1), make_demo(1200, seed=2)
    s = t.copy()
    s.loc[:99, "income"] = t["income"].max() + 1.0  # 100 of S's 1,200 incomes above T's maximum
    for name, frame in (("T", t), ("H", h), ("S", s)):
        frame.to_csv(tmp_path / "data" / f"{name}.csv", index=False)
    run = block("docs/extending/metric.md", "holdbench evaluate --train $HOME/data/T.csv --holdout $HOME/data/H.csv --synthetic $HOME/data/S.csv --metrics demo_support --out $HOME/data/metrics.json")
    proc = bash(_exports() + "\n" + run, tmp_path, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    m = json.loads((tmp_path / "data" / "metrics.json").read_text())
    assert m["category_coverage"] == 1.0  # S's categories are T's own
    back = pd.read_csv(tmp_path / "data" / "S.csv")  # T's kinds: text categorical, the rest numeric
    values = sum(int(back[c].notna().sum()) for c in back.columns if back[c].dtype != object)
    assert m["out_of_range_share"] == pytest.approx(100 / values, rel=1e-12)
    assert "category coverage" in proc.stdout


@pytest.mark.slow
def test_the_page_study_adds_the_metric_without_refitting(tmp_path):
    files = _files(tmp_path)
    study = files["holdbench-conf/study/support_study.yaml"]
    page_study = study.read_text()
    study.write_text(page_study.replace("metrics: demo_support", "metrics: demo"))
    first = bash(_exports() + "\nholdbench run support_study --cores 2 --no-track", tmp_path)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    root = tmp_path / "results" / "support_study"
    synthetic = {c: (root / c / "synthetic.parquet").stat().st_mtime_ns for c in cells(tmp_path, "support_study")
                 if c.endswith(("flip10", "flip90"))}
    assert len(synthetic) == 2
    study.write_text(page_study)
    second = bash(_exports() + "\n" + block("docs/extending/metric.md", "holdbench validate support_study"),
                  tmp_path)
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
    after = cells(tmp_path, "support_study")
    assert {c: (root / c / "synthetic.parquet").stat().st_mtime_ns for c in synthetic} == synthetic  # not refitted
    for c, status in after.items():
        assert status["status"] == "ok", status
        assert status["config_files"]["metrics"] == str(
            (tmp_path / "holdbench-conf/metrics/demo_support.yaml").resolve())
    m = json.loads((root / "demo/seed0/flip10/metrics.json").read_text())
    assert 0 < m["category_coverage"] <= 1 and m["out_of_range_share"] == 0  # flips draw T's own values
    board = pd.read_csv(root / "leaderboard.csv")
    assert {"category_coverage", "out_of_range_share", "F3_ratio"} <= set(board.columns)
    md = (root / "leaderboard.md").read_text()
    assert "**category coverage** (`category_coverage`, higher is better)" in md
