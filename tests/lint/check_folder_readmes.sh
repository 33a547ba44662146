#!/usr/bin/env bash
# Usage: check_folder_readmes.sh ROOT FOLDER...
# Fails (exit 1) naming every source file of a FOLDER (under ROOT; the folder's own files, not its
# subfolders') that the folder's README.md does not name, and every FOLDER without a README.md: the
# folder READMEs list every file, so that a maintainer finds a concern from the README (CONTRIBUTING.md).
# A file is named when the README holds its stem followed by a dot ("trace_writer.hpp/.cpp" names both).
set -euo pipefail
root=$1
shift
cd "$root"
missing=0
for folder in "$@"; do
  if [[ ! -f $folder/README.md ]]; then
    echo "$folder/README.md: missing (every folder lists its files)"
    missing=$((missing + 1))
    continue
  fi
  for file in "$folder"/*.cpp "$folder"/*.hpp "$folder"/*.cu "$folder"/*.in "$folder"/*.sh; do
    [[ -e $file ]] || continue
    name=${file##*/}
    if ! grep -qF "${name%%.*}." "$folder/README.md"; then
      echo "$file: not named in $folder/README.md"
      missing=$((missing + 1))
    fi
  done
done
if ((missing)); then
  echo "check_folder_readmes: $missing files or READMEs missing"
  exit 1
fi
echo "check_folder_readmes: every file of $# folders is named in its README"
