#!/usr/bin/env bash
# Install, then run the whole test suite (the command README.md and .ci/run share).
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/install.sh
export HOLDBENCH_SHARED_DIR="${HOLDBENCH_SHARED_DIR:-$(cd .. && pwd)/shared}"
export HOLDBENCH_DATA_DIR="${HOLDBENCH_DATA_DIR:-$HOLDBENCH_SHARED_DIR/datasets}"
export OMP_NUM_THREADS=1
# one-node SLURM for tests/workflow/test_slurm_live.py; never fails here: when it cannot start
# it says why, and that test skips with the reason (or fails when CI=true)
bash .ci/slurm/start.sh
set +e
python3 -m pytest -q "$@"
rc=$?
set -e
# pytest exits 5 when it collected no test: that is a failure of the suite, say so.
if [ "$rc" = 5 ]; then echo "no tests were collected" >&2; exit 1; fi
exit "$rc"
