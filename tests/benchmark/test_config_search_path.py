"""The config search path (HOLDBENCH_CONFIG_PATH, --config-dir): a user's configs outside the checkout
join the shipped groups; a name defined twice is refused naming both files; the recorded source."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from holdbench.benchmark.config import (
    CONFIG_PATH_ENV,
    ConfigError,
    available,
    config_source,
    group_config,
    synthesizer_config,
    user_config_dirs,
)
from holdbench.benchmark.workflow.study import load_study

from tests.conftest import REPO

FLIP = "_target_: holdbench.synthesizers.flip.Flip\np: 0.25\n"
STUDY = ("datasets: [mine]\nsynthesizers: [myflip, flip10]\nseeds: [0]\nn_synthetic: 100\nmetrics: mymetrics\n")
DATASET = "source: file\npath: table.csv\ntarget: y\n"


@pytest.fixture()
def user(tmp_path, monkeypatch):
    """A directory laid out like conf/, outside the checkout, on the search path."""
    root = tmp_path / "my-configs"
    for group in ("dataset", "synthesizer", "metrics", "study"):
        (root / group).mkdir(parents=True)
    (root / "synthesizer" / "myflip.yaml").write_text(FLIP)
    (root / "metrics" / "mymetrics.yaml").write_text("defaults:\n  - demo\n  - _self_\nn_jobs: 1\n")
    (root / "study" / "mystudy.yaml").write_text(STUDY)
    (root / "dataset" / "mine.yaml").write_text(DATASET)
    rows = "\n".join(f"{i % 7},{'ab'[i % 2]},{i % 3}" for i in range(40))
    (root / "dataset" / "table.csv").write_text("x,c,y\n" + rows + "\n")
    monkeypatch.setenv(CONFIG_PATH_ENV, str(root))
    monkeypatch.setenv("HOLDBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("HOLDBENCH_CONF_DIR", raising=False)
    return root


def test_user_configs_join_the_shipped_groups(user):
    assert {"myflip", "flip10", "ctgan"} <= set(available("synthesizer"))
    assert {"mine", "adult", "demo"} <= set(available("dataset"))
    assert {"mystudy", "paper"} <= set(available("study"))
    assert synthesizer_config("myflip") == {"_target_": "holdbench.synthesizers.flip.Flip", "p": 0.25}
    # a user's config extends a shipped one through Hydra's defaults list
    assert group_config("metrics", "mymetrics")["families"] == group_config("metrics", "demo")["families"]
    assert group_config("metrics", "mymetrics")["n_jobs"] == 1


def test_a_study_outside_the_checkout_records_where_each_config_came_from(user):
    study = load_study("mystudy")
    assert study.synthesizers == ("myflip", "flip10")
    files = study.summary()["config_files"]
    assert files == {
        "study": str(user / "study" / "mystudy.yaml"),
        "metrics": str(user / "metrics" / "mymetrics.yaml"),
        "datasets": {"mine": str(user / "dataset" / "mine.yaml")},
        "synthesizers": {"myflip": str(user / "synthesizer" / "myflip.yaml"),
                         "flip10": "conf/synthesizer/flip.yaml"},  # a variant: the file declaring it
    }


def test_a_relative_data_path_of_a_user_dataset_is_read_beside_its_yaml(user):
    from holdbench.benchmark.data.tables import load_dataset

    df = load_dataset("mine")
    assert list(df.columns) == ["x", "c", "y"] and len(df) == 40


def test_a_name_defined_twice_is_refused_naming_both_files(user):
    (user / "synthesizer" / "cart.yaml").write_text("_target_: holdbench.synthesizers.cart.CART\ncp: 0.1\n")
    with pytest.raises(ConfigError) as err:
        available("synthesizer")
    assert str(REPO / "conf" / "synthesizer" / "cart.yaml") in str(err.value)
    assert str(user / "synthesizer" / "cart.yaml") in str(err.value)


def test_a_variant_named_like_a_user_file_is_refused(user):
    (user / "synthesizer" / "flip10.yaml").write_text(FLIP)
    with pytest.raises(ConfigError, match=r"variant 'flip10' is declared twice.*flip10\.yaml"):
        available("synthesizer")


def test_two_user_directories_defining_one_name_are_refused(user, tmp_path, monkeypatch):
    other = tmp_path / "other"
    (other / "synthesizer").mkdir(parents=True)
    (other / "synthesizer" / "myflip.yaml").write_text(FLIP)
    monkeypatch.setenv(CONFIG_PATH_ENV, os.pathsep.join([str(user), str(other)]))
    with pytest.raises(ConfigError, match="'myflip' is defined twice") as err:
        synthesizer_config("myflip")
    assert str(other / "synthesizer" / "myflip.yaml") in str(err.value)


def test_a_search_path_entry_must_be_a_directory_laid_out_like_conf(user, tmp_path, monkeypatch):
    monkeypatch.setenv(CONFIG_PATH_ENV, str(user / "synthesizer"))
    with pytest.raises(ConfigError, match=r"none of the group folders.*give its parent"):
        user_config_dirs()
    monkeypatch.setenv(CONFIG_PATH_ENV, str(tmp_path / "missing"))
    with pytest.raises(ConfigError, match="is not a directory"):
        available("dataset")


def test_an_unknown_name_says_where_it_was_looked_for(user):
    with pytest.raises(ConfigError) as err:
        synthesizer_config("nosuch")
    assert str(user / "synthesizer") in str(err.value) and str(REPO / "conf" / "synthesizer") in str(err.value)


def test_a_variant_read_as_a_file_names_its_file_and_the_way_to_resolve_it():
    """group_config('synthesizer', 'aim_eps10') once said "unknown synthesizer 'aim_eps10' (did you mean
    'aim_eps10'...)": a variant has no file; the error names the file declaring it and synthesizer_config."""
    with pytest.raises(ConfigError) as err:
        group_config("synthesizer", "aim_eps10")
    msg = str(err.value)
    assert "variant declared under `variants:` in aim.yaml" in msg and "synthesizer_config('aim_eps10')" in msg
    assert "did you mean" not in msg
    assert synthesizer_config("aim_eps10")["epsilon"] == 10.0


