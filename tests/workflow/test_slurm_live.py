"""The workflow on a live one-node SLURM (.ci/slurm/start.sh) through profiles/slurm.

- the demo study (3 fast synthesizers, one seed) through SLURM gives metrics.json files
  byte-identical to a local run of the same study;
- every job is submitted with the memory, time limit and CPUs its rule sets from the study;
- a cell whose job is killed by `scancel` is reported as a failed job and Snakemake exits
  non-zero instead of waiting forever.

Skips (with the reason start.sh recorded) where SLURM could not be started, e.g. not root or
no apt; fails instead when CI=true, where it must really run. Every wait is bounded.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from tests.workflow.helpers import REPO, cells, env_for, faulty, make_conf, run_study, snakemake_cmd

pytestmark = pytest.mark.slow

SLURM_DIR = Path(os.environ.get("HOLDBENCH_SLURM_DIR", "/tmp/holdbench-slurm"))
# one of each kind: a fitted model, a perturbation baseline, the holdout reference row
SYNTHS = ["cart", "flip50", "holdout"]
MEMORY_GB, TIMEOUT_S = 3, 300
# what the study asks for, written out by hand: 3 GB -> 3072 MB; a 300 s cell timeout -> a
# 6-minute SLURM limit (5 minutes plus one of margin); generate 1 thread, evaluate the demo
# metrics' n_jobs (1), collect 2
EXPECTED = {"split": (4000, 30, 1), "generate": (3072, 6, 1), "evaluate": (3072, 6, 1), "collect": (4000, 30, 2)}
OVERRIDES = f"synthesizers=[{','.join(SYNTHS)}],seeds=[0],memory_gb={MEMORY_GB},timeout_seconds={TIMEOUT_S}"
# the repository's profile, plus the one setting a tiny workflow wants: first status check
# after 2 s instead of 40 (the plugin then backs off by 10 s per check)
SLURM_ARGS = ("--profile", str(REPO / "profiles" / "slurm"), "--slurm-init-seconds-before-status-checks", "2",
              "--latency-wait", "5")
RUN_LIMIT_S = 600
NEEDED_CPUS = max(cpus for _, _, cpus in EXPECTED.values())


def _unavailable() -> str | None:
    """Why the live SLURM cannot be used here, or None."""
    status = SLURM_DIR / "status"
    if not status.exists():
        return f"SLURM was not started ({status} missing; run `bash .ci/slurm/start.sh` as root)"
    first = status.read_text().strip().splitlines()[0] if status.read_text().strip() else "empty status"
    if first != "ok":
        return f".ci/slurm/start.sh: {first}"
    for tool in ("sbatch", "squeue", "scancel", "sinfo"):
        if shutil.which(tool) is None:
            return f"{tool} not on PATH"
    try:
        import snakemake_executor_plugin_slurm  # noqa: F401
    except ImportError:
        return "snakemake-executor-plugin-slurm is not installed (pip install -e '.[dev]')"
    try:
        state = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, timeout=20,
                               check=False).stdout
    except subprocess.TimeoutExpired:
        return "sinfo did not answer within 20 s"
    if not re.search(r"^(idle|mixed|alloc)", state, re.MULTILINE):
        return f"no usable SLURM node (sinfo says {state.strip()!r})"
    cpus = subprocess.run(["sinfo", "-h", "-o", "%c"], capture_output=True, text=True, timeout=20,
                          check=False).stdout.split()
    # the collect job asks for 2 CPUs: on a smaller node it would pend forever (PartitionConfig)
    if not cpus or max(int(c.rstrip("+")) for c in cpus) < NEEDED_CPUS:
        return f"the SLURM node has {cpus} CPUs; the workflow's collect job needs {NEEDED_CPUS}"
    return None


@pytest.fixture(scope="module")
def slurm():
    reason = _unavailable()
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but the live SLURM is unavailable: {reason}", pytrace=False)
        pytest.skip(reason)


def _job_ids(text: str) -> list[str]:
    return re.findall(r"submitted with SLURM jobid (\d+)", text)


def _jobs(ids: list[str]) -> dict[str, dict]:
    """squeue's view of finished and running jobs (MinJobAge=3600 keeps finished ones)."""
    out = subprocess.run(["squeue", "-h", "-t", "all", "-j", ",".join(ids), "-o", "%i|%k|%m|%l|%C|%T"],
                         capture_output=True, text=True, timeout=30, check=False).stdout
    jobs = {}
    for line in out.splitlines():
        jid, comment, mem, limit, cpus, state = line.split("|")
        jobs[jid] = {"comment": comment, "mem": mem, "limit": limit, "cpus": int(cpus), "state": state}
    return jobs


