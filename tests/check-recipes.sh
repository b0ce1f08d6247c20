#!/usr/bin/env bash
# check-recipes.sh -- every Python block of docs/recipes.md runs, as written, against a real redis-server with
# the module (test clock frozen at 1700000000000), each on a fresh server; their asserts are the checks.
# Uses Debian's python3 and python3-redis. Prints "recipes: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/server.sh
trap server_stop EXIT
python=/usr/bin/python3 # Debian's, which has python3-redis (a python3 earlier on PATH may not)
blocks=$(mktemp -d)
trap 'server_stop; rm -rf "$blocks"' EXIT
# Split the page's ```python blocks into numbered files.
awk -v dir="$blocks" '/^```python$/ { n++; f = sprintf("%s/%02d.py", dir, n); next }
                      /^```$/ { f = ""; next } f { print > f }' docs/recipes.md
pass=0 fail=0
for block in "$blocks"/*.py; do
    server_start --module-arg test-clock >/dev/null || { fail=$((fail + 1)); continue; }
    server_cli RL.CLOCK SET 1700000000000 >/dev/null
    # The blocks say redis.Redis(): point it at this server.
    if { printf 'import redis\n_r = redis.Redis\nredis.Redis = lambda *a, **k: _r(port=%s)\n' "$SERVER_PORT"
         cat "$block"; } | "$python" - 2>"$blocks/err"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL docs/recipes.md python block $(basename "$block" .py):" >&2
        cat "$blocks/err" >&2
    fi
    server_stop
done
[ "$pass" -gt 0 ] || fail=$((fail + 1)) # no block ran: the page or the extraction is broken
echo "recipes: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
