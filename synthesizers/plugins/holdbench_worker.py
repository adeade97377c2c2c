"""The worker side shared by every synthesizer plug-in; executed by the plug-in's ISOLATED interpreter.

Usage: <venv python> -I holdbench_worker.py WORKDIR   (see contracts/plugin_env.py)

WORKDIR/config.json (written by synthesizers/_isolated.py): {"stage": "fit" | "sample", "worker": the
plug-in's worker.py, "method", "params", "seed", "n", "categorical": [...], "numeric": [...],
"integer": [...], "missing_level", "model": path}. This file loads the plug-in's worker.py by path;
that module defines

    LIBRARIES = {method: (import name, distribution name)}   # the library each method needs
    METHODS = {method: (fit, sample)}
    fit(train, cfg, params) -> (model, info)   # model: anything pickle can store; info: a JSON dict
    sample(model, n, cfg) -> DataFrame         # n rows, T's columns

and may raise `holdbench_worker.SettingsError(message)` for data or settings its library refuses
(the message becomes the cell's reason). fit reads WORKDIR/train.parquet (categoricals as strings, no
missing values: the caller codes them; numerics as float64 with NaN), pickles the fitted model to
`model` and writes result.json with the library versions and `info`; sample loads the model, draws
`n` rows and writes WORKDIR/synthetic.parquet (same encoding). Exit code 3 with result.json
{"missing": ...}: the library (or the worker's own imports) cannot be imported here.

Imports only the standard library, numpy and pandas (pyarrow for parquet): nothing of holdbench.
Determinism: many libraries draw from numpy's (and Python's) global RNG without a seed argument
(arfpy, DataSynthesizer, smartnoise's MST) or next to one (ForestDiffusion); both global RNGs are
seeded from the cell's seed before every stage; a worker passes library seeds where they exist.
"""

import gzip
import importlib.util
import json
import pickle
import random
import sys
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pandas as pd

MISSING_EXIT = 3
SETTINGS_EXIT = 4  # holdbench.contracts.plugin_env: a SettingsError's message becomes the cell's reason


class SettingsError(ValueError):
    """The worker's own diagnosis of data or settings a library refused (not a library crash)."""


def _seed(seed: int) -> None:
    np.random.seed(seed % 2**32)
    random.seed(seed)


def _load(path: str):
    """The plug-in's worker.py as a module (it may `from holdbench_worker import SettingsError`)."""
    spec = importlib.util.spec_from_file_location("plugin_worker", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name in ("LIBRARIES", "METHODS"):
        if not isinstance(getattr(module, name, None), dict):
            raise TypeError(f"{path} defines no {name} dict (see holdbench_worker.py's docstring)")
    return module


def _missing(workdir: Path, exc: ImportError) -> int:
    (workdir / "result.json").write_text(json.dumps({"missing": f"{type(exc).__name__}: {exc}"}))
    return MISSING_EXIT


def main(argv: list) -> int:
    if len(argv) != 2:
        print("usage: holdbench_worker.py WORKDIR", file=sys.stderr)
        return 2
    workdir = Path(argv[1])
    cfg = json.loads((workdir / "config.json").read_text())
    try:
        plugin = _load(cfg["worker"])
        if cfg["method"] not in plugin.METHODS or cfg["method"] not in plugin.LIBRARIES:
            raise KeyError(f"{cfg['worker']} has no method {cfg['method']!r} in METHODS and LIBRARIES "
                           f"(it has {sorted(plugin.METHODS)})")
        module, dist = plugin.LIBRARIES[cfg["method"]]
        __import__(module)
    except ImportError as exc:
        return _missing(workdir, exc)
    fit, sample = plugin.METHODS[cfg["method"]]
    _seed(int(cfg["seed"]))
    result = {"versions": {dist: version(dist), "numpy": np.__version__, "pandas": pd.__version__}}
    if cfg["stage"] == "fit":
        train = pd.read_parquet(workdir / "train.parquet", pre_buffer=False)
        try:
            model, info = fit(train, cfg, cfg["params"])
        except SettingsError as exc:  # diagnosed here: its message is the cell's reason
            (workdir / "result.json").write_text(json.dumps({"error": str(exc)}))
            return SETTINGS_EXIT
        with gzip.open(cfg["model"], "wb", compresslevel=3) as fh:  # the cell's files are capped in size
            pickle.dump(model, fh)
        result["info"] = info
    else:
        with gzip.open(cfg["model"], "rb") as fh:
            model = pickle.load(fh)
        out = pd.DataFrame(sample(model, int(cfg["n"]), cfg)).reset_index(drop=True)
        out = out[cfg["categorical"] + cfg["numeric"]]
        for c in cfg["categorical"]:  # a library's own missing value (MST's null level) is a missing value
            out[c] = out[c].where(out[c].notna(), cfg["missing_level"]).astype(str)
        for c in cfg["numeric"]:
            out[c] = pd.to_numeric(out[c], errors="coerce").astype("float64")
        out.to_parquet(workdir / "synthetic.parquet", index=False)
    (workdir / "result.json").write_text(json.dumps(result, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.modules.setdefault("holdbench_worker", sys.modules[__name__])  # the plug-in's `import holdbench_worker`
    sys.exit(main(sys.argv))
