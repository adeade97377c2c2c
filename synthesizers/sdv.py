"""SDV 2.x single-table synthesizers: GaussianCopula, CTGAN, TVAE and CopulaGAN.

The paper ran SDV 0.7; this wraps today's `sdv.single_table` classes with SDV's own
defaults (300 epochs for the neural ones) so the study's line-up can be rerun.

Metadata is built from the schema, never auto-detected, so a column is modelled as the
dataset config says (credit-default's SEX/EDUCATION/MARRIAGE as categories):
`model_kind` categorical -> sdtype 'categorical', numeric -> 'numerical'. Boolean columns
(dtype bool) get sdtype 'boolean' whatever their model_kind: it is what SDV 0.7 detected
for the paper's TRUE/FALSE columns, SDV models it as a two-level category (plus missing),
and it comes back as bool instead of a 0/1 float to threshold.

Reproducibility: fit seeds `random`, numpy and torch from the fit seed (SDV and CTGAN
draw from the global generators while fitting). For sampling SDV would always reuse one
fixed seed (73251) after `reset_sampling`; instead each sample call resets sampling and
seeds both the model's generators and the reverse transformers' generators (which place
the missing values) from the sample seed, so `sample(n, seed)` depends on (fit, n, seed)
only, not on earlier sample calls. Everything runs on one thread and, by default, on CPU.

SDV 0.7 (the paper's version) behaved differently where 2.x changed defaults; the `sdv07`
preset of each config sets them back as far as 2.x allows (see the YAMLs for the evidence).
Three of those settings are this wrapper's own, not SDV constructor arguments:
`default_distribution="parametric"` (GaussianCopula, CopulaGAN) lets copulas pick each
column's univariate by the Kolmogorov-Smirnov statistic among its parametric families, as
0.7's default did (2.x accepts only a fixed family); `categorical_transformer="one_hot"`
(GaussianCopula) one-hot encodes categorical columns, 0.7's default, where 2.x uses
rdt's UniformEncoder; `boolean_transformer="binary"` (all four) models boolean columns as
0/1 numbers (rdt's BinaryEncoder, like 0.7's BooleanTransformer) instead of categories.
"""

from __future__ import annotations

import importlib
import logging
import time
import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from holdbench.contracts.schema import Column, Schema
from holdbench.synthesizers._seeding import derive_seed, seed_everything, single_thread
from holdbench.synthesizers.base import FitContext, Synthesizer, SynthesizerUnavailable

LOG = logging.getLogger("holdbench.synth")
#: SDV's usage-event logger: one dict per call, meant for its own CSV file, noise in a cell log
_SDV_EVENT_LOGGER = "SingleTableSynthesizer"

#: the one table of the single-table metadata
_TABLE = "train"
_INSTALL_HINT = "pip install 'sdv>=2,<3'"
#: SDV 2.x's fixed univariate families, plus the wrapper's "parametric" (0.7's default: chosen per column)
DISTRIBUTIONS = ("beta", "norm", "truncnorm", "gamma", "uniform", "gaussian_kde", "parametric")


def sdtype(column: Column) -> str:
    """The SDV sdtype a schema column is modelled as (see the module docstring)."""
    if column.dtype == "bool":
        return "boolean"
    return "categorical" if column.model_kind == "categorical" else "numerical"


def sdv_metadata(schema: Schema, table: str = _TABLE):
    """SDV Metadata for one table, built from the schema (no auto-detection)."""
    from sdv.metadata import Metadata

    columns = {c.name: {"sdtype": sdtype(c)} for c in schema.columns}
    return Metadata.load_from_dict({"tables": {table: {"columns": columns}}})


def _check_distribution(label: str, params: dict[str, Any]) -> None:
    distribution = params.get("default_distribution")
    if "default_distribution" in params and distribution not in DISTRIBUTIONS:
        raise ValueError(f"{label}: default_distribution must be one of {DISTRIBUTIONS}, got {distribution!r}")


def _init_args(local_vars: dict[str, Any]) -> dict[str, Any]:
    """A subclass constructor's arguments, taken from its locals() (drops self and __class__)."""
    return {k: v for k, v in local_vars.items() if k not in ("self", "__class__")}


