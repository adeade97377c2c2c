"""Issue 23, the cases that need no workflow run: NaN limits refused, `check --out`/`--gates`
usage errors, shard files checked before a merge, failed merges retried, a family that raises
is n/a with its reason, control characters kept out of report.html."""

from __future__ import annotations

import importlib
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from holdbench.benchmark.cli import main as cli_main

metrics_evaluate = importlib.import_module("holdbench.metrics.evaluate")


@pytest.mark.parametrize("override", ["timeout_seconds=nan", "memory_gb=nan"])
def test_nan_limits_are_refused_before_anything_is_written(override, tmp_path, monkeypatch):
    from holdbench.benchmark.config import ConfigError
    from holdbench.benchmark.workflow.prepare import prepare

    monkeypatch.setenv("HOLDBENCH_RESULTS_DIR", str(tmp_path / "results"))
    key = override.split("=")[0]
    with pytest.raises(ConfigError, match=f"`{key}` must be a positive finite number, got nan"):
        prepare({"study": "demo", "study_overrides": [override]})
    assert not (tmp_path / "results").exists()


def _three_files(tmp_path: Path) -> list[str]:
    rng = np.random.default_rng(0)
    paths = []
    for name in ("t", "h", "s"):
        p = tmp_path / f"{name}.csv"
        pd.DataFrame({"a": rng.integers(0, 5, 60), "b": rng.normal(size=60)}).to_csv(p, index=False)
        paths.append(str(p))
    return paths


