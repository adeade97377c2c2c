"""The shape of the code: one namespace, imports run one way, and every config composes and instantiates.

- every import of our code goes through the `holdbench` namespace (never a bare `benchmark`, `metrics`,
  `synthesizers` or `contracts`), and pyproject.toml installs every folder that holds our code;
- contracts/ (the ground floor) imports nothing of holdbench;
- synthesizers/ and metrics/ never import benchmark/ (the harness uses them, never the reverse);
- no two modules import each other, directly or through others (no import circle);
- every synthesizer config (and variant) and every metrics family resolves, passes its schema
  and builds; every registry metric has a unique name and says which way is better.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from holdbench.benchmark.config import (
    available,
    build_metric_families,
    build_synthesizer,
    check_metrics_config,
    load_group,
    metric_specs,
    synthesizer_config,
    to_container,
)

REPO = Path(__file__).resolve().parents[1]
LAYERS = ("contracts", "metrics", "synthesizers", "benchmark")
FORBIDDEN = {"contracts": {"benchmark", "synthesizers", "metrics"},
             "synthesizers": {"benchmark"}, "metrics": {"benchmark", "synthesizers"}}


def _modules(path: Path) -> list[str]:
    """Every module `path` imports (absolute imports, at any depth of the file)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out += [node.module] + [f"{node.module}.{a.name}" for a in node.names]
    return out


def _imports(path: Path) -> set[str]:
    """The layers of ours that `path` imports through the namespace (holdbench.metrics... -> metrics)."""
    return {m.split(".")[1] for m in _modules(path) if m.startswith("holdbench.") and m.count(".") >= 1}


def _bare(path: Path) -> set[str]:
    """Imports of our layers that bypass the namespace (`import metrics`, `from benchmark.x import y`)."""
    return {m for m in _modules(path) if m.split(".")[0] in LAYERS}


def _our_files() -> list[Path]:
    files = sorted((REPO / "holdbench").rglob("*.py"))
    for folder in LAYERS + ("tests", "scripts", "docs"):
        files += sorted(p for p in (REPO / folder).rglob("*.py") if ".venv" not in p.parts)
    return files


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_imports_run_one_way(package):
    bad = {str(p.relative_to(REPO)): sorted(_imports(p) & FORBIDDEN[package])
           for p in sorted((REPO / package).rglob("*.py"))}
    assert not {k: v for k, v in bad.items() if v}


def test_every_import_goes_through_the_namespace():
    bad = {str(p.relative_to(REPO)): sorted(_bare(p)) for p in _our_files() if p.exists()}
    assert not {k: v for k, v in bad.items() if v}
    # the Snakefile and its rule files are not Python: their import lines, by pattern
    pattern = re.compile(rf"^\s*(?:from|import)\s+(?:{'|'.join(LAYERS)})\b|python3? -m (?:{'|'.join(LAYERS)})\.", re.M)
    rules = [REPO / "Snakefile", *sorted((REPO / "benchmark").rglob("*.smk"))]
    assert [str(p.relative_to(REPO)) for p in rules if pattern.search(p.read_text())] == []


def test_the_import_checks_can_fail(tmp_path):
    f = tmp_path / "x.py"
    f.write_text("import os\nfrom holdbench.benchmark.layout import StudyLayout\nimport metrics.pmse\n")
    assert "benchmark" in _imports(f)
    assert _bare(f) == {"metrics.pmse"}


def _module_graph() -> dict[str, set[str]]:
    mods = {}
    for layer in LAYERS:
        for p in (REPO / layer).rglob("*.py"):
            parts = list(p.relative_to(REPO).with_suffix("").parts)
            mods["holdbench." + ".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    graph = {}
    for name, path in mods.items():
        deps = set()
        for m in _modules(path):
            while m and m not in mods:
                m = m.rpartition(".")[0]
            if m and m != name:
                deps.add(m)
        graph[name] = deps
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]; counter[0] += 1; stack.append(root); on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]; counter[0] += 1; stack.append(w); on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop(); on.discard(w); comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_no_import_circle():
    assert _circles(_module_graph()) == []


def test_the_circle_check_can_fail():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_pyproject_installs_every_folder_of_code():
    import tomllib

    tool = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(tool["packages"])
    found = {"holdbench"}
    for layer in LAYERS:
        for init in (REPO / layer).rglob("__init__.py"):
            found.add(".".join(["holdbench", *init.parent.relative_to(REPO).parts]))
    assert found == listed


@pytest.mark.parametrize("name", available("synthesizer"))
def test_every_synthesizer_config_composes_and_builds(name):
    cfg = synthesizer_config(name)
    synth = build_synthesizer(cfg)
    assert type(synth).__name__ == cfg["_target_"].rsplit(".", 1)[1]


@pytest.mark.parametrize("name", available("metrics"))
def test_every_metrics_config_composes_and_builds(name):
    cfg = to_container(load_group("metrics", name))
    check_metrics_config(name, cfg)
    families = build_metric_families(cfg)
    assert [f.name for f in families] == [k for k, v in cfg["families"].items() if v is not None]


def test_registry_names_are_unique_and_explained():
    cfg = to_container(load_group("metrics", "default"))
    specs = metric_specs(cfg)
    names = [s.name for s in specs]
    assert len(names) == len(set(names)), sorted({n for n in names if names.count(n) > 1})
    for s in specs:
        assert s.label and s.meaning and s.better, s
    headline = {s.name for s in specs if s.headline}
    assert {"dcr_share", "F1_ratio", "F2_ratio", "F3_ratio"} <= headline


#: pyarrow's pre-buffering threads can abort a process that exits right after a read (contracts.io.read_parquet);
#: code that cannot import holdbench (the isolated workers, a script's child) turns pre-buffering off itself
_PARQUET_READ = re.compile(r"\bpd\.read_parquet\((?![^)]*pre_buffer=False)")


def test_parquet_is_read_without_pre_buffering():
    code = [p for p in _our_files() if p.exists() and "tests" not in p.relative_to(REPO).parts[:1]]
    bad = [str(p.relative_to(REPO)) for p in code if _PARQUET_READ.search(p.read_text())]
    assert bad == []
    assert _PARQUET_READ.search("x = pd.read_parquet(path)\n") and not _PARQUET_READ.search(
        "pd.read_parquet(path, pre_buffer=False)")


def test_scripts_import_only_names_that_exist():
    """Every `from holdbench.X import name` in scripts/ (benchmark and docs scripts, which no test runs whole)
    names a module and an attribute that exist: a renamed constant breaks the script's import here, not at a
    user's next measurement."""
    import importlib

    missing = []
    for path in sorted((REPO / "scripts").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.ImportFrom) and (node.module or "").startswith("holdbench")):
                continue
            module = importlib.import_module(node.module)
            for alias in node.names:
                if alias.name == "*" or hasattr(module, alias.name):
                    continue
                try:
                    importlib.import_module(f"{node.module}.{alias.name}")
                except ImportError:
                    missing.append(f"{path.relative_to(REPO)}: {node.module}.{alias.name}")
    assert missing == []
