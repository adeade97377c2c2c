#!/usr/bin/env bash
# Stop the one-node SLURM started by .ci/slurm/start.sh (only the daemons it started, by pid), and
# remove /etc/slurm/slurm.conf if start.sh wrote it (start.sh writes it again): with a configuration
# naming a controller that no longer answers, every Snakemake start on this machine, a local run
# included, waits 9 s while the SLURM executor plugin asks `scontrol show config` (with no configuration
# scontrol fails at once). Leaves the packages in place; `--purge` also removes the scratch directory.
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
grep -qF "$MARK" "$CONF" 2>/dev/null && rm -f "$CONF"
[ "${1:-}" = "--purge" ] && rm -rf "$DIR"
exit 0
