"""A fabricated study directory, laid out exactly as the workflow writes it.

The leaderboard, plots, report and tracking tests read it; every number in it comes from
the small formulas below, so the tests derive what they expect from the same inputs
(`StudyFixture.metrics`) and never from the code under test.
2 datasets x 3 synthesizers (holdout included) x 2 seeds, with one error cell without
metrics, one skipped cell and one cell whose status.json is corrupt. Ok cells carry the
artifact tables the metric families write (marginals, dcr_histogram, nndr_distribution; one
cell each mia_roc, disclosure_curve, tuning_trace), except NO_DISTANCE_CELL, which lacks the
two distance tables.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

DATASETS = ["alpha", "beta"]
SYNTHS = ["holdout", "gauss", "ctgan"]
SEEDS = [0, 1]
ERROR_CELL = ("alpha", "ctgan", 1)
SKIPPED_CELL = ("beta", "gauss", 0)
CORRUPT_CELL = ("beta", "ctgan", 1)
ERROR_REASON = "RuntimeError: generator diverged | loss=nan <b>bold</b>"
SKIPPED_REASON = "needs R: rpy2 not installed"
COLUMNS = ["age", "job", "hours", "member"]
#: an ok cell whose families wrote no dcr_histogram / nndr_distribution (its figures must be absent)
NO_DISTANCE_CELL = ("alpha", "gauss", 1)
#: cells carrying the optional artifacts (one each)
MIA_CELL = ("alpha", "gauss", 0)
DISCLOSURE_CELL = ("alpha", "gauss", 0)
TUNING_CELL = ("beta", "ctgan", 0)
#: Hamming DCR counts at distances 0..4 per synthesizer index (120 records each): the holdout and
#: gauss rows have S as far from T as from H; ctgan's S sits at small distances to T (a leak)
DCR_COUNTS = {0: ([10, 30, 40, 30, 10], [10, 30, 40, 30, 10]),
              1: ([10, 30, 40, 30, 10], [10, 30, 40, 30, 10]),
              2: ([60, 40, 15, 5, 0], [5, 15, 40, 40, 20])}


@dataclass
class StudyFixture:
    path: Path
    name: str
    datasets: list[str]
    synthesizers: list[str]
    seeds: list[int]
    #: (dataset, synthesizer, seed) -> metrics.json content as written
    metrics: dict[tuple[str, str, int], dict[str, Any]] = field(default_factory=dict)
    #: (dataset, synthesizer, seed) -> status.json content as written (None when corrupt)
    status: dict[tuple[str, str, int], dict[str, Any] | None] = field(default_factory=dict)
    error_cell: tuple[str, str, int] = ERROR_CELL
    skipped_cell: tuple[str, str, int] = SKIPPED_CELL
    corrupt_cell: tuple[str, str, int] = CORRUPT_CELL
    error_reason: str = ERROR_REASON
    skipped_reason: str = SKIPPED_REASON
    columns: tuple[str, ...] = tuple(COLUMNS)

    @property
    def keys(self) -> list[tuple[str, str, int]]:
        """Every cell key in the order the leaderboard must list them."""
        return [(d, s, k) for d in self.datasets for s in self.synthesizers for k in self.seeds]

    def is_ok(self, key: tuple[str, str, int]) -> bool:
        return key not in (self.error_cell, self.skipped_cell, self.corrupt_cell)

    def cell_dir(self, dataset: str, synth: str, seed: int) -> Path:
        return self.path / dataset / f"seed{seed}" / synth


def fake_metrics(d: int, s: int, seed: int) -> dict[str, Any]:
    """Distinct, easy-to-recompute values for dataset index d, synthesizer index s."""
    f = [round(0.01 * (k + 1) * (d + 1) * (s + 1) + 0.003 * seed, 6) for k in range(3)]
    fh = [round(0.01 * (k + 1) * (d + 1) + 0.003 * seed, 6) for k in range(3)]
    share = round(0.5 + 0.05 * s + 0.01 * seed, 6)
    m: dict[str, Any] = {
        "F1": f[0], "F2": f[1], "F3": f[2],
        "F1_holdout": fh[0], "F2_holdout": fh[1], "F3_holdout": fh[2],
        "F1_ratio": f[0] / fh[0], "F2_ratio": f[1] / fh[1], "F3_ratio": f[2] / fh[2],
        "dcr_share": share, "dcr_share_ci_low": share - 0.02, "dcr_share_ci_high": share + 0.02,
        "dcr_share_pvalue": 0.25, "dcr_train_mean": 1.0 + 0.1 * s + seed, "dcr_holdout_mean": 1.5 + seed,
        "n_train": 80, "n_holdout": 80, "n_synthetic": 120, "n_closer_train": 60 + s,
        "n_closer_holdout": 50, "n_ties": 10 - s, "seconds_fidelity": 0.5, "seconds_privacy": 0.25,
        "ims_synthetic": 0.01 * s, "ims_holdout": 0.0, "bq_ims_pass": s == 0, "gower_dcr_share": None,
    }
    return m


def _table(rng: np.random.Generator, n: int, shift: float = 0.0) -> pd.DataFrame:
    return pd.DataFrame({
        "age": rng.integers(18, 80, n),
        "job": rng.choice(["clerk", "nurse", "smith", "pilot"], n, p=[0.4, 0.3, 0.2, 0.1]),
        "hours": np.round(rng.normal(40 + shift, 8, n), 1),
        "member": rng.random(n) < 0.3,
    })


def _marginals(rng: np.random.Generator) -> pd.DataFrame:
    rows = []
    for k in (1, 2, 3):
        for combo in itertools.combinations(COLUMNS, k):
            rows.append({"columns": " | ".join(combo), "k": k,
                         "tvd_synthetic": rng.uniform(0.05, 0.3), "tvd_holdout": rng.uniform(0.01, 0.1)})
    return pd.DataFrame(rows)


def dcr_histogram(s: int) -> pd.DataFrame:
    to_train, to_holdout = DCR_COUNTS[min(s, 2)]
    return pd.DataFrame({"distance": range(5), "to_train": to_train, "to_holdout": to_holdout})


def nndr_distribution(s: int) -> pd.DataFrame:
    """Quantiles of d1/d2: H's are uniform on [0, 1]; S's are q^(1+s), smaller for larger s."""
    q = np.round(np.linspace(0, 1, 101), 2)
    return pd.DataFrame({"quantile": q, "synthetic": q ** (1 + s), "holdout": q})


def _optional_artifacts(key: tuple[str, str, int]) -> dict[str, pd.DataFrame]:
    out = {}
    if key == MIA_CELL:
        out["mia_roc"] = pd.DataFrame({"attack": ["dcr"] * 3 + ["density"] * 3,
                                       "fpr": [0, 0.5, 1, 0, 0.2, 1], "tpr": [0, 0.6, 1, 0, 0.3, 1]})
    if key == DISCLOSURE_CELL:
        out["disclosure_curve"] = pd.DataFrame({
            "delta": [0.001, 0.25, 0.5] * 2, "targets": ["train"] * 3 + ["holdout"] * 3,
            "max_ratio": [1.0, 2.5, 3.0, 1.0, 2.0, 2.4], "mean_ratio": [1.0, 1.1, 1.2, 1.0, 1.05, 1.1],
            "share_above_c": [0, 0.01, 0.02, 0, 0.0, 0.01], "n_targets": [50] * 6})
    if key == TUNING_CELL:
        out["tuning_trace"] = pd.DataFrame({
            "iteration": [0, 1, 2, 0, 1, 2], "optimizer_seed": [0, 0, 0, 1, 1, 1], "K": [10, 50, 20, 30, 15, 40],
            "objective": [-0.5, -0.2, -0.3, -0.4, -0.1, -0.25],
            "mean_pmse_ratio": [1.7, 1.45, 1.55, 1.63, 1.32, 1.5], "seconds": [1.0] * 6})
    return out


def build_study(root: Path, name: str = "toy", synthesizers: list[str] | None = None,
                error_reason: str = ERROR_REASON) -> StudyFixture:
    synthesizers = list(synthesizers or SYNTHS)
    study = StudyFixture(root / name, name, list(DATASETS), synthesizers, list(SEEDS),
                         error_reason=error_reason)
    study.path.mkdir(parents=True)
    (study.path / "study.json").write_text(json.dumps({
        "name": name, "datasets": DATASETS, "synthesizers": synthesizers, "seeds": SEEDS,
        "n_synthetic": 120, "drilldown": {"alpha": ["job", "hours"]},
    }))
    for d, dataset in enumerate(DATASETS):
        for seed in SEEDS:
            rng = np.random.default_rng(100 * d + seed)
            seed_dir = study.path / dataset / f"seed{seed}"
            seed_dir.mkdir(parents=True)
            train, holdout = _table(rng, 80), _table(rng, 80)
            train.to_parquet(seed_dir / "train.parquet", index=False)
            holdout.to_parquet(seed_dir / "holdout.parquet", index=False)
            for s, synth in enumerate(synthesizers):
                key = (dataset, synth, seed)
                cell = study.cell_dir(*key)
                cell.mkdir()
                state, stage, reason, metrics = "ok", None, "", fake_metrics(d, s, seed)
                if key == ERROR_CELL:
                    state, stage, reason, metrics = "error", "generate", error_reason, {}
                elif key == SKIPPED_CELL:
                    state, stage, reason, metrics = "skipped", None, SKIPPED_REASON, {}
                status = {
                    "cell_id": f"{name}/{dataset}/seed{seed}/{synth}", "study": name, "dataset": dataset,
                    "synthesizer": synth, "seed": seed, "status": state, "stage": stage, "reason": reason,
                    "traceback_tail": "Traceback...\nRuntimeError" if state == "error" else "",
                    "fit_seconds": 1.0 + s + seed, "sample_seconds": 0.5 * (s + 1), "evaluate_seconds": 2.0,
                    "wall_seconds": 5.0, "overhead_seconds": 0.1, "peak_rss_mb": 100.0 + 10 * s,
                    "n_synthetic": 120, "holdout_rule": synth == "holdout",
                    "config": {"name": synth, "epochs": 10 * (s + 1),
                               "model": {"layers": [8, 8], "lr": 0.01}},
                    "versions": {"holdbench": "0.1.0", "sdv": "1.20.0", "python": "3.11.2"},
                    "git_commit": "abc123",
                }
                (cell / "metrics.json").write_text(json.dumps(metrics))
                if key == CORRUPT_CELL:
                    (cell / "status.json").write_text('{"status": "ok", "reason": ')
                    study.status[key] = None
                else:
                    (cell / "status.json").write_text(json.dumps(status))
                    study.status[key] = status
                study.metrics[key] = metrics
                if state == "ok":
                    synthetic = holdout if synth == "holdout" else _table(rng, 120, shift=3.0 * s)
                    synthetic.to_parquet(cell / "synthetic.parquet", index=False)
                    _marginals(rng).to_csv(cell / "marginals.csv", index=False)
                    if key != NO_DISTANCE_CELL:
                        dcr_histogram(s).to_csv(cell / "dcr_histogram.csv", index=False)
                        nndr_distribution(s).to_csv(cell / "nndr_distribution.csv", index=False)
                    for art, table in _optional_artifacts(key).items():
                        table.to_csv(cell / f"{art}.csv", index=False)
    return study


@pytest.fixture(scope="session")
def study_factory(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., StudyFixture]:
    """Builds a private study a test may modify: study_factory(name=..., synthesizers=...)."""
    return lambda **kw: build_study(tmp_path_factory.mktemp("results"), **kw)


@pytest.fixture(scope="session")
def study(study_factory: Callable[..., StudyFixture]) -> StudyFixture:
    """The shared fabricated study (tests may add outputs to it, not change its inputs)."""
    return study_factory()
