"""R synthpop's `syn()` through rpy2, with its defaults (the paper's synthpop row).

`syn(T, k = n, seed = seed)` fits and samples in one call, so `fit` only checks that R and
synthpop are there and converts T to an R data.frame once (holdbench.synthesizers._rconvert: factors
for str columns, NA for missing values, syntactic R names); `sample(n, seed)` runs `syn()`
on it with k = n and R's seed. The fit seed is therefore unused: synthpop's tree fits are
deterministic and all its randomness comes from the seed given to `sample`. Since syn()
refits for every call, two samples cost two fits (the study samples once per cell).

Column names that are not valid R names (adult's `capital-gain`) are passed to R as
syntactic names and restored on the way back: synthpop's rule parsing otherwise fails on
such a column once it has missing values ("object 'hours' not found"). syn()'s options are
settings here: `maxfaclevels` (a categorical with more levels is refused by synthpop unless
raised), `visit_sequence` (every column once: synthpop would return a column left out as the
real training values, so a partial sequence is refused), `minnumlevels`, `smoothing`, `proper`, `cart_minbucket`, `cart_cp`.
`r_seeds` pins the R seed per dataset (the paper's script drew them with set.seed(123)); otherwise R
gets the cell's seed mod 2^31 - 1. The seed given and the collation R ordered the str columns' levels
by (R's own `factor()`, as synthpop run in R: see _rconvert) are recorded in the cell's info.

Without rpy2, R or the synthpop package, `fit` raises SynthesizerUnavailable saying how to
install them; nothing R-related is imported before that, so the harness runs without R.
R's "cannot allocate vector" and "memory exhausted (limit reached?)" become a MemoryError, which
the harness records as `oom`; so does synthpop failing to load under the memory limit (it is
installed: the cell is not `skipped` as "not installed"). Loading R and synthpop takes about 0.3 GB of
address space, and under a memory limit (RLIMIT_AS) that leaves less, R does not always fail cleanly:
it may crash the process (SIGSEGV) or report a package it could not load as not installed. So under a
limit, `fit` first loads synthpop in a fresh Rscript given only the address space this process has
left (less a margin); when that fails and a fresh Rscript given the whole limit loads it, the cell is
`oom` saying so, before R is loaded here (one extra R start per cell, about 2 s).
"""

from __future__ import annotations

import pandas as pd

from holdbench.synthesizers.base import FitContext, Synthesizer, SynthesizerUnavailable, check_visit_sequence

#: R's set.seed takes a 32-bit signed integer
R_SEED_MODULUS = 2**31 - 1


#: words of a load failure that is an out-of-memory (under the memory limit R or a library cannot be mapped)
_OOM_WORDS = ("cannot allocate", "memory exhausted", "failed to map segment", "out of memory", "memoryerror")


def _load_failure(exc: SynthesizerUnavailable) -> Exception:
    """What a failed `require_r(["synthpop"])` really means: synthpop installed but not loadable under
    the memory limit (MemoryError: the cell is `oom`), installed but broken (RuntimeError), or not
    installed (the SynthesizerUnavailable itself: the cell is `skipped`)."""
    installed, error = _synthpop_state()
    text = f"{exc} {error or ''}".lower()
    if any(w in text for w in _OOM_WORDS):
        return MemoryError(f"synthpop could not be loaded: {error or exc}")
    if installed:
        return RuntimeError(f"synthpop is installed but failed to load: {error or exc}")
    return exc


#: address space kept free beyond what the probe R needed (the probe's Rscript and this process's
#: embedded R need about the same, 0.28-0.29 GB measured)
_PROBE_MARGIN = 32 * 2**20
_PROBE = 'suppressMessages(loadNamespace("synthpop")); cat("synthpop loaded\\n")'


