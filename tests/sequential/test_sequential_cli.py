"""`holdbench evaluate` and `holdbench check` on subject + event pairs of files: the sequential metrics
and gates, and every kind of bad input refused before any metric runs, naming the file and column."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from holdbench.benchmark.cli import main
from tests.sequential.conftest import sample_subjects

N = 300


@pytest.fixture(scope="module")
def files(loaded, tmp_path_factory):
    """T, H (a 300-subject sample of baseball split by subject) and S = seq_copy of T, as CSV pairs."""
    from holdbench.benchmark.data.sequential import split_by_subject, synthesizer_context
    from holdbench.synthesizers.sequential import Copy

    data = loaded["baseball"]
    t, h = split_by_subject(sample_subjects(data, N), 0)
    synth = Copy()
    synth.fit(t.subjects, t.events, synthesizer_context(data.spec, 0))
    s = synth.sample(t.n_subjects, 0)
    tmp = tmp_path_factory.mktemp("pairs")
    out = {}
    for role, (subjects, events) in (("train", (t.subjects, t.events)), ("holdout", (h.subjects, h.events)),
                                     ("synthetic", s)):
        for part, frame in (("subjects", subjects), ("events", events)):
            out[f"{role}_{part}"] = tmp / f"{role}_{part}.csv"
            frame.to_csv(out[f"{role}_{part}"], index=False)
    return out


def _args(files, **replaced) -> list[str]:
    paths = {**files, **replaced}
    return ["--dataset", "baseball"] + [a for k, v in paths.items() for a in (f"--{k.replace('_', '-')}", str(v))]


FAST = ["--skip", "subject_legal", "--skip", "subject_attacks"]


def test_evaluate_scores_a_pair_with_every_sequential_family(files, tmp_path, capsys):
    out = tmp_path / "m.json"
    assert main(["evaluate", *_args(files), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "T 150 subjects, H 150, S 150" in printed and "Coherence ratio" in printed
    m = json.loads(out.read_text())
    # S copies T's subjects with their whole sequences: every subject vector has a twin in T
    assert m["seq_ims"] == 1.0 and m["subject_ims_synthetic"] == 1.0 and m["seq_dcr_share"] > 0.95
    assert m["subject_mia_auc_max"] > 0.7 and m["subject_legal_pass_all_holdout"] is False
    assert m["families"] == "sequential,subject_panel,subject_legal,subject_attacks"
    assert m["synthetic_events"] == str(files["synthetic_events"])


def test_evaluate_holdout_row_needs_no_synthetic_pair(files, tmp_path, capsys):
    pairs = {k: v for k, v in files.items() if not k.startswith("synthetic")}
    assert main(["evaluate", *_args(pairs), "--holdout-row", *FAST]) == 0
    printed = capsys.readouterr().out
    assert "holdout reference row" in printed and "Seq. F3 ratio" in printed


def test_check_judges_a_pair_with_the_sequential_gates(files, capsys):
    assert main(["check", *_args(files), *FAST]) == 1  # a copy fails the subject-level D2.2 targets
    out = capsys.readouterr().out
    assert "conf/gates/sequential.yaml" in out
    for target in ("subject_dcr_distribution", "subject_nndr_distribution", "subject_dcr_share_interval",
                   "event_accuracy"):
        assert target in out
    assert "1 cell(s): 0 pass, 1 FAIL" in out


def _bad(files, tmp_path, role_part: str, edit) -> str:
    frame = pd.read_csv(files[role_part])
    path = tmp_path / f"bad_{role_part}.csv"
    edit(frame).to_csv(path, index=False)
    return path


@pytest.mark.parametrize(("role_part", "edit", "message"), [
    ("train_events", lambda e: pd.concat([e, e.head(1).assign(playerID="nobody01")]),
     r"bad_train_events.csv: column 'playerID': 1 event row\(s\) have a key with no subject in .*train_subjects.csv"),
    ("holdout_subjects", lambda s: pd.concat([s, s.head(1)]),
     r"bad_holdout_subjects.csv: column 'playerID' \(the key\) is not unique in the subject table"),
    ("train_events", lambda e: e.drop(columns=["stint"]),
     r"bad_train_events.csv: column\(s\) \['stint'\] are missing"),
    ("holdout_events", lambda e: e.assign(yearID=e["yearID"].where(e.index != 3)),
     r"bad_holdout_events.csv: order column 'yearID' has 1 missing value\(s\)"),
    ("train_events", lambda e: pd.concat([e, e.head(1).assign(G=0)]),
     (r"bad_train_events.csv: ties in the order: 2 event rows share their key 'playerID' and order column\(s\) "
      r"\['yearID', 'stint'\] with another row, e\.g\. .*; order by more columns, or by the file's row order when "
      r"it is the events' order \(`--order row` on the command line, `order: row` in a dataset config\)")),
    ("synthetic_subjects", lambda s: s.assign(extra=1),
     (r"synthetic data .*bad_synthetic_subjects.csv .*\(subjects table\): columns differ from dataset 'baseball': "
      r"unexpected \['extra'\]$")),
    ("synthetic_events", lambda e: e.drop(columns=["HR"]),
     r"\(events table\): columns differ from dataset 'baseball': missing \['HR'\]$"),
])
@pytest.mark.parametrize("command", ["evaluate", "check"])
def test_bad_input_is_refused_before_any_metric(files, tmp_path, capsys, command, role_part, edit, message):
    bad = _bad(files, tmp_path, role_part, edit)
    assert main([command, *_args(files, **{role_part: bad}), *FAST]) == 2
    err = capsys.readouterr().err
    assert re.search(message, err), err
    assert "[holdbench] sequential ..." not in err  # refused before the first family started


@pytest.mark.parametrize("command", ["evaluate", "check"])
def test_flat_options_refuse_a_sequential_dataset_naming_the_pair_options(files, command, capsys):
    flat = ["--train", files["train_subjects"], "--holdout", files["holdout_subjects"],
            "--synthetic", files["synthetic_subjects"]]
    assert main([command, "--dataset", "baseball", *map(str, flat)]) == 2
    err = capsys.readouterr().err
    assert "'baseball' is a sequential (subject + event) dataset" in err and "--train-subjects" in err


@pytest.mark.parametrize(("argv", "message"), [
    (["evaluate", "--train-subjects", "t.csv"], "sequential data needs --train-events"),
    (["check", "--dataset", "demo", "--train-subjects", "a", "--train-events", "b", "--holdout-subjects", "c",
      "--holdout-events", "d", "--synthetic-subjects", "e", "--synthetic-events", "f"],
     "--dataset 'demo' is not a sequential dataset"),
    (["evaluate", "--dataset", "baseball", "--train-subjects", "a", "--train-events", "b", "--holdout-subjects", "c",
      "--holdout-events", "d", "--holdout-row", "--metrics", "default"],
     r"famil\(ies\) \['fidelity', .*\] are flat; subject \+ event pairs are scored with sequential families"),
])
def test_usage_errors_name_the_option(argv, message, capsys):
    assert main(argv) == 2
    assert re.search(message, capsys.readouterr().err)


def test_load_reads_a_sequential_dataset(loaded, monkeypatch, capsys):
    from tests.conftest import DATASETS

    monkeypatch.setenv("HOLDBENCH_DATA_DIR", str(DATASETS))
    assert main(["load", "nlswork"]) == 0
    assert "nlswork: 4,711 subjects x 2 columns, 28,534 events x 18 columns (key 'idcode', order ['year'])" \
        in capsys.readouterr().out
