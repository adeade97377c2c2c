"""The Snakemake workflow's Python side.

`prepare` (holdbench.benchmark.workflow.prepare) runs when Snakemake parses the Snakefile: it loads and
checks the study and, only in an invocation that will execute jobs and only once it holds the
study's lock, writes the config snapshots the jobs depend on and removes outputs that must be
recomputed. `runner` holds the jobs Snakemake runs; `study` expands a study into cell specs. This
package's __init__ is empty: the job supervisor (holdbench.benchmark.workflow.runner) must start fast.
"""
