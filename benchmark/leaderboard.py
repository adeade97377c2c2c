"""The study leaderboard: every cell on disk, one row each, and the per-synthesizer summary.

The workflow leaves one directory per cell. This module is the only place that reads them
back, so it is deliberately forgiving: a cell whose status.json is missing or corrupt is
still a row (status "error", the reason names the file), because a leaderboard that hides
a broken cell would overstate what the study measured. Plots, the HTML report and MLflow
tracking all start from `read_cells` / `collect_cells` here.

Interval convention of `aggregate` (per dataset x synthesizer, over the ok cells):
- two or more values: mean +- t(0.975, n-1) * sd / sqrt(n), the usual t-interval over seeds;
- exactly one value: `dcr_share_ci_low/high` are that cell's own Wilson interval from
  metrics.json (binomial sampling of the synthetic records); every other interval is NaN,
  since a single seed says nothing about the spread over splits;
- no value: everything NaN.
"""

from __future__ import annotations

import html
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from benchmark.io import write_csv, write_text

STATUSES = ("ok", "error", "timeout", "oom", "skipped")
TIMINGS = ("fit_seconds", "sample_seconds", "evaluate_seconds", "wall_seconds", "peak_rss_mb")
CORE_METRICS = (
    "F1", "F2", "F3", "F1_holdout", "F2_holdout", "F3_holdout", "F1_ratio", "F2_ratio", "F3_ratio",
    "dcr_share", "dcr_share_ci_low", "dcr_share_ci_high", "dcr_share_pvalue",
    "dcr_train_mean", "dcr_holdout_mean",
)
#: columns of leaderboard.csv, in order (one row per cell)
LEADERBOARD_COLUMNS = (
    "dataset", "synthesizer", "seed", "status", "reason",
    "F1", "F2", "F3", "F1_ratio", "F2_ratio", "F3_ratio",
    "dcr_share", "dcr_share_ci_low", "dcr_share_ci_high", "dcr_share_pvalue",
    "dcr_train_mean", "dcr_holdout_mean",
    "fit_seconds", "sample_seconds", "evaluate_seconds", "peak_rss_mb",
)
#: per-cell interval / test columns: averaging them over seeds means nothing
_NOT_AGGREGATED = re.compile(r"(_ci_low|_ci_high|_pvalue)$")
_SEED_DIR = re.compile(r"^seed(\d+)$")
_NOT_DATASETS = {"plots", "logs", "benchmarks"}  # derived outputs the workflow keeps in the study dir


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

    @property
    def cell_id(self) -> str:
        return f"{self.study}/{self.dataset}/seed{self.seed}/{self.synthesizer}"

    @property
    def ok(self) -> bool:
        return self.status.get("status") == "ok"


def read_study(study_dir: str | Path) -> dict[str, Any]:
    """study.json, or a minimal stand-in named after the directory when it is missing/corrupt."""
    study_dir = Path(study_dir)
    study, _ = _read_json(study_dir / "study.json")
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
    status, problem = _read_json(path / "status.json")
    if status is None:
        status = {"status": "error", "stage": None, "reason": problem}
    elif status.get("status") not in STATUSES:
        status = {**status, "status": "error",
                  "reason": f"status.json: unknown status {status.get('status')!r}"}
    metrics, m_problem = _read_json(path / "metrics.json")
    if metrics is None:
        metrics = {}
        if status["status"] == "ok":
            status = {**status, "status": "error", "stage": "evaluate",
                      "reason": f"status ok but {m_problem}"}
    status["reason"] = " ".join(str(status.get("reason") or "").split())
    return Cell(study, dataset, path.name, seed, path, status, metrics)


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
        if ds_dir.name in _NOT_DATASETS or (datasets_ok is not None and ds_dir.name not in datasets_ok):
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
    }
    for key in TIMINGS + ("overhead_seconds",):
        row[key] = _number(st.get(key))
    identity = set(row) - {"n_synthetic"}
    for key, value in cell.metrics.items():
        if isinstance(value, (dict, list)) or key in identity or (key in row and value is None):
            continue
        row[key] = value if isinstance(value, (bool, str)) or value is None else _number(value)
    return row


