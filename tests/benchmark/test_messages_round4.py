"""Messages that say what happened (issue 36, items 10-11): a path that is an empty directory is named as
such (not as a study name with path separators), the figure counts add up, a run whose every cell ran but
whose collect failed says so, and Ctrl-C during `holdbench report` ends with one line, not a traceback."""

from __future__ import annotations

import json

import pytest

from holdbench.benchmark.cli import main
from holdbench.benchmark.outputs.results import load_results, study_dir


def test_an_existing_directory_without_study_json_is_named_as_such(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match=r"empty: not a study's results directory \(it holds no study\.json"):
        study_dir(str(empty))
    with pytest.raises(FileNotFoundError, match=r"nowhere: no such study directory"):
        study_dir(str(tmp_path / "nowhere"))


def test_a_name_that_is_no_study_is_answered_with_the_closest_one(tmp_path, monkeypatch):
    monkeypatch.setenv("HOLDBENCH_RESULTS_DIR", str(tmp_path / "results"))
    (tmp_path / "results" / "mine").mkdir(parents=True)
    (tmp_path / "results" / "mine" / "study.json").write_text("{}")
    with pytest.raises(FileNotFoundError, match=r"no study 'papr' \(did you mean 'paper'\?\): no results in .*"
                                                 r"\(studies with results: mine\)"):
        study_dir("papr")
    with pytest.raises(FileNotFoundError, match=r"no study 'mien' \(did you mean 'mine'\?\)"):
        study_dir("mien")
    with pytest.raises(FileNotFoundError, match=r"no results of study 'paper' yet \(run `holdbench run paper` first\)"):
        study_dir("paper")
    assert study_dir("mine") == tmp_path / "results" / "mine"


def test_the_figure_counts_add_up_when_a_figure_has_nothing_to_show(study_factory, monkeypatch):
    from holdbench.benchmark.outputs import plots

    s = study_factory(name="nofig")
    monkeypatch.setattr(plots, "_draw", lambda fn, *args: None)      # every figure finds nothing to draw
    stats: dict = {}
    paths = plots.make_plots(load_results(s.path), stats=stats)
    assert paths == [] and stats == {"drawn": 0, "kept": 0}


def test_a_run_whose_collect_failed_says_so_not_no_report_yet(study_factory):
    from holdbench.benchmark.cli.study import closing_summary

    s = study_factory(name="nocollect")
    lines = "\n".join(closing_summary(s.path))
    assert "no report yet" not in lines
    assert "no report: every cell ran but the collect job that writes it failed" in lines
    assert "`holdbench report nocollect` writes it again" in lines


def test_an_unfinished_run_still_says_no_report_yet(study_factory):
    from holdbench.benchmark.cli.study import closing_summary

    s = study_factory(name="unfinished")
    study = json.loads((s.path / "study.json").read_text())
    (s.path / "study.json").write_text(json.dumps({**study, "seeds": [0, 1, 2]}))   # seed 2 never ran
    assert "no report yet (it is written once every cell has run)" in "\n".join(closing_summary(s.path))


def test_ctrl_c_during_report_is_one_line_and_exit_130(study_factory, monkeypatch, capsys):
    from holdbench.benchmark.workflow import runner

    s = study_factory(name="ctrlc")

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "do_collect", interrupted)
    assert main(["report", str(s.path)]) == 130
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 1
    assert err.startswith("holdbench report: stopped (Ctrl-C)")


@pytest.mark.parametrize(("note", "told"), [
    ("SIGTERM", "received SIGINT (holdbench passing on the SIGTERM it received)"),
    ("SIGINT", "received SIGINT"),
    (None, "received SIGINT"),
])
def test_a_job_names_the_signal_holdbench_received(tmp_path, note, told):
    """holdbench run passes a SIGTERM on as a SIGINT (Snakemake's cancel): the job's reason says so."""
    import os
    import signal

    from holdbench.benchmark.cell.isolation import Interrupted
    from holdbench.benchmark.layout import STOP_NOTE
    from holdbench.benchmark.workflow.runner import _stop_on_signals

    if note:
        (tmp_path / STOP_NOTE).write_text(note)
    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)}
    try:
        _stop_on_signals(tmp_path)
        with pytest.raises(Interrupted) as stopped:
            os.kill(os.getpid(), signal.SIGINT)
            signal.sigtimedwait([], 0.1) if hasattr(signal, "sigtimedwait") else None
    finally:
        for s, h in saved.items():
            signal.signal(s, h)
    assert str(stopped.value) == told
