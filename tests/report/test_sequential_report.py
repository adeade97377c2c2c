"""`holdbench report` on sequences: the pair options of `holdbench evaluate` (here event files with --key and
--order), the sequential gates, the length and coherence figures and subject-level privacy."""

from __future__ import annotations

import json
import re

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
