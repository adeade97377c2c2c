"""Sequential datasets: the configs load the real files as declared, bad input is refused before any
work (a ValueError naming the file and the column), and the split by subject keeps sequences whole."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from holdbench.benchmark.data.sequential import check_synthetic, from_frames, parse_spec, split_by_subject
from tests.conftest import DATASETS


def test_baseball_loads_every_player_with_the_declared_columns(loaded):
    data = loaded["baseball"]
    people = pd.read_csv(DATASETS / "baseball" / "People.csv.gz", usecols=["playerID"])
    batting = pd.read_csv(DATASETS / "baseball" / "Batting.csv.gz", usecols=["playerID", "yearID", "stint"])
    assert data.n_subjects == len(people) == 20093 and data.n_events == len(batting) == 108789
    assert list(data.subjects.columns) == ["playerID", "birthYear", "birthCountry", "weight", "height", "bats", "throws"]
    assert "nameFirst" not in data.subjects.columns and "birthCity" not in data.subjects.columns
    no_batting = set(people.playerID) - set(batting.playerID)
    assert len(no_batting) == 195 and no_batting <= set(data.subjects.playerID)  # zero-event subjects stay in
    expected = batting.sort_values(["playerID", "yearID", "stint"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(data.events[["playerID", "yearID", "stint"]], expected, check_dtype=False)


def test_nlswork_subjects_come_from_the_panel(loaded):
    data = loaded["nlswork"]
    raw = pd.read_csv(DATASETS / "nlswork" / "nlswork.csv.gz")
    assert data.n_subjects == raw.idcode.nunique() == 4711 and data.n_events == len(raw) == 28534
    assert "rownames" not in data.events.columns and "birth_yr" not in data.events.columns
    first = raw.groupby("idcode").first()
    got = data.subjects.set_index("idcode")
    assert (got.loc[first.index, "birth_yr"].to_numpy() == first.birth_yr.to_numpy()).all()
    assert (got.loc[first.index, "race"].to_numpy() == first.race.astype(str).to_numpy()).all()
    years = data.events.groupby("idcode").year.apply(lambda s: s.is_monotonic_increasing)
    assert years.all()


# ---- bad input, on tiny hand-built tables -------------------------------------------------------

CFG = {"source": "sequential", "sequential": {
    "key": "id", "n_events_privacy": 2,
    "subjects": {"file": "subj.csv", "columns": {"a": {"kind": "numeric", "dtype": "int"}}},
    "events": {"file": "ev.csv", "order": ["t"], "columns": {"t": {"kind": "numeric", "dtype": "int"},
                                                              "x": {"kind": "categorical", "dtype": "str"}}}}}


def _spec(**changes):
    import copy

    cfg = copy.deepcopy(CFG)
    cfg["sequential"].update(changes)
    return parse_spec("tiny", cfg)


SUBJ = pd.DataFrame({"id": [1, 2, 3], "a": [10, 20, 30]})
EV = pd.DataFrame({"id": [2, 1, 1, 2], "t": [5, 2, 1, 1], "x": ["p", "q", "r", "s"]})


def test_tiny_tables_are_accepted_and_sorted():
    data = from_frames(_spec(), SUBJ, EV)
    assert data.events[["id", "t"]].values.tolist() == [[1, 1], [1, 2], [2, 1], [2, 5]]
    assert data.events.x.tolist() == ["r", "q", "s", "p"]
    assert data.n_subjects == 3  # subject 3 has no events and stays in


@pytest.mark.parametrize(("subjects", "events", "words"), [
    (SUBJ, pd.concat([EV, pd.DataFrame({"id": [9], "t": [1], "x": ["z"]})]), ["ev.csv", "'id'", "no subject"]),
    (pd.concat([SUBJ, SUBJ.head(1)]), EV, ["subj.csv", "'id'", "not unique"]),
    (SUBJ, EV.drop(columns="t"), ["ev.csv", "'t'", "missing"]),
    (SUBJ.drop(columns="a"), EV, ["subj.csv", "'a'", "missing"]),
    (SUBJ, EV.assign(t=[5, 2, 2, 1]), ["ev.csv", "ties", "'t'"]),
    (SUBJ, EV.assign(t=[5, 2, None, 1]), ["ev.csv", "'t'", "missing"]),
    (SUBJ.assign(id=[1, None, 3]), EV, ["subj.csv", "'id'", "missing"]),
], ids=["orphan-event", "key-not-unique", "missing-order-column", "missing-subject-column", "tie", "order-nan",
        "key-nan"])
def test_bad_input_names_file_and_column(subjects, events, words):
    with pytest.raises(ValueError) as err:
        from_frames(_spec(), subjects, events)
    for w in words:
        assert w in str(err.value)


def test_panel_subject_column_must_be_constant():
    import copy

    cfg = copy.deepcopy(CFG)
    cfg["sequential"]["subjects"]["file"] = cfg["sequential"]["events"]["file"] = "panel.csv"
    panel = pd.DataFrame({"id": [1, 1, 2], "a": [10, 11, 20], "t": [1, 2, 1], "x": ["p", "q", "r"]})
    with pytest.raises(ValueError, match=r"panel\.csv: subject column 'a' varies"):
        from_frames(parse_spec("tiny", cfg), panel, panel)
    ok = from_frames(parse_spec("tiny", cfg), panel.assign(a=[10, 10, 20]), panel.assign(a=[10, 10, 20]))
    assert ok.subjects.values.tolist() == [[1, 10], [2, 20]] and ok.n_events == 3


def test_synthetic_tables_with_other_columns_are_refused():
    spec = _spec()
    check_synthetic(spec, SUBJ, EV)
    with pytest.raises(ValueError, match=r"events table.*missing \['x'\].*unexpected \['y'\]"):
        check_synthetic(spec, SUBJ, EV.rename(columns={"x": "y"}))
    with pytest.raises(ValueError, match=r"subjects table.*unexpected \['b'\]"):
        check_synthetic(spec, SUBJ.assign(b=1), EV)


@pytest.mark.parametrize(("change", "words"), [
    ({"n_events_privacy": 0}, "n_events_privacy"),
    ({"oops": 1}, "oops"),
    ({"key": "a"}, "lists the key"),
])
def test_bad_sequential_block_names_the_key(change, words):
    with pytest.raises(ValueError, match=words):
        _spec(**change)


def test_order_must_be_a_declared_event_column():
    import copy

    cfg = copy.deepcopy(CFG)
    cfg["sequential"]["events"]["order"] = ["when"]
    with pytest.raises(ValueError, match=r"events\.order.*\['when'\]"):
        parse_spec("tiny", cfg)


# ---- split by subject ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["baseball", "nlswork"])
def test_split_keeps_every_sequence_whole(loaded, name):
    data = loaded[name]
    key = data.spec.key
    t, h = split_by_subject(data, 7)
    assert t.n_subjects == round(data.n_subjects / 2) and t.n_subjects + h.n_subjects == data.n_subjects
    assert set(t.subjects[key]).isdisjoint(h.subjects[key])
    assert set(t.subjects[key]) | set(h.subjects[key]) == set(data.subjects[key])
    assert t.n_events + h.n_events == data.n_events
    for part in (t, h):  # each subject's events are exactly its original ones, in order
        mine = data.events[data.events[key].isin(part.subjects[key])].reset_index(drop=True)
        pd.testing.assert_frame_equal(part.events, mine)


def test_split_is_seeded(loaded):
    data = loaded["nlswork"]
    a, b, c = split_by_subject(data, 1)[0], split_by_subject(data, 1)[0], split_by_subject(data, 2)[0]
    pd.testing.assert_frame_equal(a.subjects, b.subjects)
    pd.testing.assert_frame_equal(a.events, b.events)
    assert not np.array_equal(a.subjects.idcode.to_numpy(), c.subjects.idcode.to_numpy())
