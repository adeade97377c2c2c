"""`holdbench compare FRESH REFERENCE` (benchmark/outputs/compare.py): a fresh study beside the published one,
its Spearman correlation of F3 ratios and the fresh study's CPU split between generating and evaluating."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.stats import spearmanr

from holdbench.benchmark.outputs.compare import CompareError, compare, render_markdown, write_comparison
from tests.benchmark.conftest import DATASETS, SEEDS, build_study

FRESH = ["holdout", "gauss", "ctgan", "cart"]
# the reference lists its synthesizers in another order: its F3 ratios (fake_metrics: growing with the
# index) rank cart < ctgan < gauss where the fresh study ranks gauss < ctgan < cart
REFERENCE = ["holdout", "published_cart", "published_ctgan", "published_gauss", "published_gretel"]


def _f3_ratio(d: int, s: int, seeds) -> float:
    """conftest.fake_metrics' F3 ratio, averaged over the given seeds (written out, not imported)."""
    return float(np.mean([(0.03 * (d + 1) * (s + 1) + 0.003 * k) / (0.03 * (d + 1) + 0.003 * k) for k in seeds]))


@pytest.fixture(scope="module")
def studies(tmp_path_factory):
    root = tmp_path_factory.mktemp("results")
    fresh = build_study(root, "paper", FRESH)
    build_study(root, "paper_published", REFERENCE)
    bench = fresh.path / "benchmarks" / "alpha" / "seed0"
    bench.mkdir(parents=True)
    head = "s\th:m:s\tmax_rss\tcpu_time\n"
    (bench / "split.tsv").write_text(head + "1.0\t0:00:01\t100\t1.0\n")   # the split job: neither side
    (bench / "gauss.generate.tsv").write_text(head + "5.0\t0:00:05\t100\t10.0\n")
    (bench / "gauss.evaluate.tsv").write_text(head + "1.0\t0:00:01\t100\t2.0\n")
    (bench / "ctgan.evaluate_shard0.tsv").write_text(head + "1.0\t0:00:01\t100\t3.0\n")
    (bench / "mst_eps0.1.generate.tsv").write_text(head + "1.0\t0:00:01\t100\t30.0\n")
    # cart's cell has the harness's own CPU record: it wins over Snakemake's (which misses the tail of a
    # long process); beta/cart has no Snakemake record at all (a job run by hand) and still counts
    (bench / "cart.generate.tsv").write_text(head + "60.0\t0:01:00\t100\t31.0\n")
    for dataset, record in (("alpha", {"generate_cpu_seconds": 45.5, "evaluate_cpu_seconds": 7.25}),
                            ("beta", {"generate_cpu_seconds": 3.0, "evaluate_cpu_seconds": 1.0})):
        path = fresh.path / dataset / "seed0" / "cart" / "status.json"
        path.write_text(json.dumps({**json.loads(path.read_text()), **record}))
    return root, compare(root / "paper", root / "paper_published")


def test_rows_pair_published_synthesizers_with_fresh_ones(studies):
    _, c = studies
    alpha = c.rows[c.rows["dataset"] == "alpha"].set_index("synthesizer")
    assert list(alpha.index) == ["holdout", "gauss", "ctgan", "cart", "gretel"]  # fresh order, then reference-only
    # fresh alpha/ctgan: seed 1 is the fixture's error cell, so its mean is seed 0's alone
    assert alpha.loc["ctgan", "F3_ratio"] == pytest.approx(_f3_ratio(0, 2, [0]))
    assert alpha.loc["gauss", "F3_ratio"] == pytest.approx(_f3_ratio(0, 1, SEEDS))
    # published_gauss is the reference's synthesizer index 3
    assert alpha.loc["gauss", "F3_ratio_reference"] == pytest.approx(_f3_ratio(0, 3, SEEDS))
    assert alpha.loc["cart", "F3_ratio_reference"] == pytest.approx(_f3_ratio(0, 1, SEEDS))
    assert math.isnan(alpha.loc["gretel", "F3_ratio"]) and alpha.loc["gretel", "F3_ratio_reference"] > 0
    assert alpha.loc["gauss", "fit_seconds"] == pytest.approx(2.5)   # fixture: 1 + s + seed, mean over seeds
    assert alpha.loc["ctgan", "status"] == "1 ok, 1 error"


