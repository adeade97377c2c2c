"""Quality gates (ANITA D2.2): the distribution test against independent references, the YAML
contract, per-cell verdicts on the fabricated study, and `holdbench check`'s table and exit codes."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from holdbench.benchmark.cli import main
from holdbench.benchmark.outputs.gates import FAIL, NA, PASS, load_gates, parse_gates, shift_test, superiority, verdicts
from holdbench.benchmark.outputs.results import load_results
from holdbench.metrics.panel import PanelScores
from holdbench.metrics.registry import specs_of
from tests.benchmark.conftest import DCR_COUNTS, NO_DISTANCE_CELL

DEFAULT = Path(__file__).resolve().parents[2] / "conf" / "gates" / "default.yaml"


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "gates.yaml"
    path.write_text(text)
    return path


# ---- the test statistic ---------------------------------------------------------------------

def test_superiority_matches_brute_force_over_pairs():
    s = np.array([0, 1, 1, 2, 5, 5])
    r = np.array([1, 1, 3, 0, 2])
    pairs = [(a < b) + 0.5 * (a == b) for a, b in itertools.product(s, r)]
    vs, cs = np.unique(s, return_counts=True)
    vr, cr = np.unique(r, return_counts=True)
    assert superiority(vs, cs, vr, cr) == pytest.approx(np.mean(pairs))


def test_shift_test_on_counts_equals_brunner_munzel_on_records():
    rng = np.random.default_rng(7)
    s = rng.binomial(6, 0.35, 400)  # S a little closer to T than the reference
    r = rng.binomial(6, 0.45, 300)
    vs, cs = np.unique(s, return_counts=True)
    vr, cr = np.unique(r, return_counts=True)
    res = shift_test(vs, cs, vr, cr)
    assert res.pvalue == pytest.approx(stats.brunnermunzel(s, r, alternative="less").pvalue, rel=1e-9)
    u = stats.mannwhitneyu(r, s).statistic  # pairs where the reference is larger, ties 1/2
    assert res.effect + 0.5 == pytest.approx(u / (len(s) * len(r)))
    assert res.pvalue < 1e-4 and res.effect > 0.05 and (res.n_synthetic, res.n_reference) == (400, 300)
    same = shift_test(vs, cs, vs, cs)
    assert same.effect == pytest.approx(0.0) and same.pvalue == pytest.approx(0.5, abs=1e-9)


def test_shift_test_complete_separation_and_tiny_samples():
    assert shift_test([0], [50], [3], [40]).effect == 0.5
    assert shift_test([0], [50], [3], [40]).pvalue == 0.0
    assert shift_test([3], [50], [0], [40]).pvalue == 1.0
    assert math.isnan(shift_test([1], [1], [2], [10]).effect)


# ---- the YAML contract ----------------------------------------------------------------------

def test_default_gates_are_d22_and_exact_copies():
    gates = load_gates("default")
    assert Path(gates.source) == DEFAULT
    kinds = {t.name: (t.test, t.metric) for t in gates.targets}
    assert kinds == {"accuracy": (None, "F3_ratio"), "dcr_distribution": ("dcr", None),
                     "nndr_distribution": ("nndr", None), "dcr_share_interval": (None, "dcr_share"),
                     "exact_copies": (None, "exact_copy_excess")}
    accuracy = next(t for t in gates.targets if t.name == "accuracy")
    assert (accuracy.max, accuracy.min) == (2, None)
    copies = next(t for t in gates.targets if t.name == "exact_copies")
    assert (copies.use, copies.max, copies.min) == ("ci_low", 0.001, None)


@pytest.mark.parametrize("text, message", [
    ("targets: {a: {test: dcr, alpha: 2}}", "targets.a"),
    ("targets: {a: {metric: F2_ratio}}", "needs `min:` or `max:`"),
    ("targets: {a: {metric: F2_ratio, max: 2, bogus: 1}}", "unknown key(s) ['bogus']"),
    ("targets: {a: {test: dcr, metric: F2_ratio, max: 1}}", "not both"),
    ("targets: {a: {test: kolmogorov}}", "test must be dcr or nndr"),
    ("targets: {a: {metric: F2_ratio, min: 3, max: 2}}", "min 3 is above max 2"),
    ("targets: {}", "targets"),
    ("other: 1", "unknown key(s) ['other'] (known: description, targets)"),
])
def test_bad_gates_files_name_the_key(tmp_path, text, message):
    with pytest.raises(ValueError, match="gates file") as info:
        load_gates(_write(tmp_path, text))
    assert message in str(info.value)


def test_unknown_metric_is_named_with_a_suggestion(study):
    results = load_results(study.path)
    gates = parse_gates({"targets": {"fid": {"metric": "F2_ration", "max": 2}}})
    with pytest.raises(ValueError, match=r"'F2_ration' is not a metric.*\(did you mean 'F2_ratio'"):
        verdicts(results, gates)
    gates = parse_gates({"targets": {"fid": {"metric": "F2_ratio", "max": 2, "use": "ci_low"}}})
    with pytest.raises(ValueError, match="has no interval"):
        verdicts(results, gates)


def test_a_metric_of_a_family_the_evaluation_lacks_is_na_naming_that_family(study):
    """The fabricated study's families are fidelity and privacy: a gate on the MIA panel's AUC (the `attacks`
    family of conf/metrics/default.yaml) is n/a on every judged cell, saying which family computes it, and a
    failure when required; a name no family gives is still refused."""
    results = load_results(study.path)
    assert "mia_auc_max" not in {s.name for s in results.specs}
    gates = parse_gates({"targets": {"mia": {"metric": "mia_auc_max", "max": 0.6},
                                     "mia_required": {"metric": "mia_auc_max", "max": 0.6, "required": True},
                                     "fid": {"metric": "F2_ratio", "max": 100}}})
    table = verdicts(results, gates)
    judged = table[~table["reference"].astype(bool) & (table["target"] != "cell status")]
    n_cells = judged["cell_id"].nunique()  # the ok cells that are not the holdout row
    assert n_cells == 5 and len(judged) == 3 * n_cells
    mia = judged[judged["target"] == "mia"]
    assert set(mia["verdict"]) == {NA}
    assert mia["why"].str.contains("mia_auc_max not computed (written by the metric family 'attacks', which "
                                   "this evaluation skipped or does not have)", regex=False).all()
    assert set(judged.loc[judged["target"] == "mia_required", "verdict"]) == {FAIL}
    assert set(judged.loc[judged["target"] == "fid", "verdict"]) == {PASS}
    with pytest.raises(ValueError, match=r"'mia_auc_maxx' is not a metric of any metric family "
                                         r"\(did you mean 'mia_auc_max'"):
        verdicts(results, parse_gates({"targets": {"x": {"metric": "mia_auc_maxx", "max": 0.6}}}))


def test_unknown_gates_name():
    with pytest.raises(ValueError, match=r"no gates config 'nope': "):  # nothing close: no suggestion
        load_gates("nope")
    with pytest.raises(ValueError, match=r"no gates config 'defualt' \(did you mean 'default'\?\)"):
        load_gates("defualt")


# ---- verdicts on the fabricated study -------------------------------------------------------

def _with_panel(results):
    """The fabricated study with the privacy panel's registry entries (its metrics.json has them)."""
    return replace(results, specs=[*results.specs, *specs_of(PanelScores)])


