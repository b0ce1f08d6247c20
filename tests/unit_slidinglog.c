/* unit_slidinglog.c -- the sliding log decision (algorithms/slidinglog.c) on a fake clock.
 *
 * The test plays the module: it keeps the log as a newest-first array, reads what the module would read
 * (the newest limit + 1 entries with score > now - W), calls rl_slog_decide and applies the plan. Then:
 *   1. hand-computed tables (count rule, peeks, cost above the limit, MINGAP, clock going back);
 *   2. generated traces against a reference model, an untrimmed sliding log that keeps every entry ever
 *      logged and computes every reply field by brute force (retry_after by trying each ms in turn): all
 *      reply fields must be identical, and the trimmed log never holds more than limit + 1 entries (it is
 *      exactly the newest limit + 1 entries of the reference's window);
 *   3. exactness of retry_after (one ms earlier still blocked, at the value admitted) on copies;
 *   4. a long run of blocked attempts, large limits and costs without materialising them, validation. */
#include <stdlib.h>

#include "check.h"
#define RNG_SEED 0x5eed5eedULL
#include "rng.h"
#include "../algorithms/slidinglog.h"

/* --- the test's module: a newest-first log --------------------------------------------------------- */

typedef struct tlog {
    int64_t *s; /* newest first */
    size_t n, cap;
} tlog;

static void tlog_reserve(tlog *lg, size_t n) {
    if (n <= lg->cap) return;
    size_t cap = lg->cap ? lg->cap : 16;
    while (cap < n) cap *= 2;
    lg->s = realloc(lg->s, cap * sizeof *lg->s);
    if (!lg->s) abort();
    lg->cap = cap;
}

static void tlog_copy(tlog *dst, const tlog *src) {
    tlog_reserve(dst, src->n);
    if (src->n) memcpy(dst->s, src->s, src->n * sizeof *src->s);
    dst->n = src->n;
}

static rl_request make_req(int64_t limit, int64_t window_ms, int64_t cost, int64_t mingap_ms, int64_t now_us) {
    rl_request r = {{limit, window_ms, 0}, cost, mingap_ms, 0, now_us};
    return r;
}

/* What the module reads: the newest-first prefix with score > now - W, at most limit + 1 of it. */
static size_t tlog_readable(const tlog *lg, const rl_request *req) {
    int64_t cut = req->now_us - req->params[1] * 1000;
    size_t c = 0;
    while (c < lg->n && lg->s[c] > cut) c++;
    int64_t max = rl_slog_read_max(req);
    if ((int64_t)c > max) c = (size_t)max;
    return c;
}

/* Decide without touching the log (a DRYRUN, or a probe). */
static rl_reply tlog_peek(const tlog *lg, const rl_request *req, rl_slog_plan *plan) {
    rl_reply reply;
    memset(&reply, 0x5a, sizeof reply);
    rl_slog_plan p = {-7, -7, -7};
    rl_slog_decide(req, lg->s, tlog_readable(lg, req), plan ? plan : &p, &reply);
    return reply;
}

static long plan_bad; /* plans breaking their contract (counted in one check at the end) */

/* One call: decide, then apply the plan as the module does. */
static rl_reply tlog_call(tlog *lg, const rl_request *req) {
    rl_slog_plan plan;
    size_t given = tlog_readable(lg, req);
    rl_reply reply = tlog_peek(lg, req, &plan);
    int64_t limit = req->params[0];
    if (plan.add < 0 || plan.add > req->cost || plan.keep < 0 || (size_t)plan.keep > given ||
        plan.keep + plan.add > limit + 1) {
        plan_bad++;
        fprintf(stderr, "bad plan: add %lld keep %lld (given %zu, cost %lld, limit %lld)\n",
                (long long)plan.add, (long long)plan.keep, given, (long long)req->cost, (long long)limit);
        return reply;
    }
    if (plan.add > 0 && (plan.at_us < req->now_us || (plan.keep > 0 && plan.at_us < lg->s[0]))) {
        plan_bad++;
        fprintf(stderr, "bad plan: at %lld is before now %lld or the newest entry\n", (long long)plan.at_us,
                (long long)req->now_us);
        return reply;
    }
    /* Keep the newest plan.keep entries, then add plan.add entries at plan.at_us: the newest of all. */
    size_t keep = (size_t)plan.keep, add = (size_t)plan.add;
    tlog_reserve(lg, keep + add);
    if (keep > 0) memmove(lg->s + add, lg->s, keep * sizeof *lg->s);
    for (size_t i = 0; i < add; i++) lg->s[i] = plan.at_us;
    lg->n = keep + add;
    return reply;
}

