"""scripts/bench/audit_fit_times.py on the demo table: its lines are the ones scripts/bench/audit_tables.py
--fit-times parses, it reads the audit family's defaults, and a DP generator that refuses a small reference
set is reported by name instead of ending the run."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import pytest
from holdbench.contracts import plugin_env

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts" / "bench"


def _run(monkeypatch, capsys, *args: str) -> list[str]:
    monkeypatch.setattr(sys, "argv", ["audit_fit_times.py", "--dataset", "demo", *args])
    runpy.run_path(str(SCRIPTS / "audit_fit_times.py"), run_name="__main__")
    return capsys.readouterr().out.splitlines()


def test_lines_parse_as_audit_tables_reads_them(monkeypatch, capsys):
    lines = _run(monkeypatch, capsys, "--rows", "120", "--repeats", "2", "flip10", "cart")
    line = runpy.run_path(str(SCRIPTS / "audit_tables.py"))["_LINE"]
    rows = [m.groupdict() for s in lines if (m := line.match(s.strip()))]
    assert [(r["dataset"], r["synthesizer"], r["rows"], r["cols"], r["repeats"]) for r in rows] == [
        ("demo", "flip10", "120", "5", "2"), ("demo", "cart", "120", "5", "2")]
    assert all(float(r["median"]) <= float(r["max"]) for r in rows)


@pytest.mark.skipif(plugin_env.get("dp").unavailable() is not None, reason="the dp plug-in venv is not installed")
def test_a_refused_reference_set_is_named_not_timed(monkeypatch, capsys):
    # 120 rows at epsilon 0.1: no level of demo's education passes the DP domain step's threshold (the fit stops
    # there, before the worker starts)
    lines = _run(monkeypatch, capsys, "--rows", "120", "--repeats", "1", "privbayes_eps0.1")
    assert len(lines) == 1 and lines[0].startswith("# demo privbayes_eps0.1: fit refused on repeat 0:")
    assert "education" in lines[0] and "DP threshold" in lines[0]
