"""Where everything of a study lives: the one module that spells a path under results/.

    results/<study>/.config/                      snapshots the jobs depend on (written under the lock)
    results/<study>/study.json                    what the study contains
    results/<study>/<dataset>/seed<k>/            the split: train.parquet, holdout.parquet, schema.json
    results/<study>/<dataset>/seed<k>/<synth>/    a cell: generate.json, synthetic.parquet, metrics.json,
                                                  status.json, <artifact>.csv
    (a sequential study: train_subjects/train_events/holdout_subjects/holdout_events.parquet and schema.json
     in the split dir, synthetic_subjects.parquet and synthetic_events.parquet in the cell)
    results/<study>/<dataset>/seed<k>/<synth>/shards/<i>-of-<n>.npz
                                                  partial results of one evaluate_shard job (temporary)
    results/<study>/logs/, benchmarks/            per-job logs and Snakemake's runtime/memory records;
                                                  logs/snakemake.log: Snakemake's output of the last run
    results/<study>/leaderboard.{csv,md}, leaderboard_summary.csv, report.html, plots/, mlflow.json
    results/<study>/.collected.json, .figures.json
                                                  the collect job's marker; the input digest of every figure

Every function also accepts Snakemake wildcard strings ("{dataset}", "{seed}") in place of
values, so the rules build their patterns here too.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

#: files of a cell directory
GENERATE_JSON = "generate.json"
SYNTHETIC = "synthetic.parquet"
METRICS_JSON = "metrics.json"
STATUS_JSON = "status.json"
#: the artifact every evaluated cell has (the fidelity family's table)
MARGINALS = "marginals.csv"
#: the subdirectory of a cell holding the evaluate_shard jobs' partial results
SHARDS_DIR = "shards"
#: in a study dir while `holdbench run` stops: the signal it received (it passes a SIGINT on to Snakemake and
#: the jobs, whatever it got), so a job says which signal stopped the run
STOP_NOTE = ".stop_signal"
#: files of a split directory
TRAIN, HOLDOUT, SCHEMA = "train.parquet", "holdout.parquet", "schema.json"
#: the same for a sequential (subject + event) dataset: one pair of tables per role
PARTS = ("subjects", "events")
SYNTHETIC_PAIR = tuple(f"synthetic_{part}.parquet" for part in PARTS)


def results_root(config: dict) -> Path:
    """The results root: the workflow config's `results_dir`, else $HOLDBENCH_RESULTS_DIR, else results/."""
    return Path(config.get("results_dir") or os.environ.get("HOLDBENCH_RESULTS_DIR", "results"))


def table_file(role: str, part: str | None = None) -> str:
    """The file of T (role train), H (holdout) or S (synthetic): `<role>.parquet` for a flat table,
    `<role>_<part>.parquet` for a part (subjects, events) of a sequential pair."""
    return f"{role}.parquet" if part is None else f"{role}_{part}.parquet"


def synthetic_files(sequential: bool) -> tuple[str, ...]:
    """The synthetic table(s) a cell's generate stage writes."""
    return SYNTHETIC_PAIR if sequential else (SYNTHETIC,)
#: directories of a study that are not datasets
DERIVED_DIRS = frozenset({"plots", "logs", "benchmarks"})


def seed_part(seed: int | str) -> str:
    return f"seed{seed}"


def cell_id(study: str, dataset: str, seed: int | str, synth: str) -> str:
    """A cell's id across studies (status.json, the MLflow tag holdbench.cell_id): the study, then its
    canonical name."""
    return f"{study}/{canonical(dataset, synth, seed)}"


def canonical(dataset: str, synthesizer: str, seed: int | str) -> str:
    """A cell's name within its study, the one every user-facing output prints: DATASET/seedK/SYNTHESIZER
    (its directory under results/<study>/, the run's progress lines, the report, the MLflow run name)."""
    return f"{dataset}/{seed_part(seed)}/{synthesizer}"


def run_name(dataset: str, seed: int | str, synth: str) -> str:
    """The MLflow run name of a cell: its canonical name (the experiment is the study)."""
    return canonical(dataset, synth, seed)


def artifact_file(name: str) -> str:
    """The file an artifact table of a metric family is written to, in its cell dir."""
    return f"{name}.csv"


