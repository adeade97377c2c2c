"""`holdbench --version` prints the distribution's version, as pyproject.toml declares it."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from holdbench.benchmark.cli import main

REPO = Path(__file__).resolve().parents[2]
DECLARED = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]


def test_version_flag_prints_the_declared_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"holdbench {DECLARED}\n"


def test_version_flag_through_python_m_holdbench():
    out = subprocess.run([sys.executable, "-m", "holdbench", "--version"], capture_output=True, text=True,
                         cwd=REPO, check=True, timeout=120)
    assert out.stdout == f"holdbench {DECLARED}\n"
