"""Reading a study back: the one place that opens a cell's files after the jobs wrote them.

The collect job calls `load_results` once; the leaderboard, the plots and the report all
render from the `StudyResults` it returns, and never open a cell themselves. Reading is
deliberately forgiving: a cell whose status.json is missing or corrupt is still a row
(status "error", the reason names the file), because a leaderboard that hides a broken
cell would overstate what the study measured.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from holdbench.benchmark.layout import DERIVED_DIRS, GENERATE_JSON, METRICS_JSON, STATUS_JSON, StudyLayout, canonical, cell_id, results_root
from holdbench.benchmark.workflow.cellconfig import file_problem, name_conflicts, settings_of
from holdbench.contracts.io import clean_line

STATUSES = ("ok", "error", "timeout", "oom", "skipped")
TIMINGS = ("fit_seconds", "sample_seconds", "evaluate_seconds", "wall_seconds", "peak_rss_mb",
           "evaluate_peak_rss_mb")
_SEED_DIR = re.compile(r"^seed(\d+)$")
#: synthesizer settings the cells table carries as `setting_<key>`, read from what each cell recorded it ran
#: with (status.json `config.synthesizer`), never from its name; `generator` is the config's `_target_`
RECORDED_SETTINGS = ("epsilon", "delta", "p")
SETTING_PREFIX = "setting_"
#: the privacy budget a DP generator reports it spent (generate.json `synthesizer_info.privacy`), carried as
#: `setting_spent_<key>`: total and per part (synthesizers/plugins/dp/domain.py)
SPENT = ("epsilon", "epsilon_domain", "epsilon_fit", "delta")


@dataclass
class Cell:
    """One cell directory as read from disk; `status` and `metrics` are the parsed JSON files."""

    study: str
    dataset: str
    synthesizer: str
    seed: int
    path: Path
    status: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)

    artifacts: dict[str, pd.DataFrame] = field(default_factory=dict, repr=False)
    """The cell's artifact tables (marginals and whatever its metric families wrote), read once."""

    @property
    def cell_id(self) -> str:
        return cell_id(self.study, self.dataset, self.seed, self.synthesizer)

    @property
    def ok(self) -> bool:
        return self.status.get("status") == "ok"


def read_study(study_dir: str | Path) -> dict[str, Any]:
    """study.json, or a minimal stand-in named after the directory when it is missing/corrupt."""
    study_dir = Path(study_dir)
    study, _ = _read_json(StudyLayout(study_dir).study_json)
    study = study or {}
    study.setdefault("name", study_dir.name)
    return study


def _read_json(path: Path) -> tuple[dict[str, Any] | None, str]:
    """Parsed object and "" on success, else None and a one-line problem naming the file."""
    if not path.exists():
        return None, f"{path.name} missing"
    try:
        obj = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        return None, f"{path.name} unreadable: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
    if not isinstance(obj, dict):
        return None, f"{path.name} unreadable: not a JSON object"
    return obj, ""


def read_cell(study: str, dataset: str, seed: int, path: Path) -> Cell:
    """Read one cell dir; never raises for bad content, it turns it into status "error"."""
    status, problem = _read_json(path / STATUS_JSON)
    if status is None:
        status = {"status": "error", "stage": None, "reason": problem}
    elif status.get("status") not in STATUSES:
        status = {**status, "status": "error",
                  "reason": f"status.json: unknown status {status.get('status')!r}"}
    metrics, m_problem = _read_json(path / METRICS_JSON)
    if metrics is None:
        metrics = {}
        if status["status"] == "ok":
            status = {**status, "status": "error", "stage": "evaluate",
                      "reason": f"status ok but {m_problem}"}
    elif status["status"] == "ok" and not metrics:
        status = {**status, "status": "error", "stage": "evaluate",
                  "reason": f"status ok but {METRICS_JSON} holds no metrics"}
    elif status["status"] == "ok":
        record = (status.get("outputs") or {}).get(METRICS_JSON) if isinstance(status.get("outputs"), dict) else None
        bad = file_problem(path / METRICS_JSON, record) if record else None
        if bad:
            metrics = {}
            status = {**status, "status": "error", "stage": "evaluate",
                      "reason": f"status ok but {bad}; rerun the study to recompute it"}
    status["reason"] = clean_line(status.get("reason") or "")
    return Cell(study, dataset, path.name, seed, path, status, metrics, _read_artifacts(path))


def _read_artifacts(path: Path) -> dict[str, pd.DataFrame]:
    """Every <name>.csv of a cell dir; an unreadable one is left out (its plot is then missing)."""
    out = {}
    for f in sorted(path.glob("*.csv")):
        try:
            out[f.stem] = pd.read_csv(f)
        except (OSError, ValueError):
            continue
    return out


