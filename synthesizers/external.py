"""Synthetic tables made elsewhere (the paper's MOSTLY AI and Gretel outputs, or your own files).

Commercial or remote generators cannot be rerun here, so their outputs are evaluated
as files: one per dataset, found through a path template.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from benchmark.io import read_table
from synthesizers.base import FitContext, Synthesizer

#: OmegaConf's marker of a mandatory value left unset (`path_template: ???`)
_UNSET = "???"


class ExternalFiles(Synthesizer):
    """Reads `path_template` with `{dataset}` replaced by the dataset's name.

    .csv, .csv.gz, .tsv(.gz) and .parquet are read as they are (benchmark.io.read_table);
    typing the values is the harness's job (check_output). A relative path is taken from
    the current directory. sample(n, seed) returns the file's first n rows and ignores the
    seed; a file with fewer than n rows is an error, not a silent shortfall.

    `lenient_output` (default true) tells the harness to turn values that are not numbers
    in numeric columns into missing values (and count them) instead of failing the cell:
    the paper's Gretel files hold such garbage, and the paper's metrics treat a
    non-numeric value as missing too (SPEC §3, §4).
    """

    def __init__(self, path_template: str, lenient_output: bool = True) -> None:
        if not isinstance(path_template, str) or not path_template.strip() or path_template == _UNSET:
            raise ValueError(
                "ExternalFiles: path_template is not set; give one such as "
                "path_template='/data/{dataset}_synthetic.csv.gz' (quoted in a Hydra override)"
            )
        self.path_template = path_template
        self.lenient_output = bool(lenient_output)
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
        self._table = read_table(path)
        self._path = path

    def sample(self, n: int, seed: int) -> pd.DataFrame:
        if self._table is None:
            raise RuntimeError("ExternalFiles: sample() called before fit()")
        if len(self._table) < n:
            raise ValueError(f"ExternalFiles: {self._path} has {len(self._table)} rows, {n} were requested")
        return self._table.iloc[:n].reset_index(drop=True)
