"""Sequential synthesizers and measures on seeded samples of baseball and nlswork: the baseline
invariants of issue 25 (holdout ratios 1 and DCR share ~0.5; copy IMS and DCR share ~1; flip monotone
in p; indep_events' coherence ratio far above 1; swap_sequences caught by the subject-level DCR
share), the structure each baseline promises, and byte-identical output for the same seed."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from holdbench.metrics.sequential import SequentialLayout, evaluate_sequential
from holdbench.synthesizers.sequential import (
    ARCart,
    Copy,
    IndependentEvents,
    SequentialContext,
    SequentialFlip,
    SequentialHoldout,
    SwapSequences,
)

DATASETS = ["baseball", "nlswork"]


def _run(cells, name, synth, seed=1):
    spec, t, h = cells[name]
    ctx = SequentialContext(spec.key, spec.subject_schema, spec.event_schema, 0, name, (h.subjects, h.events))
    synth.fit(t.subjects, t.events, ctx)
    return synth.sample(t.n_subjects, seed)


def _score(cells, name, synthetic, holdout_row=False):
    spec, t, h = cells[name]
    layout = SequentialLayout(spec.key, spec.subject_schema.kinds, spec.event_schema.kinds, spec.n_events_privacy)
    return evaluate_sequential((t.subjects, t.events), (h.subjects, h.events), synthetic, layout, seed=0,
                               holdout_row=holdout_row)


def _sequences(subjects, events, key, columns):
    """{subject position: tuple of its event rows (as tuples)}, in the subject table's order."""
    grouped = {k: tuple(map(tuple, g[columns].astype(str).to_numpy())) for k, g in events.groupby(key, sort=False)}
    return [grouped.get(k, ()) for k in subjects[key]]


@pytest.mark.parametrize("name", DATASETS)
def test_holdout_is_the_reference(cells, name):
    r = _score(cells, name, _run(cells, name, SequentialHoldout()), holdout_row=True)
    for v in (r.seq_F1_ratio, r.seq_F2_ratio, r.seq_F3_ratio, r.seq_coherence_ratio, r.seq_length_ratio):
        assert v == pytest.approx(1.0, abs=1e-12)
    assert 0.4 < r.seq_dcr_share < 0.6
    assert r.seq_ims == r.seq_ims_holdout


@pytest.mark.parametrize("name", DATASETS)
def test_copy_is_caught(cells, name):
    r = _score(cells, name, _run(cells, name, Copy()))
    assert r.seq_ims > 0.99 and r.seq_ims_holdout < 0.05
    assert r.seq_dcr_share > 0.97


@pytest.mark.parametrize("name", DATASETS)
def test_flip_is_monotone_in_p(cells, name):
    res = [_score(cells, name, _run(cells, name, SequentialFlip(p))) for p in (0.1, 0.5, 0.9)]
    for field in ("seq_F2_ratio", "seq_F3_ratio", "seq_coherence_ratio"):
        values = [getattr(r, field) for r in res]
        assert values == sorted(values) and values[0] < values[-1], (field, values)
    shares = [r.seq_dcr_share for r in res]
    assert shares == sorted(shares, reverse=True) and shares[0] > shares[-1] + 0.2, shares
    assert all(r.seq_lengths_copied for r in res)  # lengths kept


@pytest.mark.parametrize("name", DATASETS)
def test_indep_events_loses_coherence(cells, name):
    r = _score(cells, name, _run(cells, name, IndependentEvents()))
    assert r.seq_coherence_ratio > 2.0
    assert r.seq_lengths_copied


@pytest.mark.parametrize("name", DATASETS)
def test_swap_sequences_is_caught_by_the_subject_dcr_share(cells, name):
    r = _score(cells, name, _run(cells, name, SwapSequences()))
    assert r.seq_dcr_share > 0.9
    assert r.seq_ims < 0.1  # not exact copies: only the nearest-record measure catches it


# ---- what each baseline promises ---------------------------------------------------------------

