#!/usr/bin/env bash
# Stop the one-node SLURM started by .ci/slurm/start.sh (only the daemons it started, by pid).
# Leaves the packages and /etc/slurm/slurm.conf in place; `--purge` also removes the
# configuration (only if start.sh wrote it) and the scratch directory.
set -uo pipefail
DIR="${HOLDBENCH_SLURM_DIR:-/tmp/holdbench-slurm}"
CONF=/etc/slurm/slurm.conf
MARK="# written by holdbench .ci/slurm/start.sh"
for name in slurmd slurmctld munge/munged; do
  pidfile="$DIR/$name.pid"
  [ -s "$pidfile" ] || continue
  pid=$(cat "$pidfile")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
    echo "[slurm] stopped ${name#*/} ($pid)"
  fi
  rm -f "$pidfile"
done
printf 'unavailable: stopped by .ci/slurm/stop.sh\n' >"$DIR/status" 2>/dev/null || true
if [ "${1:-}" = "--purge" ]; then
  grep -qF "$MARK" "$CONF" 2>/dev/null && rm -f "$CONF"
  rm -rf "$DIR"
fi
exit 0
