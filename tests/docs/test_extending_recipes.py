"""The two extension recipes, followed as a new user would: docs/extending/plugin-synthesizer.md (a
synthesizer in its own venv, outside the checkout) and docs/extending/figure.md (a study figure).

Each page's files are written where its blocks' first lines say (`# ~/...`, with HOME a scratch
folder), its shell blocks run through bash with the `export` lines of its first block. The plug-in's
venv is really built from the page's pinned requirements (about half a minute) and a study runs its
cell through it; the figure page's commands collect a study twice: slow tier. The quick tier runs the
plug-in worker's functions in this environment and checks that its folder is discovered, and draws
the page's figure module through joblib's worker processes.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests.docs_blocks import REPO, block

PLUGIN_PAGE = "docs/extending/plugin-synthesizer.md"


def _plugin_files() -> dict[str, str]:
    """The plug-in recipe's files, by the path its block's first line names."""
    texts = [
        block("docs/extending/plugin-synthesizer.md", "# ~/holdbench-plugins/toy/plugin.toml"),
        block("docs/extending/plugin-synthesizer.md", "# ~/holdbench-plugins/toy/requirements.txt"),
        block("docs/extending/plugin-synthesizer.md", "# ~/holdbench-plugins/toy/worker.py"),
        block("docs/extending/plugin-synthesizer.md", "# ~/holdbench-plugins/toy/__init__.py"),
        block("docs/extending/plugin-synthesizer.md", "# ~/holdbench-conf/synthesizer/toy_marginals.yaml"),
        block("docs/extending/plugin-synthesizer.md", "# ~/holdbench-conf/study/toy_study.yaml"),
    ]
    return {t.split("\n", 1)[0].removeprefix("# ").strip(): t for t in texts}


def _write(files: dict[str, str], home: Path) -> None:
    for where, text in files.items():
        assert where.startswith("~/"), where
        path = home / where[2:]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _env(home: Path, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("HOLDBENCH_CONF_DIR", "HOLDBENCH_CONFIG_PATH", "HOLDBENCH_PLUGIN_PATH", "PYTHONPATH")}
    env.update(HOME=str(home), HOLDBENCH_RESULTS_DIR=str(home / "results"), HOLDBENCH_CACHE_DIR=str(home / "cache"),
               HOLDBENCH_VENV_DIR=str(home / "venvs"), OMP_NUM_THREADS="1",
               MLFLOW_TRACKING_URI=f"sqlite:///{home / 'mlflow.db'}")
    env.update(extra)
    return env


def _bash(script: str, home: Path, env: dict, timeout: float = 1800) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=home, env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)


def _exports() -> str:
    return block("docs/extending/plugin-synthesizer.md", "export HOLDBENCH_PLUGIN_PATH=$HOME/holdbench-plugins   # folders of plug-in folders (as PATH: dir1:dir2)")


def test_plugin_recipe_worker_runs_here_and_the_folder_is_discovered(tmp_path, monkeypatch):
    """Quick tier: the page's worker fits and samples (in this environment), its folder is a plug-in."""
    from holdbench.contracts import plugin_env

    proc = _bash(_exports(), tmp_path, _env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    _write(_plugin_files(), tmp_path)
    folder = tmp_path / "holdbench-plugins" / "toy"
    spec = importlib.util.spec_from_file_location("toy_worker", folder / "worker.py")
    worker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(worker)
    train = pd.DataFrame({"c": ["a", "b", "b", "<NA>"], "x": [1.0, 2.0, float("nan"), 4.0]})
    fit, sample = worker.METHODS["marginals"]
    cfg = {"categorical": ["c"], "numeric": ["x"], "seed": 3, "params": {"noise": 0.5}}
    model, info = fit(train, cfg, cfg["params"])
    out = sample(model, 50, cfg)
    assert info == {"training_rows": 4} and list(out.columns) == ["c", "x"] and len(out) == 50
    assert set(out["c"]) <= {"a", "b", "<NA>"} and not out["x"].dropna().isin(train["x"]).all()  # noise added
    pd.testing.assert_frame_equal(out, sample(model, 50, cfg))  # seeded
    assert set(worker.LIBRARIES) == set(worker.METHODS)

    monkeypatch.setenv("HOLDBENCH_PLUGIN_PATH", str(tmp_path / "holdbench-plugins"))
    monkeypatch.setenv("HOLDBENCH_VENV_DIR", str(tmp_path / "venvs"))
    toy = plugin_env.get("toy")
    assert toy.folder == folder and toy.packages == ("numpy", "pandas", "pyarrow")
    why = toy.unavailable()
    assert why.startswith("toy not installed: python3 -m venv") and str(folder / "requirements.txt") in why


@pytest.mark.slow
def test_plugin_recipe_end_to_end(tmp_path):
    """The page followed as written: its venv built from its requirements, a study whose toy cell runs in it."""
    _write(_plugin_files(), tmp_path)
    run = block("docs/extending/plugin-synthesizer.md", "python3 -m holdbench.contracts.plugin_env install toy")
    env = _env(tmp_path)
    proc = _bash(_exports() + "\n" + run, tmp_path, env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert (tmp_path / "venvs" / ".venv-toy" / "bin" / "python").exists()
    assert not (REPO / ".venv-toy").exists()
    study = tmp_path / "results" / "toy_study"
    board = pd.read_csv(study / "leaderboard.csv")
    rows = board.set_index("synthesizer")
    assert set(rows.index) == {"toy_marginals", "holdout"}, board
    assert rows.loc["toy_marginals", "status"] == "ok", board.to_string()
    gens = list(study.rglob("toy_marginals/generate.json"))
    assert len(gens) == 1
    gen = json.loads(gens[0].read_text())
    text = json.dumps(gen)
    assert '"plugin": "toy"' in text and '"training_rows"' in text and '"noise": 0.1' in text
    # installing again: the stamp matches, nothing is rebuilt
    proc = _bash(_exports() + "\npython3 -m holdbench.contracts.plugin_env install toy", tmp_path, env)
    assert proc.returncode == 0 and "toy's own venv" in proc.stdout and "already installed" in proc.stdout


@pytest.mark.slow  # two collects of a study through the command line (~45 s)
def test_figure_recipe_draws_the_figure_into_a_collected_report(tmp_path):
    """docs/extending/figure.md followed as written: the module saved where its first line says, the
    page's commands run on a collected study (a fabricated one named demo): the figure is drawn, and
    report.html embeds it under the module's caption, after the trade-off figure."""
    import base64
    import html

    from tests.benchmark.conftest import build_study

    setup = block("docs/extending/figure.md", "export HOLDBENCH_FIGURE_PATH=$HOME/holdbench-figures   # folders of figure modules (as PATH: dir1:dir2)")
    module = block("docs/extending/figure.md", "# ~/holdbench-figures/f3_by_seed.py")
    report = block("docs/extending/figure.md", "holdbench report demo")
    study = build_study(tmp_path / "results", name="demo")
    env = _env(tmp_path)
    proc = _bash(setup, tmp_path, env)
    assert proc.returncode == 0, proc.stderr
    _write({module.split("\n", 1)[0].removeprefix("# ").strip(): module}, tmp_path)
    proc = _bash(setup + "\n" + report, tmp_path, env, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    plots = study.path / "plots"
    drawn = sorted(p.name for p in plots.glob("f3_by_seed_*.png"))
    assert drawn == sorted(f"f3_by_seed_{d}.png" for d in study.datasets)
    page = (study.path / "report.html").read_text()
    caption = html.escape("F3 ratio of every cell, one dot per split seed (1 = as close to T as the holdout); "
                          "the spread of a row is the seeds' variation.")
    assert page.count(caption) == len(study.datasets)
    for name in drawn:
        assert base64.b64encode((plots / name).read_bytes()).decode() in page
    assert page.index(base64.b64encode((plots / "tradeoff.png").read_bytes()).decode()) < page.index(caption)
    # without the folder on the path, the next collect has no such figure (and removes the stale file)
    env.pop("HOLDBENCH_FIGURE_PATH", None)
    proc = _bash(report, tmp_path, env, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert not list(plots.glob("f3_by_seed_*.png")) and caption not in (study.path / "report.html").read_text()


def test_a_user_figure_is_drawn_by_joblibs_worker_processes(tmp_path):
    """make_plots(n_jobs=2) hands the page's plot function to fresh worker processes, which import it by
    name: the figure folder must be part of the plots package there too."""
    from tests.benchmark.conftest import build_study

    module = block("docs/extending/figure.md", "# ~/holdbench-figures/f3_by_seed.py")
    _write({module.split("\n", 1)[0].removeprefix("# ").strip(): module}, tmp_path)
    study = build_study(tmp_path / "results", name="demo")
    code = ("import sys\nfrom holdbench.benchmark.outputs.plots import make_plots\n"
            "from holdbench.benchmark.outputs.results import load_results\n"
            "stats = {}\nmake_plots(load_results(sys.argv[1]), n_jobs=2, stats=stats)\nprint(stats)\n")
    env = _env(tmp_path, HOLDBENCH_FIGURE_PATH=str(tmp_path / "holdbench-figures"))
    proc = subprocess.run([sys.executable, "-c", code, str(study.path)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=900, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert sorted(p.name for p in (study.path / "plots").glob("f3_by_seed_*.png")) == \
        sorted(f"f3_by_seed_{d}.png" for d in study.datasets)


def test_figure_page_states_the_shipped_figures_order():
    """The page's list of the shipped figures' ORDER values is the modules' own (the page repeats them so
    a reader can place a figure): it fails when a module's ORDER changes and the page does not."""
    import re

    from holdbench.benchmark.outputs.plots import figure_modules

    text = (REPO / "docs/extending/figure.md").read_text()
    listed = re.search(r"its place in the report \(([^)]*)\)", " ".join(text.split())).group(1)
    pairs = dict((name, int(n)) for name, n in re.findall(r"([a-z-]+(?: [a-z-]+)?) (\d+)", listed))
    shipped = {m.__name__.rsplit(".", 1)[1]: m.ORDER for m in figure_modules()}
    names = {"fidelity": "fidelity", "privacy": "privacy", "coherence": "coherence", "trade-off": "tradeoff",
             "utility": "utility", "attacks": "attacks", "disclosure": "disclosure", "frontier": "frontier",
             "audit": "audit", "drill-downs": "drilldown"}
    assert {names[k]: v for k, v in pairs.items()} == shipped
