"""The flat privacy families (extended panel, Bale & Quick's legal criteria, membership inference) on
one vector per subject (holdbench.metrics.sequential.subject_privacy): the leaks of issue 25 are caught at the
subject level, a generator that makes new sequences is not flagged like them."""

from __future__ import annotations

import pytest

from holdbench.metrics.sequential import SequentialLayout, subject_privacy
from holdbench.synthesizers.sequential import ARCart, Copy, SequentialContext, SequentialHoldout, SwapSequences

DATASETS = ["baseball", "nlswork"]


def _privacy(cells, name, synth, holdout_row=False):
    spec, t, h = cells[name]
    ctx = SequentialContext(spec.key, spec.subject_schema, spec.event_schema, 0, name, (h.subjects, h.events))
    synth.fit(t.subjects, t.events, ctx)
    s = synth.sample(t.n_subjects, 1)
    layout = SequentialLayout(spec.key, spec.subject_schema.kinds, spec.event_schema.kinds, spec.n_events_privacy)
    return subject_privacy((t.subjects, t.events), (h.subjects, h.events), s, layout, seed=0,
                           holdout_row=holdout_row).to_dict()


@pytest.mark.parametrize("name", DATASETS)
def test_copied_subjects_are_caught_by_every_family(cells, name):
    r = _privacy(cells, name, Copy())
    assert r["ims_synthetic"] > 0.99 and r["legal_ims_synthetic"] > 0.99
    assert r["nndr2_p05_synthetic"] == 0.0
    # a bootstrap of T holds ~63% of T's subjects: the DCR attack ranks those members first
    assert r["mia_dcr_auc"] > 0.7
    assert r["legal_pass_all_holdout"] is False


@pytest.mark.parametrize("name", DATASETS)
def test_swapped_sequences_are_caught_by_the_attack_panel(cells, name):
    r = _privacy(cells, name, SwapSequences())
    assert r["mia_auc_max"] > 0.7


@pytest.mark.parametrize("name", DATASETS)
def test_new_sequences_are_not_flagged_like_copies(cells, name):
    r = _privacy(cells, name, ARCart())
    assert r["ims_synthetic"] < 0.05
    assert r["mia_auc_max"] < 0.7


def test_holdout_row_scores_h_against_t(cells):
    r = _privacy(cells, "nlswork", SequentialHoldout(), holdout_row=True)
    assert r["ims_synthetic"] == pytest.approx(r["ims_holdout"])
