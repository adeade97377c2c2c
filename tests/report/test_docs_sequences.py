"""The sequence blocks of docs/guides/report-your-files.md, run on made-up event files (tests.sequential's
generator): S1 a new draw of the generator of T and H, `copy` T's own file."""

from __future__ import annotations

import json
import os
import subprocess

from tests.docs_blocks import REPO, block
from tests.sequential.test_sequential_cli_events import _events

ENV = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}


def _work(tmp_path):
    for name, seed in (("T", 0), ("H", 1), ("S1", 2)):
        _events(120, seed).to_csv(tmp_path / f"{name}_events.csv", index=False)
    return tmp_path


def test_the_several_sequences_command_block(tmp_path):
    work = _work(tmp_path)
    script = block("docs/guides/report-your-files.md", 'holdbench report --train-events T_events.csv --holdout-events H_events.csv --synthetic-events S1_events.csv copy=T_events.csv --key account --order ts --out seq_report || echo "a quality gate failed"')
    proc = subprocess.run(["bash", "-c", "set -e\n" + script], cwd=work, env=ENV, capture_output=True, text=True,
                          timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "a quality gate failed" in proc.stdout  # copy is T's own file: its gates fail, exit 1
    rep = json.loads((work / "seq_report" / "report.json").read_text(encoding="utf-8"))
    assert {n: s["verdict"]["verdict"] for n, s in rep["synthetic"].items()} == {"S1_events.csv": "pass",
                                                                                  "copy": "FAIL"}
    assert rep["ranking"]["order"] == ["S1_events.csv", "copy"] and rep["settings"]["order"] == "['ts']"


def test_the_several_sequences_python_block(tmp_path):
    work = _work(tmp_path)
    code = block("docs/guides/report-your-files.md", "from holdbench.benchmark.outputs.filereport.pairs import build_sequence_report")
    proc = subprocess.run(["python3", "-c", code], cwd=work, env=ENV, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "1 {'S1': 'pass', 'copy': 'FAIL'}"
    rep = json.loads((work / "py_seq_report" / "report.json").read_text(encoding="utf-8"))
    assert rep["settings"]["synthetic"]["S1"] == {"subjects": None, "events": "S1_events.csv"}