class SDVSynthesizer(Synthesizer):
    """Shared fit/sample for the SDV classes; subclasses name the class and list its knobs.

    Subclass constructors spell out every argument (so configs are checked against the
    signature) and hand them here; all but `log_every`, `boolean_transformer` and
    `categorical_transformer` (the wrapper's own) go to the SDV constructor.
    """

    #: class name in sdv.single_table
    sdv_class: ClassVar[str]
    #: ctgan modules whose epoch loop is logged (their tqdm is swapped for a logger)
    epoch_loop_modules: ClassVar[tuple[str, ...]] = ()

    def __init__(self, log_every: int | None = None, boolean_transformer: str | None = None,
                 categorical_transformer: str | None = None, **params: Any) -> None:
        label = type(self).__name__
        if log_every is not None and (not isinstance(log_every, int) or log_every < 1):
            raise ValueError(f"{label}: log_every must be a positive integer, got {log_every!r}")
        if boolean_transformer not in (None, "binary"):
            raise ValueError(f"{label}: boolean_transformer must be null (SDV's) or 'binary', "
                             f"got {boolean_transformer!r}")
        if categorical_transformer not in (None, "one_hot"):
            raise ValueError(f"{label}: categorical_transformer must be null (SDV's) or 'one_hot', "
                             f"got {categorical_transformer!r}")
        _check_distribution(label, params)
        self.log_every = log_every
        self.boolean_transformer = boolean_transformer
        self.categorical_transformer = categorical_transformer
        self.params = params
        self._model = None

    def _sdv_params(self) -> dict[str, Any]:
        params = dict(self.params)
        if params.get("default_distribution") == "parametric":
            # SDV only takes a fixed family; _configure swaps in the per-column selection
            params["default_distribution"] = None
        if self.epoch_loop_modules:
            # verbose makes ctgan put the losses into the progress description we log
            params["verbose"] = True
        return params

    def build_model(self, schema: Schema, train: pd.DataFrame):
        """The unfitted SDV synthesizer for this config, its transformers set for `train`."""
        from sdv import single_table

        model = getattr(single_table, self.sdv_class)(sdv_metadata(schema), **self._sdv_params())
        self._configure(model, schema, {_TABLE: train.reset_index(drop=True)})
        return model

    def _configure(self, model, schema: Schema, data: dict[str, pd.DataFrame]) -> None:
        """Apply the wrapper-only settings (module docstring) to an unfitted SDV synthesizer."""
        from rdt.transformers import BinaryEncoder, OneHotEncoder

        chosen: dict[str, Any] = {}
        for column in schema.columns:
            kind = sdtype(column)
            if kind == "boolean" and self.boolean_transformer == "binary":
                chosen[column.name] = BinaryEncoder()
            elif kind == "categorical" and self.categorical_transformer == "one_hot":
                chosen[column.name] = OneHotEncoder()
        if chosen:
            model.auto_assign_transformers(data)
            with warnings.catch_warnings():
                # "a OneHotEncoder may slow down ..." and "replacing the default transformer might
                # impact the quality": both are what 0.7 did
                warnings.filterwarnings("ignore", message="Using a OneHotEncoder")
                warnings.filterwarnings("ignore", message="Replacing the default transformer")
                model.update_transformers(chosen)
        if self.params.get("default_distribution") == "parametric":
            _select_parametric_univariates(model)

    def fit(self, train: pd.DataFrame, ctx: FitContext) -> None:
        try:
            import sdv
            from sdv import single_table  # noqa: F401 (a missing install is reported here)
        except ImportError as exc:
            raise SynthesizerUnavailable(f"sdv is not installed: {_INSTALL_HINT} ({exc})") from exc
        if int(sdv.__version__.split(".")[0]) < 2:
            # SDV 1.x takes and returns bare DataFrames where 2.x uses {table: DataFrame}
            raise SynthesizerUnavailable(f"sdv {sdv.__version__} is too old: {_INSTALL_HINT}")
        logging.getLogger(_SDV_EVENT_LOGGER).setLevel(logging.WARNING)
        label = type(self).__name__
        with single_thread():
            seed_everything(ctx.seed)
            model = self.build_model(ctx.schema, train)
            start = time.monotonic()
            with _log_epochs(self.epoch_loop_modules, label, self.log_every or 1):
                model.fit({_TABLE: train.reset_index(drop=True)})
        LOG.info("%s: fitted on %d rows in %.1f s", label, len(train), time.monotonic() - start)
        self._model = model

    def sample(self, n: int, seed: int) -> pd.DataFrame:
        if self._model is None:
            raise RuntimeError(f"{type(self).__name__}: sample() called before fit()")
        with single_thread():
            seed32 = seed_everything(seed)
            self._model.reset_sampling()
            self._model._set_random_state(seed32)
            _reseed_reverse_transformers(self._model, seed)
            out = self._model.sample(n)[_TABLE]
        return out.reset_index(drop=True)


