"""The code blocks of README.md and of the docs pages D2a writes (getting started, the guides), run.

Each test fetches its block by (page, first line) and runs it as a user would: the shell blocks through
`bash` in a scratch directory holding the files they name, the YAML blocks written where the page says
to keep them (a config directory of the user's own, on HOLDBENCH_CONFIG_PATH) and then used by the
command the page gives for them. Small tables come from the embedded demo generator, so nothing is
downloaded. The README's study command is slow (a real workflow run) and runs with a smaller set of
synthesizers; everything else is in the quick tier.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from tests.docs_blocks import REPO, block


def _env(tmp: Path, **extra: str) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    env["HOLDBENCH_CACHE_DIR"] = str(tmp / "cache")
    env["HOLDBENCH_RESULTS_DIR"] = str(tmp / "results")
    env["MLFLOW_TRACKING_URI"] = f"sqlite:///{tmp / 'mlflow.db'}"
    env["OMP_NUM_THREADS"] = "1"
    env.pop("HOLDBENCH_CONF_DIR", None)
    env.pop("HOLDBENCH_CONFIG_PATH", None)
    env.update(extra)
    return env


def _bash(script: str, cwd: Path, env: dict, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", script], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


def _demo_frames(seed: int, n: int) -> pd.DataFrame:
    from holdbench.benchmark.data.demo import make_demo

    return make_demo(n_rows=n, seed=seed)


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    """T and H: two halves of one demo draw; S: a fresh draw of the same population (nothing copied),
    S_copy: T's rows resampled (a leak every privacy target must catch)."""
    d = tmp_path_factory.mktemp("files")
    both = _demo_frames(seed=11, n=1200)
    both.iloc[:600].to_csv(d / "T.csv", index=False)
    both.iloc[600:].to_csv(d / "H.csv", index=False)
    _demo_frames(seed=12, n=600).to_csv(d / "S.csv", index=False)
    both.iloc[:600].sample(n=600, replace=True, random_state=0).to_csv(d / "S_copy.csv", index=False)
    return d


def _scratch(tmp_path: Path, files: Path, synthetic: str = "S.csv") -> Path:
    work = tmp_path / "work"
    work.mkdir()
    for name in ("T.csv", "H.csv"):
        (work / name).write_bytes((files / name).read_bytes())
    (work / "S.csv").write_bytes((files / synthetic).read_bytes())
    return work


def _verdicts(path: Path) -> dict[str, str]:
    with path.open() as fh:
        return {row["target"]: row["verdict"] for row in csv.DictReader(fh)}


# ---------------------------------------------------------------- README.md


def test_readme_judge_your_own_files(tmp_path, files):
    script = block("README.md", "holdbench evaluate --train T.csv --holdout H.csv --synthetic S.csv --out metrics.json")
    work = _scratch(tmp_path, files)
    proc = _bash("set -e\n" + script, work, _env(tmp_path))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    metrics = json.loads((work / "metrics.json").read_text())
    # a fresh sample of the population is as far from T as H is: ratios near 1, DCR share near 0.5
    assert 0.5 < metrics["F1_ratio"] < 2.0
    assert 0.4 < metrics["dcr_share"] < 0.6
    assert "pmse_ratio" in metrics and "mia_auc_max" in metrics
    assert "1 cell(s): 1 pass, 0 FAIL, 0 n/a" in proc.stdout  # check: a fresh sample passes the gates
    # report: built from the saved evaluation, so its numbers are evaluate's
    rep = json.loads((work / "my_report" / "report.json").read_text(encoding="utf-8"))
    assert rep["synthetic"]["S"]["verdict"]["verdict"] == "pass"
    assert '<figure class="hb-figure"' in (work / "my_report" / "report.html").read_text(encoding="utf-8")
    assert (work / "my_report" / "summary.md").is_file()


