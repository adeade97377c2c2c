"""Figures of sequential (subject + event) cells: the sequence-length histogram of each cell and
the coherence figure of each dataset (from the `sequential` metric family's artifact tables; its
study-figure module is coherence.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from holdbench.benchmark.outputs.plots._base import (
    H_COLOR,
    SYNTH_COLOR,
    T_COLOR,
    common_prefix,
    display,
    new_figure,
    save,
    short,
)
from holdbench.benchmark.outputs.plots.cell import CELL_FIGURES as FLAT_CELL_FIGURES
from holdbench.benchmark.outputs.plots.cell import _num, _table, _title, plot_dcr_histogram, plot_mia_roc, plot_nndr

LENGTH_CAPTION = ("Sequence length: share of subjects with each number of events in T, H and S. S's bars should "
                  "follow H's as closely as H's follow T's (Sequence length ratio 1); S equal to T exactly = "
                  "the lengths were copied.")
def plot_length_histogram(cell, path: Path) -> Path | None:
    """Share of subjects by sequence length in T, H and S (lengths beyond the 99th percentile of T pooled)."""
    hist = _table(cell, "seq_length_histogram", {"length", "train", "holdout", "synthetic"})
    if hist is None:
        return None
    length = _num(hist, "length")
    series = [("T (training)", _num(hist, "train"), T_COLOR), ("H (holdout)", _num(hist, "holdout"), H_COLOR),
              ("S (synthetic)", _num(hist, "synthetic"), SYNTH_COLOR)]
    totals = [np.nansum(c) for _, c, _ in series]
    if not all(t > 0 for t in totals) or not np.isfinite(length).all():
        return None
    t_share = np.nan_to_num(series[0][1]) / totals[0]
    cap = min(int(length[min(np.searchsorted(np.cumsum(t_share), 0.99), len(length) - 1)]) + 1, int(length.max()))
    shown = length[length <= cap]
    fig = new_figure(6.4, 3.1)
    ax = fig.subplots()
    width = 0.8 / len(series)
    for i, ((label, counts, color), n) in enumerate(zip(series, totals, strict=True)):
        share = np.nan_to_num(counts) / n
        pooled = np.append(share[length < cap], share[length >= cap].sum())
        ax.bar(shown + (i - 1) * width, pooled, width=width, color=color,
               label=f"{label}, mean {float(np.nansum(length * counts) / n):.2f}")
    ax.set_xticks(shown[:: max(1, int(np.ceil(len(shown) / 16)))])
    ax.set_xlabel(f"events per subject (the last bar: {cap} or more)")
    ax.set_ylabel("share of subjects")
    ax.legend()
    ratio = cell.metrics.get("seq_length_ratio")
    note = f"length ratio {ratio:.3f}" if isinstance(ratio, (int, float)) and not isinstance(ratio, bool) else ""
    if cell.metrics.get("seq_lengths_copied") is True:
        note += " — lengths copied from T"
    _title(fig, cell, "sequence length" + (f" ({note})" if note else ""))
    return save(fig, path)


def coherence_table(cells: list) -> pd.DataFrame:
    """Per ok cell and event column: S's and H's (t, t+1) TVD to T (from seq_coherence.csv), the ratio,
    and the cell's coherence ratio; averaged over seeds per synthesizer and column."""
    rows = []
    for c in cells:
        table = c.artifacts.get("seq_coherence") if c.ok else None
        if not isinstance(table, pd.DataFrame) or not {"column", "tvd_synthetic", "tvd_holdout"} <= set(table.columns):
            continue
        s, h = _num(table, "tvd_synthetic"), _num(table, "tvd_holdout")
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(h > 0, s / h, np.nan)
        rows += [{"synthesizer": c.synthesizer, "column": str(col), "ratio": r,
                  "overall": c.metrics.get("seq_coherence_ratio"), "reference": bool(c.status.get("holdout_rule"))}
                 for col, r in zip(table["column"], ratio, strict=True)]
    if not rows:
        return pd.DataFrame(columns=["synthesizer", "column", "ratio", "overall", "reference"])
    df = pd.DataFrame(rows)
    df["overall"] = pd.to_numeric(df["overall"], errors="coerce")
    return df.groupby(["synthesizer", "column"], sort=False, as_index=False).agg(
        ratio=("ratio", "mean"), overall=("overall", "mean"), reference=("reference", "max"))


