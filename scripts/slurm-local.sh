#!/usr/bin/env bash
# A single-node Slurm cluster on this machine, for trying and testing
# `scripts/collect-slurm.sh` (and CI): munged, slurmctld and slurmd on
# localhost, with a configuration written here.
#
#   scripts/slurm-local.sh start    # start it; waits until the node is idle
#   scripts/slurm-local.sh status   # sinfo, or "not running"
#   scripts/slurm-local.sh stop     # stop the daemons this script started
#
# Needs Debian's slurm-wlm and munge (scripts/setup.sh installs them) and
# root (slurmd starts jobs; sudo is used when not root). Everything the
# cluster writes (state, spool, logs, pid files) lives in
# $POLYTUNE_SLURM_DIR (default /tmp/polytune-slurm); the configuration
# goes to /etc/slurm/slurm.conf, where Slurm's commands look for it, and
# is only ever written over when this script wrote it. The node is this
# machine as `slurmd -C` sees it (its CPUs and memory); its name is
# `hostname -s`.
set -euo pipefail

dir=${POLYTUNE_SLURM_DIR:-/tmp/polytune-slurm}
conf=/etc/slurm/slurm.conf
marker="# written by polytune's scripts/slurm-local.sh"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

die() {
  echo "slurm-local: $*" >&2
  exit 1
}

need() {
  for c in munged slurmctld slurmd sinfo scontrol; do
    command -v "$c" >/dev/null || die "$c is not installed (run scripts/setup.sh)"
  done
}

# The pid in a pid file, when that process runs.
alive() {
  local pid
  pid=$(cat "$1" 2>/dev/null) || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

write_conf() {
  if [ -e "$conf" ] && ! grep -qF "$marker" "$conf"; then
    die "$conf exists and was not written by this script: this machine has a Slurm of its own (use it, or move the file away)"
  fi
  local node
  node=$(slurmd -C | head -n 1)
  [[ $node == NodeName=* ]] || die "slurmd -C did not describe this node: $node"
  node="NodeName=$(hostname -s) ${node#NodeName=* }"
  $SUDO mkdir -p /etc/slurm "$dir/state" "$dir/spool"
  $SUDO tee "$conf" >/dev/null <<EOF
$marker
ClusterName=polytune
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MinJobAge=3600
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=local Nodes=$(hostname -s) Default=YES MaxTime=INFINITE State=UP
EOF
}

start() {
  need
  if alive "$dir/slurmctld.pid" >/dev/null; then
    echo "slurm-local: already running"
    status
    return
  fi
  $SUDO rm -rf "$dir"
  $SUDO mkdir -p "$dir"
  write_conf
  # munged runs as its own user, with its socket in /run/munge.
  if ! munge -n </dev/null >/dev/null 2>&1; then
    $SUDO install -d -o munge -g munge -m 0755 /run/munge
    $SUDO runuser -u munge -- munged
    munge -n </dev/null | unmunge >/dev/null || die "munged does not answer"
    echo munged >"$dir/started-munged"
  fi
  $SUDO slurmctld
  $SUDO slurmd
  for _ in $(seq 120); do
    if sinfo -h -o '%T' 2>/dev/null | grep -qx idle; then
      echo "slurm-local: node $(hostname -s) idle"
      return
    fi
    sleep 0.5
  done
  echo "slurm-local: the node did not become idle in 60 s; logs:" >&2
  tail -n 20 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 || true
  stop
  exit 1
}

stop() {
  local pid
  for d in slurmd slurmctld; do
    if pid=$(alive "$dir/$d.pid"); then
      $SUDO kill "$pid"
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    fi
  done
  # munged only when this script started it.
  if [ -e "$dir/started-munged" ] && pid=$(alive /run/munge/munged.pid); then
    $SUDO kill "$pid"
  fi
  $SUDO rm -f "$dir/started-munged"
  echo "slurm-local: stopped"
}

status() {
  if alive "$dir/slurmctld.pid" >/dev/null && sinfo >/dev/null 2>&1; then
    sinfo
  else
    echo "slurm-local: not running"
    return 1
  fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *)
    echo "usage: $0 start|stop|status" >&2
    exit 2
    ;;
esac