/* --- 1. tables --------------------------------------------------------------------------------------- */

typedef struct row {
    int64_t t_us, cost, mingap_ms;
    int64_t allowed, remaining, retry_ms, reset_ms;
    size_t size; /* log size after the call */
} row;

static void run_table(const char *name, int64_t limit, int64_t window_ms, const row *rows, size_t nrows) {
    tlog lg = {0};
    for (size_t i = 0; i < nrows; i++) {
        const row *r = &rows[i];
        rl_request req = make_req(limit, window_ms, r->cost, r->mingap_ms, r->t_us);
        rl_reply got = tlog_call(&lg, &req);
        int ok = got.allowed == r->allowed && got.limit == limit && got.remaining == r->remaining &&
                 got.retry_after_ms == r->retry_ms && got.reset_after_ms == r->reset_ms && got.wait_ms == 0 &&
                 lg.n == r->size;
        if (!check_record(ok, __FILE__, __LINE__, name))
            fprintf(stderr,
                    "     row %zu: got allowed %lld remaining %lld retry %lld reset %lld size %zu, expected "
                    "%lld %lld %lld %lld %zu\n",
                    i + 1, (long long)got.allowed, (long long)got.remaining, (long long)got.retry_after_ms,
                    (long long)got.reset_after_ms, lg.n, (long long)r->allowed, (long long)r->remaining,
                    (long long)r->retry_ms, (long long)r->reset_ms, r->size);
    }
    free(lg.s);
}

#define S 1000000LL /* one second in µs */

