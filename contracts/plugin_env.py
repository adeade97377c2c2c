"""Plug-in environments: libraries whose pins clash with holdbench's run in their own venv.

One mechanism for every such plug-in (anonymeter's attacks, the DP and forest generators, a user's own):

- a plug-in is one folder, discovered by scanning `synthesizers/plugins/*/` and `metrics/plugins/*/`
  of this package and every folder listed in `$HOLDBENCH_PLUGIN_PATH` (os.pathsep-separated, each
  holding plug-in folders): a folder is a plug-in when it holds `plugin.toml` (`why` it is isolated,
  the import `packages` its venv must have), its pinned `requirements.txt` and its `worker.py` (the
  code that runs inside the venv); the plug-in's name is the folder's name;
- its venv is `.venv-<name>` in `$HOLDBENCH_VENV_DIR` (default: the checkout's root); the interpreter
  is, in this order, an explicit override, `$HOLDBENCH_<NAME>_PYTHON`, the venv's `bin/python`;
- `python3 -m holdbench.contracts.plugin_env install [NAME ...]` (run by `.ci/install.sh`) installs every
  discovered venv from its requirements file and writes the file's sha256 into
  `<venv>/.requirements.sha256`; a venv whose stamp differs from the requirements file is out of date
  and reported as not installed, and is rebuilt by `install`;
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
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MISSING_EXIT = 3
SETTINGS_EXIT = 4
STAMP = ".requirements.sha256"


#: where the shipped plug-in folders live, relative to REPO (this package's root)
PLUGIN_ROOTS = ("synthesizers/plugins", "metrics/plugins")
#: the files a plug-in folder holds
METADATA, REQUIREMENTS, WORKER = "plugin.toml", "requirements.txt", "worker.py"
PATH_VAR, VENV_DIR_VAR = "HOLDBENCH_PLUGIN_PATH", "HOLDBENCH_VENV_DIR"


@dataclass(frozen=True)
class PluginEnv:
    """A plug-in's isolated interpreter: `name` (venv `.venv-<name>`, env var `HOLDBENCH_<NAME>_PYTHON`),
    its `folder` (holding plugin.toml, requirements.txt and worker.py), the import `packages` its
    worker needs, and `why` it is isolated (shown by `install`)."""

    name: str
    folder: Path
    packages: tuple[str, ...]
    why: str

    @property
    def venv(self) -> Path:
        return Path(os.environ.get(VENV_DIR_VAR) or REPO) / f".venv-{self.name}"

    @property
    def requirements_path(self) -> Path:
        return self.folder / REQUIREMENTS

    @property
    def requirements(self) -> str:
        """The requirements file as shown to a user: relative to the checkout when inside it."""
        return _shown(self.requirements_path)

    @property
    def worker(self) -> Path:
        return self.folder / WORKER

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

    def current(self) -> bool:
        """The venv exists and its stamp is the requirements file's sha256 (what `install` leaves)."""
        stamp = self.venv / STAMP
        return (self.venv / "bin" / "python").exists() and stamp.is_file() and \
            stamp.read_text().strip() == requirements_sha256(self.requirements_path)

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


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(REPO))
    except ValueError:
        return str(path)


def search_path() -> list[Path]:
    """The folders scanned for plug-in folders: the shipped ones, then `$HOLDBENCH_PLUGIN_PATH`'s."""
    extra = [Path(p).expanduser() for p in os.environ.get(PATH_VAR, "").split(os.pathsep) if p.strip()]
    for p in extra:
        if not p.is_dir():
            raise ValueError(f"{PATH_VAR}: {p} is not a folder (it lists folders that hold plug-in folders)")
    return [REPO / r for r in PLUGIN_ROOTS] + extra


