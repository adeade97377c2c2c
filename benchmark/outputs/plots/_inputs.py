"""What a study figure module gets to plan its drawing: the study's tables and the keys of inputs.

A study figure is one module of this package that exports

    FIGURE = "name_{dataset}.png"   # its file name in plots/ ({dataset}: one per dataset; * a wildcard)
    CAPTION = "..."                 # the caption report.html shows under it
    ORDER = 50                      # its place in the report (lower first)
    def tasks(study: StudyInputs) -> list[(key, path, (fn, *args))]

`tasks` returns one entry per file to draw: `key` a digest of every input the figure reads (so an
unchanged figure is not drawn again; build it with the `*_key` methods), `path` the PNG under
`study.plot_dir` and `fn(*args)` the call that draws it (returns the path, or None when there is
nothing to show). make_plots (this package's __init__) finds the modules by scanning the package.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from holdbench.benchmark.layout import SYNTHETIC


def file_digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return "missing"


def _frame_text(df) -> str:
    return df.to_csv(index=False)


def key(code: str, *parts) -> str:
    h = hashlib.sha256(code.encode())
    for part in parts:
        h.update(b"\0" + (part if isinstance(part, bytes) else str(part).encode()))
    return h.hexdigest()


def study_key(code: str, fn, cells, summary, *extra) -> str:
    """A study figure's inputs: the cells table (without per-run paths and timings) and the summary."""
    from holdbench.benchmark.outputs.results import TIMINGS

    drop = [c for c in cells.columns if c in ("path", "overhead_seconds") or c in TIMINGS]
    sdrop = [c for c in summary.columns if any(c.startswith(t) for t in (*TIMINGS, "overhead_seconds"))]
    return key(code, fn.__name__, _frame_text(cells.drop(columns=drop)), _frame_text(summary.drop(columns=sdrop)),
               *(repr(e) for e in extra))


def cell_key(code: str, fn, cell, artifact: str) -> str:
    """A cell figure's inputs: its artifact table (the file it was read from), the cell's metrics and name."""
    return key(code, fn.__name__, cell.cell_id, file_digest(cell.path / f"{artifact}.csv"),
               json.dumps(cell.metrics, sort_keys=True, default=str))


@dataclass(frozen=True)
class StudyInputs:
    """The study a figure is planned for: `results` (StudyResults: .cells, .layout, .specs, .study),
    `cells` (the cells table), `summary` (aggregated per dataset x synthesizer), `plot_dir` and `code`
    (the digest of the plotting code, part of every key)."""

    results: object
    cells: pd.DataFrame
    summary: pd.DataFrame
    plot_dir: Path
    code: str

    @property
    def datasets(self) -> list[str]:
        """The study's datasets, in study order."""
        return list(dict.fromkeys(self.cells["dataset"]))

    def cells_of(self, dataset: str) -> list:
        """The cell records (results.cells) of one dataset."""
        return [c for c in self.results.cells if c.dataset == dataset]

    def study_key(self, fn, *extra) -> str:
        """Key of a figure drawn from the cells table and the summary (plus `extra` arguments)."""
        return study_key(self.code, fn, self.cells, self.summary, *extra)

    def artifact_key(self, fn, dataset: str, cells: list, artifact: str) -> str:
        """Key of a figure drawn from one artifact table of every cell of a dataset: each cell's name,
        status, metrics and table file."""
        parts = [dataset]
        for c in cells:
            parts += [c.cell_id, c.ok, json.dumps(c.metrics, sort_keys=True, default=str),
                      file_digest(c.path / f"{artifact}.csv")]
        return key(self.code, fn.__name__, *parts)

    def split_key(self, fn, dataset: str, cells: list, *extra) -> str:
        """Key of a figure drawn from the split files of a dataset and each of its cells' synthetic table."""
        lay = self.results.layout
        parts = [dataset, *extra]
        for seed in sorted({c.seed for c in cells}):
            parts += [file_digest(lay.train(dataset, seed)), file_digest(lay.holdout(dataset, seed))]
        for c in cells:
            parts += [c.cell_id, c.ok, bool(c.status.get("holdout_rule")),
                      file_digest(lay.cell_file(c.dataset, c.seed, c.synthesizer, SYNTHETIC)) if c.ok else ""]
        return key(self.code, fn.__name__, *parts)
