"""The `sequential` study composes and validates; a study is flat or sequential, never a mix, and each
mix is refused before any job with the offending name; the subject-level families are registry
entries like the flat ones."""

from __future__ import annotations

import dataclasses

import pytest

from holdbench.benchmark.cli import main
from holdbench.benchmark.config import ConfigError
from holdbench.benchmark.workflow.study import load_study
from holdbench.metrics.registry import specs_of
from tests.workflow.helpers import make_conf

SEQ_SYNTHS = {"seq_holdout", "seq_copy", "seq_indep_events", "seq_swap_sequences", "seq_ar_cart", "seq_par",
              "seq_mostly", *(f"seq_flip{p}" for p in range(10, 100, 10))}


def test_the_sequential_study_has_both_datasets_and_every_sequential_synthesizer():
    study = load_study("sequential")
    assert study.sequential and study.datasets == ("baseball", "nlswork", "nlswork_events") and study.seeds == (0,)
    assert set(study.synthesizers) == SEQ_SYNTHS
    assert len(study.cells()) == 3 * len(SEQ_SYNTHS)
    assert set(study.metrics["families"]) == {"sequential", "subject_panel", "subject_legal", "subject_attacks"}
    assert study.summary()["kind"] == "sequential"
    assert load_study("demo").summary()["kind"] == "flat"


def test_a_synthesizer_is_told_the_event_order():
    from holdbench.benchmark.data.sequential import sequential_spec, synthesizer_context

    for name, order in (("baseball", ("yearID", "stint")), ("nlswork", ("year",))):
        ctx = synthesizer_context(sequential_spec(name), 3)
        assert ctx.order == order and ctx.key == sequential_spec(name).key and ctx.seed == 3


def test_validate_lists_the_cells(capsys):
    assert main(["validate", "sequential"]) == 0
    out = capsys.readouterr().out
    assert "48 cells, sequential (subject + event) data, S with as many subjects as T" in out
    assert "sequential/nlswork_events/seed0/seq_ar_cart" in out
    assert "sequential/baseball/seed0/seq_ar_cart" in out and "sequential/nlswork/seed0/seq_flip90" in out


@pytest.mark.parametrize(("body", "message"), [
    ("datasets: [baseball, demo]\nsynthesizers: [seq_copy]\n",
     r"datasets \['baseball'\] are sequential \(subject \+ event\) and \['demo'\] are flat"),
    ("datasets: [baseball]\nsynthesizers: [seq_copy, cart]\n", r"synthesizer\(s\) \['cart'\] are flat"),
    ("datasets: [demo]\nsynthesizers: [cart, seq_copy]\nn_synthetic: 100\n",
     r"synthesizer\(s\) \['seq_copy'\] are sequential but the study's datasets are flat"),
    ("datasets: [baseball]\nsynthesizers: [seq_copy]\nmetrics: default\n",
     r"famil\(ies\) \['fidelity', 'privacy', .*\] are flat .*use `metrics: sequential`"),
    ("datasets: [demo]\nsynthesizers: [cart]\nn_synthetic: 100\nmetrics: sequential\n",
     r"famil\(ies\) \['sequential', .*\] are sequential"),
    ("datasets: [baseball]\nsynthesizers: [seq_copy]\nn_synthetic: 100\n", "remove `n_synthetic`"),
    ("datasets: [baseball]\nsynthesizers: [seq_copy]\nevaluate_shards: 2\n", "not shardable"),
    ("datasets: [demo]\nsynthesizers: [cart]\n", "`n_synthetic` must be a positive integer"),
])
def test_a_study_is_flat_or_sequential(tmp_path, monkeypatch, body, message):
    conf = make_conf(tmp_path, studies={"mixed": f"name: mixed\n{body}"})
    monkeypatch.setenv("HOLDBENCH_CONF_DIR", str(conf))
    with pytest.raises(ConfigError, match=message):
        load_study("mixed")


def test_subject_families_are_the_flat_metrics_renamed_once():
    from holdbench.metrics.attacks import MembershipInference
    from holdbench.metrics.panel import PrivacyPanel
    from holdbench.metrics.subject_privacy import SubjectAttacks, SubjectPanel

    for ours, flat in ((SubjectPanel, PrivacyPanel), (SubjectAttacks, MembershipInference)):
        assert ours.name == f"subject_{flat.name}"
        mine, theirs = specs_of(ours.result_type), specs_of(flat.result_type)
        assert [s.name for s in mine] == [f"subject_{s.name}" for s in theirs]
        assert [s.label for s in mine] == [f"Subject {s.label}" for s in theirs]
        assert [(s.direction, s.ideal, s.group, s.headline) for s in mine] == \
            [(s.direction, s.ideal, s.group, s.headline) for s in theirs]
        # a timing stays a timing (seconds_*): the harness keeps it out of metrics.json
        names = [f.name for f in dataclasses.fields(ours.result_type)]
        assert all(n.startswith(("subject_", "seconds_subject_")) for n in names)
    from holdbench.metrics.privacy import PrivacyResult
    from holdbench.metrics.registry import renamed_result_type

    share = specs_of(renamed_result_type(PrivacyResult, "x_", "X", "on x"))[0]
    assert (share.name, share.interval) == ("x_dcr_share", ("x_dcr_share_ci_low", "x_dcr_share_ci_high"))
    assert share.meaning.endswith("; on x")


def test_subject_family_options_are_the_flat_familys():
    from holdbench.metrics.subject_privacy import SubjectAttacks

    assert SubjectAttacks(n_bootstrap=10).family.n_bootstrap == 10
    with pytest.raises(TypeError, match="unexpected keyword argument 'n_bootstrp'"):
        SubjectAttacks(n_bootstrp=10)
