"""Sharded evaluation through the real workflow (issue 15, item 2): evaluate_shards=3 runs 3
evaluate_shard jobs per cell whose merge gives byte-identical metrics.json and marginals.csv;
a bad evaluate_shards is refused when the study is read (before any job)."""

from __future__ import annotations

import pytest

from tests.workflow.helpers import cells, env_for, jobs_run, run_study

CELLS = ("demo/seed0/cart", "demo/seed0/flip50", "demo/seed0/holdout")
BASE = "synthesizers=[cart,flip50,holdout],seeds=[0],n_synthetic=400,metrics=paper"  # paper: F1-F3 and DCR only, fast


TARGETS = [f"results/demo/{c}/metrics.json" for c in CELLS]  # the cells only: no leaderboard, report


def _outputs(root) -> dict[str, bytes]:
    return {f"{c}/{name}": (root / c / name).read_bytes() for c in CELLS for name in ("metrics.json", "marginals.csv")}


@pytest.mark.slow
def test_sharded_study_equals_unsharded_byte_for_byte(tmp_path):
    env = env_for(tmp_path)
    root = tmp_path / "results" / "demo"
    plain = run_study(tmp_path, "demo", *TARGETS, env=env, config={"study_overrides": BASE})
    assert plain.returncode == 0, plain.stderr[-3000:]
    assert jobs_run(plain, "evaluate") == 3 and jobs_run(plain, "evaluate_shard") == 0
    unsharded = _outputs(root)

    sharded = run_study(tmp_path, "demo", *TARGETS, env=env, config={"study_overrides": f"{BASE},evaluate_shards=3"})
    assert sharded.returncode == 0, sharded.stderr[-3000:]
    # the split and the synthetic tables are reused; every cell is evaluated again, in 3 shard jobs each
    assert jobs_run(sharded, "generate") == 0
    assert jobs_run(sharded, "evaluate_shard") == 9 and jobs_run(sharded, "evaluate") == 3
    assert "rule evaluate_shard:" in sharded.stdout + sharded.stderr
    status = cells(tmp_path, "demo")
    assert {c: status[c]["status"] for c in CELLS} == dict.fromkeys(CELLS, "ok")
    assert _outputs(root) == unsharded
    for c in CELLS:  # the partial results are temporary
        assert not list((root / c / "shards").glob("*.npz"))
        assert (root / "logs" / c.rsplit("/", 1)[0] / f"{c.rsplit('/', 1)[1]}.evaluate_shard0.log").is_file()


@pytest.mark.parametrize("value", ["0", "-2", "2.5", "3.0", "true"])
def test_bad_evaluate_shards_is_refused(value):
    from holdbench.benchmark.config import ConfigError
    from holdbench.benchmark.workflow.study import load_study

    with pytest.raises(ConfigError, match="evaluate_shards"):
        load_study("demo", [f"evaluate_shards={value}"])


def test_evaluate_shards_defaults_to_one():
    from holdbench.benchmark.workflow.study import load_study

    assert load_study("demo").evaluate_shards == 1
    assert load_study("demo", ["evaluate_shards=4"]).evaluate_shards == 4
