#!/usr/bin/env bash
# Install holdbench and everything it needs on a fresh Debian machine (idempotent).
#   bash .ci/install.sh                  R (base, rpart) for the rpy2 bridge, Chromium for the MLflow UI
#                                        test, CPU torch, holdbench, the plug-in venvs (anonymeter,
#                                        the DP and forest generators)
#   bash .ci/install.sh --with-synthpop  also R's synthpop from CRAN (where CRAN is reachable)
set -euo pipefail
cd "$(dirname "$0")/.."
WITH_SYNTHPOP=0
for arg in "$@"; do
  case "$arg" in
    --with-synthpop) WITH_SYNTHPOP=1 ;;
    *) echo "install.sh: unknown option $arg (known: --with-synthpop)" >&2; exit 2 ;;
  esac
done
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
say() { echo "[install] $*"; }
# another apt-get or dpkg (unattended upgrades, a second install) holds the dpkg lock: wait for it
# (up to 10 minutes) instead of failing at once
APT_WAIT=(-o DPkg::Lock::Timeout=600)
DEBS=(r-base-core r-base-dev r-cran-rpart chromium)
if ! dpkg -s "${DEBS[@]}" >/dev/null 2>&1; then
  say "Debian packages: ${DEBS[*]} (apt-get; waits up to 10 min for the dpkg lock; a few minutes)"
  $SUDO apt-get "${APT_WAIT[@]}" update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get "${APT_WAIT[@]}" install -y -qq --no-install-recommends \
    "${DEBS[@]}" >/dev/null
else
  say "Debian packages: already installed"
fi
if [ "$WITH_SYNTHPOP" = 1 ]; then
  # fails loudly where CRAN cannot be reached; synthpop's cells are `skipped` without it
  say "R's synthpop from CRAN"
  $SUDO Rscript -e 'if (!requireNamespace("synthpop", quietly = TRUE)) install.packages("synthpop", repos = "https://cloud.r-project.org"); library(synthpop)'
fi
PIP="python3 -m pip install -q --disable-pip-version-check"
# CPU build of torch first, or pip pulls a multi-GB CUDA build for sdv.
if python3 -c "import torch" 2>/dev/null; then
  say "torch: already installed"
else
  say "torch 2.13.0, CPU build (about 1 minute)"
  $PIP torch==2.13.0
fi
say "holdbench and its Python dependencies (pip install -e .[dev,r,docs]; 2-8 minutes on a fresh machine)"
$PIP -e ".[dev,r,docs]"
# plug-in venvs (contracts/plugin_env.py lists them: anonymeter, whose numpy < 1.27 pin cannot share
# this environment, and the DP and forest generators): each from its fully pinned requirements file
# with --no-deps, reinstalled only when that file changes (its sha256 is stamped in the venv)
while IFS=$'\t' read -r NAME VENV REQ WHY; do
  SUM=$(sha256sum "$REQ" | cut -d' ' -f1)
  if [ "$(cat "$VENV/.requirements.sha256" 2>/dev/null)" != "$SUM" ]; then
    say "$NAME's own venv in $VENV ($WHY; about 1 minute)"
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps -r "$REQ"
    echo "$SUM" > "$VENV/.requirements.sha256"
  else
    say "$NAME's own venv in $VENV: already installed"
  fi
done < <(python3 -m holdbench.contracts.plugin_env)
say "done"
