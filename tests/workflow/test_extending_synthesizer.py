"""The README's "Add a synthesizer" example, run as written: only the new cells compute."""

from __future__ import annotations

import json
import re

import pytest

from tests.workflow.helpers import REPO, cells, env_for, jobs_run, make_conf, run_study

pytestmark = pytest.mark.slow

STUDY = ("name: ext\ndatasets: [demo]\nsynthesizers: [{synths}]\nseeds: [0]\nn_synthetic: 500\n"
         "metrics: demo\ntimeout_seconds: 120\nmemory_gb: 4\n")


def _block(lang: str, first_line: str) -> str:
    readme = (REPO / "README.md").read_text()
    for body in re.findall(rf"```{lang}\n(.*?)```", readme, flags=re.DOTALL):
        if body.startswith(first_line):
            return body
    raise AssertionError(f"README has no {lang} block starting with {first_line!r}")


def test_readme_synthesizer_example_runs_and_only_its_cells_compute(tmp_path):
    code = _block("python", "# synthesizers/independent.py")
    yaml = _block("yaml", "# conf/synthesizer/independent.yaml")
    # the module goes on PYTHONPATH under its own name instead of into the repo's package
    (tmp_path / "ext").mkdir()
    (tmp_path / "ext" / "independent.py").write_text(code)
    yaml = yaml.replace("synthesizers.independent.", "independent.")
    conf = make_conf(tmp_path, {"ext": STUDY.format(synths="flip10, holdout")}, {"independent": yaml})
    env = env_for(tmp_path, conf)
    env["PYTHONPATH"] = f"{tmp_path / 'ext'}:{env['PYTHONPATH']}"
    first = run_study(tmp_path, "ext", env=env)
    assert first.returncode == 0, first.stderr[-3000:]
    before = cells(tmp_path, "ext")
    (conf / "study" / "ext.yaml").write_text(STUDY.format(synths="flip10, holdout, independent"))
    second = run_study(tmp_path, "ext", env=env)
    assert second.returncode == 0, second.stderr[-3000:]
    assert jobs_run(second, "generate") == 1 and jobs_run(second, "evaluate") == 1
    after = cells(tmp_path, "ext")
    new = after["demo/seed0/independent"]
    assert new["status"] == "ok", new
    assert {k: after[k]["wall_seconds"] for k in before} == {k: v["wall_seconds"] for k, v in before.items()}
    m = json.loads((tmp_path / "results/ext/demo/seed0/independent/metrics.json").read_text())
    flip = json.loads((tmp_path / "results/ext/demo/seed0/flip10/metrics.json").read_text())
    assert m["F3_ratio"] > flip["F3_ratio"], "independent columns must lose joint structure"
