"""The lines closing `holdbench run` and the one line of a stopped run (issue 24), on a fabricated study."""

from __future__ import annotations

import json
import shutil

from holdbench.benchmark.cli.study import closing_summary, stop_line


def test_closing_summary_counts_report_slowest_and_reasons(study_factory):
    s = study_factory(name="summ")
    ok = [k for k in s.keys if s.is_ok(k)]
    slow = ok[-1]
    status_file = s.cell_dir(*slow) / "status.json"
    status = json.loads(status_file.read_text())
    status["wall_seconds"] = 987.6
    status_file.write_text(json.dumps(status))
    (s.path / "report.html").write_text("<html></html>")
    lines = closing_summary(s.path)
    text = "\n".join(lines)
    n_ok = len(ok)
    # the fixture: every cell ok but one error, one skipped, one whose status.json is corrupt (an error)
    assert f"summ: {len(s.keys)} cell(s): " in text
    assert f"{n_ok} ok" in text and "2 error" in text and "1 skipped" in text
    assert f"report: {s.path / 'report.html'}" in text
    d, syn, k = slow
    assert f"slowest: {d}/seed{k}/{syn} 987.6 s" in text
    d, syn, k = s.skipped_cell
    assert f"skipped {d}/seed{k}/{syn}: {s.skipped_reason}" in text
    d, syn, k = s.error_cell
    assert f"{d}/seed{k}/{syn}: {s.error_reason}" in text
    assert "unfinished" not in text


def test_closing_summary_and_stop_line_name_unfinished_cells(study_factory):
    s = study_factory(name="halt")
    ok = [k for k in s.keys if s.is_ok(k)]
    (s.cell_dir(*ok[0]) / "status.json").unlink()
    shutil.rmtree(s.cell_dir(*ok[1]))
    text = "\n".join(closing_summary(s.path))
    assert "1 interrupted" in text and "1 not run" in text and "2 cell(s) unfinished" in text
    assert "no report yet" in text
    line = stop_line(s.path, "SIGTERM", "holdbench run halt")
    d, syn, k = ok[0]
    assert line == (f"[holdbench] stopped (SIGTERM): {len(s.keys) - 2} cell(s) finished, 1 interrupted "
                    f"({d}/seed{k}/{syn}), 1 not started; resume with the same command: holdbench run halt")
