"""Fidelity against ε for each DP generator, with intervals over seeds (frontier_epsilon_<dataset>.png).

Drawn from the frontier page's two committed tables, not from cells: `dp_epsilon.csv` (one row per
dataset x DP generator x ε: the F3 ratio's mean over seeds and its 95% t interval) and `references.csv`
(the non-DP rows over the same seeds). x is the configured ε (log), y the F3 ratio (log; 1 = as close to
T as the holdout is). Each DP generator is one line with its intervals as error bars, the generators set
slightly apart on x so that overlapping bars stay visible; the reference rows are horizontal lines
labelled at the right, the holdout's in orange.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from holdbench.benchmark.outputs.plots._base import REF_COLOR, REFERENCE_NAME, new_figure, save

FILENAME = "frontier_epsilon_{dataset}.png"
"""Not a study figure module (no FIGURE): drawn by scripts/bench/frontier_epsilon_figure.py from committed tables."""
#: the reference rows drawn as lines, when the table holds them (the rest would crowd the figure)
REFERENCES = ("holdout", "synthpop", "cart", "arf", "gaussian_copula", "flip50", "flip90")
GENERATORS = {"mst": "tab:blue", "aim": "tab:green", "privbayes": "tab:purple"}
"""The DP generators in drawing order and their colours (orange is the holdout's)."""
_INTERVAL = re.compile(r"^\[\s*([-+0-9.eE]+)\s*,\s*([-+0-9.eE]+)\s*\]$")


def interval(text) -> tuple[float, float]:
    """'[low, high]' as written by frontier_dp_table.py -> (low, high); (nan, nan) when empty."""
    if not isinstance(text, str) or not text.strip():
        return math.nan, math.nan
    m = _INTERVAL.match(text.strip())
    if not m:
        raise ValueError(f"not an interval '[low, high]': {text!r}")
    return float(m.group(1)), float(m.group(2))


def series(dp: pd.DataFrame, dataset: str) -> dict[str, pd.DataFrame]:
    """generator -> its rows of one dataset in order of ε: columns eps, f3, low, high (floats); rows without an
    F3 ratio left out. Generators in GENERATORS' order, then any other by name."""
    mine = dp[(dp["dataset"] == dataset) & (dp["F3 ratio"].astype(str).str.strip() != "")]
    out = {}
    names = [g for g in GENERATORS if g in set(mine["generator"])]
    for gen in names + sorted(set(mine["generator"]) - set(GENERATORS)):
        rows = mine[mine["generator"] == gen]
        bounds = np.array([interval(t) for t in rows["F3 ratio 95%"]], dtype=float).reshape(-1, 2)
        frame = pd.DataFrame({"eps": rows["ε"].astype(float).to_numpy(), "f3": rows["F3 ratio"].astype(float).to_numpy(),
                              "low": bounds[:, 0], "high": bounds[:, 1], "seeds": rows["seeds ok"].astype(str).to_numpy()})
        out[gen] = frame.sort_values("eps", kind="stable").reset_index(drop=True)
    return out


def draw_epsilon(dp: pd.DataFrame, refs: pd.DataFrame, dataset: str, path: Path) -> Path | None:
    """The figure of one dataset from the rows of dp_epsilon.csv and references.csv (as read by pandas,
    every column a string); None when the dataset has no DP row with an F3 ratio."""
    lines = series(dp, dataset)
    if not lines:
        return None
    fig = new_figure(7.0, 4.8)
    ax = fig.subplots()
    every = pd.concat(lines.values())
    lo, hi = float(every["eps"].min()), float(every["eps"].max())
    for k, (gen, rows) in enumerate(lines.items()):
        y = rows["f3"].to_numpy()
        x = rows["eps"].to_numpy() * 1.08 ** (k - (len(lines) - 1) / 2)
        err = np.vstack([y - rows["low"].to_numpy(), rows["high"].to_numpy() - y])
        err = np.where(np.isfinite(err), np.clip(err, 0, None), 0.0)
        ax.errorbar(x, y, yerr=err, marker="o", markersize=4.5, linewidth=1.3, capsize=3, label=gen, zorder=3,
                    color=GENERATORS.get(gen, f"C{4 + k}"))
    mine = refs[refs["dataset"] == dataset] if not refs.empty else refs
    f3_of = {} if mine.empty else dict(zip(mine["synthesizer"], mine["F3 ratio"]))
    labelled = []
    for name in REFERENCES:
        if not str(f3_of.get(name, "")).strip():
            continue
        value = float(f3_of[name])
        holdout = name == REFERENCE_NAME
        ax.axhline(value, color=REF_COLOR if holdout else "0.6", linestyle="-" if holdout else ":",
                   linewidth=1.0, zorder=1)
        labelled.append((value, name, REF_COLOR if holdout else "0.35"))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ticks = [t for t in (0.1, 0.3, 1, 3, 10, 30, 100) if lo / 1.5 <= t <= hi * 1.5]
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.minorticks_off()
    ax.set_xlim(lo / 1.6, hi * 1.6)
    values = [*every["f3"], *(v for v, _, _ in labelled)]
    ax.set_ylim(min(values) / 1.4, max(values) * 1.6)
    yt = [t for t in (0.5, 1, 2, 5, 10, 20, 50, 100) if min(values) / 1.4 <= t <= max(values) * 1.6]
    ax.set_yticks(yt, [f"{t:g}" for t in yt])
    for value, name, color in _spread(labelled, ax):
        ax.text(1.01, value, name, transform=ax.get_yaxis_transform(), va="center", ha="left", fontsize=7,
                color=color, clip_on=False)
    ax.set_xlabel("configured ε (log scale)")
    ax.set_ylabel("F3 ratio (log scale; 1 = as close to T as the holdout)")
    seeds = sorted(set(every["seeds"]))
    ax.set_title(f"{dataset}: fidelity against ε, mean and 95% t interval over seeds ({', '.join(seeds)} ok)",
                 loc="left", fontsize=9)
    ax.legend(loc="lower left", fontsize=7, frameon=True, framealpha=0.9, title="DP generator", title_fontsize=7)
    return save(fig, path)


def _spread(labels: list[tuple[float, str, str]], ax, min_gap: float = 0.045) -> list[tuple[float, str, str]]:
    """The reference labels moved apart on the log axis (in axes fractions) so that close lines stay legible."""
    if not labels:
        return []
    y0, y1 = (math.log10(v) for v in ax.get_ylim())
    frac = sorted(((math.log10(v) - y0) / (y1 - y0), name, color) for v, name, color in labels)
    placed: list[list] = []
    for f, name, color in frac:
        if placed and f - placed[-1][0] < min_gap:
            f = placed[-1][0] + min_gap
        placed.append([f, name, color])
    return [(10 ** (y0 + f * (y1 - y0)), name, color) for f, name, color in placed]
