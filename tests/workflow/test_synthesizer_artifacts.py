"""A synthesizer's own tables (Synthesizer.artifacts(); here bq_cart's tuning trace) through the
workflow: moved from the generate attempt's scratch into the cell, checksummed in generate.json
and status.json, plotted in the cell and the report, and kept when only the evaluation reruns.

(They were once written into the scratch dir and lost with it, and a re-evaluation deleted every
table it had not written itself.)
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd
import pytest

from tests.workflow.helpers import cells, env_for, jobs_run, make_conf, run_study

pytestmark = pytest.mark.slow

STUDY = ("name: bqtrace\ndatasets: [demo]\nsynthesizers: [bq_cart]\nseeds: [0]\nn_synthetic: 500\n"
         "split: random\npreset: smoke\ntimeout_seconds: 600\nmemory_gb: 3\nmetrics: demo\n")
TRACE = "tuning_trace.csv"


def _sha256(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_tuning_trace_reaches_the_cell_and_survives_a_reevaluation(tmp_path):
    env = env_for(tmp_path, make_conf(tmp_path, {"bqtrace": STUDY}))
    proc = run_study(tmp_path, "bqtrace", env=env, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    cell_dir = tmp_path / "results/bqtrace/demo/seed0/bq_cart"
    status = cells(tmp_path, "bqtrace")["demo/seed0/bq_cart"]
    assert status["status"] == "ok", status

    trace = pd.read_csv(cell_dir / TRACE)
    # the smoke preset: one optimiser seed x (2 random starts + 2 suggestions)
    assert len(trace) == 4 and list(trace["phase"]) == ["random", "random", "bayes", "bayes"]
    # the trace against its own objective: -(1 - mean pMSE ratio)^2; the kept parameters are the
    # row marked chosen (the best after re-scoring the finalists on new sets), and exactly one is
    np.testing.assert_allclose(trace["objective"], -(1.0 - trace["mean_pmse_ratio"]) ** 2, rtol=1e-12)
    gen = json.loads((cell_dir / "generate.json").read_text())
    assert int(trace["chosen"].sum()) == 1
    best = trace.loc[trace["chosen"].astype(bool)].iloc[0]
    assert gen["synthesizer_info"]["best_params"]["K"] == best["K"]
    # checksummed where the cell's files are
    sha = _sha256(cell_dir / TRACE)
    assert gen["outputs"][TRACE]["sha256"] == sha
    assert status["outputs"][TRACE]["sha256"] == sha
    assert (cell_dir / "tuning_trace.png").stat().st_size > 0
    assert "tuning_trace" in (tmp_path / "results/bqtrace/report.html").read_text()

    # other metrics: only the evaluation reruns, and the trace is still there, unchanged
    again = run_study(tmp_path, "bqtrace", env=env, config={"study_overrides": "metrics=paper"}, timeout=900)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert jobs_run(again, "generate") == 0 and jobs_run(again, "evaluate") == 1, again.stdout[-3000:]
    assert _sha256(cell_dir / TRACE) == sha
    status = cells(tmp_path, "bqtrace")["demo/seed0/bq_cart"]
    assert status["status"] == "ok" and status["outputs"][TRACE]["sha256"] == sha
