#!/usr/bin/env bash
# End-to-end checks of `paratwin sweep`. Usage: check_sweep.sh MODE PARATWIN SPEC
#   mpi      `mpirun -np 2 paratwin sweep` writes the same CSV and JSON, byte for byte, as one process,
#            and both ranks computed points (the journal records who computed each)
#   resume   a sweep killed with SIGKILL after 5 journaled points, then rerun, skips those 5, computes
#            only the rest and writes the same CSV and JSON as a clean run; a third run computes nothing;
#            the clean run drew both plots
#   failing  points that cannot run are rows with status "failed" and their reason, the others complete,
#            and the exit status is 3
#   defaults  a spec without "fidelity" runs each point at simulate's automatic
#            fidelity (exact up to 64 GPUs, folded above 512), says so on stderr as each point starts
#            (not with --no-progress), and its scaling plot has an ideal line per curve
#   mpi-stopped rank 0 of `mpirun -np 2 paratwin sweep` stopped (SIGSTOP) mid-sweep: the
#            worker notices within its limit and ends the job, exit status 4, naming rank 0
set -u
mode=$1; paratwin=$2; spec=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; for f in "$dir"/*.out; do echo "--- $f"; cat "$f"; done; exit 1; }

# sweep NAME ARGS...: runs `paratwin sweep --spec SPEC --out DIR/NAME ARGS...`; output in DIR/NAME.out, exit status in $status.
sweep() {
  local name=$1; shift
  "$paratwin" sweep --spec "$spec" --out "$dir/$name" "$@" >"$dir/$name.out" 2>&1
  status=$?
}
same_outputs() {
  for f in sweep.csv sweep.json; do
    cmp -s "$dir/$1/$f" "$dir/$2/$f" || { diff "$dir/$1/$f" "$dir/$2/$f" | head -20; fail "$1/$f and $2/$f differ"; }
  done
}
lines() { wc -l <"$1" | tr -d ' '; }

case $mode in
  mpi)
    command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
    sweep serial --jobs 2
    [[ $status -eq 0 ]] || fail "serial run exited $status"
    mpirun --oversubscribe -np 2 "$paratwin" sweep --spec "$spec" --out "$dir/mpi" --jobs 1 >"$dir/mpi.out" 2>&1
    status=$?
    [[ $status -eq 0 ]] || fail "mpirun run exited $status"
    same_outputs serial mpi
    for rank in 0 1; do
      grep -q "\"rank\":$rank," "$dir/mpi/journal.jsonl" || fail "rank $rank computed no point"
    done
    echo "ok: mpirun -np 2 and one process wrote byte-identical CSV and JSON ($(($(lines "$dir/mpi/sweep.csv") - 1)) points)"
    ;;
  resume)
    sweep clean --jobs 2
    [[ $status -eq 0 ]] || fail "clean run exited $status"
    total=$(($(lines "$dir/clean/sweep.csv") - 1))
    if command -v gnuplot >/dev/null; then
      for plot in scaling breakdown; do
        grep -q "<svg" "$dir/clean/$plot.svg" 2>/dev/null || fail "the clean run drew no $plot.svg"
      done
    fi
    PARATWIN_SWEEP_ABORT_AFTER=5 sweep resumed --jobs 2
    [[ $status -eq 137 ]] || fail "the aborted run exited $status, expected 137 (SIGKILL)"
    [[ ! -e $dir/resumed/sweep.csv ]] || fail "the aborted run wrote sweep.csv"
    [[ $(lines "$dir/resumed/journal.jsonl") -eq 5 ]] || fail "the aborted run journaled $(lines "$dir/resumed/journal.jsonl") points, not 5"
    sweep resumed --jobs 2
    [[ $status -eq 0 ]] || fail "the rerun exited $status"
    grep -q "$total points: 5 skipped .*, $((total - 5)) computed, 0 failed" "$dir/resumed.out" ||
      fail "the rerun did not skip 5 and compute $((total - 5))"
    [[ $(lines "$dir/resumed/journal.jsonl") -eq $total ]] || fail "the journal has $(lines "$dir/resumed/journal.jsonl") lines, not $total"
    same_outputs clean resumed
    sweep resumed --jobs 2
    grep -q "$total points: $total skipped .*, 0 computed" "$dir/resumed.out" || fail "a third run computed points"
    same_outputs clean resumed
    echo "ok: killed after 5 of $total points, the rerun skipped 5, computed $((total - 5)) and matched a clean run"
    ;;
  failing)
    sweep failing
    [[ $status -eq 3 ]] || fail "exit status $status, expected 3 (some points failed)"
    csv=$dir/failing/sweep.csv
    grep -q '^tiny-dp,localhost,8,.*,failed,gpus = 8 exceeds localhost.s 4 devices$' "$csv" || fail "no row for 8 GPUs on localhost"
    grep -q '^\.\./bad/x-does-not-divide\.json,localhost,2,.*,failed,.*x-does-not-divide\.json: parallelism\.tensor\.x = 3 does not divide model\.hidden = 4096$' "$csv" ||
      fail "no row for the invalid workload"
    [[ $(grep -c ',ok,$' "$csv") -eq 2 ]] || fail "expected 2 points to complete"
    grep -q '"failed": 4' "$dir/failing/sweep.json" || fail "sweep.json does not count 4 failed points"
    grep -q "6 points: 0 skipped .*, 6 computed, 4 failed" "$dir/failing.out" || fail "the summary does not count them"
    echo "ok: 4 failing points reported with their reasons, 2 completed, exit status 3"
    ;;
  defaults)
    sweep defaults --jobs 1
    [[ $status -eq 0 ]] || fail "exit status $status"
    out=$dir/defaults.out
    grep -Eq "starting point 1 of [0-9]+: .*, 2 GPUs, simulate: exact fidelity \(auto: up to 64 ranks\); timeout 610 s" "$out" ||
      fail "no start line at exact fidelity for 2 GPUs"
    grep -Eq "starting point [0-9]+ of [0-9]+: .*, 1024 GPUs, simulate: fast fidelity, folded \(auto: above 512 ranks\)" "$out" ||
      fail "no start line at fast, folded fidelity for 1024 GPUs"
    grep -q '"fidelity": "auto"' "$dir/defaults/sweep.json" || fail "sweep.json does not say fidelity auto"
    if command -v gnuplot >/dev/null; then
      [[ $(grep -c 'with lines dashtype 2' "$dir/defaults/plots.gp") -eq 2 ]] || fail "plots.gp draws no ideal line in both panels"
      grep -q "title 'ideal scaling" "$dir/defaults/plots.gp" || fail "the ideal line has no title"
    fi
    sweep quiet --jobs 1 --no-progress --plots none
    [[ $status -eq 0 ]] || fail "--no-progress run exited $status"
    ! grep -q "starting point\|\[1/" "$dir/quiet.out" || fail "--no-progress printed progress"
    echo "ok: automatic fidelity per point, start lines on stderr, ideal scaling lines"
    ;;
  mpi-stopped)
    command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
    mpirun --oversubscribe -np 2 "$paratwin" sweep --spec "$spec" --out "$dir/mpi" --jobs 1 --point-timeout 5 \
      --plots none >"$dir/mpi.out" 2>&1 &
    job=$!
    root=""
    for _ in $(seq 600); do
      # Rank 0: the sweep process whose environment says so, not one of its point children (they
      # inherit it; their parent is paratwin).
      for pid in $(pgrep -f "$paratwin sweep"); do
        tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=0" || continue
        parent=$(awk '/^PPid:/ {print $2}' "/proc/$pid/status" 2>/dev/null)
        [[ $(cat "/proc/$parent/comm" 2>/dev/null) == paratwin ]] || root=$pid
      done
      [[ -n $root ]] && grep -q "starting point" "$dir/mpi.out" && break
      sleep 0.05
    done
    [[ -n $root ]] || { kill -KILL $job; fail "rank 0 never started"; }
    kill -STOP "$root"
    started=$SECONDS
    while kill -0 $job 2>/dev/null && ((SECONDS - started < 60)); do sleep 0.2; done
    if kill -0 $job 2>/dev/null; then
      kill -CONT "$root"; kill -KILL "$root" $job; fail "the job still runs 60 s after rank 0 was stopped"
    fi
    wait $job; status=$?
    kill -KILL "$root" 2>/dev/null
    [[ $status -eq 4 ]] || fail "exit status $status, expected 4"
    grep -Eq "error \(MPI rank 1\): rank 0 made no progress for [0-9.]+ s" "$dir/mpi.out" || fail "no message naming rank 0"
    echo "ok: rank 0 stopped, the job ended in $((SECONDS - started)) s with exit status 4"
    ;;
  *) echo "usage: $0 mpi|resume|failing|defaults|mpi-stopped PARATWIN SPEC" >&2; exit 2 ;;
esac
