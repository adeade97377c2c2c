"""report.html: the whole study on one self-contained page.

Sections: the quality-gate verdicts (conf/gates, ANITA D2.2), the leaderboard per dataset
(headline metrics with intervals, fit / sample / evaluate seconds and peak memory), the study
figures, every cell in one sortable table, and a drill-down per cell (status and reason, every
registry metric, its gate verdicts, and its own figures: marginals, DCR histogram, NNDR, ...).

The page must travel by e-mail or as an MLflow artifact: images are inlined as base64, the one
script (column sorting) and the stylesheet are inline, nothing is fetched. Synthesizer names,
dataset names and failure reasons are user data and may contain markup: every string goes
through `html.escape` before it reaches the page, and no user string ever enters the script.
The figures are the ones `holdbench.benchmark.outputs.plots.make_plots` drew; none is drawn here.
"""

from __future__ import annotations

import base64
import html
import math
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from holdbench.benchmark.layout import canonical
from holdbench.benchmark.outputs.leaderboard import (
    aggregate,
    arrow,
    best_synthesizers,
    interval_notes,
    interval_text,
    provenance,
    references,
    synthesizer_label,
    value_text,
)
from holdbench.benchmark.outputs.plots import cell_figures, study_figures
from holdbench.benchmark.outputs.results import StudyResults
from holdbench.contracts.io import write_text

_STATUS_HELP = ("status", ("ok, error, timeout, oom or skipped. Cells that are not ok are listed with their "
                "reason and never enter the means."))
_GATES_HELP = ("gates", ("Quality gates after ANITA D2.2 (conf/gates/default.yaml, or sequential.yaml for a "
                        "sequential study; `holdbench check` applies them "
                        "and exits non-zero on a failure): pass, FAIL, or n/a when a cell lacks the input; beside each "
                        "verdict, the target that decided it, the measured value and what is allowed."))

_CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em 2em;max-width:1500px;color:#222;line-height:1.35}
h2{border-bottom:1px solid #ddd;padding-bottom:2px;margin-top:1.6em}
table{border-collapse:collapse;margin:0.4em 0 1.2em;font-size:0.82em}
th,td{border:1px solid #ccc;padding:2px 6px;text-align:right;white-space:nowrap}
th{background:#f0f0f0;text-align:left;white-space:normal;max-width:9em;vertical-align:bottom}
div.scroll{overflow-x:auto;max-width:100%}
table.sortable th{cursor:pointer}table.sortable th:after{content:" \\2195";color:#aaa;font-size:0.8em}
td.text{text-align:left;white-space:normal;max-width:40em}
tr.fail td{background:#fde2e2}tr.partial td{background:#fff4d6}tr.ref td{background:#fff0e0}
td.best{font-weight:bold;background:#e3f5e3}span.FAIL{color:#b00;font-weight:bold}span.pass{color:#060}span.na{color:#777}span.why{color:#444;font-size:0.92em}
p.note{font-size:0.85em;color:#555;margin-top:-0.8em}
img{max-width:100%;border:1px solid #eee;margin:0.3em 0}
figure{margin:0.6em 0 1.2em}figcaption{font-size:0.85em;color:#555;max-width:70em}
dt{font-weight:bold;margin-top:0.4em}details{margin:0.2em 0}details>summary{cursor:pointer}
details.cell{border:1px solid #ddd;border-radius:4px;padding:0.2em 0.6em;margin:0.3em 0}
details.cell[open]{background:#fafafa}pre{background:#f4f4f4;padding:0.5em;overflow-x:auto;font-size:0.8em}
"""

#: sorts any table.sortable by the clicked column (numbers by their data-v value, text as text), and
#: opens the drill-down a link (#cell-N) points at
_SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th, col) {
    th.addEventListener("click", function () {
      var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      var asc = th.getAttribute("data-dir") !== "asc";
      table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("data-dir"); });
      th.setAttribute("data-dir", asc ? "asc" : "desc");
      function key(row) {
        var cell = row.cells[col], v = cell ? cell.getAttribute("data-v") : null;
        if (v !== null && v !== "") { return [0, parseFloat(v)]; }
        return [cell && cell.textContent.trim() ? 1 : 2, cell ? cell.textContent.trim().toLowerCase() : ""];
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        if (x[0] !== y[0]) { return x[0] - y[0]; }
        if (x[1] < y[1]) { return asc ? -1 : 1; }
        if (x[1] > y[1]) { return asc ? 1 : -1; }
        return 0;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
function openTarget() {
  var el = document.getElementById(decodeURIComponent(location.hash.slice(1)));
  if (el && el.tagName === "DETAILS") { el.open = true; el.scrollIntoView(); }
}
window.addEventListener("hashchange", openTarget);
openTarget();
"""

_TIMINGS = (("fit s", "fit_seconds", 1), ("sample s", "sample_seconds", 1),
            ("evaluate s", "evaluate_seconds", 1), ("peak MB fit+sample", "peak_rss_mb", 0),
            ("peak MB evaluate", "evaluate_peak_rss_mb", 0))


def _columns(shown: list) -> list[tuple[str, str, int, tuple | None, Any]]:
    """(header, metric, digits, interval, spec): the metrics the study shows (StudyResults.shown), then
    timings and memory (spec None)."""
    return ([(f"{sp.label} {arrow(sp)}", sp.name, sp.digits, sp.interval, sp) for sp in shown]
            + [(h, m, d, None, None) for h, m, d in _TIMINGS])


#: a terminal escape sequence (CSI, OSC, or a two-byte ESC sequence)
_ANSI = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|[@-_])|\x9b[0-?]*[ -/]*[@-~]")


def _e(value: Any) -> str:
    """HTML-escaped text without terminal escape sequences or control characters (NUL, ESC, BEL...);
    line breaks and tabs stay, so a traceback keeps its shape."""
    text = _ANSI.sub("", "" if value is None else str(value))
    text = "".join(ch if ch.isprintable() or ch in "\n\t" else " " for ch in text)
    return html.escape(text, quote=True)


def _float(value: Any) -> float:
    if isinstance(value, bool):
        return float(value)
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _num(value: Any, digits: int) -> str:
    v = _float(value)
    return "" if math.isnan(v) else f"{v:.{digits}f}"


def _td_num(value: Any, digits: int, extra: str = "", best: bool = False, fails: bool = False,
            spec: Any = None) -> str:
    """A numeric cell: shown rounded (a pass/fail metric's `spec`: as pass, fail or its pass rate), sorted by
    its full value (data-v); `best`: marked the column's best, and said so when its row fails the quality
    gates (`fails`): never a bare best in a failing row."""
    v = _float(value)
    if math.isnan(v):
        return "<td></td>"
    if spec is not None and spec.flag:
        return f'<td data-v="{v!r}">{_e(value_text(spec, v))}</td>'
    css = ""
    if best:
        css = (' class="best" title="best of this column, but this row fails the quality gates"' if fails
               else ' class="best" title="best of this column"')
        extra += " (best, but fails the gates)" if fails else ""
    return f'<td data-v="{v!r}"{css}>{_e(f"{v:.{digits}f}" + extra)}</td>'


def _td_text(text: Any, raw_html: str | None = None) -> str:
    return f'<td class="text">{raw_html if raw_html is not None else _e(text)}</td>'


def _table(headers: Iterable[str], rows: Iterable[tuple[str, str]], sortable: bool = True) -> str:
    """rows: (css class, the row's <td>s as html)."""
    head = "<thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in headers) + "</tr></thead>"
    body = "\n".join(f'<tr class="{css}">{tds}</tr>' for css, tds in rows)
    return (f'<div class="scroll"><table{" class=sortable" if sortable else ""}>{head}<tbody>\n{body}\n'
            f"</tbody></table></div>")


def _verdict_html(verdict: str) -> str:
    css = {"FAIL": "FAIL", "pass": "pass"}.get(verdict, "na")
    return f'<span class="{css}">{_e(verdict)}</span>'


def _gate_summary(per_cell: pd.DataFrame | None, keys: list[str]) -> str:
    """'2 pass' / '1 FAIL, 1 pass (failed: dcr_distribution; ...)' over some cells' overall verdicts."""
    if per_cell is None:
        return ""
    sub = per_cell[per_cell["cell_id"].isin(keys) & ~per_cell["reference"].astype(bool)]
    counts = sub["verdict"].value_counts()
    failed = ", ".join(dict.fromkeys(t for f in sub["failed"] if f for t in str(f).split(", ")))
    return (", ".join(f"{counts[v]} {v}" for v in ("FAIL", "pass", "n/a") if v in counts)
            + (f" (failed: {failed})" if failed else ""))


def _summary_html(summary: pd.DataFrame, dataset: str, cols: list, cells: pd.DataFrame,
                  per_cell: pd.DataFrame | None) -> str:
    rows = []
    mine = summary[summary["dataset"] == dataset]
    refs = references(cells)
    best = {sp.name: best_synthesizers(mine, sp, refs) for *_, sp in cols if sp is not None and not sp.flag}
    for _, r in mine.iterrows():
        css = "fail" if r["n_ok"] == 0 else "partial" if r["n_ok"] < r["n_seeds"] else ""
        tds = _td_text(synthesizer_label(r)) + _td_text(r["statuses"])
        keys = list(cells.loc[(cells["dataset"] == dataset) & (cells["synthesizer"] == r["synthesizer"]), "cell_id"])
        fails = per_cell is not None and bool((per_cell["cell_id"].isin(keys) & (per_cell["verdict"] == "FAIL")).any())
        for _, metric, digits, interval, spec in cols:
            tds += _td_num(r.get(f"{metric}_mean"), digits, interval_text(r, metric, digits) if interval else "",
                           best=r["synthesizer"] in best.get(metric, ()), fails=fails, spec=spec)
        if per_cell is not None:
            tds += _td_text(_gate_summary(per_cell, keys))
        rows.append((css, tds))
    headers = ["synthesizer", "cells"] + [c[0] for c in cols] + (["gates"] if per_cell is not None else [])
    notes = interval_notes(mine) if any(c[3] for c in cols) else []
    foot = f'<p class="note">Intervals: {_e("; ".join(notes))}.</p>' if notes else ""
    return _table(headers, rows) + foot


def _verdict_why_html(row: Any) -> str:
    """A cell's overall verdict and, beside it, the targets that decided it in words."""
    return f'{_verdict_html(row["verdict"])} <span class="why">{_e(row["why"])}</span>'


def _dates_html(results: StudyResults, dataset: str, cells: pd.DataFrame) -> str:
    """The sentence naming a dataset's date columns (held as days), from its splits' schema.json; "" without."""
    from holdbench.benchmark.data.sequential_values import dates_text
    from holdbench.contracts.io import read_json_object

    dates: dict[str, None] = {}
    for seed in dict.fromkeys(cells.loc[cells["dataset"] == dataset, "seed"]):
        # a split not written (its cells say why) reads as {}: nothing to name
        dates.update(dict.fromkeys(read_json_object(results.layout.schema(dataset, seed)).get("dates") or []))
    return f'<p class="dates">{_e(dates_text(list(dates)))}.</p>' if dates else ""


def _cells_html(cells: pd.DataFrame, cols: list, per_cell: pd.DataFrame | None) -> str:
    verdict = {} if per_cell is None else {r["cell_id"]: r for _, r in per_cell.iterrows()}
    rows = []
    for i, (_, c) in enumerate(cells.iterrows()):
        stage = c.get("stage") if isinstance(c.get("stage"), str) else ""
        status = f"<b>{_e(c['status'])}</b>" if c["status"] != "ok" else "ok"
        tds = (_td_text(None, f'<a href="#cell-{i}">{_e(c["dataset"])}</a>') + _td_text(synthesizer_label(c))
               + _td_num(c["seed"], 0) + _td_text(None, status) + _td_text(stage) + _td_text(c["reason"]))
        tds += "".join(_td_num(c.get(m), d, spec=spec) for _, m, d, _, spec in cols)
        if per_cell is not None:
            row = verdict.get(c["cell_id"])
            tds += _td_text(None, _verdict_why_html(row) if row is not None else _verdict_html("n/a"))
        rows.append(("fail" if c["status"] != "ok" else "", tds))
    headers = ["dataset", "synthesizer", "seed", "status", "stage", "reason"] + [c[0] for c in cols]
    return _table(headers + (["gates (why)"] if per_cell is not None else []), rows)


def _img(path: Path, caption: str) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return (f'<figure><img src="data:image/png;base64,{data}" alt="{_e(path.name)}" loading="lazy">'
            f"<figcaption>{_e(caption)}</figcaption></figure>")


def _metrics_html(cell, specs: list) -> str:
    rows = []
    for sp in specs:
        value = cell.metrics.get(sp.name)
        if value is None and not any(k in cell.metrics for k in (sp.interval or ())):
            continue
        text = sp.format(_float(value) if not isinstance(value, bool) else value)
        if sp.interval and cell.metrics.get(sp.interval[0]) is not None:
            text += f" [{_num(cell.metrics.get(sp.interval[0]), sp.digits)}, " \
                    f"{_num(cell.metrics.get(sp.interval[1]), sp.digits)}]"
        rows.append(("", _td_text(sp.group) + _td_text(sp.label) + f"<td>{_e(text)}</td>" + _td_text(sp.better)))
    if not rows:
        return "<p>No metrics.</p>"
    return _table(["group", "metric", "value", "direction"], rows, sortable=False)


def _cell_gates_html(table: pd.DataFrame) -> str:
    rows = []
    for _, r in table.iterrows():
        rows.append(("fail" if r["verdict"] == "FAIL" else "",
                     _td_text(r["target"]) + _td_text(None, _verdict_html(r["verdict"])) + _td_text(r.get("why", r["detail"]))
                     + _td_num(r["value"], 4) + _td_text(r["threshold"]) + _td_text(r["detail"])))
    return _table(["target", "verdict", "why", "value", "threshold", "detail"], rows, sortable=False)


def _drilldown_html(results: StudyResults, verdict_table: pd.DataFrame | None, per_cell) -> str:
    parts = []
    timing = [(h, m, d) for h, m, d in _TIMINGS] + [("wall s", "wall_seconds", 1)]
    for i, cell in enumerate(results.cells):
        st = cell.status
        state = st.get("status", "error")
        verdict = ""
        if per_cell is not None:
            match = per_cell[per_cell["cell_id"] == cell.cell_id]
            if len(match):
                verdict = " · gates " + _verdict_why_html(match.iloc[0])
        state_html = f"<b>{_e(state)}</b>" if state != "ok" else "ok"
        body = [f"<p>Status: {state_html}"
                + (f" at {_e(st.get('stage'))}" if st.get("stage") else "")
                + (f" — {_e(st.get('reason'))}" if st.get("reason") else "") + "</p>"]
        times = ", ".join(f"{h} {_num(st.get(m), d)}" for h, m, d in timing if _num(st.get(m), d))
        if times:
            body.append(f"<p>{_e(times)}</p>")
        if st.get("traceback_tail"):
            body.append(f"<pre>{_e(st['traceback_tail'])}</pre>")
        if verdict_table is not None:
            sub = verdict_table[verdict_table["cell_id"] == cell.cell_id]
            if len(sub):
                body.append(_cell_gates_html(sub))
        if cell.ok:
            body.append(_metrics_html(cell, results.specs))
            body += [_img(path, caption) for path, caption in cell_figures(results, cell)]
        name = canonical(cell.dataset, cell.synthesizer, cell.seed)
        parts.append(f'<details class="cell" id="cell-{i}"><summary>{_e(name)} · {state_html}{verdict}'
                     f"</summary>{''.join(body)}</details>")
    return "\n".join(parts)


def _provenance(results: StudyResults) -> str:
    """Versions every cell shares, a synthesizer's own ones (R and its packages for synthpop), git commit."""
    common, own, commits = provenance(results)
    if not common and not own:
        return ""
    items = ", ".join(f"{_e(k)} {_e(v)}" for k, v in common.items())
    extra = "".join(f"<li>{_e(s)}: " + ", ".join(f"{_e(k)} {_e(v)}" for k, v in d.items()) + "</li>"
                    for s, d in own.items())
    return (f"<p>Versions: {items}; git commit: {_e(', '.join(commits) or 'unknown')}.</p>"
            + (f"<ul>{extra}</ul>" if extra else ""))


def default_verdicts(results: StudyResults) -> tuple[pd.DataFrame | None, str]:
    """The verdicts of the study kind's gates (conf/gates/default.yaml, or sequential.yaml for a sequential
    study), or (None, why not) when they do not apply."""
    from holdbench.benchmark.outputs.gates import default_gates, load_gates, verdicts

    try:
        gates = load_gates(default_gates(results.study))
        return verdicts(results, gates), gates.source
    except ValueError as exc:
        return None, str(exc)


def _gates_html(table: pd.DataFrame | None, source: str, per_cell) -> str:
    if table is None:
        return f"<p>Quality gates not applied: {_e(source)}</p>"
    counts = per_cell[~per_cell["reference"].astype(bool)]["verdict"].value_counts()
    line = ", ".join(f"{counts.get(v, 0)} {v}" for v in ("pass", "FAIL", "n/a"))
    out = [(f"<p>Gates <code>{_e(_shown_path(source))}</code> on every cell (the holdout reference row is not "
           f"judged): {_e(line)}. Beside every verdict (All cells, each drill-down) stands why, in words: the "
           f"target that decided it, what was measured and what is allowed. The D2.2 tests compare S's distances "
           f"to T with H's own distances to T (A = the chance that a synthetic record is nearer T than a holdout "
           f"record is, 0.5 = no difference); the DCR share asks whether S is nearer T than H. A synthesizer "
           f"that crowds T's common records (low diversity) fails the first without the second. "
           f"<code>holdbench check</code> applies the same gates in a pipeline (exit 1 on a failure).</p>")]
    if not table["detail"].astype(str).str.contains("mia_").any():
        out.append("<p>No target of these gates judges the membership-inference attacks: their AUCs (MIA AUC "
                   "column) are shown, not gated, so a cell with a high attack AUC can pass. "
                   "conf/gates/default.yaml shows how to add such a target.</p>")
    failed = per_cell[per_cell["verdict"] == "FAIL"]
    if len(failed):
        index = {c: i for i, c in enumerate(table["cell_id"].drop_duplicates())}
        rows = [("fail", _td_text(None, f'<a href="#cell-{index[r["cell_id"]]}">'
                                        f'{_e(canonical(r["dataset"], r["synthesizer"], r["seed"]))}</a>')
                 + _td_text(r["failed"]) + _td_text(r["why"])) for _, r in failed.iterrows()]
        out.append(_table(["cell that fails", "failed targets", "why"], rows))
    return "\n".join(out)


def _shown_path(source: str) -> str:
    """A gates file relative to the repository when it lives there."""
    from holdbench.benchmark.config import REPO_ROOT

    try:
        return str(Path(source).resolve().relative_to(REPO_ROOT))
    except ValueError:
        return source


def render_report(results: StudyResults, verdicts: pd.DataFrame | None = None, gates_source: str = "") -> str:
    """The report page as a string. `verdicts` is a `holdbench.benchmark.outputs.gates.verdicts` table; by default the
    gates of conf/gates/default.yaml are applied. It embeds the figures make_plots drew."""
    from holdbench.benchmark.outputs.gates import cell_verdicts

    study, cells = results.study, results.table
    summary = aggregate(cells, results.specs)
    cols = _columns(results.shown)
    if verdicts is None:
        verdicts, gates_source = default_verdicts(results)
    per_cell = cell_verdicts(verdicts) if verdicts is not None else None
    help_items = [(f"{sp.label} ({sp.name})", f"{sp.meaning} Better: {sp.better}.") for sp in results.specs]
    help_items += [_STATUS_HELP, _GATES_HELP]
    n_ok = int((cells["status"] == "ok").sum()) if len(cells) else 0
    name = _e(study["name"])
    listed = {k: _e(", ".join(map(str, study.get(k) or []))) for k in ("datasets", "synthesizers", "seeds")}
    parts = [
        (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>holdbench: {name}</title>'
         f"<style>{_CSS}</style></head><body>"),
        f"<h1>holdbench study: {name}</h1>",
        (f"<p>{len(cells)} cells, {n_ok} ok, {len(cells) - n_ok} not ok. Datasets: {listed['datasets']}. "
         f"Synthesizers: {listed['synthesizers']}. Seeds: {listed['seeds']}. Synthetic records per cell: "
         f"{_e(study.get('n_synthetic', 'n/a'))}. Click a column header to sort a table; click a cell in "
         f"<a href=\"#cells\">All cells</a> to open its drill-down.</p>"),
        "<details><summary><b>How to read the numbers</b></summary><dl>"
        + "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in help_items) + "</dl></details>",
    ]
    if len(cells):  # the verdict first: which cells pass the gates, and why the others fail
        parts += ["<h2>Quality gates</h2>", _gates_html(verdicts, gates_source, per_cell)]
    parts += ["<h2>Leaderboard (mean over ok seeds)</h2>",
              ("<p>In a header, ↓ means lower is better, ↑ higher is better, →x that x is ideal. The best mean "
               "of each metric column of a dataset is in bold on green (ties all marked; the holdout reference "
               "row is never marked); a best value of a synthesizer some of whose cells fail the quality gates "
               "says so beside it.</p>")]
    for dataset in dict.fromkeys(cells["dataset"]) if len(cells) else []:
        parts += [f"<h3>{_e(dataset)}</h3>", _dates_html(results, dataset, cells),
                  _summary_html(summary, dataset, cols, cells, per_cell)]
    if len(cells):
        figures = study_figures(results)
        parts += ["<h2>Figures</h2>",
                  "\n".join(_img(p, c) for p, c in figures) if figures else "<p>No figures found.</p>"]
    parts += ['<h2 id="cells">All cells</h2>',
              _cells_html(cells, cols, per_cell) if len(cells) else "<p>No cells found.</p>"]
    if len(cells):
        parts += ["<h2>Cell drill-down</h2>", _drilldown_html(results, verdicts, per_cell)]
    parts += [_provenance(results), f"<script>{_SCRIPT}</script>", "</body></html>\n"]
    return "\n".join(parts)


def write_report(results: StudyResults, verdicts: pd.DataFrame | None = None, gates_source: str = "") -> Path:
    """Write the study's report.html atomically (after make_plots, whose figures it embeds)."""
    path = results.layout.report
    write_text(path, render_report(results, verdicts, gates_source))
    return path
