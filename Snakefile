# holdbench workflow: split -> generate -> evaluate per cell -> collect -> track.
# Run: snakemake --cores 2                      (study `paper`)
#      snakemake --cores 2 --config study=demo  (another study in conf/study/)
from snakemake.utils import min_version, validate

from benchmark.workflow import prepare
from benchmark.workflow.locks import clear_stale_locks

min_version("9.0")
validate(config, "benchmark/workflow/config.schema.yaml")

STUDY, R = prepare(config)
clear_stale_locks()
PY = "python -m benchmark.runner"

wildcard_constraints:
    dataset=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    synth=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    seed=r"\d+",

include: "benchmark/workflow/rules/split.smk"
include: "benchmark/workflow/rules/cells.smk"
include: "benchmark/workflow/rules/report.smk"


rule all:
    default_target: True
    input:
        f"{R}/leaderboard.csv",
        f"{R}/report.html",
        [f"{R}/mlflow.json"] if config.get("track", True) else [],
