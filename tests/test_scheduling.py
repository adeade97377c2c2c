"""The suite's own schedule (tests/conftest.py's LONGEST_FIRST): the files it names exist, and collection
puts them first, longest first, the other files after them in their own order."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import LONGEST_FIRST

REPO = Path(__file__).resolve().parents[1]


def test_every_file_named_longest_first_exists_once():
    assert len(set(LONGEST_FIRST)) == len(LONGEST_FIRST)
    missing = [path for path in LONGEST_FIRST if not (REPO / path).is_file()]
    assert not missing, f"LONGEST_FIRST names test files that do not exist: {missing}"


def test_collection_puts_the_longest_files_first():
    files = ["tests/benchmark/test_values.py", "tests/benchmark/test_version.py",
             "tests/benchmark/test_evaluate_cli.py"]
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *files],
                          cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    order = []
    for line in proc.stdout.splitlines():
        path = line.split("::", 1)[0]
        if "::" in line and (not order or order[-1] != path):
            order.append(path)
    assert order == ["tests/benchmark/test_evaluate_cli.py", "tests/benchmark/test_values.py",
                     "tests/benchmark/test_version.py"]
