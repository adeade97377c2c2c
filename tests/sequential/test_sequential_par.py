"""SDV's PARSynthesizer behind the sequential interface (holdbench.synthesizers.sequential_par): T's columns and dtypes,
keys 0..n-1, seeded determinism, zero-event subjects (T's share, drawn per sample), the single order column
as PAR's sequence index (increasing in every sampled sequence), and the checks before any work."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from holdbench.synthesizers.sequential_par import PAR, _out_of_order
from tests.sequential._checks import check_pair, small_train, zero_event_subjects

#: the `smoke` preset of the PAR config (a few epochs: structure, not quality)
SMOKE = {"epochs": 3, "max_subjects": 200}
ZERO_SHARE = 0.25


@pytest.fixture(scope="module")
def baseball_fit(loaded):
    """PAR fitted (seed 0) on T of 160 baseball subjects, a quarter of them emptied of events."""
    t, ctx = small_train(loaded["baseball"], 160, ZERO_SHARE)
    par = PAR(**SMOKE)
    par.fit(t.subjects, t.events, ctx)
    return t, ctx, par


@pytest.mark.slow
def test_tables_have_ts_columns_and_keys(baseball_fit):
    t, ctx, par = baseball_fit
    n = t.n_subjects + 7
    subjects, events = par.sample(n, 1)
    check_pair(t, subjects, events, n)
    assert len(events) > 0
    # baseball has two order columns: ordinary event columns, PAR's sequence index unused
    assert par.fit_record["sequence_index"] is None
    assert par.fit_record["order_columns_as_events"] == ["yearID", "stint"]
    assert par.sample_record["subjects_out_of_order"] == _out_of_order(events, ctx.key, list(ctx.order))


@pytest.mark.slow
def test_same_seed_same_tables_whatever_came_before(baseball_fit):
    _, _, par = baseball_fit
    first = par.sample(60, 5)
    par.sample(30, 6)  # another draw in between must not matter
    again = par.sample(60, 5)
    other = par.sample(60, 7)
    for a, b in zip(first, again, strict=True):
        pd.testing.assert_frame_equal(a, b)
    assert not (first[0].equals(other[0]) and first[1].equals(other[1]))


@pytest.mark.slow
def test_same_fit_seed_same_model(loaded):
    t, ctx = small_train(loaded["nlswork"], 60, 0.0)
    out = []
    for _ in range(2):
        par = PAR(epochs=2)
        par.fit(t.subjects, t.events, ctx)
        out.append(par.sample(20, 3))
    for a, b in zip(*out, strict=True):
        pd.testing.assert_frame_equal(a, b)


@pytest.mark.slow
def test_zero_event_subjects_drawn_at_ts_share(baseball_fit):
    t, ctx, par = baseball_fit
    zero_t = zero_event_subjects(t.subjects, t.events, ctx.key)
    assert par.fit_record["zero_event_subjects"] == zero_t
    assert par.fit_record["subjects_with_events"] == t.n_subjects - zero_t
    n = 300
    subjects, events = par.sample(n, 11)
    zero_s = zero_event_subjects(subjects, events, ctx.key)
    assert zero_s == par.sample_record["zero_event_subjects_sampled"] == par.info()["zero_event_subjects_sampled"]
    assert par.info()["zero_event_subjects"] == zero_t  # T's count, not overwritten by the sample's
    share_t = zero_t / t.n_subjects
    sd = np.sqrt(share_t * (1 - share_t) / n)
    assert abs(zero_s / n - share_t) < 4 * sd, (zero_s, n, share_t)
    # the other subjects all have events: PAR samples at least its shortest training sequence
    assert (events.groupby(ctx.key).size() >= 1).all() and events[ctx.key].nunique() == n - zero_s


@pytest.mark.slow
def test_single_order_column_is_the_sequence_index(loaded):
    t, ctx = small_train(loaded["nlswork"], 120, 0.0)
    par = PAR(**SMOKE)
    par.fit(t.subjects, t.events, ctx)
    assert par.fit_record["sequence_index"] == "year"
    subjects, events = par.sample(80, 2)
    check_pair(t, subjects, events, 80)
    steps = events.groupby(ctx.key)["year"].diff().dropna()
    assert len(steps) > 0 and (steps >= 0).all()
    # a step of 0 only where SDV's min/max enforcement clipped a year past T's last one
    assert (events.loc[steps.index[steps == 0], "year"] == t.events["year"].max()).all()
    assert par.sample_record["subjects_out_of_order"] == 0


@pytest.mark.slow
def test_max_subjects_fits_on_a_seeded_part_of_t(loaded):
    t, ctx = small_train(loaded["nlswork"], 80, 0.0)
    par = PAR(epochs=1, max_subjects=12)
    par.fit(t.subjects, t.events, ctx)
    assert par.fit_record["subjects_fitted"] == 12 < t.n_subjects
    assert 12 <= par.fit_record["event_rows_fitted"] < t.n_events
    subjects, events = par.sample(30, 0)
    check_pair(t, subjects, events, 30)


def test_out_of_order_counts_subjects_whose_order_decreases():
    events = pd.DataFrame({"k": [0, 0, 0, 1, 1, 2, 2, 3],
                           "y": [1, 2, 2, 5, 4, 3, 3, 9],
                           "s": [1, 1, 2, 1, 1, 2, 1, 1]})
    # subject 0 increasing (tie in y broken by s), 1 decreases in y, 2 ties in y and decreases in s, 3 one row
    assert _out_of_order(events, "k", ["y", "s"]) == 2
    assert _out_of_order(events, "k", ["y"]) == 1
    assert _out_of_order(events, "k", []) == 0


@pytest.mark.parametrize("kwargs, message", [
    ({"epochs": 0}, "epochs must be a positive integer"),
    ({"epochs": 2.5}, "epochs must be a positive integer"),
    ({"sample_size": 0}, "sample_size must be a positive integer"),
    ({"segment_size": 0}, "segment_size must be a positive integer or null"),
    ({"log_every": True}, "log_every must be a positive integer"),
])
def test_bad_settings_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        PAR(**kwargs)


def test_sample_before_fit_is_refused():
    with pytest.raises(RuntimeError, match="before fit"):
        PAR().sample(5, 0)
