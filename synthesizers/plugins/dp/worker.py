"""The `dp` plug-in's worker: MST (smartnoise-synth) and PrivBayes (DataSynthesizer) inside `.venv-dp`.

Run by the shared generator worker (synthesizers/plugins/holdbench_worker.py), which reads the inputs,
seeds numpy's and Python's global RNGs from the cell's seed before every stage, and writes the result.
Imports only the standard library, numpy, pandas, the plug-in's libraries and holdbench_worker.
"""

import functools
from pathlib import Path

import numpy as np
from holdbench_worker import SettingsError

#: method -> (import name, distribution name) of its library
LIBRARIES = {"mst": ("snsynth", "smartnoise-synth"), "privbayes": ("DataSynthesizer", "DataSynthesizer")}
TEXT_PREFIX = "v:"


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


METHODS = {"mst": (_fit_mst, _sample_mst), "privbayes": (_fit_privbayes, _sample_privbayes)}
