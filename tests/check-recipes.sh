#!/usr/bin/env bash
# check-recipes.sh -- docs/recipes.md stays true: every recipe's redis-cli session and Python block run, as
# written, against a real redis-server with the module (test clock set to 1700000000000 before each block).
# Each recipe (a "## " section) runs twice, each time on a fresh server: its redis-cli session first and
# then its Python block, then the other way round. So a block that reuses the other's keys (and finds a
# limiter already spent) fails, whichever order a reader follows.
#
# A session is the page's indented "    > ARGS" lines, each followed by the reply redis-cli prints; a "  #
# ..." comment at the end of a line is not part of it. Every reply must be exactly the one shown. A call
# with WAIT that blocks is answered when the clock moves: the test moves it 1 ms at a time until the call
# is answered, as another client would. The Python blocks' asserts are their checks.
# Uses Debian's python3 and python3-redis. Prints "recipes: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=scripts/lib/server.sh
. scripts/lib/server.sh
python=/usr/bin/python3 # Debian's, which has python3-redis (a python3 earlier on PATH may not)
work=$(mktemp -d)
trap 'server_stop; rm -rf "$work"' EXIT
start_ms=1700000000000

CHECK_SUITE=recipes
# shellcheck source=tests/lib/check.sh
. tests/lib/check.sh

# Split the page: recipe N's session into NN.cli ("> ARGS" and reply lines, comments dropped), its
# ```python blocks into NN.py, its title into NN.title.
awk -v dir="$work" '
    /^## / { n++; f = ""; printf "%s\n", substr($0, 4) > sprintf("%s/%02d.title", dir, n); next }
    /^```python$/ { f = sprintf("%s/%02d.py", dir, n); next }
    /^```$/ { f = ""; next }
    f { print > f; next }
    n && /^    / { line = substr($0, 5); sub(/[[:space:]]+#.*$/, "", line); print line > sprintf("%s/%02d.cli", dir, n) }
' docs/recipes.md

cli() { "$REDIS_CLI" --no-raw -p "$SERVER_PORT" "$@" 2>&1; }
blocked() { cli INFO clients | tr -d '\r' | sed -n 's/^blocked_clients://p'; }

# run_call ARGS...: the reply of one session call. A call with WAIT runs in the background; while it
# is held, the test clock moves 1 ms at a time (at most 10 minutes of it).
run_call() {
    local bg out=$work/reply step
    case " $* " in *" WAIT "*) ;; *) cli "$@"; return ;; esac
    cli "$@" >"$out" &
    bg=$!
    for step in $(seq 50); do # until it is held, or answered at once
        [ "$(blocked)" = 0 ] || break
        kill -0 "$bg" 2>/dev/null || break
        sleep 0.1
    done
    step=0
    while kill -0 "$bg" 2>/dev/null && [ "$(blocked)" != 0 ] && [ "$step" -lt 600000 ]; do
        cli RL.CLOCK ADVANCE 1 >/dev/null
        step=$((step + 1))
    done
    wait "$bg"
    cat "$out"
}

# run_session N: every call of recipe N's session, each reply compared with the page's.
run_session() {
    local n=$1 ncalls=0 title
    title=$(cat "$work/$n.title")
    cli RL.CLOCK SET "$start_ms" >/dev/null
    # shellcheck disable=SC2317 # called by transcript_each
    compare() { # compare ARGS EXPECTED
        local args=$1 expected=$2 words got
        read -ra words <<<"$args"
        got=$(run_call "${words[@]}")
        check "\"$title\": > $args prints what docs/recipes.md shows (got: $(tr '\n' ' ' <<<"$got"))" \
            test "$got" = "$expected"
        ncalls=$((ncalls + 1))
    }
    transcript_each '> ' compare <"$work/$n.cli"
    check "\"$title\" has a redis-cli session" test "$ncalls" -gt 0
}

# run_python N: recipe N's Python block, with redis.Redis() pointed at this server.
run_python() {
    local n=$1 title
    title=$(cat "$work/$n.title")
    cli RL.CLOCK SET "$start_ms" >/dev/null
    if ! { printf 'import redis\n_r = redis.Redis\nredis.Redis = lambda *a, **k: _r(port=%s)\n' "$SERVER_PORT"
           cat "$work/$n.py"; } | "$python" - 2>"$work/err"; then
        cat "$work/err" >&2
        check "\"$title\": its Python block runs (its error above)" false
        return
    fi
    check "\"$title\": its Python block runs" true
}

recipes=0
for title in "$work"/*.title; do
    n=$(basename "$title" .title)
    if [ ! -f "$work/$n.cli" ] || [ ! -f "$work/$n.py" ]; then
        check "\"$(cat "$title")\" has both a redis-cli session and a Python block" false
        continue
    fi
    recipes=$((recipes + 1))
    for order in "run_session run_python" "run_python run_session"; do
        server_start --module-arg test-clock >/dev/null || { check "start a server" false; continue; }
        for step in $order; do "$step" "$n"; done
        server_stop
    done
done
check "docs/recipes.md has recipes (found $recipes)" test "$recipes" -gt 0
check_summary
