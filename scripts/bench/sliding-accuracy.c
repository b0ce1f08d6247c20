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
 * holding markdown table rows, and "dat:" the plot's data, for scripts/bench/sliding-accuracy.sh. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rl_common.h"
#include "slidinglog.h"
#include "window.h"

/* --- trace shape (see the header) ------------------------------------------------------------------- */

#define T0_MS 1700000000123LL     /* 2023-11-14, deliberately not on any window boundary */
#define START_SPREAD_MS 3600000LL /* clients start within the first hour */
#define WEIGHT_MIN 1000LL         /* share weights: Pareto(1) on [1000, 10^6] */
#define WEIGHT_MAX 1000000LL
#define GAP_SLOW_MS 5000LL        /* base mean gap in a burst: 5000 ms / X, X Pareto(1) on [1, 500] */
#define RATE_SPREAD_MAX 500LL
#define GAP_MIN_MS 10LL
#define ON_MIN_MS 2000LL
#define ON_MAX_MS 600000LL
#define OFF_MIN_MS 10000LL
#define OFF_MAX_MS 3600000LL

/* --- deterministic PRNG: splitmix64, one stream per client ------------------------------------------ */

static uint64_t rng_next(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0 (multiply-shift; its bias is below 2^-40 for the n used here). */
static uint64_t rng_below(uint64_t *s, uint64_t n) {
    return (uint64_t)(((unsigned __int128)rng_next(s) * n) >> 64);
}

/* Pareto with tail index 1 on [lo, hi]: P(X > x) = lo / x for lo <= x < hi, the rest at hi. */
static int64_t rng_pareto1(uint64_t *s, int64_t lo, int64_t hi) {
    uint64_t u = 1 + rng_below(s, 1ULL << 32); /* 1 .. 2^32 */
    rl_i128 x = (rl_i128)lo * ((rl_i128)1 << 32) / u;
    return x > hi ? hi : (int64_t)x;
}

static uint64_t client_stream(uint64_t seed, uint64_t client, uint64_t purpose) {
    uint64_t s = seed ^ (client * 0xD1B54A32D192ED03ULL) ^ (purpose << 56);
    rng_next(&s);
    return s;
}

/* --- the trace -------------------------------------------------------------------------------------- */

typedef struct trace {
    int64_t requests, clients;
    int64_t *t_ms;  /* all requests, client by client, each client's in time order */
    int64_t *first; /* client i's requests are t_ms[first[i] .. first[i + 1]) */
} trace;

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "sliding-accuracy: out of memory\n");
        exit(2);
    }
    return p;
}

static void trace_generate(trace *tr, uint64_t seed) {
    int64_t C = tr->clients, N = tr->requests;
    int64_t *weight = xmalloc(sizeof(int64_t) * (size_t)C);
    rl_i128 total = 0;
    for (int64_t i = 0; i < C; i++) {
        uint64_t s = client_stream(seed, (uint64_t)i, 1);
        weight[i] = rng_pareto1(&s, WEIGHT_MIN, WEIGHT_MAX);
        total += weight[i];
    }
    /* Shares: floor(N * w / total), the few left over one each to the first clients. */
    tr->first = xmalloc(sizeof(int64_t) * (size_t)(C + 1));
    int64_t given = 0;
    for (int64_t i = 0; i < C; i++) {
        weight[i] = (int64_t)((rl_i128)N * weight[i] / total);
        given += weight[i];
    }
    for (int64_t i = 0; given < N; i = (i + 1) % C, given++) weight[i]++;

    tr->t_ms = xmalloc(sizeof(int64_t) * (size_t)N);
    int64_t k = 0;
    for (int64_t i = 0; i < C; i++) {
        tr->first[i] = k;
        uint64_t s = client_stream(seed, (uint64_t)i, 2);
        int64_t x = rng_pareto1(&s, 1, RATE_SPREAD_MAX);
        int64_t base_gap = GAP_SLOW_MS / x;
        int64_t t = T0_MS + (int64_t)rng_below(&s, START_SPREAD_MS);
        int64_t on_end = t + rng_pareto1(&s, ON_MIN_MS, ON_MAX_MS);
        int64_t gap = base_gap; /* this burst's mean gap */
        for (int64_t left = weight[i]; left > 0;) {
            int64_t g = (int64_t)rng_below(&s, (uint64_t)(2 * gap + 1));
            if (t + g < on_end) {
                t += g;
                tr->t_ms[k++] = t;
                left--;
            } else { /* the burst is over: a quiet period, then the next burst */
                t = on_end + rng_pareto1(&s, OFF_MIN_MS, OFF_MAX_MS);
                on_end = t + rng_pareto1(&s, ON_MIN_MS, ON_MAX_MS);
                gap = base_gap * (int64_t)(1 + rng_below(&s, 4)) / 2; /* x 1/2, 1, 3/2 or 2 */
                if (gap < GAP_MIN_MS) gap = GAP_MIN_MS;
            }
        }
    }
    tr->first[C] = k;
    free(weight);
}

