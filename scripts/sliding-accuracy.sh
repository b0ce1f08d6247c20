#!/usr/bin/env bash
# Accuracy study of RL.WINDOW SLIDING (see docs/sliding-accuracy.md): build scripts/sliding-accuracy.c
# against algorithms/*.c into build/, run it on the same synthetic trace (10^6 requests, 10^4 clients) for
# a few limit/window settings, and print the results as markdown tables. Each run's full report is kept
# in build/sliding-accuracy-reports/.
#
#   scripts/sliding-accuracy.sh [seed]      (default seed 1; CC overrides the compiler, default cc)
set -euo pipefail
cd "$(dirname "$0")/.."

seed=${1:-1}
bin=build/sliding-accuracy
reports=build/sliding-accuracy-reports
mkdir -p build "$reports"
${CC:-cc} -std=c11 -O2 -Wall -Wextra -Ialgorithms -o "$bin" scripts/sliding-accuracy.c algorithms/*.c

# limit window_ms
settings=("100 60000" "10 1000" "10 60000")

exact_rows=() attempt_rows=() own_rows=()
for s in "${settings[@]}"; do
    read -r limit window <<<"$s"
    report="$reports/seed$seed-L$limit-W$window.txt"
    "$bin" --seed "$seed" --limit "$limit" --window-ms "$window" >"$report"
    exact_rows+=("$(sed -n 's/^md-exact: //p' "$report")")
    attempt_rows+=("$(sed -n 's/^md-attempts: //p' "$report")")
    own_rows+=("$(sed -n 's/^md-own: //p' "$report")")
done

echo "Seed $seed: $(sed -n 's/^sliding-accuracy: seed [0-9]*, //p' "$report" | sed 's/, limit.*//'), cost 1."
echo "$(sed -n 's/^trace: //p' "$report" | sed 's/;.*//')."
echo
echo "RL.WINDOW vs the exact sliding window over admitted requests (percentages of all decisions):"
echo
echo "| limit / window | denied (exact) | clients limited (their share of requests) | SLIDING differs | false allow | false deny | FIXED differs | false allow | false deny |"
echo "|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${exact_rows[@]}"
echo
echo "Agreement with the attempt log that also logs blocked attempts (RL.SLIDINGLOG, ClassDojo style):"
echo
echo "| limit / window | denied (attempt log) | SLIDING differs | false allow | false deny | FIXED differs | exact log differs |"
echo "|---|---|---|---|---|---|---|"
printf '%s\n' "${attempt_rows[@]}"
echo
echo "Each counter judged on its own history (the exact rule applied to the requests it admitted itself):"
echo
echo "| limit / window | SLIDING false allow | false deny | most in one W window | FIXED false allow | false deny | most in one W window |"
echo "|---|---|---|---|---|---|---|"
printf '%s\n' "${own_rows[@]}"
