# plot.gp -- docs/benchmarks.png: the throughput of each RL.* command beside its baseline (the same
# limiter as a Lua script, or ClassDojo's MULTI for RL.SLIDINGLOG), without and with pipelining, with
# INCR (measured by the same tool) as a dashed line over each group; over each RL.* bar its requests/s and
# its ratio to the baseline's. Drawn by scripts/bench/plot.sh:
#
#   gnuplot -e "dat1='plot-1.dat'; datp='plot-16.dat'; pipeline='16'; groups=7; outfile='benchmarks.png'; subtitle='...'" \
#           scripts/bench/plot.gp
#
# Data files, one line per group (groups of them), tab-separated: x, group name, RL req/s, baseline req/s,
# INCR req/s.
if (!exists("subtitle")) subtitle = ''
if (!exists("pipeline")) pipeline = '16'
if (!exists("groups")) groups = 7

set terminal pngcairo size 1200,1000 font 'sans,10' noenhanced
set output outfile
set datafile separator "\t"
set multiplot layout 2,1 title "Requests per second: each RL.* command beside the same limiter as users write it today\n".subtitle font ',11'
set style fill solid 0.85 border rgb '#333333'
set boxwidth 0.38
set grid ytics lc rgb '#dddddd'
set key outside top center horizontal maxrows 1 samplen 2
set xrange [-0.6:groups - 0.4]
set yrange [0:*]
set offsets 0, 0, graph 0.12, 0
set xtics scale 0
set format y '%.0fk'
set ylabel 'requests/s'
set lmargin 10
set bmargin 3.5

label2(s) = word(s, 1) . "\n" . word(s, 2)

do for [i = 1:2] {
    f = (i == 1) ? dat1 : datp
    if (i == 2) { unset key }
    set title ((i == 1) ? 'no pipelining' : sprintf('pipeline of %s (-P %s)', pipeline, pipeline))
    plot f using ($1 - 0.45):($5 / 1000):(0.9):(0) with vectors nohead dt 2 lw 1.5 lc rgb '#777777' title 'INCR, same tool', \
         '' using ($1 - 0.2):($3 / 1000):xtic(label2(strcol(2))) with boxes lc rgb '#2b6cb0' title 'RL.* command', \
         '' using ($1 + 0.2):($4 / 1000) with boxes lc rgb '#ed8936' title 'baseline (Lua or MULTI)', \
         '' using ($1 - 0.2):($3 / 1000):(sprintf("%.0fk\n%.1fx", $3 / 1000, $3 / $4)) with labels offset 0,1.3 font ',8' notitle, \
         '' using ($1 + 0.2):($4 / 1000):(sprintf('%.0fk', $4 / 1000)) with labels offset 0,0.8 font ',8' notitle
}
unset multiplot
