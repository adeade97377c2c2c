"""The study's figures as PNG files: `make_plots(results, n_jobs)` draws every one of them.

Study figures (results/<study>/plots/), after Platzer & Reutterer (2021):
    fidelity_<dataset>.png   Figure 9: F1-F3 per synthesizer, log axis, the holdout's F(T,H) as reference
    privacy_<dataset>.png    Figure 10: DCR share with its interval around 0.5; mean DCR to T and to H
    tradeoff.png   Figure 11: F3 ratio against DCR share, the flip baselines as a curve
    utility.png, attacks.png, disclosure.png: the headline metrics of those groups, when computed
    drilldown_<dataset>_<column>.png   Figures 6-8: a column in T, H and S per synthesizer
Per cell (in the cell directory), one figure per artifact table: marginals.png,
dcr_histogram.png, nndr_distribution.png, mia_roc.png, disclosure_curve.png, tuning_trace.png.
Sequential (subject + event) studies (benchmark/outputs/plots/sequential.py): coherence_<dataset>.png per
dataset; per cell seq_length_histogram.png and the DCR, NNDR and attack figures of the subject vectors
(seq_dcr_histogram.png, subject_nndr_distribution.png, subject_mia_roc.png).

Plots are drawn on bare `Figure` objects with the Agg canvas and matplotlib's default style, so
they never touch pyplot's global state, do not depend on a user's matplotlibrc, and come out
byte-identical for the same inputs. A failed or skipped cell never breaks a plot: it simply
has no point, and the synthesizer's tick label says how many seeds were ok. A figure whose
inputs are absent is not drawn.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from matplotlib import rc_context, style

from holdbench.benchmark.layout import SYNTHETIC
from holdbench.benchmark.outputs.plots import frontier, sequential
from holdbench.benchmark.outputs.plots._base import RC, safe
from holdbench.benchmark.outputs.plots.cell import CELL_FIGURES as _FLAT_CELL_FIGURES
from holdbench.benchmark.outputs.plots.cell import (
    plot_cell_marginals,
    plot_dcr_histogram,
    plot_disclosure,
    plot_mia_roc,
    plot_nndr,
    plot_tuning_trace,
)
from holdbench.benchmark.outputs.plots.drilldown import bucket_labels, drilldown_columns, plot_drilldown
from holdbench.benchmark.outputs.plots.study import plot_fidelity, plot_group, plot_privacy, plot_tradeoff

__all__ = [
    "CELL_FIGURES", "STUDY_FIGURES", "bucket_labels", "cell_figures", "drilldown_columns", "make_plots",
    "plot_cell_marginals", "plot_dcr_histogram", "plot_disclosure", "plot_drilldown", "plot_fidelity",
    "plot_group", "plot_mia_roc", "plot_nndr", "plot_privacy", "plot_tradeoff", "plot_tuning_trace",
    "study_figures",
]

#: every per-cell figure: artifact -> (plot function, caption), flat cells' then sequential cells'
CELL_FIGURES = {**_FLAT_CELL_FIGURES, **sequential.CELL_FIGURES}

#: study figure files ({dataset}: one per dataset, in study order) and their captions, in report order
STUDY_FIGURES = (
    ("fidelity_{dataset}.png", ("Fidelity (paper Figure 9): F1, F2, F3 per synthesizer on a log axis; the orange "
                               "diamond and the dashed line are the holdout reference F(T,H). Lower is closer to T; "
                               "far below the holdout means S copies T.")),
    ("privacy_{dataset}.png", ("Privacy (paper Figure 10): DCR share with its 95% interval, zoomed around the ideal "
                              "0.5 (values beyond the window are marked off scale), and the mean distance of "
                              "synthetic records to their closest record in T and in H.")),
    (sequential.COHERENCE_FIGURE, sequential.COHERENCE_CAPTION),
    ("tradeoff.png", ("Trade-off (paper Figure 11): F3 ratio against DCR share; the holdout at ratio 1 and share 0.5 "
                     "is where a perfect generator sits, the flip baselines trace the trade-off curve.")),
    ("utility.png", "Utility: the headline utility metrics (pMSE ratio, TSTR AUC ratio) per synthesizer."),
    ("attacks.png", "Attacks: the headline membership-inference metrics per synthesizer (AUC 0.5 ideal)."),
    ("disclosure.png", "Attribute disclosure: the disclosure metrics per synthesizer."),
    (frontier.FIGURE, frontier.CAPTION),
    ("drilldown_{dataset}_*.png", ("Marginal drill-down: share of records per bucket in T, H and S (paper Figures "
                                  "6-8); the first numeric bucket includes its left edge.")),
)
_GROUP_FIGURES = (("utility", "utility.png", "Utility beyond marginals (dashed: the ideal value)"),
                  ("attack", "attacks.png", "Membership inference (dashed: the ideal value)"),
                  ("disclosure", "disclosure.png", "Attribute disclosure (dashed: the ideal value)"))


def _group_specs(specs: list, group: str) -> list:
    in_group = [sp for sp in specs if sp.group == group]
    return [sp for sp in in_group if sp.headline] or in_group[:3]


def _cell_path(results, cell, artifact: str) -> Path:
    return results.layout.cell_file(cell.dataset, cell.seed, cell.synthesizer, f"{artifact}.png")


def cell_figures(results, cell) -> list[tuple[Path, str]]:
    """(png, caption) of the per-cell figures make_plots drew for this cell, in CELL_FIGURES order."""
    out = []
    for artifact, (_, caption) in CELL_FIGURES.items():
        path = _cell_path(results, cell, artifact)
        if cell.ok and artifact in cell.artifacts and path.is_file():
            out.append((path, caption))
    return out


def study_figures(results) -> list[tuple[Path, str]]:
    """(png, caption) of the study figures on disk, in STUDY_FIGURES order (datasets in study order)."""
    plot_dir = results.layout.plots_dir
    datasets = list(dict.fromkeys(results.table["dataset"])) if len(results.table) else []
    out: list[tuple[Path, str]] = []
    for pattern, caption in STUDY_FIGURES:
        names = [pattern.format(dataset=safe(d)) for d in datasets] if "{dataset}" in pattern else [pattern]
        for name in names:
            paths = sorted(plot_dir.glob(name)) if "*" in name else [plot_dir / name]
            out += [(p, caption) for p in paths if p.is_file() and p not in {q for q, _ in out}]
    return out


def _draw(fn, *args) -> Path | None:
    """Run one plot function under the module's style (in a joblib worker or in-process)."""
    with rc_context(), style.context("default"), rc_context(RC):
        return fn(*args)


