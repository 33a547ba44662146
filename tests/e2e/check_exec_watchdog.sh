#!/usr/bin/env bash
# A rank frozen mid-run must not hang `mpirun paratwin exec`: SIGSTOP rank 1 of a 2-rank job with a
# short --timeout, and check that the job ends within a bound, with exit status 4, and that the
# message names the waiting rank and the op (name, index, kind, the ranks it waits for).
# Usage: check_exec_watchdog.sh PARATWIN WORKLOAD MPIRUN [MPIRUN ARGUMENTS...]
set -u
paratwin=$1 workload=$2
shift 2
timeout_s=3
bound_s=60 # start-up, the timeout, the watchdog's check and mpirun's teardown, on a loaded host
work=$(mktemp -d)
job="" stopped=""
cleanup() {
  # The frozen rank must not outlive the test, whatever happened.
  [[ -n $stopped ]] && { kill -CONT "$stopped" 2>/dev/null; kill -KILL "$stopped" 2>/dev/null; }
  [[ -n $job ]] && kill -KILL "$job" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

# The process of MPI rank $1 among the descendants of process $2.
rank_process() {
  local want=$1 root=$2 pid ancestor
  for pid in $(pgrep -f "$paratwin exec"); do
    tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$want" || continue
    ancestor=$pid
    while [[ -n $ancestor && $ancestor -gt 1 && $ancestor -ne $root ]]; do
      ancestor=$(awk '/^PPid:/ {print $2}' "/proc/$ancestor/status" 2>/dev/null)
    done
    [[ $ancestor == "$root" ]] && { echo "$pid"; return 0; }
  done
  return 1
}

# One job, rank 1 stopped `$1` seconds after it appeared. Returns 0 when the job ended as it must, 2
# when rank 0 waited outside an op (rank 1 was stopped in its set-up or between iterations: again), else 1.
attempt() {
  local delay=$1 rank1="" code took out
  "${launcher[@]}" -np 2 "$paratwin" exec --workload "$workload" --iterations 100000 --warmup 0 \
    --timeout "$timeout_s" >"$work/out" 2>&1 &
  job=$!
  for _ in $(seq 200); do
    rank1=$(rank_process 1 "$job") && break
    sleep 0.1
  done
  [[ -n $rank1 ]] || { echo "FAIL: rank 1 of the job never started"; cat "$work/out"; return 1; }
  sleep "$delay"
  stopped=$rank1
  kill -STOP "$rank1"
  local started=$SECONDS
  while kill -0 "$job" 2>/dev/null && ((SECONDS - started < bound_s)); do sleep 0.2; done
  if kill -0 "$job" 2>/dev/null; then
    echo "FAIL: the job still runs ${bound_s} s after rank 1 was stopped (--timeout $timeout_s)"
    cat "$work/out"
    return 1
  fi
  wait "$job"
  code=$?
  job=""
  took=$((SECONDS - started))
  out=$(cat "$work/out")
  # mpirun ends every rank when one aborts, the stopped one included.
  for _ in $(seq 50); do
    [[ -d /proc/$rank1 && $(awk '/^State:/ {print $2}' "/proc/$rank1/status" 2>/dev/null) != Z ]] || break
    sleep 0.1
  done
  if [[ -d /proc/$rank1 && $(awk '/^State:/ {print $2}' "/proc/$rank1/status" 2>/dev/null) != Z ]]; then
    echo "FAIL: the stopped rank (pid $rank1) outlived the job"; echo "$out"; return 1
  fi
  stopped=""
  if [[ $code -ne 4 ]]; then
    echo "FAIL: exit status $code, expected 4"; echo "$out"; return 1
  fi
  local want="rank 0 made no progress for [0-9.]+ s \\(--timeout $timeout_s\\) in (warm-up|measured) iteration [0-9]+ of [0-9]+, waiting on op [0-9]+ \"[^\"]+\" \\([a-z_]+, .*\\) with ranks? [0-9]"
  if ! grep -Eq -- "$want" <<<"$out"; then
    # Stopped before the iterations, or between two (rank 0 then waits in the barrier, not on an op).
    if grep -Eq -- "rank 0 made no progress .* in (loading|prepare|the barrier that starts)" <<<"$out"; then
      echo "rank 1 was stopped outside an iteration (after ${delay} s): $(grep -E -- "no progress" <<<"$out")"
      return 2
    fi
    echo "FAIL: the message does not name rank 0 and the op it waits on: /$want/"; echo "$out"; return 1
  fi
  echo "ok: exit 4 ${took} s after rank 1 was stopped: $(grep -E -- "$want" <<<"$out" | head -1)"
  return 0
}

launcher=("$@")
for delay in 2 4 6; do
  attempt "$delay"
  result=$?
  [[ $result -eq 2 ]] || exit "$result"
done
echo "FAIL: three times rank 1 was stopped outside an iteration"
exit 1
