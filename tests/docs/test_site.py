"""The docs site builds with `mkdocs build --strict` (a broken link or anchor, a page missing from the nav
or a nav entry without its page fails), and the reference pages generated at build time
(docs/gen/reference.py) say what the code and the shipped configs say."""

from __future__ import annotations

import html
import importlib.util
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
BUILD_SECONDS = 60  # measured about 5 s on the 2-core development machine; this only catches a runaway build


def _reference_module():
    spec = importlib.util.spec_from_file_location("holdbench_docs_reference", REPO / "docs" / "gen" / "reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    env = {k: v for k, v in os.environ.items() if k not in ("HOLDBENCH_CONF_DIR", "HOLDBENCH_CONFIG_PATH")}
    env.update(DISABLE_MKDOCS_2_WARNING="true", NO_MKDOCS_2_WARNING="1")
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    seconds = time.monotonic() - start
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stderr[-6000:]}"
    assert seconds < BUILD_SECONDS, f"the site took {seconds:.0f} s to build"
    return out


def page(site: Path, name: str) -> str:
    path = site / name / "index.html"
    assert path.is_file(), f"{name} is not in the built site"
    return html.unescape(path.read_text())


def codes(text: str) -> set[str]:
    return set(re.findall(r"<code>([^<]*)</code>", text))


def test_metrics_page_names_every_registry_key_with_its_definition(site):
    from holdbench.benchmark.config import group_config, metric_specs

    text = page(site, "reference/metrics")
    shown = codes(text)
    for config in ("default", "sequential"):
        keys = [s.name for s in metric_specs(group_config("metrics", config))]
        assert len(keys) > 20, (config, keys)
        missing = [k for k in keys if k not in shown]
        assert not missing, f"reference/metrics does not name {missing} (conf/metrics/{config}.yaml)"
    assert text.count("Checked against") >= 12
    assert 'href="../../definitions/paper/#3-fidelity-f1-f2-f3"' in text


def test_cli_page_has_every_subcommand_and_option(site):
    import argparse

    from holdbench.benchmark.cli import build_parser

    text = page(site, "reference/cli")
    shown = codes(text)
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert len(sub.choices) >= 8
    for name, parser in sub.choices.items():
        assert f"holdbench {name}</h2>" in text or f">holdbench {name}<" in text, name
        for action in parser._actions:
            for option in action.option_strings:
                assert option in shown, f"reference/cli: holdbench {name} {option} is missing"
    assert "--version" in shown


def test_synthesizers_page_has_every_config_and_variant(site):
    from holdbench.benchmark.config import variant_index

    text = page(site, "reference/synthesizers")
    shown = codes(text)
    configs = sorted(p.stem for p in (REPO / "conf" / "synthesizer").glob("*.yaml"))
    assert len(configs) > 20
    missing = [n for n in configs + sorted(variant_index("synthesizer")) if n not in shown]
    assert not missing, f"reference/synthesizers does not name {missing}"
    assert "holdbench.synthesizers.flip.Flip" in shown


def test_configuration_page_has_every_schema_key(site):
    text = page(site, "reference/configuration")
    shown = codes(text)
    reference = _reference_module()
    for group, path in reference.SCHEMAS.items():
        schema = yaml.safe_load(path.read_text())
        missing = [k for k in schema.get("properties", {}) if k not in shown]
        assert not missing, f"reference/configuration does not name {group} keys {missing}"
    assert "columns.&lt;name&gt;.kind" in html.escape(text) or "columns.<name>.kind" in shown


def test_changelog_page_includes_the_root_changelog(site):
    text = page(site, "changelog")
    headings = re.findall(r"^##+\s+(.+?)\s*$", (REPO / "CHANGELOG.md").read_text(), re.MULTILINE)
    assert headings, "CHANGELOG.md has no section headings"
    for h in headings[:3]:
        plain = re.sub(r"[\[\]`*]|\(.*?\)", "", h).strip()
        assert plain in re.sub(r"<[^>]+>", "", text), f"the changelog page lacks CHANGELOG.md's section {h!r}"


def test_generator_refuses_a_definition_without_its_heading():
    reference = _reference_module()
    assert reference._section_title("definitions/paper.md#3-fidelity-f1-f2-f3") == "3. Fidelity F1, F2, F3"
    with pytest.raises(ValueError, match="no heading with the anchor #no-such-section"):
        reference._section_title("definitions/paper.md#no-such-section")
    with pytest.raises(ValueError, match="does not exist"):
        reference._section_title("definitions/no-such-page.md#x")


def test_table_cells_are_escaped():
    reference = _reference_module()
    assert reference.text("a | b <c> *d*") == "a \\| b &lt;c&gt; \\*d\\*"
    assert reference.text("see `x|<y>` here") == "see `x|<y>` here"
