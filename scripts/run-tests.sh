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
# closing line comes one line per server, after "once: ..." for the programs run once: "NAME: N passed,
# N failed" for a server tested, "NAME: skipped: REASON" for one scripts/servers.sh skipped because its
# source package could not be had (allowed only without the fallback folder: see scripts/servers.sh); a
# skipped server counts no failure, and SERVERS, as the programs see it, lists only the servers tested
# (tests/crossversion.c takes its servers from it). The programs of RL_CROSS_SERVER_PROGRAMS (set by
# mk/servers.mk), run once, compare redis-7.0 with the newer servers: they run only when a server other
# than redis-7.0 is tested, and say "not run" otherwise. Without --servers all run once, with the server
# the environment gives (REDIS_SERVER or PATH).
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
declare -A server_line=()  # NAME -> its summary line
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

# Which servers are tested and which were skipped (and why), before anything runs.
summaries=()
tested=()
for name in $servers; do
    reason=$("$here/servers.sh" skipped "$name" 2>/dev/null) || reason=""
    dir=$("$here/servers.sh" bindir "$name" 2>/dev/null) || dir=""
    if [ -n "$reason" ] && { [ -z "$dir" ] || [ ! -x "$dir/redis-server" ]; }; then
        server_line[$name]="$name: skipped: $reason"
        echo "${server_line[$name]}"
    else
        tested+=("$name")
    fi
done
# (A blank, not an empty, SERVERS when none is tested: tests/crossversion.c reads an empty one as "all".)
[ -z "$servers" ] || export SERVERS="${tested[*]:- }"

newer_tested=0
for name in "${tested[@]}"; do [ "$name" = redis-7.0 ] || newer_tested=1; done
pass=0 fail=0
for t in "${once[@]}"; do
    if [ -n "$servers" ] && [ "$newer_tested" -eq 0 ] && [[ " ${RL_CROSS_SERVER_PROGRAMS:-} " == *" $t "* ]]; then
        echo "$t: not run: no server newer than redis-7.0 is tested"
        continue
    fi
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

for name in "${tested[@]}"; do
    pass=0 fail=0
    if ! dir=$("$here/servers.sh" bindir "$name") || [ ! -x "$dir/redis-server" ] || [ ! -x "$dir/redis-cli" ]; then
        echo "$name: no redis-server and redis-cli${dir:+ in $dir} (scripts/servers.sh build $name)"
        broken+=("$name (not built)")
        total_fail=$((total_fail + 1))
        server_line[$name]="$name: 0 passed, 1 failed (not built)"
        continue
    fi
    echo "== $name: $dir/redis-server ($("$dir/redis-server" --version))"
    for t in "${each[@]}"; do
        REDIS_SERVER=$dir/redis-server REDIS_CLI=$dir/redis-cli PATH=$dir:$PATH run_one "$name " "$t"
        pass=$((pass + run_pass)) fail=$((fail + run_fail))
    done
    server_line[$name]="$name: $pass passed, $fail failed"
done
for name in $servers; do summaries+=("${server_line[$name]}"); done

if [ ${#broken[@]} -gt 0 ]; then
    echo "broken: ${broken[*]}"
fi
printf '%s\n' "${summaries[@]}"
echo "${total_pass} passed, ${total_fail} failed"
[ "$total_fail" -eq 0 ] && [ ${#broken[@]} -eq 0 ]
