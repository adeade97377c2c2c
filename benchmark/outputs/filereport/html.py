"""HTML building blocks of the file report: escaping (markup and spreadsheet formulas), numbers, sortable
tables and figures with stable ids. No part of the data ever reaches the page unescaped."""

from __future__ import annotations

import html
import math
import re
from pathlib import Path
from string import Template

_TEMPLATE = Path(__file__).with_name("template.html")
#: a cell a spreadsheet would run as a formula when the text is pasted or saved as CSV (OWASP)
_FORMULA = re.compile(r"^[=+\-@\t\r]")
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def neutral(text: object) -> str:
    """The text with a leading ' when it would start a spreadsheet formula (=, +, -, @, tab, CR) and is
    not a plain number; control characters other than tab and newline are dropped."""
    s = "".join(ch for ch in str(text) if ch.isprintable() or ch in "\t\n")
    if _FORMULA.match(s) and not _NUMBER.match(s.strip()):
        return "'" + s
    return s


def esc(text: object) -> str:
    """Data as HTML text: formula-neutral (neutral) and markup-escaped."""
    return html.escape(neutral(text), quote=True)


def num(value, digits: int = 3) -> str:
    if value is None or isinstance(value, str):
        return "n/a" if value is None else esc(value)
    if isinstance(value, bool):
        return "pass" if value else "FAIL"
    v = float(value)
    if math.isnan(v):
        return "n/a"
    if v != 0 and (abs(v) >= 1e5 or abs(v) < 10 ** -digits):
        return f"{v:.{max(digits - 1, 1)}e}" if abs(v) < 1e5 else f"{v:,.0f}"
    return f"{v:,.{digits}f}"


def pct(value) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{100 * value:.2f}%"


def verdict_html(v: str) -> str:
    cls = {"pass": "pass", "FAIL": "fail"}.get(v, "na")
    return f'<span class="{cls}">{esc(v)}</span>'


def badge(v: str) -> str:
    cls = {"pass": "pass", "FAIL": "fail"}.get(v, "na")
    return f'<span class="badge {cls}">{esc(v.upper() if v != "n/a" else v)}</span>'


def table(headers: list[str], rows: list[list], table_id: str, numeric: set[int] | None = None,
          sortable: bool = True) -> str:
    """A table; a cell is raw HTML text already escaped by the caller, or a (html, css class) pair."""
    numeric = numeric or set()
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = []
    for row in rows:
        cells = []
        for i, cell in enumerate(row):
            text, cls = cell if isinstance(cell, tuple) else (cell, "")
            classes = " ".join(c for c in (("num" if i in numeric else ""), cls) if c)
            cells.append(f'<td class="{classes}">{text}</td>' if classes else f"<td>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    cls = ' class="hb-sortable"' if sortable else ""
    return (f'<table id="{table_id}"{cls}><thead><tr>{head}</tr></thead><tbody>' + "".join(body)
            + "</tbody></table>")


def figure(fig_id: str, svg: str, caption: str) -> str:
    """A figure with a stable id and class hb-figure: its SVG (drawn by matplotlib, no data text unescaped:
    matplotlib escapes the labels it writes) and a caption (escaped)."""
    return f'<figure class="hb-figure" id="{fig_id}">{svg}<figcaption>{esc(caption)}</figcaption></figure>'


def means(sentence: str) -> str:
    """The one plain sentence saying what a part means."""
    return f'<p class="means">{esc(sentence)}</p>'


def slug(text: str) -> str:
    """An id-safe form of a name (the report's figure and table ids)."""
    return re.sub(r"[^A-Za-z0-9_-]+", "-", str(text)).strip("-")[:60] or "x"


def page(title: str, body: str) -> str:
    return Template(_TEMPLATE.read_text(encoding="utf-8")).substitute(title=esc(title), body=body)