def _select_parametric_univariates(model) -> None:
    """Make an unfitted GaussianCopula/CopulaGAN pick each column's univariate like SDV 0.7.

    0.7's default_distribution "parametric" was copulas' Univariate(parametric=PARAMETRIC):
    per column, the family with the smallest Kolmogorov-Smirnov statistic among copulas'
    parametric ones (beta, gamma, norm, loglaplace, student t, truncnorm, uniform). 2.x
    only takes one fixed family, so the selector is set on SDV's private default (SDV is
    pinned to 2.x); columns named in numerical_distributions keep their family.
    """
    from copulas.univariate import ParametricType, Univariate

    options = {"parametric": ParametricType.PARAMETRIC}
    if type(model).__name__ == "CopulaGANSynthesizer":
        # rdt's GaussianNormalizer builds a univariate from a (class, kwargs) tuple
        model._default_distribution = (Univariate, options)
    else:
        selector = Univariate(**options)
        # copulas' GaussianMultivariate copies it per column through these (get_instance)
        selector.__args__, selector.__kwargs__ = (), options
        model._default_distribution = selector
    model.default_distribution = "parametric"


def _reseed_reverse_transformers(model, seed: int) -> None:
    """Seed each column transformer's reverse_transform generator from the sample seed.

    After `reset_sampling` SDV restarts them from a seed hashed from the training data,
    which would put the missing values on the same rows for every sample seed.
    """
    for i, transformer in enumerate(model.get_transformers().values()):
        if transformer is not None:
            state = np.random.RandomState(derive_seed(seed, i))
            transformer.set_random_state(state, "reverse_transform")


class _EpochLog:
    """Stands in for tqdm around ctgan's epoch loop: one log line every `every` epochs.

    ctgan sets the latest losses as the progress bar's description after each epoch;
    they are logged with the epoch count and the elapsed time.
    """

    def __init__(self, iterable: Iterable, *, label: str, every: int, **_tqdm_kwargs: Any) -> None:
        self._iterable = iterable
        self._label = label
        self._every = every
        self._description = ""

    def set_description(self, desc: str = "", refresh: bool = True) -> None:
        self._description = desc

    def __iter__(self) -> Iterator:
        total = len(self._iterable)
        start = time.monotonic()
        for epoch, item in enumerate(self._iterable, start=1):
            yield item
            if epoch % self._every == 0 or epoch == total:
                LOG.info(
                    "%s: epoch %d/%d, %s, %.1f s",
                    self._label, epoch, total, self._description, time.monotonic() - start,
                )


@contextmanager
def _log_epochs(module_names: Iterable[str], label: str, every: int) -> Iterator[None]:
    """Swap `tqdm` in the given ctgan modules for _EpochLog while the block runs."""
    swapped = []
    try:
        for name in module_names:
            module = importlib.import_module(name)
            if not hasattr(module, "tqdm"):
                LOG.debug("%s: %s has no tqdm; epochs are not logged", label, name)
                continue
            swapped.append((module, module.tqdm))
            module.tqdm = partial(_EpochLog, label=label, every=every)
        yield
    finally:
        for module, original in swapped:
            module.tqdm = original


