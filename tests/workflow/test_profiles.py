"""The cluster profiles without a cluster: their keys are Snakemake options, and dry runs.

- profiles/slurm: a dry run plans every job with the memory and time limit the study sets
  (the live run is tests/workflow/test_slurm_live.py);
- profiles/kubernetes: Snakemake and the kubernetes plugin accept the profile and map every
  path into the bucket; without a bucket the dry run stops at the first storage look-up,
  which is as far as it can go here (see the profile's "Limits").
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.workflow.helpers import REPO, env_for, snakemake_cmd

PROFILES = REPO / "profiles"
PLUGINS = {"slurm": ["snakemake_executor_plugin_slurm"],
           "kubernetes": ["snakemake_executor_plugin_kubernetes", "snakemake_storage_plugin_s3"]}
# memory_gb 3 -> 3072 MB; a 300 s cell timeout -> a 6-minute limit (5 minutes plus one of margin)
OVERRIDES = "synthesizers=[cart],seeds=[0],memory_gb=3,timeout_seconds=300"


def _need(profile: str) -> None:
    """Skip (fail under CI=true) when the profile's plugins are not installed."""
    for mod in PLUGINS.get(profile, []):
        try:
            __import__(mod)
        except ImportError:
            msg = f"{mod.replace('_', '-')} is not installed (pip install -e '.[dev]')"
            if os.environ.get("CI") == "true":
                pytest.fail(msg, pytrace=False)
            pytest.skip(msg)


@pytest.fixture(scope="module")
def snakemake_options() -> set[str]:
    for profile in PLUGINS:
        _need(profile)
    from snakemake.cli import get_argument_parser

    return {o for action in get_argument_parser()._actions for o in action.option_strings}


@pytest.mark.parametrize("profile", ["default", "slurm", "kubernetes"])
def test_profile_keys_are_snakemake_options(profile, snakemake_options):
    cfg = yaml.safe_load((PROFILES / profile / "config.yaml").read_text())
    unknown = sorted(k for k in cfg if f"--{k}" not in snakemake_options)
    assert not unknown, f"profiles/{profile}: not Snakemake options: {unknown}"


def test_slurm_profile_takes_resources_from_the_rules():
    """No cpus/mem/runtime override in the profile: the rules (i.e. the study) decide them."""
    cfg = yaml.safe_load((PROFILES / "slurm" / "config.yaml").read_text())
    assert cfg["executor"] == "slurm" and cfg["slurm-status-command"] == "squeue"
    assert "set-resources" not in cfg
    assert not {"mem_mb", "runtime", "cpus_per_task", "threads"} & set(cfg.get("default-resources") or {})


def _dry_run(tmp: Path, profile: str, *extra: str, env: dict | None = None) -> subprocess.CompletedProcess:
    cmd = snakemake_cmd("demo", "-n", "--profile", str(PROFILES / profile), *extra,
                        config={"study_overrides": OVERRIDES})
    return subprocess.run(cmd, cwd=tmp, env=env or env_for(tmp), capture_output=True, text=True, timeout=300,
                          check=False)


def _resources(text: str, rule: str) -> dict[str, str]:
    block = re.search(rf"^rule {rule}:\n(.*?)^\s+resources: (.*?)$", text, re.MULTILINE | re.DOTALL)
    assert block, f"no resources listed for rule {rule}"
    return dict(kv.split("=", 1) for kv in block.group(2).split(", "))


@pytest.mark.slow
def test_slurm_profile_dry_run(tmp_path):
    _need("slurm")
    proc = _dry_run(tmp_path, "slurm")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert "This was a dry-run" in out
    for rule in ("generate", "evaluate"):
        res = _resources(out, rule)
        assert (res["mem_mb"], res["runtime"]) == ("3072", "6"), (rule, res)
    assert _resources(out, "collect")["runtime"] == "30"
    assert not (tmp_path / ".snakemake" / "slurm_logs").exists(), "a dry run must submit nothing"


@pytest.mark.slow
def test_kubernetes_profile_is_accepted_and_maps_paths_to_the_bucket(tmp_path):
    _need("kubernetes")
    env = env_for(tmp_path)
    env.update(SNAKEMAKE_STORAGE_S3_ACCESS_KEY="placeholder", SNAKEMAKE_STORAGE_S3_SECRET_KEY="placeholder",
               AWS_ACCESS_KEY_ID="placeholder", AWS_SECRET_ACCESS_KEY="placeholder")
    env.pop("KUBECONFIG", None)
    # a closed local port as the S3 endpoint: the first look-up fails at once, nothing leaves the machine
    proc = _dry_run(tmp_path, "kubernetes", "--storage-s3-endpoint-url", "http://127.0.0.1:9",
                    "--storage-s3-retries", "0", env=env)
    out = proc.stdout + proc.stderr
    assert "unrecognized arguments" not in out and "invalid choice" not in out, out[-3000:]
    assert "Building DAG of jobs" in out, out[-3000:]
    assert "s3://YOUR_BUCKET/holdbench/results/demo/" in out, out[-3000:]
    assert proc.returncode != 0  # no bucket here: stops at the first storage look-up
