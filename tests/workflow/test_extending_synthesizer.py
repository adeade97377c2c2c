"""docs/extending/synthesizer.md followed as written: the class on PYTHONPATH and the YAMLs on the
config search path, all outside the checkout; a study run with `holdbench run` computes only the new
cells, and each cell records the file its configs came from."""

from __future__ import annotations

import importlib.util
import json

import pandas as pd
import pytest

from tests.docs_blocks import block
from tests.workflow.recipes import bash, cells, write

PAGE = "docs/extending/synthesizer.md"


def _files(home):
    return write(home,
                 block("docs/extending/synthesizer.md", "# ~/holdbench-code/independent.py"),
                 block("docs/extending/synthesizer.md", "# ~/holdbench-conf/synthesizer/independent.yaml"),
                 block("docs/extending/synthesizer.md", "# ~/holdbench-conf/study/independent_study.yaml"))


def _exports() -> str:
    return block("docs/extending/synthesizer.md", "export PYTHONPATH=$HOME/holdbench-code            # your modules: `_target_: independent.…` imports from here")


def _commands() -> str:
    return block("docs/extending/synthesizer.md", "holdbench validate independent_study")


def test_the_page_class_keeps_marginals_and_the_study_validates(tmp_path):
    """Quick tier: the page's class fits and samples the demo table reproducibly, and `holdbench
    validate` (the page's first command) accepts the study from outside the checkout."""
    from holdbench.benchmark.data.demo import make_demo

    files = _files(tmp_path)
    spec = importlib.util.spec_from_file_location("independent_page", files["holdbench-code/independent.py"])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    train = make_demo(1000, seed=0)
    synth = module.IndependentMarginals()
    synth.fit(train, None)
    out = synth.sample(500, seed=3)
    assert list(out.columns) == list(train.columns) and len(out) == 500
    pd.testing.assert_frame_equal(out, synth.sample(500, seed=3))
    assert set(out["region"].dropna()) <= set(train["region"].dropna())

    validate = _commands().splitlines()[0]
    proc = bash(_exports() + "\n" + validate, tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "independent" in proc.stdout


@pytest.mark.slow
def test_the_page_study_runs_and_only_the_new_cells_compute(tmp_path):
    files = _files(tmp_path)
    study = files["holdbench-conf/study/independent_study.yaml"]
    page_study = study.read_text()
    # first the study without the new synthesizer, then as the page writes it
    study.write_text(page_study.replace("synthesizers: [independent, flip10, holdout]",
                                        "synthesizers: [flip10, holdout]"))
    first = bash(_exports() + "\nholdbench run independent_study --cores 2 --no-track", tmp_path)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    before = cells(tmp_path, "independent_study")
    assert set(before) == {"demo/seed0/flip10", "demo/seed0/holdout"}
    study.write_text(page_study)
    second = bash(_exports() + "\n" + _commands(), tmp_path)
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
    after = cells(tmp_path, "independent_study")
    new = after["demo/seed0/independent"]
    assert new["status"] == "ok", new
    # the old cells were reused, not recomputed
    assert {k: after[k]["wall_seconds"] for k in before} == {k: v["wall_seconds"] for k, v in before.items()}
    assert new["config"]["synthesizer"] == {"_target_": "independent.IndependentMarginals", "replace": True}
    assert new["config_files"] == {
        "synthesizer": str((tmp_path / "holdbench-conf/synthesizer/independent.yaml").resolve()),
        "dataset": "conf/dataset/demo.yaml", "metrics": "conf/metrics/demo.yaml"}
    root = tmp_path / "results" / "independent_study" / "demo" / "seed0"
    f3 = {s: json.loads((root / s / "metrics.json").read_text())["F3_ratio"] for s in ("independent", "flip10")}
    assert f3["independent"] > f3["flip10"], f"independent columns must lose joint structure: {f3}"
    assert "independent" in (tmp_path / "results" / "independent_study" / "leaderboard.md").read_text()
