"""Plug-in environments: libraries whose pins clash with holdbench's run in their own venv.

One mechanism for every such plug-in (anonymeter's attacks, the DP and forest generators):

- a plug-in has a name, a pinned requirements file and a venv `<repo>/.venv-<name>`; the
  interpreter is, in this order, an explicit override, `$HOLDBENCH_<NAME>_PYTHON`, the venv's
  `bin/python`;
- `.ci/install.sh` installs every venv listed by `python3 -m holdbench.contracts.plugin_env` from its
  requirements file and writes the file's sha256 into `<venv>/.requirements.sha256`; a venv whose
  stamp differs from the requirements file is out of date and reported as not installed;
- `run_worker` runs `<python> -I <worker.py> WORKDIR` in its own session: holdbench writes its
  inputs into WORKDIR (parquet + config.json), the worker writes `WORKDIR/result.json`; exit code
  `MISSING_EXIT` with `{"missing": "..."}` means the library cannot be imported there;
  `SETTINGS_EXIT` with `{"error": "..."}` is the worker's own diagnosis of data or settings the
  library refused: raised as a ValueError with that message, which then is the cell's reason.

Imports nothing of holdbench's (contracts/ is the ground floor): metrics/ and synthesizers/ both use it.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MISSING_EXIT = 3
SETTINGS_EXIT = 4
STAMP = ".requirements.sha256"


@dataclass(frozen=True)
class PluginEnv:
    """A plug-in's isolated interpreter: `name` (venv `.venv-<name>`, env var `HOLDBENCH_<NAME>_PYTHON`),
    its pinned `requirements` (repo-relative), the import `packages` its worker needs, and `why` it is
    isolated (shown by install.sh)."""

    name: str
    requirements: str
    packages: tuple[str, ...]
    why: str

    @property
    def venv(self) -> Path:
        return REPO / f".venv-{self.name}"

    @property
    def requirements_path(self) -> Path:
        return REPO / self.requirements

    @property
    def env_var(self) -> str:
        return f"HOLDBENCH_{self.name.upper()}_PYTHON"

    def python(self, override: str | os.PathLike | None = None) -> Path:
        """The interpreter to run: the override, else $HOLDBENCH_<NAME>_PYTHON, else the venv's."""
        if override:
            return Path(override)
        env = os.environ.get(self.env_var)
        return Path(env) if env else self.venv / "bin" / "python"

    def install_command(self) -> str:
        """The shell command that creates the venv the plug-in looks for by default (with its stamp)."""
        v, r = shlex.quote(str(self.venv)), shlex.quote(str(self.requirements_path))
        return (f"python3 -m venv {v} && {v}/bin/python -m pip install --no-deps -r {r} && "
                f"sha256sum {r} | cut -d' ' -f1 > {v}/{STAMP}")

    def unavailable(self, override: str | os.PathLike | None = None) -> str | None:
        """Why the plug-in cannot run here (no interpreter, a venv without its packages, a venv built
        from other requirements), or None. Only file-system looks: cheap enough to ask before every run."""
        python = self.python(override)
        default = python == self.venv / "bin" / "python"
        where = "" if default else f" (or point {self.env_var} at an interpreter that has it; {python} not found)"
        if not python.exists():
            return f"{self.name} not installed: {self.install_command()}{where}"
        root = python.parent.parent
        site = list(root.glob("lib/python*/site-packages"))
        absent = [p for p in self.packages if site and not any((d / p).is_dir() for d in site)]
        if absent:
            return f"{self.name} not installed: {self.install_command()} ({root} has no {', '.join(absent)} package)"
        stamp = root / STAMP
        if default and stamp.exists() and stamp.read_text().strip() != requirements_sha256(self.requirements_path):
            return (f"{self.name} venv {root} was built from other requirements than {self.requirements}: "
                    f"reinstall with {self.install_command()}")
        return None


def requirements_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


