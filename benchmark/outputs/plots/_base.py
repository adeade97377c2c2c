"""What every figure shares: bare Figures on the Agg canvas, atomic writes, names, colours, labels.

Figures are drawn on bare `Figure` objects with the Agg canvas and matplotlib's default style,
so they never touch pyplot's global state, do not depend on a user's matplotlibrc, and come out
byte-identical for the same inputs. Sizes are chosen for a laptop screen at 100 dpi: about
1200-1400 px wide, 7-9 pt text.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.transforms import Bbox, blended_transform_factory

from holdbench.contracts.io import atomic_path

REFERENCE_NAME = "holdout"
REF_COLOR, SYNTH_COLOR, T_COLOR, H_COLOR = "tab:orange", "tab:blue", "0.55", "tab:orange"
FAIL_COLOR = "tab:red"
DPI = 100
RC = {"font.size": 8, "axes.titlesize": 9, "axes.titleweight": "bold", "legend.fontsize": 7,
      "xtick.labelsize": 7.5, "ytick.labelsize": 7.5, "axes.spines.top": False, "axes.spines.right": False}


def save(fig: Figure, path: Path, tight: bool = True) -> Path:
    """Atomic PNG write; `tight=False` skips the second layout pass (per-cell plots: many)."""
    if fig.canvas is None or not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=DPI, bbox_inches="tight" if tight else None)
    return path


def new_figure(width: float, height: float, layout: str | None = "constrained") -> Figure:
    fig = Figure(figsize=(width, height), layout=layout, dpi=DPI)
    FigureCanvasAgg(fig)
    return fig


def short(name: Any, width: int = 28) -> str:
    """Label text from user data: shortened, and `$` escaped so it is never read as mathtext."""
    text = str(name)
    text = text if len(text) <= width else text[: width - 1] + "…"
    return text.replace("$", r"\$")


def common_prefix(names: list[str]) -> str:
    """A shared `xxx_` prefix of every name (e.g. `published_`), '' when there is none."""
    names = [n for n in names if n != REFERENCE_NAME]
    if len(names) < 2:
        return ""
    first = names[0]
    cut = first.find("_") + 1
    prefix = first[:cut] if cut > 0 else ""
    return prefix if prefix and all(n.startswith(prefix) and len(n) > len(prefix) for n in names) else ""


def display(name: Any, prefix: str = "", width: int = 28) -> str:
    text = str(name)
    return short(text[len(prefix):] if prefix and text.startswith(prefix) else text, width)


def reference_synths(cells: pd.DataFrame) -> set[str]:
    """Synthesizers that are the holdout reference row (by name or by the holdout rule flag)."""
    refs = {REFERENCE_NAME}
    if "holdout_rule" in cells:
        refs |= set(cells.loc[cells["holdout_rule"].map(lambda v: v is True), "synthesizer"])
    return refs


def fmt(value: float, digits: int = 3) -> str:
    """A number for a label: `digits` significant figures, no exponent for ordinary sizes."""
    if value is None or not math.isfinite(value):
        return "n/a"
    if value == 0:
        return "0"
    mag = math.floor(math.log10(abs(value)))
    if abs(float(f"{value:.{digits - 1}e}")) >= 10 ** (mag + 1):  # rounding carries into the next decade
        mag += 1
    decimals = max(0, digits - 1 - mag)
    return f"{value:.{decimals}f}"


def row_text(ax, y: float, text: str, color: str = "0.4") -> None:
    """A note at the left edge of an axes on row y (e.g. 'no result')."""
    ax.text(0.01, y, text, transform=blended_transform_factory(ax.transAxes, ax.transData),
            va="center", ha="left", color=color, fontsize=7, style="italic")


_OFFSETS = [(5, 3, "left", "bottom"), (5, -3, "left", "top"), (-5, 3, "right", "bottom"),
            (-5, -3, "right", "top"), (0, 7, "center", "bottom"), (0, -7, "center", "top")]


def _candidates():
    yield from ((dx, dy, ha, va, False) for dx, dy, ha, va in _OFFSETS)
    for radius in (18, 28, 40, 55):
        for k in range(12):
            angle = math.pi / 6 * k + math.pi / 12
            dx, dy = radius * math.cos(angle), radius * math.sin(angle)
            ha = "left" if dx > 2 else "right" if dx < -2 else "center"
            va = "bottom" if dy > 2 else "top" if dy < -2 else "center"
            yield (round(dx, 1), round(dy, 1), ha, va, True)


def place_labels(ax, points: list[tuple[float, float, str, str]], fontsize: float = 7) -> None:
    """Annotate (x, y, text, color) points without overlapping each other, the markers, or
    leaving the axes: a greedy, deterministic search over offsets around each point, with a
    leader line when the label has to move away. Call after the axes limits are final."""
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    fig.draw_without_rendering()
    frame = ax.get_window_extent(renderer)
    to_px = ax.transData.transform
    markers = [Bbox.from_bounds(px - 4, py - 4, 8, 8) for px, py in (to_px((x, y)) for x, y, _, _ in points)]
    placed: list[Bbox] = []
    order = sorted(range(len(points)), key=lambda i: (to_px(points[i][:2])[0], -to_px(points[i][:2])[1]))
    for i in order:
        x, y, text, color = points[i]
        others = [m for j, m in enumerate(markers) if j != i]
        chosen = None
        for dx, dy, ha, va, leader in _candidates():
            ann = ax.annotate(text, (x, y), xytext=(dx, dy), textcoords="offset points", ha=ha, va=va,
                              fontsize=fontsize, color=color, annotation_clip=False,
                              arrowprops={"arrowstyle": "-", "color": "0.6", "lw": 0.6} if leader else None)
            ann.set_in_layout(False)
            box = ann.get_window_extent(renderer).padded(1.5)
            inside = (box.x0 >= frame.x0 and box.x1 <= frame.x1 and box.y0 >= frame.y0 and box.y1 <= frame.y1)
            if inside and not any(box.overlaps(b) for b in placed + others):
                chosen = box
                break
            ann.remove()
        if chosen is None:  # nothing free: the first spot, clipped to the axes
            ann = ax.annotate(text, (x, y), xytext=(5, 3), textcoords="offset points", fontsize=fontsize,
                              color=color)
            ann.set_in_layout(False)
            chosen = ann.get_window_extent(renderer)
        placed.append(chosen)


def err(rows: pd.DataFrame, metric: str) -> np.ndarray:
    """2 x n asymmetric error bars from the summary interval (0 where there is none)."""
    mean = rows[f"{metric}_mean"].to_numpy(float)
    low = np.nan_to_num(mean - rows[f"{metric}_ci_low"].to_numpy(float), nan=0.0)
    high = np.nan_to_num(rows[f"{metric}_ci_high"].to_numpy(float) - mean, nan=0.0)
    return np.vstack([np.clip(low, 0, None), np.clip(high, 0, None)])


def metric_rows(summary: pd.DataFrame, dataset: str, metrics: list[str]) -> pd.DataFrame:
    rows = summary[summary["dataset"] == dataset].copy()
    for m in metrics:
        for suffix in ("_mean", "_ci_low", "_ci_high"):
            if m + suffix not in rows:
                rows[m + suffix] = np.nan
    return rows.reset_index(drop=True)


def tick(row: pd.Series, prefix: str = "") -> str:
    label = display(row["synthesizer"], prefix)
    if row["n_ok"] < row["n_seeds"]:
        label += f" ({int(row['n_ok'])}/{int(row['n_seeds'])} ok)"
    return label


def safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "x"
