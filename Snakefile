# holdbench workflow: split -> generate -> evaluate per cell -> collect -> track.
# Run: snakemake --cores 2                      (study `paper`)
#      snakemake --cores 2 --config study=demo  (another study in conf/study/)
# Parsing writes nothing unless this invocation executes jobs and holds the study's lock
# (benchmark/workflow/prepare.py); a dry run writes nothing at all.
from snakemake.utils import min_version, validate

from holdbench.benchmark.layout import GENERATE_JSON, MARGINALS, METRICS_JSON, STATUS_JSON, StudyLayout
from holdbench.benchmark.workflow.prepare import FINISH_PRIORITY, prepare

min_version("9.0")
validate(config, "benchmark/workflow/config.schema.yaml")

PLAN = prepare(config, workflow)
STUDY, R = PLAN.study, PLAN.root
L = StudyLayout(R)
PY = "python -m holdbench.benchmark.workflow.runner"

wildcard_constraints:
    dataset=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    synth=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    seed=r"\d+",

include: "benchmark/workflow/rules/split.smk"
include: "benchmark/workflow/rules/audit.smk"
include: "benchmark/workflow/rules/cells.smk"
include: "benchmark/workflow/rules/report.smk"


rule all:
    default_target: True
    input:
        L.collect_marker,
        [L.mlflow_marker] if config.get("track", True) else [],


if PLAN.mode == "dry":

    rule pending:
        """Dry run only: stands for a snapshot a real run would rewrite, or an output it would remove."""
        output:
            str(PLAN.pending_path("{name}")),
        shell:
            "false"
