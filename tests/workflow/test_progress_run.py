"""`holdbench run` as a newcomer sees it (issue 24): cheap cells scheduled before the hours-long fits,
Snakemake's output in a log file (on screen with --verbose), a progress line, and the end of the log
shown when Snakemake fails; collect's one declared output is its marker, so Snakemake never deletes the
previous report before the job replaces it."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest

from tests.workflow.helpers import make_conf
from tests.workflow.test_no_silent_mixing import _env, _study

#: the demo study's synthesizers by how long their fits take (the expectation, not read from the configs)
CHEAP = {"gaussian_copula", "cart", "flip10", "flip50", "flip90", "holdout"}
EXPENSIVE = {"ctgan", "tvae", "copulagan"}


def _holdbench(tmp_path, env, *argv, timeout=600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "holdbench", *argv], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)


def _jobs(text: str, rule: str) -> list[dict[str, str]]:
    """The job blocks of `rule` in Snakemake's dry-run listing: {wildcards..., priority, output}."""
    out = []
    for block in re.split(r"\n(?=rule \w+:)", text):
        if not block.startswith(f"rule {rule}:"):
            continue
        job = {}
        for line in block.splitlines()[1:]:
            key, _, value = line.strip().partition(": ")
            if key == "wildcards":
                job.update(dict(kv.split("=", 1) for kv in value.split(", ")))
            elif key in ("priority", "output"):
                job[key] = value
        out.append(job)
    return out


def test_dry_run_puts_cheap_cells_first_and_collect_declares_only_its_marker(tmp_path):
    env = _env(tmp_path, make_conf(tmp_path))
    proc = _holdbench(tmp_path, env, "run", "demo", "--dry-run", "--no-track", timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    generate = _jobs(proc.stdout, "generate")
    assert {j["synth"] for j in generate} == CHEAP | EXPENSIVE and len(generate) == 18
    priority = {j["synth"]: int(j.get("priority", 0)) for j in generate}  # Snakemake omits priority 0
    assert min(priority[s] for s in CHEAP) > max(priority[s] for s in EXPENSIVE), priority
    # evaluations and splits go before any fit: what has started finishes first
    assert min(int(j.get("priority", 0)) for j in _jobs(proc.stdout, "evaluate")) > max(priority.values())
    collect = _jobs(proc.stdout, "collect")
    assert [j["output"] for j in collect] == ["results/demo/.collected.json"]
    assert not (tmp_path / "results").exists()  # a dry run writes nothing


@pytest.mark.slow
def test_run_schedules_cheap_cells_first_and_keeps_snakemake_in_its_log(tmp_path):
    # the expensive one listed first: without priorities Snakemake would be free to start it first
    conf = make_conf(tmp_path, {"order": _study("order", ["flip_costly", "holdout", "flip10"])},
                     {"flip_costly": "_target_: holdbench.synthesizers.flip.Flip\ncost: expensive\np: 0.5\npresets:\n"
                                     "  smoke: {}\n"})
    proc = _holdbench(tmp_path, _env(tmp_path, conf), "run", "order", "--no-track", "--cores", "1")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    root = tmp_path / "results/order"
    started = {(p.parent.parent.name, p.parent.name): p.stat().st_mtime for p in root.glob("demo/seed*/*/generate.json")}
    assert len(started) == 3
    costly = [t for (_, synth), t in started.items() if synth == "flip_costly"]
    cheap = [t for (_, synth), t in started.items() if synth != "flip_costly"]
    assert max(cheap) < min(costly), started

    out = proc.stdout
    log = root / "logs/snakemake.log"
    assert out.splitlines()[0] == ("[holdbench] running study order on 1 core(s); Snakemake's output goes to "
                                   "results/order/logs/snakemake.log (--verbose shows it here)")
    for chatter in ("Building DAG", "steps (", "rule generate", "Finished job"):
        assert chatter not in out + proc.stderr, chatter
        assert chatter in log.read_text(), chatter
    assert re.search(r"^\[holdbench\] \d/3 cells done", out, re.MULTILINE), out
    assert "[holdbench] demo/seed0/flip10: ok" in out  # the per-cell lines still reach the terminal
    assert "[holdbench] order: 3 cell(s): 3 ok" in out

    # a cell removed by hand: Snakemake alone would call the collected study up to date
    shutil.rmtree(root / "demo/seed0/flip10")
    again = _holdbench(tmp_path, _env(tmp_path, conf), "run", "order", "--no-track", "--cores", "1")
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert "[holdbench] 1 cell(s) without status.json: collecting again" in again.stdout
    assert "[holdbench] order: 3 cell(s): 3 ok" in again.stdout


@pytest.mark.slow
def test_a_failing_snakemake_shows_the_end_of_its_log_or_passes_through_with_verbose(tmp_path):
    conf = make_conf(tmp_path, {"bad": _study("bad", ["flip10"])})
    env = _env(tmp_path, conf)
    # an override the study refuses: Snakemake stops while parsing, before any job
    proc = _holdbench(tmp_path, env, "run", "bad", "--no-track", "--", "--config", "study_overrides=n_synthetic=-5",
                      timeout=300)
    assert proc.returncode != 0
    log = "results/bad/logs/snakemake.log"
    err = proc.stderr
    assert f"[holdbench] Snakemake stopped before any job (exit status {proc.returncode}): the study was refused:" \
        in err, err
    assert "ConfigError: " in err and "n_synthetic`: -5 is less than the minimum of 1" in err  # the reason itself
    assert 'File "' not in err  # without Snakemake's Python frames
    assert err.rstrip().endswith(f"[holdbench] Snakemake's full output: {log}")

    verbose = _holdbench(tmp_path, env, "run", "bad", "--no-track", "--verbose", "--", "--config",
                         "study_overrides=n_synthetic=-5", timeout=300)
    assert verbose.returncode == proc.returncode
    assert "n_synthetic" in verbose.stdout + verbose.stderr
    assert "Snakemake failed" not in verbose.stderr and "Snakemake stopped" not in verbose.stderr  # on screen already
