#!/usr/bin/env bash
# Install, then run the whole test suite (the command README.md and .ci/run share).
#
#   bash .ci/test.sh                      everything but the live SLURM test (which skips, saying why)
#   bash .ci/test.sh --with-slurm         also start a one-node SLURM (installs Debian's slurm and
#                                         munge, writes /etc/slurm/slurm.conf, starts three root
#                                         daemons) for tests/workflow/test_slurm_live.py; the
#                                         daemons this script started are stopped when it ends
#   bash .ci/test.sh -m "not slow"        the quick tier for development
# With CI=true (CI runs it so) --with-slurm is implied. Other arguments go to pytest.
# Tests run in HOLDBENCH_TEST_WORKERS pytest-xdist workers (default 2, one per core; whole files
# per worker, so a module's fixtures are built once; the longest files first, tests/conftest.py's LONGEST_FIRST);
# HOLDBENCH_TEST_WORKERS=0 runs them serially.
set -euo pipefail
cd "$(dirname "$0")/.."
WITH_SLURM=0
[ "${CI:-}" = true ] && WITH_SLURM=1
args=()
for arg in "$@"; do
  case "$arg" in
    --with-slurm) WITH_SLURM=1 ;;
    *) args+=("$arg") ;;
  esac
done
bash .ci/install.sh
export HOLDBENCH_SHARED_DIR="${HOLDBENCH_SHARED_DIR:-$(cd .. && pwd)/shared}"
export HOLDBENCH_DATA_DIR="${HOLDBENCH_DATA_DIR:-$HOLDBENCH_SHARED_DIR/datasets}"
export OMP_NUM_THREADS=1
export HOLDBENCH_SLURM_DIR="${HOLDBENCH_SLURM_DIR:-/tmp/holdbench-slurm}"
slurm_up() { [ -s "$HOLDBENCH_SLURM_DIR/slurmctld.pid" ] && kill -0 "$(cat "$HOLDBENCH_SLURM_DIR/slurmctld.pid")" 2>/dev/null; }
STARTED_SLURM=0
if [ "$WITH_SLURM" = 1 ]; then
  # one-node SLURM for tests/workflow/test_slurm_live.py; never fails here: when it cannot start
  # it says why, and that test skips with the reason (or fails when CI=true)
  slurm_up || STARTED_SLURM=1
  bash .ci/slurm/start.sh
elif ! slurm_up; then
  mkdir -p "$HOLDBENCH_SLURM_DIR"
  printf 'unavailable: not started (bash .ci/test.sh --with-slurm, or CI=true, starts a one-node SLURM)\n' \
    >"$HOLDBENCH_SLURM_DIR/status"
fi
stop_slurm() { [ "$STARTED_SLURM" = 1 ] && bash .ci/slurm/stop.sh || true; }
trap stop_slurm EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
set +e
WORKERS="${HOLDBENCH_TEST_WORKERS:-2}"
xdist=()
[ "$WORKERS" != 0 ] && xdist=(-n "$WORKERS" --dist loadfile --no-loadscope-reorder)
# --durations: the 30 slowest tests at the end, to keep the suite within CI's time
python3 -m pytest -q --durations=30 ${xdist[@]+"${xdist[@]}"} ${args[@]+"${args[@]}"}
rc=$?
set -e
# pytest exits 5 when it collected no test: that is a failure of the suite, say so.
if [ "$rc" = 5 ]; then echo "no tests were collected" >&2; exit 1; fi
exit "$rc"
