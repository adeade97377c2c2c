"""`holdbench report` on several subject + event pairs: the i-th --synthetic-subjects file pairs with the i-th
--synthetic-events file, each pair named (NAME= on either file, or after its event file), judged and ranked."""

from __future__ import annotations

import json

from holdbench.benchmark.cli import main
from tests.sequential.conftest import sample_subjects


def test_report_pairs_subject_and_event_files_by_position(loaded, tmp_path):
    from holdbench.benchmark.data.sequential import split_by_subject, synthesizer_context
    from holdbench.synthesizers.sequential import Copy

    data = loaded["baseball"]
    t, h = split_by_subject(sample_subjects(data, 120), 0)
    synth = Copy()
    synth.fit(t.subjects, t.events, synthesizer_context(data.spec, 0))
    copy = synth.sample(t.n_subjects, 0)
    files = {}
    for role, (subjects, events) in (("train", (t.subjects, t.events)), ("holdout", (h.subjects, h.events)),
                                     ("copy", copy)):
        for part, frame in (("subjects", subjects), ("events", events)):
            files[f"{role}_{part}"] = str(tmp_path / f"{role}_{part}.csv")
            frame.to_csv(files[f"{role}_{part}"], index=False)
    out = tmp_path / "out"
    # S 1: seq_copy of T, named on its subject file; S 2: H's own pair (an ideal generator's output), unnamed
    code = main(["report", "--dataset", "baseball", "--train-subjects", files["train_subjects"], "--train-events",
                 files["train_events"], "--holdout-subjects", files["holdout_subjects"], "--holdout-events",
                 files["holdout_events"], "--synthetic-subjects", f"copy={files['copy_subjects']}",
                 files["holdout_subjects"], "--synthetic-events", files["copy_events"], files["holdout_events"],
                 "--skip", "subject_legal", "--skip", "subject_attacks", "--out", str(out)])
    rep = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert rep["settings"]["synthetic"] == {
        "copy": {"subjects": files["copy_subjects"], "events": files["copy_events"]},
        "holdout_events.csv": {"subjects": files["holdout_subjects"], "events": files["holdout_events"]}}
    s_copy, s_h = rep["synthetic"]["copy"], rep["synthetic"]["holdout_events.csv"]
    assert s_copy["metrics"]["n_subjects_synthetic"] == t.n_subjects
    assert s_h["metrics"]["n_subjects_synthetic"] == h.n_subjects
    assert s_copy["verdict"]["verdict"] == "FAIL" and s_h["verdict"]["verdict"] == "pass"
    assert s_h["metrics"]["seq_F3_ratio"] == 1.0  # S = H: S's distance to T is H's own
    assert code == rep["exit_code"] == 1
    assert rep["ranking"]["order"] == ["holdout_events.csv", "copy"]
    html = (out / "report.html").read_text(encoding="utf-8")
    assert 'id="fig-seq-length-s1"' in html and 'id="fig-dcr-s1"' in html
