"""Whether a test can use R (and R packages such as synthpop), for the tests of the R bridge.

`need_r(["synthpop"])` at the top of a test skips it, saying why, where R or the package cannot be
loaded, and FAILS it under CI=true: CI installs R's synthpop (.ci/install.sh builds it from
../shared/r-packages/), so a test that needs it must run there, never skip.

`without_synthpop(code)` runs Python `code` in a fresh interpreter whose embedded R cannot see the
library synthpop is installed in: the "synthpop not installed" paths are exercised on a machine
where it is installed.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
INSTALL = "bash .ci/install.sh (builds R's synthpop from ../shared/r-packages/, or --with-synthpop from CRAN)"


@functools.cache
def _reason(packages: tuple[str, ...]) -> str | None:
    from holdbench.synthesizers._rconvert import r_unavailable_reason

    return r_unavailable_reason(packages)


def need_r(packages: tuple[str, ...] | list[str] = ()) -> None:
    """Skip (fail under CI=true) unless rpy2, R and every R package named load."""
    reason = _reason(tuple(packages))
    if reason is None:
        return
    what = f"R's {', '.join(packages)}" if packages else "rpy2/R"
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but {what} is not usable here: {reason}; {INSTALL}", pytrace=False)
    pytest.skip(f"{what} not usable: {reason}")


#: R code hiding the library synthpop is installed in (both .libPaths() and .Library.site, which a later
#: .libPaths() call would bring back); synthpop must not be loaded yet
HIDE_SYNTHPOP = """local({
  dir <- system.file(package = "synthpop")
  if (!nzchar(dir)) return(invisible())
  dir <- normalizePath(dirname(dir))
  if (dir == normalizePath(.Library)) stop("synthpop is in R's own library ", dir, ": cannot hide it")
  keep <- function(p) p[normalizePath(p, mustWork = FALSE) != dir]
  unlockBinding(".Library.site", baseenv())
  assign(".Library.site", keep(get(".Library.site", baseenv())), envir = baseenv())
  .libPaths(keep(.libPaths()))
  stopifnot(!nzchar(system.file(package = "synthpop")))
})"""


def without_synthpop(code: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run Python `code` after hiding synthpop's library from the embedded R; its stdout and stderr
    are returned (check=True: a failing `code` fails the test with its output)."""
    prelude = ("from holdbench.synthesizers._rconvert import _import_robjects\n"
               f"_import_robjects().r({HIDE_SYNTHPOP!r})\n")
    done = subprocess.run([sys.executable, "-c", prelude + code], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout, check=False)
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done