/* --- comparing decisions ---------------------------------------------------------------------------- */

typedef struct cmp {
    int64_t differ, false_allow, false_deny; /* false allow: this one allowed, the reference denied */
    int64_t clients_hit;                     /* clients with at least one difference */
} cmp;

static void cmp_add(cmp *c, int allowed, int ref_allowed, int *hit) {
    if (allowed == ref_allowed) return;
    c->differ++;
    if (allowed)
        c->false_allow++;
    else
        c->false_deny++;
    if (!*hit) {
        *hit = 1;
        c->clients_hit++;
    }
}

/* A log of admitted times (non-decreasing) with a head: the deque of an exact sliding window. */
typedef struct tlog {
    int64_t *t;
    int64_t lo, n;
} tlog;

/* Entries in (now - W, now], dropping the older ones from the head. */
static int64_t tlog_in_window(tlog *l, int64_t now, int64_t window) {
    while (l->lo < l->n && l->t[l->lo] <= now - window) l->lo++;
    return l->n - l->lo;
}

/* How many of t[0..n) (non-decreasing) are > x. */
static int64_t count_above(const int64_t *t, int64_t n, int64_t x) {
    int64_t a = 0, b = n;
    while (a < b) {
        int64_t m = a + (b - a) / 2;
        if (t[m] <= x)
            a = m + 1;
        else
            b = m;
    }
    return n - a;
}

/* A counter judged on its own history: at each request, what the exact rule would decide given the
 * requests this counter itself admitted. A false allow admits one into a W window that already holds L
 * of its admits (so it then holds more than L); a false deny refuses one that would still fit. Unlike the
 * comparison with the exact limiter, one mistake here does not cause the next ones. */
typedef struct own {
    int64_t false_allow, false_deny, max_in_window;
} own;

static void own_add(own *o, tlog *l, int allowed, int64_t t, int64_t cost, int64_t limit, int64_t window) {
    int64_t k = tlog_in_window(l, t, window);
    if (!allowed) {
        if (k + cost <= limit) o->false_deny++;
        return;
    }
    if (k + cost > limit) o->false_allow++;
    l->t[l->n++] = t;
    if (k + cost > o->max_in_window) o->max_in_window = k + cost;
}

static void fail(const char *what, int64_t client, int64_t t) {
    fprintf(stderr, "sliding-accuracy: self-check failed: %s (client %" PRId64 ", t %" PRId64 " ms)\n", what,
            client, t);
    exit(3);
}

/* --- main ------------------------------------------------------------------------------------------- */

static int64_t arg_int(const char *name, const char *v, int64_t lo, int64_t hi) {
    char *end;
    long long x = strtoll(v, &end, 10);
    if (!*v || *end || x < lo || x > hi) {
        fprintf(stderr, "sliding-accuracy: %s must be an integer in [%" PRId64 ", %" PRId64 "]\n", name, lo, hi);
        exit(1);
    }
    return (int64_t)x;
}

