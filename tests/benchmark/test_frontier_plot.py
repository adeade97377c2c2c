"""The frontier figure (benchmark/outputs/plots/frontier.py): ε variants parsed from their names, DP points
joined in order of ε (not of the study's listing), flips joined in order of p, the holdout drawn as
the reference mark, cells without a result named in the title, no figure without its metrics."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from holdbench.benchmark.outputs.plots import _base, frontier
from holdbench.benchmark.outputs.plots.frontier import epsilon_of, frontier_tasks, plot_frontier

# (synthesizer, F3 ratio, best MIA AUC, DCR share); listed out of ε and p order on purpose
ROWS = [
    ("mst_eps10", 20.0, 0.51, 0.49),
    ("mst_eps0.1", 26.0, 0.50, 0.52),
    ("mst_eps1", 24.0, 0.505, 0.50),
    ("privbayes_eps3", 19.0, 0.499, 0.496),
    ("privbayes_eps0.3", 31.0, 0.501, 0.497),
    ("flip50", 2.9, 0.525, 0.694),
    ("flip10", 1.0, 0.767, 0.974),
    ("flip90", 3.8, 0.505, 0.506),
    ("cart", 0.85, 0.566, 0.582),
    ("holdout", 1.0, np.nan, 0.491),
    ("ctgan", np.nan, np.nan, np.nan),   # a cell with no result (error)
]


def _tables(dataset: str = "adult") -> tuple[pd.DataFrame, pd.DataFrame]:
    summary = pd.DataFrame({"dataset": dataset, "synthesizer": [r[0] for r in ROWS],
                            "F3_ratio_mean": [r[1] for r in ROWS], "mia_auc_max_mean": [r[2] for r in ROWS],
                            "dcr_share_mean": [r[3] for r in ROWS]})
    cells = pd.DataFrame({"dataset": dataset, "synthesizer": [r[0] for r in ROWS],
                          "holdout_rule": [r[0] == "holdout" for r in ROWS]})
    return cells, summary


@pytest.fixture()
def drawn(monkeypatch, tmp_path):
    """plot_frontier's figure, kept instead of only written."""
    figures = []
    real_save = _base.save

    def keep(fig, path, tight=True):
        figures.append(fig)
        return real_save(fig, path, tight)

    monkeypatch.setattr(frontier, "save", keep)
    cells, summary = _tables()
    path = plot_frontier(cells, summary, "adult", tmp_path / "frontier_adult.png")
    assert path is not None and Path(path).read_bytes().startswith(b"\x89PNG")
    return figures[0]


def _line(ax, label: str):
    found = [ln for ln in ax.get_lines() if ln.get_label() == label]
    assert len(found) == 1, [ln.get_label() for ln in ax.get_lines()]
    return found[0]


def test_epsilon_of_reads_the_variant_name():
    assert epsilon_of("mst_eps0.1") == ("mst", 0.1)
    assert epsilon_of("privbayes_eps10") == ("privbayes", 10.0)
    assert epsilon_of("my_gen_eps3") == ("my_gen", 3.0)
    assert epsilon_of("flip10") is None
    assert epsilon_of("mst") is None
    assert epsilon_of("eps1") is None


def test_dp_points_are_joined_in_order_of_epsilon(drawn):
    top, bottom = drawn.axes
    f3 = {r[0]: r[1] for r in ROWS}
    auc = {r[0]: r[2] for r in ROWS}
    dcr = {r[0]: r[3] for r in ROWS}
    mst = ["mst_eps0.1", "mst_eps1", "mst_eps10"]
    line = _line(top, "mst (ε)")
    assert list(line.get_xdata()) == [f3[n] for n in mst]
    assert list(line.get_ydata()) == [auc[n] for n in mst]
    assert list(_line(bottom, "mst (ε)").get_ydata()) == [dcr[n] for n in mst]
    pb = _line(bottom, "privbayes (ε)")
    assert list(pb.get_xdata()) == [f3["privbayes_eps0.3"], f3["privbayes_eps3"]]
    labels = {t.get_text() for t in top.texts}
    assert {"0.1", "1", "10", "0.3", "3"} <= labels  # each DP point labelled with its ε


def test_flips_are_one_dashed_reference_line_in_order_of_p(drawn):
    top, _ = drawn.axes
    flips = _line(top, "flips")
    assert list(flips.get_xdata()) == [1.0, 2.9, 3.8]          # flip10, flip50, flip90
    assert flips.get_linestyle() == "--"


def test_holdout_is_the_reference_mark_and_others_are_plain_points(drawn):
    top, bottom = drawn.axes
    # holdout has no attack AUC (undefined for S = H): no point in the top panel, a diamond below
    diamonds = [ln for ln in bottom.get_lines() if ln.get_marker() == "D"]
    assert len(diamonds) == 1
    assert list(diamonds[0].get_xdata()) == [1.0] and list(diamonds[0].get_ydata()) == [0.491]
    assert not [ln for ln in top.get_lines() if ln.get_marker() == "D"]
    squares = [(list(ln.get_xdata()), list(ln.get_ydata())) for ln in top.get_lines() if ln.get_marker() == "s"]
    assert squares == [([0.85], [0.566])]                       # cart
    assert top.get_xscale() == "log"


def test_a_cell_without_result_is_named_in_the_title(drawn):
    assert "no result: ctgan" in drawn.axes[0].get_title(loc="left")


def test_no_figure_without_its_metrics_and_one_task_per_dataset(tmp_path):
    cells_a, summary_a = _tables("adult")
    cells_b, summary_b = _tables("online-shoppers")
    cells, summary = pd.concat([cells_a, cells_b]), pd.concat([summary_a, summary_b])
    key = lambda *args: "k"
    tasks = frontier_tasks("code", cells, summary, tmp_path, key)
    assert [t[1].name for t in tasks] == ["frontier_adult.png", "frontier_online-shoppers.png"]
    assert frontier_tasks("code", cells, summary.drop(columns="mia_auc_max_mean"), tmp_path, key) == []


def test_no_figure_when_no_cell_has_a_fidelity_result(tmp_path):
    cells, summary = _tables()
    summary["F3_ratio_mean"] = np.nan
    assert plot_frontier(cells, summary, "adult", tmp_path / "f.png") is None
    assert not (tmp_path / "f.png").exists()
