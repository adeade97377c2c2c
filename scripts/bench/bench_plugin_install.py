"""The plug-in venvs' install (`python3 -m holdbench.contracts.plugin_env install`, run by .ci/install.sh)
against the way it was done before, both in this run, on every shipped plug-in's pinned requirements.

  baseline  one venv after another, pip's default: every module of every package byte-compiled
            (`pip install --no-deps -r requirements.txt`)
  install   holdbench.contracts.plugin_env.install: the same command, up to one venv per core at once

Each builds every plug-in's venv into its own fresh temporary folder ($HOLDBENCH_VENV_DIR), from the same
local wheel cache pip uses here. Printed: wall seconds and CPU seconds (user + sys of the pip processes)
of each, and their ratios; then `python -c "import <its packages>"` in each plug-in's venv of both, to show
the venvs are alike. (pip's byte-compilation is about half of the install's CPU, but `--no-compile` does
not pay here: where PYTHONDONTWRITEBYTECODE is set, as on these machines, every later start of a worker
would compile its imports again, about 4 s more for the DP plug-in's.)

Usage: python scripts/bench/bench_plugin_install.py [--only NAME ...] [--jobs N]
Not collected by pytest.
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from holdbench.contracts import plugin_env


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _timed(fn) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), _children_cpu()
    fn()
    return time.perf_counter() - wall, _children_cpu() - cpu


def _baseline(plugins: list[plugin_env.PluginEnv], folder: Path) -> None:
    for p in plugins:
        v, r = shlex.quote(str(folder / p.venv.name)), shlex.quote(str(p.requirements_path))
        subprocess.run(f"python3 -m venv {v} && {v}/bin/python -m pip install -q --no-deps -r {r}", shell=True,
                       check=True, stdout=subprocess.DEVNULL)


def _import_seconds(python: Path, packages: tuple[str, ...]) -> float:
    start = time.perf_counter()
    subprocess.run([str(python), "-c", "import " + ", ".join(packages)], check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="+", metavar="NAME", help="these plug-ins (default: every discovered one)")
    ap.add_argument("--jobs", type=int, default=None, help="install's concurrent venvs (default: the cores)")
    args = ap.parse_args()
    names = args.only or list(plugin_env.discover())
    print(f"plug-ins: {', '.join(names)}; {os.cpu_count()} cores; load average {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="bench-venvs-") as tmp:
        base_dir, new_dir = Path(tmp) / "baseline", Path(tmp) / "install"
        base_dir.mkdir()
        os.environ[plugin_env.VENV_DIR_VAR] = str(base_dir)
        plugins = [plugin_env.get(n) for n in names]
        b_wall, b_cpu = _timed(lambda: _baseline(plugins, base_dir))
        os.environ[plugin_env.VENV_DIR_VAR] = str(new_dir)
        n_wall, n_cpu = _timed(lambda: plugin_env.install(names, say=lambda m: None, jobs=args.jobs))
        print(f"{'':10s}{'wall s':>9s}{'CPU s':>9s}")
        print(f"{'baseline':10s}{b_wall:9.1f}{b_cpu:9.1f}")
        print(f"{'install':10s}{n_wall:9.1f}{n_cpu:9.1f}")
        print(f"ratio install/baseline: wall {n_wall / b_wall:.2f}, CPU {n_cpu / b_cpu:.2f}")
        print("imports of each plug-in's packages (s): baseline's venv | install's venv")
        for p in plugin_env.discover().values():
            if p.name not in names:
                continue
            base = _import_seconds(base_dir / p.venv.name / "bin" / "python", p.packages)
            new = _import_seconds(p.venv / "bin" / "python", p.packages)
            print(f"  {p.name:14s} {base:6.1f} | {new:6.1f}   ({', '.join(p.packages)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