static void test_tables(void) {
    /* limit 3 in 1 s, no MINGAP. */
    static const row count_rows[] = {
        /* t           cost gap  allowed rem retry reset size */
        {1 * S, 1, 0, 1, 2, -1, 1000, 1},
        {1200000, 1, 0, 1, 1, -1, 1000, 2},
        {1400000, 2, 0, 0, 0, 1000, 1000, 4},     /* 2 + 2 > 3; the 2nd newest (1.4) leaves at 2.4 */
        {1400000, 0, 0, 0, 0, 600, 1000, 4},      /* peek: 4 > 3; the 4th newest (1.0) leaves at 2.0 */
        {2 * S, 0, 0, 1, 0, -1, 400, 3},          /* 1.0 has left: 3 <= 3; newest 1.4 leaves at 2.4 */
        {2000001, 1, 0, 0, 0, 400, 1000, 4},      /* 3 + 1 > 3; 1.4 leaves at 2.4: 399.999 ms */
        {2200000, 1, 0, 0, 0, 200, 1000, 4},      /* 1.2 has left, blocked again, log {2.2 2.000001 1.4 1.4} */
        {2400000, 1, 0, 1, 0, -1, 1000, 3},       /* both 1.4 left */
        {2400000, 5, 0, 0, 0, -1, 1000, 4},       /* cost > limit: never; logs limit+1 copies of 2.4 */
        {3399999, 1, 0, 0, 0, 1, 1000, 4},        /* 4 copies of 2.4 in the window: 1 µs to go */
        {3400000, 1, 0, 1, 1, -1, 1000, 2},       /* only 3.399999 left */
        {3400000, 0, 0, 1, 1, -1, 1000, 2},       /* a peek admitted adds nothing */
        {4400000, 0, 0, 1, 3, -1, 0, 0},          /* everything left: empty, key deleted */
    };
    run_table("count rows", 3, 1000, count_rows, sizeof count_rows / sizeof *count_rows);

    /* limit 5 in 1 s, MINGAP shorter and longer than the window. */
    static const row gap_rows[] = {
        {10 * S, 1, 300, 1, 4, -1, 1000, 1},
        {10100000, 1, 300, 0, 3, 300, 1000, 2},   /* 100 ms after 10.0: until 10.1 + 300 ms */
        {10400000, 1, 300, 1, 2, -1, 1000, 3},    /* exactly 300 ms after 10.1 */
        {10500000, 0, 300, 0, 2, 200, 900, 3},    /* a peek obeys MINGAP: 10.4 + 300 ms = 10.7 */
        {10500000, 0, 0, 1, 2, -1, 900, 3},       /* without MINGAP the peek passes */
        {10500000, 1, 2000, 0, 1, 1000, 1000, 4}, /* MINGAP 2 s > window: acts as the window */
        {11499999, 1, 2000, 0, 3, 1000, 1000, 2}, /* only 10.5 in the window, 999.999 ms old */
        {12499999, 1, 2000, 1, 4, -1, 1000, 1},   /* 11.499999 has just left: the gap no longer counts */
        {12500000, 1, 1, 0, 3, 1, 1000, 2},       /* 1 µs after the newest, MINGAP 1 ms: at 12.501 */
        {12501000, 1, 1, 1, 2, -1, 1000, 3},
        {12501000, 2, 1, 0, 0, 999, 1000, 5},     /* both rules: count until 13.5 (12.5 must leave), gap
                                                     until 12.502 */
    };
    run_table("mingap rows", 5, 1000, gap_rows, sizeof gap_rows / sizeof *gap_rows);

    /* limit 2 in 100 ms, the clock going back: calls behind the newest entry (5.0) are decided and
     * logged at 5.0, as if the clock had held still; durations are measured from the real now. */
    static const row back_rows[] = {
        {5 * S, 1, 0, 1, 1, -1, 100, 1},
        {4900000, 1, 0, 1, 0, -1, 200, 2},        /* decided at 5.0: {5.0 5.0}; reset 5.1 - 4.9 */
        {4950000, 1, 0, 0, 0, 150, 150, 3},       /* {5.0 x3}: the 2nd newest leaves at 5.1 */
        {4950000, 0, 10, 0, 0, 150, 150, 3},      /* peek: the 3rd newest leaves at 5.1 (gap: 5.01) */
        {5 * S, 2, 0, 0, 0, 100, 100, 3},         /* {5.0 5.0 5.0} */
        {4 * S, 1, 0, 0, 0, 1100, 1100, 3},       /* decided at 5.0, blocked until 5.1 */
        {4 * S, 0, 0, 0, 0, 1100, 1100, 3},
        {5100000, 1, 0, 1, 1, -1, 100, 1},        /* 5.0 entries left the window at 5.1 */
    };
    run_table("clock-back rows", 2, 100, back_rows, sizeof back_rows / sizeof *back_rows);

    /* A call behind the newest entry is decided at its time: MINGAP then blocks until the clock has
     * passed that entry by MINGAP. */
    static const row future_gap_rows[] = {
        {5 * S, 1, 0, 1, 9, -1, 100, 1},
        {4 * S, 1, 1, 0, 8, 1001, 1100, 2},       /* decided and logged at 5.0 */
        {5000999, 0, 1, 0, 8, 1, 100, 2},         /* 999 µs after 5.0: the gap is not over */
        {5001000, 1, 1, 1, 7, -1, 100, 3},
    };
    run_table("future mingap rows", 10, 100, future_gap_rows, sizeof future_gap_rows / sizeof *future_gap_rows);
}

/* --- 2. the reference model ------------------------------------------------------------------------ */

