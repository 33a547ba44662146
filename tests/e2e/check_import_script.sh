#!/usr/bin/env bash
# `paratwin import megatron --script`: launch scripts in the forms of Megatron-LM's current examples
# (tests/e2e/megatron/scripts/) import as they stand and simulate on DGX H100; other models are
# refused by name; a script that stops early says what it printed; the script is never overwritten.
# Usage: check_import_script.sh PARATWIN SCRIPTS_DIR OUT_DIR
set -u
pt=$1; scripts=$2; out=$3
mkdir -p "$out"
fail() { echo "FAIL: $*"; exit 1; }

import() {  # NAME SCRIPT [OPTIONS...]: imports into OUT/NAME.json, stderr in OUT/NAME.stderr
  local name=$1 script=$2; shift 2
  rm -f "$out/$name.json"
  "$pt" import megatron --machine dgx-h100 --out "$out/$name.json" --script "$scripts/$script" "$@" \
    2>"$out/$name.stderr"
}
expect_import() {  # NAME SCRIPT PATTERN [OPTIONS...]
  local name=$1 script=$2 pattern=$3; shift 3
  import "$name" "$script" "$@" || { cat "$out/$name.stderr"; fail "$script did not import"; }
  grep -Eq "$pattern" "$out/$name.stderr" || { cat "$out/$name.stderr"; fail "$script: no '$pattern'"; }
  "$pt" simulate --workload "$out/$name.json" --machine dgx-h100 >"$out/$name.simulate" 2>&1 ||
    { cat "$out/$name.simulate"; fail "$name does not simulate"; }
  grep -q "MFU" "$out/$name.simulate" || fail "$name: no MFU"
  echo "ok: $name: $(grep -Eo '[0-9.]+ B parameters[^;]*$' "$out/$name.stderr")"
}

expect_import llama3-fp8 llama3_8b_fp8.sh "8 ranks, d=8 zero=1 .*vocab 128256; 8.03 B parameters"
grep -q '"fp8": "delayed"' "$out/llama3-fp8.json" || fail "llama3-fp8: not fp8"
expect_import llama3-mfsdp llama3_8b_megatron_fsdp.sh "d=8 zero=3 .*8.03 B parameters"
grep -q '"profile": "megatron-fsdp"' "$out/llama3-mfsdp.json" || fail "llama3-mfsdp: not on megatron-fsdp"
grep -q '"gradient_accumulation_fusion": false' "$out/llama3-mfsdp.json" || fail "llama3-mfsdp: fusion"
# The node count from the launcher's environment, as the script reads it.
SLURM_NNODES=4 expect_import mixtral mixtral_8x7b.sh "32 ranks, e=8 p=4 .*46.7 B parameters \(12.9 B active per token\)"
grep -q "given without a value.*--tokenizer-model, --data-path" "$out/mixtral.stderr" || fail "mixtral: empty values"
# Without it the script launches one node, too few for its layout: the error says what to give.
import mixtral-one-node mixtral_8x7b.sh && fail "mixtral on one node imported"
grep -q "give the run's size with paratwin's --world-size N" "$out/mixtral-one-node.stderr" || fail "no hint"

# A job script submitted through sbatch's standard input, the command run by `srun bash -c`; srun
# carries no world size: --world-size gives it.
expect_import sbatch sbatch_heredoc.sh "16 ranks, t=2 sp p=2 d=4" --world-size 16

import bert bert.sh && fail "BERT imported"
grep -q "pretrain_bert.py: trains BERT" "$out/bert.stderr" || { cat "$out/bert.stderr"; fail "BERT not named"; }
import early stops_early.sh && fail "a script that launches nothing imported"
grep -q "launched no training command.*status 1, printing: Error: Checkpoint path does not exist" "$out/early.stderr" ||
  { cat "$out/early.stderr"; fail "no output of the script"; }
[ -e "$out/early.json" ] && fail "a refused import wrote its output"

# The output never replaces the script.
cp "$scripts/bert.sh" "$out/copy.sh"
"$pt" import megatron --out "$out/copy.sh" --script "$out/copy.sh" 2>"$out/same.stderr"; rc=$?
[ $rc -eq 2 ] || fail "--out = --script exited $rc"
cmp -s "$scripts/bert.sh" "$out/copy.sh" || fail "the script was overwritten"
echo "ok: launch scripts"
