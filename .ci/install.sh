#!/usr/bin/env bash
# Install holdbench and everything it needs on a fresh Debian machine (idempotent).
# R (base) is installed for the rpy2 bridge; CRAN's synthpop cannot be fetched here.
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
if ! dpkg -s r-base-core r-base-dev >/dev/null 2>&1; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq r-base-core r-base-dev >/dev/null
fi
PIP="python3 -m pip install -q --disable-pip-version-check"
# CPU build of torch first, or pip pulls a multi-GB CUDA build for sdv.
python3 -c "import torch" 2>/dev/null || $PIP torch==2.13.0
$PIP -e ".[dev,r]"
