"""holdbench: a reproducible, holdout-calibrated benchmark of tabular synthetic-data generators.

One import namespace over the repository's folders (pyproject.toml maps them):

- `holdbench.contracts`    (contracts/)    the ground floor: column schema, file I/O, plug-in environments
- `holdbench.metrics`      (metrics/)      every metric family and the typed registry of metrics
- `holdbench.synthesizers` (synthesizers/) every generator behind one interface
- `holdbench.benchmark`    (benchmark/)    the harness: data in, one cell's run, a study's outputs,
                                           the Snakemake workflow and the `holdbench` command
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("holdbench")
except PackageNotFoundError:  # a checkout that was never installed
    __version__ = "0+unknown"

__all__ = ["__version__"]