def test_check_out_an_existing_directory_is_a_usage_error(tmp_path, capsys):
    t, h, s = _three_files(tmp_path)
    code = cli_main(["check", "--train", t, "--holdout", h, "--synthetic", s, "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert f"--out {tmp_path} is a directory; name the CSV file to write" in err and "Traceback" not in err


def test_gates_file_content_is_never_echoed(tmp_path, capsys):
    t, h, s = _three_files(tmp_path)
    secret = tmp_path / "passwd"
    secret.write_text("root:x:0:0:SECRET-LINE:/root:/bin/bash\nmore:SECRET-TWO\n")
    code = cli_main(["check", "--train", t, "--holdout", h, "--synthetic", s, "--gates", str(secret)])
    err = capsys.readouterr().err
    assert code == 2 and "not a gates file" in err
    assert "SECRET" not in err and "root:x" not in err
    nested = tmp_path / "nested.yaml"
    nested.write_text("targets: SECRET-VALUE\n")
    assert cli_main(["check", "--train", t, "--holdout", h, "--synthetic", s, "--gates", str(nested)]) == 2
    assert "SECRET" not in capsys.readouterr().err


# --- shards -----------------------------------------------------------------------------------------

def _shard(path: Path, meta: dict, **arrays) -> None:
    np.savez(path, _meta=np.array(json.dumps(meta)), **arrays)


def test_a_shard_file_is_checked_against_its_cell_table_place_and_options(tmp_path):
    from holdbench.benchmark.workflow.runner import _shard_problem

    want = {"cell": "d/seed0/g", "synthetic_sha256": "abc", "shard": 1, "of": 3, "metrics_digest": "m1"}
    good = tmp_path / "1-of-3.npz"
    _shard(good, want, **{"fidelity.tvd": np.arange(4.0)})
    assert _shard_problem(good, want) is None
    cases = {
        "cell": "d/seed0/other", "synthetic_sha256": "def", "shard": 0, "of": 4, "metrics_digest": "m2",
    }
    for key, value in cases.items():
        _shard(good, {**want, key: value}, **{"fidelity.tvd": np.arange(4.0)})
        assert _shard_problem(good, want) == f"1-of-3.npz holds {key} {value!r}, this shard is {key} {want[key]!r}"
    _shard(good, want, **{"fidelity.tvd": np.arange(4.0)})
    whole = good.read_bytes()
    good.write_bytes(whole[: len(whole) // 2])
    assert _shard_problem(good, want).startswith("1-of-3.npz is unreadable (BadZipFile")
    good.write_bytes(b"")
    assert _shard_problem(good, want).startswith("1-of-3.npz is unreadable")
    np.savez(good, **{"fidelity.tvd": np.arange(4.0)})  # a shard of before this round: no identity
    assert "does not say which cell" in _shard_problem(good, want)
    _shard(good, want, _failed=np.array("MemoryError: x"))
    assert _shard_problem(good, want) == "the shard job failed: MemoryError: x"
    assert _shard_problem(tmp_path / "nope.npz", want) == "nope.npz is missing"


def test_a_cell_whose_shards_could_not_be_merged_is_retried(tmp_path):
    from holdbench.benchmark.layout import StudyLayout
    from holdbench.benchmark.workflow.cellconfig import cell_config, digest, file_record
    from holdbench.benchmark.workflow.integrity import scan_cell

    lay = StudyLayout(tmp_path / "s")
    split, synth, metrics = {"split": "random"}, {"config": {"p": 0.1}, "n_synthetic": 10}, {"families": {}}
    limits = {"timeout_seconds": 60, "memory_gb": 2}
    cdir = lay.cell_dir("d", 0, "g")
    cdir.mkdir(parents=True)
    pd.DataFrame({"a": [1, 2]}).to_parquet(cdir / "synthetic.parquet")
    (cdir / "metrics.json").write_text("{}")
    gen = {"status": "ok", "generate_digest": digest(cell_config(split, synth)), "limits": limits,
           "outputs": {"synthetic.parquet": file_record(cdir / "synthetic.parquet")}}
    status = {"status": "error", "stage": "evaluate", "config_digest": digest(cell_config(split, synth, metrics)),
              "limits": limits, "outputs": {n: file_record(cdir / n) for n in ("metrics.json", "synthetic.parquet")},
              "retry": None}
    (cdir / "generate.json").write_text(json.dumps(gen))

    def scan(st):
        (cdir / "status.json").write_text(json.dumps(st))
        return scan_cell(lay, "d", 0, "g", split, synth, metrics, limits, None)

    assert scan(status) is None  # an error that is a property of the cell stays as it is
    r = scan({**status, "retry": "evaluate shard 1 of 3: 1-of-3.npz is unreadable (BadZipFile)"})
    assert (r.job, r.reason) == ("evaluate", ("its evaluation failed in a way a rerun may fix: evaluate shard 1 "
                                               "of 3: 1-of-3.npz is unreadable (BadZipFile)"))
    legacy = {k: v for k, v in status.items() if k != "retry"}  # written before `retry` existed
    legacy["reason"] = "evaluate shard 0 of 2: cannot read 0-of-2.npz: File is not a zip file"
    assert scan(legacy).reason.endswith("evaluate shard 0 of 2: cannot read 0-of-2.npz: File is not a zip file")


# --- one family never sinks the others -----------------------------------------------------------------

def test_a_family_that_raises_is_na_with_its_reason_and_the_others_count():
    from holdbench.metrics.fidelity import Fidelity
    from holdbench.metrics.privacy import DCRShare
    from tests.workflow.faulty_metrics import Broken, Toggle

    rng = np.random.default_rng(1)
    t, h, s = (pd.DataFrame({"a": rng.integers(0, 4, 40).astype(float)}) for _ in range(3))
    kinds = {"a": "numeric"}
    with pytest.raises(ValueError, match="broken option"):
        metrics_evaluate.evaluate(t, h, s, kinds, families=[Fidelity(), Broken()])
    res = metrics_evaluate.evaluate(t, h, s, kinds, families=[Fidelity(), Broken(), DCRShare()], on_error="na")
    out = res.to_dict()
    alone = metrics_evaluate.evaluate(t, h, s, kinds, families=[Fidelity(), DCRShare()]).to_dict()
    assert out["F1"] == alone["F1"] and out["dcr_share"] == alone["dcr_share"]
    assert out["broken_value"] is None
    assert out["broken_na_reason"] == "ValueError: broken option n_cols=3 exceeds the table's columns (test)"
    assert res.unavailable == ()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOLDBENCH_TEST_TOGGLE_MISSING", "1")
        res = metrics_evaluate.evaluate(t, h, s, kinds, families=[Toggle()], on_error="na")
    assert res.unavailable == ("toggle",) and res.to_dict()["toggle_rows"] is None
    with pytest.raises(ValueError, match="on_error must be 'raise' or 'na'"):
        metrics_evaluate.evaluate(t, h, s, kinds, families=[Toggle()], on_error="ignore")


def test_evaluate_cli_exits_0_with_the_other_metrics_when_a_family_fails(tmp_path, capsys):
    t, h, s = _three_files(tmp_path)
    out = tmp_path / "out.json"
    code = cli_main(["evaluate", "--train", t, "--holdout", h, "--synthetic", s, "--metrics", "paper",
                     "--set", "families.broken._target_=tests.workflow.faulty_metrics.Broken",
                     "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    d = json.loads(out.read_text())
    assert d["F1"] is not None and d["dcr_share"] is not None and d["broken_value"] is None
    assert "broken_na_reason: ValueError: broken option" in captured.out and "Traceback" not in captured.err


# --- report.html ---------------------------------------------------------------------------------------

def test_report_traceback_block_carries_no_control_characters(study_factory):
    from holdbench.benchmark.outputs.report import write_report
    from holdbench.benchmark.outputs.results import load_results

    s = study_factory(name="ctl")
    for status_path in s.path.glob("*/seed*/*/status.json"):
        try:
            st = json.loads(status_path.read_text())
        except ValueError:
            continue
        if st.get("status") == "error":
            st["traceback_tail"] = "Traceback\x00 (most recent)\n  File \x1b[31m\"x\"\x1b[0m\x07\r\x1b]0;t\x07end"
            st["reason"] = "bad\x1b[2J\x00"
            status_path.write_text(json.dumps(st))
    page = write_report(load_results(s.path)).read_text()
    bad = sorted({f"{ord(c):#04x}" for c in page if (ord(c) < 32 and c not in "\n\t") or 0x7f <= ord(c) <= 0x9f})
    assert bad == []
    assert "Traceback  (most recent)\n  File &quot;x&quot;" in page


# --- out of memory, in every form -----------------------------------------------------------------------

@pytest.mark.parametrize("exc", [
    MemoryError(),
    RuntimeError("R: memory exhausted (limit reached?)"),
    OSError("libopenblas.so.0: failed to map segment from shared object"),
    RuntimeError("R: cannot allocate vector of size 2.0 Gb"),
    ImportError("libarrow.so.2000: cannot allocate memory in static TLS block"),
])
def test_every_out_of_memory_form_is_oom_naming_the_limit(exc):
    from holdbench.benchmark.cell._child import classify

    status, reason = classify(exc)
    assert status == "oom"
    assert reason.startswith("out of memory under ")
    assert "GB memory limit (memory_gb)" in reason or "no memory limit" in reason


@pytest.mark.parametrize("tail, returncode", [
    (("terminate called after throwing an instance of 'std::system_error'\n  what():  Resource temporarily "
      "unavailable\n"), -6),
    ("Traceback...\nImportError: libgfortran.so.5: failed to map segment from shared object\n", 1),
    ("Error: memory exhausted (limit reached?)\nExecution halted\n", 127),
])
def test_a_child_that_dies_for_want_of_memory_is_oom_with_the_limit(tail, returncode):
    from holdbench.benchmark.cell.isolation import _crash_status

    res = _crash_status("evaluate", returncode, int(0.5 * 1024**3), 1 << 20, None, 80.0, False, tail)
    assert res["status"] == "oom"
    assert "could not get memory under the 0.5 GB limit (memory_gb)" in res["reason"]
    other = _crash_status("evaluate", returncode, int(0.5 * 1024**3), 1 << 20, None, 80.0, False, "Segfault\n")
    assert other["status"] == "error"


def test_memory_below_what_a_cell_needs_is_refused():
    from holdbench.benchmark.config import ConfigError
    from holdbench.benchmark.workflow.study import load_study

    with pytest.raises(ConfigError, match="memory_gb"):
        load_study("demo", ["memory_gb=0.25"])
    assert load_study("demo", ["memory_gb=1.5"]).memory_gb == 1.5


# --- ulimit -f / a full disk -----------------------------------------------------------------------------

_UNDER_FSIZE = """
import json, resource, sys
from pathlib import Path
limit = int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))  # as `ulimit -f` does: soft and hard
from holdbench.benchmark.cell.isolation import cell_attempt, run_isolated
tmp = Path(sys.argv[1])
with cell_attempt(tmp / "cell") as att:
    payload = {"dataset": "t", "seed": 0, "synthesizer": "flood", "n_synthetic": 10,
               "config": {"_target_": "tests.workflow.faulty_synths.Faulty", "mode": "flood"},
               "schema": str(tmp / "schema.json"), "train": str(tmp / "train.parquet"),
               "holdout": str(tmp / "train.parquet"), "synthetic": str(att.scratch / "s.parquet"),
               "cell_dir": str(att.scratch)}
    res = run_isolated("generate", payload, att, timeout_seconds=120, memory_gb=3)
(tmp / "result.json").write_text(json.dumps(res))
"""


def test_under_ulimit_f_a_cell_runs_and_its_reason_names_the_limit(tmp_path):
    import subprocess
    import sys

    from holdbench.contracts.schema import Schema
    from tests.workflow.helpers import REPO

    train = pd.DataFrame({"age": np.arange(20), "job": list("ab") * 10})
    train.to_parquet(tmp_path / "train.parquet")
    (tmp_path / "schema.json").write_text(json.dumps(Schema.infer("t", train).to_dict()))
    limit = 4 << 20
    with open(tmp_path / "out.log", "w") as log:
        proc = subprocess.run([sys.executable, "-c", _UNDER_FSIZE, str(tmp_path), str(limit)], cwd=REPO,
                              stdout=log, stderr=subprocess.PIPE, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    res = json.loads((tmp_path / "result.json").read_text())
    assert res["status"] == "error", res
    assert res["reason"].startswith("file too large (EFBIG)")
    assert "per-file size limit (RLIMIT_FSIZE, `ulimit -f`: 4,194,304 bytes" in res["reason"]


def test_report_under_a_file_size_limit_names_it_without_a_traceback(study_factory, tmp_path):
    import subprocess
    import sys

    from tests.workflow.helpers import REPO

    s = study_factory(name="efbig")
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048)); "
            "from holdbench.benchmark.cli import main; sys.exit(main(['report', 'efbig']))")
    env = {**__import__("os").environ, "HOLDBENCH_RESULTS_DIR": str(s.path.parent)}
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "holdbench report: error: file too large (EFBIG)" in proc.stderr
    assert "`ulimit -f`: 2,048 bytes" in proc.stderr and "Traceback" not in proc.stderr


def test_a_child_that_hangs_for_want_of_memory_is_oom_not_timeout(tmp_path):
    import subprocess
    import sys

    from holdbench.contracts.schema import Schema
    from tests.workflow.helpers import REPO

    train = pd.DataFrame({"age": np.arange(20), "job": list("ab") * 10})
    train.to_parquet(tmp_path / "train.parquet")
    (tmp_path / "schema.json").write_text(json.dumps(Schema.infer("t", train).to_dict()))
    code = _UNDER_FSIZE.replace('"flood"', '"nomem_hang"').replace("timeout_seconds=120", "timeout_seconds=20")
    with open(tmp_path / "out.log", "w") as log:  # the job log the child's stderr goes to
        proc = subprocess.run([sys.executable, "-c", code, str(tmp_path), str(1 << 30)], cwd=REPO,
                              stdout=log, stderr=log, timeout=300, check=False)
    assert proc.returncode == 0, (tmp_path / "out.log").read_text()[-2000:]
    res = json.loads((tmp_path / "result.json").read_text())
    assert res["status"] == "oom", res
    assert res["reason"].startswith("generate process could not get memory under the 3 GB limit (memory_gb) and "
                                    "hung until the 20 s wall-clock limit: OpenBLAS error: Memory allocation")


def test_a_stage_records_the_cpu_of_its_process_tree(tmp_path):
    """stage_cpu_seconds (status.json's generate/evaluate_cpu_seconds, what `holdbench compare` splits) counts
    the CPU of the child's own children too: here a worker process that burns about a second and writes
    how much CPU it used; the stage's record is at least that, and not more than its wall time allows."""
    import subprocess
    import sys

    from holdbench.contracts.schema import Schema
    from tests.workflow.helpers import REPO

    train = pd.DataFrame({"age": np.arange(20), "job": list("ab") * 10})
    train.to_parquet(tmp_path / "train.parquet")
    (tmp_path / "schema.json").write_text(json.dumps(Schema.infer("t", train).to_dict()))
    code = _UNDER_FSIZE.replace('"flood"', '"burn_worker"')
    env = {**os.environ, "HOLDBENCH_TEST_BURN_FILE": str(tmp_path / "burned.txt")}
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path), str(1 << 30)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    res = json.loads((tmp_path / "result.json").read_text())
    assert res["status"] == "ok", res
    burned = float((tmp_path / "burned.txt").read_text())
    assert burned >= 1.0
    assert burned <= res["stage_cpu_seconds"] <= 2 * res["stage_wall_seconds"] + 0.5