def _by(table: pd.DataFrame, cell: tuple[str, str, int], target: str) -> pd.Series:
    d, s, k = cell
    row = table[(table["dataset"] == d) & (table["synthesizer"] == s) & (table["seed"] == k)
                & (table["target"] == target)]
    assert len(row) == 1, (cell, target)
    return row.iloc[0]


def test_verdicts_per_cell(study):
    results = _with_panel(load_results(study.path))
    gates = parse_gates({"targets": {
        "dcr": {"test": "dcr", "alpha": 0.05, "max_effect": 0.02},
        "nndr": {"test": "nndr"},
        "share": {"metric": "dcr_share", "use": "ci_low", "max": 0.5},
        "fid": {"metric": "F2_ratio", "max": 2.5},
        "ims": {"metric": "ims_synthetic", "max": 0.5, "required": True},
    }})
    table = verdicts(results, gates)
    # ctgan (index 2): S->T counts [60, 40, 15, 5, 0] against S->H [5, 15, 40, 40, 20]
    to_t, to_h = (np.repeat(np.arange(5), c) for c in DCR_COUNTS[2])
    leak = _by(table, ("alpha", "ctgan", 0), "dcr")
    assert leak["verdict"] == FAIL
    assert leak["pvalue"] == pytest.approx(stats.brunnermunzel(to_t, to_h, alternative="less").pvalue)
    assert leak["value"] == pytest.approx(np.mean([(a < b) + 0.5 * (a == b) for a in to_t for b in to_h]) - 0.5)
    fair = _by(table, ("alpha", "gauss", 0), "dcr")
    assert fair["verdict"] == PASS and fair["value"] == pytest.approx(0.0)
    assert _by(table, NO_DISTANCE_CELL, "dcr")["verdict"] == NA  # no dcr_histogram.csv
    assert "no dcr_histogram.csv" in _by(table, NO_DISTANCE_CELL, "dcr")["detail"]
    # NNDR: H's ratios uniform, S's = U^(1+s): effect P(U^(1+s) < V) - 1/2 = (1+s)/(2+s) - 1/2
    for synth, s in (("gauss", 1), ("ctgan", 2)):
        row = _by(table, ("alpha", synth, 0), "nndr")
        assert row["value"] == pytest.approx((1 + s) / (2 + s) - 0.5, abs=0.01) and row["verdict"] == FAIL
    # thresholds: gauss F2_ratio is 2 (pass), ctgan's 3 (FAIL); dcr_share 0.55 - 0.02 > 0.5 (FAIL)
    assert _by(table, ("alpha", "gauss", 0), "fid")["verdict"] == PASS
    assert _by(table, ("alpha", "ctgan", 0), "fid")["verdict"] == FAIL
    share = _by(table, ("alpha", "gauss", 0), "share")
    assert share["verdict"] == FAIL and share["value"] == pytest.approx(study.metrics[("alpha", "gauss", 0)]
                                                                       ["dcr_share_ci_low"])
    # not-ok cells: one "cell status" row; the holdout reference row is never judged
    assert _by(table, study.error_cell, "cell status")["verdict"] == FAIL
    assert _by(table, study.skipped_cell, "cell status")["verdict"] == NA
    ref = table[table["synthesizer"] == "holdout"]
    assert set(ref["verdict"]) == {NA} and ref["reference"].all()


