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
