#!/usr/bin/env bash
# One case of the hostile-input suite: a command given an input meant to break it must end with the
# exit status the README's table gives (never 1, an internal error, nor a signal), print a message
# matching REGEX (it names the input at fault), and leave every file of its scratch folder as it was:
# nothing changed, nothing created, nothing removed, no temporary file left behind.
# Usage: run_case.sh NAME EXPECTED_EXIT REGEX SETUP COMMAND
#   NAME     the case (its scratch folder is $HOSTILE_SCRATCH/NAME, made afresh)
#   SETUP    bash run in the scratch folder first (makes the inputs); "" for none
#   COMMAND  bash run in the scratch folder, with $PT (the paratwin binary), $SRC (the source tree),
#            $EX (workloads/examples), $GOOD (tests/e2e/good) and $HERE (this folder) set
# Environment: PT, SRC, HOSTILE_SCRATCH. HOSTILE_SECONDS (default 120) bounds the command.
set -u
name=$1; expected=$2
regex=${3//<semicolon>/;}; setup=${4//<semicolon>/;}; command=${5//<semicolon>/;}
export EX=$SRC/workloads/examples GOOD=$SRC/tests/e2e/good HERE=$SRC/tests/hostile
dir=$HOSTILE_SCRATCH/$name
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir" || exit 1
if [[ -n $setup ]] && ! bash -c "$setup"; then
  echo "FAIL: the case's setup failed"; exit 1
fi
# What the folder holds (names, types, link targets, contents), to compare after the command.
snapshot() {
  find . -mindepth 1 -printf '%y %p %l\n' | LC_ALL=C sort
  find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum
}
before=$(snapshot)
out=$(timeout --signal=KILL "${HOSTILE_SECONDS:-120}" bash -c "$command" 2>&1)
code=$?
after=$(snapshot)
fail=0
if [[ $code -ne $expected ]]; then
  echo "FAIL: exit status $code, expected $expected"; fail=1
fi
if ! grep -Eq -- "$regex" <<<"$out"; then
  echo "FAIL: the output does not match /$regex/"; fail=1
fi
if [[ $before != "$after" ]]; then
  echo "FAIL: the command changed its folder:"; diff <(echo "$before") <(echo "$after"); fail=1
fi
echo "--- output (exit $code):"; echo "$out" | head -n 40
((fail)) && exit 1
echo "ok: exit $code, message matches, no file changed"
