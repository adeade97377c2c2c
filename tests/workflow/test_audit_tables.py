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
    red = (img[..., 0] > 180) & (img[..., 1] < 80) & (img[..., 2] < 80)   # tab:red's rings: the leaky point, cart's
    assert red.sum() > 20

    def red_pixels(kept) -> int:
        img = np.asarray(Image.open(draw_audit(kept, "d", tmp_path / "x.png")).convert("RGB")).astype(int)
        return int(((img[..., 0] > 180) & (img[..., 1] < 80) & (img[..., 2] < 80)).sum())

    # without the two cells that fail the audit's gate (a DP point above its ε, a generator without ε above 0),
    # no ring; either alone is ringed
    calm = points[~points["synthesizer"].isin(["leaky_eps0.1", "cart"])]
    assert red_pixels(calm) == 0
    assert red_pixels(points[points["synthesizer"] != "leaky_eps0.1"]) > 20
    assert red_pixels(points[points["synthesizer"] != "cart"]) > 20
    with pytest.raises(ValueError, match="no column"):
        table_points(table.drop(columns=[GEN]), "d")


def _perfect(m: int, n: int, confidence: float) -> float:
    """A perfect attack's bound written out: Clopper-Pearson at k = n has the closed form a^(1/n)."""
    import math

    a = (1 - confidence) / 2
    tpr_lo, fpr_hi = a ** (1 / m), 1 - a ** (1 / n)
    return max(math.log(tpr_lo / fpr_hi), math.log((1 - fpr_hi) / (1 - tpr_lo)))


def test_the_largest_provable_epsilon_is_a_perfect_attacks_bound_per_cell(tmp_path):
    from holdbench.benchmark.outputs.plots.audit import CEILING

    with_ceilings = runpy.run_path(str(SCRIPT))["with_ceilings"]
    eps = pd.DataFrame([_row("d", "cart", "", "0.00", "CART"), _row("d", "mst_eps1", "1", "0.00", "MST"),
                        _row("d", "aim_eps1", "1", "", "AIM")])
    targets = pd.DataFrame(
        [{"dataset": "d", "synthesizer": "cart", "rank": r, "TP/members": f"3/{m}", "FP/non-members": f"0/{n}"}
         for r, (m, n) in enumerate([(20, 20), (25, 15), (18, 22), (20, 20), (30, 10)], 1)]
        + [{"dataset": "d", "synthesizer": "mst_eps1", "rank": r, "TP/members": "0/60", "FP/non-members": "1/60"}
           for r in (1, 2, 3)])
    out = with_ceilings(eps, targets, 0.95)
    assert list(out.columns).index(CEILING) == list(out.columns).index(AUD) + 1
    cart = max(_perfect(m, n, 1 - 0.05 / 5) for m, n in [(20, 20), (25, 15), (18, 22), (30, 10)])
    assert out[CEILING].tolist() == [f"{cart:.2f}", f"{_perfect(60, 60, 1 - 0.05 / 3):.2f}", ""]
    assert f"{_perfect(20, 20, 1 - 0.05 / 5):.2f}" == "1.19"  # the shipped audit's size: 20 + 20 test fits, 5 targets
    assert out[CEILING].iloc[0] != "1.19"  # an unbalanced target's bound is the cell's largest
    again = with_ceilings(out, targets, 0.99)  # a committed column is recomputed, not duplicated
    assert list(again.columns) == list(out.columns) and again[CEILING].iloc[0] != out[CEILING].iloc[0]
    # the figure draws it as a line of its own
    path = draw_audit(table_points(out.assign(**{AUD: ["0.00", "0.00", "0.00"]}), "d"), "d", tmp_path / "c.png")
    img = np.asarray(Image.open(path).convert("RGB")).astype(int)
    purple = (abs(img[..., 0] - 148) < 20) & (abs(img[..., 1] - 103) < 20) & (abs(img[..., 2] - 189) < 20)
    assert purple.sum() > 50