def test_spearman_over_shared_synthesizers_without_the_holdout(studies):
    _, c = studies
    for d in DATASETS:
        row = c.spearman[c.spearman["dataset"] == d].iloc[0]
        assert row["n"] == 3 and row["synthesizers"].split() == ["gauss", "ctgan", "cart"]
        rows = c.rows[(c.rows["dataset"] == d) & c.rows["synthesizer"].isin(["gauss", "ctgan", "cart"])]
        expected = spearmanr(rows["F3_ratio"], rows["F3_ratio_reference"]).statistic
        assert row["rho"] == pytest.approx(expected) and row["rho"] == pytest.approx(-1.0)


def test_cpu_split_sums_generate_and_evaluate_records(studies):
    _, c = studies
    alpha = c.cpu.set_index("dataset").loc["alpha"]
    assert alpha["generate_cpu_s"] == pytest.approx(85.5)       # gauss 10 + mst_eps0.1 30 + cart 45.5 (not 31)
    assert alpha["evaluate_cpu_s"] == pytest.approx(12.25)      # evaluate 2 + one shard 3 + cart 7.25
    assert alpha["evaluate_share"] == pytest.approx(12.25 / 97.75)
    assert (alpha["harness_jobs"], alpha["snakemake_jobs"]) == (2, 4)
    beta = c.cpu.set_index("dataset").loc["beta"]
    assert (beta["generate_cpu_s"], beta["evaluate_cpu_s"], beta["harness_jobs"], beta["snakemake_jobs"]) == \
        (3.0, 1.0, 2, 0)
    total = c.cpu.set_index("dataset").loc["all"]
    assert total["generate_cpu_s"] == pytest.approx(88.5) and total["evaluate_jobs"] == 4


def test_markdown_and_files(studies):
    root, c = studies
    md = render_markdown(c, "paper", "paper_published")
    gauss = next(line for line in md.splitlines() if line.startswith("| gauss |"))
    assert f"{_f3_ratio(0, 1, SEEDS):.3f} ({_f3_ratio(0, 3, SEEDS):.3f})" in gauss
    assert "Spearman ρ of the F3 ratios (3 synthesizers ok on both sides, holdout left out): -1.000" in md
    paths = write_comparison(c, root / "paper", "paper_published")
    assert paths["md"].read_text() == md and paths["csv"].stat().st_size > 0


def test_explicit_pair_and_bad_studies(studies, tmp_path):
    root, _ = studies
    c = compare(root / "paper", root / "paper_published", pairs={"published_gretel": "holdout2"})
    assert "holdout2" in set(c.rows["synthesizer"]) and "gretel" not in set(c.rows["synthesizer"])
    with pytest.raises(CompareError, match="no study.json"):
        compare(root / "paper", tmp_path / "nothing")
    other = build_study(tmp_path, "other", ["gauss"])
    (other.path / "study.json").write_text('{"name": "other", "datasets": ["alpha_x", "beta_x"], "seeds": [0, 1]}')
    for d in DATASETS:
        (other.path / d).rename(other.path / f"{d}_x")
    with pytest.raises(CompareError, match="share no dataset"):
        compare(root / "paper", other.path)


def test_cli_with_study_paths_writes_beside_the_fresh_study_under_the_reference_name(studies, monkeypatch, tmp_path):
    """Studies given as paths (e.g. a reference study in another checkout): the outputs are named after the
    reference study's directory, never a file under a path built from the argument."""
    from holdbench.benchmark.cli import main

    root, _ = studies
    monkeypatch.chdir(tmp_path)
    assert main(["compare", str(root / "paper"), str(root / "paper_published")]) == 0
    assert (root / "paper" / "compare_paper_published.md").is_file()
    assert (root / "paper" / "compare_paper_published.csv").is_file()
    assert not [p for p in (root / "paper").iterdir() if p.is_dir() and p.name.startswith("compare_")]


def test_two_references_of_one_name_do_not_overwrite_each_others_comparison(studies, monkeypatch, tmp_path):
    """Issue 36, item 10: a reference given as a path elsewhere is labelled with a digest of its path too."""
    import shutil

    from holdbench.benchmark.cli import main

    root, _ = studies
    copies = [tmp_path / side / "paper_published" for side in ("a", "b")]
    for c in copies:
        shutil.copytree(root / "paper_published", c)
    monkeypatch.chdir(tmp_path)
    before = {p.name for p in (root / "paper").glob("compare_*")}
    for c in copies:
        assert main(["compare", str(root / "paper"), str(c)]) == 0
    made = {p.name for p in (root / "paper").glob("compare_*.md")} - before
    assert len(made) == 2 and all(n.startswith("compare_paper_published-") for n in made)