def _number(value: Any) -> float:
    """Float or NaN: null, bools and junk in a numeric slot all read as 'no number'."""
    if isinstance(value, bool) or value is None:
        return math.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def collect_cells(study_dir: str | Path) -> pd.DataFrame:
    """One row per cell dir found, failed and skipped ones included, in study order.

    Columns: cell_id, dataset, synthesizer, seed, status, stage, reason, path, timings and
    every scalar key of metrics.json (numbers as float, bools/strings as they are).
    """
    rows = [_cell_row(c) for c in read_cells(study_dir)]
    base = ["cell_id", "dataset", "synthesizer", "seed", "status", "stage", "reason", "path"]
    df = pd.DataFrame(rows, columns=None if rows else base)
    for col in CORE_METRICS + TIMINGS:
        if col not in df.columns:
            df[col] = math.nan
    return df


def metric_columns(cells: pd.DataFrame) -> list[str]:
    """Numeric metric columns worth a mean over seeds (not seed, counts of rows, or intervals)."""
    skip = {"seed", "n_synthetic", "holdout_rule", "overhead_seconds"}
    cols = []
    for col in cells.columns:
        if col in skip or _NOT_AGGREGATED.search(col):
            continue
        if pd.api.types.is_numeric_dtype(cells[col]) and not pd.api.types.is_bool_dtype(cells[col]):
            cols.append(col)
    return cols


def _interval(values: np.ndarray) -> tuple[float, float, float]:
    n = len(values)
    if n == 0:
        return math.nan, math.nan, math.nan
    mean = float(values.mean())
    if n == 1:
        return mean, math.nan, math.nan
    from scipy import stats

    half = float(stats.t.ppf(0.975, n - 1) * values.std(ddof=1) / math.sqrt(n))
    return mean, mean - half, mean + half


def aggregate(cells: pd.DataFrame) -> pd.DataFrame:
    """Per dataset x synthesizer: n_seeds, n_ok, statuses, `<m>_mean/_ci_low/_ci_high`.

    Only ok cells enter the means. See the module docstring for the one-seed convention.
    """
    metrics = metric_columns(cells)
    rows = []
    for (dataset, synth), group in cells.groupby(["dataset", "synthesizer"], sort=False):
        ok = group[group["status"] == "ok"]
        counts = group["status"].value_counts()
        row: dict[str, Any] = {
            "dataset": dataset, "synthesizer": synth, "n_seeds": len(group), "n_ok": len(ok),
            "statuses": ", ".join(f"{counts[s]} {s}" for s in STATUSES if s in counts),
        }
        for m in metrics:
            values = ok[m].dropna().to_numpy(dtype=float)
            mean, low, high = _interval(values)
            if len(values) == 1 and m == "dcr_share" and "dcr_share_ci_low" in ok:
                only = ok[ok[m].notna()].iloc[0]
                low, high = _number(only.get("dcr_share_ci_low")), _number(only.get("dcr_share_ci_high"))
            row[f"{m}_mean"], row[f"{m}_ci_low"], row[f"{m}_ci_high"] = mean, low, high
        rows.append(row)
    return pd.DataFrame(rows, columns=None if rows else ["dataset", "synthesizer", "n_seeds", "n_ok"])


def _fmt(value: Any, digits: int) -> str:
    v = _number(value)
    return "" if math.isnan(v) else f"{v:.{digits}f}"


def _md_text(text: Any) -> str:
    """Cell text for a markdown table: one line, pipes and HTML neutralised."""
    return html.escape(" ".join(str(text).split())).replace("|", "\\|")


