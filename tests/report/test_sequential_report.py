"""`holdbench report` on sequences: the pair options of `holdbench evaluate` (here event files with --key and
--order), the sequential gates, the length and coherence figures and subject-level privacy."""

from __future__ import annotations

import json
import re

import pytest

from holdbench.benchmark.cli import main
from tests.sequential.test_sequential_cli_events import _events


def test_report_on_event_files(tmp_path):
    paths = {}
    for role, seed in (("train", 0), ("holdout", 1), ("synthetic", 2)):
        paths[role] = tmp_path / f"{role}.csv"
        _events(120, seed).to_csv(paths[role], index=False)
    out = tmp_path / "out"
    argv = ["report", *[f"--{r}-events={paths[r]}" for r in paths], "--key", "account", "--order", "row",
            "--skip", "subject_legal", "--set", "families.subject_attacks.n_bootstrap=20", "--out", str(out)]
    code = main(argv)
    rep = json.loads((out / "report.json").read_text(encoding="utf-8"))
    html = (out / "report.html").read_text(encoding="utf-8")
    s = rep["synthetic"]["synthetic.csv"]
    assert code == rep["exit_code"] == (1 if s["verdict"]["verdict"] == "FAIL" else 0)
    assert {r["gate"] for r in s["verdict"]["rows"]} >= {"subject_dcr_distribution", "event_accuracy"}
    assert s["metrics"]["n_subjects_train"] == 120 and rep["settings"]["key"] == "account"
    figs = set(re.findall(r'<figure class="hb-figure" id="([^"]+)"><svg', html))
    assert {"fig-seq-length-s0", "fig-seq-coherence-s0", "fig-dcr-s0"} <= figs
    assert "Subject-level privacy" in html and (out / "summary.md").read_text().startswith("# Synthetic data report")
    # a flat option with the pairs is a usage error
    assert main([*argv[:-2], "--target", "amount", "--out", str(tmp_path / "x")]) == 2


def _ideal(metric: str) -> float:
    """The ideal value of a sequential headline metric, written here by hand: shares and AUCs 0.5, ratios 1."""
    return 0.5 if metric in ("seq_dcr_share", "subject_mia_auc_max") else 1.0


