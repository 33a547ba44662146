# The suite's own checks: run_case.sh must fail a case whose command changes a file of its folder, or
# exits 1 (an internal error). Each runs run_case.sh on such a command in a folder of its own and
# passes (exit 0) only when that inner case failed for the right reason.
hostile_case(framework_detects_changed_file 0 [=[FAIL: the command changed its folder]=] ""
  [=[d=$(mktemp -d); HOSTILE_SCRATCH=$d "$HERE/run_case.sh" inner 2 . 'echo a > in.json' 'echo b > in.json; exit 2'
     s=$?; rm -rf "$d"; [[ $s -eq 1 ]]]=])
hostile_case(framework_detects_internal_error 0 [=[FAIL: exit status 1, expected 2]=] ""
  [=[d=$(mktemp -d); HOSTILE_SCRATCH=$d "$HERE/run_case.sh" inner 2 . '' 'exit 1'
     s=$?; rm -rf "$d"; [[ $s -eq 1 ]]]=])
