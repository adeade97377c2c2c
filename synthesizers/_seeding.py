"""Deterministic execution for synthesizers: global seeds, derived seeds, one thread.

Libraries such as SDV, CTGAN and the MOSTLY AI engine draw from the global `random`,
`numpy.random` and torch generators, so a cell is reproducible only if all three are
seeded from the cell's seed right before fit and before sample. Running on one thread
serves the same goal (multi-threaded float reductions are not bit-stable) and is also
faster here: on two shared cores more threads made CTGAN several times slower.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

#: numpy's legacy global seed, like torch's and random's, must fit in 32 bits
_SEED_SPACE = 2**32


def check_seed(seed: int) -> int:
    """Return `seed` if it is a non-negative int, else raise a ValueError naming it."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)


def derive_seed(seed: int, *keys: int) -> int:
    """A 32-bit seed derived from `seed` and integer keys (SeedSequence, so streams don't overlap)."""
    seq = np.random.SeedSequence([check_seed(seed), *keys])
    return int(seq.generate_state(1, dtype=np.uint32)[0])


def seed_everything(seed: int) -> int:
    """Seed `random`, numpy's global generator and torch (if installed); return the 32-bit seed used.

    Seeds of 2**32 and above are folded into 32 bits through `derive_seed`, so every
    non-negative int is accepted and distinct small seeds stay distinct.
    """
    seed = check_seed(seed)
    seed32 = seed if seed < _SEED_SPACE else derive_seed(seed)
    random.seed(seed32)
    np.random.seed(seed32)
    try:
        import torch
    except ImportError:
        return seed32
    torch.manual_seed(seed32)
    return seed32


@contextmanager
def single_thread() -> Iterator[None]:
    """Run the block on one thread, then restore the previous settings.

    Limits torch and the BLAS/OpenMP pools to one thread and makes joblib sequential:
    ctgan's data transformer asks joblib for `n_jobs=-1` worker processes on tables of
    500 rows or more, which would take every core (and hide their CPU time).
    """
    from joblib import parallel_config
    from threadpoolctl import threadpool_limits

    try:
        import torch
    except ImportError:
        torch = None
    previous = torch.get_num_threads() if torch is not None else None
    if torch is not None:
        torch.set_num_threads(1)
    try:
        with threadpool_limits(limits=1), parallel_config(backend="sequential"):
            yield
    finally:
        if torch is not None:
            torch.set_num_threads(previous)