static double pct(int64_t a, int64_t b) { return b ? 100.0 * (double)a / (double)b : 0.0; }

int main(int argc, char **argv) {
    uint64_t seed = 1;
    int64_t limit = 100, window = 60000, N = 1000000, C = 10000;
    const char *trace_path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) goto usage;
        if (!strcmp(a, "--seed"))
            seed = (uint64_t)arg_int(a, v, 0, INT64_MAX);
        else if (!strcmp(a, "--limit"))
            limit = arg_int(a, v, 1, RL_SLOG_MAX_LIMIT);
        else if (!strcmp(a, "--window-ms"))
            window = arg_int(a, v, 1, 1000000000LL);
        else if (!strcmp(a, "--requests"))
            N = arg_int(a, v, 1, 100000000LL);
        else if (!strcmp(a, "--clients"))
            C = arg_int(a, v, 1, 10000000LL);
        else if (!strcmp(a, "--trace"))
            trace_path = v;
        else
            goto usage;
        i++;
    }
    if (C > N) C = N;

    trace tr = {N, C, NULL, NULL};
    trace_generate(&tr, seed);
    if (trace_path) {
        FILE *f = fopen(trace_path, "w");
        if (!f) {
            perror(trace_path);
            return 2;
        }
        for (int64_t i = 0; i < C; i++)
            for (int64_t k = tr.first[i]; k < tr.first[i + 1]; k++) fprintf(f, "%" PRId64 ",%" PRId64 "\n", i, tr.t_ms[k]);
        fclose(f);
    }

    int64_t max_n = 0, t_min = INT64_MAX, t_max = INT64_MIN;
    for (int64_t i = 0; i < C; i++) {
        int64_t n = tr.first[i + 1] - tr.first[i];
        if (n > max_n) max_n = n;
        if (n > 0 && tr.t_ms[tr.first[i]] < t_min) t_min = tr.t_ms[tr.first[i]];
        if (n > 0 && tr.t_ms[tr.first[i + 1] - 1] > t_max) t_max = tr.t_ms[tr.first[i + 1] - 1];
    }

    /* Per-client scratch, reused: the exact log, the counters' admitted streams, the attempt log (newest
     * first at buf[head .. tail), growing downwards: at most one entry per request, as cost is 1). */
    tlog exact = {xmalloc(sizeof(int64_t) * (size_t)max_n), 0, 0};
    tlog s_adm = {xmalloc(sizeof(int64_t) * (size_t)max_n), 0, 0};
    tlog f_adm = {xmalloc(sizeof(int64_t) * (size_t)max_n), 0, 0};
    tlog s6_adm = {xmalloc(sizeof(int64_t) * (size_t)max_n), 0, 0};
    tlog s60_adm = {xmalloc(sizeof(int64_t) * (size_t)max_n), 0, 0};
    rl_slog_entry *slog = xmalloc(sizeof(rl_slog_entry) * (size_t)(max_n + 1));

    cmp s_ex = {0}, f_ex = {0}, s_at = {0}, f_at = {0}, ex_at = {0}, s6_ex = {0}, s60_ex = {0};
    own s_own = {0}, f_own = {0}, s6_own = {0}, s60_own = {0};
    int64_t clients_limited = 0, limited_requests = 0, exact_denied = 0, attempts_denied = 0, sliding_denied = 0, fixed_denied = 0;
    const int64_t cost = 1, W_us = window * 1000;

    rl_request sreq = {.params = {limit, window, 0}, .cost = cost, .flags = RL_F_SLIDING};
    rl_request freq = {.params = {limit, window, 0}, .cost = cost, .flags = RL_F_FIXED};
    rl_request lreq = {.params = {limit, window, 0}, .cost = cost};
    rl_request s6req = {.params = {limit, window, 6},
                        .cost = cost, .mingap_ms = 0, .flags = RL_F_SUBWINDOWS, .now_us = 0};
    rl_request s60req = {.params = {limit, window, 60},
                         .cost = cost, .mingap_ms = 0, .flags = RL_F_SUBWINDOWS, .now_us = 0};
    int has6 = window % 6 == 0, has60 = window % 60 == 0;
    char err[RL_ERR_LEN];
    if (rl_window_algorithm.validate(&sreq, err)) {
        fprintf(stderr, "sliding-accuracy: RL.WINDOW refuses these parameters\n");
        return 1;
    }

    for (int64_t i = 0; i < C; i++) {
        rl_cell scell = {{0, 0}}, fcell = {{0, 0}}, s6cell = {{0, 0}}, s60cell = {{0, 0}};
        int sexists = 0, fexists = 0, s6exists = 0, s60exists = 0;
        exact.lo = exact.n = s_adm.lo = s_adm.n = f_adm.lo = f_adm.n = 0;
        s6_adm.lo = s6_adm.n = s60_adm.lo = s60_adm.n = 0;
        int64_t cap = max_n + 1, head = cap, tail = cap;
        int hit[7] = {0};
        int64_t denied_before = exact_denied;
        const int64_t *ts = tr.t_ms + tr.first[i];
        int64_t n = tr.first[i + 1] - tr.first[i];

        for (int64_t j = 0; j < n; j++) {
            int64_t t = ts[j], now_us = t * 1000;
            rl_reply rep;

            /* (a) RL.WINDOW SLIDING and FIXED: the module's decision; the key is deleted when idle. */
            sreq.now_us = freq.now_us = now_us;
            rl_window_algorithm.decide(&sreq, &scell, sexists, &rep);
            int s_ok = rep.allowed != 0;
            sexists = rep.reset_after_ms > 0;
            rl_window_algorithm.decide(&freq, &fcell, fexists, &rep);
            int f_ok = rep.allowed != 0;
            fexists = rep.reset_after_ms > 0;
            int s6_ok = 0, s60_ok = 0;
            if (has6) {
                s6req.now_us = now_us;
                rl_window_algorithm.decide(&s6req, &s6cell, s6exists, &rep);
                s6_ok = rep.allowed != 0;
                s6exists = rep.reset_after_ms > 0;
            }
            if (has60) {
                s60req.now_us = now_us;
                rl_window_algorithm.decide(&s60req, &s60cell, s60exists, &rep);
                s60_ok = rep.allowed != 0;
                s60exists = rep.reset_after_ms > 0;
            }

            /* (b) the exact sliding log of admitted requests. */
            int64_t in_win = tlog_in_window(&exact, t, window);
            int e_ok = in_win + cost <= limit;
            if (e_ok != (count_above(exact.t, exact.n, t - window) + cost <= limit)) fail("exact log", i, t);
            if (e_ok) exact.t[exact.n++] = t;

            /* (c) RL.SLIDINGLOG: decide on the entries in the window (one per request, cost 1: weight 1),
             * keep the newest plan.keep units, add plan.add (0 or 1) at now. */
            lreq.now_us = now_us;
            while (tail > head && slog[tail - 1].at_us <= now_us - W_us) tail--;
            rl_slog_plan plan;
            rl_slog_decide(&lreq, slog + head, (size_t)(tail - head), &plan, &rep);
            int a_ok = rep.allowed != 0;
            tail = head + plan.keep;
            for (int64_t a = 0; a < plan.add; a++) slog[--head] = (rl_slog_entry){now_us, 1};
            if (rep.reset_after_ms == 0 && head != tail) fail("attempt log idle but not empty", i, t);
            /* Its rule with cost 1 and a forward clock: admitted iff the earlier attempts in (t - W, t]
             * number fewer than L. */
            if (a_ok != (count_above(ts, j, t - window) + cost <= limit)) fail("attempt log", i, t);

            own_add(&s_own, &s_adm, s_ok, t, cost, limit, window);
            own_add(&f_own, &f_adm, f_ok, t, cost, limit, window);
            if (has6) {
                own_add(&s6_own, &s6_adm, s6_ok, t, cost, limit, window);
                cmp_add(&s6_ex, s6_ok, e_ok, &hit[5]);
            }
            if (has60) {
                own_add(&s60_own, &s60_adm, s60_ok, t, cost, limit, window);
                cmp_add(&s60_ex, s60_ok, e_ok, &hit[6]);
            }
            exact_denied += !e_ok;
            attempts_denied += !a_ok;
            sliding_denied += !s_ok;
            fixed_denied += !f_ok;
            cmp_add(&s_ex, s_ok, e_ok, &hit[0]);
            cmp_add(&f_ex, f_ok, e_ok, &hit[1]);
            cmp_add(&s_at, s_ok, a_ok, &hit[2]);
            cmp_add(&f_at, f_ok, a_ok, &hit[3]);
            cmp_add(&ex_at, e_ok, a_ok, &hit[4]);
        }
        if (exact_denied > denied_before) {
            clients_limited++;
            limited_requests += n;
        }
    }

    printf("sliding-accuracy: seed %" PRIu64 ", %" PRId64 " requests from %" PRId64 " clients, limit %" PRId64
           " per %" PRId64 " ms, cost 1\n",
           seed, N, C, limit, window);
    printf("trace: %.1f h from first to last request, busiest client %" PRId64 " requests; %" PRId64
           " clients denied at least once by the exact log, sending %" PRId64 " requests (%.2f%%)\n",
           (double)(t_max - t_min) / 3600000.0, max_n, clients_limited, limited_requests,
           pct(limited_requests, N));
    printf("denied: exact log %" PRId64 " (%.3f%%), attempt log %" PRId64 " (%.3f%%), SLIDING %" PRId64
           " (%.3f%%), FIXED %" PRId64 " (%.3f%%)\n",
           exact_denied, pct(exact_denied, N), attempts_denied, pct(attempts_denied, N), sliding_denied,
           pct(sliding_denied, N), fixed_denied, pct(fixed_denied, N));
    printf("%-30s %10s %9s %10s %10s %8s\n", "decisions differ", "differ", "%", "false-allow", "false-deny",
           "clients");
    struct {
        const char *name;
        const cmp *c;
    } rows[] = {{"SLIDING vs exact log", &s_ex},
                {"FIXED   vs exact log", &f_ex},
                {"SLIDING vs attempt log", &s_at},
                {"FIXED   vs attempt log", &f_at},
                {"exact log vs attempt log", &ex_at},
                {"SUBWINDOWS 6 vs exact log", &s6_ex},
                {"SUBWINDOWS 60 vs exact log", &s60_ex}};
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
        printf("%-30s %10" PRId64 " %8.4f%% %10" PRId64 " %10" PRId64 " %8" PRId64 "\n", rows[r].name, rows[r].c->differ,
               pct(rows[r].c->differ, N), rows[r].c->false_allow, rows[r].c->false_deny, rows[r].c->clients_hit);
    printf("(out of %" PRId64 " decisions; false-allow = the first allowed, the reference denied)\n", N);
    printf("on its own history (the exact rule applied to the requests the counter itself admitted):\n");
    printf("  SLIDING: %" PRId64 " false allows, %" PRId64 " false denies (%.4f%% of decisions); at most %" PRId64
           " admitted in a W window (%.2f x L)\n",
           s_own.false_allow, s_own.false_deny, pct(s_own.false_allow + s_own.false_deny, N), s_own.max_in_window,
           (double)s_own.max_in_window / (double)limit);
    printf("  FIXED:   %" PRId64 " false allows, %" PRId64 " false denies (%.4f%% of decisions); at most %" PRId64
           " admitted in a W window (%.2f x L)\n",
           f_own.false_allow, f_own.false_deny, pct(f_own.false_allow + f_own.false_deny, N), f_own.max_in_window,
           (double)f_own.max_in_window / (double)limit);
    printf("  SUBWINDOWS 6: %" PRId64 " false allows, %" PRId64 " false denies; at most %" PRId64
           " admitted in a W window%s\n",
           s6_own.false_allow, s6_own.false_deny, s6_own.max_in_window, has6 ? "" : " (skipped: W is no multiple of 6)");
    printf("  SUBWINDOWS 60: %" PRId64 " false allows, %" PRId64 " false denies; at most %" PRId64
           " admitted in a W window%s\n",
           s60_own.false_allow, s60_own.false_deny, s60_own.max_in_window, has60 ? "" : " (skipped: W is no multiple of 60)");
    printf("self-checks: passed\n");

    /* Markdown rows for scripts/bench/sliding-accuracy.sh. */
    printf("md-exact: | %" PRId64 " / %" PRId64 " ms | %.2f%% | %" PRId64 " (%.1f%% of requests) | %" PRId64 " (%.4f%%) | %" PRId64 " | %" PRId64
           " | %" PRId64 " (%.4f%%) | %" PRId64 " | %" PRId64 " |\n",
           limit, window, pct(exact_denied, N), clients_limited, pct(limited_requests, N), s_ex.differ, pct(s_ex.differ, N), s_ex.false_allow,
           s_ex.false_deny, f_ex.differ, pct(f_ex.differ, N), f_ex.false_allow, f_ex.false_deny);
    printf("md-attempts: | %" PRId64 " / %" PRId64 " ms | %.2f%% | %" PRId64 " (%.4f%%) | %" PRId64 " | %" PRId64
           " | %" PRId64 " (%.4f%%) | %" PRId64 " (%.4f%%) |\n",
           limit, window, pct(attempts_denied, N), s_at.differ, pct(s_at.differ, N), s_at.false_allow,
           s_at.false_deny, f_at.differ, pct(f_at.differ, N), ex_at.differ, pct(ex_at.differ, N));
    printf("md-own: | %" PRId64 " / %" PRId64 " ms | %" PRId64 " (%.4f%%) | %" PRId64 " (%.4f%%) | %" PRId64
           " (%.2f x L) | %" PRId64 " (%.4f%%) | %" PRId64 " | %" PRId64 " (%.2f x L) |\n",
           limit, window, s_own.false_allow, pct(s_own.false_allow, N), s_own.false_deny,
           pct(s_own.false_deny, N), s_own.max_in_window,
           (double)s_own.max_in_window / (double)limit, f_own.false_allow, pct(f_own.false_allow, N),
           f_own.false_deny, f_own.max_in_window, (double)f_own.max_in_window / (double)limit);

    /* Every counter against the exact log, side by side with the state a key keeps (bytes): FIXED and
     * SLIDING 16, SUBWINDOWS n 8 * (2 + n), the exact log 8 per admitted request in the window (up to L). */
    const cmp *cols[4] = {&f_ex, &s_ex, &s6_ex, &s60_ex};
    const own *owns[4] = {&f_own, &s_own, &s6_own, &s60_own};
    const int have[4] = {1, 1, has6, has60};
    printf("md-sub: | %" PRId64 " / %" PRId64 " ms |", limit, window);
    for (int k = 0; k < 4; k++) {
        if (!have[k]) {
            printf(" n/a |");
            continue;
        }
        printf(" %.3f%% (%" PRId64 " / %" PRId64 "), max %.2f x L |", pct(cols[k]->differ, N), cols[k]->false_allow,
               cols[k]->false_deny, (double)owns[k]->max_in_window / (double)limit);
    }
    printf(" 0 (the reference), max 1.00 x L |\n");
    printf("dat: %" PRId64 "/%" PRId64 "ms", limit, window);
    for (int k = 0; k < 4; k++) printf(" %.4f", have[k] ? pct(cols[k]->differ, N) : -1.0);
    printf("\n");

    free(s6_adm.t);
    free(s60_adm.t);
    free(exact.t);
    free(s_adm.t);
    free(f_adm.t);
    free(slog);
    free(tr.t_ms);
    free(tr.first);
    return 0;

usage:
    fprintf(stderr,
            "usage: sliding-accuracy [--seed S] [--limit L] [--window-ms W] [--requests N] [--clients C] "
            "[--trace FILE]\n");
    return 1;
}
