"""holdbench.contracts.plugin_env: finding, checking and calling a plug-in's isolated interpreter."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pandas as pd
import pytest
from holdbench.contracts import plugin_env
from holdbench.contracts.plugin_env import (
    MISSING_EXIT,
    SETTINGS_EXIT,
    PluginEnv,
    requirements_sha256,
    run_worker,
)


def _fake_env(tmp_path: Path, monkeypatch, packages=("libx",)) -> PluginEnv:
    monkeypatch.setattr(plugin_env, "REPO", tmp_path)
    monkeypatch.delenv(plugin_env.VENV_DIR_VAR, raising=False)
    (tmp_path / "fake").mkdir()
    (tmp_path / "fake" / "requirements.txt").write_text("libx==1.0\n")
    return PluginEnv("fake", tmp_path / "fake", tuple(packages), "test")


def _venv(env: PluginEnv, with_package: bool = True) -> Path:
    bin_dir = env.venv / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").write_text("")
    site = env.venv / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    if with_package:
        (site / "libx").mkdir()
    return site


def test_every_shipped_plugin_folder_is_discovered_and_listed(monkeypatch):
    monkeypatch.delenv(plugin_env.PATH_VAR, raising=False)
    monkeypatch.delenv(plugin_env.VENV_DIR_VAR, raising=False)
    lines = [ln.split("\t") for ln in _main_output().splitlines()]
    # the folders, independently of the discovery: every plugin.toml under the two plug-in roots
    folders = {p.parent.name: p.parent for root in ("synthesizers/plugins", "metrics/plugins")
               for p in (plugin_env.REPO / root).glob("*/plugin.toml")}
    assert sorted(ln[0] for ln in lines) == sorted(folders) and {"anonymeter", "dp", "forest"} <= set(folders)
    for name, venv, req, why in lines:
        assert venv == str(plugin_env.REPO / f".venv-{name}") and why
        assert plugin_env.REPO / req == folders[name] / "requirements.txt" and (folders[name] / "worker.py").is_file()


def _main_output() -> str:
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert plugin_env.main([]) == 0
    return buf.getvalue()


def test_no_interpreter_names_the_install_command(tmp_path, monkeypatch):
    env = _fake_env(tmp_path, monkeypatch)
    why = env.unavailable()
    assert why.startswith("fake not installed: python3 -m venv") and "--no-deps -r" in why and "fake/requirements.txt" in why


def test_venv_without_the_package_is_unavailable(tmp_path, monkeypatch):
    env = _fake_env(tmp_path, monkeypatch)
    _venv(env, with_package=False)
    assert "has no libx package" in env.unavailable()


def test_stamp_decides_whether_the_venv_is_current(tmp_path, monkeypatch):
    env = _fake_env(tmp_path, monkeypatch)
    _venv(env)
    assert env.unavailable() is None  # no stamp (built by hand): accepted
    (env.venv / plugin_env.STAMP).write_text(requirements_sha256(env.requirements_path) + "\n")
    assert env.unavailable() is None
    env.requirements_path.write_text("libx==2.0\n")
    assert "built from other requirements" in env.unavailable()


def test_env_var_overrides_the_venv(tmp_path, monkeypatch):
    env = _fake_env(tmp_path, monkeypatch)
    monkeypatch.setenv(env.env_var, str(tmp_path / "elsewhere" / "python"))
    assert env.python() == tmp_path / "elsewhere" / "python"
    assert "HOLDBENCH_FAKE_PYTHON" in env.unavailable()


@pytest.mark.parametrize("code, payload, expect", [
    (0, {"x": 1}, {"x": 1}),
    (MISSING_EXIT, {"missing": "No module named libx"}, {"missing": "No module named libx"}),
])
def test_run_worker_reads_the_result(tmp_path, code, payload, expect):
    worker = tmp_path / "w.py"
    worker.write_text("import json, sys, pathlib\n"
                      f"pathlib.Path(sys.argv[1], 'result.json').write_text({json.dumps(json.dumps(payload))})\n"
                      f"sys.exit({code})\n")
    work = tmp_path / "work"
    work.mkdir()
    got, seconds, _ = run_worker("libx", Path(sys.executable), worker, work, 30)
    assert got == expect and seconds > 0


def test_run_worker_raises_the_workers_own_diagnosis_as_a_value_error(tmp_path):
    worker = tmp_path / "w.py"
    worker.write_text("import json, sys, pathlib\n"
                      "pathlib.Path(sys.argv[1], 'result.json').write_text(json.dumps({'error': \"column 'x': no bounds\"}))\n"
                      f"sys.exit({SETTINGS_EXIT})\n")
    with pytest.raises(ValueError, match="^column 'x': no bounds$"):
        run_worker("libx", Path(sys.executable), worker, tmp_path, 30)


def test_run_worker_failure_names_the_plugin_and_shows_stderr(tmp_path):
    worker = tmp_path / "w.py"
    worker.write_text("import sys\nprint('boom here', file=sys.stderr)\nsys.exit(1)\n")
    with pytest.raises(RuntimeError, match=r"libx worker failed with exit code 1(.|\n)*boom here"):
        run_worker("libx", Path(sys.executable), worker, tmp_path, 30)


# ------------------------------------------------------------------ discovery of plug-in folders
def _plugin_folder(parent: Path, name: str, toml: str = 'why = "clashing pins"\npackages = ["libx"]\n') -> Path:
    folder = parent / name
    folder.mkdir(parents=True)
    (folder / "plugin.toml").write_text(toml)
    (folder / "requirements.txt").write_text("libx==1.0\n")
    (folder / "worker.py").write_text("")
    return folder


def test_a_folder_on_the_plugin_path_is_discovered(tmp_path, monkeypatch):
    folder = _plugin_folder(tmp_path / "mine", "toyx")
    monkeypatch.setenv(plugin_env.PATH_VAR, str(tmp_path / "mine"))
    monkeypatch.setenv(plugin_env.VENV_DIR_VAR, str(tmp_path / "venvs"))
    found = plugin_env.discover()
    assert {"anonymeter", "dp", "forest", "toyx"} <= set(found)
    toy = found["toyx"]
    assert (toy.folder, toy.packages, toy.why) == (folder.resolve(), ("libx",), "clashing pins")
    assert toy.venv == tmp_path / "venvs" / ".venv-toyx" and toy.worker == folder.resolve() / "worker.py"
    assert plugin_env.get("toyx") == toy
    monkeypatch.delenv(plugin_env.PATH_VAR)
    with pytest.raises(KeyError, match="no plug-in 'toyx'.*HOLDBENCH_PLUGIN_PATH"):
        plugin_env.get("toyx")


@pytest.mark.parametrize("toml, match", [
    ('packages = ["libx"]\n', "`why` must say"),
    ('why = "x"\n', "`packages` must list"),
    ('why = "x"\npackages = ["libx"]\nvenv = "y"\n', r"unknown key\(s\) \['venv'\]"),
    ('why = "x\n', "cannot read"),
])
def test_an_incomplete_plugin_toml_is_refused_naming_the_file(tmp_path, toml, match):
    folder = _plugin_folder(tmp_path, "bad", toml)
    with pytest.raises(ValueError, match=match) as err:
        plugin_env.load_plugin(folder)
    assert "plugin.toml" in str(err.value)


def test_a_plugin_folder_without_its_worker_is_refused(tmp_path):
    folder = _plugin_folder(tmp_path, "bad")
    (folder / "worker.py").unlink()
    with pytest.raises(ValueError, match=r"worker\.py is missing"):
        plugin_env.load_plugin(folder)


def test_two_plugins_of_one_name_are_an_error(tmp_path, monkeypatch):
    _plugin_folder(tmp_path / "a", "twin")
    _plugin_folder(tmp_path / "b", "twin")
    monkeypatch.setenv(plugin_env.PATH_VAR, f"{tmp_path / 'a'}:{tmp_path / 'b'}")
    with pytest.raises(ValueError, match="two plug-ins named 'twin'"):
        plugin_env.discover()


def test_a_missing_folder_on_the_plugin_path_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv(plugin_env.PATH_VAR, str(tmp_path / "nowhere"))
    with pytest.raises(ValueError, match="HOLDBENCH_PLUGIN_PATH: .*nowhere is not a folder"):
        plugin_env.discover()


def test_install_skips_a_current_venv_and_rebuilds_a_stale_one(tmp_path, monkeypatch):
    _plugin_folder(tmp_path / "mine", "toyx")
    monkeypatch.setenv(plugin_env.PATH_VAR, str(tmp_path / "mine"))
    monkeypatch.setenv(plugin_env.VENV_DIR_VAR, str(tmp_path / "venvs"))
    toy = plugin_env.get("toyx")
    ran = []
    monkeypatch.setattr(plugin_env.subprocess, "run", lambda cmd, **kw: ran.append(cmd))
    _venv(toy)
    (toy.venv / plugin_env.STAMP).write_text(requirements_sha256(toy.requirements_path) + "\n")
    assert plugin_env.install(["toyx"], say=lambda m: None) == [] and ran == []
    toy.requirements_path.write_text("libx==2.0\n")
    assert plugin_env.install(["toyx"], say=lambda m: None) == ["toyx"]
    assert ran == [toy.install_command()] and not toy.venv.exists()  # the stale venv removed first


def test_install_builds_venvs_at_once_and_names_a_failed_one_with_its_log(tmp_path, monkeypatch):
    for name in ("goody", "bady"):
        _plugin_folder(tmp_path / "mine", name)
    monkeypatch.setenv(plugin_env.PATH_VAR, str(tmp_path / "mine"))
    monkeypatch.setenv(plugin_env.VENV_DIR_VAR, str(tmp_path / "venvs"))
    times = tmp_path / "times"
    times.mkdir()

    def command(self):  # each notes when it started and ended; bady fails as pip would
        end = "echo pip said no; exit 3" if self.name == "bady" else f"echo built {self.name}"
        return (f"date +%s.%N > {times}/{self.name}.start; sleep 1; date +%s.%N > {times}/{self.name}.end; {end}")

    monkeypatch.setattr(PluginEnv, "install_command", command)
    said = []
    with pytest.raises(RuntimeError) as err:
        plugin_env.install(["goody", "bady"], say=said.append, jobs=2)
    text = str(err.value)
    assert "bady" in text and "exited with 3" in text and "pip said no" in text and "goody" not in text
    assert "built goody" in (tmp_path / "venvs" / ".venv-goody.install.log").read_text()
    assert any(m.startswith("goody's own venv installed") for m in said)
    span = {n: (float((times / f"{n}.start").read_text()), float((times / f"{n}.end").read_text()))
            for n in ("goody", "bady")}
    assert span["goody"][0] < span["bady"][1] and span["bady"][0] < span["goody"][1], span  # side by side
    assert plugin_env.main(["install", "bady"]) == 1  # the command line says so and exits 1, no traceback


def test_the_installed_venvs_stamps_match_the_moved_requirements_files():
    """A requirements file that moved into its plug-in folder unchanged keeps its venv current (the stamp
    is the file's sha256): checked on the venvs installed here."""
    installed = [p for p in plugin_env.discover().values() if (p.venv / plugin_env.STAMP).is_file()]
    if not installed:
        pytest.skip("no plug-in venv installed here")
    for p in installed:
        assert p.current(), f"{p.name}: stamp {(p.venv / plugin_env.STAMP).read_text().strip()} != {p.requirements}"


# ------------------------------------------------------------------ the shared worker side (holdbench_worker.py)
SHARED_WORKER = plugin_env.REPO / "synthesizers" / "plugins" / "holdbench_worker.py"


def _stage(tmp_path: Path, worker_code: str, method: str = "m", stage: str = "fit") -> Path:
    """A work directory for the shared worker: a one-column T, the plug-in's worker.py, config.json."""
    import pandas as pd

    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "worker.py").write_text(worker_code)
    work = tmp_path / "work"
    work.mkdir()
    pd.DataFrame({"c": ["a", "b"], "x": [1.0, 2.0]}).to_parquet(work / "train.parquet", index=False)
    (work / "config.json").write_text(json.dumps({
        "stage": stage, "worker": str(tmp_path / "worker.py"), "method": method, "params": {}, "seed": 1, "n": 3,
        "categorical": ["c"], "numeric": ["x"], "integer": [], "missing_level": "<NA>",
        "model": str(tmp_path / "model.pkl")}))
    return work


