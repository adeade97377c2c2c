"""The report's figures: matplotlib drawn to inline SVG text (no file, no network), one function each."""

from __future__ import annotations

import io
import re

import numpy as np

#: T, H, then each S in turn
COLORS = {"train": "#1f4e79", "holdout": "#7f7f7f"}
S_COLORS = ("#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#bcbd22")
MAX_BARS = 25


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.fonttype": "none", "font.size": 8, "axes.titlesize": 9,
                         "svg.hashsalt": "holdbench"})  # the same figure gives the same SVG text
    return plt


def svg(fig) -> str:
    """The figure as SVG markup without the XML prologue, ready to inline; the figure is closed."""
    plt = _plt()
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
    plt.close(fig)
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    return re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.DOTALL)


def s_color(i: int) -> str:
    return S_COLORS[i % len(S_COLORS)]


def column(name: str, kind: str, labels: list[str], train: np.ndarray, holdout: np.ndarray,
           synthetic: dict[str, np.ndarray]) -> str:
    """Shares of T, H and each S per bucket of one column: bars (categorical) or step lines over T's
    quantile buckets (numeric), buckets no table uses left out."""
    plt = _plt()
    shares = {"T": train / max(train.sum(), 1), "H": holdout / max(holdout.sum(), 1)}
    shares.update({f"S {n}": c / max(c.sum(), 1) for n, c in synthetic.items()})
    used = np.flatnonzero(np.sum([v for v in shares.values()], axis=0) > 0)
    fig, ax = plt.subplots(figsize=(6.4, 2.4))
    colors = [COLORS["train"], COLORS["holdout"], *(s_color(i) for i in range(len(synthetic)))]
    if kind == "categorical":
        keep = used[np.argsort(-shares["T"][used], kind="stable")][:MAX_BARS]
        width = 0.8 / len(shares)
        x = np.arange(len(keep))
        for i, ((lab, v), c) in enumerate(zip(shares.items(), colors)):
            ax.bar(x + i * width - 0.4 + width / 2, v[keep], width, label=lab, color=c)
        ax.set_xticks(x, [labels[j][:18] for j in keep], rotation=60, ha="right")
        more = len(used) - len(keep)
        if more > 0:
            ax.set_title(f"the {MAX_BARS} most frequent categories of T; {more} more in report.json", loc="left")
    else:
        x = np.arange(len(used))
        for (lab, v), c in zip(shares.items(), colors):
            ax.step(x, v[used], where="mid", label=lab, color=c, lw=1.2 if lab != "T" else 2, alpha=0.9)
        ticks = x[:: max(1, len(x) // 6)]
        ax.set_xticks(ticks, [labels[used[j]].split("..")[0][:10] for j in ticks], rotation=30, ha="right")
        ax.set_xlabel("T's quantile buckets (lower edge)")
    ax.set_ylabel("share of rows")
    ax.legend(fontsize=7, ncol=min(len(shares), 5), frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    return svg(fig)


def association(columns: list[str], train: np.ndarray, synthetic: np.ndarray, name: str) -> str:
    """Cramér's V of T, of S, and S minus T, as three heatmaps."""
    plt = _plt()
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.8))
    for ax, m, title, cmap, lim in ((axes[0], train, "T", "Blues", (0, 1)), (axes[1], synthetic, f"S {name}", "Blues", (0, 1)),
                                    (axes[2], synthetic - train, f"S {name} minus T", "RdBu_r", (-0.5, 0.5))):
        im = ax.imshow(m, cmap=cmap, vmin=lim[0], vmax=lim[1])
        ax.set_title(title)
        ax.set_xticks(range(len(columns)), [c[:12] for c in columns], rotation=90, fontsize=6)
        ax.set_yticks(range(len(columns)), [c[:12] for c in columns], fontsize=6)
        fig.colorbar(im, ax=ax, shrink=0.7)
    return svg(fig)


def dcr(hist, name: str) -> str:
    """Shares of S by Hamming distance to its nearest T record and to its nearest H record, and of H to T."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 2.4))
    d = hist["distance"].to_numpy()
    series = [("to_train", f"S {name} \u2192 T", "#d62728"), ("to_holdout", f"S {name} \u2192 H", "#ff9896"),
              ("holdout_to_train", "H \u2192 T", COLORS["holdout"])]
    width = 0.27
    for i, (col, lab, c) in enumerate(series):
        if col in hist:
            v = hist[col].to_numpy(dtype=float)
            ax.bar(d + (i - 1) * width, v / max(v.sum(), 1), width, label=lab, color=c)
    ax.set_xlabel("Hamming distance to the nearest record (columns that differ)")
    ax.set_ylabel("share")
    ax.legend(fontsize=7, frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    return svg(fig)


def quantiles(table, name: str, xlabel: str) -> str:
    """Two quantile functions (S's and H's), e.g. the NNDR distribution."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(4.2, 2.6))
    ax.plot(table["quantile"], table["synthetic"], color="#d62728", label=f"S {name}")
    ax.plot(table["quantile"], table["holdout"], color=COLORS["holdout"], label="H")
    ax.set_xlabel("quantile")
    ax.set_ylabel(xlabel)
    ax.legend(fontsize=7, frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    return svg(fig)


def roc(table, name: str) -> str:
    """Each attack's ROC curve, FPR on a log axis so that the low-FPR end (where an attack matters) shows."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(4.2, 3.2))
    for i, (attack, g) in enumerate(table.groupby("attack", sort=False)):
        f = g["fpr"].to_numpy(dtype=float)
        ax.plot(np.maximum(f, 1e-4), g["tpr"], label=str(attack), color=S_COLORS[i % len(S_COLORS)])
    grid = np.logspace(-4, 0, 50)
    ax.plot(grid, grid, ls=":", color="black", lw=0.8, label="chance")
    ax.set_xscale("log")
    ax.set_xlim(1e-4, 1)
    ax.set_xlabel("false positive rate (log)")
    ax.set_ylabel("true positive rate")
    ax.set_title(f"membership inference on S {name}", loc="left")
    ax.legend(fontsize=7, frameon=False)
    return svg(fig)


def bars(labels: list[str], series: dict[str, np.ndarray], xlabel: str, ylabel: str) -> str:
    """Grouped bars of a few series over shared labels (sequence lengths, coherence per column)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 2.4))
    width = 0.8 / max(len(series), 1)
    x = np.arange(len(labels))
    for i, (lab, v) in enumerate(series.items()):
        color = COLORS.get({"T": "train", "H": "holdout"}.get(lab, ""), s_color(i))
        ax.bar(x + i * width - 0.4 + width / 2, v, width, label=lab, color=color)
    step = max(1, len(labels) // 20)
    ax.set_xticks(x[::step], [str(lab)[:14] for lab in labels][::step], rotation=45, ha="right")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=7, frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    return svg(fig)