_MD_COLUMNS = (  # (header, summary metric, decimals)
    ("F1", "F1", 4), ("F2", "F2", 4), ("F3", "F3", 4),
    ("F1 ratio", "F1_ratio", 2), ("F2 ratio", "F2_ratio", 2), ("F3 ratio", "F3_ratio", 2),
    ("dcr_share", "dcr_share", 3), ("DCR to T", "dcr_train_mean", 2),
    ("DCR to H", "dcr_holdout_mean", 2), ("fit s", "fit_seconds", 1),
)

LEGEND = (
    "F1/F2/F3: mean total variation distance between T and S over all 1-, 2- and 3-way "
    "marginals (lower = closer to T). ratio = F_k(T,S) / F_k(T,H): **1 is ideal**, above 1 "
    "less faithful than a fresh sample, below 1 suspiciously close to T. dcr_share: share of "
    "synthetic records closer to T than to H (ties split by n_T/(n_T+n_H)): **0.5 is ideal**, "
    "above 0.5 means S sits closer to the training records than to unseen ones. DCR to T / to H: "
    "mean Hamming distance of a synthetic record to its nearest T / H record. Values are means "
    "over ok seeds; dcr_share shows its 95% interval in brackets."
)


def render_markdown(study: dict[str, Any], cells: pd.DataFrame, summary: pd.DataFrame) -> str:
    """leaderboard.md: per dataset a summary table, then every cell that is not ok with its reason."""
    lines = [f"# Leaderboard: {_md_text(study['name'])}", "", LEGEND, ""]
    for dataset in dict.fromkeys(cells["dataset"]):
        lines += [f"## {_md_text(dataset)}", ""]
        header = ["synthesizer", "status"] + [h for h, _, _ in _MD_COLUMNS]
        lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for _, row in summary[summary["dataset"] == dataset].iterrows():
            status = "ok" if row["n_ok"] == row["n_seeds"] else row["statuses"]
            vals = []
            for _, metric, digits in _MD_COLUMNS:
                text = _fmt(row.get(f"{metric}_mean"), digits)
                if metric == "dcr_share" and text and _fmt(row.get("dcr_share_ci_low"), 3):
                    text += f" [{_fmt(row['dcr_share_ci_low'], 3)}, {_fmt(row['dcr_share_ci_high'], 3)}]"
                vals.append(text)
            lines.append("| " + " | ".join([_md_text(row["synthesizer"]), _md_text(status)] + vals) + " |")
        failed = cells[(cells["dataset"] == dataset) & (cells["status"] != "ok")]
        if len(failed):
            lines += ["", "Cells that are not ok:", ""]
            for _, c in failed.iterrows():
                has_stage = isinstance(c.get("stage"), str) and c["stage"]
                stage = f" at {_md_text(c['stage'])}" if has_stage else ""
                lines.append(f"- {_md_text(c['synthesizer'])} seed{c['seed']}: **{_md_text(c['status'])}**"
                             f"{stage} — {_md_text(c['reason']) or '(no reason given)'}")
        lines.append("")
    if cells.empty:
        lines.append("No cells found.")
    return "\n".join(lines) + "\n"


def leaderboard_table(cells: pd.DataFrame) -> pd.DataFrame:
    """The leaderboard.csv view of `collect_cells` output (fixed columns, one row per cell)."""
    out = cells.copy()
    for col in LEADERBOARD_COLUMNS:
        if col not in out.columns:
            out[col] = math.nan
    return out[list(LEADERBOARD_COLUMNS)]


def write_leaderboard(study_dir: str | Path) -> dict[str, Path]:
    """Write leaderboard.csv, leaderboard_summary.csv and leaderboard.md atomically into study_dir."""
    study_dir = Path(study_dir)
    cells = collect_cells(study_dir)
    summary = aggregate(cells)
    paths = {
        "csv": study_dir / "leaderboard.csv",
        "summary": study_dir / "leaderboard_summary.csv",
        "md": study_dir / "leaderboard.md",
    }
    write_csv(paths["csv"], leaderboard_table(cells))
    write_csv(paths["summary"], summary)
    write_text(paths["md"], render_markdown(read_study(study_dir), cells, summary))
    return paths