def _address_space() -> tuple[int, int] | None:
    """(this process's RLIMIT_AS, what is left of it) in bytes; None without a limit or /proc."""
    import resource

    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    if limit == resource.RLIM_INFINITY:
        return None
    try:
        status = open("/proc/self/status").read()  # noqa: SIM115 - one read
        used = next(int(line.split()[1]) * 1024 for line in status.splitlines() if line.startswith("VmSize:"))
    except (OSError, StopIteration, ValueError, IndexError):
        return None
    return limit, max(limit - used, 0)


def _load_probe(limit: int) -> tuple[bool, str]:
    """Load synthpop in a fresh Rscript capped at `limit` bytes of address space: (loaded, how it failed)."""
    import resource
    import signal
    import subprocess

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    try:
        done = subprocess.run(["Rscript", "-e", _PROBE], capture_output=True, text=True, timeout=300,
                              check=False, preexec_fn=cap)
    except (OSError, subprocess.SubprocessError) as exc:
        return False, f"could not run ({type(exc).__name__}: {exc})"
    if done.returncode == 0 and "synthpop loaded" in done.stdout:
        return True, ""
    rc = done.returncode
    how = (f"died with {signal.Signals(-rc).name}" if rc < 0 and -rc in signal.Signals._value2member_map_
           else f"exited with code {rc}")
    said = [line.strip() for line in done.stderr.splitlines() if line.strip() not in ("", "Execution halted")]
    return False, how + (f" ({said[-1][:200]})" if said else "")


def _check_room_to_load() -> None:
    """Under a memory limit: MemoryError when synthpop cannot be loaded in the address space this process
    has left but a fresh R given the whole limit loads it (R would crash or mislead here)."""
    space = _address_space()
    if space is None:
        return
    limit, left = space
    loaded, how = _load_probe(max(left - _PROBE_MARGIN, 2**20))
    if loaded:
        return
    loaded_whole, _ = _load_probe(limit)
    if loaded_whole:
        raise MemoryError(
            f"R and synthpop cannot be loaded in the {left / 2**30:.2f} GB of address space this process has "
            f"left under its {limit / 2**30:g} GB limit: an Rscript given that much "
            f"(less {_PROBE_MARGIN // 2**20} MB) {how}, one given the whole limit loads synthpop")


def _synthpop_state() -> tuple[bool, str | None]:
    """(is the R package synthpop installed, why loading it fails or None); (False, why) when R itself
    does not start."""
    try:
        from holdbench.synthesizers._rconvert import _import_robjects

        ro = _import_robjects()
        installed = bool(ro.r('nzchar(system.file(package = "synthpop"))')[0])
        if not installed:
            return False, None
        error = ro.r('function() tryCatch({loadNamespace("synthpop"); ""}, error = function(e) conditionMessage(e))')()
        return True, str(error[0]) or None
    except Exception as exc:  # noqa: BLE001 - rpy2/R failing to start (ImportError, RRuntimeError, OSError)
        return False, f"{type(exc).__name__}: {exc}"


