"""The README's "Add a metric" example, run as written: by hand on a tiny table, through
`holdbench evaluate`, and through the workflow (only evaluations rerun, nothing is refitted)."""

from __future__ import annotations

import importlib.util
import json
import sys

import pandas as pd
import pytest

from holdbench.metrics import evaluate, paper_families
from tests.workflow.helpers import env_for, jobs_run, make_conf, run_study
from tests.workflow.test_readme_example import _block

STUDY = ("name: met\ndatasets: [demo]\nsynthesizers: [flip10, holdout]\nseeds: [0]\nn_synthetic: 500\n"
         "metrics: {metrics}\ntimeout_seconds: 120\nmemory_gb: 4\n")


@pytest.fixture()
def support(tmp_path, monkeypatch):
    """The README's module, importable as `support` from a temp dir (not as part of the repo)."""
    (tmp_path / "ext").mkdir()
    (tmp_path / "ext" / "support.py").write_text(_block("python", "# metrics/support.py"))
    monkeypatch.syspath_prepend(str(tmp_path / "ext"))
    spec = importlib.util.spec_from_file_location("support", tmp_path / "ext" / "support.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["support"] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("support", None)


def test_readme_metric_by_hand(support):
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


@pytest.mark.slow
def test_readme_metric_in_the_workflow(tmp_path):
    ext = tmp_path / "ext"
    ext.mkdir()
    (ext / "support.py").write_text(_block("python", "# metrics/support.py"))
    entry = _block("yaml", "# conf/metrics/default.yaml").splitlines()[1].replace("metrics.support.", "support.")
    conf = make_conf(tmp_path, {"met": STUDY.format(metrics="demo")})
    env = env_for(tmp_path, conf)
    env["PYTHONPATH"] = f"{ext}:{env['PYTHONPATH']}"
    first = run_study(tmp_path, "met", env=env)
    assert first.returncode == 0, first.stderr[-3000:]
    # add the metric as the README says: one entry under `families:` (here in a config inheriting demo)
    (conf / "metrics" / "demo_plus.yaml").write_text("defaults:\n  - demo\n  - _self_\nfamilies:\n" + entry + "\n")
    (conf / "study" / "met.yaml").write_text(STUDY.format(metrics="demo_plus"))
    second = run_study(tmp_path, "met", env=env)
    assert second.returncode == 0, second.stderr[-3000:]
    assert jobs_run(second, "generate") == 0 and jobs_run(second, "evaluate") == 2
    root = tmp_path / "results" / "met"
    m = json.loads((root / "demo/seed0/flip10/metrics.json").read_text())
    assert 0 < m["category_coverage"] <= 1 and m["out_of_range_share"] == 0  # flips draw T's own values
    board = pd.read_csv(root / "leaderboard.csv")
    assert {"category_coverage", "out_of_range_share", "F3_ratio"} <= set(board.columns)
    md = (root / "leaderboard.md").read_text()
    assert "**category coverage** (`category_coverage`, higher is better)" in md