def _ordered(found: set[str], declared: list[str]) -> list[str]:
    """Declared order first, then anything found on disk that study.json does not list."""
    head = [d for d in declared if d in found]
    return head + sorted(found - set(head))


def _declared(study: dict[str, Any], key: str) -> set[str] | None:
    values = study.get(key)
    return {str(v) for v in values} if isinstance(values, list) and values else None


def read_cells(study_dir: str | Path) -> list[Cell]:
    """All cell directories of a study, in study.json order (dataset, synthesizer, seed).

    A dataset dir is any child holding `seed<k>` dirs; a cell is any non-hidden dir in one.
    When study.json lists datasets / synthesizers / seeds, only those count: a cell left on
    disk by an earlier definition of the study (a synthesizer since dropped) is not part of it.
    """
    study_dir = Path(study_dir)
    study = read_study(study_dir)
    datasets_ok, synths_ok, seeds_ok = (_declared(study, k) for k in ("datasets", "synthesizers", "seeds"))
    by_key: dict[tuple[str, str, int], Cell] = {}
    for ds_dir in sorted(p for p in study_dir.iterdir() if p.is_dir() and not p.name.startswith(".")):
        if ds_dir.name in DERIVED_DIRS or (datasets_ok is not None and ds_dir.name not in datasets_ok):
            continue
        for seed_dir in sorted(ds_dir.iterdir()):
            m = _SEED_DIR.match(seed_dir.name)
            if not (m and seed_dir.is_dir()):
                continue
            if seeds_ok is not None and str(int(m.group(1))) not in seeds_ok:
                continue
            for cell_dir in sorted(seed_dir.iterdir()):
                if not cell_dir.is_dir() or cell_dir.name.startswith("."):
                    continue
                if synths_ok is None or cell_dir.name in synths_ok:
                    cell = read_cell(str(study["name"]), ds_dir.name, int(m.group(1)), cell_dir)
                    by_key[(cell.dataset, cell.synthesizer, cell.seed)] = cell
    datasets = _ordered({k[0] for k in by_key}, list(study.get("datasets") or []))
    synths = _ordered({k[1] for k in by_key}, list(study.get("synthesizers") or []))
    return sorted(by_key.values(),
                  key=lambda c: (datasets.index(c.dataset), synths.index(c.synthesizer), c.seed))


def _cell_row(cell: Cell) -> dict[str, Any]:
    st = cell.status
    row: dict[str, Any] = {
        "cell_id": cell.cell_id, "dataset": cell.dataset, "synthesizer": cell.synthesizer,
        "seed": cell.seed, "status": st["status"], "stage": st.get("stage"), "reason": st["reason"],
        "path": str(cell.path), "holdout_rule": st.get("holdout_rule"),
        "n_synthetic": st.get("n_synthetic"),
        "config_digest": st.get("config_digest") if isinstance(st.get("config_digest"), str) else None,
    }
    for key in TIMINGS + ("overhead_seconds",):
        row[key] = _number(st.get(key))
    settings = settings_of(st)
    row["generator"] = clean_line(settings["_target_"]) if isinstance(settings.get("_target_"), str) else None
    for key in RECORDED_SETTINGS:
        row[SETTING_PREFIX + key] = _number(settings.get(key))
    generated, _ = _read_json(cell.path / GENERATE_JSON) if row["generator"] else (None, "")
    privacy = ((generated or {}).get("synthesizer_info") or {}).get("privacy")
    if isinstance(privacy, dict):
        for key in SPENT:
            row[f"{SETTING_PREFIX}spent_{key}"] = _number(privacy.get(key))
    # a variant whose name states a setting its run did not use (params: over `mst_eps3`): flagged wherever shown
    row["name_conflict"] = clean_line("; ".join(name_conflicts(cell.synthesizer, settings))) or None
    identity = set(row) - {"n_synthetic"}
    row["stage"] = clean_line(row["stage"]) if isinstance(row["stage"], str) else None
    for key, value in cell.metrics.items():
        if isinstance(value, (dict, list)) or key in identity or (key in row and value is None):
            continue
        row[key] = (clean_line(value, 2000) if isinstance(value, str) else value) if isinstance(value, (bool, str)) \
            or value is None else _number(value)
    return row


