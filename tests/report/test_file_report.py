"""`holdbench report` on files: a leaky, a shuffled and an independent candidate of one made-up table."""

from __future__ import annotations

import json
import re

import pytest

from holdbench.benchmark.cli import main
from tests.report.conftest import FAST


@pytest.fixture(scope="module")
def report(files, tmp_path_factory):
    out = tmp_path_factory.mktemp("report_out")
    argv = ["report", "--train", str(files["train"]), "--holdout", str(files["holdout"]), "--synthetic",
            str(files["fresh"]), f"leak={files['leaky']}", str(files["shuffled"]), "--target", "income",
            "--metrics", "demo", "--out", str(out)] + [x for o in FAST for x in ("--set", o)]
    code = main(argv)
    rep = json.loads((out / "report.json").read_text(encoding="utf-8"))
    return code, rep, (out / "report.html").read_text(encoding="utf-8"), (out / "summary.md").read_text()


def test_exit_status_and_verdicts(report):
    code, rep, _, _ = report
    verdicts = {n: s["verdict"]["verdict"] for n, s in rep["synthetic"].items()}
    assert verdicts == {"fresh": "pass", "leak": "FAIL", "shuffled": verdicts["shuffled"]}
    assert code == 1 == rep["exit_code"]  # one S fails a gate: the pipeline stops
    assert "dcr_distribution" in rep["synthetic"]["leak"]["verdict"]["failed"]


def test_ranking_puts_the_leaky_copy_last_and_says_how(report):
    _, rep, html, summary = report
    order = rep["ranking"]["order"]
    assert order[-1] == "leak" and order[0] == "fresh"
    assert "mean of their ranks" in rep["ranking"]["aggregation"]
    leak = rep["synthetic"]["leak"]["verdict"]
    assert leak["worst"] > 1 and leak["worst"] == max(r["excess"] for r in leak["rows"] if r["verdict"] == "FAIL")
    assert f"| {leak['worst']:.2f} |" in summary and f"{leak['worst']:.2f}×" in html
    # verdict first, in rank order: summary.md's first table and the HTML's overview (the copy of T last)
    first = [line.split(" | ")[1] for line in summary.split("## ")[0].splitlines() if re.match(r"\| \d+ \|", line)]
    assert first == order
    overview = html.split('<table id="tbl-verdict-overview"')[1].split("</table>")[0]
    assert re.findall(r'<a href="#verdict-s\d">([^<]+)</a>', overview) == order
    assert html.index("tbl-verdict-overview") < html.index('id="verdict-s0"') < html.index('id="headline"')
    # what each S fails on, in words: the copy of T its privacy (every failed gate of it is a privacy one), a pass
    # nothing
    assert leak["failed_groups"] == ["privacy"] and rep["synthetic"]["fresh"]["verdict"]["failed_groups"] == []
    assert "<th>fails on</th>" in overview and "privacy (S nearer to T than H is)" in overview
    assert "| fails on |" in summary and "| privacy (S nearer to T than H is) |" in summary
    # the copy of T has the best F ratios... of 0 distance, but it fails the gates: never "best" without saying so
    f2 = next(r for r in rep["ranking"]["rows"] if r["metric"] == "F2_ratio")
    for row in rep["ranking"]["rows"]:
        for name in row["best"]:
            failing = rep["synthetic"][name]["verdict"]["verdict"] == "FAIL"
            assert (name in row["best_fails_gates"]) == failing
    assert f2["values"]["shuffled"] > f2["values"]["fresh"]  # no pair trend kept
    assert "best, but S fails the gates" in html and "(best, but S fails the gates)" in summary \
        or not any(r["best_fails_gates"] for r in rep["ranking"]["rows"])


def test_exposed_records_point_at_the_copied_rows(report):
    _, rep, html, summary = report
    leak = rep["synthetic"]["leak"]["views"]["exposure"]
    fresh = rep["synthetic"]["fresh"]["views"]["exposure"]
    assert leak["train_exact_copy_rate"] == 1.0 == leak["train_zero_distance_rate"]
    assert fresh["train_exact_copy_rate"] == 0.0 and fresh["train_zero_distance_rate"] < 0.2
    top = leak["records"][0]
    assert top["d_synthetic"] == 0 and top["n_copies"] >= 1 and top["percentile"] < 0.2
    assert leak["masked"] and set(top["values"].values()) == {"•••"}
    assert "--unmask" in html
    leak_part = summary.split("## leak")[1].split("## ")[0]
    assert f"Most exposed T rows (the first data row is 0): {top['row']}," in leak_part
    assert "100.00% of T's records have an exact copy in S" in leak_part
    diag = rep["synthetic"]["leak"]["views"]["diagnostics"]
    assert diag["copies_of_train_synthetic"] == 400 and diag["share_copies_of_train_holdout"] < 0.05


def test_every_part_is_in_the_page(report):
    _, rep, html, _ = report
    for part in ("verdict", "columns", "trends", "diagnostics", "privacy", "utility", "all"):
        assert f'id="{part}"' in html
    figs = re.findall(r'<figure class="hb-figure" id="([^"]+)"><svg', html)
    assert len(figs) == len(set(figs))
    assert {"fig-col-0", "fig-assoc-s0", "fig-dcr-s1", "fig-roc-s1", "fig-nndr-s0"} <= set(figs)
    assert html.count('class="hb-sortable"') >= 8
    assert "http://" not in html.replace("http://www.w3.org", "") and "https://" not in html  # no network
    shapes = rep["synthetic"]["shuffled"]["views"]["columns"]
    assert [c["tvd_synthetic"] for c in shapes] == sorted((c["tvd_synthetic"] for c in shapes), reverse=True)
    a = rep["synthetic"]["shuffled"]["views"]["association"]
    assert a["mean_abs_diff_synthetic"] > a["mean_abs_diff_holdout"]  # shuffling breaks the pairs
    assert rep["synthetic"]["fresh"]["metrics"]["tstr_auc_ratio"] is not None
    assert rep["settings"]["overrides"][-1] == "families.utility.max_design_mb=1024"  # the report's design cap


def test_study_name_and_file_options_are_a_usage_error(files, capsys):
    assert main(["report", "paper", "--train", str(files["train"])]) == 2
    assert "file form" in capsys.readouterr().err
    assert main(["report", "--train", str(files["train"]), "--holdout", str(files["holdout"])]) == 2
    assert "missing --synthetic, --out" in capsys.readouterr().err


def test_when_no_candidate_passes_the_report_says_none_may_be_released(files, tmp_path):
    out = tmp_path / "out"
    argv = ["report", "--train", str(files["train"]), "--holdout", str(files["holdout"]), "--synthetic",
            f"copy1={files['leaky']}", f"copy2={files['leaky']}", "--metrics", "demo", "--out", str(out)]
    argv += [x for o in FAST for x in ("--set", o)]
    assert main(argv) == 1
    rep = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert {n: s["verdict"]["verdict"] for n, s in rep["synthetic"].items()} == {"copy1": "FAIL", "copy2": "FAIL"}
    html, summary = (out / "report.html").read_text(encoding="utf-8"), (out / "summary.md").read_text()
    words = "No S passes every gate: each fails at least one, so none is fit to release under these gates"
    assert f'<p id="ranking-caveat"><b>{words}' in html
    assert f"**{words}" in summary
    # the verdict's opening sentence names what the gates ask, from the gates file's own description
    assert f"passes only when every gate passes ({rep['gates']['description']})." in html
