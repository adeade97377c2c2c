"""Fit or sample a generator from a plug-in library; executed by the plug-in's ISOLATED interpreter.

Usage: <venv python> -I _plugin_worker.py WORKDIR   (see contracts/plugin_env.py)

WORKDIR/config.json (written by synthesizers/_isolated.py): {"stage": "fit" | "sample", "method",
"params", "seed", "n", "categorical": [...], "numeric": [...], "integer": [...], "model": path}.
fit reads WORKDIR/train.parquet (categoricals as strings, no missing values: the caller codes them;
numerics as float64 with NaN), pickles the fitted model to `model` and writes result.json with the
library versions and the settings it ran at; sample loads the model, draws `n` rows and writes
WORKDIR/synthetic.parquet (same encoding). Exit code 3 with result.json {"missing": ...}: the
library cannot be imported here.

Imports only the standard library, numpy, pandas and the plug-in's library: nothing of holdbench.
Determinism: these libraries draw from numpy's (and Python's) global RNG without a seed argument
(arfpy, DataSynthesizer, smartnoise's MST) or next to one (ForestDiffusion); both global RNGs are
seeded from the cell's seed before every stage, and library seeds are passed where they exist.
"""

import functools
import gzip
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
LIBRARIES = {"mst": ("snsynth", "smartnoise-synth"), "privbayes": ("DataSynthesizer", "DataSynthesizer"),
             "arf": ("arfpy", "arfpy"), "forest_diffusion": ("ForestDiffusion", "ForestDiffusion")}
MISSING_FLAG = "__holdbench_missing__"
TEXT_PREFIX = "v:"


def _seed(seed: int) -> None:
    np.random.seed(seed % 2**32)
    random.seed(seed)


# ------------------------------------------------------------------ MST (smartnoise-synth)
def _seeded_noise() -> None:
    """smartnoise draws MST's Gaussian noise and its bound finder's Laplace noise from OpenDP, whose
    CSPRNG cannot be seeded: swapped for numpy's global RNG (seeded per stage), same distributions and
    scales, as in McKenna's reference MST code. Without OpenDP's sampler the floating-point attacks on
    naive noise (Mironov 2012) are not defended: `secure_noise: true` keeps it, and the cell is then
    not reproducible."""
    import snsql.sql._mechanisms.approx_bounds as bounds
    from snsynth.mst import mst

    def gaussian_noise(sigma, size=None):
        return np.random.normal(0.0, sigma) if size is None else list(np.random.normal(0.0, sigma, size))

    def make_laplace(input_domain, input_metric, scale):
        return lambda v: float(v) + np.random.laplace(0.0, scale)

    mst.gaussian_noise, bounds.make_laplace = gaussian_noise, make_laplace


def _fit_mst(train, cfg, p):
    from snsynth import Synthesizer

    if not p["secure_noise"]:
        _seeded_noise()

    synth = Synthesizer.create("mst", epsilon=float(p["epsilon"]), delta=float(p["delta"]), verbose=False)
    info = {}
    if p["bounds"] == "dp":
        try:
            synth.fit(train, categorical_columns=cfg["categorical"], continuous_columns=cfg["numeric"],
                      preprocessor_eps=float(p["preprocessor_eps"]), nullable=True)
        except ValueError as exc:
            if "could not find bounds" not in str(exc):
                raise
            raise SettingsError(_no_dp_bounds(synth, train, cfg, float(p["preprocessor_eps"]))) from None
        info["dp_bounds"] = _dp_bounds(synth, train)
    else:  # T's min and max: no budget spent, so the numeric columns are not covered by epsilon
        from snsynth.transform import BinTransformer, LabelTransformer, TableTransformer

        tt = TableTransformer([LabelTransformer(nullable=True) if c in cfg["categorical"] else
                               BinTransformer(bins=int(p["bins"]), lower=float(train[c].min()),
                                              upper=float(train[c].max()), nullable=True)
                               for c in train.columns])
        synth.fit(train, transformer=tt, preprocessor_eps=0.0)
    # MST keeps the domain decompression as a lambda over its `supports`, which pickle cannot store:
    # the same call as a partial of its own reverse_data
    supports = [c.cell_contents for c in synth.undo_compress_fn.__closure__ if isinstance(c.cell_contents, dict)]
    if len(supports) != 1:
        raise RuntimeError("smartnoise MST: cannot find the supports of its domain compression")
    synth.undo_compress_fn = functools.partial(synth.reverse_data, supports=supports[0])
    return synth, {"epsilon_training": float(synth.epsilon), **info}


