"""report.html: the whole study on one self-contained page (tables + embedded PNGs).

The page must travel by e-mail or as an MLflow artifact, so images are inlined as base64
and there is no script, stylesheet link or font download. Synthesizer names, dataset names
and failure reasons are user data and may contain markup: every string goes through
`html.escape` before it reaches the page.
"""

from __future__ import annotations

import base64
import html
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from benchmark.io import write_text
from benchmark.leaderboard import aggregate, collect_cells, read_cells, read_study

STUDY_PLOTS = (
    ("fidelity.png", ("Fidelity (paper Figure 9): F1, F2, F3 per synthesizer; the orange bar and the dashed "
     "line are the holdout reference F(T,H). Lower is closer to T, but below the holdout is suspicious.")),
    ("privacy.png", ("Privacy (paper Figure 10): DCR share with its interval (0.5 ideal) and the mean "
     "distance of synthetic records to their closest record in T and in H.")),
    ("tradeoff.png", ("Trade-off (paper Figure 11): fidelity ratio against DCR share; the holdout row at "
     "ratio 1 and share 0.5 is where a perfect generator would sit.")),
)

METRIC_HELP = (
    ("F1, F2, F3", ("Mean total variation distance between the training data T and the synthetic data "
     "S over all 1-, 2- and 3-way marginals, after discretising with T's quantiles / top categories. "
     "0 is identical; lower is more faithful.")),
    ("F_k ratio", ("F_k(T,S) / F_k(T,H), where H is the holdout split: how much further S is from T than "
     "a fresh sample of the same population. 1 is ideal; above 1 less faithful; below 1 S is closer to "
     "T than new data would be, a sign of memorisation.")),
    ("dcr_share", ("Share of synthetic records whose closest record (Hamming distance) is in T rather "
     "than in H, ties split in proportion n_T/(n_T+n_H). 0.5 is ideal; above 0.5 S sits closer to "
     "the training records than to unseen ones (privacy risk). The interval is the t-interval over "
     "seeds, or the Wilson interval of the single cell when only one seed is ok.")),
    ("DCR to T / to H", ("Mean distance of a synthetic record to its nearest record in T / in H. The two "
     "should be about equal; DCR to T clearly smaller than DCR to H means S copies T.")),
    ("status", ("ok, error, timeout, oom or skipped. Cells that are not ok are listed with their reason "
     "and never enter the means.")),
)

_CELL_CAPTION = "Histogram of the k-way TVDs: S vs T against the holdout reference H vs T."

