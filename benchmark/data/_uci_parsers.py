"""Parsers of the raw UCI files into the canonical tables of docs/definitions/paper.md §1.

Every parser reads with `keep_default_na=False` so that values such as adult's `?`
stay ordinary categories (as R's fread kept them); only empty fields are missing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd

from holdbench.contracts.io import read_parquet

_NA = {"keep_default_na": False, "na_values": [""]}


def parse_adult(paths: list[Path], columns: list[str]) -> pd.DataFrame:
    """adult.data + adult.test stacked; the test file's banner line skipped, labels' '.' removed."""
    data, test = paths
    frames = [
        pd.read_csv(data, header=None, names=columns, skipinitialspace=True, **_NA),
        pd.read_csv(test, header=None, names=columns, skipinitialspace=True, skiprows=1, **_NA),
    ]
    df = pd.concat(frames, ignore_index=True)
    target = columns[-1]
    df[target] = df[target].str.rstrip(".")
    return df


def parse_bank(paths: list[Path], columns: list[str]) -> pd.DataFrame:
    """bank-full.csv: ';'-separated with quoted strings."""
    return pd.read_csv(paths[0], sep=";", **_NA)


def parse_credit(paths: list[Path], columns: list[str]) -> pd.DataFrame:
    """Tab-separated export of the xls with its second header row as names; ID dropped."""
    df = pd.read_csv(paths[0], sep="\t", **_NA)
    return df.drop(columns=["ID"], errors="ignore")


def parse_online(paths: list[Path], columns: list[str]) -> pd.DataFrame:
    """online_shoppers_intention.csv as is (TRUE/FALSE booleans)."""
    return pd.read_csv(paths[0], true_values=["TRUE"], false_values=["FALSE"], **_NA)


def parse_file(path: Path, fmt: str | None = None, sep: str | None = None) -> pd.DataFrame:
    """A user's own table (csv, tsv, parquet), read as pandas would by default (docs/definitions/paper.md §1 kinds).

    `sep` is the field separator; by default it is detected from the header line
    (holdbench.contracts.io.csv_separator), so a ';'-separated file never loads as one text column.
    """
    name = path.name.lower()
    fmt = fmt or ("parquet" if name.endswith(".parquet") else "tsv" if ".tsv" in name else "csv")
    if fmt == "parquet":
        return read_parquet(path)
    return pd.read_csv(path, sep=sep or _separator(path, fmt))


def _separator(path: Path, fmt: str | None) -> str:
    from holdbench.contracts.io import csv_separator

    return csv_separator(path, "\t" if fmt == "tsv" else None)


def text_header(path: Path, fmt: str | None = None, sep: str | None = None) -> list[str] | None:
    """The raw header of a csv/tsv file (pandas renames duplicate names silently), else None."""
    from holdbench.contracts.io import header_names

    name = path.name.lower()
    if fmt == "parquet" or (fmt is None and name.endswith(".parquet")):
        return None
    return header_names(path, sep or _separator(path, fmt))


PARSERS: dict[str, Callable[[list[Path], list[str]], pd.DataFrame]] = {
    "adult": parse_adult,
    "bank": parse_bank,
    "credit": parse_credit,
    "online": parse_online,
}
