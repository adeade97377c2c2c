#!/usr/bin/env bash
# Install holdbench and everything it needs on a fresh Debian machine (idempotent).
#   bash .ci/install.sh                  R (base, rpart) for the rpy2 bridge, Chromium for the MLflow UI
#                                        and report browser tests (Playwright drives Debian's chromium; no
#                                        browser download), CPU torch, holdbench, the plug-in venvs
#                                        (anonymeter, mostlyai-qa, the DP and forest generators); and R's
#                                        synthpop, built offline
#                                        from ../shared/r-packages/ when that folder is there
#   bash .ci/install.sh --synthpop-from DIR
#                                        R's synthpop built from DIR (the CRAN sources of synthpop and of
#                                        cmm, mipfp, broman, with SHA256SUMS; see ../shared/r-packages/)
#   bash .ci/install.sh --with-synthpop  R's synthpop in any case: from ../shared/r-packages/ when it is
#                                        there, else from CRAN (where CRAN is reachable). Implied by
#                                        CI=true, where every synthpop test must run.
set -euo pipefail
cd "$(dirname "$0")/.."
WITH_SYNTHPOP=0
[ "${CI:-}" = true ] && WITH_SYNTHPOP=1
SYNTHPOP_FROM=""
while [ $# -gt 0 ]; do
  case "$1" in
    --with-synthpop) WITH_SYNTHPOP=1 ;;
    --synthpop-from) [ $# -ge 2 ] || { echo "install.sh: --synthpop-from needs a folder" >&2; exit 2; }
                     SYNTHPOP_FROM="$2"; shift ;;
    --synthpop-from=*) SYNTHPOP_FROM="${1#*=}" ;;
    *) echo "install.sh: unknown option $1 (known: --with-synthpop, --synthpop-from DIR)" >&2; exit 2 ;;
  esac
  shift
done
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
say() { echo "[install] $*"; }
# another apt-get or dpkg (unattended upgrades, a second install) holds the dpkg lock: wait for it
# (up to 10 minutes) instead of failing at once
APT_WAIT=(-o DPkg::Lock::Timeout=600)
APT_UPDATED=0
apt_install() {  # the Debian packages named, unless all are installed already
  dpkg -s "$@" >/dev/null 2>&1 && return 0
  [ "$APT_UPDATED" = 1 ] || $SUDO apt-get "${APT_WAIT[@]}" update -qq
  APT_UPDATED=1
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get "${APT_WAIT[@]}" install -y -qq --no-install-recommends \
    "$@" >/dev/null
}
DEBS=(r-base-core r-base-dev r-cran-rpart chromium)
if ! dpkg -s "${DEBS[@]}" >/dev/null 2>&1; then
  say "Debian packages: ${DEBS[*]} (apt-get; waits up to 10 min for the dpkg lock; a few minutes)"
  apt_install "${DEBS[@]}"
else
  say "Debian packages: already installed"
fi

# R's synthpop. Offline (the default where ../shared/r-packages/ exists, or --synthpop-from DIR): the
# tarballs' checksums checked against DIR/SHA256SUMS, the R packages synthpop imports from Debian,
# then R CMD INSTALL of the packages Debian does not ship and of synthpop, in this order, and every
# version checked after. Skipped when synthpop of the folder's version is installed already.
SYNTHPOP_R_DEBS=(r-cran-lattice r-cran-mass r-cran-nnet r-cran-ggplot2 r-cran-rpart r-cran-party
  r-cran-foreign r-cran-plyr r-cran-proto r-cran-polspline r-cran-randomforest r-cran-ranger
  r-cran-classint r-cran-survival r-cran-stringr r-cran-rmutil r-cran-forcats r-cran-rsolnp
  r-cran-numderiv)
