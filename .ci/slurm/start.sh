#!/usr/bin/env bash
# Start a one-node SLURM on this machine (for the live SLURM test; idempotent).
#
# Installs Debian's slurmctld slurmd slurm-client munge if missing, writes a one-node
# configuration at /etc/slurm/slurm.conf (the default path: the Snakemake SLURM plugin's job
# step strips SLURM_CONF before its inner srun, so a configuration elsewhere is not found),
# keeps state, spool, pid and log files in $HOLDBENCH_SLURM_DIR (default /tmp/holdbench-slurm),
# starts munged, slurmctld and slurmd without systemd, and waits until the node is idle.
# No cgroups, no accounting database: proctrack/linuxproc, task/none, accounting_storage/none.
#
# It never fails the caller: it exits 0 and writes "$HOLDBENCH_SLURM_DIR/status", whose
# first line is "ok" or "unavailable: <reason>" (the live test skips with that reason, or
# fails when CI=true). Stop it with .ci/slurm/stop.sh.
set -uo pipefail
DIR="${HOLDBENCH_SLURM_DIR:-/tmp/holdbench-slurm}"
CONF=/etc/slurm/slurm.conf
MARK="# written by holdbench .ci/slurm/start.sh"
NODE=holdbench1
mkdir -p "$DIR"
t0=$(date +%s.%N)

status() { printf '%s\n' "$1" >"$DIR/status"; echo "[slurm] $1"; }
give_up() { status "unavailable: $1"; exit 0; }
elapsed() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$(date +%s.%N)"; }
node_state() { timeout 10 sinfo -h -n "$NODE" -o %T 2>/dev/null | head -1; }
# a pid file names a live daemon only if that pid is the daemon (a stale file from a machine image
# can name an unrelated process)
alive() { [ -s "$1" ] && [ "$(cat "/proc/$(cat "$1")/comm" 2>/dev/null)" = "$(basename "$1" .pid)" ]; }

# already up (a previous call): nothing to do
if grep -qF "$MARK" "$CONF" 2>/dev/null && alive "$DIR/slurmctld.pid" && alive "$DIR/slurmd.pid"; then
  case "$(node_state)" in idle*|mixed*|alloc*) status ok; echo "[slurm] already running"; exit 0;; esac
fi

[ "$(id -u)" = 0 ] || give_up "not root (uid $(id -u)): cannot install SLURM or write $CONF"
command -v apt-get >/dev/null 2>&1 || give_up "apt-get not found (not a Debian machine)"
if [ -e "$CONF" ] && ! grep -qF "$MARK" "$CONF"; then
  give_up "$CONF exists and was not written by this script; not overwriting a real cluster's configuration"
fi

if ! dpkg -s slurmctld slurmd slurm-client munge >/dev/null 2>&1; then
  ti=$(date +%s.%N)
  export DEBIAN_FRONTEND=noninteractive
  if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends \
           slurmctld slurmd slurm-client munge; } >"$DIR/apt.log" 2>&1; then
    give_up "apt-get install slurmctld slurmd slurm-client munge failed (see $DIR/apt.log)"
  fi
  echo "[slurm] installed slurmctld slurmd slurm-client munge in $(elapsed "$ti") s"
fi

# --- munge (its socket directory must be 0711, else clients see it as inaccessible) ---
[ -s /etc/munge/munge.key ] || { dd if=/dev/urandom of=/etc/munge/munge.key bs=1k count=1 status=none; }
chown munge:munge /etc/munge/munge.key && chmod 0400 /etc/munge/munge.key
install -d -o munge -g munge -m 0711 /run/munge
install -d -o munge -g munge -m 0700 /var/lib/munge /var/log/munge "$DIR/munge"
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  runuser -u munge -- /usr/sbin/munged --pid-file="$DIR/munge/munged.pid" >"$DIR/munged.out" 2>&1 \
    || give_up "munged did not start: $(tail -1 "$DIR/munged.out")"
  for _ in $(seq 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
  munge -n 2>/dev/null | unmunge >/dev/null 2>&1 || give_up "munge does not answer (see $DIR/munged.out)"
fi

# --- configuration: one node with this machine's cores and a bit less than its memory ---
# GNU nproc honours OMP_NUM_THREADS (test.sh sets it to 1): count the cores without it
CPUS=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)
MEM=$(awk '/MemTotal/ {m = int($2 / 1024) - 1024; print (m < 1024 ? 1024 : m)}' /proc/meminfo)
HOST=$(hostname -s)
mkdir -p /etc/slurm "$DIR/state" "$DIR/spool" "$DIR/log"
cat >"$CONF" <<EOF
$MARK ($(date -u +%FT%TZ)); state and logs in $DIR
ClusterName=holdbench
SlurmctldHost=$HOST(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
# finished jobs stay visible to squeue/scontrol for an hour: the plugin's squeue status check
# and the live test's resource check read them after the run
MinJobAge=3600
MpiDefault=none
SchedulerType=sched/backfill
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
NodeName=$NODE NodeAddr=127.0.0.1 NodeHostname=$HOST CPUs=$CPUS RealMemory=$MEM State=UNKNOWN
PartitionName=main Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF

# A fresh start forgets every job a previous controller knew (-c): a state directory left by an
# earlier boot or a machine image can hold "running" jobs whose CPUs would never be freed, and a
# 2-CPU job would then pend forever.
if ! alive "$DIR/slurmctld.pid"; then
  rm -rf "$DIR/state" "$DIR/spool" && mkdir -p "$DIR/state" "$DIR/spool"
fi
alive "$DIR/slurmctld.pid" || slurmctld -c -f "$CONF" || give_up "slurmctld did not start (see $DIR/log/slurmctld.log)"
alive "$DIR/slurmd.pid" || slurmd -c -f "$CONF" -N "$NODE" || give_up "slurmd did not start (see $DIR/log/slurmd.log)"

for _ in $(seq 300); do
  st=$(node_state)
  case "$st" in idle*) break;; down*|drain*) scontrol update NodeName="$NODE" State=RESUME >/dev/null 2>&1;; esac
  sleep 0.1
done
case "$(node_state)" in
  idle*) status ok; echo "[slurm] node $NODE idle ($CPUS CPUs, $MEM MB) after $(elapsed "$t0") s";;
  *) give_up "node $NODE is '$(node_state)', not idle, after 30 s (see $DIR/log/)";;
esac