def test_shipped_sources_are_relative_to_the_repository(monkeypatch):
    monkeypatch.delenv(CONFIG_PATH_ENV, raising=False)
    monkeypatch.delenv("HOLDBENCH_CONF_DIR", raising=False)
    assert config_source("synthesizer", "ctgan") == "conf/synthesizer/ctgan.yaml"
    assert config_source("dataset", "demo") == "conf/dataset/demo.yaml"


def test_the_command_line_option_adds_a_directory(user, monkeypatch):
    """`holdbench datasets --config-dir DIR` lists the directory's configs with the shipped ones."""
    monkeypatch.delenv(CONFIG_PATH_ENV)
    env = {k: v for k, v in os.environ.items() if k != CONFIG_PATH_ENV}
    out = subprocess.run([sys.executable, "-m", "holdbench", "datasets", "--config-dir", str(user)],
                         capture_output=True, text=True, env=env, check=True).stdout
    lines = dict(line.split(": ", 1) for line in out.splitlines())
    assert "mine" in lines["dataset"].split(", ") and "myflip" in lines["synthesizer"].split(", ")
    plain = subprocess.run([sys.executable, "-m", "holdbench", "datasets"], capture_output=True, text=True,
                           env=env, check=True).stdout
    assert "myflip" not in plain
    bad = subprocess.run([sys.executable, "-m", "holdbench", "validate", "demo", "--config-dir",
                          str(user / "dataset")], capture_output=True, text=True, env=env, check=False)
    assert bad.returncode == 2 and "lay it out like conf/" in bad.stderr


def test_holdbench_run_passes_the_search_path_to_the_workflow(user, monkeypatch):
    from holdbench.benchmark.cli import parse_args, use_config_dirs
    from holdbench.benchmark.cli.study import snakemake_command

    monkeypatch.delenv(CONFIG_PATH_ENV)
    args = parse_args(["run", "mystudy", "--config-dir", str(user)])
    use_config_dirs(args.config_dir)
    cmd = snakemake_command(args)
    assert f"config_path={user}" in cmd[cmd.index("--config"):]


def test_status_json_records_the_config_files(tmp_path):
    from holdbench.benchmark.layout import StudyLayout
    from holdbench.benchmark.workflow.runner import _config_files

    lay = StudyLayout(tmp_path)
    lay.study_json.parent.mkdir(parents=True, exist_ok=True)
    lay.study_json.write_text(json.dumps({"config_files": {
        "metrics": "conf/metrics/demo.yaml", "datasets": {"demo": "conf/dataset/demo.yaml"},
        "synthesizers": {"mine": "/home/u/hb/synthesizer/mine.yaml"}}}))
    assert _config_files(lay, "demo", "mine") == {"dataset": "conf/dataset/demo.yaml",
                                                  "synthesizer": "/home/u/hb/synthesizer/mine.yaml",
                                                  "metrics": "conf/metrics/demo.yaml"}
