"""The names of synthetic files on the command line: `--synthetic` and `--synthetic-events` items are a path
or NAME=PATH, and a NAME labels report sections, table columns and report.json keys."""

from __future__ import annotations

import re
from pathlib import Path

NAME = re.compile(r"^[A-Za-z0-9_.+-]{1,64}$")


def split_name(item: str) -> tuple[str | None, str]:
    """(NAME, PATH) of an item `NAME=PATH`; (None, item) of a bare path (also of an existing file whose name
    holds `=`)."""
    name, sep, path = item.partition("=")
    if not sep or Path(item).exists():
        return None, item
    return name, path


def check_name(name: str, item: str, option: str = "--synthetic") -> str:
    """An S name: 1-64 letters, digits or ._+-."""
    if not NAME.match(name):
        raise ValueError(f"{option} {item!r}: the name {name!r} must be 1-64 letters, digits or ._+- "
                         "(give it as NAME=PATH)")
    return name