def test_readme_check_fails_a_copy(tmp_path, files):
    """The same block on a table that copies T's rows: `holdbench check` exits 1 (the gates catch it)."""
    script = block("README.md", "holdbench evaluate --train T.csv --holdout H.csv --synthetic S.csv --out metrics.json")
    lines = script.splitlines()
    check = [i for i, line in enumerate(lines) if line.startswith("holdbench check")]
    assert len(check) == 1 and lines[0].startswith("holdbench evaluate")
    work = _scratch(tmp_path, files, synthetic="S_copy.csv")
    # the page's evaluate (without anonymeter, for time) then its check of the saved evaluation
    proc = _bash("set -e\n" + lines[0] + " --skip anonymeter\n" + lines[check[0]], work, _env(tmp_path))
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "FAIL" in proc.stdout


@pytest.mark.slow
def test_readme_study_command(tmp_path):
    """The README's first command. `.ci/install.sh` is what CI's `.ci/test.sh` ran before this suite,
    so the environment this test runs in is the one it produces; its syntax is checked here, and the
    study command runs for real, on two of the demo's synthesizers (a study override) without MLflow."""
    script = block("README.md", "bash .ci/install.sh && holdbench run demo --cores 2")
    install, run = (part.strip() for part in script.strip().split("&&"))
    assert install == "bash .ci/install.sh"
    assert subprocess.run(["bash", "-n", str(REPO / ".ci/install.sh")], check=False).returncode == 0
    assert run == "holdbench run demo --cores 2"
    proc = _bash(run + " --synthesizers cart holdout --no-track", tmp_path, _env(tmp_path), timeout=1800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    study = tmp_path / "results" / "demo"
    assert (study / "report.html").is_file()
    board = pd.read_csv(study / "leaderboard.csv")
    assert sorted(board["synthesizer"].unique()) == ["cart", "holdout"]
    assert set(board["status"]) == {"ok"}
    assert "[holdbench] demo: 4 cell(s): 4 ok" in proc.stdout
    # the cell line the guides show as an example is this run's, metric for metric (its timings vary)
    ran = next(line for line in proc.stdout.splitlines() if line.startswith("[holdbench] demo/seed0/cart: ok"))
    for guide in ("docs/getting-started.md", "docs/guides/studies-and-configuration.md"):
        shown = next(line for line in (REPO / guide).read_text().splitlines()
                     if line.startswith("[holdbench] demo/seed0/cart: ok"))
        metrics = shown.split(" | ", 1)[1].removesuffix(" | ...")
        assert metrics in ran.split(" | ", 1)[1], (guide, ran)


# ---------------------------------------------------------------- getting started


def test_getting_started_report(tmp_path, files):
    script = block("docs/getting-started.md",
                   'holdbench report --train T.csv --holdout H.csv --synthetic S.csv --out my_report || echo "a quality gate failed"')
    work = _scratch(tmp_path, files)
    proc = _bash("set -e\n" + script, work, _env(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads((work / "my_report" / "report.json").read_text())
    verdict = report["synthetic"]["S"]["verdict"]["verdict"]
    assert ("a quality gate failed" in proc.stdout) == (verdict == "FAIL")  # the block's `|| echo` follows the gates
    assert (work / "my_report" / "report.html").stat().st_size > 10_000
    assert {"F3_ratio", "dcr_share", "pmse_ratio"} <= set(report["synthetic"]["S"]["metrics"])


def test_getting_started_evaluate(tmp_path, files):
    script = block("docs/getting-started.md",
                   "holdbench evaluate --train T.csv --holdout H.csv --synthetic S.csv --metrics paper --out my_metrics.json")
    work = _scratch(tmp_path, files)
    proc = _bash(script, work, _env(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    metrics = json.loads((work / "my_metrics.json").read_text())
    assert {"F1", "F2", "F3", "F1_ratio", "F3_ratio", "dcr_share"} <= set(metrics)
    assert "pmse_ratio" not in metrics  # --metrics paper: the paper's two measures only


# ---------------------------------------------------------------- your own data


def test_your_own_data_evaluate_and_check(tmp_path, files):
    script = block("docs/guides/your-own-data.md",
                   "holdbench evaluate --train T.csv --holdout H.csv --synthetic S.csv --target subscribed --skip anonymeter --out metrics.json")
    work = _scratch(tmp_path, files, synthetic="S_copy.csv")
    proc = _bash("set -e\n" + script, work, _env(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "a quality gate failed" in proc.stdout  # the copy fails, and the block's `|| echo` says so
    metrics = json.loads((work / "metrics.json").read_text())
    assert not any(k.startswith("anonymeter_") and not k.endswith("_na_reason") for k in metrics)
    assert metrics["tstr_auc_ratio"] == metrics["tstr_auc_ratio"]  # the target was used: not NaN
    assert _verdicts(work / "verdicts.csv")["dcr_share_interval"] == "FAIL"


def test_your_own_table_dataset_yaml(tmp_path, files):
    text = block("docs/guides/your-own-data.md", "name: my_table")
    home = tmp_path / "home"
    data = home / "my-holdbench" / "data"
    data.mkdir(parents=True)
    table = pd.read_csv(files / "T.csv").rename(columns={"subscribed": "outcome", "children": "zip_code"})
    table.insert(0, "customer_id", [f"C{i:06d}" for i in range(len(table))])  # the block's drop leaves it out
    table.to_csv(data / "my_table.csv", index=False)
    (home / "my-holdbench" / "dataset").mkdir()
    (home / "my-holdbench" / "dataset" / "my_table.yaml").write_text(text)
    env = _env(tmp_path, HOME=str(home), HOLDBENCH_CONFIG_PATH=str(home / "my-holdbench"))
    proc = _bash("holdbench load my_table", tmp_path, env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "my_table" in proc.stdout + proc.stderr
    # the override was applied: zip_code holds integers (numeric by pandas' dtype) and is categorical
    code = ("from holdbench.benchmark.data.tables import dataset_schema; "
            "print({c.name: c.kind for c in dataset_schema('my_table').columns})")
    proc = subprocess.run(["python3", "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "'zip_code': 'categorical'" in proc.stdout and "'age': 'numeric'" in proc.stdout
    assert "customer_id" not in proc.stdout


# ---------------------------------------------------------------- studies and configuration


def test_user_study_outside_the_checkout(tmp_path):
    text = block("docs/guides/studies-and-configuration.md", "name: my_study")
    mine = tmp_path / "my-holdbench"
    (mine / "study").mkdir(parents=True)
    (mine / "study" / "my_study.yaml").write_text(text)
    env = _env(tmp_path, HOLDBENCH_CONFIG_PATH=str(mine))
    proc = _bash("holdbench validate my_study", tmp_path, env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "1 dataset(s) x 4 synthesizer(s) x 3 seed(s) = 12 cells" in proc.stdout
    # its params are checked against the synthesizer: a misspelt one is refused, naming it
    (mine / "study" / "my_typo.yaml").write_text(
        text.replace("name: my_study", "name: my_typo").replace("min_samples_leaf", "minbucket"))
    proc = _bash("holdbench validate my_typo", tmp_path, env)
    assert proc.returncode != 0 and "minbucket" in proc.stderr
    # the same name twice (the user's and a shipped one) is refused, naming both files
    (mine / "study" / "demo.yaml").write_text(text.replace("name: my_study", "name: demo"))
    proc = _bash("holdbench validate demo", tmp_path, env)
    assert proc.returncode != 0
    assert "defined twice" in proc.stdout + proc.stderr


# ---------------------------------------------------------------- quality gates


def test_release_gates_yaml(tmp_path, files):
    text = block("docs/guides/quality-gates.md", "description: release gate for our pipeline")
    mine = tmp_path / "my-holdbench"
    (mine / "gates").mkdir(parents=True)
    (mine / "gates" / "release.yaml").write_text(text)
    work = _scratch(tmp_path, files, synthetic="S_copy.csv")
    env = _env(tmp_path, HOLDBENCH_CONFIG_PATH=str(mine))
    cmd = ("holdbench check --train T.csv --holdout H.csv --synthetic S.csv --skip anonymeter "
           "--gates release --out verdicts.csv")
    proc = _bash(cmd, work, env)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    verdicts = _verdicts(work / "verdicts.csv")
    assert set(verdicts) == {"dcr_distribution", "fidelity_2way", "membership_inference"}
    assert verdicts["dcr_distribution"] == "FAIL"


# ---------------------------------------------------------------- sequential data


def test_sequential_pair_yaml(tmp_path):
    text = block("docs/guides/sequential-data.md", "name: my_journeys")
    home = tmp_path / "home"
    data = home / "my-holdbench" / "data"
    data.mkdir(parents=True)
    n = 300
    customers = pd.DataFrame({"customer_id": range(n), "age": [20 + i % 50 for i in range(n)],
                              "segment": [("a", "b", "c")[i % 3] for i in range(n)]})
    rows = [{"customer_id": c, "day": d, "seq_no": 0, "channel": ("web", "shop")[(c + d) % 2],
             "spend": float((c * 7 + d) % 40)} for c in range(n) for d in range(c % 4)]
    customers.to_csv(data / "customers.csv", index=False)
    pd.DataFrame(rows).to_csv(data / "visits.csv", index=False)
    (home / "my-holdbench" / "dataset").mkdir()
    (home / "my-holdbench" / "dataset" / "my_journeys.yaml").write_text(text)
    env = _env(tmp_path, HOME=str(home), HOLDBENCH_CONFIG_PATH=str(home / "my-holdbench"))
    proc = _bash("holdbench load my_journeys", tmp_path, env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    out = proc.stdout + proc.stderr
    assert "300" in out and str(len(rows)) in out
    # a tie in the order columns is refused, naming the file
    pd.DataFrame(rows + [rows[0]]).to_csv(data / "visits.csv", index=False)
    proc = _bash("holdbench load my_journeys", tmp_path, env)
    assert proc.returncode != 0
    assert "visits.csv" in proc.stdout + proc.stderr


def _my_holdbench(tmp_path: Path, files: Path) -> tuple[Path, dict]:
    """~/my-holdbench as the your-own-data page lays it out: the dataset YAML of the page, the table
    it names, and T, H, S with that table's columns."""
    home = tmp_path / "home"
    mine = home / "my-holdbench"
    for sub in ("data", "dataset", "study"):
        (mine / sub).mkdir(parents=True)
    cols = {"subscribed": "outcome", "children": "zip_code"}
    for name in ("T", "H", "S"):
        table = pd.read_csv(files / f"{name}.csv").rename(columns=cols)
        if name != "S":  # the user's exports hold the record number; the YAML's drop leaves it out of T and H too
            table.insert(0, "customer_id", [f"{name}{i:06d}" for i in range(len(table))])
        table.to_csv(mine / "data" / f"{name}.csv", index=False)
    (mine / "data" / "my_table.csv").write_bytes((mine / "data" / "T.csv").read_bytes())
    (mine / "dataset" / "my_table.yaml").write_text(block("docs/guides/your-own-data.md", "name: my_table"))
    (mine / "study" / "my_files.yaml").write_text(block("docs/guides/your-own-data.md", "name: my_files"))
    return mine, _env(tmp_path, HOME=str(home), HOLDBENCH_CONFIG_PATH=str(mine))


def test_report_for_your_own_files_validates(tmp_path, files):
    _, env = _my_holdbench(tmp_path, files)
    proc = _bash("holdbench validate my_files", tmp_path, env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "1 dataset(s) x 2 synthesizer(s) x 1 seed(s) = 2 cells" in proc.stdout
    assert "split provided" in proc.stdout


@pytest.mark.slow
def test_report_for_your_own_files_runs(tmp_path, files):
    """The page's study run for real: the external cell reads S from the page's path, the split is the
    user's T and H, and the report is written."""
    mine, env = _my_holdbench(tmp_path, files)
    proc = _bash("holdbench run my_files --cores 2 --no-track", tmp_path, env, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    study = tmp_path / "results" / "my_files"
    assert (study / "report.html").is_file()
    train = pd.read_parquet(study / "my_table" / "seed0" / "train.parquet")
    assert len(train) == len(pd.read_csv(mine / "data" / "T.csv"))  # the user's T, not a random split
    assert "customer_id" not in train.columns
    metrics = json.loads((study / "my_table" / "seed0" / "external" / "metrics.json").read_text())
    assert 0.4 < metrics["dcr_share"] < 0.6  # S is a fresh sample of the population: no closer to T than H
    status = json.loads((study / "my_table" / "seed0" / "holdout" / "status.json").read_text())
    assert status["status"] == "ok"
