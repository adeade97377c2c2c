CELL_STATUS = [
    f"{R}/{c.dataset}/seed{c.seed}/{c.synthesizer}/status.json" for c in STUDY.cells()
]


rule collect:
    """Leaderboard (csv, md), plots and the HTML report of the study."""
    input:
        CELL_STATUS,
        study=f"{R}/study.json",
    output:
        csv=f"{R}/leaderboard.csv",
        md=f"{R}/leaderboard.md",
        html=f"{R}/report.html",
    threads: 2
    log:
        f"{R}/logs/collect.log",
    benchmark:
        f"{R}/benchmarks/collect.tsv"
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
        f"{R}/mlflow.json",
    log:
        f"{R}/logs/track.log",
    benchmark:
        f"{R}/benchmarks/track.tsv"
    params:
        uri=config.get("mlflow_uri", os.environ.get("MLFLOW_TRACKING_URI", "sqlite:///results/mlflow.db")),
    resources:
        mem_mb=4000,
        runtime=30,
    shell:
        "{PY} track --study-dir {R} --uri '{params.uri}' --out {output} 2> {log}"
