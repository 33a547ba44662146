#!/usr/bin/env bash
# The schema check can fail: a run summary whose iteration_s was renamed back to iteration_seconds (the name
# before schema version 1) does not validate. Usage: check_refuses.sh REPO_ROOT
set -u
root=$(realpath "$1")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
sed 's/"iteration_s"/"iteration_seconds"/' "$root/tests/schema/fixture/summary.json" > "$tmp/renamed.json"
node "$root/tests/schema/validate.mjs" "$root/schemas" run-summary.schema.json "$root/tests/schema/fixture/summary.json" ||
  { echo "FAIL: the fixture itself does not validate"; exit 1; }
if node "$root/tests/schema/validate.mjs" "$root/schemas" run-summary.schema.json "$tmp/renamed.json"; then
  echo "FAIL: a renamed key validated"
  exit 1
fi
echo "ok: a renamed key fails"