#: below this many figures to draw, joblib's worker start-up costs more than it saves
_PARALLEL_FROM = 8


def _source_digest() -> str:
    """Digest of this package's code and matplotlib's version: a change to either redraws every figure."""
    import matplotlib

    h = hashlib.sha256(matplotlib.__version__.encode())
    for f in sorted(Path(__file__).parent.glob("*.py")):
        h.update(f.name.encode() + f.read_bytes())
    return h.hexdigest()


def _file_digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return "missing"


def _frame_text(df) -> str:
    return df.to_csv(index=False)


def _key(code: str, *parts) -> str:
    h = hashlib.sha256(code.encode())
    for part in parts:
        h.update(b"\0" + (part if isinstance(part, bytes) else str(part).encode()))
    return h.hexdigest()


def _study_key(code: str, fn, cells, summary, *extra) -> str:
    """A study figure's inputs: the cells table (without per-run paths and timings) and the summary."""
    from holdbench.benchmark.outputs.results import TIMINGS

    drop = [c for c in cells.columns if c in ("path", "overhead_seconds") or c in TIMINGS]
    sdrop = [c for c in summary.columns if any(c.startswith(t) for t in (*TIMINGS, "overhead_seconds"))]
    return _key(code, fn.__name__, _frame_text(cells.drop(columns=drop)), _frame_text(summary.drop(columns=sdrop)),
                *(repr(e) for e in extra))


def _drilldown_key(code: str, results, dataset: str, column: str, cells: list) -> str:
    """A drill-down's inputs: the split files it reads and, per cell of the dataset, its name, status
    and synthetic table."""
    parts = [dataset, column]
    for seed in sorted({c.seed for c in cells}):
        parts += [_file_digest(results.layout.train(dataset, seed)), _file_digest(results.layout.holdout(dataset, seed))]
    for c in cells:
        parts += [c.cell_id, c.ok, bool(c.status.get("holdout_rule")),
                  _file_digest(results.layout.cell_file(c.dataset, c.seed, c.synthesizer, SYNTHETIC)) if c.ok else ""]
    return _key(code, "plot_drilldown", *parts)


def _artifact_key(code: str, fn, dataset: str, cells: list, artifact: str) -> str:
    """A study figure drawn from one artifact table of every cell of a dataset: each cell's name, status,
    metrics and table file."""
    import json

    parts = [dataset]
    for c in cells:
        parts += [c.cell_id, c.ok, json.dumps(c.metrics, sort_keys=True, default=str),
                  _file_digest(c.path / f"{artifact}.csv")]
    return _key(code, fn.__name__, *parts)


def _cell_key(code: str, fn, cell, artifact: str) -> str:
    """A cell figure's inputs: its artifact table (the file it was read from), the cell's metrics and name."""
    import json

    return _key(code, fn.__name__, cell.cell_id, _file_digest(cell.path / f"{artifact}.csv"),
                json.dumps(cell.metrics, sort_keys=True, default=str))


