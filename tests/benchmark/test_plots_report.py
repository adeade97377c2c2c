"""Plots are valid PNGs where they belong; the report is self-contained and escapes user data."""

from __future__ import annotations

import html
import re

import pytest

from benchmark.leaderboard import aggregate, collect_cells
from benchmark.plots import make_plots, plot_fidelity
from benchmark.report import write_report

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _is_png(path) -> bool:
    data = path.read_bytes()
    return len(data) > 1000 and data.startswith(PNG_SIGNATURE)


@pytest.fixture(scope="module")
def plotted(study):
    return study, make_plots(study.path)


def test_study_plots_exist_and_are_png(plotted):
    study, written = plotted
    plot_dir = study.path / "plots"
    expected = ["fidelity.png", "privacy.png", "tradeoff.png",
                "drilldown_alpha_job.png", "drilldown_alpha_hours.png",  # study.json drilldown
                "drilldown_beta_age.png", "drilldown_beta_job.png"]      # fallback: T's first two columns
    for name in expected:
        assert _is_png(plot_dir / name), name
        assert plot_dir / name in written
    assert sorted(p.name for p in plot_dir.iterdir()) == sorted(expected)


def test_cell_marginal_plots_only_in_ok_cells(plotted):
    study, written = plotted
    for key in study.keys:
        png = study.cell_dir(*key) / "marginals.png"
        if study.is_ok(key):
            assert _is_png(png) and png in written, key
        else:
            assert not png.exists(), key


def test_plots_are_deterministic(study, tmp_path):
    cells = collect_cells(study.path)
    summary = aggregate(cells)
    a = plot_fidelity(cells, summary, tmp_path / "a.png").read_bytes()
    b = plot_fidelity(cells, summary, tmp_path / "b.png").read_bytes()
    assert a == b


def test_report_embeds_tables_and_images(plotted):
    study, _ = plotted
    page = write_report(study.path).read_text()
    assert page.startswith("<!doctype html>")
    assert page.count('<img src="data:image/png;base64,') >= 7
    rows = re.findall(r"<tr class=\"(\w*)\">", page)
    n_failed = sum(not study.is_ok(k) for k in study.keys)
    assert rows.count("fail") >= n_failed
    assert html.escape(study.error_reason) in page and "<b>bold</b>" not in page
    assert html.escape(study.skipped_reason) in page
    assert "0.5 is ideal" in page and "1 is ideal" in page
    assert "<script" not in page.lower() and 'src="http' not in page


def test_report_escapes_hostile_names(study_factory):
    evil = "<script>alert(1)"
    s = study_factory(name="evil", synthesizers=["holdout", evil, "ctgan"],
                      error_reason="boom </script><script>alert(2)</script>")
    page = write_report(s.path).read_text()
    assert "<script" not in page.lower()
    assert html.escape(evil) in page
    assert "&lt;/script&gt;&lt;script&gt;alert(2)" in page
    assert (s.path / "plots" / "fidelity.png").exists()  # the report drew the missing plots
