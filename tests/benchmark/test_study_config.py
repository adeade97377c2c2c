"""Every config composes and instantiates; bad study configs are rejected naming the key."""

from __future__ import annotations

import json
import subprocess

import pytest

from holdbench.benchmark.config import ConfigError, available, build_synthesizer, load_group, synthesizer_config
from holdbench.benchmark.data.tables import dataset_config, dataset_schema
from holdbench.benchmark.workflow.study import load_study
from holdbench.synthesizers.base import Synthesizer
from holdbench.synthesizers.sequential import SequentialSynthesizer
from tests.workflow.helpers import env_for, make_conf, snakemake_cmd


@pytest.mark.parametrize("name", available("synthesizer"))
def test_every_synthesizer_config_instantiates_with_and_without_smoke(name):
    for preset in (None, "smoke"):
        synth = build_synthesizer(synthesizer_config(name, preset))
        assert isinstance(synth, Synthesizer | SequentialSynthesizer)


@pytest.mark.parametrize("name", available("dataset"))
def test_every_dataset_config_composes(name):
    cfg = dataset_config(name)
    assert cfg["name"] == name and cfg["source"] in ("uci", "demo", "file", "sequential")
    if cfg["source"] == "sequential":  # the flat loader refuses it by name, before reading anything
        with pytest.raises(ConfigError, match=f"{name!r} is a sequential"):
            dataset_schema(name)


@pytest.mark.parametrize("name", available("study"))
def test_every_study_expands_into_cells(name):
    study = load_study(name)
    assert len(study.cells()) == len(study.datasets) * len(study.synthesizers) * len(study.seeds)
    assert len({c.cell_id for c in study.cells()}) == len(study.cells())


def test_paper_study_has_the_full_lineup():
    study = load_study("paper")
    assert study.datasets == ("adult", "bank-marketing", "credit-default", "online-shoppers")
    for s in ("gaussian_copula", "ctgan", "tvae", "copulagan", "synthpop", "cart", "mostly_ai", "holdout",
              *(f"flip{p}" for p in range(10, 100, 10))):
        assert s in study.synthesizers
    assert study.n_synthetic == 50000 and study.seeds == (0,)


def test_cli_overrides_reach_the_constructor():
    cfg = synthesizer_config("flip10", None, ["p=0.25"])
    assert build_synthesizer(cfg).p == 0.25


BAD = {
    "unknown dataset": ("datasets: [adult, no_such_data]", "no_such_data"),
    "unknown synthesizer": ("synthesizers: [flip10, no_such_synth]", "no_such_synth"),
    "misspelt parameter": ("params: {flip10: {pp: 0.1}}", "pp"),
    "negative record count": ("n_synthetic: -5", "n_synthetic"),
    "flip probability": ("params: {flip10: {p: 1.5}}", "`p`"),
    "names nothing": ("synthesizers: []", "synthesizers"),
    "path traversal": ("datasets: [../../etc]", "../../etc"),
    "unknown key": ("synthesiser: [flip10]", "synthesiser"),
    # a misspelt name is answered with the closest known one, and nothing when none is close
    "misspelt synthesizer": ("synthesizers: [flip10, cartt]",
                             "unknown synthesizer 'cartt' in `synthesizers` (did you mean 'cart'?)"),
    "misspelt dataset": ("datasets: [adlt]", "unknown dataset 'adlt' in `datasets` (did you mean 'adult'?)"),
    "misspelt key": ("timeout_secs: 60", "unknown key(s) ['timeout_secs'] (did you mean 'timeout_seconds'?)"),
    "nothing close": ("synthesizers: [zzzz]", "unknown synthesizer 'zzzz' in `synthesizers` (known: "),
}


def _study_yaml(line: str) -> str:
    base = {"datasets": "datasets: [demo]", "synthesizers": "synthesizers: [flip10]", "n_synthetic": "n_synthetic: 100"}
    key = line.split(":")[0]
    lines = ["name: bad", "seeds: [0]"] + [v for k, v in base.items() if k != key] + [line]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("case", list(BAD))
def test_bad_study_rejected_naming_the_key(tmp_path, monkeypatch, case):
    line, named = BAD[case]
    conf = make_conf(tmp_path, {"bad": _study_yaml(line)})
    monkeypatch.setenv("HOLDBENCH_CONF_DIR", str(conf))
    with pytest.raises(ConfigError) as err:
        load_study("bad")
    assert named in str(err.value)