def load_plugin(folder: Path) -> PluginEnv:
    """The plug-in of one folder, from its plugin.toml; a clear error naming the file when it is incomplete."""
    meta_path = folder / METADATA
    try:
        meta = tomllib.loads(meta_path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"plug-in {folder.name}: cannot read {meta_path}: {exc}") from None
    unknown = sorted(set(meta) - {"why", "packages"})
    if unknown:
        raise ValueError(f"{meta_path}: unknown key(s) {unknown} (known: why, packages)")
    why, packages = meta.get("why"), meta.get("packages")
    if not isinstance(why, str) or not why.strip():
        raise ValueError(f"{meta_path}: `why` must say why the plug-in needs its own venv (a non-empty string)")
    if not isinstance(packages, list) or not packages or not all(isinstance(p, str) and p for p in packages):
        raise ValueError(f"{meta_path}: `packages` must list the import packages its venv must have, "
                         "e.g. packages = [\"snsynth\"]")
    for needed in (REQUIREMENTS, WORKER):
        if not (folder / needed).is_file():
            raise ValueError(f"plug-in {folder.name}: {folder / needed} is missing (a plug-in folder holds "
                             f"{METADATA}, {REQUIREMENTS} and {WORKER})")
    return PluginEnv(folder.name, folder.resolve(), tuple(packages), why.strip())


def discover() -> dict[str, PluginEnv]:
    """Every plug-in on the search path, by name (in search-path order, then by name); two folders of
    one name are an error naming both."""
    found: dict[str, PluginEnv] = {}
    for root in search_path():
        for meta in sorted(root.glob(f"*/{METADATA}")):
            plugin = load_plugin(meta.parent)
            if plugin.name in found:
                raise ValueError(f"two plug-ins named {plugin.name!r}: {found[plugin.name].folder} and "
                                 f"{plugin.folder}")
            found[plugin.name] = plugin
    return found


def get(name: str) -> PluginEnv:
    """The plug-in called `name`; a KeyError naming the folders searched when there is none."""
    plugins = discover()
    if name not in plugins:
        raise KeyError(f"no plug-in {name!r} (a folder {name}/ with {METADATA}) in "
                       f"{', '.join(map(str, search_path()))}; add its parent folder to ${PATH_VAR}")
    return plugins[name]


def install(names: list[str] | None = None, say=print, jobs: int | None = None) -> list[str]:
    """Install the venv of each named plug-in (default: every discovered one) with its install_command,
    unless it is current; returns the names installed now. Idempotent: an unchanged requirements file
    (same sha256, wherever it lives) is not installed again. Up to `jobs` venvs (default: the machine's
    cores) are built at once, each command's output in `<venv dir>/.venv-<name>.install.log`; a failed
    one is named with the end of its log after the others finished (RuntimeError)."""
    plugins = discover()
    chosen = [get(n) for n in names] if names else list(plugins.values())
    todo = []
    for p in chosen:
        if p.current():
            say(f"{p.name}'s own venv in {p.venv}: already installed")
            continue
        say(f"{p.name}'s own venv in {p.venv} ({p.why}), from {p.requirements}")
        if p.venv.exists():
            shutil.rmtree(p.venv)
        todo.append(p)

    def build(p: PluginEnv) -> str | None:
        log = p.venv.with_name(f"{p.venv.name}.install.log")
        log.parent.mkdir(parents=True, exist_ok=True)
        start = time.monotonic()
        with open(log, "w") as fh:
            try:
                subprocess.run(p.install_command(), shell=True, check=True, stdout=fh, stderr=subprocess.STDOUT)
            except subprocess.CalledProcessError as err:
                return f"{p.name}: `{p.install_command()}` exited with {err.returncode}; the end of {log}:\n{_tail(log)}"
        say(f"{p.name}'s own venv installed ({time.monotonic() - start:.0f} s; pip's output in {log})")
        return None

    workers = max(1, min(len(todo), jobs or os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:  # threads only wait for the pip processes
        failed = [f for f in pool.map(build, todo) if f]
    if failed:
        raise RuntimeError("plug-in venvs not installed:\n" + "\n".join(failed))
    return [p.name for p in todo]


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
    """`python3 -m holdbench.contracts.plugin_env`: one line per plug-in,
    `name<TAB>venv<TAB>requirements<TAB>why`; `... install [NAME ...]`: install their venvs."""
    if argv and argv[0] == "install":
        try:
            install(argv[1:] or None, say=lambda m: print(f"[plugin_env] {m}", flush=True))
        except RuntimeError as err:
            print(f"[plugin_env] {err}", file=sys.stderr)
            return 1
        return 0
    if argv:
        print("usage: python3 -m holdbench.contracts.plugin_env [install [NAME ...]]", file=sys.stderr)
        return 2
    for p in discover().values():
        print(f"{p.name}\t{p.venv}\t{p.requirements}\t{p.why}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
