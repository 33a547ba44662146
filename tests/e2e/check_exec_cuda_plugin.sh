#!/usr/bin/env bash
# The GPU backend is a plugin beside paratwin, loaded only for `--backend cuda`: paratwin itself links
# no CUDA library, `--backend cuda` reaches the plugin (which, without a GPU, fails cleanly: exit 4,
# no CUDA device), and a plugin that is missing or does not load ends the job with exit 4 and names
# the file.
# Usage: check_exec_cuda_plugin.sh PARATWIN WORKLOAD MPIRUN [MPIRUN ARGUMENTS...]   (a 2-rank workload)
set -u
paratwin=$1 workload=$2
shift 2
launcher=("$@")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
fail() { echo "FAIL: $*"; failed=1; }

cuda_libraries=$(ldd "$paratwin" | grep -E 'lib(cudart|cublas|cublasLt|nccl|cuda)\.so') &&
  fail "paratwin links CUDA libraries: $cuda_libraries"
plugin=$(dirname "$paratwin")/libparatwin_cuda.so
[[ -f $plugin ]] || fail "no plugin beside paratwin: $plugin"

# Runs the job with --backend cuda (and PARATWIN_CUDA_PLUGIN=$1 when given); sets code and out.
run_cuda() {
  local env=()
  [[ -n ${1:-} ]] && env=(-x "PARATWIN_CUDA_PLUGIN=$1")
  out=$("${launcher[@]}" "${env[@]}" -np 2 "$paratwin" exec --workload "$workload" --iterations 1 --backend cuda 2>&1)
  code=$?
}

run_cuda
if [[ $code -eq 0 ]]; then
  echo "ran on a GPU: $(head -1 <<<"$out")"
elif [[ $code -ne 4 ]] || ! grep -Eq "rank [01], prepare: device: no CUDA device: " <<<"$out"; then
  fail "--backend cuda without a GPU: exit $code, expected 4 and 'no CUDA device' from the plugin"
  echo "$out"
fi

run_cuda "$work/missing/libparatwin_cuda.so"
if [[ $code -ne 4 ]] || ! grep -Fq "the cuda backend's plugin $work/missing/libparatwin_cuda.so does not exist" <<<"$out"
then
  fail "a missing plugin: exit $code, expected 4 and the file named"
  echo "$out"
fi

echo "not a shared object" >"$work/broken.so"
run_cuda "$work/broken.so"
if [[ $code -ne 4 ]] || ! grep -Eq "cannot load the cuda backend's plugin $work/broken.so: .+" <<<"$out"; then
  fail "a plugin that does not load: exit $code, expected 4, the file and dlerror's reason"
  echo "$out"
fi

[[ $failed -eq 0 ]] && echo "ok: paratwin links no CUDA library; --backend cuda loads $plugin; load failures exit 4"
exit $failed
