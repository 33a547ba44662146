#!/usr/bin/env bash
# Installs every build, test and plotting dependency of paratwin from Debian's packages, the trace viewer
# the tests load traces with (Chrome DevTools' trace engine, from npm at the version pinned in
# tests/viewer/package-lock.json, into tests/viewer/node_modules) and the JSON Schema validator the schema
# tests run (Ajv, pinned in tests/schema/package-lock.json).
# Idempotent: packages already present are left as they are; apt-get update runs only when
# something is missing. CUDA, cuBLAS and NCCL are optional and are never installed here.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  libsimgrid-dev libboost-graph-dev nlohmann-json3-dev libcli11-dev
  libopenmpi-dev openmpi-bin libopenblas-dev zlib1g-dev
  libgtest-dev googletest
  clang libfuzzer-14-dev libclang-rt-14-dev clang-format universal-ctags
  gnuplot-nox
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js and npm for the trace viewer: Debian's, unless the machine already has both (a Node.js
# installed otherwise ships its own npm, which Debian's npm package conflicts with).
if ! command -v node > /dev/null || ! command -v npm > /dev/null; then
  for p in nodejs npm; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
fi

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all dependencies present"
fi

# The npm packages the tests run: exactly the locked versions, reinstalled only when the lock changed.
# npm_locked FOLDER WHAT
npm_locked() {
  local dir=$1 what=$2
  if ! cmp -s "$dir/package-lock.json" "$dir/node_modules/.package-lock.json.installed" 2> /dev/null; then
    echo "install-deps: installing $what ($dir) from npm"
    (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
    cp "$dir/package-lock.json" "$dir/node_modules/.package-lock.json.installed"
  else
    echo "install-deps: $what present"
  fi
}
tests="$(dirname "$0")/../tests"
npm_locked "$tests/viewer" "the trace viewer"
npm_locked "$tests/schema" "the JSON Schema validator"
