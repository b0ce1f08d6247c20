# tests/lib/check.sh -- sourced, not executed: the shell tests' harness, as tests/check.h is the C
# programs'. Named checks, a FAIL line naming what failed, and the closing line "SUITE: N passed, N failed"
# that scripts/run-tests.sh reads.
#
#   CHECK_SUITE=run
#   . tests/lib/check.sh
#   check "what it checks" command...    counts a pass if the command succeeds, else a failure
#   check_abort "what went wrong"        counts a failure, prints the closing line, exits 1 (a test that
#                                        cannot go on, e.g. its fake server did not start)
#   check_summary                        prints the closing line; fails if anything failed or nothing passed
#   contains TEXT PART, lacks TEXT PART  whether TEXT holds PART (for check's commands)
#   transcript_each PREFIX FUNCTION < TRANSCRIPT
#                                        a session as the docs show one: each line starting with PREFIX is a
#                                        call (the rest of the line: its arguments), the lines after it its
#                                        expected output; calls FUNCTION ARGS EXPECTED for each call
# shellcheck shell=bash
: "${CHECK_SUITE:?set CHECK_SUITE to the suite name before sourcing tests/lib/check.sh}"
passed=0
failed=0

check() { # check "what" command...
    local what=$1
    shift
    if "$@"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAIL $CHECK_SUITE: $what" >&2
    fi
}

check_summary() {
    echo "$CHECK_SUITE: $passed passed, $failed failed"
    [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
}

check_abort() { # check_abort "what went wrong"
    failed=$((failed + 1))
    echo "FAIL $CHECK_SUITE: $1" >&2
    check_summary
    exit 1
}

contains() { [[ "$1" == *"$2"* ]]; }
lacks() { [[ "$1" != *"$2"* ]]; }

transcript_each() { # transcript_each PREFIX FUNCTION < TRANSCRIPT
    local prefix=$1 fn=$2 line args="" expected="" started=0
    while IFS= read -r line; do
        if [[ "$line" == "$prefix"* ]]; then
            [ "$started" -eq 0 ] || "$fn" "$args" "${expected%$'\n'}"
            started=1
            args=${line#"$prefix"}
            expected=""
        else
            expected+="$line"$'\n'
        fi
    done
    [ "$started" -eq 0 ] || "$fn" "$args" "${expected%$'\n'}"
}
