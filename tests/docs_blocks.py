"""Code blocks of README.md and docs/, as the tests that execute them read them.

Every fenced block whose language is `python`, `yaml` or `bash` in README.md or under docs/ is a
promise that it works: some test must fetch it with `block(page, first_line)` and run it
(tests/docs/test_blocks_exercised.py checks that each one is fetched by a test, by reading the
tests' source). A block that only illustrates (command output, a sketch) uses `text` or `console`.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXECUTABLE = ("python", "yaml", "bash")
_FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<lang>[\w+-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
                    re.DOTALL | re.MULTILINE)


def pages() -> list[Path]:
    """README.md and every Markdown page of the docs site (generated pages are not in docs/)."""
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def blocks(page: Path) -> list[tuple[str, str]]:
    """(language, body) of every fenced block of `page`, bodies dedented by their fence's indent."""
    out = []
    for m in _FENCE.finditer(page.read_text()):
        indent = len(m.group("indent"))
        body = "".join(line[indent:] if line[:indent].strip() == "" else line
                       for line in m.group("body").splitlines(keepends=True))
        out.append((m.group("lang"), body))
    return out


def first_line(body: str) -> str:
    return body.split("\n", 1)[0].strip()


def block(page: str, first: str) -> str:
    """The body of the block of `page` (repo-relative) whose first line is `first`."""
    path = REPO / page
    found = [body for _, body in blocks(path) if first_line(body) == first.strip()]
    assert found, f"{page} has no code block whose first line is {first!r}"
    assert len(found) == 1, f"{page} has {len(found)} code blocks whose first line is {first!r}"
    return found[0]