def _mb(text: str) -> int:
    """squeue's memory ('3G', '4000M') in MB."""
    num, unit = float(text[:-1]), text[-1]
    return int(num * {"M": 1, "G": 1024, "T": 1024 * 1024}[unit])


def _minutes(text: str) -> int:
    """squeue's time limit ('6:00', '30:00', '1:00:00', '1-00:00:00') in minutes."""
    days, _, hms = text.rpartition("-")
    parts = [int(p) for p in hms.split(":")]
    while len(parts) < 3:
        parts.insert(0, 0)
    return int(days or 0) * 1440 + parts[0] * 60 + parts[1] + (1 if parts[2] else 0)


def _cluster_state() -> str:
    """What SLURM says of every job and of the node (why a job pends, which CPUs are taken)."""
    out = []
    for cmd in (["squeue", "-h", "-t", "all", "-o", "%i %k %T %r cpus=%C mem=%m"],
                ["sinfo", "-h", "-N", "-o", "%N %T cpus(A/I/O/T)=%C mem=%m free=%e"]):
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=20, check=False)
            out.append(proc.stdout.strip() or proc.stderr.strip())
        except subprocess.TimeoutExpired:
            out.append(f"{cmd[0]} did not answer within 20 s")
    return "\n".join(out)[-1500:]


def _processes_in(workdir: Path, wait: float = 15) -> list[str]:
    """Command lines of live processes whose working directory is under `workdir` (after up to `wait` s)."""
    deadline = time.monotonic() + wait
    while True:
        left = []
        for p in psutil.process_iter(["cwd", "cmdline"]):
            if (p.info["cwd"] or "").startswith(str(workdir)):
                left.append(" ".join(p.info["cmdline"] or []))
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(1)


