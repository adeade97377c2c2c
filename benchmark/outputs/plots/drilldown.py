"""Figures 6-8: one column's distribution in T, H and S, one panel per synthesizer.

Buckets are learned on T: a numeric column with many values is cut at T's deciles (the first
bucket includes its left edge, "[a, b]", the others are "(a, b]"); otherwise the ten most frequent
values of T are buckets. Values of S or H outside T's range or among the rarer levels go to
"other", missing values to "(missing)".
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from holdbench.contracts.dates import days_text
from holdbench.contracts.io import read_json_object, read_parquet
from holdbench.benchmark.layout import SYNTHETIC, StudyLayout
from holdbench.benchmark.outputs.plots._base import (
    H_COLOR,
    REFERENCE_NAME,
    SYNTH_COLOR,
    T_COLOR,
    common_prefix,
    display,
    new_figure,
    safe,
    save,
    short,
)

MAX_DRILLDOWN_SYNTHS = 9
DRILLDOWN_BINS = 10
OTHER, MISSING = "other", "(missing)"


def _bins(train: pd.Series, dates: bool = False) -> tuple[str, Any]:
    """How to bucket a column, learned on T: ("cat", top values) or ("num", (quantile edges, whole numbers, dates:
    the column holds days since 1970-01-01, its edges are shown as dates))."""
    numeric = pd.api.types.is_numeric_dtype(train) and not pd.api.types.is_bool_dtype(train)
    if numeric and train.nunique() > DRILLDOWN_BINS:
        edges = np.unique(np.quantile(train.dropna().to_numpy(float), np.linspace(0, 1, DRILLDOWN_BINS + 1)))
        if len(edges) > 1:
            integral = bool(np.all(np.mod(train.dropna().to_numpy(float), 1) == 0))
            return "num", (edges, integral, dates)
    counts = train.dropna().astype(str).value_counts().sort_index(kind="stable")
    counts = counts.sort_values(ascending=False, kind="stable")
    return "cat", (list(counts.index[:DRILLDOWN_BINS]), max(len(counts) - DRILLDOWN_BINS, 0))


def _edge(v: float, integral: bool) -> str:
    return f"{round(v):,}" if integral else f"{v:.4g}"


def bucket_labels(edges: np.ndarray, integral: bool, dates: bool = False) -> list[str]:
    """'[a, b]' for the first bucket (it holds its left edge), '(a, b]' for the others; with `dates` the edges
    (days since 1970-01-01) are written as dates."""
    e = days_text(edges, integral) if dates else [_edge(v, integral) for v in edges]
    labels = [("[" if i == 0 else "(") + f"{e[i]}, {e[i + 1]}]" for i in range(len(edges) - 1)]
    if len(set(labels)) < len(labels):  # edges too close for 4 digits: number the buckets
        labels = [f"{i + 1}: {lbl}" for i, lbl in enumerate(labels)]
    return labels


def _frequencies(values: pd.Series, how: tuple[str, Any]) -> pd.Series:
    """Relative frequency per bucket, in bucket order, then 'other' and '(missing)'."""
    kind, spec = how
    if kind == "num":
        edges, integral, dates = spec
        nums = pd.to_numeric(values, errors="coerce")
        labels = bucket_labels(edges, integral, dates)
        binned = pd.cut(nums, edges, labels=labels, include_lowest=True).astype(object)
        binned[nums.notna() & binned.isna()] = OTHER
        order = labels + [OTHER]
    else:
        top, _ = spec
        binned = values.astype(object).where(values.isna(), values.astype(str))
        binned = binned.where(binned.isin(top) | binned.isna(), OTHER)
        order = list(top) + [OTHER]
    binned = binned.where(binned.notna(), MISSING)
    freq = binned.value_counts(normalize=True)
    return freq.reindex(list(dict.fromkeys(order + [MISSING])), fill_value=0.0)


def _other_label(how: tuple[str, Any]) -> str:
    kind, spec = how
    if kind == "num":
        return "outside T's range"
    n_rare = spec[1]
    return f"other ({n_rare} rarer level{'s' if n_rare != 1 else ''})" if n_rare else "other (not in T)"


def _read_column(path: Path, column: str) -> pd.Series | None:
    try:
        return read_parquet(path, columns=[column])[column]
    except (OSError, ValueError, KeyError):  # a missing or corrupt file only drops that panel
        return None


def plot_drilldown(layout: StudyLayout, dataset: str, column: str, cells: list, path: Path) -> Path | None:
    """One column's bucketed distribution in T, H and S, one panel per synthesizer (first seed)."""
    seeds = sorted({c.seed for c in cells if c.dataset == dataset and c.ok})
    if not seeds:
        return None
    train = _read_column(layout.train(dataset, seeds[0]), column)
    holdout = _read_column(layout.holdout(dataset, seeds[0]), column)
    if train is None or holdout is None:
        return None
    dates = read_json_object(layout.schema(dataset, seeds[0])).get("dates") or []
    how = _bins(train, column in dates)
    f_t, f_h = _frequencies(train, how), _frequencies(holdout, how)
    keep = (f_t > 0) | (f_h > 0)
    candidates = [c for c in cells if c.dataset == dataset and c.seed == seeds[0] and c.ok
                  and c.synthesizer != REFERENCE_NAME and not c.status.get("holdout_rule")]
    prefix = common_prefix([c.synthesizer for c in candidates])
    panels = []
    for c in candidates:
        s = _read_column(layout.cell_file(c.dataset, c.seed, c.synthesizer, SYNTHETIC), column)
        if s is not None and len(panels) < MAX_DRILLDOWN_SYNTHS:
            f_s = _frequencies(s, how)
            panels.append((display(c.synthesizer, prefix), f_s))
            keep |= f_s > 0
    panels = panels or [("(no synthetic data)", None)]
    labels = list(f_t.index[keep.to_numpy()])
    shown = [(_other_label(how) if lbl == OTHER else lbl) for lbl in labels]
    ncols = min(len(panels), 3)
    nrows = math.ceil(len(panels) / ncols)
    width = min(max(3.6, 0.32 * len(labels) + 1.2), 4.6)
    fig = new_figure(width * ncols, 2.9 * nrows + 0.4)
    axes = fig.subplots(nrows, ncols, squeeze=False, sharey=True).ravel()
    x = np.arange(len(labels))
    for n_ax, (ax, (synth, f_s)) in enumerate(zip(axes, panels)):
        ax.bar(x - 0.27, f_t[labels], width=0.27, color=T_COLOR, label="T (training)")
        ax.bar(x, f_h[labels], width=0.27, color=H_COLOR, label="H (holdout)")
        if f_s is not None:
            ax.bar(x + 0.27, f_s[labels], width=0.27, color=SYNTH_COLOR, label="S (synthetic)")
        last_row = n_ax >= len(panels) - ncols
        ticks = [short(lbl, 24 if column in dates else 22) for lbl in shown]  # a date range is 24 characters
        ax.set_xticks(x, ticks if last_row else [], rotation=50, ha="right", rotation_mode="anchor", fontsize=6.5)
        ax.set_title(synth, loc="left")
        if n_ax % ncols == 0:
            ax.set_ylabel("share of records")
        if n_ax == 0:
            ax.legend(frameon=True, framealpha=0.9)
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    kind = "deciles of T" if how[0] == "num" else "T's most frequent values"
    fig.suptitle(f"{short(dataset)} / seed{seeds[0]}: distribution of {short(column, 40)} in T, H and S "
                 f"(buckets: {kind})", fontsize=9)
    return save(fig, path)


