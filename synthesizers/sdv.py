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
"""

from __future__ import annotations

import importlib
import logging
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from benchmark.schema import Column, Schema
from synthesizers._seeding import derive_seed, seed_everything, single_thread
from synthesizers.base import FitContext, Synthesizer, SynthesizerUnavailable

LOG = logging.getLogger("holdbench.synth")
#: SDV's usage-event logger: one dict per call, meant for its own CSV file, noise in a cell log
_SDV_EVENT_LOGGER = "SingleTableSynthesizer"

#: the one table of the single-table metadata
_TABLE = "train"
_INSTALL_HINT = "pip install 'sdv>=2,<3'"


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


def _init_args(local_vars: dict[str, Any]) -> dict[str, Any]:
    """A subclass constructor's arguments, taken from its locals() (drops self and __class__)."""
    return {k: v for k, v in local_vars.items() if k not in ("self", "__class__")}


class SDVSynthesizer(Synthesizer):
    """Shared fit/sample for the SDV classes; subclasses name the class and list its knobs.

    Subclass constructors spell out every argument (so configs are checked against the
    signature) and hand them here; all but `log_every` go to the SDV constructor.
    """

    #: class name in sdv.single_table
    sdv_class: ClassVar[str]
    #: ctgan modules whose epoch loop is logged (their tqdm is swapped for a logger)
    epoch_loop_modules: ClassVar[tuple[str, ...]] = ()

    def __init__(self, log_every: int | None = None, **params: Any) -> None:
        if log_every is not None and (not isinstance(log_every, int) or log_every < 1):
            raise ValueError(f"{type(self).__name__}: log_every must be a positive integer, got {log_every!r}")
        self.log_every = log_every
        self.params = params
        self._model = None

    def _sdv_params(self) -> dict[str, Any]:
        if self.epoch_loop_modules:
            # verbose makes ctgan put the losses into the progress description we log
            return {**self.params, "verbose": True}
        return dict(self.params)

    def fit(self, train: pd.DataFrame, ctx: FitContext) -> None:
        try:
            import sdv
            from sdv import single_table
        except ImportError as exc:
            raise SynthesizerUnavailable(f"sdv is not installed: {_INSTALL_HINT} ({exc})") from exc
        if int(sdv.__version__.split(".")[0]) < 2:
            # SDV 1.x takes and returns bare DataFrames where 2.x uses {table: DataFrame}
            raise SynthesizerUnavailable(f"sdv {sdv.__version__} is too old: {_INSTALL_HINT}")
        sdv_cls = getattr(single_table, self.sdv_class)
        logging.getLogger(_SDV_EVENT_LOGGER).setLevel(logging.WARNING)
        label = type(self).__name__
        with single_thread():
            seed_everything(ctx.seed)
            model = sdv_cls(sdv_metadata(ctx.schema), **self._sdv_params())
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
    """sdv.single_table.GaussianCopulaSynthesizer with SDV's defaults."""

    sdv_class = "GaussianCopulaSynthesizer"

    def __init__(
        self,
        enforce_min_max_values: bool = True,
        enforce_rounding: bool = True,
        default_distribution: str = "beta",
        numerical_distributions: dict[str, str] | None = None,
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
        discriminator_steps: int = 1,
        pac: int = 10,
        log_frequency: bool = True,
        enforce_min_max_values: bool = True,
        enforce_rounding: bool = True,
        enable_gpu: bool = False,
        log_every: int = 10,
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
        discriminator_steps: int = 1,
        pac: int = 10,
        log_frequency: bool = True,
        enforce_min_max_values: bool = True,
        enforce_rounding: bool = True,
        enable_gpu: bool = False,
        log_every: int = 10,
        default_distribution: str = "beta",
        numerical_distributions: dict[str, str] | None = None,
    ) -> None:
        ctgan_args = _init_args(locals())
        extra = {k: ctgan_args.pop(k) for k in ("default_distribution", "numerical_distributions")}
        super().__init__(**ctgan_args)
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
    ) -> None:
        super().__init__(**_init_args(locals()))