def _number(value: Any) -> float:
    """Float or NaN: null, bools and junk in a numeric slot all read as 'no number'."""
    if isinstance(value, bool) or value is None:
        return math.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def cells_table(cells: list[Cell]) -> pd.DataFrame:
    """One row per cell, failed and skipped ones included, in study order.

    Columns: cell_id, dataset, synthesizer, seed, status, stage, reason, path, timings, the recorded
    settings (`generator`, `setting_<key>` of RECORDED_SETTINGS, `name_conflict`) and every scalar
    key of metrics.json (numbers as float, bools/strings as they are).
    """
    rows = [_cell_row(c) for c in cells]
    base = ["cell_id", "dataset", "synthesizer", "seed", "status", "stage", "reason", "path"]
    df = pd.DataFrame(rows, columns=None if rows else base)
    for col in TIMINGS:
        if col not in df.columns:
            df[col] = math.nan
    return df


@dataclass(frozen=True)
class StudyResults:
    """Everything a study's renderers need, read from disk once."""

    layout: StudyLayout
    study: dict[str, Any]
    """study.json (name, datasets, synthesizers, seeds, metrics config, drilldown)."""
    cells: list[Cell]
    table: pd.DataFrame
    """One row per cell (cells_table)."""
    specs: list
    """The registry entries (holdbench.metrics.registry.MetricSpec) of the study's metric families."""

    @property
    def name(self) -> str:
        return str(self.study["name"])

    @property
    def shown(self) -> list:
        """The metrics the study's tables show: the registry's headline metrics, then the study's
        `leaderboard_metrics` in their order."""
        by_name = {sp.name: sp for sp in self.specs}
        extra = [str(n) for n in self.study.get("leaderboard_metrics") or []]
        unknown = [n for n in extra if n not in by_name]
        if unknown:
            raise ValueError(f"{self.layout.study_json}: leaderboard_metrics {unknown} are not metrics of the "
                             "study's metrics config")
        return [sp for sp in self.specs if sp.headline] + [by_name[n] for n in extra]


def load_results(study_dir: str | Path) -> StudyResults:
    """Read a study's cells once; the registry entries come from its metrics config."""
    from holdbench.benchmark.config import metric_specs

    layout = StudyLayout(Path(study_dir))
    study = read_study(layout.root)
    cells = read_cells(layout.root)
    metrics_cfg = study.get("metrics") or {}
    if "families" not in metrics_cfg:  # no study.json (or one from before families): the paper's measures
        metrics_cfg = {"families": {"fidelity": {"_target_": "holdbench.metrics.fidelity.Fidelity"},
                                    "privacy": {"_target_": "holdbench.metrics.privacy.DCRShare"}}}
    return StudyResults(layout, study, cells, cells_table(cells), metric_specs(metrics_cfg))


def study_dir(name: str) -> Path:
    """A study's results directory: `name` is a study (under the results root) or a path to a study directory."""
    path = Path(name)
    if path.is_dir() and StudyLayout(path).study_json.exists():
        return path
    if path.is_absolute() or "/" in str(name) or name in (".", ".."):  # a path, not a study's name
        if path.is_dir():
            raise FileNotFoundError(f"{path}: not a study's results directory (it holds no study.json; "
                                    "`holdbench run <study>` makes one)")
        raise FileNotFoundError(f"{path}: no such study directory")
    from holdbench.benchmark.config import available, check_name, did_you_mean

    root = results_root({})
    layout = StudyLayout.of(root, check_name("study", name))
    if not layout.study_json.exists():
        known = available("study")
        if name in known:
            raise FileNotFoundError(f"{layout.root}: no results of study {name!r} yet (run `holdbench run {name}` first)")
        ran = sorted(p.name for p in root.iterdir() if StudyLayout(p).study_json.exists()) if root.is_dir() else []
        raise FileNotFoundError(f"no study {name!r}{did_you_mean([name], sorted({*known, *ran}))}: no results in "
                                f"{layout.root} and no study config of that name (studies with results: "
                                f"{', '.join(ran) or 'none'})")
    return layout.root

#: the reason load_results gives a cell directory without status.json: its run was stopped
_NO_STATUS = "status.json missing"


def unfinished_cells(results) -> tuple[list, list[str]]:
    """(the interrupted cells: a directory without status.json, the canonical names of the cells
    study.json declares that have no directory: never run)."""
    interrupted = [c for c in results.cells if c.status.get("status") == "error"
                   and c.status.get("reason") == _NO_STATUS]
    have = {(c.dataset, c.synthesizer, c.seed) for c in results.cells}
    study = results.study
    never = [canonical(d, s, int(k)) for d in study.get("datasets") or [] for s in study.get("synthesizers") or []
             for k in study.get("seeds") or [] if (d, s, int(k)) not in have]
    return interrupted, never
