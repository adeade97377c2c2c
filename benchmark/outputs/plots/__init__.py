"""The study's figures as PNG files: `make_plots(results, n_jobs)` draws every one of them.

Study figures (results/<study>/plots/): one module of this package each, exporting FIGURE (its file
name), CAPTION, ORDER and tasks(study) (see _inputs.py), found by scanning the package
(`figure_modules()`); after Platzer & Reutterer (2021):
    fidelity.py   fidelity_<dataset>.png: Figure 9, F1-F3 per synthesizer, log axis, F(T,H) as reference
    privacy.py    privacy_<dataset>.png: Figure 10, DCR share with its interval; mean DCR to T and to H
    coherence.py  coherence_<dataset>.png (sequential studies)
    tradeoff.py   tradeoff.png: Figure 11, F3 ratio against DCR share, the flip baselines as a curve
    utility.py, attacks.py, disclosure.py: the headline metrics of those groups, when computed
    frontier.py   frontier_<dataset>.png: the privacy-utility frontier
    drilldown.py  drilldown_<dataset>_<column>.png: Figures 6-8, a column in T, H and S per synthesizer
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
import importlib
import os
import pkgutil
from pathlib import Path
from types import ModuleType

from matplotlib import rc_context, style

from holdbench.benchmark.outputs.plots import sequential
from holdbench.benchmark.outputs.plots._base import RC, safe
from holdbench.benchmark.outputs.plots._inputs import StudyInputs, cell_key, file_digest
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
    "CELL_FIGURES", "bucket_labels", "cell_figures", "drilldown_columns", "figure_modules", "make_plots",
    "plot_cell_marginals", "plot_dcr_histogram", "plot_disclosure", "plot_drilldown", "plot_fidelity",
    "plot_group", "plot_mia_roc", "plot_nndr", "plot_privacy", "plot_tradeoff", "plot_tuning_trace",
    "study_figures",
]

#: every per-cell figure: artifact -> (plot function, caption), flat cells' then sequential cells'
CELL_FIGURES = {**_FLAT_CELL_FIGURES, **sequential.CELL_FIGURES}
#: what a study figure module exports
FIGURE_EXPORTS = ("FIGURE", "CAPTION", "ORDER", "tasks")
#: folders of a user's own figure modules, os.pathsep-separated: scanned as part of this package
PATH_VAR = "HOLDBENCH_FIGURE_PATH"


def _extend_path() -> None:
    """Add $HOLDBENCH_FIGURE_PATH's folders to this package's search path (so a user's figure module is
    `holdbench.benchmark.outputs.plots.<name>`, importable in joblib's workers too)."""
    for entry in os.environ.get(PATH_VAR, "").split(os.pathsep):
        if not entry.strip():
            continue
        folder = Path(entry).expanduser().resolve()
        if not folder.is_dir():
            raise ValueError(f"{PATH_VAR}: {folder} is not a folder (it lists folders of figure modules)")
        if str(folder) not in __path__:
            __path__.append(str(folder))


_extend_path()  # at import too: a joblib worker that unpickles a user's figure function imports it by name


def figure_modules() -> tuple[ModuleType, ...]:
    """The study figure modules of this package and of $HOLDBENCH_FIGURE_PATH's folders, in report order
    (ORDER, then name): every public module that defines FIGURE. One that defines FIGURE but misses
    another export is an error naming it."""
    _extend_path()
    found = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        if not hasattr(module, "FIGURE"):
            continue
        missing = [e for e in FIGURE_EXPORTS if not hasattr(module, e)]
        if missing:
            raise TypeError(f"figure module {module.__file__} defines FIGURE but not {', '.join(missing)} "
                            f"(a study figure module exports {', '.join(FIGURE_EXPORTS)}; see _inputs.py)")
        found.append(module)
    return tuple(sorted(found, key=lambda m: (m.ORDER, m.__name__)))


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
    """(png, caption) of the study figures on disk, in report order (figure_modules(); datasets in study
    order), each caption from its module."""
    plot_dir = results.layout.plots_dir
    datasets = list(dict.fromkeys(results.table["dataset"])) if len(results.table) else []
    out: list[tuple[Path, str]] = []
    for module in figure_modules():
        pattern = module.FIGURE
        names = [pattern.format(dataset=safe(d)) for d in datasets] if "{dataset}" in pattern else [pattern]
        for name in names:
            paths = sorted(plot_dir.glob(name)) if "*" in name else [plot_dir / name]
            out += [(p, module.CAPTION) for p in paths if p.is_file() and p not in {q for q, _ in out}]
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

    _extend_path()
    h = hashlib.sha256(matplotlib.__version__.encode())
    for folder in __path__:
        for f in sorted(Path(folder).glob("*.py")):
            h.update(f.name.encode() + f.read_bytes())
    return h.hexdigest()


def make_plots(results, n_jobs: int = 1, stats: dict | None = None) -> list[Path]:
    """Write every figure of a study whose inputs changed; returns the paths of every figure the
    study has (study figures first), drawn now or kept from an earlier run.

    Each figure is keyed by a digest of the inputs it reads and of the plotting code
    (results/<study>/.figures.json, with the sha256 of the PNG drawn); a figure whose key is unchanged
    and whose file is still there with that sha256 is not drawn again (a truncated or altered PNG is). The figures to draw are independent, so joblib draws them in `n_jobs`
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
    study = StudyInputs(results, cells, summary, plot_dir, code)
    tasks: list[tuple[str, Path, tuple]] = []  # (key, the figure's path, (fn, *args))
    for module in figure_modules():
        tasks += module.tasks(study)
    n_study = len(tasks)
    for cell in results.cells:
        if cell.ok:
            tasks += [(cell_key(code, fn, cell, artifact), _cell_path(results, cell, artifact),
                       (fn, cell, _cell_path(results, cell, artifact)))
                      for artifact, (fn, _) in CELL_FIGURES.items() if artifact in cell.artifacts]
    old = read_json_object(lay.figure_keys)
    keys: dict[str, dict] = {}
    drawn: list[Path | None] = [None] * len(tasks)
    todo = []
    for i, (key, path, _) in enumerate(tasks):
        rel = str(path.relative_to(lay.root))
        was = old.get(rel)
        if isinstance(was, dict) and was.get("key") == key and (
                not was.get("drawn") or (path.is_file() and was.get("sha256") == file_digest(path))):
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
        keys[str(tasks[i][1].relative_to(lay.root))] = {"key": tasks[i][0], "drawn": p is not None,
                                                        **({"sha256": file_digest(p)} if p else {})}
    written = [p for p in drawn if p]
    if plot_dir.is_dir():
        keep = {p for p in drawn[:n_study] if p}
        for stale in plot_dir.glob("*.png"):
            if stale not in keep:
                stale.unlink()
    write_json(lay.figure_keys, keys)
    if stats is not None:  # figures only: a task whose figure has nothing to show draws none
        now = sum(1 for i in todo if drawn[i] is not None)
        stats.update(drawn=now, kept=len(written) - now)
    return written
