"""Sequential bad input refused up front, each problem named by file and column (issue 36, items 5-7):
an event table without rows, a dataset of one subject, bytes that are not UTF-8; keys read as the
identifiers they are (`NA`/`null` are keys, `007` and `7` are two, digits as text match numbers)."""

from __future__ import annotations

import pandas as pd
import pytest

from holdbench.benchmark.data import sequential as seq
from holdbench.benchmark.data.sequential import from_frames, load_tables, parse_spec


def _spec(tmp_path=None, subjects="subj.csv", events="ev.csv"):
    where = (lambda f: str(tmp_path / f)) if tmp_path is not None else (lambda f: f)
    return parse_spec("tiny", {"source": "sequential", "sequential": {
        "key": "id", "n_events_privacy": 2,
        "subjects": {"file": where(subjects), "columns": {"a": {"kind": "numeric", "dtype": "int"}}},
        "events": {"file": where(events), "order": ["t"],
                   "columns": {"t": {"kind": "numeric", "dtype": "int"}, "x": {"kind": "categorical", "dtype": "str"}}}}})


SUBJ = pd.DataFrame({"id": [1, 2, 3, 4], "a": [10, 20, 30, 40]})
EV = pd.DataFrame({"id": [2, 1, 1, 2], "t": [5, 2, 1, 1], "x": ["p", "q", "r", "s"]})


def test_an_empty_event_table_is_refused_naming_the_file():
    with pytest.raises(ValueError, match=r"ev\.csv: the event table has no rows"):
        from_frames(_spec(), SUBJ, EV.iloc[:0])


def test_a_dataset_of_one_subject_is_refused_before_the_split(monkeypatch):
    monkeypatch.setattr(seq, "sequential_spec", lambda name: _spec())
    monkeypatch.setattr(seq, "load_tables", lambda spec: (SUBJ.head(1), EV[EV.id == 1]))
    with pytest.raises(ValueError, match=r"dataset 'solo': subj\.csv has 1 subject\(s\); the 50/50 split over "
                                         r"subjects needs at least 4"):
        seq.load_sequential("solo")
    monkeypatch.setattr(seq, "load_tables", lambda spec: (SUBJ, EV))
    assert seq.load_sequential("four").n_subjects == 4


def test_bytes_that_are_not_utf8_are_named_by_file_line_and_column(tmp_path):
    (tmp_path / "subj.csv").write_text("id,a\n1,10\n2,20\n")
    (tmp_path / "ev.csv").write_bytes(b"id,t,x\n1,1,p\n2,1,caf\xe9\n")
    with pytest.raises(ValueError, match=r"ev\.csv: line 3, column 'x': byte b'\\xe9' is not UTF-8 text; "
                                         r"save the file as UTF-8"):
        load_tables(_spec(tmp_path))


def test_na_and_null_are_keys_not_missing_values(tmp_path):
    (tmp_path / "subj.csv").write_text("id,a\nNA,1\nnull,2\nA,3\nB,4\n")
    (tmp_path / "ev.csv").write_text("id,t,x\nNA,1,p\nnull,1,q\nnull,2,r\n")
    data = from_frames(_spec(tmp_path), *load_tables(_spec(tmp_path)))
    assert data.subjects["id"].tolist() == ["NA", "null", "A", "B"]
    assert data.events["id"].tolist() == ["NA", "null", "null"]
    (tmp_path / "subj.csv").write_text("id,a\n,1\nB,2\n")      # an empty field is a missing key
    with pytest.raises(ValueError, match=r"subj\.csv: column 'id' \(the key\) has 1 missing value"):
        from_frames(_spec(tmp_path), *load_tables(_spec(tmp_path)))


def test_007_and_7_are_two_keys(tmp_path):
    (tmp_path / "subj.csv").write_text("id,a\n007,1\n7,2\n8,3\n9,4\n")
    (tmp_path / "ev.csv").write_text("id,t,x\n007,1,p\n7,1,q\n")
    data = from_frames(_spec(tmp_path), *load_tables(_spec(tmp_path)))
    assert data.subjects["id"].tolist() == ["007", "7", "8", "9"]
    assert data.events["id"].tolist() == ["007", "7"]


def test_integer_keys_stay_integers(tmp_path):
    (tmp_path / "subj.csv").write_text("id,a\n10,1\n2,2\n3,3\n4,4\n")
    (tmp_path / "ev.csv").write_text("id,t,x\n10,1,p\n2,1,q\n")
    data = from_frames(_spec(tmp_path), *load_tables(_spec(tmp_path)))
    assert data.subjects["id"].dtype == "int64" and data.events["id"].tolist() == [2, 10]   # numeric order


@pytest.mark.parametrize(("subject_keys", "event_keys"), [
    (["1", "2", "3", "4"], [2, 1, 1, 2]),                 # digits as text in one table, numbers in the other
    ([1, 2, 3, 4], ["2", "1", "1", "2"]),
    (["1", "2", "3", "x4"], [2, 1, 1, 2]),                # a text key among them: compared as text
    ([1.0, 2.0, 3.0, 4.0], [2, 1, 1, 2]),
])
def test_a_key_that_is_text_in_one_table_and_numeric_in_the_other_matches(subject_keys, event_keys):
    data = from_frames(_spec(), SUBJ.assign(id=subject_keys), EV.assign(id=event_keys))
    assert data.n_events == 4 and data.events["id"].map(str).tolist() == ["1", "1", "2", "2"]


def test_an_event_file_that_repeats_a_column_name_is_refused_naming_it(tmp_path):
    # pandas would read the second 'x' as 'x.1', a column the spec does not declare
    (tmp_path / "subj.csv").write_text("id,a\n1,10\n2,20\n")
    (tmp_path / "ev.csv").write_text("id,t,x,x\n1,1,p,q\n2,1,r,s\n")
    with pytest.raises(ValueError, match=r"ev\.csv: a column name appears more than once in the header "
                                         r"\('x' in columns 3, 4\)"):
        load_tables(_spec(tmp_path))
