# shellcheck shell=bash
# Sourced by the bench scripts that simulate shapes made from shipped examples (todays_shapes.sh,
# fold_error.sh): their one way to check the shape names asked for and to derive a workload.

# check_shape_names "KNOWN..." NAME...: exits 2 naming the first NAME not among KNOWN (before any long run).
check_shape_names() {
  local known=$1 s
  shift
  for s in "$@"; do
    [[ " $known " == *" $s "* ]] || { echo "unknown shape: $s (shapes: $known)" >&2; exit 2; }
  done
}

# derive EXAMPLE OUT PYTHON: workloads/examples/EXAMPLE with PYTHON applied to its JSON `w`, written to OUT
# ($root, the repository, is the caller's).
derive() {
  python3 - "$root/workloads/examples/$1" "$2" "$3" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(w, open(sys.argv[2], "w"))
PY
}