_CSS = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:1400px;color:#222}
table{border-collapse:collapse;margin:0.5em 0 1.5em;font-size:0.85em}
th,td{border:1px solid #ccc;padding:3px 6px;text-align:right}
th{background:#f0f0f0;text-align:left}td.text{text-align:left}
tr.fail td{background:#fde2e2}tr.partial td{background:#fff4d6}tr.ref td{background:#fff0e0}
img{max-width:100%;border:1px solid #eee;margin:0.5em 0}
dt{font-weight:bold;margin-top:0.5em}figcaption{font-size:0.85em;color:#555}
"""

_SUMMARY_COLS = (  # header, summary metric, decimals
    ("F1", "F1", 4), ("F2", "F2", 4), ("F3", "F3", 4), ("F1 ratio", "F1_ratio", 2),
    ("F2 ratio", "F2_ratio", 2), ("F3 ratio", "F3_ratio", 2), ("dcr_share", "dcr_share", 3),
    ("DCR to T", "dcr_train_mean", 2), ("DCR to H", "dcr_holdout_mean", 2), ("fit s", "fit_seconds", 1),
)
_CELL_COLS = (
    ("F1", "F1", 4), ("F2", "F2", 4), ("F3", "F3", 4), ("F2 ratio", "F2_ratio", 2),
    ("dcr_share", "dcr_share", 3), ("p (share>0.5)", "dcr_share_pvalue", 3),
    ("fit s", "fit_seconds", 1), ("sample s", "sample_seconds", 1), ("evaluate s", "evaluate_seconds", 1),
    ("peak RSS MB", "peak_rss_mb", 0),
)


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _num(value: Any, digits: int) -> str:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return ""
    return "" if math.isnan(v) else f"{v:.{digits}f}"


def _table(headers: Iterable[str], rows: Iterable[tuple[str, list[tuple[str, bool]]]]) -> str:
    """rows: (css class, [(already-escaped cell html, is_text)])."""
    out = ["<table><tr>" + "".join(f"<th>{_e(h)}</th>" for h in headers) + "</tr>"]
    for css, cells in rows:
        tds = "".join(f'<td class="text">{c}</td>' if is_text else f"<td>{c}</td>" for c, is_text in cells)
        out.append(f'<tr class="{css}">{tds}</tr>')
    return "\n".join(out) + "</table>"


def _summary_html(summary: pd.DataFrame, dataset: str) -> str:
    rows = []
    for _, r in summary[summary["dataset"] == dataset].iterrows():
        css = "fail" if r["n_ok"] == 0 else "partial" if r["n_ok"] < r["n_seeds"] else ""
        cells = [(_e(r["synthesizer"]), True), (_e(r["statuses"]), True)]
        for _, metric, digits in _SUMMARY_COLS:
            text = _num(r.get(f"{metric}_mean"), digits)
            low, high = _num(r.get(f"{metric}_ci_low"), digits), _num(r.get(f"{metric}_ci_high"), digits)
            if text and low and metric == "dcr_share":
                text += f" [{low}, {high}]"
            cells.append((_e(text), False))
        rows.append((css, cells))
    return _table(["synthesizer", "cells"] + [h for h, _, _ in _SUMMARY_COLS], rows)


def _cells_html(cells: pd.DataFrame) -> str:
    rows = []
    for _, c in cells.iterrows():
        stage = c.get("stage") if isinstance(c.get("stage"), str) else ""
        cells_ = [(_e(c["dataset"]), True), (_e(c["synthesizer"]), True), (_e(c["seed"]), False),
                  (f"<b>{_e(c['status'])}</b>" if c["status"] != "ok" else "ok", True),
                  (_e(stage), True), (_e(c["reason"]), True)]
        cells_ += [(_e(_num(c.get(m), d)), False) for _, m, d in _CELL_COLS]
        rows.append(("fail" if c["status"] != "ok" else "", cells_))
    headers = ["dataset", "synthesizer", "seed", "status", "stage", "reason"] + [h for h, _, _ in _CELL_COLS]
    return _table(headers, rows)


def _img(path: Path, caption: str) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return (f'<figure><img src="data:image/png;base64,{data}" alt="{_e(path.name)}">'
            f"<figcaption>{_e(caption)}</figcaption></figure>")


def _ensure_plots(study_dir: Path) -> None:
    """Draw the figures only when the study plots are missing (make_plots is the slow part)."""
    if not all((study_dir / "plots" / name).exists() for name, _ in STUDY_PLOTS):
        from benchmark.plots import make_plots

        make_plots(study_dir)


def _figures_html(study_dir: Path) -> str:
    plot_dir = study_dir / "plots"
    parts = [_img(plot_dir / name, caption) for name, caption in STUDY_PLOTS if (plot_dir / name).exists()]
    for path in sorted(plot_dir.glob("drilldown_*.png")):
        parts.append(_img(path, f"Marginal drill-down ({path.stem.removeprefix('drilldown_')}): share of "
                                "records per bucket in T, H and S (paper Figures 6-8)."))
    return "\n".join(parts) or "<p>No figures found.</p>"


def _cell_figures_html(study_dir: Path) -> str:
    parts = []
    for cell in read_cells(study_dir):
        png = cell.path / "marginals.png"
        if cell.ok and png.exists():
            parts.append(f"<details><summary>{_e(cell.cell_id)}</summary>"
                         f"{_img(png, _CELL_CAPTION)}</details>")
    return "\n".join(parts)


def _provenance(study_dir: Path) -> str:
    """Versions and git commit of the first cell that recorded them."""
    for cell in read_cells(study_dir):
        versions = cell.status.get("versions")
        if isinstance(versions, dict) and versions:
            items = ", ".join(f"{_e(k)} {_e(v)}" for k, v in sorted(versions.items()))
            return f"<p>Versions: {items}; git commit: {_e(cell.status.get('git_commit') or 'unknown')}.</p>"
    return ""


def render_report(study_dir: str | Path) -> str:
    """The report page as a string (no files written besides missing plots)."""
    study_dir = Path(study_dir)
    study = read_study(study_dir)
    cells = collect_cells(study_dir)
    summary = aggregate(cells)
    n_ok = int((cells["status"] == "ok").sum()) if len(cells) else 0
    name = _e(study["name"])
    listed = {k: _e(", ".join(map(str, study.get(k) or []))) for k in ("datasets", "synthesizers", "seeds")}
    parts = [
        (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>holdbench: {name}</title>'
         f"<style>{_CSS}</style></head><body>"),
        f"<h1>holdbench study: {name}</h1>",
        (f"<p>{len(cells)} cells, {n_ok} ok, {len(cells) - n_ok} not ok. Datasets: {listed['datasets']}. "
         f"Synthesizers: {listed['synthesizers']}. Seeds: {listed['seeds']}. Synthetic records per cell: "
         f"{_e(study.get('n_synthetic', 'n/a'))}.</p>"),
        "<h2>How to read the numbers</h2><dl>"
        + "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in METRIC_HELP) + "</dl>",
        "<h2>Leaderboard (mean over ok seeds)</h2>",
    ]
    for dataset in dict.fromkeys(cells["dataset"]) if len(cells) else []:
        parts += [f"<h3>{_e(dataset)}</h3>", _summary_html(summary, dataset)]
    parts += ["<h2>All cells</h2>", _cells_html(cells) if len(cells) else "<p>No cells found.</p>"]
    if len(cells):
        _ensure_plots(study_dir)
        parts += ["<h2>Figures</h2>", _figures_html(study_dir)]
        cell_figs = _cell_figures_html(study_dir)
        if cell_figs:
            parts += ["<h2>Per-cell marginal TVDs</h2>", cell_figs]
    parts += [_provenance(study_dir), "</body></html>\n"]
    return "\n".join(parts)


def write_report(study_dir: str | Path) -> Path:
    """Write `<study_dir>/report.html` atomically; draws the plots first if they are missing."""
    path = Path(study_dir) / "report.html"
    write_text(path, render_report(study_dir))
    return path
