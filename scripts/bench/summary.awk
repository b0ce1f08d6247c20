# summary.awk -- the statistics of the benchmark report (scripts/bench/report.sh): from the runs of
# each figure, per pipeline, the medians, the spread of req/s, and the ratios to INCR and to the floor
# module (FLOOR.CALL) measured by the same tool. All arithmetic on the runs is here, so that it is done one way.
#
#   awk -F'\t' -v reps=REPS -v pipe=PIPELINE -f scripts/bench/summary.awk raw.tsv figures.tsv
#
# raw.tsv: one line per run (id, pipeline, rep, requests, rps, p50_ms, p99_ms, usec_per_call, calls,
# failed); a failed run has empty figures and is left out. figures.tsv: id, label, tool, stats, group,
# role (incr, floor, rl, base, calib), arguments. Both with a header line. Output: summary.tsv, one line
# per figure and pipeline (1, then PIPELINE), in the order of figures.tsv.

# The median of a space-separated list of numbers ("" for an empty list).
function median(list,   a, m, i, j, t) {
    m = split(list, a, " ")
    if (m == 0) return ""
    for (i = 2; i <= m; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > t + 0; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
}

# Half the range of the list, in % of its median: how far apart the runs of one figure were.
function spread(list,   a, m, i, lo, hi, md) {
    m = split(list, a, " ")
    if (m == 0) return ""
    lo = hi = a[1] + 0
    for (i = 2; i <= m; i++) { if (a[i] + 0 < lo) lo = a[i] + 0; if (a[i] + 0 > hi) hi = a[i] + 0 }
    md = median(list)
    return md > 0 ? sprintf("%.0f", (hi - lo) / 2 / md * 100) : ""
}

BEGIN {
    OFS = "\t"
    print "id", "label", "tool", "group", "role", "pipeline", "rps", "p50_ms", "p99_ms", "usec_per_call",
        "rps_vs_incr", "usec_vs_incr", "runs_ok", "rps_spread_pct", "rps_vs_floor", "usec_vs_floor"
}

FNR == 1 { next } # the header lines

# raw.tsv: the runs that produced figures and had no failed call, gathered per figure and pipeline.
FILENAME == ARGV[1] {
    k = $1 SUBSEP $2
    if ($5 != "" && $10 == 0) {
        ok[k]++; rps[k] = rps[k] " " $5; p50[k] = p50[k] " " $6; p99[k] = p99[k] " " $7; us[k] = us[k] " " $8
    }
    next
}

# figures.tsv
{ n++; id[n] = $1; label[n] = $2; tool[n] = $3; group[n] = $5; role[n] = $6 }

END {
    # The medians first: the ratios need INCR's (role incr) and the floor's (role floor) of each tool and
    # pipeline.
    for (r = 1; r <= n; r++) for (pi = 1; pi <= 2; pi++) {
        p = pi == 1 ? 1 : pipe; k = id[r] SUBSEP p
        mr[k] = median(rps[k]); m50[k] = median(p50[k]); m99[k] = median(p99[k]); mus[k] = median(us[k])
        if (role[r] == "incr") { incr_rps[tool[r], p] = mr[k]; incr_us[tool[r], p] = mus[k] }
        if (role[r] == "floor") { floor_rps[tool[r], p] = mr[k]; floor_us[tool[r], p] = mus[k] }
    }
    for (r = 1; r <= n; r++) for (pi = 1; pi <= 2; pi++) {
        p = pi == 1 ? 1 : pipe; k = id[r] SUBSEP p
        ir = incr_rps[tool[r], p]; iu = incr_us[tool[r], p]; fr = floor_rps[tool[r], p]; fu = floor_us[tool[r], p]
        printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d/%d\t%s\t%s\t%s\n", id[r], label[r], tool[r], group[r], role[r], p,
            mr[k], m50[k], m99[k], mus[k],
            (ir > 0 && mr[k] != "") ? sprintf("%.2f", mr[k] / ir) : "",
            (iu > 0 && mus[k] != "") ? sprintf("%.2f", mus[k] / iu) : "", ok[k], reps, spread(rps[k]),
            (fr > 0 && mr[k] != "") ? sprintf("%.2f", mr[k] / fr) : "",
            (fu > 0 && mus[k] != "") ? sprintf("%.2f", mus[k] / fu) : ""
    }
}
