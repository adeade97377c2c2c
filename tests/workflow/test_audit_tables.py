"""scripts/bench/audit_tables.py --merge keeps the committed rows of cells a partial run does not hold, fills
the generator of rows that predate the column from their config, orders rows as the study lists them; the
audit figure draws from the committed epsilon.csv, with a DP point above its ε ringed."""

from __future__ import annotations

import runpy
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from holdbench.benchmark.outputs.plots.audit import TABLE_COLUMNS, draw_audit, table_points
from PIL import Image

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench" / "audit_tables.py"
STUDY = {"datasets": ["adult", "online-shoppers"], "synthesizers": ["cart", "holdout", "mst_eps1", "aim_eps1"]}
GEN, EPS, AUD = TABLE_COLUMNS["generator"], TABLE_COLUMNS["epsilon"], TABLE_COLUMNS["audited"]


def _row(dataset: str, synth: str, eps: str, audited: str, gen: str | None = None) -> dict:
    row = {"dataset": dataset, "synthesizer": synth, EPS: eps, AUD: audited, "test fits": "40"}
    return row if gen is None else {"dataset": dataset, "synthesizer": synth, GEN: gen,
                                     **{k: v for k, v in row.items() if k not in ("dataset", "synthesizer")}}


def test_merge_keeps_other_cells_replaces_the_run_s_and_fills_the_generator(tmp_path):
    merged = runpy.run_path(str(SCRIPT))["merged"]
    committed = tmp_path / "epsilon.csv"
    pd.DataFrame([_row("online-shoppers", "mst_eps1", "1", "0.00"), _row("adult", "cart", "", "0.00"),
                  _row("online-shoppers", "cart", "", "0.46")]).to_csv(committed, index=False)
    new = pd.DataFrame([_row("online-shoppers", "aim_eps1", "1", "0.00", "AIM"),
                        _row("adult", "cart", "", "0.12", "CART")])
    out = merged(new, committed, STUDY)
    assert list(out.columns) == list(new.columns)
    assert [tuple(r) for r in out[["dataset", "synthesizer", GEN, AUD]].to_numpy()] == [
        ("adult", "cart", "CART", "0.12"),                       # the run's value replaced the committed one
        ("online-shoppers", "cart", "CART", "0.46"),             # kept, its generator from conf/synthesizer/cart.yaml
        ("online-shoppers", "mst_eps1", "MST", "0.00"),
        ("online-shoppers", "aim_eps1", "AIM", "0.00")]
    pd.DataFrame([{"dataset": "adult", "other": 1}]).to_csv(committed, index=False)
    with pytest.raises(SystemExit, match="differ from this run's"):
        merged(new, committed, STUDY)


def test_the_figure_draws_from_the_table_and_rings_a_point_above_its_epsilon(tmp_path):
    table = pd.DataFrame([_row("d", "mst_eps0.1", "0.1", "0.00", "MST"), _row("d", "mst_eps1", "1", "0.00", "MST"),
                          _row("d", "leaky_eps0.1", "0.1", "0.80", "Leaky"), _row("d", "cart", "", "0.46", "CART"),
                          _row("d", "holdout", "", "0.00", "Holdout"), _row("d", "aim_eps1", "1", "", "AIM"),
                          _row("e", "cart", "", "0.1", "CART")])
    points = table_points(table, "d")
    assert list(points["synthesizer"]) == ["mst_eps0.1", "mst_eps1", "leaky_eps0.1", "cart", "holdout", "aim_eps1"]
    assert list(points["reference"]) == [False, False, False, False, True, False]
    assert np.isnan(points["audited"].iloc[-1]) and np.isnan(points["epsilon"].iloc[3])
    path = draw_audit(points, "d", tmp_path / "audit_d.png")
    img = np.asarray(Image.open(path).convert("RGB")).astype(int)
    assert img.shape[0] > 300 and img.shape[1] > 400
    red = (img[..., 0] > 180) & (img[..., 1] < 80) & (img[..., 2] < 80)   # tab:red's ring around the leaky point
    assert red.sum() > 20
    calm = draw_audit(points[points["synthesizer"] != "leaky_eps0.1"], "d", tmp_path / "calm.png")
    img = np.asarray(Image.open(calm).convert("RGB")).astype(int)
    assert ((img[..., 0] > 180) & (img[..., 1] < 80) & (img[..., 2] < 80)).sum() == 0
    with pytest.raises(ValueError, match="no column"):
        table_points(table.drop(columns=[GEN]), "d")
