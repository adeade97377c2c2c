"""The frontier figure (benchmark/outputs/plots/frontier.py): ε and p read from what the cells recorded they ran
with (never from the names), DP points joined in order of ε (not of the study's listing), flips joined in
order of p, the holdout drawn as the reference mark, a name that states another ε than the run used flagged,
cells without a result named in the title, no figure without its metrics."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from holdbench.benchmark.outputs.plots import _base, frontier
from holdbench.benchmark.outputs.plots.frontier import frontier_tasks, plot_frontier
from holdbench.benchmark.workflow.cellconfig import name_conflicts, stated_settings

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
    # what each cell recorded it ran with (results.cells_table reads it from status.json)
    recorded = [_recorded(r[0]) for r in ROWS]
    for col in ("generator", "setting_epsilon", "setting_p", "name_conflict"):
        cells[col] = [r[col] for r in recorded]
    return cells, summary


TARGETS = {"mst": "holdbench.synthesizers.dp.MST", "privbayes": "holdbench.synthesizers.dp.PrivBayes",
           "flip": "holdbench.synthesizers.flip.Flip", "cart": "holdbench.synthesizers.cart.CART"}


def _recorded(name: str, **ran) -> dict:
    """The recorded-settings columns of a cell that ran as its name says (or with `ran` over it)."""
    settings = {**stated_settings(name), **ran}
    base = "flip" if name.startswith("flip") else name.split("_eps")[0]
    return {"generator": TARGETS.get(base), "setting_epsilon": settings.get("epsilon", np.nan),
            "setting_p": settings.get("p", np.nan), "name_conflict": "; ".join(name_conflicts(name, settings)) or None}


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


def test_stated_settings_read_a_name_only_to_compare_it_with_the_run():
    assert stated_settings("mst_eps0.1") == {"epsilon": 0.1}
    assert stated_settings("privbayes_eps10") == {"epsilon": 10.0}
    assert stated_settings("flip10") == {"p": 0.1}
    assert stated_settings("mst") == {} and stated_settings("eps1") == {}
    assert name_conflicts("mst_eps3", {"epsilon": 3.0}) == []
    assert name_conflicts("mst_eps3", {"epsilon": 1e-300}) == ["its name states epsilon 3 but it ran at epsilon 1e-300"]
    assert name_conflicts("my_eps3", {"other": 1}) == []          # no ε setting: the name states nothing about it


def test_epsilon_comes_from_the_recorded_run_not_from_the_name(monkeypatch, tmp_path):
    """`params:` overrode the ε of mst_eps3 and mst_eps10: the points are labelled with the ε the cells ran
    at (1e-300 and 1e+308), ordered by it, and the two names are flagged in the title."""
    figures = []
    monkeypatch.setattr(frontier, "save", lambda fig, path, tight=True: figures.append(fig) or path)
    rows = [("mst_eps3", 5.0, 0.5, 0.5), ("mst_eps10", 1.2, 0.6, 0.6), ("mst_eps1", 2.0, 0.55, 0.55)]
    summary = pd.DataFrame({"dataset": "adult", "synthesizer": [r[0] for r in rows], "F3_ratio_mean": [r[1] for r in rows],
                            "mia_auc_max_mean": [r[2] for r in rows], "dcr_share_mean": [r[3] for r in rows]})
    ran = {"mst_eps3": _recorded("mst_eps3", epsilon=1e-300), "mst_eps10": _recorded("mst_eps10", epsilon=1e308),
           "mst_eps1": _recorded("mst_eps1")}
    cells = pd.DataFrame([{"dataset": "adult", "synthesizer": n, "holdout_rule": False, **ran[n]} for n, *_ in rows])
    plot_frontier(cells, summary, "adult", tmp_path / "f.png")
    top = figures[0].axes[0]
    labels = {t.get_text() for t in top.texts}
    assert "3" not in labels and "10" not in labels
    assert {"1e-300 (name: mst_eps3)", "1e+308 (name: mst_eps10)", "1"} <= labels
    assert list(_line(top, "mst (ε)").get_xdata()) == [5.0, 2.0, 1.2]   # ε 1e-300, 1, 1e308
    title = top.get_title(loc="left")
    assert "ran at another setting than the name states: mst_eps3, mst_eps10" in title


def test_a_name_without_a_recorded_setting_is_a_plain_point(monkeypatch, tmp_path):
    """A cell that recorded no config (its status.json lost) is not placed on an ε line by its name."""
    figures = []
    monkeypatch.setattr(frontier, "save", lambda fig, path, tight=True: figures.append(fig) or path)
    summary = pd.DataFrame({"dataset": "adult", "synthesizer": ["mst_eps3"], "F3_ratio_mean": [2.0],
                            "mia_auc_max_mean": [0.5], "dcr_share_mean": [0.5]})
    cells = pd.DataFrame({"dataset": "adult", "synthesizer": ["mst_eps3"], "holdout_rule": [False],
                          "generator": [None], "setting_epsilon": [np.nan], "setting_p": [np.nan],
                          "name_conflict": [None]})
    plot_frontier(cells, summary, "adult", tmp_path / "f.png")
    top = figures[0].axes[0]
    assert not [ln for ln in top.get_lines() if ln.get_label() == "mst (ε)"]
    assert "mst_eps3" in {t.get_text() for t in top.texts}


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


def test_the_tradeoff_figure_orders_the_flips_by_recorded_p_not_by_name(monkeypatch, tmp_path):
    """Figure 11 (plots/study.py) joins the flips by the p their cells ran with: `flip90` run at p 0.05 comes first."""
    from holdbench.benchmark.outputs.plots import study as study_plots

    figures = []
    monkeypatch.setattr(study_plots, "save", lambda fig, path, tight=True: figures.append(fig) or path)
    names = ["flip10", "flip50", "flip90"]
    ran = {"flip10": 0.1, "flip50": 0.5, "flip90": 0.05}
    summary = pd.DataFrame({"dataset": "adult", "synthesizer": names, "n_ok": 1, "n_seeds": 1,
                            "F3_ratio_mean": [1.0, 2.0, 3.0], "dcr_share_mean": [0.9, 0.7, 0.6],
                            "generator": TARGETS["flip"], "setting_p": [ran[n] for n in names]})
    for m in ("F3_ratio", "dcr_share"):
        summary[f"{m}_ci_low"] = summary[f"{m}_ci_high"] = np.nan
    cells = pd.DataFrame({"dataset": "adult", "synthesizer": names, "holdout_rule": False})
    study_plots.plot_tradeoff(cells, summary, tmp_path / "t.png")
    line = _line(figures[0].axes[0], "flip baselines")
    assert list(line.get_xdata()) == [3.0, 1.0, 2.0]      # p 0.05 (flip90), 0.1, 0.5
