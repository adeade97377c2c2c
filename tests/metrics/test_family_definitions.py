"""Every metric family of the default and sequential metrics configs names the docs page (and section)
that defines it and the independent reference it is checked against (MetricFamily.definition and
.reference, printed by the generated metrics reference, docs/gen/reference.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from markdown.extensions.toc import slugify

from holdbench.benchmark.config import metric_family_classes

REPO = Path(__file__).resolve().parents[2]
CONFIGS = ("default", "sequential")


def families():
    out = {}
    for name in CONFIGS:
        cfg = yaml.safe_load((REPO / "conf" / "metrics" / f"{name}.yaml").read_text())
        out.update(metric_family_classes(cfg))
    return out


FAMILIES = families()


def test_both_configs_have_families():
    assert {"fidelity", "privacy", "sequential"} <= set(FAMILIES), sorted(FAMILIES)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_family_names_its_definition_and_reference(name):
    cls = FAMILIES[name]
    for attr in ("definition", "reference"):
        value = getattr(cls, attr, None)
        assert isinstance(value, str) and value.strip(), f"{cls.__qualname__}.{attr} is missing or empty"
    assert len(cls.reference.split()) >= 8, f"{cls.__qualname__}.reference says too little: {cls.reference!r}"
    assert re.search(r"tests/\S+\.py", cls.reference), f"{cls.__qualname__}.reference names no test"
    for path in re.findall(r"(?:tests|scripts)/[\w/]+\.py", cls.reference):
        assert (REPO / path).is_file(), f"{cls.__qualname__}.reference names {path}, which does not exist"


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_definition_page_and_section_exist(name):
    cls = FAMILIES[name]
    page, _, anchor = cls.definition.partition("#")
    path = REPO / "docs" / page
    assert path.is_file(), f"{cls.__qualname__}.definition names docs/{page}, which does not exist"
    if anchor:  # the slugs mkdocs gives the page's headings (Python-Markdown's toc extension)
        text = re.sub(r"^```.*?^```", "", path.read_text(), flags=re.MULTILINE | re.DOTALL)
        slugs = {slugify(h.strip(), "-") for h in re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, re.MULTILINE)}
        assert anchor in slugs, f"docs/{page} has no heading whose anchor is #{anchor} (its anchors: {sorted(slugs)})"
