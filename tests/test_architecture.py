"""The shape of the code: imports run one way, and every config composes and instantiates.

- contracts/ (the ground floor) imports nothing of holdbench;
- synthesizers/ and metrics/ never import benchmark/ (the harness uses them, never the reverse);
- every synthesizer config (and variant) and every metrics family resolves, passes its schema
  and builds; every registry metric has a unique name and says which way is better.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from benchmark.config import (
    available,
    build_metric_families,
    build_synthesizer,
    check_metrics_config,
    load_group,
    metric_specs,
    synthesizer_config,
    to_container,
)

REPO = Path(__file__).resolve().parents[1]
FORBIDDEN = {"contracts": {"benchmark", "synthesizers", "metrics"},
             "synthesizers": {"benchmark"}, "metrics": {"benchmark", "synthesizers"}}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module.split(".")[0])
    return out


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_imports_run_one_way(package):
    bad = {str(p.relative_to(REPO)): sorted(_imports(p) & FORBIDDEN[package])
           for p in sorted((REPO / package).rglob("*.py"))}
    assert not {k: v for k, v in bad.items() if v}


def test_the_import_check_can_fail(tmp_path):
    f = tmp_path / "x.py"
    f.write_text("import os\nfrom benchmark.layout import StudyLayout\n")
    assert "benchmark" in _imports(f)


@pytest.mark.parametrize("name", available("synthesizer"))
def test_every_synthesizer_config_composes_and_builds(name):
    cfg = synthesizer_config(name)
    synth = build_synthesizer(cfg)
    assert type(synth).__name__ == cfg["_target_"].rsplit(".", 1)[1]


@pytest.mark.parametrize("name", available("metrics"))
def test_every_metrics_config_composes_and_builds(name):
    cfg = to_container(load_group("metrics", name))
    check_metrics_config(name, cfg)
    families = build_metric_families(cfg)
    assert [f.name for f in families] == [k for k, v in cfg["families"].items() if v is not None]


def test_registry_names_are_unique_and_explained():
    cfg = to_container(load_group("metrics", "default"))
    specs = metric_specs(cfg)
    names = [s.name for s in specs]
    assert len(names) == len(set(names)), sorted({n for n in names if names.count(n) > 1})
    for s in specs:
        assert s.label and s.meaning and s.better, s
    headline = {s.name for s in specs if s.headline}
    assert {"dcr_share", "F1_ratio", "F2_ratio", "F3_ratio"} <= headline