def make_plots(results, n_jobs: int = 1, stats: dict | None = None) -> list[Path]:
    """Write every figure of a study whose inputs changed; returns the paths of every figure the
    study has (study figures first), drawn now or kept from an earlier run.

    Each figure is keyed by a digest of the inputs it reads and of the plotting code
    (results/<study>/.figures.json); a figure whose key is unchanged and whose file is still
    there is not drawn again. The figures to draw are independent, so joblib draws them in `n_jobs`
    worker processes. Study figures of an earlier run that this run does not have are removed from
    plots/. `stats`, when given, receives how many figures were drawn and how many kept.
    """
    from joblib import Parallel, delayed

    from holdbench.benchmark.outputs.leaderboard import aggregate
    from holdbench.contracts.io import read_json_object, write_json

    lay = results.layout
    plot_dir = lay.plots_dir
    cells = results.table
    if cells.empty:
        return []
    code = _source_digest()
    summary = aggregate(cells, results.specs)
    tasks: list[tuple[str, Path, tuple]] = []  # (key, the figure's path, (fn, *args))
    for dataset in dict.fromkeys(cells["dataset"]):  # one page per dataset: readable on a laptop screen
        if any(f"F{k}_mean" in summary for k in (1, 2, 3)):
            out = plot_dir / f"fidelity_{safe(dataset)}.png"
            tasks.append((_study_key(code, plot_fidelity, cells, summary, dataset), out,
                          (plot_fidelity, cells, summary, out, [dataset])))
        if "dcr_share_mean" in summary:
            out = plot_dir / f"privacy_{safe(dataset)}.png"
            tasks.append((_study_key(code, plot_privacy, cells, summary, dataset), out,
                          (plot_privacy, cells, summary, out, [dataset])))
        if "seq_coherence_ratio_mean" in summary:
            out = plot_dir / sequential.COHERENCE_FIGURE.format(dataset=safe(dataset))
            mine = [c for c in results.cells if c.dataset == dataset]
            tasks.append((_artifact_key(code, sequential.plot_coherence, dataset, mine, "seq_coherence"), out,
                          (sequential.plot_coherence, mine, dataset, out)))
    if "F3_ratio_mean" in summary and "dcr_share_mean" in summary:
        out = plot_dir / "tradeoff.png"
        tasks.append((_study_key(code, plot_tradeoff, cells, summary), out, (plot_tradeoff, cells, summary, out)))
    tasks += frontier.frontier_tasks(code, cells, summary, plot_dir, _study_key)
    for group, name, title in _GROUP_FIGURES:
        specs = _group_specs(results.specs, group)
        if specs:
            tasks.append((_study_key(code, plot_group, cells, summary, specs, title), plot_dir / name,
                          (plot_group, cells, summary, specs, title, plot_dir / name)))
    for dataset in dict.fromkeys(cells["dataset"]):
        mine = [c for c in results.cells if c.dataset == dataset]
        for column in drilldown_columns(results, dataset):
            out = plot_dir / f"drilldown_{safe(dataset)}_{safe(column)}.png"
            tasks.append((_drilldown_key(code, results, dataset, column, mine), out,
                          (plot_drilldown, lay, dataset, column, mine, out)))
    n_study = len(tasks)
    for cell in results.cells:
        if cell.ok:
            tasks += [(_cell_key(code, fn, cell, artifact), _cell_path(results, cell, artifact),
                       (fn, cell, _cell_path(results, cell, artifact)))
                      for artifact, (fn, _) in CELL_FIGURES.items() if artifact in cell.artifacts]
    old = read_json_object(lay.figure_keys)
    keys: dict[str, dict] = {}
    drawn: list[Path | None] = [None] * len(tasks)
    todo = []
    for i, (key, path, _) in enumerate(tasks):
        rel = str(path.relative_to(lay.root))
        was = old.get(rel)
        if isinstance(was, dict) and was.get("key") == key and (path.is_file() or not was.get("drawn")):
            drawn[i] = path if was.get("drawn") else None
            keys[rel] = was
        else:
            todo.append(i)
    if n_jobs == 1 or len(todo) < _PARALLEL_FROM:
        new = [_draw(*tasks[i][2]) for i in todo]
    else:
        new = Parallel(n_jobs=n_jobs)(delayed(_draw)(*tasks[i][2]) for i in todo)
    for i, p in zip(todo, new):
        drawn[i] = p
        keys[str(tasks[i][1].relative_to(lay.root))] = {"key": tasks[i][0], "drawn": p is not None}
    written = [p for p in drawn if p]
    if plot_dir.is_dir():
        keep = {p for p in drawn[:n_study] if p}
        for stale in plot_dir.glob("*.png"):
            if stale not in keep:
                stale.unlink()
    write_json(lay.figure_keys, keys)
    if stats is not None:
        stats.update(drawn=len(todo), kept=len(tasks) - len(todo))
    return written
