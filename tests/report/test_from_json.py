"""`holdbench check` and `holdbench report` judge a saved evaluation (`holdbench evaluate --out`) without
computing it again, with the verdicts of a fresh computation."""

from __future__ import annotations

import json

from holdbench.benchmark.cli import main
from tests.report.conftest import FAST


def test_check_and_report_reuse_an_evaluation(files, tmp_path, capsys, monkeypatch):
    saved = tmp_path / "leaky.json"
    base = ["--train", str(files["train"]), "--holdout", str(files["holdout"])]
    assert main(["evaluate", *base, "--synthetic", str(files["leaky"]), "--metrics", "demo", "--out", str(saved),
                 *[x for o in FAST for x in ("--set", o)]]) == 0
    assert "dcr_histogram" in json.loads(saved.read_text())["artifacts"]
    # one vocabulary: evaluate says its pass/FAIL rows are information, check names what each gate tests
    assert "The pass/FAIL rows above are information" in capsys.readouterr().out
    assert main(["check", "--from-json", str(saved), "--out", str(tmp_path / "v.csv")]) == 1
    printed = capsys.readouterr().out
    assert "dcr_distribution" in printed and "FAIL" in printed
    assert "dcr_distribution = DCR distribution S\u2192T vs H\u2192T (Hamming, Brunner-Munzel)" in printed

    import importlib

    ev = importlib.import_module("holdbench.metrics.evaluate")

    def no_recompute(*a, **k):
        raise AssertionError("the evaluation was computed again")

    monkeypatch.setattr(ev, "evaluate", no_recompute)
    out = tmp_path / "rep"
    code = main(["report", *base, "--synthetic", f"leak={files['leaky']}", "--from-json", f"leak={saved}",
                 "--metrics", "demo", "--out", str(out)])
    rep = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert code == 1 and rep["synthetic"]["leak"]["verdict"]["verdict"] == "FAIL"
    assert rep["settings"]["from_json"] == {"leak": str(saved)}
    # the JSON of another S is refused, named
    assert main(["report", *base, "--synthetic", f"fresh={files['fresh']}", "--from-json", f"fresh={saved}",
                 "--metrics", "demo", "--out", str(tmp_path / "x")]) == 2
    assert f"it evaluates {files['leaky']}" in capsys.readouterr().err


def test_check_on_files_judges_the_numbers_evaluate_computes(files, tmp_path, capsys):
    """`check` on three files reads them as `evaluate` does (text in a numeric column of S read as missing and
    reported, not a crash) and judges the same numbers: its verdict values equal those of `check --from-json`
    on evaluate's JSON, gate by gate."""
    import pandas as pd

    s = pd.read_csv(files["fresh"])
    numeric = next(c for c in s.columns if pd.api.types.is_numeric_dtype(s[c]) and not pd.api.types.is_bool_dtype(s[c]))
    s[numeric] = s[numeric].astype(object)
    s.loc[[1, 4], numeric] = "n/k"
    path = tmp_path / "S_text.csv"
    s.to_csv(path, index=False)
    base = ["--train", str(files["train"]), "--holdout", str(files["holdout"]), "--synthetic", str(path),
            "--metrics", "demo"]
    saved = tmp_path / "m.json"
    assert main(["evaluate", *base, "--out", str(saved)]) == 0
    assert f"values not of T's column type read as missing: {numeric} 2" in capsys.readouterr().out
    code_files = main(["check", *base, "--out", str(tmp_path / "files.csv")])
    code_json = main(["check", "--from-json", str(saved), "--out", str(tmp_path / "json.csv")])
    assert code_files == code_json
    cols = ["target", "value", "verdict"]
    got, want = (pd.read_csv(tmp_path / f"{n}.csv")[cols].sort_values("target").reset_index(drop=True)
                 for n in ("files", "json"))
    pd.testing.assert_frame_equal(got, want)
    assert len(got) >= 4


def test_check_from_several_jsons_equals_check_on_the_files(files, tmp_path, capsys):
    """`check --from-json a.json b.json`: one cell per saved evaluation, named after its S, with the rows `check
    --synthetic a b` computes; two evaluations of S of one name are refused."""
    import pandas as pd

    base = ["--train", str(files["train"]), "--holdout", str(files["holdout"]), "--metrics", "demo"]
    saved = {}
    for role in ("fresh", "leaky"):
        saved[role] = tmp_path / f"{role}.json"
        assert main(["evaluate", *base, "--synthetic", str(files[role]), "--out", str(saved[role])]) == 0
    assert main(["check", *base, "--synthetic", str(files["fresh"]), str(files["leaky"]),
                 "--out", str(tmp_path / "files.csv")]) == 1
    assert main(["check", "--from-json", str(saved["fresh"]), str(saved["leaky"]),
                 "--out", str(tmp_path / "json.csv")]) == 1
    cols = ["synthesizer", "target", "value", "verdict"]
    got, want = (pd.read_csv(tmp_path / f"{n}.csv")[cols] for n in ("json", "files"))
    pd.testing.assert_frame_equal(got, want)
    assert list(dict.fromkeys(got["synthesizer"])) == [files["fresh"].name, files["leaky"].name]
    assert set(got.loc[got["synthesizer"] == files["leaky"].name, "verdict"]) & {"FAIL"}
    capsys.readouterr()
    assert main(["check", "--from-json", str(saved["fresh"]), str(saved["fresh"])]) == 2
    assert f"are evaluations of two S named '{files['fresh'].name}'" in capsys.readouterr().err
    # the options that only reading files takes are refused, named
    for extra, named in ((["--max-rows", "10"], "max_rows"), (["--values", "strict"], "values")):
        assert main(["check", "--from-json", str(saved["fresh"]), *extra]) == 2
        assert f"it takes no {named}" in capsys.readouterr().err