def _column_transformers(synth, train):
    """(column, smartnoise transformer) of the table transformer smartnoise built, in T's column order."""
    return list(zip(train.columns, synth._transformer.transformers))


def _dp_bounds(synth, train) -> dict:
    """The DP bounds smartnoise found for each numeric column, beside T's own range (what a user must see:
    at small epsilon a zero-heavy column gets [0, 1], and every value above is clipped into the last bin)."""
    return {c: {"dp": [float(t.fit_lower), float(t.fit_upper)],
                "data": [float(train[c].min()), float(train[c].max())]}
            for c, t in _column_transformers(synth, train) if getattr(t, "fit_lower", None) is not None}


def _no_dp_bounds(synth, train, cfg, preprocessor_eps: float) -> str:
    """Why `bounds: dp` failed, naming the column: smartnoise's approx_bounds keeps the power-of-two bins
    (128 of them) whose Laplace-noised count exceeds about 11 / epsilon_column (at the loosest failure
    probability it tries, 1e-3), so a column whose values spread over bins of fewer rows has no bounds."""
    failed = [c for c, t in _column_transformers(synth, train)
              if getattr(t, "needs_epsilon", False) and not getattr(t, "fit_complete", True)]
    n_num = len(cfg["numeric"])
    per_column = preprocessor_eps / max(n_num, 1)
    threshold = -np.log(2 - 2 * (1 - 1e-3) ** (1 / 127)) / per_column
    return (f"mst: bounds: dp: smartnoise found no DP bounds for column {failed[0]!r} "
            f"(preprocessor_eps {preprocessor_eps:g} split over {n_num} numeric columns = {per_column:.3g} each; a "
            f"power-of-two bin of T must hold more than about {threshold:,.0f} of its {len(train):,} rows). "
            "Raise preprocessor_eps, or use bounds: data (T's min/max, not covered by epsilon)"
            if failed else "mst: bounds: dp: smartnoise found no DP bounds for a numeric column")


def _sample_mst(model, n, cfg):
    return model.sample(n)


# ------------------------------------------------------------------ PrivBayes (DataSynthesizer)
def _fit_privbayes(train, cfg, p):
    from DataSynthesizer.DataDescriber import DataDescriber

    work = Path(cfg["model"]).parent
    csv = work / "privbayes_train.csv"
    # DataSynthesizer re-reads the CSV with pandas' type inference: a prefix keeps "True", "1" text
    train.assign(**{c: TEXT_PREFIX + train[c] for c in cfg["categorical"]}).to_csv(csv, index=False)
    # DataSynthesizer keys its conditionals by str(list of numpy ints) and eval()s them when sampling:
    # numpy 2 prints np.int64(3), which its eval cannot read; numpy 1.25's printing gives 3
    np.set_printoptions(legacy="1.25")
    describer = DataDescriber(category_threshold=10**9, histogram_bins=int(p["histogram_bins"]))
    from DataSynthesizer.datatypes.utils.DataType import DataType

    types = {c: DataType.STRING for c in cfg["categorical"]} | {c: DataType.FLOAT for c in cfg["numeric"]}
    describer.describe_dataset_in_correlated_attribute_mode(
        dataset_file=str(csv), k=int(p["degree"]), epsilon=float(p["epsilon"]), seed=int(cfg["seed"]) % 2**32,
        attribute_to_datatype=types, attribute_to_is_categorical={c: True for c in cfg["categorical"]} | {c: False for c in cfg["numeric"]},
        attribute_to_is_candidate_key={c: False for c in train.columns})
    description = work / "privbayes_description.json"
    describer.save_dataset_description_to_file(str(description))
    csv.unlink()
    return {"description": description.read_text()}, {}


def _sample_privbayes(model, n, cfg):
    from DataSynthesizer.DataGenerator import DataGenerator

    path = Path(cfg["model"]).with_name("privbayes_description.json")
    path.write_text(model["description"])
    gen = DataGenerator()
    gen.generate_dataset_in_correlated_attribute_mode(n, str(path), seed=int(cfg["seed"]) % 2**32)
    out = gen.synthetic_dataset
    for c in cfg["categorical"]:
        out[c] = out[c].where(out[c].isna(), out[c].astype(str).str.removeprefix(TEXT_PREFIX))
    return out


