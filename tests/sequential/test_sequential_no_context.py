"""Sequences without subject attributes, `order: row`, datetime events, the ratio floor and mostlyai-qa's
coherence parts: small hand-made tables whose answers are worked out here, not by the code under test."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from holdbench.benchmark.data.sequential import check_synthetic_pair, from_frames, parse_spec, split_by_subject
from holdbench.metrics.sequential import SequentialLayout, d22_tables, evaluate_sequential, subject_vectors
from holdbench.metrics.sequential_parts import RATIO_FLOOR, coherence_parts, floored_ratio

CFG = {"source": "sequential", "sequential": {
    "key": "k", "n_events_privacy": 2,
    "events": {"file": "ev.csv", "order": "row", "columns": {"x": {"kind": "numeric", "dtype": "int"},
                                                            "c": {"kind": "categorical", "dtype": "str"}}}}}


def _events(n_keys: int = 12, seed: int = 0) -> pd.DataFrame:
    """Keys interleaved in the file, x counting DOWN within a key (so file order is not x's order)."""
    rng = np.random.default_rng(seed)
    rows = []
    for step in range(4):
        for k in range(n_keys):
            if step < 1 + k % 4:
                rows.append({"k": f"id{k}", "x": 10 - step, "c": "abc"[int(rng.integers(0, 3))]})
    return pd.DataFrame(rows)


def test_a_config_without_subjects_is_a_no_context_dataset_in_file_row_order():
    spec = parse_spec("ev", CFG)
    assert not spec.has_subjects and spec.order == () and spec.subject_columns == []
    raw = _events()
    data = from_frames(spec, None, raw)
    assert data.subjects.columns.tolist() == ["k"]
    assert data.subjects["k"].tolist() == [f"id{k}" for k in range(12)]  # first appearance
    for k, group in data.events.groupby("k", sort=False):
        assert group["x"].tolist() == raw.loc[raw["k"] == k, "x"].tolist()  # file order, x decreasing
    t, h = split_by_subject(data, 0)
    for part in (t, h):
        assert all(g["x"].is_monotonic_decreasing for _, g in part.events.groupby("k"))


def test_an_empty_subjects_block_still_asks_to_leave_it_out():
    cfg = {**CFG, "sequential": {**CFG["sequential"], "subjects": {"file": "s.csv", "columns": {}}}}
    with pytest.raises(ValueError, match="leave the `subjects` block out"):
        parse_spec("ev", cfg)


def test_no_dummy_column_enters_the_d22_table_or_the_subject_vector():
    spec = parse_spec("ev", CFG)
    data = from_frames(spec, None, _events())
    layout = SequentialLayout("k", {}, spec.event_schema.kinds, 2)
    pair = (data.subjects, data.events)
    t, _, _, kinds = d22_tables(pair, pair, pair, layout, 0)
    assert t.columns.tolist() == ["n_events", "x@t", "c@t", "x@t+1", "c@t+1"] == list(kinds)
    v, _, _, _ = subject_vectors(pair, pair, pair, layout)
    assert v.columns.tolist() == ["n_events", "x#1", "c#1", "x#2", "c#2"]
    # the first event of id0 is its first row of the file: x = 10
    assert v.loc[0, "x#1"] == 10


@pytest.mark.parametrize("name", ["copy", "flip", "indep_events", "swap_sequences", "ar_cart"])
def test_the_baselines_and_ar_cart_synthesize_sequences_without_subject_attributes(name):
    from holdbench.benchmark.data.sequential import synthesizer_context
    from holdbench.synthesizers import sequential as seq

    spec = parse_spec("ev", CFG)
    data = from_frames(spec, None, _events(30))
    synth = {"copy": seq.Copy(), "flip": seq.SequentialFlip(0.5), "indep_events": seq.IndependentEvents(),
             "swap_sequences": seq.SwapSequences(), "ar_cart": seq.ARCart()}[name]
    synth.fit(data.subjects, data.events, synthesizer_context(spec, 0))
    subjects, events = check_synthetic_pair(spec, *synth.sample(30, 1), name, 30)
    assert subjects.columns.tolist() == ["k"] and events.columns.tolist() == ["k", "x", "c"]
    if name == "copy":  # whole real sequences, in their row order
        assert all(g["x"].is_monotonic_decreasing for _, g in events.groupby("k"))


def test_shuffled_rows_of_s_are_said_to_have_lost_their_row_order():
    spec = parse_spec("ev", CFG)
    data = from_frames(spec, None, _events(40))
    layout = SequentialLayout("k", {}, spec.event_schema.kinds, 2)
    pair = (data.subjects, data.events)
    grouped = evaluate_sequential(pair, pair, pair, layout)
    assert grouped.seq_keys_interleaved == 0 and grouped.seq_order_reason is None
    shuffled = data.events.sample(frac=1, random_state=0).reset_index(drop=True)
    res = evaluate_sequential(pair, pair, (data.subjects, shuffled), layout)
    keys_long = (data.events["k"].value_counts() > 1).mean()
    assert 0 < res.seq_keys_interleaved <= keys_long
    assert "shuffled" in res.seq_order_reason and "order: row" in res.seq_order_reason


DT_CFG = {"source": "sequential", "sequential": {
    "key": "k", "n_events_privacy": 1,
    "events": {"file": "tx.csv", "order": ["ts"], "columns": {"ts": {"kind": "datetime"},
                                                             "amount": {"kind": "numeric", "dtype": "float"}}}}}


def _transactions(n: int, gap_days: float, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for k in range(n):
        t = pd.Timestamp("2024-01-01") + pd.Timedelta(days=int(rng.integers(0, 30)))
        for _ in range(int(rng.integers(2, 6))):
            rows.append({"k": k, "ts": t.isoformat(), "amount": float(rng.integers(1, 50))})
            t += pd.Timedelta(days=gap_days * float(rng.exponential(1.0)) + 0.01)
    return pd.DataFrame(rows)


def test_datetimes_are_days_since_1970_and_order_the_events():
    spec = parse_spec("tx", DT_CFG)
    assert spec.time == "ts" and spec.datetimes == (("ts", None),)
    raw = pd.DataFrame({"k": [1, 1, 2], "ts": ["2024-01-03", "2024-01-02 12:00", "1970-01-02"], "amount": [1.0, 2, 3]})
    data = from_frames(spec, None, raw)
    assert data.events["ts"].tolist() == [19724.5, 19725.0, 1.0]  # 2024-01-02 is day 19724; sorted by ts


def test_a_datetime_that_does_not_parse_names_file_column_and_value():
    spec = parse_spec("tx", DT_CFG)
    raw = pd.DataFrame({"k": [1, 1], "ts": ["2024-01-03", "3rd of May"], "amount": [1.0, 2]})
    with pytest.raises(ValueError, match=r"tx\.csv: datetime column 'ts'.*'3rd of May'"):
        from_frames(spec, None, raw)
    with pytest.raises(ValueError, match=r"S\.csv \(events table\): datetime column 'ts'.*'soon'"):
        check_synthetic_pair(spec, pd.DataFrame({"k": [1]}), raw.assign(ts=["2024-01-03", "soon"]), "S.csv")


def test_events_out_of_time_order_in_s_are_reported_not_resorted():
    spec = parse_spec("tx", DT_CFG)
    data = from_frames(spec, None, _transactions(80, 3.0, 0))
    layout = SequentialLayout("k", {}, spec.event_schema.kinds, 1, order=("ts",), time="ts", datetimes=("ts",))
    pair = (data.subjects, data.events)
    reversed_ = data.events.iloc[::-1].sort_values("k", kind="stable").reset_index(drop=True)
    subjects, events = check_synthetic_pair(spec, data.subjects, reversed_, "S")
    assert events["ts"].tolist() == reversed_["ts"].tolist()  # kept as given
    res = evaluate_sequential(pair, pair, (subjects, events), layout)
    assert res.seq_out_of_order == 1.0 and res.seq_out_of_order_pairs == 1.0  # every sequence has 2+ events
    assert res.seq_out_of_order_holdout == 0.0
    assert "out of order" in res.seq_order_reason and "not re-sorted" in res.seq_order_reason


def test_the_gap_ratio_is_one_for_h_and_grows_when_gaps_do():
    spec = parse_spec("tx", DT_CFG)
    layout = SequentialLayout("k", {}, spec.event_schema.kinds, 1, order=("ts",), time="ts", datetimes=("ts",))
    t, h, s = (from_frames(spec, None, _transactions(300, g, seed)) for g, seed in ((3.0, 0), (3.0, 1), (12.0, 2)))
    tables = [(d.subjects, d.events) for d in (t, h, s)]
    ref = evaluate_sequential(tables[0], tables[1], tables[1], layout, holdout_row=True)
    assert ref.seq_gap_ratio == pytest.approx(1.0)
    res = evaluate_sequential(*tables, layout)
    assert res.seq_gap_ratio > 3 and res.seq_gaps["median_synthetic"].iloc[0] > 3 * res.seq_gaps["median_train"].iloc[0]


def test_a_tiny_holdout_distance_is_floored_so_a_ratio_stays_readable():
    # lengths: T and H both 100 x length 1 and 100 x length 2 (TVD 0); S moves 4 of 200 subjects (TVD 0.02)
    def tables(n1: int, n2: int) -> tuple[pd.DataFrame, pd.DataFrame]:
        keys = np.arange(n1 + n2)
        lengths = np.r_[np.ones(n1, int), np.full(n2, 2)]
        ev = pd.DataFrame({"k": np.repeat(keys, lengths), "x": 1})
        return pd.DataFrame({"k": keys}), ev

    layout = SequentialLayout("k", {}, {"x": "numeric"}, 1)
    res = evaluate_sequential(tables(100, 100), tables(100, 100), tables(104, 96), layout)
    assert res.seq_length_tvd == pytest.approx(0.02) and res.seq_length_tvd_holdout == 0
    assert res.seq_length_ratio == pytest.approx(0.02 / RATIO_FLOOR)
    assert "length S 0.0200 / H 0.0000 (H floored to 0.01)" in res.seq_ratios_reason
    assert floored_ratio(0.05, 0.02) == pytest.approx(2.5) and math.isnan(floored_ratio(math.nan, 0.1))


def test_mostlyai_coherence_parts_by_hand():
    # T: seq 0 = a x5 b x5, seq 1 = a, seq 2 = z (z: 1 event, under the 5 a level needs, so "(other)")
    # S: seq 0 = a b c, seq 1 = c c
    t = pd.DataFrame({"c": ["a"] * 5 + ["b"] * 5 + ["a", "z"]})
    s = pd.DataFrame({"c": ["a", "b", "c", "c", "c"]})
    owner_t = np.array([0] * 10 + [1, 2])
    parts = coherence_parts((owner_t, t), [(np.array([0, 0, 0, 1, 1]), s)], {"c": "categorical"})
    # distinct per sequence: T {2, 1, 1}, S {3, 1}; on T's bins (1, 2; S's 3 falls into 2): (2/3, 1/3) vs (1/2, 1/2)
    assert parts.loc[0, "distinct_0"] == pytest.approx(0.5 * (abs(2 / 3 - 1 / 2) + abs(1 / 3 - 1 / 2)))
    # sequences per category: T a:2 b:1 (other: z):1 -> (2/4, 1/4, 1/4); S a:1 b:1 (other: c):2 -> (1/4, 1/4, 2/4)
    assert parts.loc[0, "category_0"] == pytest.approx(0.5 * (1 / 4 + 0 + 1 / 4))


def test_the_guides_no_context_config_loads_transactions_by_row():
    import yaml

    from tests.docs_blocks import block

    cfg = yaml.safe_load(block("docs/guides/sequential-data.md", "name: my_transactions"))
    spec = parse_spec(cfg["name"], cfg)
    assert not spec.has_subjects and spec.order == () and spec.time == "booked_at"
    raw = pd.DataFrame({"account_id": [7, 7, 8], "booked_at": ["2024-05-02T10:00", "2024-05-01", "2024-05-03"],
                        "channel": ["web", "app", "web"], "amount": [1.5, 2.0, 3.0]})
    data = from_frames(spec, None, raw)
    assert data.events["amount"].tolist() == [1.5, 2.0, 3.0]  # row order kept, though 05-01 precedes 05-02
    assert data.events["booked_at"].iloc[1] == (pd.Timestamp("2024-05-01") - pd.Timestamp("1970-01-01")).days


def test_a_no_context_event_file_without_its_key_is_named():
    spec = parse_spec("ev", CFG)
    with pytest.raises(ValueError, match=r"ev\.csv: column\(s\) \['k'\] are missing"):
        from_frames(spec, None, _events().drop(columns=["k"]))


@pytest.mark.parametrize("events, message", [
    ({"order": "rows"}, "must be `row`"),
    ({"columns": {"x": {"kind": "numeric", "format": "%Y"}}}, "applies to `kind: datetime` only"),
    ({"columns": {"x": {"kind": "datetime", "unit": "s"}}}, r"unknown key\(s\) \['unit'\]"),
    ({"time": "nope"}, "`sequential.events.time` must name a declared event column"),
])
def test_config_mistakes_of_the_new_forms_are_named(events, message):
    cfg = {**CFG, "sequential": {**CFG["sequential"], "events": {**CFG["sequential"]["events"], **events}}}
    with pytest.raises(ValueError, match=message):
        parse_spec("ev", cfg)
