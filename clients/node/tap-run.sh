# clients/node/tap-run.sh -- sourced by the Node test scripts (run-tests.sh, run-resilience.sh,
# run-cluster-tests.sh): run test files with node's built-in runner and turn its TAP output into the
# project's lines, a "FAIL name: not ok ..." per failed test and the closing "name: N passed, N failed".
#
#   tap_run NAME FILE...     (the caller's environment reaches the tests: VAR=value tap_run ...)
#
# The files run one after another (--test-concurrency=1): they share servers and clocks. Returns the
# runner's status; on a failure the runner's last 60 lines follow, for the diagnosis.
# shellcheck shell=bash

tap_run() {
    local name=$1 out rc pass fail
    shift
    out=$(node --test --test-concurrency=1 --test-reporter=tap "$@" 2>&1)
    rc=$?
    printf '%s\n' "$out" | grep -E '^(not ok|# (tests|pass|fail))' | sed "s/^not ok/FAIL $name: not ok/"
    [ $rc -eq 0 ] || printf '%s\n' "$out" | tail -n 60
    pass=$(sed -n 's/^# pass //p' <<<"$out" | tail -n 1)
    fail=$(sed -n 's/^# fail //p' <<<"$out" | tail -n 1)
    echo "$name: ${pass:-0} passed, ${fail:-1} failed"
    return $rc
}