# ------------------------------------------------------------------ adversarial random forest (arfpy)
def _fit_arf(train, cfg, p):
    from arfpy import arf

    x = train.copy()
    for c in cfg["categorical"]:
        x[c] = x[c].astype(object)  # arfpy models object columns as factors
    flagged = []
    for c in cfg["numeric"]:  # arfpy does not take NaN: a missing flag plus the column's minimum
        if x[c].isna().any():
            x[c + MISSING_FLAG] = np.where(x[c].isna(), "1", "0")
            x[c] = x[c].fillna(x[c].min() if x[c].notna().any() else 0.0)
            flagged.append(c)
    model = arf.arf(x=x, num_trees=int(p["num_trees"]), delta=float(p["delta"]), max_iters=int(p["max_iters"]),
                    early_stop=True, verbose=False, min_node_size=int(p["min_node_size"]),
                    random_state=int(cfg["seed"]) % 2**32, n_jobs=1)
    model.forde(dist=str(p["dist"]), oob=False, alpha=float(p["alpha"]))
    return {"arf": model, "flagged": flagged}, {}


def _sample_arf(model, n, cfg):
    out = model["arf"].forge(n=n)
    for c in model["flagged"]:
        flag = out.pop(c + MISSING_FLAG).astype(str)
        out[c] = out[c].astype(float).where(flag != "1")
    return out


# ------------------------------------------------------------------ ForestDiffusion (flow or vp diffusion)
def _fit_forest_diffusion(train, cfg, p):
    from ForestDiffusion import ForestDiffusionModel

    columns = list(train.columns)
    levels = {c: sorted(train[c].unique()) for c in cfg["categorical"]}
    x = np.column_stack([train[c].map({v: i for i, v in enumerate(levels[c])}).to_numpy(float) if c in levels
                         else train[c].to_numpy(float) for c in columns])
    cat = [i for i, c in enumerate(columns) if c in levels and len(levels[c]) > 2]
    binary = [i for i, c in enumerate(columns) if c in levels and len(levels[c]) == 2]
    integer = [i for i, c in enumerate(columns) if c in cfg["integer"]]
    const = [c for c in levels if len(levels[c]) == 1]
    model = ForestDiffusionModel(
        x, n_t=int(p["n_t"]), duplicate_K=int(p["duplicate_K"]), diffusion_type=str(p["diffusion_type"]),
        model="xgboost", n_estimators=int(p["n_estimators"]), max_depth=int(p["max_depth"]),
        cat_indexes=cat, bin_indexes=binary, int_indexes=integer, n_jobs=1, n_batch=0,
        seed=int(cfg["seed"]) % 2**32)
    return {"model": model, "columns": columns, "levels": levels, "const": const}, {}


def _sample_forest_diffusion(model, n, cfg):
    x = model["model"].generate(batch_size=n)
    out = {}
    for i, c in enumerate(model["columns"]):
        if c in model["levels"]:
            lv = model["levels"][c]
            codes = np.clip(np.rint(np.nan_to_num(x[:, i], nan=0.0)), 0, len(lv) - 1).astype(int)
            out[c] = np.asarray(lv, dtype=object)[codes]
        else:
            out[c] = x[:, i]
    return pd.DataFrame(out)


METHODS = {"mst": (_fit_mst, _sample_mst), "privbayes": (_fit_privbayes, _sample_privbayes),
           "arf": (_fit_arf, _sample_arf), "forest_diffusion": (_fit_forest_diffusion, _sample_forest_diffusion)}


def main(argv: list) -> int:
    if len(argv) != 2:
        print("usage: _plugin_worker.py WORKDIR", file=sys.stderr)
        return 2
    workdir = Path(argv[1])
    cfg = json.loads((workdir / "config.json").read_text())
    module, dist = LIBRARIES[cfg["method"]]
    try:
        __import__(module)
    except ImportError as exc:
        (workdir / "result.json").write_text(json.dumps({"missing": f"{type(exc).__name__}: {exc}"}))
        return MISSING_EXIT
    fit, sample = METHODS[cfg["method"]]
    _seed(int(cfg["seed"]))
    result = {"versions": {dist: version(dist), "numpy": np.__version__, "pandas": pd.__version__}}
    if cfg["stage"] == "fit":
        train = pd.read_parquet(workdir / "train.parquet")
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
    sys.exit(main(sys.argv))
