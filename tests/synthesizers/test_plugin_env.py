"""holdbench.contracts.plugin_env: finding, checking and calling a plug-in's isolated interpreter."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from holdbench.contracts import plugin_env
from holdbench.contracts.plugin_env import MISSING_EXIT, SETTINGS_EXIT, PluginEnv, requirements_sha256, run_worker


def _fake_env(tmp_path: Path, monkeypatch, packages=("libx",)) -> PluginEnv:
    monkeypatch.setattr(plugin_env, "REPO", tmp_path)
    (tmp_path / "req.txt").write_text("libx==1.0\n")
    return PluginEnv("fake", "req.txt", tuple(packages), "test")


def _venv(env: PluginEnv, with_package: bool = True) -> Path:
    bin_dir = env.venv / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").write_text("")
    site = env.venv / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    if with_package:
        (site / "libx").mkdir()
    return site


def test_every_plugin_has_its_requirements_file_and_listing():
    lines = [ln.split("\t") for ln in _main_output().splitlines()]
    assert [ln[0] for ln in lines] == list(plugin_env.PLUGINS)
    for name, venv, req, why in lines:
        assert venv == f".venv-{name}" and (plugin_env.REPO / req).is_file() and why


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
    assert why.startswith("fake not installed: python3 -m venv") and "--no-deps -r" in why and "req.txt" in why


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
