"""A cell's metrics do not depend on how many cores the job was given.

Snakemake exports OMP_NUM_THREADS (and OpenBLAS's, MKL's) = the job's threads, which is the
metrics' n_jobs capped by --cores; and OpenBLAS splits a product differently with 2 threads
than with 1, which changes the last digit of e.g. the pMSE's logistic fit on the demo table
(ratio 1.1299658877003196 vs ...2137). The evaluate child and the evaluate_shard jobs therefore
pin BLAS to one thread: a cell evaluated with --cores 2 and re-evaluated with --cores 1,
plainly or in shards, has the same bytes of metrics.json.
"""

from __future__ import annotations

import pytest

from tests.workflow.helpers import cells, env_for, jobs_run, make_conf, run_study

pytestmark = pytest.mark.slow

CELL = "demo/seed0/cart"
# the demo metrics (utility: pMSE, TSTR, CI overlap; the privacy panel, legal, disclosure,
# attacks) with 2 joblib workers, so that the evaluate job asks for 2 threads
METRICS = "defaults:\n  - demo\n  - _self_\nn_jobs: 2\n"
BASE = "synthesizers=[cart],seeds=[0],n_synthetic=2000,metrics=demo2"
TARGET = f"results/demo/{CELL}/metrics.json"


def test_metrics_are_the_same_bytes_with_one_or_two_cores(tmp_path):
    conf = make_conf(tmp_path)
    (conf / "metrics" / "demo2.yaml").write_text(METRICS)
    env = env_for(tmp_path, conf)
    first = run_study(tmp_path, "demo", TARGET, "--cores", "2", env=env, config={"study_overrides": BASE})
    assert first.returncode == 0, first.stderr[-3000:]
    assert cells(tmp_path, "demo")[CELL]["status"] == "ok"
    metrics = tmp_path / TARGET
    expected = metrics.read_bytes()
    assert b"pmse_ratio" in expected and b"ci_overlap_mean" in expected

    again = run_study(tmp_path, "demo", TARGET, "--cores", "1", "--forcerun", "evaluate", env=env,
                      config={"study_overrides": BASE})
    assert again.returncode == 0, again.stderr[-3000:]
    assert jobs_run(again, "generate") == 0 and jobs_run(again, "evaluate") == 1
    assert metrics.read_bytes() == expected

    sharded = run_study(tmp_path, "demo", TARGET, "--cores", "1", env=env,
                        config={"study_overrides": f"{BASE},evaluate_shards=2"})
    assert sharded.returncode == 0, sharded.stderr[-3000:]
    assert jobs_run(sharded, "evaluate_shard") == 2 and jobs_run(sharded, "evaluate") == 1
    assert metrics.read_bytes() == expected
