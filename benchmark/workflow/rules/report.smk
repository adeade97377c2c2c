CELL_STATUS = [L.cell_file(c.dataset, c.seed, c.synthesizer, STATUS_JSON) for c in STUDY.cells()]


rule collect:
    """Leaderboard (csv, md), plots and the HTML report of the study, from one read of its cells.

    Its declared output is a marker written last: Snakemake deletes a job's declared outputs before
    running it, and the previous report must stay readable until the job replaces it (every file is
    written atomically). Only figures whose inputs changed are drawn again."""
    input:
        CELL_STATUS,
        study=PLAN.snapshot(L.study_json),
        redo=PLAN.redo_inputs("collect", "", 0),
    output:
        L.collect_marker,
    threads: 2
    log:
        L.log("collect"),
    benchmark:
        L.benchmark("collect")
    resources:
        mem_mb=4000,
        runtime=30,
    shell:
        "{PY} collect --study-dir {R} --n-jobs {threads} 2> {log}"


rule track:
    """Log every cell and the study to MLflow in one job, so parallel jobs never contend."""
    input:
        CELL_STATUS,
        rules.collect.output,
    output:
        L.mlflow_marker,
    log:
        L.log("track"),
    benchmark:
        L.benchmark("track")
    params:
        uri=config.get("mlflow_uri", os.environ.get("MLFLOW_TRACKING_URI", "sqlite:///results/mlflow.db")),
    resources:
        mem_mb=4000,
        runtime=30,
    shell:
        "{PY} track --study-dir {R} --uri '{params.uri}' --out {output} 2> {log}"
