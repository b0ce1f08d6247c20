#!/usr/bin/env bash
# The C example's test: build/examples/ratelimit-example (hiredis) against a real redis-server with the
# module, its clock frozen, so every printed number is exact; compared line by line with the expected
# output. Prints "c-example: N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 2
bin=build/examples/ratelimit-example
passed=0 failed=0
check() { # check "what" expected actual
    if [ "$2" = "$3" ]; then passed=$((passed + 1)); else
        failed=$((failed + 1))
        printf 'FAIL c-example: %s\n--- expected\n%s\n--- got\n%s\n' "$1" "$2" "$3"
    fi
}
. scripts/lib/server.sh
trap server_stop EXIT
server_start --module-arg test-clock || exit 2
server_cli RL.CLOCK SET 1700000000000 >/dev/null

check "a burst of 5 on a bucket of 3" "request 1: 200, 2 of 3 tokens left, full again in 1000 ms
request 2: 200, 1 of 3 tokens left, full again in 2000 ms
request 3: 200, 0 of 3 tokens left, full again in 3000 ms
request 4: 429, retry in 1000 ms (Retry-After: 1)
request 5: 429, retry in 1000 ms (Retry-After: 1)" "$("$bin" 127.0.0.1 "$SERVER_PORT" 5)"

server_cli RL.CLOCK ADVANCE 1500 >/dev/null
check "1.5 s later: one token and a half" "request 1: 200, 0 of 3 tokens left, full again in 2500 ms
request 2: 429, retry in 500 ms (Retry-After: 1)" "$("$bin" 127.0.0.1 "$SERVER_PORT" 2)"

"$bin" 127.0.0.1 1 1 >/dev/null 2>&1
check "no server: exit status 1" 1 $?
echo "c-example: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
