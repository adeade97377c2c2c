"""Tables written with any compression pandas reads by suffix (.gz, .bz2, .xz, .zip) are read by every path
that takes a user's file: read_table (external S, provided splits, evaluate, check), the file report's
header and row checks and names, and a file dataset's `path`. Each must give the plain file's frame."""

from __future__ import annotations

import zipfile

import numpy as np
import pandas as pd
import pytest

from holdbench.contracts.io import InputError, csv_separator, read_table, table_suffix

COMPRESSIONS = ("gz", "bz2", "xz", "zip")


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = 240
    return pd.DataFrame({"age": rng.integers(18, 80, n), "city": rng.choice(["Wien", "Graz", "Köln"], n),
                         "income": rng.lognormal(8, 1, n).round(2)})


def _write(frame: pd.DataFrame, path, sep: str = ",") -> str:
    frame.to_csv(path, sep=sep, index=False)  # pandas compresses by the suffix
    return str(path)


@pytest.mark.parametrize("comp", COMPRESSIONS)
@pytest.mark.parametrize("kind, sep", [("csv", ","), ("csv", ";"), ("tsv", "\t")])
def test_read_table_reads_compressed_text_as_the_plain_file(frame, tmp_path, comp, kind, sep):
    plain = _write(frame, tmp_path / f"t.{kind}", sep)
    packed = _write(frame, tmp_path / f"t.{kind}.{comp}", sep)
    assert csv_separator(packed) == sep  # detected from the decompressed header, not the archive's bytes
    pd.testing.assert_frame_equal(read_table(packed), read_table(plain))


def test_table_names_and_the_refusals_name_the_file(tmp_path, frame):
    assert table_suffix("dir/S.CSV.ZIP") == ".csv.zip" and table_suffix("S.tsv.bz2") == ".tsv.bz2"
    assert table_suffix("S.txt") is None
    with pytest.raises(InputError, match=r"S\.txt: unsupported file type \(use \.csv or \.tsv \(plain, \.gz, "):
        _write(frame, tmp_path / "S.txt")
        read_table(tmp_path / "S.txt")
    two = tmp_path / "two.csv.zip"
    with zipfile.ZipFile(two, "w") as z:
        z.writestr("a.csv", "x\n1\n")
        z.writestr("b.csv", "x\n2\n")
    with pytest.raises(InputError, match=r"two\.csv\.zip: a zipped table must hold exactly one file; it holds 2 "
                                         r"\(a\.csv, b\.csv\)"):
        read_table(two)
    (tmp_path / "bad.csv.xz").write_bytes(b"not xz at all")
    with pytest.raises(InputError, match=r"bad\.csv\.xz: cannot be read"):
        read_table(tmp_path / "bad.csv.xz")


def test_the_file_report_reads_zipped_files_and_names_s_by_its_file(frame, tmp_path):
    from holdbench.benchmark.cli._files import count_rows
    from holdbench.benchmark.outputs.filereport.inputs import read_flat, stem

    half = len(frame) // 2
    paths = {}
    for name, part, comp in (("T", frame.iloc[:half], "zip"), ("H", frame.iloc[half:], "bz2"),
                             ("S", frame.sample(frac=1.0, random_state=0).iloc[:half], "xz")):
        paths[name] = _write(part, tmp_path / f"{name}.csv.{comp}")
        _write(part, tmp_path / f"{name}.csv")
    assert count_rows(paths["T"]) == half and stem(paths["S"]) == "S"
    got = read_flat(paths["T"], paths["H"], {stem(paths["S"]): paths["S"]}, dataset=None, target=None)
    want = read_flat(str(tmp_path / "T.csv"), str(tmp_path / "H.csv"), {"S": str(tmp_path / "S.csv")},
                     dataset=None, target=None)
    pd.testing.assert_frame_equal(got.train, want.train)
    pd.testing.assert_frame_equal(got.holdout, want.holdout)
    pd.testing.assert_frame_equal(got.synthetic["S"], want.synthetic["S"])


def test_a_file_dataset_may_be_zipped(frame, tmp_path, monkeypatch):
    from holdbench.benchmark.data.tables import dataset_schema, load_dataset
    from tests.workflow.helpers import make_conf

    monkeypatch.setenv("HOLDBENCH_CACHE_DIR", str(tmp_path / "cache"))
    conf = make_conf(tmp_path)
    monkeypatch.setenv("HOLDBENCH_CONF_DIR", str(conf))
    for name, suffix in (("packed", "csv.zip"), ("plain", "csv")):
        path = _write(frame, tmp_path / f"{name}.{suffix}", ";")
        (conf / "dataset" / f"{name}.yaml").write_text(f"source: file\npath: {path}\n")
    pd.testing.assert_frame_equal(load_dataset("packed"), load_dataset("plain"))
    assert dataset_schema("packed").kinds == dataset_schema("plain").kinds


