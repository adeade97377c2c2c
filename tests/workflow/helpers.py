"""Run the real Snakemake workflow on small studies in a temporary directory."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


#: a metrics config for studies whose tests check the workflow, not the metrics (statuses, reasons, recomputed
#: outputs, processes): conf/metrics/paper.yaml's two families on one joblib worker, as the demo's (an evaluate
#: job costs about half the CPU of the demo's whole panel); make_conf writes it into every conf copy
WORKFLOW_METRICS = "workflow_tests"
_WORKFLOW_METRICS_YAML = "defaults:\n  - paper\n  - _self_\nn_jobs: 1\n"


def make_conf(tmp: Path, studies: dict[str, str] | None = None, synths: dict[str, str] | None = None) -> Path:
    """A copy of conf/ with extra study/synthesizer YAMLs (test-only configs) and the WORKFLOW_METRICS config."""
    conf = tmp / "conf"
    if not conf.exists():
        shutil.copytree(REPO / "conf", conf)
        (conf / "metrics" / f"{WORKFLOW_METRICS}.yaml").write_text(_WORKFLOW_METRICS_YAML)
    for name, text in (studies or {}).items():
        (conf / "study" / f"{name}.yaml").write_text(text)
    for name, text in (synths or {}).items():
        (conf / "synthesizer" / f"{name}.yaml").write_text(text)
    return conf


def faulty(mode: str) -> str:
    """The synthesizer YAML of tests.workflow.faulty_synths.Faulty in `mode` (one way of failing)."""
    return f"_target_: tests.workflow.faulty_synths.Faulty\nmode: {mode}\npresets:\n  smoke: {{}}\n"


def env_for(tmp: Path, conf: Path | None = None) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    env["HOLDBENCH_CACHE_DIR"] = str(tmp / "cache")
    env["OMP_NUM_THREADS"] = "1"
    env.pop("HOLDBENCH_RESULTS_DIR", None)
    if conf is not None:
        env["HOLDBENCH_CONF_DIR"] = str(conf)
    return env


def snakemake_cmd(study: str, *extra: str, track: bool = False, cores: int = 2,
                  config: dict | None = None) -> list[str]:
    """Snakemake's --config takes all KEY=VALUE pairs at once (a second --config replaces the first)."""
    pairs = [f"study={study}", f"track={track}"] + [f"{k}={v}" for k, v in (config or {}).items()]
    return [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--cores", str(cores),
            *extra, "--config", *pairs]


def run_study(tmp: Path, study: str, *extra: str, env: dict, track: bool = False, config: dict | None = None,
              timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run(snakemake_cmd(study, *extra, track=track, config=config), cwd=tmp, env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)


def cells(tmp: Path, study: str) -> dict[str, dict]:
    """status.json of every cell, keyed by '<dataset>/seed<k>/<synth>'."""
    root = tmp / "results" / study
    out = {}
    for p in sorted(root.glob("*/seed*/*/status.json")):
        out[str(p.parent.relative_to(root))] = json.loads(p.read_text())
    return out


def jobs_run(proc: subprocess.CompletedProcess, rule: str) -> int:
    """How many jobs of a rule Snakemake ran (from its job-count table)."""
    text = proc.stdout + proc.stderr
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == rule and parts[1].isdigit():
            return int(parts[1])
    return 0
