#!/usr/bin/env bash
# Optional (make sweep-slurm, not in CI): the README's Slurm job-array
# recipe on a one-node Slurm from Debian's slurm-wlm and munge packages,
# daemons started in the foreground here and stopped at the end. The
# merged shards must equal the unsharded sweep byte for byte.
set -euo pipefail
cd "$(dirname "$0")/.."
E=${EEVDF:-$PWD/target/release/eevdf}
N=4
have() { command -v "$1" >/dev/null 2>&1; }
if ! have slurmctld || ! have munged; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends slurm-wlm munge
fi
dir=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT
mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
# munge: a throwaway key and socket, so nothing system-wide changes.
dd if=/dev/urandom of="$dir/munge/key" bs=1024 count=1 status=none
chmod 600 "$dir/munge/key"
sock="$dir/munge/socket"
munged --force --key-file="$dir/munge/key" --socket="$sock" \
  --pid-file="$dir/munge/pid" --log-file="$dir/munge/log" --seed-file="$dir/munge/seed"
pids+=("$(cat "$dir/munge/pid")")
host=$(hostname -s)
cat > "$dir/slurm.conf" <<CONF
ClusterName=eevdf
SlurmctldHost=$host
AuthType=auth/munge
AuthInfo=socket=$sock
CredType=cred/munge
SlurmUser=$(id -un)
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/ctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/ctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=main Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$dir/slurm.conf"
slurmctld -D -f "$SLURM_CONF" 2>/dev/null & pids+=($!)
slurmd -D -f "$SLURM_CONF" 2>/dev/null & pids+=($!)
for _ in $(seq 60); do
  sinfo -h -o %T 2>/dev/null | grep -qE '^(idle|mixed)' && break
  sleep 1
done
sinfo
args="sweep default --duration 1s --vary task.hog.slice=1ms,4ms,16ms --features-axis PREEMPT_SHORT,NO_PREEMPT_SHORT --seeds 1..4"
$E $args > "$dir/whole.jsonl"
sbatch --wait --array=0-$((N - 1)) --output="$dir/slurm-%a.log" \
  --wrap "$E $args --shard \$SLURM_ARRAY_TASK_ID/$N > $dir/shard\$SLURM_ARRAY_TASK_ID.jsonl"
$E sweep merge "$dir"/shard*.jsonl > "$dir/merged.jsonl"
cmp "$dir/whole.jsonl" "$dir/merged.jsonl"
echo "sweep-slurm: a $N-task Slurm job array merges to the unsharded run ($(wc -l < "$dir/whole.jsonl") cells)"
