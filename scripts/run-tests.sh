#!/usr/bin/env bash
# Run each test program, add up the "suite: N passed, N failed" lines they print, and end with one
# closing line "N passed, N failed". Exits non-zero if any check failed or any program did not finish
# cleanly (a crash, a sanitizer report, a missing closing line).
#
#   scripts/run-tests.sh [--servers "NAME..."] PROGRAM... [--each-server PROGRAM...]
#
# The programs before --each-server run once (unit tests, fuzzers: no server). Those after it run once
# per server NAME (scripts/servers.sh names them: redis-7.0 is the system's, the others are built in
# build/servers/), each time with REDIS_SERVER and REDIS_CLI set to that server's binaries and its
# directory first in PATH, so whatever starts a redis-server or runs redis-cli gets that one. Before the
# closing line comes one "NAME: N passed, N failed" line per server, after "once: ..." for the programs
# run once. Without --servers all run once, with the server the environment gives (REDIS_SERVER or PATH).
set -u
here=$(cd "$(dirname "$0")" && pwd)
servers=""
if [ "${1:-}" = --servers ]; then
    servers=${2:-}
    shift 2 || shift $#
fi
once=()
each=()
seen_each=0
for a in "$@"; do
    if [ "$a" = --each-server ]; then seen_each=1; continue; fi
    if [ "$seen_each" -eq 1 ]; then each+=("$a"); else once+=("$a"); fi
done

total_pass=0
total_fail=0
broken=()
# run_one LABEL PROGRAM: run it, print its FAIL lines (or its last 40 lines if it broke) and one line with
# its summary; sets run_pass and run_fail (a program that broke counts at least one failure).
run_one() {
    local label=$1 t=$2 out rc summary start=$SECONDS
    out=$("$t" 2>&1)
    rc=$?
    summary=$(printf '%s\n' "$out" | grep -E '^[A-Za-z0-9_./-]+: [0-9]+ passed, [0-9]+ failed$' | tail -n 1)
    run_pass=0
    run_fail=0
    if [ -n "$summary" ]; then
        run_pass=$(sed -E 's/.*: ([0-9]+) passed.*/\1/' <<<"$summary")
        run_fail=$(sed -E 's/.* ([0-9]+) failed$/\1/' <<<"$summary")
    fi
    if [ $rc -ne 0 ] || [ -z "$summary" ]; then
        broken+=("$label$t (exit $rc)")
        [ "$run_fail" -gt 0 ] || run_fail=1
        printf '%s\n' "$out" | tail -n 40
    else
        printf '%s\n' "$out" | grep -E '^FAIL' || true
    fi
    echo "$label$t: ${summary:-no closing line} (exit $rc, $((SECONDS - start)) s)"
    total_pass=$((total_pass + run_pass))
    total_fail=$((total_fail + run_fail))
}

summaries=()
pass=0 fail=0
for t in "${once[@]}"; do
    run_one "" "$t"
    pass=$((pass + run_pass)) fail=$((fail + run_fail))
done
if [ -z "$servers" ]; then
    for t in "${each[@]}"; do
        run_one "" "$t"
        pass=$((pass + run_pass)) fail=$((fail + run_fail))
    done
fi
summaries+=("once: $pass passed, $fail failed")

for name in $servers; do
    pass=0 fail=0
    if ! dir=$("$here/servers.sh" bindir "$name") || [ ! -x "$dir/redis-server" ] || [ ! -x "$dir/redis-cli" ]; then
        echo "$name: no redis-server and redis-cli${dir:+ in $dir} (scripts/servers.sh build $name)"
        broken+=("$name (not built)")
        total_fail=$((total_fail + 1))
        summaries+=("$name: 0 passed, 1 failed (not built)")
        continue
    fi
    echo "== $name: $dir/redis-server ($("$dir/redis-server" --version))"
    for t in "${each[@]}"; do
        REDIS_SERVER=$dir/redis-server REDIS_CLI=$dir/redis-cli PATH=$dir:$PATH run_one "$name " "$t"
        pass=$((pass + run_pass)) fail=$((fail + run_fail))
    done
    summaries+=("$name: $pass passed, $fail failed")
done

if [ ${#broken[@]} -gt 0 ]; then
    echo "broken: ${broken[*]}"
fi
printf '%s\n' "${summaries[@]}"
echo "${total_pass} passed, ${total_fail} failed"
[ "$total_fail" -eq 0 ] && [ ${#broken[@]} -eq 0 ]