def test_required_missing_metric_fails(study):
    results = _with_panel(load_results(study.path))
    gates = parse_gates({"targets": {"g": {"metric": "gower_dcr_share", "max": 0.6, "required": True},
                                     "h": {"metric": "gower_dcr_share", "max": 0.6}}})
    table = verdicts(results, gates)
    row = _by(table, ("alpha", "gauss", 0), "g")
    assert row["verdict"] == FAIL and "(required)" in row["detail"]  # null in metrics.json
    assert _by(table, ("alpha", "gauss", 0), "h")["verdict"] == NA


# ---- holdbench check ------------------------------------------------------------------------

def test_check_exit_codes_on_passing_and_failing_cells(study, tmp_path, capsys):
    gates = _write(tmp_path, "targets:\n  dcr: {test: dcr}\n  fid: {metric: F2_ratio, max: 2.5}\n")
    assert main(["check", str(study.path), "--gates", str(gates), "--cell", "alpha/gauss/0"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("alpha/seed0/gauss")]
    assert len(rows) == 2 and all(" pass " in r for r in rows)
    assert "1 cell(s): 1 pass, 0 FAIL, 0 n/a" in out
    assert main(["check", str(study.path), "--gates", str(gates), "--cell", "alpha/ctgan/seed0",
                 "--out", str(tmp_path / "v.csv")]) == 1
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("cell"))
    assert header.split()[:5] == ["cell", "target", "value", "threshold", "verdict"]
    assert "FAIL" in out and "<= 2.5" in out
    written = pd.read_csv(tmp_path / "v.csv")
    assert set(written["verdict"]) == {FAIL} and len(written) == 2


def test_check_strict_and_usage_errors(study, tmp_path, capsys):
    gates = _write(tmp_path, "targets:\n  dcr: {test: dcr}\n")
    no_hist = "/".join(map(str, NO_DISTANCE_CELL))
    assert main(["check", str(study.path), "--gates", str(gates), "--cell", no_hist]) == 0  # n/a only
    assert "1 cell(s): 0 pass, 0 FAIL, 1 n/a; 1 target(s) n/a, not judged (--strict fails them)" in \
        capsys.readouterr().out
    assert main(["check", str(study.path), "--gates", str(gates), "--cell", no_hist, "--strict"]) == 1
    assert "1 target(s) n/a count as failures (--strict)" in capsys.readouterr().out
    assert main(["check", str(study.path), "--gates", str(gates), "--cell", "alpha/nope/0"]) == 2
    assert "no cell alpha/nope/0" in capsys.readouterr().err
    assert main(["check", str(study.path), "--gates", str(tmp_path / "missing.yaml")]) == 2
    assert main(["check"]) == 2
    assert main(["check", str(tmp_path / "no_study")]) == 2


