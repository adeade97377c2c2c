"""The code blocks of docs/guides/report-your-files.md, run on the made-up tables of conftest."""

from __future__ import annotations

import json
import os
import subprocess

from tests.docs_blocks import REPO, block
from tests.report.conftest import population


def _work(tmp_path, s2_as="S2.parquet"):
    """T, H and S1 of 200 rows each from conftest's population (small: these blocks run every family), S2 = T."""
    pop = population(600, seed=11)
    for i, name in enumerate(("T.csv", "H.csv", "S1.csv")):
        pop.iloc[200 * i:200 * (i + 1)].to_csv(tmp_path / name, index=False)
    pop.iloc[:200].to_parquet(tmp_path / s2_as, index=False)
    return tmp_path


def test_the_command_block(tmp_path):
    work = _work(tmp_path)
    script = block("docs/guides/report-your-files.md", 'holdbench report --train T.csv --holdout H.csv --synthetic S1.csv candidate2=S2.parquet --target income --skip anonymeter --out my_report || echo "a quality gate failed"')
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}
    proc = subprocess.run(["bash", "-c", "set -e\n" + script], cwd=work, env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "a quality gate failed" in proc.stdout  # candidate2 is T copied: its gates fail, exit 1
    rep = json.loads((work / "my_report" / "report.json").read_text(encoding="utf-8"))
    assert {n: s["verdict"]["verdict"] for n, s in rep["synthetic"].items()} == {"S1": "pass", "candidate2": "FAIL"}
    assert (work / "my_report" / "summary.md").read_text().count("| FAIL |") == 1


def test_the_python_block(tmp_path):
    work = _work(tmp_path)
    code = block("docs/guides/report-your-files.md", "from holdbench.benchmark.outputs.filereport import build_report")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}
    proc = subprocess.run(["python3", "-c", code], cwd=work, env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith("0 pass ")
    assert (work / "py_report" / "report.html").is_file()
