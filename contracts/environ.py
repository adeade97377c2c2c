"""Environment variables set for a block and restored afterwards (set ones to their values, unset ones removed)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping


@contextlib.contextmanager
def environ_set(values: Mapping[str, str]) -> Iterator[None]:
    """`os.environ` updated with `values` for the block; afterwards each of those variables has its earlier value
    again, or is removed when it had none (also when the block raises)."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
