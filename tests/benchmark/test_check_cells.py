"""`holdbench check`: interrupted and never-run cells named as such, not as errors; --cell takes every
spelling of a cell's name (issue 24)."""

from __future__ import annotations

import shutil

import pytest

from holdbench.benchmark.cli import main


@pytest.fixture
def stopped(study_factory):
    s = study_factory(name="stopped")
    ok = [k for k in s.keys if s.is_ok(k)]
    interrupted, never = ok[0], ok[1]
    (s.cell_dir(*interrupted) / "status.json").unlink()  # the job was stopped before it wrote it
    shutil.rmtree(s.cell_dir(*never))  # the job never started
    return s, interrupted, never


def test_interrupted_and_never_run_cells_are_named_not_failed(stopped, capsys):
    s, (d1, s1, k1), (d2, s2, k2) = stopped
    main(["check", str(s.path)])
    out = capsys.readouterr().out
    assert "status.json missing" not in out
    assert f"1 cell(s) interrupted (stopped before they finished; not judged): {d1}/seed{k1}/{s1}" in out
    assert f"1 cell(s) never ran: {d2}/seed{k2}/{s2}" in out
    assert "holdbench run stopped" in out
    verdict_rows = [ln for ln in out.splitlines() if ln.startswith(f"{d1}/seed{k1}/{s1} ")]
    assert verdict_rows == []


def test_strict_counts_unfinished_cells_as_failures(stopped):
    s, (d, syn, k), _ = stopped
    assert main(["check", str(s.path), "--cell", f"{d}/seed{k}/{syn}"]) == 0
    assert main(["check", str(s.path), "--cell", f"{d}/seed{k}/{syn}", "--strict"]) == 1


@pytest.mark.parametrize("spelling", ["{d}/seed{k}/{s}", "{d}/{s}/seed{k}", "{d}/{s}/{k}", "{study}/{d}/seed{k}/{s}"])
def test_cell_accepts_every_spelling(study, spelling, capsys):
    d, s, k = next(key for key in study.keys if study.is_ok(key))
    name = spelling.format(d=d, s=s, k=k, study=study.path.name)
    main(["check", str(study.path), "--cell", name])
    out = capsys.readouterr().out
    assert "on 1 cell(s)" in out
    assert f"{d}/seed{k}/{s}" in out


def test_unknown_cell_answers_with_the_canonical_spelling(study, capsys):
    assert main(["check", str(study.path), "--cell", "nosuch/seed0/cart"]) == 2
    err = capsys.readouterr().err
    d, s, k = study.keys[0]
    assert "DATASET/seedK/SYNTHESIZER" in err and f"{d}/seed{k}/{s}" in err
