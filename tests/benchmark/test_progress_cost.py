"""A synthesizer's `cost:` (issue 24, cheap cells first): a scheduling hint read from its YAML, never a
constructor argument, checked like every other key."""

from __future__ import annotations

import pytest
import yaml

from holdbench.benchmark.config import DEFAULT_COST, ConfigError, synthesizer_config, synthesizer_cost
from holdbench.benchmark.workflow.prepare import GENERATE_PRIORITY
from tests.workflow.helpers import REPO, make_conf


def test_every_cost_level_has_a_priority_cheaper_first():
    schema = yaml.safe_load((REPO / "benchmark/schemas/synthesizer.schema.yaml").read_text())
    levels = schema["properties"]["cost"]["enum"]
    assert set(levels) == set(GENERATE_PRIORITY) and DEFAULT_COST in levels
    assert GENERATE_PRIORITY["cheap"] > GENERATE_PRIORITY["moderate"] > GENERATE_PRIORITY["expensive"]


@pytest.mark.parametrize("name, cost", [("flip10", "cheap"), ("holdout", "cheap"), ("cart", "cheap"),
                                        ("published_ctgan", "cheap"), ("ctgan", "expensive"),
                                        ("bq_cart", "expensive"), ("synthpop", "moderate")])
def test_cost_of_shipped_synthesizers_and_variants(name, cost):
    assert synthesizer_cost(name) == cost


def test_cost_is_not_a_constructor_argument_and_defaults_to_moderate(tmp_path, monkeypatch):
    conf = make_conf(tmp_path, synths={
        "plain": "_target_: holdbench.synthesizers.flip.Flip\np: 0.2\n",
        "bad_cost": "_target_: holdbench.synthesizers.flip.Flip\ncost: hours\np: 0.2\n"})
    monkeypatch.setenv("HOLDBENCH_CONF_DIR", str(conf))
    assert synthesizer_cost("plain") == DEFAULT_COST == "moderate"
    assert "cost" not in synthesizer_config("flip10")  # flip.yaml says cost: cheap; Flip() takes no cost
    with pytest.raises(ConfigError, match=r"bad_cost\.yaml: `cost`"):
        synthesizer_config("bad_cost")
