/* sliding-accuracy.c -- how often RL.WINDOW SLIDING (the sliding-window counter) decides differently from
 * an exact sliding window, on a synthetic bursty trace. See docs/sliding-accuracy.md; build and run with
 * scripts/bench/sliding-accuracy.sh.
 *
 *   sliding-accuracy [--seed S] [--limit L] [--window-ms W] [--requests N] [--clients C] [--trace FILE]
 *
 * Every client's requests go, in time order, through four limiters, each keeping its own state (a denied
 * request is not admitted, so the limiters' histories drift apart once they disagree):
 *   - SLIDING: the module's own code, rl_window_algorithm.decide with RL_F_SLIDING, one cell per client;
 *   - FIXED:   the same with RL_F_FIXED;
 *   - SUB6, SUB60: the same with RL_F_SUBWINDOWS, n = 6 and n = 60 (skipped when W is not a multiple of n);
 *   - exact:   a sliding log of ADMITTED requests, kept here: a request at t is admitted iff the admitted
 *              requests in (t - W, t] plus its cost stay within L. The reference;
 *   - attempts: the module's RL.SLIDINGLOG decision (rl_slog_decide), which logs blocked attempts too
 *              (ClassDojo style), with its log kept here as the module keeps its sorted set.
 * Decisions and the trace are integer only; floats are used only to print percentages and ratios.
 *
 * The trace (all integer arithmetic, so the same seed gives the same trace on every platform):
 *   - N requests (default 10^6) from C clients (default 10^4); client i gets a share of N proportional to
 *     a weight drawn from a Pareto(1) law truncated at 1000x its minimum, so a few clients send most;
 *   - each client alternates ON bursts and OFF quiet periods, starting ON at a uniform time in the
 *     first hour after T0 (an arbitrary instant in 2023: windows are aligned to the epoch, clients are
 *     not);
 *   - its base ON rate is Pareto(1) too: mean gap 5000 ms / X with X in [1, 500], i.e. from 0.2 req/s
 *     (half the clients are below 0.4 req/s) up to 100 req/s; each burst after the first scales the
 *     mean gap by 1/2, 1, 3/2 or 2 (floored at 10 ms); gaps inside a burst are uniform in
 *     [0, 2 * mean gap] whole ms (several requests can share a ms);
 *   - ON lengths are Pareto(1) from 2 s, capped at 10 min; OFF lengths Pareto(1) from 10 s, capped at 1 h.
 * Times are whole ms (RL.WINDOW decides at whole ms anyway) and passed as now_us = t_ms * 1000. Every
 * request costs 1. Clients do not share state, so running each client's requests in time order is the
 * same as running the interleaved trace in time order; --trace FILE writes it (client,t_ms per line).
 *
 * Self-checks (always on; a failure aborts): the exact log's decision is recomputed by binary search over
 * the client's whole admitted history, and RL.SLIDINGLOG's by binary search over all the client's earlier
 * attempts (with cost 1 and time never going back, it admits iff fewer than L of them lie in (t - W, t]).
 *
 * Output: a human-readable report, then lines starting "md-exact:", "md-attempts:", "md-own:" and "md-sub:"
 * holding markdown table rows, and "dat:" the plot's data, for scripts/bench/sliding-accuracy.sh.
 *
 * The parts (sliding-accuracy.h says what each holds): this file, the command line; -trace.c, the trace;
 * -run.c, the limiters over it; -judge.c, the comparisons' bookkeeping; -report.c, the output. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sliding-accuracy.h"
#include "slidinglog.h"

static int64_t arg_int(const char *name, const char *v, int64_t lo, int64_t hi) {
    char *end;
    long long x = strtoll(v, &end, 10);
    if (!*v || *end || x < lo || x > hi) {
        fprintf(stderr, "sliding-accuracy: %s must be an integer in [%" PRId64 ", %" PRId64 "]\n", name, lo, hi);
        exit(1);
    }
    return (int64_t)x;
}

/* The settings from the command line into st; 0, or 1 after the usage line. */
static int parse_args(int argc, char **argv, study *st, const char **trace_path) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) goto usage;
        if (!strcmp(a, "--seed"))
            st->seed = (uint64_t)arg_int(a, v, 0, INT64_MAX);
        else if (!strcmp(a, "--limit"))
            st->limit = arg_int(a, v, 1, RL_SLOG_MAX_LIMIT);
        else if (!strcmp(a, "--window-ms"))
            st->window = arg_int(a, v, 1, 1000000000LL);
        else if (!strcmp(a, "--requests"))
            st->requests = arg_int(a, v, 1, 100000000LL);
        else if (!strcmp(a, "--clients"))
            st->clients = arg_int(a, v, 1, 10000000LL);
        else if (!strcmp(a, "--trace"))
            *trace_path = v;
        else
            goto usage;
        i++;
    }
    if (st->clients > st->requests) st->clients = st->requests;
    return 0;

usage:
    fprintf(stderr,
            "usage: sliding-accuracy [--seed S] [--limit L] [--window-ms W] [--requests N] [--clients C] "
            "[--trace FILE]\n");
    return 1;
}

/* The trace's extent, for the report and the run's buffers: the busiest client, the first and last request. */
static void trace_span(const trace *tr, study *st) {
    st->busiest = 0, st->t_min = INT64_MAX, st->t_max = INT64_MIN;
    for (int64_t i = 0; i < tr->clients; i++) {
        int64_t n = tr->first[i + 1] - tr->first[i];
        if (n > st->busiest) st->busiest = n;
        if (n > 0 && tr->t_ms[tr->first[i]] < st->t_min) st->t_min = tr->t_ms[tr->first[i]];
        if (n > 0 && tr->t_ms[tr->first[i + 1] - 1] > st->t_max) st->t_max = tr->t_ms[tr->first[i + 1] - 1];
    }
}

int main(int argc, char **argv) {
    study st = {.seed = 1, .limit = 100, .window = 60000, .requests = 1000000, .clients = 10000};
    const char *trace_path = NULL;
    if (parse_args(argc, argv, &st, &trace_path)) return 1;

    trace tr = {st.requests, st.clients, NULL, NULL};
    trace_generate(&tr, st.seed);
    if (trace_path && trace_write(&tr, trace_path)) return 2;
    trace_span(&tr, &st);
    if (study_run(&st, &tr)) {
        fprintf(stderr, "sliding-accuracy: RL.WINDOW refuses these parameters\n");
        return 1;
    }
    study_print(&st);
    free(tr.t_ms);
    free(tr.first);
    return 0;
}
