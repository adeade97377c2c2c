"""Synthetic tables made elsewhere (the paper's MOSTLY AI and Gretel outputs, or your own files).

Commercial or remote generators cannot be rerun here, so their outputs are evaluated
as files: one per dataset, found through a path template.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from holdbench.contracts.io import read_table
from holdbench.synthesizers.base import FitContext, Synthesizer

#: OmegaConf's marker of a mandatory value left unset (`path_template: ???`)
_UNSET = "???"


class ExternalFiles(Synthesizer):
    """Reads `path_template` with `{dataset}` replaced by the dataset's name.

    .csv and .tsv (plain, .gz, .bz2, .xz or .zip) and .parquet are read as pandas reads them by default
    (holdbench.contracts.io.read_table: pandas' chunked type inference, the paper's reading; `sep`
    detected from the header unless given). Typing the values is the harness's job
    (holdbench.benchmark.cell.checks.check_output), and `values` says how:

    - ``pandas`` (default): each value as the paper's metrics read it (booleans 0/1, numbers
      and numeric text as numbers, any other text in a numeric column as missing), so the
      paper's published figures reproduce; every column mixing value types is reported with
      its counts in the cell's status.
    - ``lenient``: values coerced to the column's type where possible (the text "True" in a
      boolean column becomes true). NOT the paper's reading: figures differ from the published.
    - ``strict``: any value that is not of its column's type fails the cell.

    A relative path is taken from the current directory. sample(n, seed) returns the file's
    first n rows and ignores the seed; a file with fewer than n rows is an error, not a silent
    shortfall.
    """

    VALUES = ("pandas", "lenient", "strict")

    def __init__(self, path_template: str, values: str = "pandas", sep: str | None = None) -> None:
        if not isinstance(path_template, str) or not path_template.strip() or path_template == _UNSET:
            raise ValueError(
                "ExternalFiles: path_template is not set; give one such as "
                "path_template='/data/{dataset}_synthetic.csv.gz' (quoted in a Hydra override)"
            )
        if values not in self.VALUES:
            raise ValueError(f"ExternalFiles: values must be one of {self.VALUES}, got {values!r}")
        self.path_template = path_template
        self.output_values = values
        self.sep = sep
        self._table: pd.DataFrame | None = None
        self._path: Path | None = None

    def path_for(self, dataset: str) -> Path:
        return Path(self.path_template.replace("{dataset}", dataset)).expanduser()

    def fit(self, train: pd.DataFrame, ctx: FitContext) -> None:
        path = self.path_for(ctx.dataset)
        if not path.is_file():
            raise FileNotFoundError(
                f"ExternalFiles: no file {path} for dataset {ctx.dataset!r} "
                f"(path_template {self.path_template!r})"
            )
        self._table = read_table(path, sep=self.sep)
        self._path = path

    def sample(self, n: int, seed: int) -> pd.DataFrame:
        if self._table is None:
            raise RuntimeError("ExternalFiles: sample() called before fit()")
        if len(self._table) < n:
            raise ValueError(f"ExternalFiles: {self._path} has {len(self._table)} rows, {n} were requested")
        return self._table.iloc[:n].reset_index(drop=True)
