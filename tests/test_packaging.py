"""What `pip install .` puts into site-packages: one `holdbench` namespace, nothing generic at the top."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_the_wheel_holds_only_the_holdbench_namespace_and_all_its_code(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                           "--disable-pip-version-check", str(REPO), "-w", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (wheel,) = tmp_path.glob("holdbench-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {n.split("/")[0] for n in names} == {"holdbench", f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}.dist-info"}
    for layer in ("contracts", "metrics", "synthesizers", "benchmark"):
        for py in (REPO / layer).rglob("*.py"):
            assert f"holdbench/{py.relative_to(REPO).as_posix()}" in names, py
    assert "holdbench/__init__.py" in names