def test_check_on_three_files(tmp_path, capsys):
    rng = np.random.default_rng(3)

    def table(n):
        return pd.DataFrame({"a": rng.choice(list("abcdefgh"), n), "b": rng.choice(list("xyzw"), n),
                             "c": rng.integers(0, 12, n), "d": rng.choice(list("pqrs"), n)})

    train, holdout, fresh = table(150), table(150), table(150)
    for name, df in (("T", train), ("H", holdout), ("fresh", fresh), ("copy", train)):
        df.to_csv(tmp_path / f"{name}.csv", index=False)
    gates = _write(tmp_path, "targets:\n  dcr: {test: dcr}\n  share: {metric: dcr_share, use: ci_low, max: 0.5}\n")
    base = ["check", "--train", str(tmp_path / "T.csv"), "--holdout", str(tmp_path / "H.csv"), "--gates", str(gates),
            "--metrics", "demo"]
    skip = ["--skip", "legal", "--skip", "disclosure", "--skip", "attacks", "--skip", "panel"]
    assert main([*base, "--synthetic", str(tmp_path / "fresh.csv"), *skip]) == 0
    assert main([*base, "--synthetic", str(tmp_path / "copy.csv"), *skip]) == 1
    out = capsys.readouterr().out
    assert "files/seed0/copy.csv" in out and "FAIL" in out


def test_check_on_several_synthetic_files_judges_each_as_alone(tmp_path, capsys, monkeypatch):
    """--synthetic S1 S2 (or a folder, or NAME=PATH): one cell per S, each with the verdict rows it gets when
    checked alone; exit 1 when any fails."""
    rng = np.random.default_rng(4)

    def table(n):
        return pd.DataFrame({"a": rng.choice(list("abcdefgh"), n), "b": rng.choice(list("xyzw"), n),
                             "c": rng.integers(0, 12, n)})

    train, holdout, fresh = table(150), table(150), table(150)
    folder = tmp_path / "candidates"
    folder.mkdir()
    for path, df in ((tmp_path / "T.csv", train), (tmp_path / "H.csv", holdout), (folder / "fresh.csv", fresh),
                     (folder / "copy.csv", train)):
        df.to_csv(path, index=False)
    gates = _write(tmp_path, "targets:\n  dcr: {test: dcr}\n  share: {metric: dcr_share, use: ci_low, max: 0.5}\n")
    base = ["check", "--train", str(tmp_path / "T.csv"), "--holdout", str(tmp_path / "H.csv"), "--gates", str(gates),
            "--metrics", "demo", "--skip", "legal", "--skip", "disclosure", "--skip", "attacks", "--skip", "panel"]
    cols = ["synthesizer", "target", "value", "verdict"]
    alone = []
    for name in ("copy", "fresh"):
        assert main([*base, "--synthetic", str(folder / f"{name}.csv"), "--out", str(tmp_path / f"{name}.csv")]) \
            == (1 if name == "copy" else 0)
        alone.append(pd.read_csv(tmp_path / f"{name}.csv")[cols])
    alone = pd.concat(alone, ignore_index=True)
    assert set(alone.loc[alone["synthesizer"] == "copy.csv", "verdict"]) == {"FAIL"}
    assert set(alone.loc[alone["synthesizer"] == "fresh.csv", "verdict"]) == {"pass"}
    capsys.readouterr()
    # a folder: its files in name order, named after their files; the same rows as each alone; T and H read once
    import holdbench.benchmark.cli.evaluate as evaluate_cli

    reads = []
    real_read = evaluate_cli.read_table
    monkeypatch.setattr(evaluate_cli, "read_table", lambda path, **kw: reads.append(Path(path).name) or
                        real_read(path, **kw))
    assert main([*base, "--synthetic", str(folder), "--out", str(tmp_path / "all.csv")]) == 1
    assert sorted(reads) == ["H.csv", "T.csv", "copy.csv", "fresh.csv"]
    monkeypatch.undo()
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "all.csv")[cols], alone)
    printed = capsys.readouterr().out
    assert "2 cell(s): 1 pass, 1 FAIL" in printed and "  pass: fresh.csv\n  FAIL: copy.csv" in printed
    # T and H in the same folder are not candidates
    train.to_csv(folder / "T.csv", index=False)
    holdout.to_csv(folder / "H.csv", index=False)
    inside = ["check", "--train", str(folder / "T.csv"), "--holdout", str(folder / "H.csv"), *base[5:]]
    assert main([*inside, "--synthetic", str(folder), "--out", str(tmp_path / "inside.csv")]) == 1
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "inside.csv")[cols], alone)
    (folder / "T.csv").unlink()
    (folder / "H.csv").unlink()
    # NAME=PATH and plain files side by side; only passing files: exit 0
    assert main([*base, "--synthetic", f"good={folder / 'fresh.csv'}", str(folder / "fresh.csv"),
                 "--out", str(tmp_path / "named.csv")]) == 0
    named = pd.read_csv(tmp_path / "named.csv")
    assert list(dict.fromkeys(named["synthesizer"])) == ["good", "fresh.csv"]
    # two files of one name are refused before anything is computed
    assert main([*base, "--synthetic", str(folder / "fresh.csv"), f"fresh.csv={folder / 'copy.csv'}"]) == 2
    assert "two files are named 'fresh.csv'" in capsys.readouterr().err


