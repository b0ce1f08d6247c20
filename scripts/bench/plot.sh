#!/usr/bin/env bash
# plot.sh -- the benchmark's plot (benchmarks.png, docs/benchmarks.png with make bench-doc): the requests
# per second of each RL.* command that has a baseline beside that baseline's (the same limiter as a Lua
# script, or ClassDojo's MULTI), without and with pipelining, with INCR measured by the same tool as a
# dashed line. The groups are the summary's: every group with a baseline row, in the rows' order.
#
#   scripts/bench/plot.sh DIR
#
# Reads DIR/summary.tsv (scripts/bench/summary.awk, written by scripts/bench/report.sh), settings.txt and
# machine.txt; writes DIR/plot-1.dat, DIR/plot-P.dat (x, group, RL req/s, baseline req/s, INCR req/s of
# the RL command's tool) and DIR/benchmarks.png, drawn by scripts/bench/plot.gp. benchmarks.png exists
# afterwards only if gnuplot drew it: --doc and the smoke run rely on that.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: scripts/bench/plot.sh DIR}
summary=$OUT/summary.tsv
setting() { sed -n "s/^$1=//p" "$OUT/settings.txt"; }
machine() { sed -n "s/^$1=//p" "$OUT/machine.txt"; }
PIPE=$(setting pipeline)

rm -f "$OUT"/plot-*.dat "$OUT/benchmarks.png" "$OUT/gnuplot.log"
if ! command -v gnuplot >/dev/null; then
    echo "bench: gnuplot is not installed (Debian package gnuplot-nox): no plot" >&2
    exit 0
fi

# summary.tsv: id label tool group role pipeline rps ...
get_rps() { awk -F'\t' -v id="$1" -v p="$2" '$1 == id && $6 == p { print $7 }' "$summary"; }
mapfile -t groups < <(awk -F'\t' '$5 == "base" && $6 == 1 && !seen[$4]++ { print $4 }' "$summary")

write_plot_data() { # write_plot_data PIPELINE
    local p=$1 x=0 g rl_id rl_tool base_id incr_id
    for g in "${groups[@]}"; do
        read -r rl_id rl_tool < <(awk -F'\t' -v g="$g" -v p="$p" '$4 == g && $5 == "rl" && $6 == p { print $1, $3; exit }' "$summary")
        base_id=$(awk -F'\t' -v g="$g" -v p="$p" '$4 == g && $5 == "base" && $6 == p { print $1; exit }' "$summary")
        incr_id=$(awk -F'\t' -v t="$rl_tool" -v p="$p" '$3 == t && $5 == "incr" && $6 == p { print $1 }' "$summary")
        printf '%d\t%s\t%s\t%s\t%s\n' "$x" "$g" "$(get_rps "$rl_id" "$p")" "$(get_rps "$base_id" "$p")" "$(get_rps "$incr_id" "$p")"
        x=$((x + 1))
    done >"$OUT/plot-$p.dat"
}

write_plot_data 1
write_plot_data "$PIPE"
subtitle="$(machine nproc) CPUs, $(machine cpu), Redis $(machine redis | cut -d' ' -f1 | sed 's/v=//'); $(setting clients) connections, $(setting keys) random keys, median of $(setting reps)"
if ! gnuplot -e "dat1='$OUT/plot-1.dat'; datp='$OUT/plot-$PIPE.dat'; pipeline='$PIPE'; groups=${#groups[@]}; outfile='$OUT/benchmarks.png'; subtitle='$subtitle'" \
    scripts/bench/plot.gp 2>"$OUT/gnuplot.log"; then
    cat "$OUT/gnuplot.log" >&2
    rm -f "$OUT/benchmarks.png"
fi
