"""Columns of T that look like record identifiers are named before any work and in the report."""

from __future__ import annotations

import json

import numpy as np
import pytest
import pandas as pd

from holdbench.benchmark.cli import main
from holdbench.benchmark.outputs.filereport.diagnostics import IDENTIFIER_SHARE, identifier_columns
from tests.report.conftest import FAST


def test_which_columns_look_like_identifiers():
    n = 200
    k = int(IDENTIFIER_SHARE * n)
    rng = np.random.default_rng(0)
    t = pd.DataFrame({
        "code": [f"c{i:04d}" for i in range(n)],                      # every value distinct: an identifier
        # at the share exactly (179 values of their own and "x": 180 distinct of 200), and one distinct value fewer
        "near": [f"n{i}" for i in range(k - 1)] + ["x"] * (n - k + 1),
        "less": [f"l{i}" for i in range(k - 2)] + ["x"] * (n - k + 2),
        "row": np.arange(n) * 3 + 7,                                   # whole numbers, all distinct
        "amount": rng.normal(100, 10, n),                              # all distinct, but a measurement
        "count": rng.integers(0, 10, n),                               # whole numbers, repeated
    })
    kinds = {"code": "categorical", "near": "categorical", "less": "categorical", "row": "numeric",
             "amount": "numeric", "count": "numeric"}
    found = identifier_columns(t, kinds)
    assert [c["column"] for c in found] == ["code", "near", "row"]
    assert found[0] == {"column": "code", "kind": "categorical", "distinct": n, "values": n}
    # a few rows are all distinct by chance: not judged
    assert identifier_columns(t.head(49), kinds) == []


WORDS = "Column(s) of T that look like record identifiers: customer (400 distinct of 400 values)"


def _with_customer_ids(files, d):
    d.mkdir()
    paths = {}
    for role in ("train", "holdout", "fresh"):
        frame = pd.read_csv(files[role])
        frame.insert(0, "customer", [f"{role}-{i}" for i in range(len(frame))])
        paths[role] = d / f"{role}.csv"
        frame.to_csv(paths[role], index=False)
    return paths


def test_evaluate_names_an_identifier_column_before_any_metric(files, tmp_path, capsys):
    paths = _with_customer_ids(files, tmp_path / "in")
    main(["evaluate", "--train", str(paths["train"]), "--holdout", str(paths["holdout"]), "--synthetic",
          str(paths["fresh"]), "--metrics", "demo", "--skip", "attacks"])
    err = capsys.readouterr().err
    assert WORDS in err and err.index(WORDS) < err.index("[holdbench] fidelity ...")


def test_the_report_names_an_identifier_column_on_stderr_in_the_page_and_in_the_summary(files, tmp_path, capsys):
    paths = _with_customer_ids(files, tmp_path / "in")
    out = tmp_path / "out"
    argv = ["report", "--train", str(paths["train"]), "--holdout", str(paths["holdout"]), "--synthetic",
            str(paths["fresh"]), "--metrics", "demo", "--out", str(out)] + [x for o in FAST for x in ("--set", o)]
    main(argv)
    words = WORDS
    assert words in capsys.readouterr().err
    rep = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert rep["identifier_columns"] == [{"column": "customer", "kind": "categorical", "distinct": 400, "values": 400}]
    assert f'<p id="identifier-columns"><b>{words}' in (out / "report.html").read_text(encoding="utf-8")
    assert f"**{words}" in (out / "summary.md").read_text()