def plot_coherence(cells: list, dataset: str, path: Path) -> Path | None:
    """A heat map of the per-column coherence ratio (S's (t, t+1) TVD / H's), synthesizers by columns,
    on a log2 colour scale centred at 1."""
    table = coherence_table([c for c in cells if c.dataset == dataset])
    if table.empty:
        return None
    synths = list(dict.fromkeys(table["synthesizer"]))
    columns = list(dict.fromkeys(table["column"]))
    grid = table.pivot(index="synthesizer", columns="column", values="ratio").reindex(index=synths, columns=columns)
    overall = table.groupby("synthesizer", sort=False)["overall"].first().reindex(synths)
    values = np.log2(np.clip(grid.to_numpy(float), 1 / 64, 64))
    fig = new_figure(max(6.0, 0.42 * len(columns) + 3.2), 0.3 * len(synths) + 1.6)
    ax = fig.subplots()
    image = ax.imshow(np.ma.masked_invalid(values), cmap="RdBu_r", vmin=-4, vmax=4, aspect="auto")
    prefix = common_prefix(synths)
    ax.set_yticks(np.arange(len(synths)),
                  [f"{display(s, prefix)}  {v:.2f}" if np.isfinite(v) else f"{display(s, prefix)}  n/a"
                   for s, v in zip(synths, overall.to_numpy(float), strict=True)])
    ax.set_xticks(np.arange(len(columns)), [short(c, 14) for c in columns], rotation=60, ha="right")
    bar = fig.colorbar(image, ax=ax, fraction=0.04, pad=0.02)
    bar.set_ticks([-4, -2, 0, 2, 4], labels=["≤1/16", "1/4", "1", "4", "≥16"])
    bar.set_label("S's (t, t+1) TVD / H's")
    ax.set_title(f"{display(dataset)}: coherence of subsequent events per column (1 = as H; red = order lost)",
                 loc="left")
    return save(fig, path)


def _flat_view(cell, artifact: str, flat_artifact: str, prefix: str):
    """The cell as a flat figure reads it: `artifact` under the flat name, metrics without `prefix`."""
    from dataclasses import replace

    metrics = {**cell.metrics, **{k.removeprefix(prefix): v for k, v in cell.metrics.items() if k.startswith(prefix)}}
    return replace(cell, artifacts={flat_artifact: cell.artifacts.get(artifact)}, metrics=metrics)


def plot_subject_dcr(cell, path: Path) -> Path | None:
    """plots.cell.plot_dcr_histogram of the subject vectors (seq_dcr_histogram, seq_dcr_share)."""
    return plot_dcr_histogram(_flat_view(cell, "seq_dcr_histogram", "dcr_histogram", "seq_"), path)


def plot_subject_nndr(cell, path: Path) -> Path | None:
    """plots.cell.plot_nndr of the subject vectors (subject_nndr_distribution)."""
    return plot_nndr(_flat_view(cell, "subject_nndr_distribution", "nndr_distribution", "subject_"), path)


def plot_subject_mia_roc(cell, path: Path) -> Path | None:
    """plots.cell.plot_mia_roc of the attacks on the subject vectors (subject_mia_roc, subject_mia_*)."""
    return plot_mia_roc(_flat_view(cell, "subject_mia_roc", "mia_roc", "subject_"), path)


def _per_subject(flat: str) -> str:
    return "Per subject (one vector each: attributes, length, first m events). " + FLAT_CELL_FIGURES[flat][1]


#: the per-cell figures of sequential cells: artifact -> (plot function, caption), as plots.cell.CELL_FIGURES
CELL_FIGURES = {"seq_length_histogram": (plot_length_histogram, LENGTH_CAPTION),
                "seq_dcr_histogram": (plot_subject_dcr, _per_subject("dcr_histogram")),
                "subject_nndr_distribution": (plot_subject_nndr, _per_subject("nndr_distribution")),
                "subject_mia_roc": (plot_subject_mia_roc, _per_subject("mia_roc"))}
