# Search, sweep and validate given inputs that leave no result, a
# point that stops, and a report folder a partial run would overwrite.

# Nothing fits is a finished search without a result: exit 3 (as a sweep's "best" point that
# finds nothing fails), no --emit folder made; the message says what the least needs and what
# to change.
hostile_case(search_nothing_fits 3
  [=[no configuration of 1 GPU fits in memory: the smallest, .* needs [0-9.]+ GiB per GPU and a perlmutter device has [0-9.]+ GiB]=]
  ""
  [=[$PT search -w $EX/gpt-20b-perlmutter-32.json -m perlmutter --gpus 1 --simulate 0 --emit em/sub]=])
# Every configuration breaks a rule: the one broken most, with an example and what to change.
hostile_case(search_every_rule_broken 3
  [=[To change: the global batch 2048 must split evenly among the data-parallel replicas: --gpus 512 or --gpus 1024, or a training.global_batch that 1000 divides \(e.g. 2000\)]=]
  ""
  [=[$PT search -w $EX/gpt-10b-frontier-1024.json -m frontier --gpus 1000 --simulate 0 --emit em]=])

# A point whose process is stopped (SIGSTOP) is killed at --point-timeout and reported failed;
# the sweep ends with exit 3 instead of waiting forever. The outputs go to a folder of their own.
hostile_case(sweep_point_stopped 3
  [=[timed out: the point's process ran 4 s \(its timeout\) without a result, stopped \(SIGSTOP or a debugger\), and was killed]=]
  [=[printf '{"name": "one-point", "workloads": ["%s/gpt-20b-perlmutter-32.json"], "machines": ["perlmutter"], "gpus": [32], "scaling": "weak"}\n' "$EX" > spec.json]=]
  [=[out=$(mktemp -d)
     $PT sweep --spec spec.json --out "$out/s" --point-timeout 4 --jobs 1 --plots none 2>&1 &
     sweep=$!
     for _ in $(seq 300); do child=$(pgrep -P $sweep | head -n1); [[ -n $child ]] && break; sleep 0.05; done
     kill -STOP $child
     wait $sweep; code=$?
     grep -o 'timed out[^"]*' "$out/s/sweep.csv" | head -n1
     rm -rf "$out"; exit $code]=])

# A run of one suite over a folder that holds a report of more is refused before it predicts.
hostile_case(validate_partial_report 2
  [=[--out rep: holds a report of 2 suites, 1 of which \(selene-weak\) this run does not validate: it would replace the report with a partial one]=]
  [=[mkdir rep && printf 'suite,label\nselene-175b,a\nselene-weak,b\n' > rep/validation.csv && echo report > rep/README.md]=]
  [=[$PT validate --suite selene-175b --model analytical --plots none --out rep]=])