#: every plug-in environment; .ci/install.sh installs them in this order
PLUGINS: dict[str, PluginEnv] = {p.name: p for p in (
    PluginEnv("anonymeter", "metrics/anonymeter_requirements.txt", ("anonymeter",),
              "anonymeter 1.1 pins numpy < 1.27"),
    PluginEnv("dp", "synthesizers/dp_requirements.txt", ("snsynth", "DataSynthesizer"),
              "smartnoise-synth (MST) and DataSynthesizer (PrivBayes) draw from numpy's global RNG "
              "and pull jax and opacus"),
    PluginEnv("forest", "synthesizers/forest_requirements.txt", ("arfpy", "ForestDiffusion"),
              "arfpy draws from numpy's global RNG; ForestDiffusion pulls xgboost, lightgbm and catboost"),
)}


def run_worker(label: str, python: Path, worker: Path, workdir: Path, timeout: float,
               n_jobs: int = 1) -> tuple[dict, float, float]:
    """Run `worker` on a prepared directory; (parsed result.json, wall seconds, CPU seconds).

    A result `{"missing": ...}` (exit code MISSING_EXIT) is returned as it is; `{"error": ...}` (exit code
    SETTINGS_EXIT) is raised as a ValueError with that message. Raises RuntimeError
    naming `label` with the tail of the worker's stderr when it exits non-zero otherwise, times out,
    or leaves no readable JSON object.
    """
    threads = str(max(1, int(n_jobs)))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(OMP_NUM_THREADS=threads, OPENBLAS_NUM_THREADS=threads, MKL_NUM_THREADS=threads,
               NUMBA_NUM_THREADS=threads, POLARS_MAX_THREADS=threads, PYTHONHASHSEED="0")
    err_path = workdir / "worker.stderr"
    start, usage = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(err_path, "wb") as err, open(workdir / "worker.stdout", "wb") as out:
        proc = subprocess.Popen([str(python), "-I", str(worker), str(workdir)], stdout=out, stderr=err,
                                cwd=workdir, env=env, start_new_session=True)
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            raise RuntimeError(f"{label} worker timed out after {timeout:g} s ({python}); stderr tail:\n"
                               f"{_tail(err_path)}") from None
        except BaseException:  # KeyboardInterrupt, the harness's own timeout: leave no orphan behind
            _kill_group(proc)
            raise
    seconds, after = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - usage.ru_utime) + (after.ru_stime - usage.ru_stime)
    if code not in (0, MISSING_EXIT, SETTINGS_EXIT):
        raise RuntimeError(f"{label} worker failed with exit code {code} ({python}); stderr tail:\n"
                           f"{_tail(err_path)}")
    try:
        payload = json.loads((workdir / "result.json").read_text())
    except (OSError, ValueError) as exc:
        raise RuntimeError(f"{label} worker wrote no readable result.json ({exc}); stderr tail:\n"
                           f"{_tail(err_path)}") from None
    if not isinstance(payload, dict):
        raise RuntimeError(  # noqa: TRY004 - a broken worker, not a caller's wrong type
            f"{label} worker result.json is not a JSON object: {str(payload)[:300]}")
    if code == SETTINGS_EXIT:
        raise ValueError(str(payload.get("error", f"{label} refused its input (no message)")))
    if code == MISSING_EXIT:
        return {"missing": str(payload.get("missing", f"{label} cannot be imported"))}, seconds, cpu
    return payload, seconds, cpu


def _kill_group(proc: subprocess.Popen) -> None:
    """End the worker and whatever it started (its own session, so only processes we started)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def _tail(path: Path, n: int = 20) -> str:
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return "(no stderr)"
    return "\n".join(lines[-n:]) or "(empty stderr)"


def main(argv: list[str]) -> int:
    """`python3 -m holdbench.contracts.plugin_env`: one line per plug-in, `name<TAB>venv<TAB>requirements<TAB>why`
    (read by .ci/install.sh)."""
    if argv:
        print("usage: python3 -m holdbench.contracts.plugin_env", file=sys.stderr)
        return 2
    for p in PLUGINS.values():
        print(f"{p.name}\t{p.venv.relative_to(REPO)}\t{p.requirements}\t{p.why}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
