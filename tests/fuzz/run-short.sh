#!/usr/bin/env bash
# run-short.sh -- the fuzzing smoke run of `make test`: every fuzz target for FUZZ_SHORT_SECONDS
# (default 10) at once, on a fresh copy of the seed corpora in build/fuzz/short-corpus/. Prints each
# target's executions and "fuzz: N passed, N failed"; exits non-zero on any finding.
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${FUZZ_BUILD:-$here/../../build/fuzz}
bins=()
for src in "$here"/fuzz_*.c; do
    bins+=("$build/$(basename "$src" .c)")
done
FUZZ_BUILD=$build FUZZ_CORPUS=$build/short-corpus FUZZ_FRESH=1 exec "$here/run.sh" "${FUZZ_SHORT_SECONDS:-10}" "${bins[@]}"