SYNTHPOP_ORDER=(cmm mipfp broman synthpop)
r_version() {  # the installed version of R package $1 as R writes it (1.9.2), or nothing
  Rscript -e "cat(tryCatch(as.character(packageVersion('$1')), error = function(e) ''))" 2>/dev/null || true
}
[ -z "$SYNTHPOP_FROM" ] && [ -d ../shared/r-packages ] && SYNTHPOP_FROM=../shared/r-packages
if [ -n "$SYNTHPOP_FROM" ]; then
  [ -d "$SYNTHPOP_FROM" ] || { echo "install.sh: --synthpop-from $SYNTHPOP_FROM: no such folder" >&2; exit 2; }
  SRC=$(cd "$SYNTHPOP_FROM" && pwd)
  declare -A TARBALL WANT
  for pkg in "${SYNTHPOP_ORDER[@]}"; do
    found=("$SRC/${pkg}"_*.tar.gz)
    if [ "${#found[@]}" != 1 ] || [ ! -f "${found[0]}" ]; then
      echo "install.sh: $SRC must hold exactly one ${pkg}_<version>.tar.gz (found: ${found[*]})" >&2; exit 1
    fi
    TARBALL[$pkg]=${found[0]}
    v=${found[0]##*/${pkg}_}; v=${v%.tar.gz}; WANT[$pkg]=${v//-/.}  # R writes 1.9-2 as 1.9.2
  done
  HAVE=$(r_version synthpop)
  if [ "$HAVE" = "${WANT[synthpop]}" ]; then
    say "R's synthpop ${HAVE}: already installed (the version in $SRC)"
  else
    T0=$SECONDS
    [ -f "$SRC/SHA256SUMS" ] || { echo "install.sh: $SRC/SHA256SUMS is missing" >&2; exit 1; }
    for pkg in "${SYNTHPOP_ORDER[@]}"; do
      name=${TARBALL[$pkg]##*/}
      grep -q "  $name\$" "$SRC/SHA256SUMS" || { echo "install.sh: $name is not listed in $SRC/SHA256SUMS" >&2; exit 1; }
    done
    if ! (cd "$SRC" && sha256sum --quiet -c SHA256SUMS); then
      echo "install.sh: checksums in $SRC do not match SHA256SUMS: not installing synthpop from it" >&2; exit 1
    fi
    apt_install "${SYNTHPOP_R_DEBS[@]}"
    for pkg in "${SYNTHPOP_ORDER[@]}"; do
      LOG=$(mktemp)
      if ! $SUDO R CMD INSTALL "${TARBALL[$pkg]}" >"$LOG" 2>&1; then
        tail -n 30 "$LOG" >&2
        echo "install.sh: R CMD INSTALL ${TARBALL[$pkg]} failed (its last lines above)" >&2; rm -f "$LOG"; exit 1
      fi
      rm -f "$LOG"
      got=$(r_version "$pkg")
      [ "$got" = "${WANT[$pkg]}" ] || { echo "install.sh: R package $pkg is $got after installing ${TARBALL[$pkg]} (want ${WANT[$pkg]})" >&2; exit 1; }
    done
    Rscript -e 'suppressPackageStartupMessages(library(synthpop))' >/dev/null \
      || { echo "install.sh: synthpop ${WANT[synthpop]} installed but does not load" >&2; exit 1; }
    say "R's synthpop ${WANT[synthpop]} built offline from $SRC (checksums verified; cmm ${WANT[cmm]}, mipfp ${WANT[mipfp]}, broman ${WANT[broman]}; $((SECONDS - T0)) s)"
  fi
elif [ "$WITH_SYNTHPOP" = 1 ]; then
  HAVE=$(r_version synthpop)
  if [ -n "$HAVE" ]; then
    say "R's synthpop ${HAVE}: already installed"
  else
    # fails loudly where CRAN cannot be reached
    T0=$SECONDS
    apt_install "${SYNTHPOP_R_DEBS[@]}"
    $SUDO Rscript -e 'install.packages("synthpop", repos = "https://cloud.r-project.org"); library(synthpop)'
    HAVE=$(r_version synthpop)
    [ -n "$HAVE" ] || { echo "install.sh: synthpop from CRAN did not install (is CRAN reachable?)" >&2; exit 1; }
    say "R's synthpop ${HAVE} from CRAN ($((SECONDS - T0)) s)"
  fi
else
  HAVE=$(r_version synthpop)
  if [ -n "$HAVE" ]; then
    say "R's synthpop ${HAVE}: already installed"
  else
    say "R's synthpop: not installed (no ../shared/r-packages/; --synthpop-from DIR builds it from the tarballs, --with-synthpop from CRAN); its cells are \`skipped\`"
  fi
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
# plug-in venvs: every plug-in folder contracts/plugin_env.py discovers (synthesizers/plugins/*/,
# metrics/plugins/*/ and $HOLDBENCH_PLUGIN_PATH's: anonymeter, whose numpy < 1.27 pin cannot share this
# environment, the DP and forest generators, a user's own), each from its fully pinned requirements.txt
# with --no-deps, reinstalled only when that file changes (its sha256 is stamped in the venv)
python3 -m holdbench.contracts.plugin_env install
say "done"