def test_recheck_puts_each_rerun_cell_beside_its_committed_row_and_refuses_an_unknown_one():
    script = runpy.run_path(str(SCRIPT))
    recheck_table, ceiling = script["recheck_table"], script["CEILING"]

    def row(synth: str, fits: str, auc: str, audited: str, provable: str) -> dict:
        return {**_row("adult", synth, "0.1", audited, "AIM"), "test fits": fits, "audit AUC max": auc,
                "audit AUC mean": "0.5", ceiling: provable}

    committed = pd.DataFrame([row("cart", "40", "0.810", "0.00", "1.19"), row("aim_eps0.1", "40", "0.770", "0.00", "1.19")])
    new = pd.DataFrame([row("aim_eps0.1", "120", "0.540", "0.00", "2.23")])
    out = recheck_table(committed, new, (0, 1))
    assert len(out) == 1
    got = out.iloc[0]
    assert (got["synthesizer"], got[GEN], got[EPS]) == ("aim_eps0.1", "AIM", "0.1")
    assert (got["first run: test fits"], got["first run: shadow seed"], got["first run: audit AUC max"]) == ("40", 0, "0.770")
    assert (got["re-check: test fits"], got["re-check: shadow seed"], got["re-check: audit AUC max"]) == ("120", 1, "0.540")
    assert (got[f"first run: {ceiling}"], got[f"re-check: {ceiling}"]) == ("1.19", "2.23")
    with pytest.raises(SystemExit, match="adult/mst_eps1 has no row"):
        recheck_table(committed, pd.DataFrame([row("mst_eps1", "120", "0.5", "0.00", "2.23")]), (0, 1))


def test_one_run_puts_each_cell_beside_its_per_target_row_with_the_ceiling_it_recorded():
    script = runpy.run_path(str(SCRIPT))
    one_run_table, with_ceilings, ceiling = script["one_run_table"], script["with_ceilings"], script["CEILING"]

    def row(synth: str, auc: str, audited: str) -> dict:
        return {**_row("online-shoppers", synth, "", audited, "CART"), "audit AUC max": auc, "audit AUC mean": "0.5"}

    committed = pd.DataFrame([{**row("cart", "0.958", "0.46"), ceiling: "1.19"}])
    targets = pd.DataFrame({"dataset": ["online-shoppers"] * 2, "synthesizer": ["cart"] * 2,
                            "TP/members": ["20/20", "19/20"], "FP/non-members": ["0/20", "1/20"]})
    bounds = {("online-shoppers", "cart"): {"bound": "one_run", "targets": 20, "provable": 5.5856, "guesses": 135,
                                            "correct": 131}}
    new = with_ceilings(pd.DataFrame([row("cart", "1.000", "2.78")]), targets, 0.95, bounds)
    assert new[ceiling].tolist() == ["5.59"]  # recorded by the cell, not recomputed from per-target counts
    per_target = with_ceilings(pd.DataFrame([row("cart", "1.000", "2.78")]), targets, 0.95)
    assert per_target[ceiling].tolist() != ["5.59"]
    got = one_run_table(committed, new.astype(str), bounds).iloc[0]
    assert (got["per target: audited ε (lower bound)"], got["one run: audited ε (lower bound)"]) == ("0.46", "2.78")
    assert (got[f"per target: {ceiling}"], got[f"one run: {ceiling}"]) == ("1.19", "5.59")
    assert (got["one run: targets"], got["one run: right guesses"], got["test fits"]) == (20, "131/135", "40")
    with pytest.raises(SystemExit, match="audited with the per_target bound"):
        one_run_table(committed, new.astype(str), {("online-shoppers", "cart"): {"bound": "per_target"}})
    with pytest.raises(SystemExit, match="compare like with like"):
        one_run_table(committed, new.assign(**{"test fits": "120"}).astype(str), bounds)


