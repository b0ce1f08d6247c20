# plot.gp -- the demo's plot: requests admitted per 1 s window over time for each pair (nginx gateways,
# Flask, Express), stacked: the first server's share at the bottom, the second's on top, so the top of
# each bar is the pair's total, against the shared limit. Called by demo.sh with
#   gnuplot -e "outfile='...'; dir='build/demo'; limit=200; app_limit=100" examples/demo/plot.gp
# reading DIR/{gw,flask,express}.dat (report.py --series: window middle in s, server 1, server 2, total).
set terminal pngcairo size 900,1000 font "sans,10"
set output outfile
set multiplot layout 3,1 title "Two servers, one Redis, one budget: requests admitted per 1 s window"
set grid ytics
set key outside right top
set xlabel "time (s)"
set ylabel "admitted per window"
set style fill solid 0.85 noborder
set boxwidth 0.98 absolute
set xrange [0:*]
set autoscale xfixmax

set title "nginx gateways (Lua, RESP over cosocket)"
set yrange [0:limit * 1.25]
plot dir."/gw.dat" using 1:4 with boxes title "gateway 2" lc rgb "#ff7f0e", \
     "" using 1:2 with boxes title "gateway 1" lc rgb "#1f77b4", \
     limit with lines title "limit" dt 2 lw 2 lc rgb "#d62728"

set title "Flask middleware (redis-py), two processes"
set yrange [0:app_limit * 1.25]
plot dir."/flask.dat" using 1:4 with boxes title "process 2" lc rgb "#ff7f0e", \
     "" using 1:2 with boxes title "process 1" lc rgb "#1f77b4", \
     app_limit with lines title "limit" dt 2 lw 2 lc rgb "#d62728"

set title "Express middleware (ioredis), two processes"
plot dir."/express.dat" using 1:4 with boxes title "process 2" lc rgb "#ff7f0e", \
     "" using 1:2 with boxes title "process 1" lc rgb "#1f77b4", \
     app_limit with lines title "limit" dt 2 lw 2 lc rgb "#d62728"
unset multiplot