def test_shared_worker_runs_the_plugins_fit_and_sample(tmp_path):
    code = ("import numpy as np, pandas as pd\nLIBRARIES = {'m': ('numpy', 'numpy')}\n"
            "def fit(train, cfg, p): return list(train['c']), {'rows': len(train)}\n"
            "def sample(model, n, cfg): return pd.DataFrame({'c': [model[0]] * n, 'x': np.random.random(n)})\n"
            "METHODS = {'m': (fit, sample)}\n")
    work = _stage(tmp_path, code)
    got, _, _ = run_worker("m", Path(sys.executable), SHARED_WORKER, work, 60)
    assert got["info"] == {"rows": 2} and "numpy" in got["versions"]
    cfg = json.loads((work / "config.json").read_text())
    (work / "config.json").write_text(json.dumps({**cfg, "stage": "sample"}))
    run_worker("m", Path(sys.executable), SHARED_WORKER, work, 60)
    import pandas as pd

    out = pd.read_parquet(work / "synthetic.parquet")
    assert list(out["c"]) == ["a"] * 3 and out["x"].dtype == "float64"


def test_shared_worker_reports_a_missing_library_and_a_settings_error(tmp_path):
    missing = _stage(tmp_path / "a", "LIBRARIES = {'m': ('no_such_lib_xyz', 'x')}\nMETHODS = {'m': (None, None)}\n")
    got, _, _ = run_worker("m", Path(sys.executable), SHARED_WORKER, missing, 60)
    assert "no_such_lib_xyz" in got["missing"]
    refused = _stage(tmp_path / "b", "from holdbench_worker import SettingsError\n"
                                     "LIBRARIES = {'m': ('json', 'pip')}\n"
                                     "def fit(t, c, p): raise SettingsError(\"column 'x': no bounds\")\n"
                                     "METHODS = {'m': (fit, None)}\n")
    with pytest.raises(ValueError, match="^column 'x': no bounds$"):
        run_worker("m", Path(sys.executable), SHARED_WORKER, refused, 60)