def test_refresh_sides_takes_the_repeated_side_from_epsilon_csv_and_leaves_the_run_s_side(tmp_path):
    """A re-published epsilon.csv row (the audit's gaussian_copula cells were re-run) reaches the side of
    one_run.csv and recheck.csv that repeats it; the side their own runs made stays; a row epsilon.csv lacks is
    refused."""
    script = runpy.run_path(str(SCRIPT))
    refresh_sides, ceiling = script["refresh_sides"], script["CEILING"]
    eps = pd.DataFrame([{**_row("adult", "gaussian_copula", "", "0.00", "GaussianCopula"), "audit AUC max": "0.642",
                         "audit AUC mean": "0.513", ceiling: "1.19"},
                        {**_row("adult", "aim_eps0.1", "0.1", "0.00", "AIM"), "audit AUC max": "0.770",
                         "audit AUC mean": "0.621", ceiling: "1.19"}])
    one_run = pd.DataFrame([{"dataset": "adult", "synthesizer": "gaussian_copula", "per target: audit AUC max": "0.620",
                             f"per target: {AUD}": "0.00", f"per target: {ceiling}": "1.19",
                             "one run: audit AUC max": "0.712", f"one run: {AUD}": "0.00"}])
    recheck = pd.DataFrame([{"dataset": "adult", "synthesizer": "aim_eps0.1", "first run: test fits": "40",
                             "first run: audit AUC max": "0.770", "first run: audit AUC mean": "0.621",
                             f"first run: {AUD}": "0.00", f"first run: {ceiling}": "1.19",
                             "re-check: audit AUC max": "0.540"}])
    one_run.to_csv(tmp_path / "one_run.csv", index=False)
    recheck.to_csv(tmp_path / "recheck.csv", index=False)
    changed = refresh_sides(tmp_path, eps)
    assert changed == ["one_run.csv adult/gaussian_copula per target: audit AUC max: 0.620 -> 0.642"]
    got = pd.read_csv(tmp_path / "one_run.csv", dtype=str, keep_default_na=False)
    assert got.to_dict("records") == [{**one_run.iloc[0].to_dict(), "per target: audit AUC max": "0.642"}]
    assert pd.read_csv(tmp_path / "recheck.csv", dtype=str, keep_default_na=False).equals(recheck)
    with pytest.raises(SystemExit, match="adult/aim_eps0.1 has no row in epsilon.csv"):
        refresh_sides(tmp_path, eps.iloc[:1])
    # a folder without the committed files is named before anything is written
    with pytest.raises(SystemExit, match=r"no epsilon.csv, provenance.json \(run docs/gen/export_results.py"):
        script["_require"](tmp_path, "epsilon.csv", "one_run.csv", "provenance.json")


def test_one_run_merge_keeps_the_committed_rows_of_cells_the_run_does_not_hold(tmp_path):
    """--one-run --merge (a few cells re-run): their rows replace the committed ones, the others stay, in the
    study's order; the provenance entry names both runs; without a committed one_run.csv it is refused."""
    import json
    import types

    write_beside = runpy.run_path(str(SCRIPT))["write_beside"]
    write_beside.__globals__.update(provenance=lambda res: ({}, {}, ["bbbbbbb0000"]), _study_of=lambda res: STUDY)
    pd.DataFrame([{"dataset": "online-shoppers", "synthesizer": "cart", "x": "3"},
                  {"dataset": "adult", "synthesizer": "mst_eps1", "x": "2"},
                  {"dataset": "adult", "synthesizer": "cart", "x": "1"}]).to_csv(tmp_path / "one_run.csv", index=False)
    first = "holdbench run audit_one_run; python scripts/bench/audit_tables.py a b --one-run"
    (tmp_path / "provenance.json").write_text(json.dumps({"tables": [
        {"file": "epsilon.csv", "machine": "m"}, {"file": "one_run.csv", "command": first, "run_commit": "aaaaaaa"}]}))
    res = types.SimpleNamespace(name="audit_one_run", study={"datasets": ["adult"], "synthesizers": ["cart"]})
    new = pd.DataFrame([{"dataset": "adult", "synthesizer": "cart", "x": 9}])
    write_beside(res, new, tmp_path, Path("results/audit_one_run"), "one-run", "t", "s", merge=True)
    got = pd.read_csv(tmp_path / "one_run.csv", dtype=str)
    assert got.to_numpy().tolist() == [["adult", "cart", "9"], ["adult", "mst_eps1", "2"], ["online-shoppers", "cart", "3"]]
    entry = json.loads((tmp_path / "provenance.json").read_text())["tables"][-1]
    assert entry["run_commit"] == "aaaaaaa, bbbbbbb"
    assert entry["command"].startswith(f"{first}; then holdbench run audit_one_run --datasets adult --synthesizers cart; "
                                       f"python scripts/bench/"
                                       f"audit_tables.py results/audit_one_run {tmp_path} --one-run --merge")
    (tmp_path / "one_run.csv").unlink()
    with pytest.raises(SystemExit, match="nothing to merge with"):
        write_beside(res, new, tmp_path, Path("results/audit_one_run"), "one-run", "t", "s", merge=True)


def _targets(dataset: str, synth: str, counts: list[tuple[str, str]]) -> list[dict]:
    return [{"dataset": dataset, "synthesizer": synth, "rank": r, "TP/members": tp, "FP/non-members": fp}
            for r, (tp, fp) in enumerate(counts, 1)]


