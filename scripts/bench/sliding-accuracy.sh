#!/usr/bin/env bash
# Accuracy study of RL.WINDOW SLIDING (see docs/sliding-accuracy.md): build scripts/bench/sliding-accuracy*.c
# (the study's parts: sliding-accuracy.h says what each does) against algorithms/*.c into build/, run it
# on the same synthetic trace (10^6 requests, 10^4 clients) for a few limit/window settings, and print
# the results as markdown tables. Each run's full report is kept in build/sliding-accuracy-reports/.
#
#   scripts/bench/sliding-accuracy.sh [seed [plot.png]]   (default seed 1 and build/sliding-accuracy.png; CC overrides
#                                                    the compiler, default cc; the plot needs gnuplot)
set -euo pipefail
cd "$(dirname "$0")/../.."

seed=${1:-1}
plot=${2:-build/sliding-accuracy.png}
bin=build/sliding-accuracy
reports=build/sliding-accuracy-reports
mkdir -p build "$reports"
${CC:-cc} -std=c11 -O2 -Wall -Wextra -Ialgorithms -o "$bin" scripts/bench/sliding-accuracy*.c algorithms/*.c

# limit window_ms
settings=("100 60000" "10 1000" "10 1200" "10 60000")

exact_rows=() attempt_rows=() own_rows=() sub_rows=() dat=()
for s in "${settings[@]}"; do
    read -r limit window <<<"$s"
    report="$reports/seed$seed-L$limit-W$window.txt"
    "$bin" --seed "$seed" --limit "$limit" --window-ms "$window" >"$report"
    exact_rows+=("$(sed -n 's/^md-exact: //p' "$report")")
    attempt_rows+=("$(sed -n 's/^md-attempts: //p' "$report")")
    own_rows+=("$(sed -n 's/^md-own: //p' "$report")")
    sub_rows+=("$(sed -n 's/^md-sub: //p' "$report")")
    dat+=("$(sed -n 's/^dat: //p' "$report")")
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
echo
echo "Every mode of RL.WINDOW against the exact log: decisions that differ (false allows / false denies), the"
echo "most each admitted in any W window on its own history, and the state a key keeps:"
echo
echo "| limit / window | FIXED (16 B) | SLIDING (16 B) | SUBWINDOWS 6 (64 B) | SUBWINDOWS 60 (496 B) | exact log (8 B per request in the window, up to 8 L) |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${sub_rows[@]}"

# The plot: decisions that differ from the exact log, per mode, for each setting.
if command -v gnuplot >/dev/null; then
    data=build/sliding-accuracy.dat
    printf '%s\n' "${dat[@]}" >"$data"
    gnuplot <<GP
set terminal pngcairo size 900,480 noenhanced font "sans,10"
set output "$plot"
set title "RL.WINDOW: decisions that differ from an exact sliding window (seed $seed, 10^6 requests)"
set ylabel "% of decisions"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set key top left
set yrange [0:*]
set datafile missing "-1.0000"
plot "$data" using 2:xtic(1) title "FIXED (16 B)", "" using 3 title "SLIDING (16 B)", \
     "" using 4 title "SUBWINDOWS 6 (64 B)", "" using 5 title "SUBWINDOWS 60 (496 B)"
GP
    echo
    echo "Plot: $plot"
fi