/* Every entry ever logged, in no particular order. With forget set, a call first removes the entries
 * with score <= now - W, as the sorted set does (the only difference from keeping them all is when the
 * clock goes back past a removal). */
typedef struct ref {
    int64_t *s;
    size_t n, cap;
} ref;

static void ref_push(ref *r, int64_t v) {
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 64;
        r->s = realloc(r->s, r->cap * sizeof *r->s);
        if (!r->s) abort();
    }
    r->s[r->n++] = v;
}

static int ref_admits(const ref *r, int64_t t, int64_t cost, int64_t limit, int64_t w_us, int64_t g_us) {
    if (cost > limit) return 0;
    int64_t c = 0, newest = INT64_MIN;
    for (size_t i = 0; i < r->n; i++)
        if (r->s[i] > t - w_us) {
            c++;
            if (r->s[i] > newest) newest = r->s[i];
        }
    if (c + cost > limit) return 0;
    if (g_us > 0 && c > 0 && t - newest < g_us) return 0;
    return 1;
}

/* The newest entry the reference holds (INT64_MIN when empty). */
static int64_t ref_newest(const ref *r) {
    int64_t newest = INT64_MIN;
    for (size_t i = 0; i < r->n; i++)
        if (r->s[i] > newest) newest = r->s[i];
    return newest;
}

/* The log's clock never runs back: a call at now is decided at max(now, newest entry). */
static int64_t ref_time(const ref *r, int64_t now) {
    int64_t newest = ref_newest(r);
    return newest > now ? newest : now;
}

static rl_reply ref_call(ref *r, const rl_request *req, int forget) {
    int64_t limit = req->params[0], w_us = req->params[1] * 1000, g_us = req->mingap_ms * 1000;
    int64_t now = req->now_us, t = ref_time(r, now), cost = req->cost;
    if (forget) {
        size_t j = 0;
        for (size_t i = 0; i < r->n; i++)
            if (r->s[i] > t - w_us) r->s[j++] = r->s[i];
        r->n = j;
    }
    rl_reply out = {0};
    out.allowed = ref_admits(r, t, cost, limit, w_us, g_us);
    for (int64_t i = 0; i < cost; i++) ref_push(r, t);
    out.limit = limit;
    out.wait_ms = 0;
    int64_t c = 0, newest = INT64_MIN;
    for (size_t i = 0; i < r->n; i++)
        if (r->s[i] > t - w_us) {
            c++;
            if (r->s[i] > newest) newest = r->s[i];
        }
    out.remaining = limit - c > 0 ? limit - c : 0;
    int64_t idle = c > 0 ? newest + w_us - now : 0;
    out.reset_after_us = idle;
    out.reset_after_ms = (idle + 999) / 1000;
    out.retry_after_ms = -1;
    if (!out.allowed && cost <= limit) {
        /* Try each ms up to the one where every entry has left the window (then the log is empty and
         * any cost <= limit passes). */
        int64_t last = INT64_MIN;
        for (size_t i = 0; i < r->n; i++)
            if (r->s[i] > last) last = r->s[i];
        int64_t horizon_ms = (last + w_us - now) / 1000 + 1;
        out.retry_after_ms = -2; /* not found within the horizon: a failure */
        for (int64_t k = 0; k <= horizon_ms; k++)
            if (ref_admits(r, ref_time(r, now + k * 1000), cost, limit, w_us, g_us)) {
                out.retry_after_ms = k;
                break;
            }
    }
    return out;
}

/* --- pseudo-random traces --------------------------------------------------------------------------- */

static int same_reply(const rl_reply *a, const rl_reply *b) {
    return a->allowed == b->allowed && a->limit == b->limit && a->remaining == b->remaining &&
           a->retry_after_ms == b->retry_after_ms && a->reset_after_ms == b->reset_after_ms &&
           a->wait_ms == b->wait_ms && a->reset_after_us == b->reset_after_us;
}

