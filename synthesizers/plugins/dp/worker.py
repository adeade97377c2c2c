"""The `dp` plug-in's worker: MST and AIM (smartnoise-synth), PrivBayes (DataSynthesizer) inside `.venv-dp`.

The main side (synthesizers/plugins/dp/__init__.py) sends T as integer codes of the domain it took from
public declarations or estimated under DP, with each column's cardinality (params["cards"]); the
libraries here see codes only and declare that domain, so none reads a level set or a range from T.

Run by the shared generator worker (synthesizers/plugins/holdbench_worker.py), which reads the inputs,
seeds numpy's and Python's global RNGs from the cell's seed before every stage, and writes the result.
Imports only the standard library, numpy, pandas, the plug-in's libraries and holdbench_worker.
"""

import functools
import json
import os
import sys
from pathlib import Path

import numpy as np
from holdbench_worker import SettingsError

#: method -> (import name, distribution name) of its library
LIBRARIES = {"mst": ("snsynth", "smartnoise-synth"), "aim": ("snsynth", "smartnoise-synth"),
             "privbayes": ("DataSynthesizer", "DataSynthesizer")}
TEXT_PREFIX = "v:"
#: the folder of the compiled XLA programs kept between worker processes ("off" disables; default: the venv)
JAX_CACHE_VAR = "HOLDBENCH_JAX_CACHE"
#: the threads of XLA's CPU client in every fit and sample, whatever the machine's CPUs (see _jax_environment)
XLA_THREADS = 2


def _jax_environment() -> None:
    """Fixes XLA's thread pool and turns on JAX's persistent compilation cache, by environment before jax is
    imported (this module is loaded before the library; setting variables draws nothing from any RNG).

    Threads: XLA's CPU client splits a large reduction or product over its intra-op thread pool, one thread
    per CPU the process may use unless PJRT_NPROC says otherwise, so the last digits of an MST or AIM fit
    followed the CPUs of the worker's process (a column sum of a 3,000 x 3,000 array differs between one
    and two threads, a 200,000 x 40 product between two and four; on adult's T a one-CPU `aim_eps10` fit
    gave other samples than a two-CPU one). PJRT_NPROC is set to XLA_THREADS for every fit and sample, so a
    one-CPU cluster job and a many-core workstation compute what the two-CPU machines of the committed
    results computed (tests/synthesizers/test_plugin_generators.py compares one CPU against two).

    Cache: MST and AIM run on private-pgm (`mbi`), written in JAX: every worker process compiles its XLA
    programs afresh (some 250 small ones for one MST fit, ~6 of its ~10 CPU seconds on a 1,000-row,
    5-column domain), and the harness starts one process per fit and per sample. JAX's persistent
    compilation cache keeps them on disk, keyed by the program, its shapes, the compile options and the
    jax/jaxlib versions, so a later process with the same shapes loads the executable XLA would have
    compiled: the fitted model and its samples are unchanged (the same test compares them byte for byte).
    Every program is cached (JAX's default keeps only those compiling for 1 s or more: none here). Entries
    are compressed, so a half-written one fails to decompress and JAX compiles it again (a warning). The
    key does not hold the thread count, so the folder does: `jax-cache-<n>threads`, in the venv or under
    HOLDBENCH_JAX_CACHE."""
    os.environ["PJRT_NPROC"] = str(XLA_THREADS)
    where = os.environ.get(JAX_CACHE_VAR) or str(Path(sys.prefix))
    if where == "off":
        return
    os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", str(Path(where) / f"jax-cache-{XLA_THREADS}threads"))
    os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
    os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "-1")


_jax_environment()


# ------------------------------------------------------------------ MST and AIM (smartnoise-synth)
def _seeded_noise(module) -> None:
    """smartnoise draws MST's and AIM's Gaussian noise from OpenDP, whose CSPRNG cannot be seeded:
    swapped for numpy's global RNG (seeded per stage), same distribution and scale, as in McKenna's
    reference code. Without OpenDP's sampler the floating-point attacks on naive noise (Mironov 2012)
    are not defended: `secure_noise: true` keeps it, and the cell is then not reproducible."""
    def gaussian_noise(sigma, size=None):
        return np.random.normal(0.0, sigma) if size is None else list(np.random.normal(0.0, sigma, size))

    module.gaussian_noise = gaussian_noise


def _ordered_candidates(module) -> None:
    """AIM orders its candidate marginals as a set of column-name tuples sorted by size only, so the order
    among marginals of one size (and with it which one its exponential mechanism's seeded draw picks)
    follows Python's per-process string hashing: sorted by size, then by the columns."""
    def downward_closure(workloads):
        closure = set()
        for proj in workloads:
            closure.update(module.powerset(proj))
        return sorted(closure, key=lambda cl: (len(cl), tuple(cl)))

    module.downward_closure = downward_closure


def _codes_transformer(train, cfg):
    """A smartnoise table transformer over the integer codes the main side made, with the cardinalities
    it declares (the domain is never read from the data here)."""
    from snsynth.transform import TableTransformer
    from snsynth.transform.identity import IdentityTransformer

    class Codes(IdentityTransformer):
        def __init__(self, size):
            super().__init__()
            self.size = int(size)

        @property
        def cardinality(self):
            return [self.size]

    cards = cfg["params"]["cards"]
    missing = [c for c in train.columns if c not in cards]
    if missing:
        raise SettingsError(f"no cardinality for column(s) {missing}")
    tt = TableTransformer([Codes(cards[c]) for c in train.columns])
    return tt