@dataclass(frozen=True)
class StudyLayout:
    """Paths of one study under a results root."""

    root: Path
    """results/<study>"""

    @classmethod
    def of(cls, results_root: str | Path, study: str) -> StudyLayout:
        return cls(Path(results_root) / study)

    @property
    def name(self) -> str:
        return self.root.name

    # snapshots and study-level files
    @property
    def config_dir(self) -> Path:
        return self.root / ".config"

    def split_config(self, dataset: str) -> Path:
        return self.config_dir / f"split-{dataset}.json"

    def synth_config(self, synth: str) -> Path:
        return self.config_dir / f"synth-{synth}.json"

    @property
    def metrics_config(self) -> Path:
        return self.config_dir / "metrics.json"

    @property
    def run_config(self) -> Path:
        return self.config_dir / "run.json"

    @property
    def study_json(self) -> Path:
        return self.root / "study.json"

    @property
    def leaderboard_csv(self) -> Path:
        return self.root / "leaderboard.csv"

    @property
    def leaderboard_md(self) -> Path:
        return self.root / "leaderboard.md"

    @property
    def leaderboard_summary(self) -> Path:
        return self.root / "leaderboard_summary.csv"

    @property
    def report(self) -> Path:
        return self.root / "report.html"

    @property
    def plots_dir(self) -> Path:
        return self.root / "plots"

    @property
    def figure_keys(self) -> Path:
        """Digest of the inputs of every figure drawn (relative path -> key): unchanged ones are not redrawn."""
        return self.root / ".figures.json"

    @property
    def collect_marker(self) -> Path:
        """Written by the collect job after the leaderboard, figures and report (its one declared output:
        Snakemake deletes a job's outputs before it runs, and the report must stay until replaced)."""
        return self.root / ".collected.json"

    @property
    def mlflow_marker(self) -> Path:
        return self.root / "mlflow.json"

    # splits and cells
    def split_dir(self, dataset: str, seed: int | str) -> Path:
        return self.root / dataset / seed_part(seed)

    def train(self, dataset: str, seed: int | str) -> Path:
        return self.split_dir(dataset, seed) / TRAIN

    def holdout(self, dataset: str, seed: int | str) -> Path:
        return self.split_dir(dataset, seed) / HOLDOUT

    def schema(self, dataset: str, seed: int | str) -> Path:
        return self.split_dir(dataset, seed) / SCHEMA

    def pair(self, dataset: str, seed: int | str, role: str) -> dict[str, Path]:
        """{subjects, events} files of T (role train) or H (holdout) of a sequential dataset's split."""
        return {part: self.split_dir(dataset, seed) / table_file(role, part) for part in PARTS}

    def split_outputs(self, dataset: str, seed: int | str, sequential: bool) -> dict[str, Path]:
        """Every file the split job writes, by name (the split rule's outputs)."""
        if not sequential:
            return {"train": self.train(dataset, seed), "holdout": self.holdout(dataset, seed),
                    "schema": self.schema(dataset, seed)}
        return {**{f"{role}_{part}": path for role in ("train", "holdout")
                   for part, path in self.pair(dataset, seed, role).items()}, "schema": self.schema(dataset, seed)}

    def cell_dir(self, dataset: str, seed: int | str, synth: str) -> Path:
        return self.split_dir(dataset, seed) / synth

    def cell_file(self, dataset: str, seed: int | str, synth: str, name: str) -> Path:
        return self.cell_dir(dataset, seed, synth) / name

    def shard_file(self, dataset: str, seed: int | str, synth: str, shard: int | str, of: int) -> Path:
        """Partial results of shard `shard` of `of` of a cell's evaluation (every shardable family)."""
        return self.cell_dir(dataset, seed, synth) / SHARDS_DIR / f"{shard}-of-{of}.npz"

    def shard_files(self, dataset: str, seed: int | str, synth: str, of: int) -> list[Path]:
        """Every shard's partial results of a cell, in shard order; none when the evaluation is not sharded."""
        return [] if of == 1 else [self.shard_file(dataset, seed, synth, i, of) for i in range(of)]

    # logs and Snakemake benchmark records
    @property
    def snakemake_log(self) -> Path:
        """Snakemake's own output of the last `holdbench run` (unless --verbose passed it through)."""
        return self.log("snakemake")

    def log(self, job: str, dataset: str | None = None, seed: int | str | None = None,
            synth: str | None = None) -> Path:
        return self._job_path("logs", job, "log", dataset, seed, synth)

    def benchmark(self, job: str, dataset: str | None = None, seed: int | str | None = None,
                  synth: str | None = None) -> Path:
        return self._job_path("benchmarks", job, "tsv", dataset, seed, synth)

    def _job_path(self, kind: str, job: str, ext: str, dataset, seed, synth) -> Path:
        base = self.root / kind
        if dataset is None:
            return base / f"{job}.{ext}"
        base = base / dataset / seed_part(seed)
        return base / (f"{synth}.{job}.{ext}" if synth is not None else f"{job}.{ext}")