class Synthpop(Synthesizer):
    """`synthpop::syn()` with `method` (synthpop's default "cart"; the first visited column is
    always drawn by "sample") and syn()'s options at synthpop's defaults unless set."""

    def __init__(self, method: str = "cart", maxfaclevels: int = 60, minnumlevels: int = 1,
                 visit_sequence: list[str] | None = None, smoothing: dict | None = None,
                 proper: bool = False, cart_minbucket: int = 5, cart_cp: float = 1e-8,
                 r_seeds: dict | None = None) -> None:
        """smoothing: {column: "density"} for numeric columns; r_seeds: {dataset: R seed} (overrides
        the cell's seed for that dataset, e.g. the paper's draws)."""
        self.method = str(method)
        if not isinstance(maxfaclevels, int) or maxfaclevels < 1:
            raise ValueError(f"synthpop: maxfaclevels must be a positive integer, got {maxfaclevels!r}")
        self.options = {"maxfaclevels": maxfaclevels, "minnumlevels": minnumlevels, "proper": bool(proper),
                        "cart.minbucket": cart_minbucket, "cart.cp": cart_cp}
        if visit_sequence is not None and (not isinstance(visit_sequence, list | tuple) or not visit_sequence):
            raise ValueError(f"synthpop: visit_sequence must be a non-empty list of every column or null, "
                             f"got {visit_sequence!r}")
        self.visit_sequence = [str(c) for c in visit_sequence] if visit_sequence is not None else None
        self.smoothing = dict(smoothing or {})
        self.r_seeds = {str(k): int(v) for k, v in (r_seeds or {}).items()}

    def fit(self, train: pd.DataFrame, ctx: FitContext) -> None:
        from holdbench.synthesizers._rconvert import r_names, require_r, to_r

        # checked before R is asked for: a bad setting is refused whether or not synthpop is installed
        check_visit_sequence("synthpop", self.visit_sequence, ctx.schema.names, ctx.dataset)
        unknown = [c for c in self.smoothing if c not in ctx.schema.names]
        if unknown:
            raise ValueError(f"synthpop: smoothing names column(s) {unknown} that dataset "
                             f"{ctx.dataset!r} does not have")
        _check_room_to_load()
        try:
            require_r(["synthpop"])
        except SynthesizerUnavailable as exc:
            raise _load_failure(exc) from None
        self._schema = ctx.schema
        self._names = r_names(ctx.schema.names)
        self._dataset = ctx.dataset
        self._train = to_r(ctx.schema.coerce(train, "synthpop: training data"), ctx.schema, self._names)

    def sample(self, n: int, seed: int) -> pd.DataFrame:
        from rpy2.rinterface_lib.embedded import RRuntimeError
        from rpy2.robjects import StrVector
        from rpy2.robjects.packages import importr

        from holdbench.synthesizers._rconvert import from_r

        synthpop = importr("synthpop")
        pinned = self._dataset in self.r_seeds
        self._r_seed = self.r_seeds[self._dataset] if pinned else int(seed) % R_SEED_MODULUS
        self._r_seed_from = (f"r_seeds[{self._dataset!r}]" if pinned
                             else f"the cell's seed {int(seed)} mod {R_SEED_MODULUS}")
        args = {"method": self.method, "k": int(n), "print.flag": False, **self.options, "seed": self._r_seed}
        if self.visit_sequence:
            args["visit.sequence"] = StrVector([self._names[c] for c in self.visit_sequence])
        if self.smoothing:
            from rpy2.robjects import ListVector

            args["smoothing"] = ListVector({self._names[c]: v for c, v in self.smoothing.items()})
        try:
            result = synthpop.syn(self._train, **args)
        except RRuntimeError as exc:
            if any(w in str(exc).lower() for w in _OOM_WORDS):  # "cannot allocate vector", "memory exhausted"
                raise MemoryError(f"R: {' '.join(str(exc).split())}") from exc
            raise
        return from_r(result.rx2("syn"), self._schema, "synthpop: synthetic data", self._names)

    def info(self) -> dict:
        """Recorded with every cell: the versions (see `versions`), the R seed syn() was given and where it
        came from (None before `sample`), and the collation R ordered the factor levels by."""
        from holdbench.synthesizers._rconvert import r_collation

        return {**self.versions(), "r_seed": getattr(self, "_r_seed", None),
                "r_seed_from": getattr(self, "_r_seed_from", None), "r_level_order": r_collation()}

    def versions(self) -> dict[str, str | None]:
        """R, synthpop, rpart (synthpop's CART trees are rpart's) and rpy2; None for one not found."""
        from importlib import metadata

        import rpy2.robjects as ro

        def r_package(name: str) -> str | None:
            try:
                return str(ro.r(f'as.character(packageVersion("{name}"))')[0])
            except Exception:  # noqa: BLE001 - rpy2 raises RRuntimeError for a missing package
                return None

        return {"R": str(ro.r("R.version.string")[0]), "synthpop": r_package("synthpop"),
                "rpart": r_package("rpart"), "rpy2": metadata.version("rpy2")}
