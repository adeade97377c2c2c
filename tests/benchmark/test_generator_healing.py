"""A generate cell `skipped` for a missing or out-of-date plug-in venv, or `error`ed by a broken interpreter,
runs again by itself once the user ran the install command (issue 36, item 2): the generator twin of the
metric families' `available_now` (holdbench.benchmark.workflow.integrity.generator_can_run_now)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from holdbench.benchmark.config import synthesizer_config
from holdbench.benchmark.layout import StudyLayout
from holdbench.benchmark.workflow import integrity
from holdbench.benchmark.workflow.cellconfig import cell_config, digest
from holdbench.contracts.plugin_env import STAMP


@dataclass
class FakeEnv:
    """A plug-in environment in a temporary folder: `install()` does what the install command does."""

    venv: Path
    name: str = "fakeplug"

    def python(self, override=None) -> Path:
        return self.venv / "bin" / "python"

    def unavailable(self, override=None) -> str | None:
        if not self.python().exists():
            return f"{self.name} not installed: run the install command"
        return None

    def install(self, stamp: str = "abc") -> None:
        (self.venv / "bin").mkdir(parents=True, exist_ok=True)
        site = self.venv / "lib" / "python3.11" / "site-packages"
        site.mkdir(parents=True, exist_ok=True)
        self.python().write_text("#!/bin/sh\n")
        (self.venv / STAMP).write_text(stamp + "\n")


SPLIT, SYNTH = {"split": "random"}, {"config": {"_target_": "x.Y", "epsilon": 1.0}, "n_synthetic": 10}
LIMITS = {"timeout_seconds": 60, "memory_gb": 2}


@pytest.fixture()
def cell(tmp_path, monkeypatch):
    env = FakeEnv(tmp_path / ".venv-fakeplug")
    monkeypatch.setattr(integrity, "generator_plugin", lambda config: env)
    lay = StudyLayout(tmp_path / "s")
    cdir = lay.cell_dir("d", 0, "g")
    cdir.mkdir(parents=True)

    def record(status: str, reason: str, with_state: bool = True) -> None:
        gen = {"status": status, "reason": reason, "generate_digest": digest(cell_config(SPLIT, SYNTH)),
               "limits": LIMITS}
        if with_state:
            gen["plugin_environment"] = integrity.environment_state(env)
        (cdir / "generate.json").write_text(json.dumps(gen))
        (cdir / "metrics.json").write_text("{}")
        (cdir / "status.json").write_text(json.dumps({"status": status, "stage": "generate", "reason": reason,
                                                      "config_digest": digest(cell_config(SPLIT, SYNTH, {"families": {}})),
                                                      "outputs": {}}))

    def scan():
        return integrity.scan_cell(lay, "d", 0, "g", SPLIT, SYNTH, {"families": {}}, LIMITS, None)

    return env, record, scan


def test_a_skipped_cell_reruns_after_the_install_command_and_not_before(cell):
    env, record, scan = cell
    record("skipped", "fakeplug not installed: run the install command")
    assert scan() is None                                   # still not installed: stays skipped
    env.install()
    r = scan()
    assert r is not None and r.job == "generate"
    assert "the fakeplug plug-in can run now" in r.reason and "ended skipped" in r.reason


def test_an_error_reruns_once_the_environment_changed_not_on_every_run(cell):
    env, record, scan = cell
    env.install("old")
    record("error", f"mst worker failed with exit code 127 ({env.python()})")
    assert scan() is None                                   # same environment as when it failed: no loop
    stamp = env.venv / STAMP
    before = stamp.stat().st_mtime_ns
    env.install("new")                                      # the install command rewrote the venv
    os.utime(stamp, ns=(before + 10**9, before + 10**9))
    r = scan()
    assert r is not None and r.job == "generate" and "ended error" in r.reason


def test_a_skip_recorded_before_environments_were_reruns_once_installed(cell):
    env, record, scan = cell
    env.install()
    record("skipped", "fakeplug not installed: run the install command", with_state=False)
    assert scan().job == "generate"
    record("error", "ValueError: the library refused column 'age'", with_state=False)
    assert scan() is None                                   # an old error that does not name the interpreter


def test_generator_plugin_finds_the_plugin_of_a_plugin_generator_only():
    assert integrity.generator_plugin(synthesizer_config("mst_eps1")).name == "dp"
    assert integrity.generator_plugin(synthesizer_config("cart")) is None
    assert integrity.generator_plugin({"_target_": "no.such.Module"}) is None


@pytest.mark.slow
def test_through_the_workflow_a_skipped_plugin_cell_is_planned_again_once_installed(tmp_path):
    """Skipped while HOLDBENCH_DP_PYTHON points at no interpreter; with the venv there the next dry run plans
    the generate job again (it said "Nothing to be done" before)."""
    from tests.workflow.helpers import cells, env_for, run_study

    if integrity.generator_plugin(synthesizer_config("mst_eps1")).unavailable():
        pytest.skip("the dp plug-in venv is not installed here")
    env = env_for(tmp_path)
    cfg = {"study_overrides": "synthesizers=[mst_eps1],seeds=[0],n_synthetic=200,metrics=paper"}
    missing = run_study(tmp_path, "demo", env={**env, "HOLDBENCH_DP_PYTHON": str(tmp_path / "no-python")}, config=cfg)
    assert missing.returncode == 0, missing.stderr[-3000:]
    assert cells(tmp_path, "demo")["demo/seed0/mst_eps1"]["status"] == "skipped"
    still = run_study(tmp_path, "demo", "--dry-run", env={**env, "HOLDBENCH_DP_PYTHON": str(tmp_path / "no-python")},
                      config=cfg)
    assert "Nothing to be done" in still.stdout + still.stderr
    healed = run_study(tmp_path, "demo", "--dry-run", env=env, config=cfg)
    out = healed.stdout + healed.stderr
    assert healed.returncode == 0, out[-3000:]
    assert "Nothing to be done" not in out and "the dp plug-in can run now" in out
