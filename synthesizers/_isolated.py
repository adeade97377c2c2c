"""Generators whose library lives in a plug-in venv (contracts/plugin_env.py), driven in a subprocess
by synthesizers/plugins/holdbench_worker.py, which runs the plug-in folder's worker.py.

`fit` checks that the plug-in's interpreter is there (else SynthesizerUnavailable with the install
command: the cell is `skipped`), codes T for the worker and runs its fit stage, which pickles the
model into a private temporary directory; `sample(n, seed)` runs the sample stage with `seed` and
decodes the rows back into T's values. Coding: categorical columns (str, bool and integer-coded
columns whose schema model_kind is categorical) become strings with the missing value as a level of
its own; numeric columns float64 with NaN; integer columns are rounded on the way back.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import weakref
from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd

from holdbench.contracts.io import read_parquet
from holdbench.contracts import plugin_env
from holdbench.synthesizers.base import FitContext, Synthesizer, SynthesizerUnavailable

#: the worker side every plug-in shares: it loads the plug-in's own worker.py inside the venv
WORKER = Path(__file__).parent / "plugins" / "holdbench_worker.py"
MISSING_LEVEL = "<NA>"
#: a plug-in worker gets this long per stage; the harness's own cell timeout normally ends a cell first
WORKER_TIMEOUT_S = 24 * 3600.0
#: what a worker's result.json must hold after each stage (the shared worker writes them)
REQUIRED = {"fit": {"versions": dict, "info": dict}, "sample": {"versions": dict}}


def checked_result(payload: dict, stage: str, method: str) -> dict:
    """`payload` when it holds what `stage` needs; else a RuntimeError naming the worker and the keys."""
    wrong = [f"{key!r} ({'missing' if key not in payload else type(payload[key]).__name__ + ', not ' + kind.__name__})"
             for key, kind in REQUIRED[stage].items() if not isinstance(payload.get(key), kind)]
    if wrong:
        raise RuntimeError(f"{method} worker's {stage} result lacks {', '.join(wrong)}: "
                           f"result.json held the keys {sorted(payload)[:10]}")
    return payload


class IsolatedSynthesizer(Synthesizer):
    """Base of the plug-in generators: a subclass, defined in its plug-in folder, names its worker
    `method` and the settings it hands over (`params()`). Its plug-in is the folder its module lives
    in (`plugin`: the folder's name)."""

    method: ClassVar[str]

    @property
    def environment(self) -> plugin_env.PluginEnv:
        """The plug-in this class belongs to: the folder its module lives in (plugin.toml, requirements.txt,
        worker.py; contracts/plugin_env.py), whose name is the plug-in's."""
        return plugin_env.load_plugin(Path(sys.modules[type(self).__module__].__file__).resolve().parent)

    @property
    def plugin(self) -> str:
        return self.environment.name

    def params(self) -> dict:
        raise NotImplementedError

    def worker_params(self) -> dict:
        """What the worker gets as `params` (default: the settings, `params()`)."""
        return self.params()

    def _start_fit(self, train: pd.DataFrame, ctx: FitContext) -> pd.DataFrame:
        """The plug-in's interpreter (SynthesizerUnavailable when its venv is missing), the schema, T coerced to it."""
        env = self.environment
        missing = env.unavailable()
        if missing:
            raise SynthesizerUnavailable(missing)
        self._python, self._env = env.python(), env
        self._schema = ctx.schema
        return ctx.schema.coerce(train, f"{self.method}: training data")

    def _keep_dir(self) -> None:
        """The fit's directory, kept (the pickled model) for further samples until the object goes."""
        self._dir = Path(tempfile.mkdtemp(prefix=f"holdbench-{self.method}-"))
        weakref.finalize(self, shutil.rmtree, self._dir, True)

    def fit(self, train: pd.DataFrame, ctx: FitContext) -> None:
        train = self._start_fit(train, ctx)
        self._categorical = [c.name for c in ctx.schema.columns if c.model_kind == "categorical" or c.dtype == "bool"]
        self._numeric = [c for c in ctx.schema.names if c not in self._categorical]
        self._integer = [c.name for c in ctx.schema.columns if c.name in self._numeric and c.dtype == "int"]
        self._levels = {c: {str(v): v for v in train[c].dropna().unique()} for c in self._categorical}
        clash = [c for c in self._categorical if MISSING_LEVEL in self._levels[c]]
        if clash:
            raise ValueError(f"{self.method}: column(s) {clash} hold the value {MISSING_LEVEL!r}, which stands for "
                             "a missing value in the plug-in worker")
        self._keep_dir()
        coded = pd.DataFrame({c: train[c].map(str).where(train[c].notna(), MISSING_LEVEL) for c in self._categorical}
                             | {c: train[c].astype("Float64").to_numpy(dtype=float, na_value=np.nan)
                                for c in self._numeric})
        self._info = self._run("fit", int(ctx.seed), 0, {"train": coded})["info"]

    def sample(self, n: int, seed: int) -> pd.DataFrame:
        out = self._run("sample", int(seed), int(n), {}, read="synthetic")
        frame = {}
        for c in self._schema.names:
            if c in self._levels:
                values = out[c].astype(str)
                unknown = sorted(set(values) - set(self._levels[c]) - {MISSING_LEVEL})
                if unknown:
                    raise RuntimeError(f"{self.method}: the worker returned level(s) {unknown[:5]} that column {c!r} "
                                       "of T does not have")
                frame[c] = values.map(lambda v, m=self._levels[c]: m.get(v, np.nan)).astype(object)
            else:
                frame[c] = np.rint(out[c]) if c in self._integer else out[c]
        return self._schema.coerce(pd.DataFrame(frame), f"{self.method}: synthetic data")

    def info(self) -> dict:
        return {"plugin": self.plugin, "method": self.method, "settings": self.params(), **self._info,
                "versions": self._versions}

    def versions(self) -> dict[str, str | None]:
        return dict(self._versions)

    def _run(self, stage: str, seed: int, n: int, frames: dict[str, pd.DataFrame], read: str | None = None):
        with tempfile.TemporaryDirectory(prefix=f"holdbench-{self.method}-{stage}-") as tmp:
            work = Path(tmp)
            for name, df in frames.items():
                df.to_parquet(work / f"{name}.parquet", index=False)
            config = {"stage": stage, "worker": str(self._env.worker), "method": self.method,
                      "params": self.worker_params(), "seed": seed, "n": n,
                      "categorical": self._categorical, "numeric": self._numeric, "integer": self._integer,
                      "missing_level": MISSING_LEVEL,
                      "model": str(self._dir / "model.pkl")}
            (work / "config.json").write_text(json.dumps(config))
            payload, _, _ = plugin_env.run_worker(self.method, self._python, WORKER, work, WORKER_TIMEOUT_S)
            if "missing" in payload:
                raise SynthesizerUnavailable(f"{self.plugin} not installed: "
                                             f"{self._env.install_command()} "
                                             f"({self._python}: {payload['missing']})")
            self._versions = checked_result(payload, stage, self.method)["versions"]
            return read_parquet(work / f"{read}.parquet") if read else payload
