"""Incremental collect (issue 24): a figure is drawn again only when an input it reads changed, and
collect writes its marker last, the report replaced atomically."""

from __future__ import annotations

import base64
import json

import pandas as pd

from holdbench.benchmark.layout import StudyLayout
from holdbench.benchmark.outputs.plots import make_plots
from holdbench.benchmark.outputs.results import load_results
from holdbench.benchmark.workflow.runner import do_collect


def _mtimes(paths) -> dict:
    return {p: p.stat().st_mtime_ns for p in paths}


def test_collect_redraws_only_the_figures_whose_inputs_changed(study_factory):
    s = study_factory(name="incr")
    first: dict = {}
    paths = make_plots(load_results(s.path), stats=first)
    assert first == {"drawn": len(paths), "kept": 0} and len(paths) > 20
    before = _mtimes(paths)

    again: dict = {}
    assert make_plots(load_results(s.path), stats=again) == paths
    assert again == {"drawn": 0, "kept": len(paths)}
    assert _mtimes(paths) == before

    # a cell recomputed to the same results in another time: nothing to draw
    d, syn, k = next(key for key in s.keys if s.is_ok(key))
    status_file = s.cell_dir(d, syn, k) / "status.json"
    status = json.loads(status_file.read_text())
    status.update(wall_seconds=4321.0, fit_seconds=4000.0, overhead_seconds=3.0)
    status_file.write_text(json.dumps(status))
    timing: dict = {}
    make_plots(load_results(s.path), stats=timing)
    assert timing == {"drawn": 0, "kept": len(paths)}

    # one cell's marginals change: its marginals figure is drawn again, nothing else of the cells
    # (the study figures read the summary, which marginals.csv does not feed)
    d, syn, k = next(key for key in s.keys if s.is_ok(key))
    table = s.cell_dir(d, syn, k) / "marginals.csv"
    marg = pd.read_csv(table)
    marg.loc[0, "tvd_synthetic"] = 0.987
    marg.to_csv(table, index=False)
    third: dict = {}
    assert make_plots(load_results(s.path), stats=third) == paths
    assert third == {"drawn": 1, "kept": len(paths) - 1}
    changed = {p for p, t in _mtimes(paths).items() if t != before[p]}
    assert changed == {s.cell_dir(d, syn, k) / "marginals.png"}

    # a deleted figure is drawn again
    gone = StudyLayout(s.path).plots_dir / "tradeoff.png"
    assert gone in paths
    gone.unlink()
    stats: dict = {}
    make_plots(load_results(s.path), stats=stats)
    assert stats["drawn"] == 1 and gone.is_file()

    # a metric of one cell changes: the study figures (which read the summary) and that cell's
    # figures that show its metrics are drawn again
    d, syn, k = next(key for key in s.keys if s.is_ok(key))
    mfile = s.cell_dir(d, syn, k) / "metrics.json"
    metrics = json.loads(mfile.read_text())
    metrics["dcr_share"] = 0.4321
    mfile.write_text(json.dumps(metrics))
    status = json.loads(status_file.read_text())
    (status.get("outputs") or {}).pop("metrics.json", None)  # no checksum to contradict the edit
    status_file.write_text(json.dumps(status))
    before = _mtimes(paths)
    stats = {}
    make_plots(load_results(s.path), stats=stats)
    changed = {p for p, t in _mtimes(paths).items() if t != before[p]}
    assert StudyLayout(s.path).plots_dir / "tradeoff.png" in changed
    assert s.cell_dir(d, syn, k) / "dcr_histogram.png" in changed
    other = next(key for key in s.keys if s.is_ok(key) and key != (d, syn, k))
    assert not any(p.is_relative_to(s.cell_dir(*other)) for p in changed)
    assert stats["drawn"] == len(changed)


def test_collect_writes_the_marker_last_and_keeps_the_report_on_failure(study_factory):
    s = study_factory(name="incr3")
    lay = StudyLayout(s.path)
    do_collect(s.path)
    marker = json.loads(lay.collect_marker.read_text())
    assert marker["report"] == str(lay.report) and marker["drawn"] == marker["figures"] > 0
    assert lay.collect_marker.stat().st_mtime_ns >= lay.report.stat().st_mtime_ns
    old_report = lay.report.read_bytes()
    # a collect that fails while drawing (plots/ is not a directory) leaves the old report in place
    lay.collect_marker.unlink()
    for png in lay.plots_dir.glob("*"):
        png.unlink()
    lay.plots_dir.rmdir()
    lay.plots_dir.write_text("not a directory")
    try:
        do_collect(s.path)
    except OSError:
        pass
    else:
        raise AssertionError("collect should fail when plots/ is a file")
    assert lay.report.read_bytes() == old_report
    assert not lay.collect_marker.exists()


def test_a_truncated_figure_is_drawn_again_and_not_embedded(study_factory):
    """A study figure cut short on disk (a full disk, a killed copy) while its key in .figures.json is
    intact is drawn again on the next collect, not kept and embedded in report.html (issue 36 item 3)."""
    s = study_factory(name="trunc")
    lay = StudyLayout(s.path)
    do_collect(s.path)
    figure = lay.plots_dir / "tradeoff.png"
    whole = figure.read_bytes()
    assert whole.startswith(b"\x89PNG") and whole.endswith(b"IEND\xaeB`\x82")
    figure.write_bytes(whole[: len(whole) // 2])  # the key in .figures.json is untouched
    stats: dict = {}
    make_plots(load_results(s.path), stats=stats)
    assert stats["drawn"] == 1
    assert figure.read_bytes() == whole  # drawn again, byte-identical to the first drawing
    # and what collect embeds in the report is the whole figure
    figure.write_bytes(whole[:100])
    do_collect(s.path)
    report = lay.report.read_text()
    assert base64.b64encode(whole).decode() in report