class GaussianCopula(SDVSynthesizer):
    """sdv.single_table.GaussianCopulaSynthesizer with SDV's defaults.

    default_distribution also takes "parametric", categorical_transformer "one_hot" and
    boolean_transformer "binary" (SDV 0.7's behaviour, see the module docstring).
    """

    sdv_class = "GaussianCopulaSynthesizer"

    def __init__(
        self,
        enforce_min_max_values: bool = True,
        enforce_rounding: bool = True,
        default_distribution: str = "beta",
        numerical_distributions: dict[str, str] | None = None,
        categorical_transformer: str | None = None,
        boolean_transformer: str | None = None,
    ) -> None:
        super().__init__(**_init_args(locals()))


class CTGAN(SDVSynthesizer):
    """sdv.single_table.CTGANSynthesizer with SDV's defaults (CPU unless enable_gpu)."""

    sdv_class = "CTGANSynthesizer"
    epoch_loop_modules = ("ctgan.synthesizers.ctgan",)

    def __init__(
        self,
        epochs: int = 300,
        batch_size: int = 500,
        embedding_dim: int = 128,
        generator_dim: tuple[int, ...] = (256, 256),
        discriminator_dim: tuple[int, ...] = (256, 256),
        generator_lr: float = 2e-4,
        discriminator_lr: float = 2e-4,
        generator_decay: float = 1e-6,
        discriminator_decay: float = 1e-6,
        discriminator_steps: int = 1,
        pac: int = 10,
        log_frequency: bool = True,
        enforce_min_max_values: bool = True,
        enforce_rounding: bool = True,
        enable_gpu: bool = False,
        log_every: int = 10,
        boolean_transformer: str | None = None,
    ) -> None:
        if batch_size % pac:
            raise ValueError(f"{type(self).__name__}: batch_size ({batch_size}) must be a multiple of pac ({pac})")
        super().__init__(**_init_args(locals()))


class CopulaGAN(CTGAN):
    """sdv.single_table.CopulaGANSynthesizer: CTGAN on Gaussian-copula-normalised numbers."""

    sdv_class = "CopulaGANSynthesizer"

    def __init__(
        self,
        epochs: int = 300,
        batch_size: int = 500,
        embedding_dim: int = 128,
        generator_dim: tuple[int, ...] = (256, 256),
        discriminator_dim: tuple[int, ...] = (256, 256),
        generator_lr: float = 2e-4,
        discriminator_lr: float = 2e-4,
        generator_decay: float = 1e-6,
        discriminator_decay: float = 1e-6,
        discriminator_steps: int = 1,
        pac: int = 10,
        log_frequency: bool = True,
        enforce_min_max_values: bool = True,
        enforce_rounding: bool = True,
        enable_gpu: bool = False,
        log_every: int = 10,
        boolean_transformer: str | None = None,
        default_distribution: str = "beta",
        numerical_distributions: dict[str, str] | None = None,
    ) -> None:
        ctgan_args = _init_args(locals())
        extra = {k: ctgan_args.pop(k) for k in ("default_distribution", "numerical_distributions")}
        super().__init__(**ctgan_args)
        _check_distribution(type(self).__name__, extra)
        self.params.update(extra)


class TVAE(SDVSynthesizer):
    """sdv.single_table.TVAESynthesizer with SDV's defaults (CPU unless enable_gpu)."""

    sdv_class = "TVAESynthesizer"
    epoch_loop_modules = ("ctgan.synthesizers.tvae",)

    def __init__(
        self,
        epochs: int = 300,
        batch_size: int = 500,
        embedding_dim: int = 128,
        compress_dims: tuple[int, ...] = (128, 128),
        decompress_dims: tuple[int, ...] = (128, 128),
        l2scale: float = 1e-5,
        loss_factor: float = 2,
        enforce_min_max_values: bool = True,
        enforce_rounding: bool = True,
        enable_gpu: bool = False,
        log_every: int = 10,
        boolean_transformer: str | None = None,
    ) -> None:
        super().__init__(**_init_args(locals()))
