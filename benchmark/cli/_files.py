"""The checks on the files of `holdbench evaluate`, `check` and `report` that need no metric and no whole read:
names, headers, row counts and the --drop columns, before any work (check_files)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from holdbench.contracts.schema import columns_differ

#: an S with more rows than this is refused before it is read (--max-rows raises it): a pandas frame of
#: 10 million rows of text columns alone takes several GB, and every distance search grows with S
MAX_SYNTHETIC_ROWS = 2_000_000


def check_drop(drop: list[str], columns: list[str], train: str) -> None:
    """A --drop column that T (`train`, with these columns) has not is a usage error naming it."""
    unknown = [c for c in drop if c not in columns]
    if unknown:
        raise ValueError(f"--drop {unknown}: not a column of T ({train}); its columns: {columns}")


def count_rows(path: str) -> int:
    """Rows of a table without reading it into memory: parquet's metadata, else newline bytes (minus the
    header); a quoted newline inside a cell counts as a row, so this is an upper bound for csv."""
    p = Path(path)
    if p.name.lower().endswith(".parquet"):
        import pyarrow.parquet as pq

        return int(pq.ParquetFile(p).metadata.num_rows)
    from holdbench.contracts.io import open_bytes

    n, last = 0, b"\n"
    with open_bytes(p) as fh:
        while block := fh.read(1 << 22):
            n += block.count(b"\n")
            last = block[-1:]
    return max(n + (last != b"\n") - 1, 0)


def header(path: str, sep: str | None) -> list[str]:
    """The column names of a table, reading only its first lines."""
    from holdbench.contracts.io import InputError, csv_separator, read_table, unique_columns

    p = Path(path)
    if not p.is_file():
        raise InputError(f"{path}: no such file" if not p.exists() else f"{path}: is not a file")
    if p.name.lower().endswith(".parquet"):
        import pyarrow.parquet as pq

        try:
            names = [str(c) for c in pq.ParquetFile(p).schema_arrow.names]
        except (ValueError, OSError) as exc:  # pyarrow's ArrowInvalid is a ValueError
            raise InputError(f"{path}: cannot be read as a table: {exc}") from exc
        unique_columns(p, names)
        return names
    sep = sep or csv_separator(p)
    try:
        names = [str(c) for c in pd.read_csv(p, sep=sep, nrows=0).columns]
    except (ValueError, OSError, EOFError) as exc:
        read_table(p, sep=sep)  # raises the harness's named error
        raise InputError(f"{path}: cannot be read as a table: {exc}") from exc
    unique_columns(p, sep=sep)
    return names


def check_files(train: str, holdout: str, synthetic: dict[str, str], sep: str | None, max_rows: int | None,
                target: str | None, drop: list[str] = (), dataset: str | None = None) -> None:
    """Every problem that needs no metric, before any work (the file report, `evaluate` and `check` on files):
    unreadable or empty files, columns that differ from T's (named; the --drop columns, which T must hold, and
    those the `dataset` config's `drop` leaves out aside), a target that is not a column, an S over `max_rows`
    rows (None: MAX_SYNTHETIC_ROWS)."""
    max_rows = MAX_SYNTHETIC_ROWS if max_rows is None else max_rows
    dataset_drop = []
    if dataset:  # the dataset config's `drop` leaves its columns out of T, H and S too (where a file holds them)
        from holdbench.benchmark.data.tables import flat_config

        dataset_drop = [str(c) for c in flat_config(dataset).get("drop") or [] if str(c) not in drop]
    from holdbench.contracts.io import NOT_A_HOLDOUT, same_file

    cols = header(train, sep)
    if same_file(train, holdout):
        raise ValueError(f"holdout (H) {holdout}: the same table as train (T) {train}; {NOT_A_HOLDOUT}")
    check_drop(list(drop), cols, train)
    drop = [*drop, *dataset_drop]
    cols = [c for c in cols if c not in drop]
    if target is not None and target not in cols:
        from holdbench.benchmark.config import did_you_mean

        raise ValueError(f"--target {target!r} is not a column of T ({train}){did_you_mean([target], cols)}; "
                         f"its columns: {cols}")
    files = [("holdout (H)", holdout),  # an S named after its file is named by its path alone
             *(("synthetic" if n == Path(p).name else f"synthetic {n!r}", p) for n, p in synthetic.items())]
    for what, path in files:
        other = [c for c in header(path, sep) if c not in drop]
        missing = [c for c in cols if c not in other]
        extra = [c for c in other if c not in cols]
        if missing or extra:
            raise ValueError(f"{what} {path}: columns differ from T ({train}): {columns_differ(missing, extra)}")
    for what, path in [("train (T)", train), *files]:
        n = count_rows(path)
        if n == 0:
            raise ValueError(f"{what} {path}: the file has a header but no rows")
        if what.startswith("synthetic") and n > max_rows:
            raise ValueError(f"{what} {path}: about {n:,} rows, more than --max-rows {max_rows:,}. Every "
                             f"row is compared with every record of T and H; give a seeded sample of S "
                             f"(e.g. 1,000,000 rows) or raise --max-rows if the machine's memory allows "
                             "(about 1 GB per million rows of 15 columns)")
