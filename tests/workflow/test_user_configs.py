"""A study whose dataset, synthesizer and study YAMLs all live outside the checkout, with the user's
synthesizer class on PYTHONPATH, run by Snakemake itself with the search path as the workflow's
`config_path` key (no HOLDBENCH_CONFIG_PATH in the environment): every job finds the user's configs,
and each cell records which file its configs came from."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tests.workflow.helpers import cells, env_for, run_study

pytestmark = pytest.mark.slow

MODULE = '''
import numpy as np
import pandas as pd

from holdbench.synthesizers.base import Synthesizer


class Shuffle(Synthesizer):
    """Each column of T resampled on its own (with replacement)."""

    def __init__(self, fraction: float = 1.0):
        self.fraction = fraction

    def fit(self, train, ctx):
        self.train = train

    def sample(self, n, seed):
        rng = np.random.default_rng(seed)
        return pd.DataFrame({c: rng.choice(self.train[c].to_numpy(), size=n) for c in self.train.columns})
'''


def test_a_study_entirely_outside_the_checkout_runs_through_the_workflow(tmp_path):
    code, mine = tmp_path / "code", tmp_path / "my configs"  # a space in the path, as a user's may have
    for d in (code, mine / "dataset", mine / "synthesizer", mine / "study"):
        d.mkdir(parents=True)
    (code / "usershuffle.py").write_text(MODULE)
    # a column of ISO dates: read as days since 1970-01-01 through the whole workflow
    # and a record number, left out by the config's drop
    rows = "\n".join(f"R{i},{i % 11},{'abc'[i % 3]},{(i * 7) % 5},2024-03-{1 + i % 28:02d},{i % 2}" for i in range(600))
    (mine / "dataset" / "table.csv").write_text("rid,x,c,z,d,y\n" + rows + "\n")
    (mine / "dataset" / "mytable.yaml").write_text("source: file\npath: table.csv\ntarget: y\ndrop: [rid]\n")
    (mine / "synthesizer" / "shuffle.yaml").write_text("_target_: usershuffle.Shuffle\ncost: cheap\n")
    (mine / "study" / "mine.yaml").write_text(
        "name: mine\ndatasets: [mytable]\nsynthesizers: [shuffle, holdout]\nseeds: [0]\nn_synthetic: 300\n"
        "metrics: demo\ntimeout_seconds: 300\nmemory_gb: 4\n")
    env = env_for(tmp_path)
    env.pop("HOLDBENCH_CONFIG_PATH", None)
    env.pop("HOLDBENCH_CONF_DIR", None)
    env["PYTHONPATH"] = f"{code}:{env['PYTHONPATH']}"
    proc = run_study(tmp_path, "mine", env=env, config={"config_path": str(mine)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    done = cells(tmp_path, "mine")
    assert set(done) == {"mytable/seed0/shuffle", "mytable/seed0/holdout"}
    for status in done.values():
        assert status["status"] == "ok", status
        assert status["config_files"]["dataset"] == str((mine / "dataset" / "mytable.yaml").resolve())
        assert status["config_files"]["metrics"] == "conf/metrics/demo.yaml"
        # the relative path was read beside the YAML, and the cell records the file it read
        assert status["config"]["split"]["dataset"]["path"] == str((mine / "dataset" / "table.csv").resolve())
    assert done["mytable/seed0/shuffle"]["config_files"]["synthesizer"] == \
        str((mine / "synthesizer" / "shuffle.yaml").resolve())
    assert done["mytable/seed0/shuffle"]["config"]["synthesizer"] == {"_target_": "usershuffle.Shuffle",
                                                                       "fraction": 1.0}
    assert done["mytable/seed0/holdout"]["config_files"]["synthesizer"] == "conf/synthesizer/holdout.yaml"
    split = json.loads((tmp_path / "results" / "mine" / "mytable" / "seed0" / "schema.json").read_text())
    assert split["dates"] == ["d"] and [c["name"] for c in split["columns"]] == ["x", "c", "z", "d", "y"]
    days = pd.read_parquet(tmp_path / "results" / "mine" / "mytable" / "seed0" / "shuffle" / "synthetic.parquet")["d"]
    assert days.dtype == float and days.min() >= 19783 and days.max() <= 19783 + 27  # 2024-03-01 is day 19,783
    report = (tmp_path / "results" / "mine" / "report.html").read_text()
    assert '<p class="dates">column(s) d: dates or times in T, read as days since 1970-01-01' in report
    study = json.loads((tmp_path / "results" / "mine" / "study.json").read_text())
    assert study["config_files"]["study"] == str((mine / "study" / "mine.yaml").resolve())
    # without the search path the study is unknown: nothing was found by accident
    proc = run_study(tmp_path, "mine", env=env)
    assert proc.returncode != 0 and "unknown study 'mine'" in proc.stderr
