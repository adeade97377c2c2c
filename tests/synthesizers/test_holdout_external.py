"""Holdout reference row and synthetic tables read from files."""

from __future__ import annotations

import pandas as pd
import pytest

from holdbench.benchmark.config import build_synthesizer, synthesizer_config
from holdbench.contracts.schema import Schema
from holdbench.synthesizers.base import FitContext
from holdbench.benchmark.cell.checks import UNPARSEABLE_ATTR, SynthesizerOutputError, check_output
from holdbench.synthesizers.external import ExternalFiles

# -- holdout -------------------------------------------------------------------------

def test_holdout_returns_h_whatever_n(train, holdout, schema, fit_ctx):
    synth = build_synthesizer(synthesizer_config("holdout", preset="smoke"))
    assert synth.needs_holdout and synth.holdout_rule
    synth.fit(train, fit_ctx(with_holdout=True))
    out = synth.sample(50_000, seed=1)
    pd.testing.assert_frame_equal(out, holdout)
    pd.testing.assert_frame_equal(check_output(out, schema, len(holdout), "holdout"), holdout)
    pd.testing.assert_frame_equal(synth.sample(10, seed=2), out)


def test_holdout_needs_h(train, fit_ctx):
    synth = build_synthesizer(synthesizer_config("holdout"))
    with pytest.raises(ValueError, match="no holdout"):
        synth.fit(train, fit_ctx(with_holdout=False))


# -- external files ------------------------------------------------------------------

def _external(tmp_path, suffix):
    template = str(tmp_path / ("{dataset}_synth" + suffix))
    cfg = synthesizer_config("external", preset="smoke", overrides=[f"path_template='{template}'"])
    return build_synthesizer(cfg)


@pytest.mark.parametrize("suffix", [".csv", ".csv.gz", ".parquet"])
def test_external_reads_the_first_n_rows(tmp_path, suffix, train, schema, fit_ctx):
    path = tmp_path / f"mixed_synth{suffix}"
    if suffix == ".parquet":
        train.to_parquet(path, index=False)
    else:
        train.to_csv(path, index=False)
    synth = _external(tmp_path, suffix)
    synth.fit(train.head(0), fit_ctx(dataset="mixed"))
    out = synth.sample(120, seed=3)
    assert len(out) == 120
    pd.testing.assert_frame_equal(check_output(out, schema, 120, "external"), train.head(120))
    pd.testing.assert_frame_equal(synth.sample(120, seed=4), out)


def test_external_too_few_rows(tmp_path, train, fit_ctx):
    train.head(40).to_csv(tmp_path / "mixed_synth.csv", index=False)
    synth = _external(tmp_path, ".csv")
    synth.fit(train, fit_ctx(dataset="mixed"))
    with pytest.raises(ValueError, match=r"mixed_synth\.csv has 40 rows, 41 were requested"):
        synth.sample(41, seed=0)


def test_external_missing_file_names_the_path(tmp_path, train, fit_ctx):
    synth = _external(tmp_path, ".csv")
    with pytest.raises(FileNotFoundError, match=r"other_synth\.csv.*'other'"):
        synth.fit(train, fit_ctx(dataset="other"))


@pytest.mark.parametrize("template", [None, "", "  "])
def test_external_needs_a_template(template):
    with pytest.raises(ValueError, match="path_template is not set"):
        ExternalFiles(template)


def test_generic_external_config_defaults_to_the_data_dir(tmp_path, monkeypatch, train, fit_ctx):
    monkeypatch.setenv("HOLDBENCH_DATA_DIR", str(tmp_path))
    synth = build_synthesizer(synthesizer_config("external", preset="smoke"))
    with pytest.raises(FileNotFoundError, match=r"external/mixed\.csv"):
        synth.fit(train, fit_ctx(dataset="mixed"))
    (tmp_path / "external").mkdir()
    train.to_csv(tmp_path / "external" / "mixed.csv", index=False)
    synth.fit(train, fit_ctx(dataset="mixed"))
    assert len(synth.sample(len(train), seed=0)) == len(train)


@pytest.mark.parametrize("name", ["published_mostly", "published_gretel"])
def test_paper_outputs_smoke(name, paper_dir, monkeypatch):
    monkeypatch.setenv("HOLDBENCH_SHARED_DIR", str(paper_dir.parents[1]))
    train = pd.read_csv(paper_dir / "adult_trn.csv.gz")
    schema = Schema.infer("adult", train)
    synth = build_synthesizer(synthesizer_config(name, preset="smoke"))
    assert synth.output_values == "pandas"  # the paper's reading of its files
    synth.fit(schema.coerce(train, "T"), FitContext(schema, 0, "adult"))
    out = check_output(synth.sample(50_000, seed=0), schema, 50_000, name, values=synth.output_values)
    assert len(out) == 50_000


def test_paper_gretel_garbage_is_counted_not_fatal(paper_dir, monkeypatch):
    monkeypatch.setenv("HOLDBENCH_SHARED_DIR", str(paper_dir.parents[1]))
    train = pd.read_csv(paper_dir / "online-shoppers_trn.csv.gz")
    schema = Schema.infer("online-shoppers", train)
    synth = build_synthesizer(synthesizer_config("published_gretel"))
    synth.fit(schema.coerce(train, "T"), FitContext(schema, 0, "online-shoppers"))
    raw = synth.sample(50_000, seed=0)
    with pytest.raises(SynthesizerOutputError, match="column '"):
        check_output(raw, schema, 50_000, "external_gretel")
    out = check_output(raw, schema, 50_000, "external_gretel", lenient=True)
    counts = out.attrs[UNPARSEABLE_ATTR]
    assert counts["Weekend"] >= 1 and counts["ProductRelated_Duration"] > 100
    assert set(counts) <= {c.name for c in schema.columns if c.dtype != "str"}
