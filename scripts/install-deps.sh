#!/usr/bin/env bash
# Installs every build, test and plotting dependency of paratwin from Debian's packages.
# Idempotent: packages already present are left as they are; apt-get update runs only when
# something is missing. CUDA, cuBLAS and NCCL are optional and are never installed here.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  libsimgrid-dev libboost-graph-dev nlohmann-json3-dev libcli11-dev
  libopenmpi-dev openmpi-bin libopenblas-dev
  libgtest-dev googletest
  clang libfuzzer-14-dev libclang-rt-14-dev clang-format
  gnuplot-nox
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all dependencies present"
fi
