"""The quality-gates guide's example output against the committed verdicts it shows
(results/published/paper/gates.csv, from `holdbench check paper_published --out` through
scripts/docs/gate_table.py): a re-run that moves a value fails here until the guide shows what the file says."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[2]
GATES = REPO / "results" / "published" / "paper" / "gates.csv"
GUIDE = REPO / "docs" / "guides" / "quality-gates.md"


def _example() -> list[str]:
    text = GUIDE.read_text()
    start = text.index("$ holdbench check paper_published")
    return text[start:text.index("```", start)].splitlines()[1:]


def test_the_guides_example_shows_the_committed_verdicts():
    with GATES.open(newline="") as f:
        table = {(r["dataset"], r["synthesizer"]): r for r in csv.DictReader(f)}
    lines = _example()
    shown = 0
    for line in lines:
        m = re.match(r"^([\w.-]+)/seed0/([\w.-]+)\s+(\w+)\s+(\S+)\s+(.+?)\s{2,}(pass|FAIL|n/a)\b", line)
        if not m:
            continue
        dataset, synthesizer, target, value, _, verdict = m.groups()
        assert table[(dataset, synthesizer)][target] == f"{value} {verdict}", line
        shown += 1
    assert shown >= 6, "the example lost its verdict lines: update this test with it"
    summary = next(line for line in lines if line.endswith("n/a") and "cell(s):" in line)
    cells = {(m[1], m[2]) for line in lines if (m := re.match(r"^([\w.-]+)/seed0/([\w.-]+)\s", line))}
    verdicts = pd.Series([table[c]["verdict"] for c in cells]).value_counts()
    assert summary == (f"{len(cells)} cell(s): {verdicts.get('pass', 0)} pass, {verdicts.get('FAIL', 0)} FAIL, "
                       f"{verdicts.get('n/a', 0)} n/a")


def test_the_table_is_one_row_per_judged_cell_with_every_default_target():
    table = pd.read_csv(GATES, dtype=str, keep_default_na=False)
    assert not table.duplicated(["dataset", "synthesizer"]).any()
    assert "holdout" not in set(table["synthesizer"])  # the reference row is never judged
    targets = ["accuracy", "dcr_distribution", "nndr_distribution", "dcr_share_interval", "exact_copies"]
    assert list(table.columns) == ["dataset", "synthesizer", "verdict", "failed", *targets]
    for _, row in table.iterrows():
        verdicts = {t: row[t].rsplit(" ", 1)[1] for t in targets}
        failed = [t for t in targets if verdicts[t] == "FAIL"]
        assert row["failed"] == ", ".join(failed)
        assert row["verdict"] == ("FAIL" if failed else "pass" if "pass" in verdicts.values() else "n/a")


def test_what_the_results_caption_says_of_the_verdicts():
    """The caption of gates.csv on the paper results page (docs/gen/results.py) in prose, against the table."""
    table = pd.read_csv(GATES, dtype=str, keep_default_na=False)
    failed = {(r.dataset, r.synthesizer): set(filter(None, r.failed.split(", "))) for r in table.itertuples()}
    assert sorted(s for (_, s), f in failed.items() if not f) == ["published_mostly"] * 2
    sdv = ("gaussian_copula", "ctgan", "tvae", "copulagan", "gretel")
    assert all(failed[(d, f"published_{s}")] == {"accuracy"} for d in ("adult", "bank-marketing") for s in sdv)
    for d in ("adult", "bank-marketing"):
        assert {"dcr_share_interval", "exact_copies"} <= failed[(d, "published_synthpop")]
        assert "accuracy" not in failed[(d, "published_synthpop")]
        flips = [failed[(d, f"published_flip{k}")] for k in range(10, 100, 10)]
        privacy = [bool(f - {"accuracy"}) for f in flips]
        accuracy = ["accuracy" in f for f in flips]
        # privacy failures at the low end only, accuracy failures at the high end only, both somewhere between
        assert privacy == sorted(privacy, reverse=True) and accuracy == sorted(accuracy)
        assert privacy[0] and not accuracy[0] and accuracy[-1] and not privacy[-1]
        assert any(p and a for p, a in zip(privacy, accuracy))
