"""R synthpop through rpy2: the unavailable paths, the sample path, and a real run if possible.

The sample path is also exercised with a stand-in `syn()` written in base R that returns what
synthpop returns (a list whose `syn` holds ints as doubles, character NA and string row names).
Tests needing R or R's synthpop skip where it is missing and fail under CI=true (tests/r_available.py);
the "synthpop not installed" paths run where it is installed, with its library hidden from R.
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest

from holdbench.benchmark.config import build_synthesizer, synthesizer_config
from holdbench.contracts.schema import Schema
from holdbench.synthesizers import _rconvert
from holdbench.synthesizers.base import FitContext, SynthesizerUnavailable
from tests.r_available import need_r, without_synthpop


def small_table(n: int = 120, seed: int = 0) -> tuple[pd.DataFrame, Schema]:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "age": rng.integers(18, 70, n),
        "job": rng.choice(["clerk", "nurse", "smith"], n).astype(object),
        "pay": np.where(rng.random(n) < 0.1, np.nan, np.round(rng.normal(3000, 500, n), 2)),
        "member": rng.random(n) < 0.4,
    })
    df.loc[rng.random(n) < 0.1, "job"] = np.nan
    schema = Schema.infer("small", df)
    return schema.coerce(df, "T"), schema


def synthpop():
    return build_synthesizer(synthesizer_config("synthpop", preset="smoke"))


def test_without_rpy2_the_message_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "rpy2.robjects", None)
    train, schema = small_table()
    with pytest.raises(SynthesizerUnavailable) as err:
        synthpop().fit(train, FitContext(schema, 0, "small"))
    message = str(err.value)
    assert "pip install 'holdbench[r]'" in message
    assert "apt-get install r-base-core" in message
    assert 'install.packages("synthpop")' in message


@pytest.mark.needs_r
def test_without_synthpop_the_message_names_install_packages():
    need_r()
    done = without_synthpop(
        "import pytest\n"
        "from holdbench.synthesizers.base import FitContext, SynthesizerUnavailable\n"
        "from tests.synthesizers.test_synthpop import small_table, synthpop\n"
        "train, schema = small_table()\n"
        "with pytest.raises(SynthesizerUnavailable) as err:\n"
        "    synthpop().fit(train, FitContext(schema, 0, 'small'))\n"
        "print(err.value)\n")
    assert 'install.packages("synthpop")' in done.stdout


STAND_IN_SYN = """
function(data, method, k, seed, print.flag, ...) {
  stopifnot(method == "cart", !print.flag, !any(vapply(data, function(x) any(is.nan(x)), NA)))
  assign("stand_in_seed", seed, envir = globalenv())
  set.seed(seed)
  out <- data[sample(nrow(data), k, replace = TRUE), , drop = FALSE]
  out$age <- as.double(out$age)
  out$job <- as.character(out$job)
  rownames(out) <- as.character(seq_len(k))
  list(syn = out, seed = seed)
}
"""


@pytest.mark.needs_r
def test_sample_path_with_a_stand_in_syn(monkeypatch):
    need_r()
    import rpy2.robjects as ro
    from rpy2.robjects import packages

    class StandIn:
        syn = ro.r(STAND_IN_SYN)

    monkeypatch.setattr(_rconvert, "require_r", lambda names=(): None)
    monkeypatch.setattr(packages, "importr", lambda name: StandIn)
    train, schema = small_table()
    synth = synthpop()
    synth.fit(train, FitContext(schema, 0, "small"))
    out = synth.sample(300, seed=2**40 + 5)
    pd.testing.assert_frame_equal(out, schema.coerce(out, "S"))
    assert out.dtypes.to_dict() == train.dtypes.to_dict() and len(out) == 300
    assert out["job"].isna().any() and out["pay"].isna().any()
    assert set(out["job"].dropna()) <= set(train["job"].dropna())
    pd.testing.assert_frame_equal(out, synth.sample(300, seed=2**40 + 5))
    # the cell records the seed R's syn() was given, though no r_seeds pin it
    assert synth.info()["r_seed"] == int(ro.globalenv["stand_in_seed"][0]) == (2**40 + 5) % (2**31 - 1)
    assert synth.info()["r_seed_from"] == f"the cell's seed {2**40 + 5} mod 2147483647"


@pytest.mark.slow
@pytest.mark.needs_r
def test_real_synthpop_run():
    need_r(["synthpop"])
    train, schema = small_table(300)
    synth = synthpop()
    synth.fit(train, FitContext(schema, 0, "small"))
    out = synth.sample(200, seed=1)
    assert len(out) == 200
    pd.testing.assert_frame_equal(out, schema.coerce(out, "S"))
    assert out.dtypes.to_dict() == train.dtypes.to_dict()
    for col in ("job", "member"):
        assert set(out[col].dropna()) <= set(train[col].dropna())
    pd.testing.assert_frame_equal(out, synth.sample(200, seed=1))


STAND_IN_SYN_NAMES = """
function(data, method, k, seed, print.flag, maxfaclevels, minnumlevels, proper, cart.minbucket, cart.cp,
         visit.sequence = NULL) {
  # what synthpop's rule parsing needs: syntactic names (make.names leaves them as they are)
  stopifnot(identical(make.names(names(data), unique = TRUE), names(data)))
  stopifnot(maxfaclevels == 80, is.null(visit.sequence) || all(visit.sequence %in% names(data)))
  set.seed(seed)
  out <- data[sample(nrow(data), k, replace = TRUE), , drop = FALSE]
  if (!is.null(visit.sequence)) out <- out[, visit.sequence, drop = FALSE]
  list(syn = out, seed = seed)
}
"""


@pytest.mark.needs_r
def test_names_that_are_not_r_names_go_to_r_syntactic_and_come_back(monkeypatch):
    need_r()
    import rpy2.robjects as ro
    from rpy2.robjects import packages

    class StandIn:
        syn = ro.r(STAND_IN_SYN_NAMES)

    monkeypatch.setattr(_rconvert, "require_r", lambda names=(): None)
    monkeypatch.setattr(packages, "importr", lambda name: StandIn)
    train, _ = small_table()
    train = train.rename(columns={"age": "capital-gain", "job": "native country", "pay": "1st pay"})
    schema = Schema.infer("odd", train)
    cfg = synthesizer_config("synthpop", params={"maxfaclevels": 80,
                                                 "visit_sequence": ["member", "1st pay", "native country",
                                                                    "capital-gain"],
                                                 "r_seeds": {"odd": 7}})
    synth = build_synthesizer(cfg)
    synth.fit(train, FitContext(schema, 0, "odd"))
    out = synth.sample(50, seed=1)
    assert list(out.columns) == list(train.columns) and out.dtypes.to_dict() == train.dtypes.to_dict()
    # r_seeds pins the seed for its dataset, whatever the cell's seed, and the cell records it
    pd.testing.assert_frame_equal(out, synth.sample(50, seed=999))
    assert synth.info()["r_seed"] == 7 and synth.info()["r_seed_from"] == "r_seeds['odd']"
    with pytest.raises(ValueError, match="visit_sequence names column"):
        bad = build_synthesizer(synthesizer_config("synthpop", params={"visit_sequence": ["nope"]}))
        bad.fit(train, FitContext(schema, 0, "odd"))


def test_r_names_are_syntactic_unique_and_keep_valid_names():
    names = _rconvert.r_names(["capital-gain", "age", "1x", ".2a", "if", "a b", "a.b", "a-b", "_x"])
    assert names["age"] == "age" and names["capital-gain"] == "capital.gain"
    assert len(set(names.values())) == len(names)
    assert names["1x"] == "X1x" and names["if"] == "Xif" and names[".2a"] == "X.2a" and names["_x"] == "X_x"


@pytest.mark.needs_r
def test_r_names_agree_with_r_make_names():
    need_r()
    import rpy2.robjects as ro
    from rpy2.robjects import StrVector

    names = list(_rconvert.r_names(["capital-gain", "1x", ".2a", "if", "a b", "a.b", "a-b", "é", "TRUE"]).values())
    assert list(ro.r["make.names"](StrVector(names), unique=True)) == names


@pytest.mark.needs_r
def test_r_out_of_memory_is_a_memory_error(monkeypatch):
    need_r()
    import rpy2.robjects as ro
    from rpy2.robjects import packages

    class StandIn:
        syn = ro.r('function(...) stop("cannot allocate vector of size 81.2 Gb")')

    monkeypatch.setattr(_rconvert, "require_r", lambda names=(): None)
    monkeypatch.setattr(packages, "importr", lambda name: StandIn)
    train, schema = small_table()
    synth = synthpop()
    synth.fit(train, FitContext(schema, 0, "small"))
    with pytest.raises(MemoryError, match="cannot allocate vector"):
        synth.sample(10, seed=1)


PAPER_R_SEEDS = {"adult": 161401295, "bank-marketing": 825411274, "credit-default": 589005023,
                 "online-shoppers": 343208032}


@pytest.mark.slow
@pytest.mark.needs_r
@pytest.mark.parametrize("dataset", ["adult", "bank-marketing", "credit-default"])
def test_real_synthpop_reproduces_the_published_file(dataset, shared_data):
    """docs/definitions/paper.md §6: syn(T, k = 50000, seed = the paper's draw) on the paper's T gives the published file.
    online-shoppers is checked through the whole harness instead (the paper_synthpop_exact study, below), which
    makes this same fit and sample inside a cell."""
    need_r(["synthpop"])
    from holdbench.benchmark.data.tables import dataset_schema
    from holdbench.benchmark.data.split import provided_split
    from scripts.reference.check_synthpop_exact import differences

    paper = shared_data / "paper_study"
    schema = dataset_schema(dataset)
    train, _ = provided_split(schema, str(paper / f"{dataset}_trn.csv.gz"), str(paper / f"{dataset}_val.csv.gz"))
    synth = build_synthesizer(synthesizer_config("synthpop", params={"r_seeds": PAPER_R_SEEDS}))
    synth.fit(train, FitContext(schema, 0, dataset))
    ours = synth.sample(50_000, seed=0)
    theirs = schema.coerce(pd.read_csv(paper / f"{dataset}_synthpop.csv.gz"), "published")
    assert {c: n for c, n in differences(ours, theirs).items() if n} == {}


@pytest.mark.parametrize("sequence, words", [
    (["member", "pay"], "leaves out column(s) ['age', 'job']"),
    (["member", "pay", "job", "age", "pay"], "lists column(s) ['pay'] more than once"),
    (["member", "pay", "job", "age", "nope"], "names column(s) ['nope']"),
])
def test_a_partial_visit_sequence_is_refused_before_r_is_asked(monkeypatch, sequence, words):
    """synthpop keeps a column it does not visit as the real training values: a partial
    visit_sequence is refused, with or without R's synthpop installed (checked first)."""
    def no_synthpop(names=()):
        raise SynthesizerUnavailable("synthpop not installed")

    import holdbench.synthesizers.synthpop as sp

    monkeypatch.setattr(_rconvert, "require_r", no_synthpop)
    # and not installed as far as the load-failure diagnosis asks (else, where synthpop is installed,
    # the real R is asked and the stand-in failure reads as "installed but failed to load")
    monkeypatch.setattr(sp, "_synthpop_state", lambda: (False, None))
    train, schema = small_table()
    synth = build_synthesizer(synthesizer_config("synthpop", params={"visit_sequence": sequence}))
    with pytest.raises(ValueError, match="visit_sequence") as err:
        synth.fit(train, FitContext(schema, 0, "small"))
    assert words in str(err.value)
    # a full sequence passes the check and only then asks for R
    full = build_synthesizer(synthesizer_config("synthpop", params={"visit_sequence": ["pay", "job", "age",
                                                                                        "member"]}))
    with pytest.raises(SynthesizerUnavailable):
        full.fit(train, FitContext(schema, 0, "small"))


def test_a_partial_visit_sequence_is_refused_when_the_study_is_read():
    from holdbench.benchmark.config import ConfigError
    from holdbench.benchmark.workflow.study import load_study

    with pytest.raises(ConfigError, match=r"visit_sequence leaves out column\(s\) \['region'"):
        load_study("demo", ["synthesizers=[synthpop]", "params.synthpop.visit_sequence=[age,income]"])
    with pytest.raises(ConfigError, match="`visit_sequence` must be a non-empty list"):
        load_study("demo", ["synthesizers=[synthpop]", "params.synthpop.visit_sequence=[]"])


@pytest.mark.parametrize("state, expected", [
    ((True, "cannot allocate memory block of size 1.2 Gb"), MemoryError),
    ((False, "OSError: libR.so: failed to map segment from shared object"), MemoryError),
    ((True, "namespace 'rpart' 4.0 is being loaded, but >= 4.1 is required"), RuntimeError),
    ((False, None), SynthesizerUnavailable),
])
def test_a_synthpop_that_cannot_load_is_told_from_one_not_installed(monkeypatch, state, expected):
    """Under a low memory limit an installed synthpop fails to load: that is an out-of-memory
    (MemoryError -> `oom`), not "synthpop not installed" (`skipped`)."""
    import holdbench.synthesizers.synthpop as sp

    def fails(names=()):
        raise SynthesizerUnavailable("R package(s) ['synthpop'] not installed: in R run install.packages")

    monkeypatch.setattr(_rconvert, "require_r", fails)
    monkeypatch.setattr(sp, "_synthpop_state", lambda: state)
    train, schema = small_table()
    with pytest.raises(expected) as err:
        synthpop().fit(train, FitContext(schema, 0, "small"))
    assert type(err.value) is expected
    if state[1]:
        assert state[1] in str(err.value)


@pytest.mark.needs_r
def test_synthpop_state_says_not_installed_where_it_is_not():
    need_r()
    done = without_synthpop("import holdbench.synthesizers.synthpop as sp\nprint(repr(sp._synthpop_state()))\n")
    assert done.stdout.strip().splitlines()[-1] == "(False, None)"


@pytest.mark.needs_r
def test_r_memory_exhausted_is_a_memory_error(monkeypatch):
    need_r()
    import rpy2.robjects as ro
    from rpy2.robjects import packages

    class StandIn:
        syn = ro.r('function(...) stop("memory exhausted (limit reached?)")')

    monkeypatch.setattr(_rconvert, "require_r", lambda names=(): None)
    monkeypatch.setattr(packages, "importr", lambda name: StandIn)
    train, schema = small_table()
    synth = synthpop()
    synth.fit(train, FitContext(schema, 0, "small"))
    with pytest.raises(MemoryError, match="memory exhausted"):
        synth.sample(50, seed=1)


@pytest.mark.needs_r
def test_synthpop_versions_include_r_rpart_and_rpy2():
    need_r()
    from importlib import metadata

    import rpy2.robjects as ro

    v = synthpop().versions()
    assert v["R"] == str(ro.r("R.version.string")[0]) and v["rpy2"] == metadata.version("rpy2")
    assert v["rpart"] == str(ro.r('as.character(packageVersion("rpart"))')[0])
    assert set(v) == {"R", "synthpop", "rpart", "rpy2"}


PURE_R = r"""
args <- commandArgs(trailingOnly = TRUE)
classes <- c(fruit = "character", place = "character", code = "character", x = "numeric", n = "integer")
d <- read.csv(args[1], colClasses = classes, na.strings = "", encoding = "UTF-8")
# syn() turns the character columns into factors itself (as.factor: R's own level order)
s <- synthpop::syn(d, k = nrow(d), seed = as.integer(args[3]), print.flag = FALSE)$syn
# written as UTF-8 bytes (write.csv would translate to the native encoding: "<U+00E9>" in a C locale)
cells <- lapply(s, function(v) { v <- enc2utf8(as.character(v)); v[is.na(v)] <- ""; v })
writeLines(c(paste(names(s), collapse = ","), do.call(paste, c(cells, sep = ","))), args[2], useBytes = TRUE)
writeLines(unlist(lapply(d[c("fruit", "place", "code")], function(v) paste(levels(factor(v)), collapse = "|"))),
           args[4], useBytes = TRUE)
"""


def awkward_levels_table(n: int = 1000, seed: int = 3) -> tuple[pd.DataFrame, Schema]:
    """Mixed-case, accented and numeric-looking levels, whose order in R differs from Python's byte
    order, each column depending on the one before so that the level order shapes CART's splits."""
    rng = np.random.default_rng(seed)
    fruits = np.array(["apple", "Apple", "banana", "Banana", "cherry", "Cherry", "date"])
    places = np.array(["e", "é", "E", "f", "u", "ü", "Z", "zoo"])
    codes = np.array(["01", "1", "10", "100", "1E3", "1e3", "2", "9", "-3"])
    f = rng.integers(0, len(fruits), n)
    p = (f + rng.integers(0, 3, n)) % len(places)
    c = (p * 2 + rng.integers(0, 2, n)) % len(codes)
    df = pd.DataFrame({"fruit": fruits[f].astype(object), "place": places[p].astype(object),
                       "code": codes[c].astype(object),
                       "x": np.round(f * 1.5 + p + rng.normal(0, 0.7, n), 3),
                       "n": (c * 3 + rng.integers(0, 4, n)).astype(int)})
    df.loc[rng.random(n) < 0.05, "place"] = np.nan
    schema = Schema.from_mapping("awkward", {
        "fruit": {"kind": "categorical"}, "place": {"kind": "categorical"}, "code": {"kind": "categorical"},
        "x": {"kind": "numeric", "dtype": "float"}, "n": {"kind": "numeric", "dtype": "int"}})
    return schema.coerce(df, "awkward"), schema


@pytest.mark.needs_r
def test_the_bridge_equals_synthpop_run_directly_in_r_on_awkward_levels(tmp_path):
    """syn() through the bridge equals syn() in a plain Rscript reading the same table from CSV, value
    for value, on levels whose order in R is not Python's byte order."""
    import subprocess

    from scripts.reference.check_synthpop_exact import differences

    need_r(["synthpop"])
    train, schema = awkward_levels_table()
    (tmp_path / "syn.R").write_text(PURE_R)
    train.to_csv(tmp_path / "t.csv", index=False, na_rep="", encoding="utf-8")
    subprocess.run(["Rscript", str(tmp_path / "syn.R"), str(tmp_path / "t.csv"), str(tmp_path / "s.csv"), "5",
                    str(tmp_path / "levels.txt")], check=True, capture_output=True, timeout=300)
    r_levels = dict(zip(["fruit", "place", "code"], (tmp_path / "levels.txt").read_text("utf-8").splitlines()))
    not_bytes = {col: levels.split("|") != sorted(levels.split("|")) for col, levels in r_levels.items()}
    collation = _rconvert.r_collation()
    if "ICU collator" in collation:  # the case this test is about: R's order is not byte order
        assert all(not_bytes.values()), (collation, r_levels)
    # (an R without ICU in a C locale orders by bytes, or, with LC_CTYPE=C, non-ASCII first: the bridge
    # must equal R there too)
    theirs = schema.coerce(pd.read_csv(tmp_path / "s.csv", keep_default_na=False,
                                       na_values={"place": [""]}, dtype={"code": str}), "pure R")

    synth = synthpop()
    synth.fit(train, FitContext(schema, 0, "awkward"))
    ours = synth.sample(len(train), seed=5)
    diff = {c: k for c, k in differences(ours, theirs).items() if k}
    assert diff == {}, f"values differing from pure R per column: {diff}"
    info = synth.info()
    assert info["r_seed"] == 5 and info["r_seed_from"] == "the cell's seed 5 mod 2147483647"
    assert info["r_level_order"].startswith("LC_COLLATE=")


@pytest.mark.parametrize("space, probes, expected", [
    (None, [], None),                                      # no memory limit: nothing probed
    ((2**30, 2**28), [True], None),                        # R loads in what is left
    ((2**30, 2**27), [False, True], MemoryError),          # not in what is left, in the whole limit
    ((2**30, 2**27), [False, False], None),                # not even in the whole limit: not memory, the
])                                                         # ordinary load path says what it is
def test_room_to_load_synthpop_is_probed_under_a_memory_limit(monkeypatch, space, probes, expected):
    import holdbench.synthesizers.synthpop as sp

    asked = []

    def probe(limit):
        asked.append(limit)
        return probes[len(asked) - 1], "died with SIGSEGV"

    monkeypatch.setattr(sp, "_address_space", lambda: space)
    monkeypatch.setattr(sp, "_load_probe", probe)
    if expected is None:
        sp._check_room_to_load()
    else:
        with pytest.raises(expected, match=r"cannot be loaded in the 0\.12 GB .* under its 1 GB limit: an "
                                           r"Rscript given that much \(less 32 MB\) died with SIGSEGV"):
            sp._check_room_to_load()
    assert len(asked) == len(probes)
    if probes:
        assert asked[0] == space[1] - sp._PROBE_MARGIN and asked[1:] in ([], [space[0]])


@pytest.mark.slow
@pytest.mark.needs_r
def test_under_tight_memory_limits_a_synthpop_cell_is_ok_or_oom_with_its_reason(tmp_path):
    """Through the harness's own isolation: at memory limits where loading R and synthpop crashed the
    process (SIGSEGV) or misread a package as missing, the cell is `oom` saying why, never an error."""
    import json

    from holdbench.benchmark.cell.isolation import cell_attempt, run_isolated

    need_r(["synthpop"])
    train, schema = small_table()
    (tmp_path / "schema.json").write_text(json.dumps(schema.to_dict()))
    train.to_parquet(tmp_path / "train.parquet")
    seen = {}
    for gb in (0.6, 0.65, 0.7, 0.8, 0.85, 0.88, 3.0):
        with cell_attempt(tmp_path / f"cell{gb}") as att:
            payload = {"dataset": "small", "seed": 0, "synthesizer": "synthpop", "n_synthetic": 50,
                       "config": {"_target_": "holdbench.synthesizers.synthpop.Synthpop"},
                       "schema": str(tmp_path / "schema.json"), "train": str(tmp_path / "train.parquet"),
                       "holdout": str(tmp_path / "train.parquet"), "synthetic": str(att.scratch / "s.parquet"),
                       "cell_dir": str(att.scratch)}
            res = run_isolated("generate", payload, att, timeout_seconds=300, memory_gb=gb)
        seen[gb] = (res["status"], res["reason"])
    assert seen[3.0][0] == "ok", seen
    for gb, (status, reason) in seen.items():
        assert status in ("ok", "oom"), (gb, status, reason)
        if status == "oom":
            assert f"{gb:g} GB" in reason and ("memory" in reason or "address space" in reason), reason


@pytest.mark.slow
@pytest.mark.needs_r
def test_the_paper_synthpop_exact_study_reproduces_the_published_file_on_online_shoppers(tmp_path, capsys):
    """The `paper_synthpop_exact` study through the harness (holdbench run, one cell): its synthetic data
    equals the paper's published synthpop file for online-shoppers value for value."""
    import subprocess

    from scripts.reference import check_synthpop_exact
    from tests.conftest import SHARED
    from tests.workflow.helpers import env_for

    need_r(["synthpop"])
    if not (SHARED / "datasets" / "paper_study").is_dir():
        pytest.skip(f"the paper's files are not at {SHARED / 'datasets' / 'paper_study'}")
    env = {**env_for(tmp_path), "HOLDBENCH_SHARED_DIR": str(SHARED), "HOLDBENCH_DATA_DIR": str(SHARED / "datasets")}
    done = subprocess.run([sys.executable, "-m", "holdbench", "run", "paper_synthpop_exact", "--datasets",
                           "online-shoppers", "--cores", "1", "--no-track"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=3600, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    capsys.readouterr()
    assert check_synthpop_exact.main(str(tmp_path / "results" / "paper_synthpop_exact"), "online-shoppers") == 0
    assert "online-shoppers: PASS (50,000 rows" in capsys.readouterr().out