def test_a_provided_split_whose_holdout_is_its_training_table_is_refused(tmp_path, monkeypatch):
    """The same file twice, or a copy of it: every ratio against H would be undefined and every privacy test
    against H would pass. A different table of the same columns is accepted."""
    import pandas as pd

    from holdbench.benchmark.data.split import provided_split

    rows = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "c": ["a", "b", "a", "b"]})
    rows.to_csv(tmp_path / "demo_trn.csv", index=False)
    (tmp_path / "demo_copy.csv").write_bytes((tmp_path / "demo_trn.csv").read_bytes())
    rows.iloc[::-1].to_csv(tmp_path / "demo_val.csv", index=False)
    for holdout, refused in (("{dataset}_trn.csv", True), ("{dataset}_copy.csv", True), ("{dataset}_val.csv", False)):
        line = (f"split_files: {{train: '{tmp_path}/{{dataset}}_trn.csv', holdout: '{tmp_path}/{holdout}'}}\n"
                "split: provided")
        conf = make_conf(tmp_path, {"bad": _study_yaml(line)})
        monkeypatch.setenv("HOLDBENCH_CONF_DIR", str(conf))
        if not refused:
            assert load_study("bad").split == "provided"
            continue
        said = (rf"study 'bad': dataset 'demo': split_files.holdout {tmp_path}/demo_(trn|copy)\.csv is the same table "
                r"as split_files.train .*demo_trn\.csv; H must hold real records the generator never saw")
        with pytest.raises(ConfigError, match=said):
            load_study("bad")
    with pytest.raises(ValueError, match=r"dataset 'demo': its holdout file .*demo_copy\.csv is the same table"):
        provided_split(dataset_schema("demo"), tmp_path / "demo_trn.csv", tmp_path / "demo_copy.csv")


def test_a_refusal_caused_by_an_override_says_which_overrides_were_applied():
    with pytest.raises(ConfigError, match=r"demo\.yaml: `n_synthetic`: -5 is less than the minimum of 1 "
                                          r"\(the study as overridden by synthesizers=\[cart\], n_synthetic=-5\)$"):
        load_study("demo", ["synthesizers=[cart]", "n_synthetic=-5"])


def test_a_misspelt_study_name_is_answered_with_the_closest_study():
    with pytest.raises(ConfigError, match=r"unknown study 'papr' \(did you mean 'paper'\?\)"):
        load_group("study", "papr")


def test_bad_study_stops_snakemake_before_any_job(tmp_path):
    conf = make_conf(tmp_path, {"bad": _study_yaml("params: {flip10: {p: -0.1}}")})
    proc = subprocess.run(snakemake_cmd("bad"), cwd=tmp_path, env=env_for(tmp_path, conf),
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode != 0
    assert "`p` must be a probability" in proc.stdout + proc.stderr
    assert not (tmp_path / "results" / "bad" / "demo").exists()


def test_study_overrides_split_at_top_level_commas_and_may_add_keys():
    from holdbench.benchmark.config import split_overrides

    assert split_overrides("synthesizers=[a,b],n_synthetic=5,params={f: {p: 0.5, q: 1}}") == [
        "synthesizers=[a,b]", "n_synthetic=5", "params={f: {p: 0.5, q: 1}}"]
    study = load_study("demo", ["synthesizers=[flip10,mst_eps1]", "params={mst_eps1: {bins: 12}}"])
    assert study.synthesizers == ("flip10", "mst_eps1") and study.synth_configs["mst_eps1"]["bins"] == 12
    with pytest.raises(ConfigError, match="synthesiser"):
        load_study("demo", ["synthesiser=[flip10]"])


@pytest.mark.parametrize("group", ["metrics", "study", "dataset", "synthesizer", "gates"])
def test_direct_yaml_reading_equals_hydra(group):
    """The light reader (no Hydra, for cold starts) gives exactly what Hydra composes, for every file."""
    from holdbench.benchmark.config import _plain_config, config_files, group_config, load_group, to_container

    names = config_files(group)
    assert names
    if group == "metrics":  # the cold-start path: every metrics config is read without Hydra
        assert [n for n in names if _plain_config(group, n, ()) is None] == []
    for name in names:
        assert json.dumps(group_config(group, name)) == json.dumps(to_container(load_group(group, name))), name


@pytest.mark.parametrize("name", available("study"))
def test_every_study_computes_what_its_default_gates_judge(name):
    """A gate whose metric a study's families do not compute is n/a on every cell, so a shipped study whose
    metrics config left out a family its default gates read would never be judged on it: every shipped
    study's metrics config computes every metric its default gates name."""
    from holdbench.benchmark.config import metric_specs
    from holdbench.benchmark.outputs.gates import check_metrics, default_gates, load_gates, metric_names

    summary = load_study(name).summary()
    gates, specs = load_gates(default_gates(summary)), metric_specs(summary["metrics"])
    check_metrics(gates, specs)
    computed = metric_names(specs)
    assert [t.metric for t in gates.targets if t.metric and t.metric not in computed] == []