def drilldown_columns(results, dataset: str) -> list[str]:
    """Columns to drill into: study.json's `drilldown[dataset]`, else T's first two columns."""
    chosen = (results.study.get("drilldown") or {}).get(dataset)
    if chosen:
        return [str(c) for c in chosen]
    for seed in sorted({c.seed for c in results.cells if c.dataset == dataset}):
        columns = _parquet_columns(results.layout.train(dataset, seed))
        if columns:
            return columns[:2]
    return []


def _parquet_columns(path: Path) -> list[str]:
    import pyarrow.parquet as pq

    try:
        return list(pq.read_schema(path).names)
    except (OSError, ValueError):  # no readable split here
        return []


#: the study figure (see _inputs.py): one file per dataset and drilled-into column
FIGURE = "drilldown_{dataset}_*.png"
CAPTION = ("Marginal drill-down: share of records per bucket in T, H and S (paper Figures 6-8); the first numeric "
           "bucket includes its left edge.")
ORDER = 90


def tasks(study) -> list:
    out = []
    for dataset in study.datasets:
        mine = study.cells_of(dataset)
        for column in drilldown_columns(study.results, dataset):
            path = study.plot_dir / f"drilldown_{safe(dataset)}_{safe(column)}.png"
            out.append((study.split_key(plot_drilldown, dataset, mine, column), path,
                        (plot_drilldown, study.results.layout, dataset, column, mine, path)))
    return out
