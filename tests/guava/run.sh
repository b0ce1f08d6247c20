#!/usr/bin/env bash
# run.sh -- RL.SMOOTH against the real Guava RateLimiter (Debian's libguava-java), bit for bit: build
# tests/guava/smooth_trace.c (the module's algorithm) and GuavaTrace.java into build/guava/, generate random
# traces for a few seeds, replay each in Guava, and compare every call: allowed, the wait in µs, and the state
# after it (storedPermits' bits, nextFreeTicketMicros). Prints "guava: N passed, N failed" (one per call).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=build/guava
guava=${GUAVA_JAR:-/usr/share/java/guava.jar}
mkdir -p "$out"
if ! ${CC:-cc} -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -ffp-contract=off -Wall -Wextra -Werror \
        -o "$out/smooth_trace" tests/guava/smooth_trace.c algorithms/*.c ||
    ! javac -Xlint:none -cp "$guava" -d "$out" tests/guava/GuavaTrace.java; then
    echo "guava: 0 passed, 1 failed (could not build)"
    exit 1
fi
passed=0 failed=0
for seed in 1 2 3; do
    "$out/smooth_trace" "$out/ops.$seed" "$out/expected.$seed" 300 "$seed" || { failed=$((failed + 1)); continue; }
    if ! java -cp "$guava:$out" com.google.common.util.concurrent.GuavaTrace <"$out/ops.$seed" >"$out/guava.$seed"; then
        failed=$((failed + 1))
        continue
    fi
    # Per call: allowed, wait_us, then the state unless the module deleted the key ("- -").
    read -r p f < <(paste -d'|' "$out/expected.$seed" "$out/guava.$seed" | awk -F'|' '
        { split($1, e, " "); split($2, g, " ")
          if (NF != 2 || e[1] != g[1] || e[2] != g[2] || (e[3] != "-" && (e[3] != g[3] || e[4] != g[4]))) {
              bad++; if (bad <= 5) printf "guava: seed '"$seed"' call %d: module %s, Guava %s\n", NR, $1, $2 > "/dev/stderr"
          } else ok++ }
        END { print ok + 0, bad + 0 }')
    [ "$(wc -l <"$out/expected.$seed")" -eq "$(wc -l <"$out/guava.$seed")" ] || f=$((f + 1))
    passed=$((passed + p)) failed=$((failed + f))
done
echo "guava: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
