#!/usr/bin/env bash
# `luwusim sweep --slurm` through a real single-node Slurm (Debian's slurm-wlm and munge, started
# here in a temporary folder on private ports): the merged results must be byte-identical to the
# same sweep run locally.  Exit 77 (CTest: skipped) with the reason where this machine cannot start
# Slurm.  Usage: slurm_sweep_test.sh LUWUSIM_BINARY REPO
set -uo pipefail
luwusim=$1
repo=$2
skip() { echo "SKIPPED: $*"; exit 77; }

[ "$(id -u)" -eq 0 ] || skip "slurmd must run as root to start jobs; this test runs as $(id -un)"
for tool in munged slurmctld slurmd sbatch squeue sinfo scancel; do
  command -v "$tool" >/dev/null 2>&1 || [ -x "/usr/sbin/$tool" ] || skip "$tool is not installed (Debian: apt-get install slurm-wlm munge)"
done
PATH=$PATH:/usr/sbin

dir=$(mktemp -d /tmp/luwusim-slurm.XXXXXX)
chmod 700 "$dir"
mkdir -p "$dir/spool" "$dir/state" "$dir/run" "$dir/log"
cleanup() {
  scancel --quiet --user=root >/dev/null 2>&1 || true
  for pid in "$dir/run/slurmd.pid" "$dir/run/slurmctld.pid"; do [ -f "$pid" ] && kill "$(cat "$pid")" 2>/dev/null; done
  munged --stop --socket="$dir/run/munge.sock" >/dev/null 2>&1 || true
  sleep 1
  rm -rf "$dir"
}
trap cleanup EXIT

# munge: a key of our own and a daemon on our own socket.
dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 2>/dev/null && chmod 400 "$dir/munge.key"
munged --force --socket="$dir/run/munge.sock" --key-file="$dir/munge.key" --log-file="$dir/log/munged.log" \
  --pid-file="$dir/run/munged.pid" --seed-file="$dir/run/munged.seed" >/dev/null 2>&1 ||
  skip "munged did not start: $(tail -n 3 "$dir/log/munged.log" 2>/dev/null)"

host=$(hostname -s)
port=$((20000 + $$ % 20000))
cat >"$dir/slurm.conf" <<CONF
ClusterName=luwusim-test
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/run/munge.sock
SlurmctldPort=$port
SlurmdPort=$((port + 1))
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SwitchType=switch/none
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$dir/slurm.conf
slurmctld -c >/dev/null 2>&1 || skip "slurmctld did not start: $(tail -n 3 "$dir/log/slurmctld.log" 2>/dev/null)"
slurmd >/dev/null 2>&1 || skip "slurmd did not start: $(tail -n 3 "$dir/log/slurmd.log" 2>/dev/null)"
for _ in $(seq 60); do
  [ "$(sinfo -h -o %t 2>/dev/null)" = "idle" ] && break
  sleep 0.5
done
[ "$(sinfo -h -o %t 2>/dev/null)" = "idle" ] ||
  skip "the Slurm node did not become idle: $(tail -n 3 "$dir/log/slurmd.log" "$dir/log/slurmctld.log" 2>/dev/null)"

# The sweep: 4 points in 3 shards through Slurm, and the same sweep here.
sweep=("$repo/scenarios/small-zero3-vs-ddp.json" --set cluster.workers=2,4 --set model=gpt3-125m,gpt3-350m
       --set training.seq_len=256)
submitted=$("$luwusim" sweep "${sweep[@]}" -o "$dir/results.jsonl" --csv "$dir/results.csv" --slurm 3 --jobs 1) || {
  echo "FAILED: luwusim sweep --slurm exited $?"; exit 1; }
echo "$submitted"
merge_job=$(echo "$submitted" | sed -n 's/.*merge job \([0-9]*\).*/\1/p')
[ -n "$merge_job" ] || { echo "FAILED: no merge job id in: $submitted"; exit 1; }
for _ in $(seq 480); do
  [ -z "$(squeue -h -j "$merge_job" 2>/dev/null)" ] && break
  sleep 0.5
done
if [ ! -s "$dir/results.jsonl" ]; then
  echo "FAILED: the merge job left no results"; tail -n 20 "$dir"/results.jsonl.slurm/*.log; exit 1
fi
"$luwusim" sweep "${sweep[@]}" -o "$dir/local.jsonl" --jobs 2 2>/dev/null &&
  "$luwusim" sweep-export "$dir/local.jsonl" --jsonl "$dir/local-merged.jsonl" || { echo "FAILED: the local sweep"; exit 1; }
if ! cmp -s "$dir/results.jsonl" "$dir/local-merged.jsonl"; then
  echo "FAILED: Slurm's merged results differ from the local run"; diff "$dir/results.jsonl" "$dir/local-merged.jsonl" | head
  exit 1
fi
[ "$(wc -l <"$dir/results.jsonl")" -eq 4 ] || { echo "FAILED: expected 4 points"; exit 1; }
[ "$(wc -l <"$dir/results.csv")" -eq 9 ] || { echo "FAILED: expected a header and 8 CSV rows"; exit 1; }
echo "OK: 4 points through Slurm, identical to the local run"