def test_no_identifier_column_no_word_of_it(files, tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["report", "--train", str(files["train"]), "--holdout", str(files["holdout"]), "--synthetic",
            str(files["fresh"]), "--metrics", "demo", "--out", str(out)] + [x for o in FAST for x in ("--set", o)]
    main(argv)
    assert "record identifiers" not in capsys.readouterr().err
    assert json.loads((out / "report.json").read_text(encoding="utf-8"))["identifier_columns"] == []
    assert 'id="identifier-columns"' not in (out / "report.html").read_text(encoding="utf-8")


def test_the_guide_states_the_rule_the_code_applies():
    from pathlib import Path

    from holdbench.benchmark.outputs.filereport.diagnostics import IDENTIFIER_MIN_ROWS

    guide = " ".join((Path(__file__).parents[2] / "docs" / "guides" / "report-your-files.md").read_text().split())
    assert (f"distinct values are at least {IDENTIFIER_SHARE:.0%} of its values, or whole numbers all distinct, in "
            f"a T of at least {IDENTIFIER_MIN_ROWS} rows; a column of dates is never one") in guide


def test_drop_leaves_the_column_out_and_the_numbers_equal_files_without_it(files, tmp_path, capsys):
    paths = _with_customer_ids(files, tmp_path / "in")
    reps = {}
    for form, p, extra in (("dropped", paths, ["--drop", "customer"]), ("plain", files, [])):
        out = tmp_path / form
        code = main(["report", "--train", str(p["train"]), "--holdout", str(p["holdout"]), "--synthetic",
                     f"S={p['fresh']}", "--metrics", "demo", "--out", str(out), *extra]
                    + [x for o in FAST for x in ("--set", o)])
        assert code in (0, 1)
        reps[form] = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert "record identifiers" not in capsys.readouterr().err
    dropped, plain = reps["dropped"], reps["plain"]
    assert dropped["identifier_columns"] == [] and "customer" not in dropped["kinds"]
    assert dropped["settings"]["drop"] == ["customer"]
    numbers = {k: v for k, v in dropped["synthetic"]["S"]["metrics"].items() if not k.startswith("seconds")}
    assert numbers == {k: v for k, v in plain["synthetic"]["S"]["metrics"].items() if not k.startswith("seconds")}
    html = (tmp_path / "dropped" / "report.html").read_text(encoding="utf-8")
    assert '<p id="dropped-columns">Left out of T, H and every S (--drop): customer.</p>' in html


def test_drop_takes_several_names_at_once_or_one_by_one(files, tmp_path):
    paths = _with_customer_ids(files, tmp_path / "in")
    seen = {}
    for form, extra in (("at once", ["--drop", "customer", "age"]),
                        ("one by one", ["--drop", "customer", "--drop", "age"])):
        out = tmp_path / form.replace(" ", "_") / "m.json"
        assert main(["evaluate", "--train", str(paths["train"]), "--holdout", str(paths["holdout"]), "--synthetic",
                     str(paths["fresh"]), "--metrics", "demo", "--skip", "attacks", "--out", str(out), *extra]) == 0
        seen[form] = json.loads(out.read_text(encoding="utf-8"))
    assert seen["at once"]["dropped"] == seen["one by one"]["dropped"] == ["customer", "age"]
    numbers = {form: {k: v for k, v in m.items() if isinstance(v, float) and not k.startswith("seconds")}
               for form, m in seen.items()}
    assert len(numbers["at once"]) > 20 and numbers["at once"] == numbers["one by one"]


@pytest.mark.parametrize("command", ["report", "evaluate"])
def test_drop_of_a_column_t_has_not_is_refused_naming_it(files, tmp_path, capsys, command):
    argv = [command, "--train", str(files["train"]), "--holdout", str(files["holdout"]), "--synthetic",
            str(files["fresh"]), "--metrics", "demo", "--drop", "customer"]
    argv += ["--out", str(tmp_path / "out")] if command == "report" else []
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"--drop ['customer']: not a column of T ({files['train']})" in err
    assert not (tmp_path / "out" / "report.html").exists()


def test_evaluate_with_drop_says_what_it_left_out(files, tmp_path, capsys):
    paths = _with_customer_ids(files, tmp_path / "in")
    main(["evaluate", "--train", str(paths["train"]), "--holdout", str(paths["holdout"]), "--synthetic",
          str(paths["fresh"]), "--metrics", "demo", "--skip", "attacks", "--drop", "customer"])
    out = capsys.readouterr()
    assert "record identifiers" not in out.err
    assert "left out of T, H and S (--drop): customer" in out.out


@pytest.mark.parametrize("command", ["report", "evaluate"])
def test_drop_is_refused_for_subject_and_event_pairs(tmp_path, capsys, command):
    events = tmp_path / "events.csv"
    pd.DataFrame({"id": [1, 1, 2], "t": [1, 2, 1], "v": ["a", "b", "a"]}).to_csv(events, index=False)
    argv = [command, "--train-events", str(events), "--holdout-events", str(events), "--synthetic-events",
            str(events), "--key", "id", "--order", "t", "--drop", "v"]
    argv += ["--out", str(tmp_path / "out")] if command == "report" else []
    assert main(argv) == 2
    assert "--drop applies to flat tables" in capsys.readouterr().err
