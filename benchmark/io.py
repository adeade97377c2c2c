"""Reading user tables and writing every output atomically.

A killed job must never leave a half-written file that a rerun would trust, so every
writer goes through a temporary file in the same directory and an os.replace.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


class InputError(ValueError):
    """A file the user named cannot be read as a table."""


@contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path next to `path`; it replaces `path` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.replace(tmp_path, path)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def write_json(path: str | os.PathLike, obj: Any) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=True, default=_json_default) + "\n")


def write_text(path: str | os.PathLike, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def write_parquet(path: str | os.PathLike, df: pd.DataFrame) -> None:
    with atomic_path(path) as tmp:
        df.to_parquet(tmp, index=False)


def write_csv(path: str | os.PathLike, df: pd.DataFrame) -> None:
    with atomic_path(path) as tmp:
        df.to_csv(tmp, index=False)


def _json_default(obj: Any) -> Any:
    if hasattr(obj, "item"):
        return obj.item()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def read_table(path: str | os.PathLike) -> pd.DataFrame:
    """Read .csv, .csv.gz or .parquet; errors name the file."""
    import pandas as pd

    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such file")
    name = path.name.lower()
    try:
        if name.endswith(".parquet"):
            return pd.read_parquet(path)
        if name.endswith((".csv", ".csv.gz", ".tsv", ".tsv.gz")):
            sep = "\t" if ".tsv" in name else ","
            return pd.read_csv(path, sep=sep, low_memory=False)
    except (ValueError, OSError, pd.errors.ParserError) as exc:
        raise InputError(f"{path}: cannot be read as a table: {exc}") from exc
    raise InputError(f"{path}: unsupported file type (use .csv, .csv.gz, .tsv or .parquet)")
