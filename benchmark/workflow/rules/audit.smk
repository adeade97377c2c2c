# The privacy audit's shadow fits (holdbench.benchmark.workflow.audit): a study whose metrics config has an
# `audit` family fits each cell's generator n_fits_train + n_fits_test times on reference sets drawn from H,
# fits_per_job per job; the cell's evaluate job (cells.smk) waits for every chunk and reads the fit files.
from holdbench.benchmark.workflow import audit as _audit

AUDIT_PY = "python -m holdbench.benchmark.workflow.audit"


def audit_inputs(dataset, seed, synth):
    """The chunk markers of a cell's shadow fits (none when the study runs no audit)."""
    return [str(p) for p in _audit.chunk_markers(L, STUDY.metrics, dataset, seed, synth)]


rule audit_fits:
    """One chunk of a cell's shadow fits; fits whose stored identity matches are kept, so a rerun computes
    only the missing ones. Always succeeds as a job: a failure is recorded in the chunk marker."""
    input:
        **L.split_outputs("{dataset}", "{seed}", STUDY.sequential),
        config=lambda wc: PLAN.snapshot(L.synth_config(wc.synth)),
    output:
        str(_audit.chunk_marker(L, "{dataset}", "{seed}", "{synth}", "{chunk}")),
    log:
        L.log("audit_fits{chunk}", "{dataset}", "{seed}", "{synth}"),
    benchmark:
        L.benchmark("audit_fits{chunk}", "{dataset}", "{seed}", "{synth}")
    params:
        # the audit's fit settings, not the whole metrics snapshot: another metric family's option does not
        # touch the fits (Snakemake reruns a job whose params changed; its fits stay valid when only the
        # analysis settings changed)
        settings=_audit.fits_key(STUDY.metrics),
    wildcard_constraints:
        chunk=r"\d+",
    threads: 1
    priority: lambda wc: PLAN.priority(wc.synth)
    resources:
        mem_mb=int(STUDY.memory_gb * 1024),
        runtime=max(1, int(STUDY.timeout_seconds // 60) + 1),
    shell:
        "{AUDIT_PY} fits --study-dir {R} --dataset {wildcards.dataset} --seed {wildcards.seed}"
        " --synthesizer {wildcards.synth} --chunk {wildcards.chunk} > {log} 2>&1"