def _fit_snsynth(train, cfg, p):
    import contextlib
    import io

    from snsynth import Synthesizer

    method = cfg["method"]
    if method == "mst":
        from snsynth.mst import mst as module

        synth = Synthesizer.create("mst", epsilon=float(p["epsilon"]), delta=float(p["delta"]), verbose=False)
    else:
        from snsynth.aim import aim as module

        if p["rounds"] is not None and 0.9 * train.shape[1] / int(p["rounds"]) >= 1:
            # AIM measures every 1-way marginal first at the noise of one round each (0.9 rho / rounds)
            raise SettingsError(f"aim: rounds {p['rounds']} leaves no budget after the {train.shape[1]} one-way "
                                f"marginals (each takes 0.9/rounds of rho): rounds must exceed "
                                f"{int(0.9 * train.shape[1])}")

        synth = Synthesizer.create("aim", epsilon=float(p["epsilon"]), delta=float(p["delta"]),
                                   rounds=p["rounds"], max_model_size=float(p["max_model_size"]),
                                   max_cells=int(p["max_cells"]), degree=int(p["degree"]), verbose=False)
    if not p["secure_noise"]:
        _seeded_noise(module)
    if method == "aim":
        _ordered_candidates(module)
    with contextlib.redirect_stdout(io.StringIO()):  # AIM prints its sigma and width unconditionally
        synth.fit(train.astype("int64"), transformer=_codes_transformer(train, cfg), preprocessor_eps=0.0)
    from snsynth.transform.identity import IdentityTransformer

    for t in synth._transformer.transformers:  # sampling needs only the identity; a local class cannot be pickled
        t.__class__ = IdentityTransformer
    info = {}
    if method == "mst":
        # MST keeps the domain decompression as a lambda over its `supports`, which pickle cannot store:
        # the same call as a partial of its own reverse_data
        supports = [c.cell_contents for c in synth.undo_compress_fn.__closure__ if isinstance(c.cell_contents, dict)]
        if len(supports) != 1:
            raise RuntimeError("smartnoise MST: cannot find the supports of its domain compression")
        synth.undo_compress_fn = functools.partial(synth.reverse_data, supports=supports[0])
    return synth, {"epsilon_library": float(synth.epsilon), "delta_library": float(synth.delta), **info}


def _sample_snsynth(model, n, cfg):
    import contextlib
    import io

    import pandas as pd

    with contextlib.redirect_stdout(io.StringIO()):
        rows = model.sample(n)
    return pd.DataFrame(rows, columns=cfg["categorical"]) if not isinstance(rows, pd.DataFrame) else rows


# ------------------------------------------------------------------ PrivBayes (DataSynthesizer)
def _fit_privbayes(train, cfg, p):
    from DataSynthesizer.DataDescriber import DataDescriber

    work = Path(cfg["model"]).parent
    csv = work / "privbayes_train.csv"
    # DataSynthesizer re-reads the CSV with pandas' type inference: a prefix keeps "True", "1" text
    train.assign(**{c: TEXT_PREFIX + train[c].astype(str) for c in cfg["categorical"]}).to_csv(csv, index=False)
    # every code of the main side's domain, declared: DataSynthesizer then reads no level set from the data
    domain_file = work / "privbayes_domain.json"
    domain_file.write_text(json.dumps({c: [f"{TEXT_PREFIX}{i}" for i in range(int(p["cards"][c]))]
                                       for c in cfg["categorical"]}))
    # DataSynthesizer keys its conditionals by str(list of numpy ints) and eval()s them when sampling:
    # numpy 2 prints np.int64(3), which its eval cannot read; numpy 1.25's printing gives 3
    np.set_printoptions(legacy="1.25")
    describer = DataDescriber(category_threshold=10**9)  # every column is categorical codes: no histogram
    from DataSynthesizer.datatypes.utils.DataType import DataType

    types = {c: DataType.STRING for c in cfg["categorical"]} | {c: DataType.FLOAT for c in cfg["numeric"]}
    describer.describe_dataset_in_correlated_attribute_mode(
        dataset_file=str(csv), k=int(p["degree"]), epsilon=float(p["epsilon"]), seed=int(cfg["seed"]) % 2**32,
        attribute_to_datatype=types, attribute_to_is_categorical={c: True for c in cfg["categorical"]} | {c: False for c in cfg["numeric"]},
        attribute_to_is_candidate_key={c: False for c in train.columns},
        categorical_attribute_domain_file=str(domain_file))
    description = work / "privbayes_description.json"
    describer.save_dataset_description_to_file(str(description))
    csv.unlink()
    domain_file.unlink()
    return {"description": description.read_text()}, {"epsilon_library": float(p["epsilon"])}


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


METHODS = {"mst": (_fit_snsynth, _sample_snsynth), "aim": (_fit_snsynth, _sample_snsynth),
           "privbayes": (_fit_privbayes, _sample_privbayes)}
