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


def _umask() -> int:
    """The process umask (read by setting and restoring it: there is no getter)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


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
        # mkstemp makes 0600 files: give the result the mode a plain open() would (0666 & ~umask)
        os.chmod(tmp_path, 0o666 & ~_umask())
        os.replace(tmp_path, path)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def probe_directory(path: str | os.PathLike) -> Path:
    """The nearest existing directory at or above `path`, after a scratch directory was made and removed in it:
    what a later write under `path` will meet there (os.access says yes to root, also on /proc or a read-only
    mount). Raises NotADirectoryError when that nearest existing entry is a file, OSError naming it when nothing
    can be made in it. Nothing is left behind."""
    place = Path(path)
    while not place.exists() and place != place.parent:
        place = place.parent
    if not place.is_dir():
        raise NotADirectoryError(20, "not a directory", str(place))
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".holdbench-probe-", dir=place))
    except OSError as exc:  # named by the place, not by the scratch name that was refused
        raise OSError(exc.errno, exc.strerror, str(place)) from exc
    return place


def write_json(path: str | os.PathLike, obj: Any) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=True, default=_json_default) + "\n")


def read_json_object(path: str | os.PathLike) -> dict:
    """The JSON object in `path`, or {} when the file is missing, unreadable or not an object (for
    files read while other jobs may be writing them: a progress poll, a cache of figure keys)."""
    try:
        obj = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}
    return obj if isinstance(obj, dict) else {}


def write_text(path: str | os.PathLike, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def write_parquet(path: str | os.PathLike, df: pd.DataFrame) -> None:
    with atomic_path(path) as tmp:
        df.to_parquet(tmp, index=False)


def read_parquet(path: str | os.PathLike, columns: list[str] | None = None) -> pd.DataFrame:
    """pandas' read_parquet without pyarrow's pre-buffering (the one way holdbench reads parquet).

    Pre-buffering reads column chunks ahead on Arrow's I/O threads, which helps on object stores but not on a
    local disk; a process that exits right after such a read is at times aborted while those threads are torn
    down ("terminate called without an active exception", exit 134; apache/arrow#34314), after its work is
    done: a few runs in a hundred of a one-line read here. Without it the same read takes as long and exits cleanly.
    """
    import pandas as pd

    return pd.read_parquet(path, columns=columns, pre_buffer=False)


def write_csv(path: str | os.PathLike, df: pd.DataFrame) -> None:
    with atomic_path(path) as tmp:
        df.to_csv(tmp, index=False)


def _json_default(obj: Any) -> Any:
    if hasattr(obj, "item"):
        return obj.item()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


#: separators a csv file may use, tried in this order
SEPARATORS = (",", ";", "\t", "|")

#: compressions a .csv or .tsv file may have, by its last suffix (the ones pandas reads; a .zip holds one file)
COMPRESSIONS = (".gz", ".bz2", ".xz", ".zip")
#: the file names a table may have, compressed text first (a name's longest match wins)
TABLE_SUFFIXES = (*(t + c for t in (".csv", ".tsv") for c in COMPRESSIONS), ".csv", ".tsv", ".parquet")
#: the same, in words, for messages and help texts
TABLE_TYPES = ".csv or .tsv (plain, .gz, .bz2, .xz or .zip) or .parquet"


def table_suffix(path: str | os.PathLike) -> str | None:
    """The suffix of TABLE_SUFFIXES a file's name ends with (case-insensitive), else None."""
    name = Path(path).name.lower()
    return next((s for s in TABLE_SUFFIXES if name.endswith(s)), None)


def open_bytes(path: str | os.PathLike):
    """A binary file object of a (possibly compressed) text table's content, decompressed by its suffix
    (COMPRESSIONS); InputError names the file when a .zip holds other than one file."""
    import bz2
    import gzip
    import lzma
    import zipfile

    path = Path(path)
    name = path.name.lower()
    if name.endswith(".gz"):
        return gzip.open(path, "rb")
    if name.endswith(".bz2"):
        return bz2.open(path, "rb")
    if name.endswith(".xz"):
        return lzma.open(path, "rb")
    if name.endswith(".zip"):
        try:
            archive = zipfile.ZipFile(path)
        except zipfile.BadZipFile as exc:
            raise InputError(f"{path}: cannot be read as a zip file: {exc}") from exc
        members = [m for m in archive.namelist() if not m.endswith("/")]
        if len(members) != 1:
            archive.close()
            raise InputError(f"{path}: a zipped table must hold exactly one file; it holds {len(members)} "
                             f"({', '.join(members[:5])})")
        return archive.open(members[0])
    return open(path, "rb")


def _lzma_error() -> type[Exception]:
    import lzma

    return lzma.LZMAError


def open_text(path: str | os.PathLike, errors: str = "strict"):
    """A (possibly compressed) text table opened for reading as UTF-8 text (open_bytes), newlines untranslated."""
    import io

    return io.TextIOWrapper(open_bytes(path), encoding="utf-8", errors=errors, newline="")


def csv_separator(path: str | os.PathLike, default: str | None = None) -> str:
    """The field separator of a csv/tsv file, from its header line.

    The candidate (``,``, ``;``, tab, ``|``) that splits the header into the most fields wins,
    ties going to `default` (tab for .tsv, else comma); a header of one field keeps `default`.
    So a ';'-separated file is never read as one text column.
    """
    import csv

    path = Path(path)
    name = path.name.lower()
    default = default or ("\t" if ".tsv" in name else ",")
    try:
        with open_text(path, errors="replace") as fh:
            header = fh.readline()
    except (OSError, EOFError, _lzma_error()) as exc:
        raise InputError(f"{path}: cannot be read: {exc}") from exc
    best, best_n = default, len(next(csv.reader([header], delimiter=default), []))
    for sep in SEPARATORS:
        n = len(next(csv.reader([header], delimiter=sep), []))
        if n > best_n:
            best, best_n = sep, n
    return best


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """True when two paths name one file or two files of the same bytes (a holdout that is the training
    table given twice, or its copy); False when either cannot be read (the reader says why)."""
    import filecmp

    try:
        return os.path.samefile(a, b) or filecmp.cmp(a, b, shallow=False)
    except OSError:
        return False


#: why H may not be T: every measure of S is read against H
NOT_A_HOLDOUT = ("H must hold real records the generator never saw: against T itself every ratio is undefined "
                 "and every privacy test passes by construction")


def header_names(path: str | os.PathLike, sep: str | None = None) -> list[str]:
    """The column names of a csv/tsv file's header as written (pandas renames a repeated name, `inc` read as
    `inc.1`), with `sep`, else the detected separator; a byte-order mark is not part of the first name."""
    import csv

    with open_text(path) as fh:
        names = next(csv.reader(fh, delimiter=sep or csv_separator(path)), [])
    return [names[0].removeprefix("\ufeff"), *names[1:]] if names else []


def unique_columns(path: str | os.PathLike, names: list | None = None, sep: str | None = None) -> None:
    """InputError naming the file and the names when a table's header repeats a column name: `names` as read
    (a parquet file's), else the csv/tsv header as written (header_names with `sep`)."""
    import csv

    if names is None:
        try:
            names = header_names(path, sep)
        except (OSError, EOFError, ValueError, csv.Error, _lzma_error()):
            return  # the reader itself says what is wrong with the file
    names = [str(n) for n in names]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        where = "; ".join(f"{n!r} in columns {', '.join(str(i + 1) for i, m in enumerate(names) if m == n)}"
                          for n in repeated)
        raise InputError(f"{path}: a column name appears more than once in the header ({where}): every column "
                         "needs a name of its own")


def read_table(path: str | os.PathLike, sep: str | None = None) -> pd.DataFrame:
    """Read a table (TABLE_TYPES) as pandas does by default; errors name the file.

    CSV values are typed by pandas' default `read_csv` (chunked type inference), the way the
    paper read its files: a column whose first 2**15-odd rows are booleans and whose later rows
    hold text comes back mixing bools and strings, and the harness's output check reports it.
    `sep` is the field separator; by default it is detected from the header (csv_separator).
    """
    import pandas as pd

    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such file")
    if path.is_dir():
        raise InputError(f"{path}: is a directory, not a table")
    suffix = table_suffix(path)
    try:
        if suffix == ".parquet":
            import pyarrow.parquet as pq

            unique_columns(path, pq.ParquetFile(path).schema_arrow.names)  # before pyarrow's own message
            return read_parquet(path)
        if suffix is not None:
            import warnings

            sep = sep or csv_separator(path)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", pd.errors.DtypeWarning)  # mixed types are reported
                df = pd.read_csv(path, sep=sep)
            unique_columns(path, sep=sep)
            return df
    except InputError:
        raise
    except UnicodeDecodeError as exc:  # a ValueError: before the generic case, to say what to do
        raise InputError(f"{path}: cannot be read as a table: it is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} "
                         "cannot be decoded); save it as UTF-8 (a Latin-1 CSV: iconv -f latin1 -t utf-8 < in.csv "
                         "> out.csv)") from exc
    except (ValueError, OSError, EOFError, pd.errors.ParserError, _lzma_error()) as exc:
        raise InputError(f"{path}: cannot be read as a table: {clean_line(exc)}") from exc
    raise InputError(f"{path}: unsupported file type (use {TABLE_TYPES})")


_ANSI = None


def clean_line(text: object, limit: int = 500) -> str:
    """One printable line: terminal escape sequences, NUL and other control characters removed,
    whitespace runs collapsed, cut at `limit` characters. An object whose str() fails is named
    by its type."""
    import re

    global _ANSI
    if _ANSI is None:
        _ANSI = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|[@-_])|\x9b[0-?]*[ -/]*[@-~]")
    try:
        s = text if isinstance(text, str) else str(text)
    except Exception:  # noqa: BLE001 - an unprintable object still gets a name
        s = f"<unprintable {type(text).__name__}>"
    s = _ANSI.sub("", s)
    s = "".join(ch if ch.isprintable() or ch in " \t\n" else " " for ch in s)
    return " ".join(s.split())[:limit]