def test_flip_zero_returns_t(cells):
    spec, t, _ = cells["baseball"]
    subjects, events = _run(cells, "baseball", SequentialFlip(0.0))
    attrs = spec.subject_schema.names
    pd.testing.assert_frame_equal(subjects[attrs], t.subjects[attrs], check_dtype=False)
    cols = spec.event_schema.names
    assert _sequences(subjects, events, spec.key, cols) == _sequences(t.subjects, t.events, spec.key, cols)


def test_flip_keeps_lengths_and_flips_about_p(cells):
    spec, t, _ = cells["baseball"]
    subjects, events = _run(cells, "baseball", SequentialFlip(0.5))
    lengths_t = t.events.groupby(spec.key).size().reindex(t.subjects[spec.key], fill_value=0).to_numpy()
    lengths_s = events.groupby(spec.key).size().reindex(subjects[spec.key], fill_value=0).to_numpy()
    assert np.array_equal(lengths_t, lengths_s)
    base = pd.concat([t.events[t.events[spec.key] == k] for k in t.subjects[spec.key]])  # T's events by subject
    changed = (base["teamID"].to_numpy() != events["teamID"].to_numpy()).mean()
    assert 0.35 < changed < 0.5  # replaced with prob. 0.5, by a donor that may equal the original


def test_copy_and_swap_reuse_real_sequences(cells):
    spec, t, _ = cells["nlswork"]
    cols, attrs = spec.event_schema.names, spec.subject_schema.names
    real = _sequences(t.subjects, t.events, spec.key, cols)
    real_pairs = set(zip(map(tuple, t.subjects[attrs].astype(str).to_numpy()), real))
    s, e = _run(cells, "nlswork", Copy())
    assert set(zip(map(tuple, s[attrs].astype(str).to_numpy()), _sequences(s, e, spec.key, cols))) <= real_pairs
    s, e = _run(cells, "nlswork", SwapSequences())
    assert sorted(_sequences(s, e, spec.key, cols)) == sorted(real)
    pd.testing.assert_frame_equal(s[attrs], t.subjects[attrs], check_dtype=False)


def test_indep_events_draws_real_event_rows(cells):
    spec, t, _ = cells["baseball"]
    cols = spec.event_schema.names
    _, e = _run(cells, "baseball", IndependentEvents())
    real_rows = set(map(tuple, t.events[cols].astype(str).to_numpy()))
    assert set(map(tuple, e[cols].astype(str).to_numpy())) <= real_rows
    assert len(e) == len(t.events)


def test_ar_cart_makes_plausible_sequences(cells):
    spec, t, _ = cells["baseball"]
    s, e = _run(cells, "baseball", ARCart())
    assert list(s.columns) == [spec.key, *spec.subject_schema.names]
    assert list(e.columns) == [spec.key, *spec.event_schema.names]
    assert len(s) == t.n_subjects and set(e[spec.key]) <= set(s[spec.key])
    lengths = e.groupby(spec.key).size()
    assert lengths.max() <= t.events.groupby(spec.key).size().max()
    assert set(e.teamID.dropna()) <= set(t.events.teamID.dropna())
    r = _score(cells, "baseball", (s, e))
    r_indep = _score(cells, "baseball", _run(cells, "baseball", IndependentEvents()))
    assert abs(np.log(r.seq_coherence_ratio)) < abs(np.log(r_indep.seq_coherence_ratio))
    assert r.seq_dcr_share < 0.8 and r.seq_ims < 0.05


@pytest.mark.parametrize("make", [Copy, lambda: SequentialFlip(0.3), IndependentEvents, SwapSequences, ARCart],
                         ids=["copy", "flip", "indep_events", "swap_sequences", "ar_cart"])
def test_same_seed_same_output(cells, make):
    a = _run(cells, "nlswork", make(), seed=5)
    b = _run(cells, "nlswork", make(), seed=5)
    c = _run(cells, "nlswork", make(), seed=6)
    for x, y in zip(a, b):
        pd.testing.assert_frame_equal(x, y)
    assert not (a[0].equals(c[0]) and a[1].equals(c[1]))


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="p must be"):
        SequentialFlip(1.5)
    with pytest.raises(ValueError, match="min_samples_leaf"):
        ARCart(min_samples_leaf=0)
