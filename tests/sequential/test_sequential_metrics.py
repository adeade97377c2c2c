"""Sequential measures against plain re-implementations and hand-computed answers on tiny tables."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from holdbench.metrics.privacy import distance_data, privacy
from holdbench.metrics.sequential import SequentialLayout, d22_tables, evaluate_sequential, subject_vectors

LAYOUT = SequentialLayout("id", {"a": "categorical"}, {"e": "categorical", "v": "numeric"}, n_events_privacy=2)
# subject 1: A,B,A   subject 2: B   subject 3: none   subject 4: A,A
T = (pd.DataFrame({"id": [1, 2, 3, 4], "a": ["x", "y", "x", "y"]}),
     pd.DataFrame({"id": [1, 1, 1, 2, 4, 4], "e": ["A", "B", "A", "B", "A", "A"], "v": [1.0, 2, 3, 4, 5, 6]}))


def test_d22_table_is_two_subsequent_events_drawn_once_per_subject():
    flat, _, _, kinds = d22_tables(T, T, T, LAYOUT, seed=3)
    u = np.random.default_rng(3).random(4)
    seqs = {1: [("A", 1.0), ("B", 2.0), ("A", 3.0)], 2: [("B", 4.0)], 3: [], 4: [("A", 5.0), ("A", 6.0)]}
    rows = []
    for i, (k, a) in enumerate(zip([1, 2, 3, 4], ["x", "y", "x", "y"])):
        seq = seqs[k]
        t = math.floor(u[i] * (len(seq) - 1)) if len(seq) >= 2 else 0
        ev_t = seq[t] if len(seq) >= 1 else (None, None)
        ev_t1 = seq[t + 1] if len(seq) >= 2 else (None, None)
        rows.append([a, len(seq), *ev_t, *ev_t1])
    expected = pd.DataFrame(rows, columns=["a", "n_events", "e@t", "v@t", "e@t+1", "v@t+1"])
    got = flat.astype(object).where(flat.notna(), None)
    assert got.values.tolist() == expected.astype(object).where(expected.notna(), None).values.tolist()
    assert list(flat.columns) == list(expected.columns)
    assert kinds == {"a": "categorical", "n_events": "numeric", "e@t": "categorical", "v@t": "numeric",
                     "e@t+1": "categorical", "v@t+1": "numeric"}


def test_the_draw_is_the_same_for_every_table():
    """The same seed for T, H and S: equal tables give equal rows."""
    a, b, c, _ = d22_tables(T, T, T, LAYOUT, seed=11)
    pd.testing.assert_frame_equal(a, b)
    pd.testing.assert_frame_equal(a, c)


def test_subject_vectors_are_attributes_length_and_first_m_events():
    vec, _, _, kinds = subject_vectors(T, T, T, LAYOUT)
    expected = [["x", 3, "A", 1.0, "B", 2.0], ["y", 1, "B", 4.0, None, None], ["x", 0, None, None, None, None],
                ["y", 2, "A", 5.0, "A", 6.0]]
    assert vec.astype(object).where(vec.notna(), None).values.tolist() == expected
    assert list(vec.columns) == ["a", "n_events", "e#1", "v#1", "e#2", "v#2"]
    assert list(kinds) == list(vec.columns)


def test_length_and_coherence_tvds_by_hand():
    # S: every subject has one event, subject 1 has A,A,A: lengths 3,1,1,1
    s = (T[0], pd.DataFrame({"id": [1, 1, 1, 2, 3, 4], "e": ["A"] * 6, "v": [1.0] * 6}))
    r = evaluate_sequential(T, T, s, LAYOUT, seed=0)
    # T lengths {3,1,0,2} each 1/4; S {3: 1/4, 1: 3/4}: 0.5 * (0 + 0.5 + 0.25 + 0.25)
    assert r.seq_length_tvd == pytest.approx(0.5)
    # e pairs: T (A,B) (B,A) (A,A) each 1/3; S (A,A) twice: 0.5 * (1/3 + 1/3 + 2/3) = 2/3
    # v pairs (T's buckets on 1..6, S all 1.0 -> the first bucket): T pairs (1,2) (2,3) (5,6), S (1,1) twice;
    # no T pair falls in S's cell: TVD 1
    assert r.seq_coherence["tvd_synthetic"].tolist() == pytest.approx([2 / 3, 1.0])
    assert r.seq_coherence_tvd == pytest.approx((2 / 3 + 1.0) / 2)
    assert not r.seq_lengths_copied
    hist = r.seq_length_histogram
    assert hist.train.tolist() == [1, 1, 1, 1] and hist.synthetic.tolist() == [0, 3, 0, 1]


def test_subject_dcr_share_is_the_flat_code_on_the_subject_vectors():
    rng = np.random.default_rng(0)

    def tables(n, offset):
        subj = pd.DataFrame({"id": np.arange(n) + offset, "a": rng.choice(["x", "y", "z"], n)})
        lengths = rng.integers(0, 4, n)
        ev = pd.DataFrame({"id": np.repeat(subj.id, lengths), "e": rng.choice(list("ABC"), lengths.sum()),
                           "v": rng.integers(0, 5, lengths.sum()).astype(float)})
        return subj, ev

    t, h, s = tables(60, 0), tables(60, 100), tables(60, 200)

    def plain_vectors(subj, ev):  # written plainly: row by row
        rows = []
        for k, a in zip(subj.id, subj.a):
            mine = ev[ev.id == k]
            row = {"a": a, "n_events": len(mine)}
            for i in range(2):
                row[f"e#{i + 1}"] = mine.e.iloc[i] if i < len(mine) else None
                row[f"v#{i + 1}"] = mine.v.iloc[i] if i < len(mine) else None
            rows.append(row)
        return pd.DataFrame(rows)

    kinds = {"a": "categorical", "n_events": "numeric", "e#1": "categorical", "v#1": "numeric",
             "e#2": "categorical", "v#2": "numeric"}
    ref = privacy(distance_data(*(plain_vectors(*x) for x in (t, h, s)), kinds), False)
    r = evaluate_sequential(t, h, s, LAYOUT, seed=0)
    assert r.seq_dcr_share == ref.share
    assert r.seq_ims == np.mean(ref.d_train == 0)
    copied = evaluate_sequential(t, h, t, LAYOUT, seed=0)
    assert copied.seq_ims == 1.0 and copied.seq_dcr_share > 0.8  # below 1: tiny vectors often tie with H


def test_events_of_unknown_subjects_are_refused():
    bad = (T[0], pd.concat([T[1], pd.DataFrame({"id": [9], "e": ["A"], "v": [1.0]})]))
    with pytest.raises(ValueError, match=r"S \(events table\): column 'id'"):
        evaluate_sequential(T, T, bad, LAYOUT)
    with pytest.raises(ValueError, match="n_events_privacy"):
        SequentialLayout("id", {"a": "categorical"}, {"e": "categorical"}, n_events_privacy=0)