def test_shared_worker_names_a_plugin_worker_without_methods(tmp_path):
    work = _stage(tmp_path, "LIBRARIES = {}\n")
    with pytest.raises(RuntimeError, match=r"worker\.py defines no METHODS dict"):
        run_worker("m", Path(sys.executable), SHARED_WORKER, work, 60)


@pytest.mark.parametrize("stage, payload, named", [
    ("fit", {"versions": {}}, "'info' (missing)"),
    ("fit", {"versions": {}, "info": "text"}, "'info' (str, not dict)"),
    ("sample", {}, "'versions' (missing)"),
])
def test_a_worker_result_without_its_keys_is_named_not_a_key_error(stage, payload, named):
    from holdbench.synthesizers._isolated import checked_result

    with pytest.raises(RuntimeError) as err:
        checked_result(payload, stage, "mst")
    assert named in str(err.value) and "mst worker's" in str(err.value)
    assert checked_result({"versions": {}, "info": {}}, "fit", "mst") == {"versions": {}, "info": {}}


def test_a_fit_whose_worker_wrote_no_info_raises_the_named_error(monkeypatch):
    from holdbench.benchmark.config import build_synthesizer, synthesizer_config
    from holdbench.contracts.schema import Schema
    from holdbench.synthesizers.base import FitContext

    synth = build_synthesizer(synthesizer_config("mst_eps1"))
    monkeypatch.setattr(type(synth.environment), "unavailable", lambda self, override=None: None)
    monkeypatch.setattr(plugin_env, "run_worker", lambda *a, **k: ({"versions": {"smartnoise-synth": "x"}}, 0.0, 0.0))
    train = pd.DataFrame({"a": ["x", "y"] * 5, "b": list(range(10))})
    # the domain declared public: 10 rows are too few for levels estimated under DP
    schema = dataclasses.replace(Schema.infer("toy", train), columns=tuple(
        dataclasses.replace(c, levels=("x", "y")) if c.name == "a" else dataclasses.replace(c, bounds=(0.0, 9.0))
        for c in Schema.infer("toy", train).columns))
    with pytest.raises(RuntimeError, match=r"mst worker's fit result lacks 'info' \(missing\)"):
        synth.fit(train, FitContext(schema, 0, "toy"))