class _Run:
    """Snakemake in the background with its output in a file; every wait bounded, jobs cleaned up."""

    def __init__(self, tmp: Path, cmd: list[str], env: dict):
        self.log = tmp / "snakemake.out"
        self._fh = self.log.open("w")
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen(cmd, cwd=tmp, env=env, stdout=self._fh, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def text(self) -> str:
        return self.log.read_text()

    def wait(self, timeout: float) -> int:
        """Snakemake's exit code; fails at `timeout`, or at once when SLURM says a job can never run."""
        deadline = time.monotonic() + timeout
        try:
            while True:
                try:
                    return self.proc.wait(timeout=min(10.0, max(deadline - time.monotonic(), 0.1)))
                except subprocess.TimeoutExpired:
                    if time.monotonic() >= deadline:
                        self._fail(f"Snakemake did not exit within {timeout:.0f} s")
                    stuck = self._never_runs()
                    if stuck:
                        self._fail(f"SLURM will never run job(s) {stuck}")
        finally:
            self.seconds = time.monotonic() - self.t0
            self._fh.close()

    def _never_runs(self) -> list[str]:
        """Jobs pending for a reason no wait can fix (more CPUs or memory than the partition has)."""
        ids = _job_ids(self.text())
        if not ids:
            return []
        out = subprocess.run(["squeue", "-h", "-j", ",".join(ids), "-t", "PENDING", "-o", "%i %r"],
                             capture_output=True, text=True, timeout=30, check=False).stdout
        return [line for line in out.splitlines() if line.split()[-1:] == ["PartitionConfig"]]

    def _fail(self, why: str) -> None:
        queue = _cluster_state()
        self.abort()
        pytest.fail(f"{why}:\n{self.text()[-2000:]}\n--- the cluster ---\n{queue}", pytrace=False)

    def abort(self) -> None:
        """SIGINT first (the plugin then scancels its jobs), then SIGKILL and scancel ourselves."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=30)
        ids = _job_ids(self.text())
        if ids:
            subprocess.run(["scancel", *ids], capture_output=True, timeout=30, check=False)


@pytest.fixture(scope="module")
def demo_runs(slurm, tmp_path_factory):
    """The same demo subset through SLURM and locally: (slurm dir, local dir, slurm output, seconds)."""
    on_slurm, local = tmp_path_factory.mktemp("slurm"), tmp_path_factory.mktemp("local")
    run = _Run(on_slurm, snakemake_cmd("demo", *SLURM_ARGS, config={"study_overrides": OVERRIDES}),
               env_for(on_slurm))
    rc = run.wait(RUN_LIMIT_S)
    out = run.text()
    assert rc == 0, out[-4000:]
    t0 = time.monotonic()
    proc = run_study(local, "demo", env=env_for(local), config={"study_overrides": OVERRIDES}, timeout=RUN_LIMIT_S)
    local_s = time.monotonic() - t0
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    print(f"\n[slurm-live] demo {SYNTHS} seed 0: SLURM {run.seconds:.0f} s, local --cores 2 {local_s:.0f} s")
    return on_slurm, local, out, run.seconds


def test_demo_on_slurm_equals_local(demo_runs):
    on_slurm, local, out, _ = demo_runs
    assert "SLURM jobid" in out, "the jobs did not go through SLURM"
    got = cells(on_slurm, "demo")
    assert sorted(got) == [f"demo/seed0/{s}" for s in sorted(SYNTHS)]
    assert all(c["status"] == "ok" for c in got.values()), got
    for s in SYNTHS:
        rel = f"results/demo/demo/seed0/{s}/metrics.json"
        assert (on_slurm / rel).read_bytes() == (local / rel).read_bytes(), f"{s}: metrics differ"
    assert (on_slurm / "results/demo/leaderboard.csv").stat().st_size > 0


def test_each_job_requests_the_study_resources(demo_runs):
    out = demo_runs[2]
    ids = _job_ids(out)
    # split, one generate and one evaluate per cell, collect
    assert len(ids) == 2 + 2 * len(SYNTHS), out[-3000:]
    jobs = _jobs(ids)
    assert sorted(jobs) == sorted(ids), "some jobs are no longer known to slurmctld"
    seen = set()
    for jid, job in jobs.items():
        rule = re.match(r"rule_([a-z]+)", job["comment"]).group(1)
        seen.add(rule)
        want_mb, want_min, want_cpus = EXPECTED[rule]
        assert (_mb(job["mem"]), _minutes(job["limit"]), job["cpus"]) == (want_mb, want_min, want_cpus), (jid, job)
        assert job["state"] == "COMPLETED", (jid, job)
    assert seen == set(EXPECTED)


def test_scancelled_cell_fails_and_snakemake_exits(slurm, tmp_path):
    """A synthesizer that sleeps for an hour; its generate job is scancel'd once it runs."""
    synths = {"faulty_hang": faulty("hang")}
    study = ("name: slurmkill\ndatasets: [demo]\nsynthesizers: [faulty_hang]\nseeds: [0]\n"
             "n_synthetic: 500\ntimeout_seconds: 600\nmemory_gb: 2.5\nmetrics: demo\n")
    conf = make_conf(tmp_path, {"slurmkill": study}, synths)
    run = _Run(tmp_path, snakemake_cmd("slurmkill", *SLURM_ARGS), env_for(tmp_path, conf))
    target, deadline = None, time.monotonic() + 300
    try:
        while target is None:
            assert run.proc.poll() is None, f"Snakemake ended before the hang job ran:\n{run.text()[-3000:]}"
            assert time.monotonic() < deadline, f"the hang job never ran within 300 s:\n{run.text()[-3000:]}"
            time.sleep(2)
            ids = _job_ids(run.text())
            for jid, job in (_jobs(ids) if ids else {}).items():
                if job["comment"].startswith("rule_generate") and "faulty_hang" in job["comment"] \
                        and job["state"] == "RUNNING":
                    target = jid
        time.sleep(5)  # let it get into fit() and sleep there
        subprocess.run(["scancel", target], check=True, timeout=30)
        cancelled_at = time.monotonic()
    except BaseException:
        run.abort()
        raise
    rc = run.wait(300)
    out = run.text()
    assert rc != 0, out[-3000:]
    assert time.monotonic() - cancelled_at < 240, "Snakemake took too long to notice the cancelled job"
    assert f"SLURM-job '{target}' failed" in out and "CANCELLED" in out, out[-3000:]
    assert "Error in rule generate" in out and "faulty_hang" in out, out[-3000:]
    assert _jobs([target])[target]["state"] == "CANCELLED"
    cell = tmp_path / "results/slurmkill/demo/seed0/faulty_hang"
    assert not (cell / "generate.json").exists() and not (cell / "status.json").exists()
    # nothing of the cancelled job is left running
    assert not _processes_in(tmp_path), "processes of the cancelled job survive"
    logs = list((tmp_path / ".snakemake/slurm_logs/rule_generate").glob(f"*faulty_hang/{target}.log"))
    assert logs, "the failed job's SLURM log was not kept"
