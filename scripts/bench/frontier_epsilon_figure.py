"""Draw the frontier page's fidelity-against-ε figures from its committed tables.

    python scripts/bench/frontier_epsilon_figure.py [TABLES_DIR] [IMAGES_DIR]

TABLES_DIR (default results/published/frontier) holds dp_epsilon.csv and references.csv, both written by
scripts/bench/frontier_dp_table.py; IMAGES_DIR (default results/img/frontier) receives one
frontier_epsilon_<dataset>.png per dataset of dp_epsilon.csv (benchmark/outputs/plots/frontier_epsilon.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
from holdbench.benchmark.outputs.plots.frontier_epsilon import FILENAME, draw_epsilon

ROOT = Path(__file__).resolve().parents[2]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) > 2 or any(a.startswith("-") for a in args):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    tables = Path(args[0]) if args else ROOT / "results" / "published" / "frontier"
    images = Path(args[1]) if len(args) > 1 else ROOT / "results" / "img" / "frontier"
    dp_path, ref_path = tables / "dp_epsilon.csv", tables / "references.csv"
    if not dp_path.is_file():
        print(f"frontier_epsilon_figure: {dp_path} does not exist (run scripts/bench/frontier_dp_table.py)",
              file=sys.stderr)
        return 2
    dp = pd.read_csv(dp_path, dtype=str, keep_default_na=False)
    refs = pd.read_csv(ref_path, dtype=str, keep_default_na=False) if ref_path.is_file() else pd.DataFrame()
    images.mkdir(parents=True, exist_ok=True)
    for dataset in dict.fromkeys(dp["dataset"]):
        path = draw_epsilon(dp, refs, dataset, images / FILENAME.format(dataset=dataset))
        print(path if path else f"{dataset}: no DP row with an F3 ratio, no figure")
    return 0


if __name__ == "__main__":
    sys.exit(main())