def test_a_folder_of_synthetic_files_names_each_table_after_its_file(frame, tmp_path):
    """`holdbench report --synthetic DIR`: every table file of the folder (any TABLE_SUFFIXES name, not its
    subfolders nor other files), in name order, each named after its file; names must stay unique."""
    from holdbench.benchmark.outputs.filereport.inputs import named_paths

    folder = tmp_path / "candidates"
    (folder / "old").mkdir(parents=True)
    for name in ("b_ctgan.csv.zip", "a_cart.parquet", "c_tvae.tsv.gz", "old/z.csv"):
        frame.to_parquet(folder / name) if name.endswith(".parquet") else _write(frame, folder / name)
    (folder / "README.txt").write_text("not a table")
    (folder / ".hidden.csv").write_text("x\n1\n")
    got = named_paths([str(folder), f"mine={tmp_path / 'mine.csv'}"])
    assert list(got) == ["a_cart", "b_ctgan", "c_tvae", "mine"]
    assert got["b_ctgan"] == str(folder / "b_ctgan.csv.zip")
    with pytest.raises(ValueError, match=r"two files are named 'a_cart'"):
        named_paths([str(folder), str(tmp_path / "a_cart.csv")])
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match=r"--synthetic .*empty: the folder holds no table file \(\.csv or \.tsv"):
        named_paths([str(tmp_path / "empty")])


def test_a_folder_holding_t_and_h_gives_the_other_tables_only(frame, tmp_path):
    """T and H in the folder of candidates (the common layout data/T.csv, data/H.csv, data/S_*.csv) are not
    candidates; named outside the folder or alone, a file is taken as given."""
    from holdbench.benchmark.outputs.filereport.inputs import named_paths

    folder = tmp_path / "data"
    folder.mkdir()
    for name in ("T.csv", "H.csv", "S_cart.csv", "S_tvae.csv"):
        _write(frame, folder / name)
    inputs = (str(folder / "T.csv"), str(folder / "H.csv"))
    assert list(named_paths([str(folder)], inputs)) == ["S_cart", "S_tvae"]
    assert list(named_paths([str(folder)])) == ["H", "S_cart", "S_tvae", "T"]
    assert list(named_paths([str(folder / "T.csv")], inputs)) == ["T"]  # named on its own: judged as asked
    for name in ("S_cart.csv", "S_tvae.csv"):
        (folder / name).unlink()
    with pytest.raises(ValueError, match=r"the folder holds no table file \(.*\) but T and H"):
        named_paths([str(folder)], inputs)


@pytest.mark.parametrize("suffix", ["csv", "csv.gz", "tsv", "parquet"])
def test_a_header_that_repeats_a_name_is_refused_naming_the_file_the_name_and_its_columns(tmp_path, suffix):
    """pandas would read a csv's second 'income' as 'income.1' and carry on; pyarrow would fail deep inside."""
    from holdbench.benchmark.cli._files import header

    path = tmp_path / f"dup.{suffix}"
    if suffix == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table([[30, 40], ["Wien", "Graz"], [1.5, 2.5]], names=["income", "city", "income"]), path)
    else:
        sep = "\t" if suffix == "tsv" else ","
        pd.DataFrame([[30, "Wien", 1.5], [40, "Graz", 2.5]], columns=["income", "city", "income"]).to_csv(
            path, sep=sep, index=False)
    name = suffix.replace(".", r"\.")
    said = (rf"dup\.{name}: a column name appears more than once in the header "
            r"\('income' in columns 1, 3\): every column needs a name of its own")
    with pytest.raises(InputError, match=said):
        read_table(path)
    with pytest.raises(InputError, match=said):
        header(str(path), None)


def test_a_byte_order_mark_and_a_quoted_comma_are_not_repeats(tmp_path):
    path = tmp_path / "bom.csv"
    path.write_text('\ufeffage,"city, region",age_2\n30,"Wien, W",1\n', encoding="utf-8")
    assert list(read_table(path).columns) == ["age", "city, region", "age_2"]