def test_check_on_files_refuses_a_bad_file_before_any_s_is_evaluated_and_says_what_reading_noticed(
        tmp_path, capsys, monkeypatch):
    """An empty S, an S over --max-rows or (with --values strict) text in a numeric column of the LAST S stop the
    run before the first S is evaluated, naming the file; at pandas' reading the text is read as missing and
    the output says so, naming the file, the column and the count."""
    rng = np.random.default_rng(5)

    def table(n):
        return pd.DataFrame({"a": rng.choice(list("abcdefgh"), n), "c": rng.integers(0, 12, n)})

    for name in ("T", "H", "fresh"):
        table(150).to_csv(tmp_path / f"{name}.csv", index=False)
    table(0).to_csv(tmp_path / "empty.csv", index=False)
    text = table(200).astype({"c": object})
    text.loc[:6, "c"] = "unknown"  # 7 values
    text.to_csv(tmp_path / "text.csv", index=False)
    gates = _write(tmp_path, "targets:\n  share: {metric: dcr_share, use: ci_low, max: 0.9}\n")
    base = ["check", "--train", str(tmp_path / "T.csv"), "--holdout", str(tmp_path / "H.csv"), "--gates", str(gates),
            "--metrics", "demo", "--skip", "legal", "--skip", "disclosure", "--skip", "attacks", "--skip", "panel"]
    import importlib

    metrics_evaluate = importlib.import_module("holdbench.metrics.evaluate")  # the package re-exports the function
    calls = []
    real = metrics_evaluate.evaluate
    monkeypatch.setattr(metrics_evaluate, "evaluate", lambda *a, **k: calls.append(1) or real(*a, **k))
    fresh = str(tmp_path / "fresh.csv")
    for extra, message in (([str(tmp_path / "empty.csv")], "empty.csv: the file has a header but no rows"),
                           ([str(tmp_path / "text.csv"), "--values", "strict"],
                            "text.csv: column 'c' (int) has 7 value(s) that are not a number"),
                           ([str(tmp_path / "text.csv"), "--max-rows", "160"],
                            "text.csv: about 200 rows, more than --max-rows 160")):
        assert main([*base, "--synthetic", fresh, *extra]) == 2
        assert message in capsys.readouterr().err
        assert calls == []
    assert main([*base, "--synthetic", fresh, str(tmp_path / "text.csv")]) == 0
    assert len(calls) == 2
    out = capsys.readouterr().out
    assert f"synthetic {tmp_path / 'text.csv'}: values not of T's column type read as missing: c 7" in out
    assert "fresh.csv: values" not in out
    # the flat-file options are refused with a study
    assert main(["check", str(tmp_path / "no_study"), "--max-rows", "5"]) == 2
    assert "--max-rows applies to flat files" in capsys.readouterr().err
