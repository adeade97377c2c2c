"""The sequential study path end to end through Snakemake on a reduced baseball (400 subjects, T = 200):
status, metrics and artifacts of every cell, the baseline invariants, leaderboard, report figures,
MLflow, gates; bad input files stop the run before any job."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
import yaml

from holdbench.benchmark.cli import main
from tests.sequential.small_dataset import write_small_baseball
from tests.workflow.helpers import cells, env_for, make_conf, run_study

pytestmark = pytest.mark.slow
SYNTHS = ["seq_holdout", "seq_copy", "seq_flip50", "seq_indep_events", "seq_swap_sequences", "seq_ar_cart"]
N_SUBJECTS = 400
STUDY = f"""name: seqsmall
datasets: [baseball_small]
synthesizers: [{", ".join(SYNTHS)}]
seeds: [0]
timeout_seconds: 600
memory_gb: 6
"""


def _conf(tmp, loaded, edit=None):
    cfg = write_small_baseball(loaded["baseball"], tmp / "data", N_SUBJECTS)
    if edit:
        edit(cfg)
    conf = make_conf(tmp, studies={"seqsmall": STUDY})
    (conf / "dataset" / "baseball_small.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    return conf


@pytest.fixture(scope="module")
def run(loaded, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("seqwf")
    env = env_for(tmp, _conf(tmp, loaded))
    env["MLFLOW_TRACKING_URI"] = f"sqlite:///{tmp}/mlflow.db"
    proc = run_study(tmp, "seqsmall", env=env, track=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    root = tmp / "results" / "seqsmall"
    metrics = {s: json.loads((root / f"baseball_small/seed0/{s}/metrics.json").read_text()) for s in SYNTHS}
    return tmp, env, proc, root, metrics


def test_every_cell_ok_with_its_files(run):
    tmp, _, _, root, m = run
    got = cells(tmp, "seqsmall")
    assert {k: v["status"] for k, v in got.items()} == {f"baseball_small/seed0/{s}": "ok" for s in SYNTHS}
    split = root / "baseball_small/seed0"
    for name in ("train_subjects", "train_events", "holdout_subjects", "holdout_events"):
        assert (split / f"{name}.parquet").is_file()
    n_train = len(pd.read_parquet(split / "train_subjects.parquet"))
    assert n_train == N_SUBJECTS // 2
    for s in SYNTHS:
        cell = split / s
        status = got[f"baseball_small/seed0/{s}"]
        assert {"synthetic_subjects.parquet", "synthetic_events.parquet"} <= set(status["outputs"])
        assert status["evaluate_seconds"] > 0 and status["fit_seconds"] is not None
        assert (root / "logs/baseball_small/seed0" / f"{s}.generate.log").is_file()
        assert (root / "benchmarks/baseball_small/seed0" / f"{s}.evaluate.tsv").is_file()
        for table in ("seq_length_histogram", "seq_coherence", "seq_dcr_histogram", "subject_nndr_distribution"):
            assert (cell / f"{table}.csv").is_file(), (s, table)
        # S has |T| subjects (H's for the holdout reference row)
        n_subjects = len(pd.read_parquet(cell / "synthetic_subjects.parquet"))
        assert n_subjects == m[s]["n_subjects_synthetic"] == (N_SUBJECTS - n_train if s == "seq_holdout" else n_train)
        for key in ("seq_F3_ratio", "seq_coherence_ratio", "seq_length_ratio", "seq_dcr_share", "seq_ims",
                    "subject_ims_synthetic", "subject_legal_pass_all_holdout"):
            assert key in m[s], (s, key)
        assert not any(k.startswith("seconds_") for k in m[s])  # timings live in status.json


def test_baseline_invariants(run):
    m = run[4]
    ref = m["seq_holdout"]
    # the holdout reference row is S = H: every ratio is 1 by construction
    assert ref["seq_F3_ratio"] == ref["seq_coherence_ratio"] == ref["seq_length_ratio"] == 1.0
    # H's subject DCR share: 0.5 in expectation; with |T| = 200 its standard error is sqrt(.25/200) = 0.035,
    # so 0.1 is ~3 standard errors
    assert abs(ref["seq_dcr_share"] - 0.5) < 0.1
    assert m["seq_copy"]["seq_ims"] == 1.0 and m["seq_copy"]["seq_dcr_share"] > 0.97
    # events drawn independently of their neighbours: the (t, t+1) pairs are far from T's
    assert m["seq_indep_events"]["seq_coherence_ratio"] > 2
    assert m["seq_indep_events"]["seq_lengths_copied"] is True
    # real sequences on other real subjects: caught per subject by the DCR share and the attacks
    assert m["seq_swap_sequences"]["seq_dcr_share"] > 0.9 and m["seq_swap_sequences"]["subject_mia_auc_max"] > 0.75
    # flip50 perturbs every table cell: fidelity and coherence both worse than H's
    assert m["seq_flip50"]["seq_F3_ratio"] > 1.2 and m["seq_flip50"]["seq_coherence_ratio"] > 1.2
    # ar_cart draws new sequences: no subject vector equals a training one
    assert m["seq_ar_cart"]["seq_ims"] < 0.05 and math.isfinite(m["seq_ar_cart"]["seq_F3_ratio"])


def test_leaderboard_report_and_mlflow_show_the_sequential_cells(run):
    root = run[3]
    board = pd.read_csv(root / "leaderboard.csv")
    assert list(board["synthesizer"]) == SYNTHS
    for col in ("seq_F3_ratio", "seq_coherence_ratio", "seq_length_ratio", "seq_dcr_share", "seq_dcr_share_ci_low",
                "subject_mia_auc_max", "subject_gower_dcr_share"):
        assert col in board.columns, col
    md = (root / "leaderboard.md").read_text()
    assert "Coherence ratio" in md and "Subject DCR share" in md
    html = (root / "report.html").read_text()
    assert (root / "plots/coherence_baseball_small.png").stat().st_size > 0
    assert "coherence_baseball_small.png" in html
    for s in SYNTHS:
        assert (root / f"baseball_small/seed0/{s}/seq_length_histogram.png").stat().st_size > 0
    for fig in ("seq_dcr_histogram", "subject_nndr_distribution", "subject_mia_roc"):
        assert (root / f"baseball_small/seed0/seq_copy/{fig}.png").stat().st_size > 0
    assert html.count("seq_length_histogram.png") == len(SYNTHS)
    assert "conf/gates/sequential.yaml" in html
    tracked = json.loads((root / "mlflow.json").read_text())
    assert len(tracked["runs"]) == len(SYNTHS)


def test_gates_give_verdicts(run, monkeypatch, capsys):
    tmp, env, *_ = run
    monkeypatch.setenv("HOLDBENCH_CONF_DIR", env["HOLDBENCH_CONF_DIR"])
    assert main(["check", str(tmp / "results/seqsmall")]) == 1
    out = capsys.readouterr().out
    assert "sequential.yaml on 6 cell(s)" in out
    rows = {tuple(line.split()[:2]): line for line in out.splitlines() if line.startswith("baseball_small/")}
    assert "FAIL" in rows[("baseball_small/seed0/seq_copy", "subject_dcr_distribution")]
    assert "FAIL" in rows[("baseball_small/seed0/seq_swap_sequences", "subject_dcr_distribution")]
    # a generator of new sequences passes D2.2's subject-level DCR test, which both leaks fail
    assert " pass " in rows[("baseball_small/seed0/seq_ar_cart", "subject_dcr_distribution")]
    assert "n/a" in rows[("baseball_small/seed0/seq_holdout", "event_accuracy")]


def test_rerun_does_nothing(run):
    tmp, env, *_ = run
    proc = run_study(tmp, "seqsmall", "-n", env=env, track=True)
    assert proc.returncode == 0 and "Nothing to be done" in proc.stdout + proc.stderr


def test_bad_input_stops_the_run_before_any_job(loaded, tmp_path):
    def orphan(cfg):
        path = cfg["sequential"]["events"]["file"]
        events = pd.read_csv(path)
        pd.concat([events, events.head(1).assign(playerID="nobody01")]).to_csv(path, index=False)

    env = env_for(tmp_path, _conf(tmp_path, loaded, orphan))
    proc = run_study(tmp_path, "seqsmall", env=env, timeout=120)
    assert proc.returncode != 0
    assert "baseball_small_events.csv: column 'playerID': 1 event row(s) have a key with no subject" in proc.stderr
    assert not (tmp_path / "results/seqsmall/baseball_small").exists()


def test_damaged_sequential_files_are_found_before_a_rerun(run, tmp_path):
    """The integrity scan knows a sequential split's and cell's files: a truncated one is recomputed."""
    import shutil

    from holdbench.benchmark.layout import StudyLayout
    from holdbench.benchmark.workflow.integrity import scan_cell, scan_split

    root = tmp_path / "seqsmall"
    shutil.copytree(run[3], root)
    lay = StudyLayout(root)
    snap = {p.stem: json.loads(p.read_text()) for p in lay.config_dir.glob("*.json")}
    split, synth, metrics = snap["split-baseball_small"], snap["synth-seq_copy"], snap["metrics"]
    limits = {k: snap["run"][k] for k in ("timeout_seconds", "memory_gb")}
    assert scan_split(lay, "baseball_small", 0, sequential=True) is None
    assert scan_cell(lay, "baseball_small", 0, "seq_copy", split, synth, metrics, limits, None) is None
    (lay.cell_dir("baseball_small", 0, "seq_copy") / "synthetic_events.parquet").write_bytes(b"PAR1")
    repair = scan_cell(lay, "baseball_small", 0, "seq_copy", split, synth, metrics, limits, None)
    assert repair.job == "generate" and "synthetic_events.parquet" in repair.reason
    lay.pair("baseball_small", 0, "holdout")["events"].unlink()
    repair = scan_split(lay, "baseball_small", 0, sequential=True)
    assert repair.job == "split" and repair.reason == "holdout_events.parquet missing"
