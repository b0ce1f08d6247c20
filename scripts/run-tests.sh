#!/usr/bin/env bash
# Run each test program, add up the "suite: N passed, N failed" lines they print, and end with one
# closing line "N passed, N failed". Exits non-zero if any check failed or any program did not finish
# cleanly (a crash, a sanitizer report, a missing closing line).
set -u
total_pass=0
total_fail=0
broken=()
for t in "$@"; do
    out=$("$t" 2>&1)
    rc=$?
    summary=$(printf '%s\n' "$out" | grep -E '^[A-Za-z0-9_./-]+: [0-9]+ passed, [0-9]+ failed$' | tail -n 1)
    if [ -n "$summary" ]; then
        p=$(sed -E 's/.*: ([0-9]+) passed.*/\1/' <<<"$summary")
        f=$(sed -E 's/.* ([0-9]+) failed$/\1/' <<<"$summary")
        total_pass=$((total_pass + p))
        total_fail=$((total_fail + f))
    fi
    if [ $rc -ne 0 ] || [ -z "$summary" ]; then
        broken+=("$t (exit $rc)")
        printf '%s\n' "$out" | tail -n 40
    else
        printf '%s\n' "$out" | grep -E '^FAIL' || true
    fi
    echo "$t: ${summary:-no closing line} (exit $rc)"
done
if [ ${#broken[@]} -gt 0 ]; then
    echo "broken: ${broken[*]}"
    [ "$total_fail" -gt 0 ] || total_fail=${#broken[@]}
fi
echo "${total_pass} passed, ${total_fail} failed"
[ "$total_fail" -eq 0 ] && [ ${#broken[@]} -eq 0 ]
