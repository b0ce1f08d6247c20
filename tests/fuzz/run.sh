#!/usr/bin/env bash
# run.sh SECONDS BINARY... -- run each libFuzzer binary for SECONDS (all at once, in parallel), each on a
# copy of its seed corpus (tests/fuzz/corpus/<target>, copied into $FUZZ_CORPUS/<target>; the repository's
# corpus is never written). Prints each target's executions, then a closing line
# "fuzz: N passed, N failed" (passed = ran clean, failed = found something), and exits non-zero on any
# finding. Crash inputs go to $FUZZ_BUILD/artifacts/<target>/, logs to $FUZZ_BUILD/logs/<target>.log.
#
# Environment: FUZZ_BUILD (default build/fuzz), FUZZ_CORPUS (default $FUZZ_BUILD/corpus), FUZZ_FRESH=1 to
# start from the seeds alone instead of the corpus kept from earlier runs.
set -u
here=$(cd "$(dirname "$0")" && pwd)
seconds=${1:?usage: run.sh SECONDS BINARY...}
shift
build=${FUZZ_BUILD:-build/fuzz}
corpus_root=${FUZZ_CORPUS:-$build/corpus}
mkdir -p "$build/logs" "$build/artifacts" "$corpus_root"

pids=()
names=()
bins=()
for bin in "$@"; do
    name=$(basename "$bin")
    if [ ! -x "$bin" ]; then
        echo "$name: $bin is not built" >&2
        names+=("$name")
        bins+=("$bin")
        pids+=("")
        continue
    fi
    corpus="$corpus_root/$name"
    [ "${FUZZ_FRESH:-0}" = 1 ] && rm -rf "$corpus"
    mkdir -p "$corpus" "$build/artifacts/$name"
    [ -d "$here/corpus/$name" ] && cp -f "$here/corpus/$name"/* "$corpus"/ 2>/dev/null
    "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$build/artifacts/$name/" "$corpus" >"$build/logs/$name.log" 2>&1 &
    pids+=("$!")
    names+=("$name")
    bins+=("$bin")
done

passed=0
failed=0
for i in "${!names[@]}"; do
    name=${names[$i]}
    log="$build/logs/$name.log"
    if [ -z "${pids[$i]}" ]; then
        failed=$((failed + 1))
        continue
    fi
    wait "${pids[$i]}"
    rc=$?
    runs=$(grep -Eo '^Done [0-9]+ runs' "$log" | tail -n 1 | grep -Eo '[0-9]+')
    [ -n "$runs" ] || runs=$(grep -Eo '^#[0-9]+' "$log" | tail -n 1 | tr -d '#')
    if [ $rc -eq 0 ] && grep -q '^Done [0-9]* runs' "$log"; then
        passed=$((passed + 1))
        echo "$name: ${runs:-?} executions in ${seconds} s, no finding"
    else
        failed=$((failed + 1))
        artifact=$(grep -Eo "Test unit written to [^ ]+" "$log" | tail -n 1 | sed 's/Test unit written to //')
        echo "FAIL $name: finding after ${runs:-?} executions (exit $rc); input: ${artifact:-none written}; log: $log"
        grep -E -A 12 '^INVARIANT VIOLATED|ERROR: (AddressSanitizer|libFuzzer)|runtime error' "$log" | head -n 40
        [ -n "$artifact" ] && echo "  reproduce: ${bins[$i]} $artifact"
    fi
done
echo "fuzz: ${passed} passed, ${failed} failed"
[ "$failed" -eq 0 ]