static void print_reply(const char *who, const rl_reply *r) {
    fprintf(stderr, "     %s: allowed %lld limit %lld remaining %lld retry %lld reset %lld wait %lld reset_us %lld\n",
            who, (long long)r->allowed, (long long)r->limit, (long long)r->remaining,
            (long long)r->retry_after_ms, (long long)r->reset_after_ms, (long long)r->wait_ms,
            (long long)r->reset_after_us);
}

static int cmp_desc(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* The trimmed log must be exactly the newest limit + 1 entries of the reference's window. */
static int trimmed_is_prefix(const tlog *lg, const ref *r, int64_t now, int64_t w_us, int64_t limit,
                             int64_t **scratch, size_t *scratch_cap) {
    if (*scratch_cap < r->n) {
        *scratch_cap = r->n * 2;
        *scratch = realloc(*scratch, *scratch_cap * sizeof **scratch);
        if (!*scratch) abort();
    }
    size_t c = 0;
    for (size_t i = 0; i < r->n; i++)
        if (r->s[i] > now - w_us) (*scratch)[c++] = r->s[i];
    if (c > 1) qsort(*scratch, c, sizeof **scratch, cmp_desc);
    size_t want = c < (size_t)limit + 1 ? c : (size_t)limit + 1;
    if (lg->n != want) return 0;
    for (size_t i = 0; i < want; i++)
        if (lg->s[i] != (*scratch)[i]) return 0;
    return 1;
}

typedef struct trace_stats {
    long steps, blocked, allowed, probes, max_ref_size;
} trace_stats;

static long exact_bad, prefix_bad, size_bad, mismatch, monotone_bad;

/* retry_after_ms r of a blocked reply: at t + (r-1) ms still blocked, at t + r ms admitted (on copies
 * of the log as it is after the call). */
static void probe_retry(const tlog *lg, const rl_request *req, int64_t retry_ms, tlog *scratch,
                        trace_stats *st) {
    if (retry_ms < 0) return;
    st->probes++;
    tlog_copy(scratch, lg);
    rl_request early = *req, on = *req;
    early.now_us += (retry_ms - 1) * 1000;
    on.now_us += retry_ms * 1000;
    rl_reply a = tlog_call(scratch, &early);
    tlog_copy(scratch, lg);
    rl_reply b = tlog_call(scratch, &on);
    if (retry_ms < 1 || a.allowed || !b.allowed) {
        if (exact_bad++ < 5)
            fprintf(stderr, "retry %lld not exact: at -1 ms allowed %lld, at retry allowed %lld\n",
                    (long long)retry_ms, (long long)a.allowed, (long long)b.allowed);
    }
}

/* One generated trace. back: the clock sometimes steps back (the reference then forgets as the sorted
 * set does, and the monotonicity of admission in time is checked). */
static void run_trace(int trace_no, int back, int steps, trace_stats *st) {
    static const int64_t limits[] = {1, 2, 3, 4, 5, 8, 13};
    static const int64_t windows[] = {1, 2, 3, 5, 8, 20};
    int64_t limit = limits[rng() % (sizeof limits / sizeof *limits)];
    int64_t window_ms = windows[rng() % (sizeof windows / sizeof *windows)];
    int64_t w_us = window_ms * 1000;
    int64_t t = 1700000000000000LL + rng_range(0, 999999);

    tlog lg = {0}, scratch = {0};
    ref r = {0};
    int64_t *sorted = NULL;
    size_t sorted_cap = 0;

    for (int step = 0; step < steps; step++) {
        /* Bursty times: many at the same µs, some µs apart, some within the window, some gaps. */
        int64_t u = rng_range(0, 99);
        if (u < 25) {
        } else if (u < 45) {
            t += rng_range(1, 50);
        } else if (u < 75) {
            t += rng_range(0, w_us);
        } else if (u < 85) {
            t += rng_range(0, w_us / 3);
        } else if (u < 93 || !back) {
            t += rng_range(w_us, 3 * w_us);
        } else {
            t -= rng_range(1, 2 * w_us);
        }
        /* Costs: peeks, one, several, just above the limit, far above. */
        int64_t cost;
        u = rng_range(0, 99);
        if (u < 15) cost = 0;
        else if (u < 55) cost = 1;
        else if (u < 80) cost = rng_range(1, limit);
        else if (u < 92) cost = limit + rng_range(1, 2);
        else cost = rng_range(limit + 3, 3 * limit + 5);
        /* MINGAP: none, shorter than, equal to, longer than the window. */
        int64_t gap;
        u = rng_range(0, 99);
        if (u < 35) gap = 0;
        else if (u < 60) gap = rng_range(1, window_ms);
        else if (u < 70) gap = window_ms;
        else gap = rng_range(window_ms + 1, 3 * window_ms);

        rl_request req = make_req(limit, window_ms, cost, gap, t);

        if (back) { /* for this log, admitted earlier => admitted later */
            rl_request later = req;
            later.now_us += rng_range(0, 2 * w_us);
            if (tlog_peek(&lg, &req, NULL).allowed && !tlog_peek(&lg, &later, NULL).allowed) monotone_bad++;
        }

        rl_reply want = ref_call(&r, &req, back);
        rl_reply got = tlog_call(&lg, &req);
        st->steps++;
        if (got.allowed) st->allowed++;
        else st->blocked++;
        if ((long)r.n > st->max_ref_size) st->max_ref_size = (long)r.n;

        if (!same_reply(&got, &want)) {
            if (mismatch++ < 5) {
                fprintf(stderr, "trace %d (limit %lld window %lld ms%s) step %d: t %lld cost %lld mingap %lld\n",
                        trace_no, (long long)limit, (long long)window_ms, back ? ", clock back" : "", step,
                        (long long)t, (long long)cost, (long long)gap);
                print_reply("trimmed  ", &got);
                print_reply("reference", &want);
            }
        }
        if (lg.n > (size_t)limit + 1) size_bad++;
        if (!trimmed_is_prefix(&lg, &r, t, w_us, limit, &sorted, &sorted_cap)) {
            if (prefix_bad++ < 5)
                fprintf(stderr, "trace %d step %d: trimmed log is not the newest limit+1 of the window\n",
                        trace_no, step);
        }
        if (!got.allowed) probe_retry(&lg, &req, got.retry_after_ms, &scratch, st);
    }
    free(lg.s);
    free(scratch.s);
    free(r.s);
    free(sorted);
}

static void test_traces(void) {
    trace_stats st = {0};
    long before_mismatch = mismatch;
    for (int i = 0; i < 600; i++) run_trace(i, 0, 250, &st);
    for (int i = 0; i < 400; i++) run_trace(1000 + i, 1, 250, &st);
    CHECK_EQ(mismatch - before_mismatch, 0);
    CHECK_EQ(size_bad, 0);
    CHECK_EQ(prefix_bad, 0);
    CHECK_EQ(exact_bad, 0);
    CHECK_EQ(monotone_bad, 0);
    CHECK_EQ(plan_bad, 0);
    /* The traces do exercise both outcomes and the probes. */
    CHECK(st.allowed > 1000 && st.blocked > 1000 && st.probes > 1000);
    printf("traces: %ld steps (%ld allowed, %ld blocked), %ld retry probes, reference log up to %ld entries\n",
           st.steps, st.allowed, st.blocked, st.probes, st.max_ref_size);
}

/* --- 4. the rest ------------------------------------------------------------------------------------ */

/* 10^5 blocked attempts (costs 1 and 3, peeks, the same µs and 1 µs apart) never grow the log. */
static void test_hammering(void) {
    tlog lg = {0};
    int64_t limit = 4, t = 1700000000000000LL;
    long blocked = 0, too_big = 0;
    for (long i = 0; i < 100000; i++) {
        rl_request req = make_req(limit, 60000, i % 3 == 0 ? 3 : i % 7 == 0 ? 0 : 1, i % 2 ? 10 : 0, t);
        rl_reply rep = tlog_call(&lg, &req);
        if (i >= 4 && !rep.allowed) blocked++;
        if (lg.n > (size_t)limit + 1) too_big++;
        t += i % 5 == 0 ? 0 : 1;
    }
    CHECK_EQ(blocked, 100000 - 4);
    CHECK_EQ(too_big, 0);
    CHECK_EQ(lg.n, limit + 1);
    CHECK_EQ(plan_bad, 0);
    free(lg.s);
}

/* Huge limits and costs: nothing is proportional to them. */
static void test_large(void) {
    rl_slog_plan plan;
    rl_reply rep;
    int64_t now = RL_MAX_TIME_US;
    rl_request req = make_req(RL_MAX_COUNT, RL_MAX_PERIOD_MS, RL_MAX_COUNT, RL_MAX_PERIOD_MS, now);
    CHECK_EQ(rl_slog_read_max(&req), RL_MAX_COUNT + 1);

    rl_slog_decide(&req, NULL, 0, &plan, &rep); /* empty log, cost = limit = 10^12 */
    CHECK_EQ(rep.allowed, 1);
    CHECK_EQ(plan.add, RL_MAX_COUNT);
    CHECK_EQ(plan.keep, 0);
    CHECK_EQ(rep.remaining, 0);
    CHECK_EQ(rep.retry_after_ms, -1);
    CHECK_EQ(rep.reset_after_ms, RL_MAX_PERIOD_MS);
    CHECK_EQ(rep.reset_after_us, RL_MAX_PERIOD_MS * 1000);

    int64_t log1[2] = {now - 5, now - RL_MAX_PERIOD_MS * 1000 + 1};
    req.cost = 1; /* two entries, one in its last µs; MINGAP = window */
    rl_slog_decide(&req, log1, 2, &plan, &rep);
    CHECK_EQ(rep.allowed, 0);
    CHECK_EQ(plan.add, 1);
    CHECK_EQ(plan.keep, 2);
    CHECK_EQ(rep.remaining, RL_MAX_COUNT - 3);
    CHECK_EQ(rep.retry_after_ms, RL_MAX_PERIOD_MS); /* the gap: now + W */
    CHECK_EQ(rep.reset_after_ms, RL_MAX_PERIOD_MS);

    req.params[0] = RL_MAX_COUNT - 1; /* cost above the limit: never, limit + 1 entries written */
    req.cost = RL_MAX_COUNT;
    req.mingap_ms = 0;
    rl_slog_decide(&req, log1, 2, &plan, &rep);
    CHECK_EQ(rep.allowed, 0);
    CHECK_EQ(rep.retry_after_ms, -1);
    CHECK_EQ(plan.add, RL_MAX_COUNT);
    CHECK_EQ(plan.keep, 0);
    CHECK_EQ(rep.remaining, 0);

    req.params[0] = INT64_MAX;
    CHECK_EQ(rl_slog_read_max(&req), INT64_MAX);
}

/* Entries read past the window's edge (not expected from the module) are ignored, not counted. */
static void test_stale_input(void) {
    rl_slog_plan plan;
    rl_reply rep;
    int64_t log1[3] = {9000, 5000, 1000}; /* window 5 ms at 10000: 5000 has left */
    rl_request req = make_req(2, 5, 1, 0, 10000);
    rl_slog_decide(&req, log1, 3, &plan, &rep);
    CHECK_EQ(rep.allowed, 1);
    CHECK_EQ(plan.keep, 1);
    CHECK_EQ(plan.add, 1);
    CHECK_EQ(rep.remaining, 0);
    CHECK_EQ(rep.reset_after_ms, 5);
}

int main(void) {
    test_tables();
    test_traces();
    test_hammering();
    test_large();
    test_stale_input();
    return check_summary("unit_slidinglog");
}