def test_report_ranks_several_synthetic_event_files(tmp_path):
    """Two S against one T and H: `copy.csv` (T's own file: every subject has a twin in T) and `fresh`
    (a new draw of the generator that made T and H): both judged, copy fails, fresh comes first."""
    for role, seed in (("train", 0), ("holdout", 1), ("fresh", 2)):
        _events(120, seed).to_csv(tmp_path / f"{role}.csv", index=False)
    (tmp_path / "copy.csv").write_bytes((tmp_path / "train.csv").read_bytes())
    out = tmp_path / "out"
    code = main(["report", "--train-events", str(tmp_path / "train.csv"), "--holdout-events",
                 str(tmp_path / "holdout.csv"), "--synthetic-events", str(tmp_path / "copy.csv"),
                 f"fresh={tmp_path / 'fresh.csv'}", "--key", "account", "--order", "row", "--skip", "subject_legal",
                 "--set", "families.subject_attacks.n_bootstrap=20", "--out", str(out)])
    rep = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert list(rep["synthetic"]) == ["copy.csv", "fresh"]
    assert rep["settings"]["synthetic"]["fresh"] == {"subjects": None, "events": str(tmp_path / "fresh.csv")}
    copy, fresh = rep["synthetic"]["copy.csv"], rep["synthetic"]["fresh"]
    assert copy["verdict"]["verdict"] == "FAIL" and "subject_dcr_distribution" in copy["verdict"]["failed"]
    assert fresh["verdict"]["verdict"] == "pass" and fresh["metrics"]["n_subjects_synthetic"] == 120
    assert code == rep["exit_code"] == 1  # a gate of one S fails
    # the ranking: the ranks recomputed here from the values and each metric's ideal
    rk, mine = rep["ranking"], {"copy.csv": [], "fresh": []}
    assert {r["metric"] for r in rk["rows"]} >= {"seq_F3_ratio", "seq_dcr_share"}
    for r in rk["rows"]:
        off = {n: abs(v - _ideal(r["metric"])) for n, v in r["values"].items()}
        for n, d in off.items():
            mine[n].append(1.5 if off["copy.csv"] == off["fresh"] else 1.0 if d == min(off.values()) else 2.0)
        assert r["ranks"] == {n: mine[n][-1] for n in off}, r["metric"]
    assert rk["mean_rank"] == {n: sum(v) / len(v) for n, v in mine.items()}
    assert rk["order"] == ["fresh", "copy.csv"] and "mean of their ranks" in rk["aggregation"]
    html = (out / "report.html").read_text(encoding="utf-8")
    figs = set(re.findall(r'<figure class="hb-figure" id="([^"]+)"><svg', html))
    assert {f"fig-{f}-s{i}" for f in ("seq-length", "seq-coherence", "dcr") for i in (0, 1)} <= figs
    table = html.split('<table id="tbl-headline"')[1].split("</table>")[0]
    assert "<th>S fresh</th><th>S copy.csv</th>" in table  # best first
    assert table.count("<b>best</b>") == len(rk["rows"]) and "best, but S fails" not in table  # fresh: best everywhere
    assert '<p id="ranking"><b>Ranking:</b> 1. fresh, 2. copy.csv (fails the gates).' in html
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert summary.index("| 1 | fresh | pass |") < summary.index("| 2 | copy.csv | FAIL |")
    overview = html.split('<table id="tbl-verdict-overview"')[1].split("</table>")[0]
    assert overview.index(">fresh</a>") < overview.index(">copy.csv</a>")
    # the overview comes before each S's gates, which follow in rank order (anchors keep the input order)
    assert html.index("tbl-verdict-overview") < html.index('id="verdict-s1"') < html.index('id="verdict-s0"')
    assert "Ranking: 1. fresh, 2. copy.csv." in summary


def test_several_synthetic_pairs_are_checked_before_any_work(tmp_path, capsys):
    """Subject + event pairs: as many subject files as event files, and one name per pair; nothing written."""
    base = ["report", "--dataset", "baseball", "--train-subjects", "ts.csv", "--train-events", "te.csv",
            "--holdout-subjects", "hs.csv", "--holdout-events", "he.csv"]
    out = tmp_path / "out"
    assert main([*base, "--synthetic-subjects", "s1.csv", "--synthetic-events", "e1.csv", "e2.csv",
                 "--out", str(out)]) == 2
    assert "--synthetic-subjects gives 1 file(s) and --synthetic-events 2" in capsys.readouterr().err
    assert main([*base, "--synthetic-subjects", "a=s1.csv", "--synthetic-events", "b=e1.csv", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "is named 'a' but --synthetic-events 'b=e1.csv' is named 'b'" in err
    assert main(["report", "--train-events", "t.csv", "--holdout-events", "h.csv", "--synthetic-events", "x=a.csv",
                 "x=b.csv", "--key", "k", "--order", "row", "--out", str(out)]) == 2
    assert "two S are named 'x' (a.csv and b.csv)" in capsys.readouterr().err
    assert not out.exists()


def test_build_sequence_report_refuses_a_mix_of_pairs_and_event_files(tmp_path):
    from holdbench.benchmark.outputs.filereport.pairs import build_sequence_report

    with pytest.raises(ValueError, match=r"S \['a'\] have a subject file and the others not"):
        build_sequence_report("t.csv", "h.csv", {"a": ("as.csv", "ae.csv"), "b": "be.csv"}, tmp_path / "o",
                              dataset="baseball", train_subjects="ts.csv", holdout_subjects="hs.csv")
    with pytest.raises(ValueError, match=r"give \{S name: event file\}"):
        build_sequence_report("t.csv", "h.csv", {}, tmp_path / "o", key="k", order=["row"])
    assert not (tmp_path / "o").exists()