def test_the_audit_gate_column_is_check_s_verdict_on_the_bound_from_the_counts():
    from holdbench.benchmark.outputs.plots.audit import CEILING

    script = runpy.run_path(str(SCRIPT))
    with_ceilings, with_verdicts, verdict = script["with_ceilings"], script["with_verdicts"], script["VERDICT"]
    perfect = f"{_perfect(20, 20, 0.95):.2f}"  # one target: its bound at the cell's confidence itself
    assert perfect == "1.60"
    eps = pd.DataFrame([_row("d", "cart", "", perfect, "CART"), _row("d", "flip50", "", "0.00", "Flip"),
                        _row("d", "mst_eps0.1", "0.1", perfect, "MST"), _row("d", "mst_eps1", "1", "0.00", "MST"),
                        _row("d", "mst_eps10", "10", "0.00", "MST"), _row("d", "holdout", "", "0.00", "Holdout")])
    targets = pd.DataFrame(
        _targets("d", "cart", [("20/20", "0/20")]) + _targets("d", "flip50", [("12/20", "8/20")])
        + _targets("d", "mst_eps0.1", [("20/20", "0/20")]) + _targets("d", "mst_eps1", [("10/20", "10/20")])
        + _targets("d", "mst_eps10", [("11/20", "9/20")]) + _targets("d", "holdout", [("10/20", "10/20")]))
    out = with_verdicts(with_ceilings(eps, targets, 0.95), targets, 0.95)
    assert list(out.columns).index(verdict) == list(out.columns).index(CEILING) + 1
    assert out[verdict].tolist() == [
        "audited_membership: FAIL",   # no DP guarantee, a perfect attack on its one target
        "audited_membership: pass",   # no DP guarantee, 12 of 20 against 8 of 20: no evidence
        "audited_epsilon: FAIL",      # a bound of 1.60 above its ε 0.1
        "audited_epsilon: pass",      # a bound of 0 at ε 1
        "audited_epsilon: n/a",       # ε 10 above what 20 + 20 test fits can prove
        ""]                           # the holdout reference row is not judged
    again = with_verdicts(out, targets, 0.95)  # recomputed, not duplicated
    assert list(again.columns) == list(out.columns) and again[verdict].tolist() == out[verdict].tolist()
    # a table whose audited ε the counts do not give is refused, naming the cell
    wrong = eps.assign(**{AUD: ["0.50", "0.00", perfect, "0.00", "0.00", "0.00"]})
    with pytest.raises(SystemExit, match="d/cart: targets.csv's counts give an ε bound of 1.5"):
        with_verdicts(with_ceilings(wrong, targets, 0.95), targets, 0.95)
    # the δ a cell recorded (a run's cells) is the one its bound used; without a record, its config's (cart: none)
    import math

    a = 0.025  # Clopper-Pearson at 20 of 20 and 0 of 20, written out: tpr_low = a^(1/20), fpr_high = 1 - a^(1/20)
    at_delta = f"{math.log((a ** (1 / 20) - 0.1) / (1 - a ** (1 / 20))):.2f}"
    assert at_delta == "1.47"
    one = eps.iloc[:1].assign(**{AUD: [at_delta]})
    recorded = {("d", "cart"): {"bound": "per_target", "delta": 0.1}}
    assert with_verdicts(with_ceilings(one, targets, 0.95), targets, 0.95, recorded)[verdict].tolist() == \
        ["audited_membership: FAIL"]
    with pytest.raises(SystemExit, match="d/cart: targets.csv's counts give an ε bound of 1.59"):
        with_verdicts(with_ceilings(one, targets, 0.95), targets, 0.95)


def test_the_committed_audit_gate_column_follows_the_gates_rule_on_the_committed_columns():
    """Every committed cell's verdict, against the rule the gates state, read from the table's own columns: a
    generator without ε fails when its audited ε is above 0; a DP cell is untested (n/a) when its ε is at or
    above the largest provable ε, else fails when its audited ε is above its ε; the holdout row has none."""
    committed = pd.read_csv(SCRIPT.parents[2] / "results" / "published" / "audit" / "epsilon.csv")
    from holdbench.benchmark.outputs.plots.audit import CEILING

    verdict = runpy.run_path(str(SCRIPT))["VERDICT"]
    for _, r in committed.iterrows():
        if r["synthesizer"] == "holdout":
            expected = None
        elif pd.isna(r[EPS]):
            expected = "audited_membership: " + ("FAIL" if r[AUD] > 0 else "pass")
        elif r[EPS] >= r[CEILING]:
            expected = "audited_epsilon: n/a"
        else:
            expected = "audited_epsilon: " + ("FAIL" if r[AUD] > r[EPS] else "pass")
        got = None if pd.isna(r[verdict]) else r[verdict]
        assert got == expected, (r["dataset"], r["synthesizer"])
    assert (committed[verdict] == "audited_membership: FAIL").sum() >= 1  # the table holds each kind of verdict
    assert (committed[verdict] == "audited_epsilon: n/a").sum() >= 1
