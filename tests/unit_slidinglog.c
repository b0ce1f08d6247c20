/* unit_slidinglog.c -- the sliding log decision (algorithms/slidinglog.c) on a fake clock.
 *
 * The test plays the module: it keeps the log as a newest-first array of weighted entries (one per
 * attempt, as the sorted set holds them; an entry of weight 1 is also what a user's ZADD or an earlier
 * version's one-member-per-unit log leaves), calls rl_slog_decide and applies the plan as
 * module/store_log.c does: a refund's plan.drop newest units go (the newest entry left may keep part of its
 * weight), entries above now move to now (merged with the new ones), the newest plan.keep units are kept
 * (the oldest kept entry may keep part of its weight), plan.add units are added at now.
 * Then:
 *   1. hand-computed tables (count rule, peeks, cost above the limit, MINGAP, clock going back, REFUND);
 *   2. generated traces against a reference model, an untrimmed sliding log of one entry per unit (kept
 *      as runs of equal scores) that computes every reply field by brute force (retry_after by trying
 *      each ms in turn): all reply fields must be identical, and the trimmed log never holds more than
 *      limit + 1 units (it is exactly the newest limit + 1 units of the reference's window). Limits and
 *      costs go up to 10^5; some traces start from a log of weight-1 entries (an earlier version's log, or
 *      a user's members), some of them in the future; some steps are refunds (the reference removes the
 *      newest n of the newest limit + 1 units of its window, and forgets the units beyond those, which
 *      the trimmed log no longer holds: slidinglog.c, "REFUND n");
 *   3. exactness of retry_after (one ms earlier still blocked, at the value admitted) on copies;
 *   4. a long run of blocked attempts, large limits and costs without materialising them, validation;
 *   5. refunds: the undo of an admitted attempt, two refunds against one of their sum, a refund of 0
 *      against COST 0, and never less room later than without the refund.
 * FORCE: a table (admitted whatever the log, MINGAP included; a cost above limit + 1 logs limit + 1 units),
 * and forced steps in the traces, where the reference logs every unit: the trimmed log must still answer
 * exactly as it does and be the newest limit + 1 units of its window (slidinglog.c, "FORCE"). */
#include <stdlib.h>

#include "check.h"
#define RNG_SEED 0x5eed5eedULL
#include "rng.h"
#include "../algorithms/slidinglog.h"

/* --- the test's module: a newest-first log of weighted entries ----------------------------------- */

typedef struct tlog {
    rl_slog_entry *e; /* newest first */
    size_t n, cap;
} tlog;

static void tlog_reserve(tlog *lg, size_t n) {
    if (n <= lg->cap) return;
    size_t cap = lg->cap ? lg->cap : 16;
    while (cap < n) cap *= 2;
    lg->e = realloc(lg->e, cap * sizeof *lg->e);
    if (!lg->e) abort();
    lg->cap = cap;
}

static void tlog_copy(tlog *dst, const tlog *src) {
    tlog_reserve(dst, src->n);
    if (src->n) memcpy(dst->e, src->e, src->n * sizeof *src->e);
    dst->n = src->n;
}

static int64_t tlog_units(const tlog *lg) {
    int64_t u = 0;
    for (size_t i = 0; i < lg->n; i++) u += lg->e[i].weight;
    return u;
}

static rl_request make_req(int64_t limit, int64_t window_ms, int64_t cost, int64_t mingap_ms, int64_t now_us) {
    rl_request r = {.params = {limit, window_ms, 0}, .cost = cost, .mingap_ms = mingap_ms, .now_us = now_us};
    return r;
}

/* REFUND n instead of COST n. */
static rl_request make_refund(int64_t limit, int64_t window_ms, int64_t n, int64_t mingap_ms, int64_t now_us) {
    rl_request r = {.params = {limit, window_ms, 0},
                    .cost = n, .mingap_ms = mingap_ms, .flags = RL_F_REFUND, .now_us = now_us};
    return r;
}

/* Units with score > now - W (scores above now counting as now), at most limit + 1. */
static int64_t tlog_in_window(const tlog *lg, const rl_request *req) {
    int64_t cut = req->now_us - req->params[1] * 1000, c = 0;
    for (size_t i = 0; i < lg->n && lg->e[i].at_us > cut; i++) c += lg->e[i].weight;
    int64_t max = rl_slog_read_max(req);
    return c < max ? c : max;
}

/* Decide without touching the log (a DRYRUN, or a probe). */
static rl_reply tlog_peek(const tlog *lg, const rl_request *req, rl_slog_plan *plan) {
    rl_reply reply;
    memset(&reply, 0x5a, sizeof reply);
    rl_slog_plan p = {-7, -7, -7, -7};
    rl_slog_decide(req, lg->e, lg->n, plan ? plan : &p, &reply);
    return reply;
}

static long plan_bad; /* plans breaking their contract (counted in one check at the end) */

/* Apply a plan as the module does: the newest `drop` units go (the highest scores first, the entry left
 * cut), then one entry at now holding the new units and those at or above now that are kept, then the
 * older entries down to `keep` units, the last one cut. */
static void tlog_apply(tlog *lg, int64_t now, const rl_slog_plan *plan) {
    int64_t keep = plan->keep, front = 0, drop = plan->drop;
    size_t i = 0;
    while (drop > 0 && i < lg->n) {
        if (lg->e[i].weight <= drop) {
            drop -= lg->e[i++].weight;
        } else {
            lg->e[i].weight -= drop;
            drop = 0;
        }
    }
    while (i < lg->n && lg->e[i].at_us >= now) front += lg->e[i++].weight;
    if (front > keep) front = keep;
    keep -= front;
    tlog out = {0};
    tlog_reserve(&out, lg->n + 1);
    if (plan->add + front > 0) out.e[out.n++] = (rl_slog_entry){now, plan->add + front};
    for (; i < lg->n && keep > 0; i++) {
        int64_t w = lg->e[i].weight < keep ? lg->e[i].weight : keep;
        out.e[out.n++] = (rl_slog_entry){lg->e[i].at_us, w};
        keep -= w;
    }
    free(lg->e);
    *lg = out;
}

/* One call: decide, check the plan's contract, apply it. */
static rl_reply tlog_call(tlog *lg, const rl_request *req) {
    rl_slog_plan plan;
    int64_t c = tlog_in_window(lg, req), cap = rl_slog_read_max(req);
    rl_reply reply = tlog_peek(lg, req, &plan);
    int refund = (req->flags & RL_F_REFUND) != 0;
    int64_t limit = req->params[0], want_add = refund || req->cost > limit ? 0 : req->cost;
    if (req->flags & RL_F_FORCE) want_add = req->cost < cap ? req->cost : cap; /* all at now: the newest cap */
    int64_t want_drop = refund ? (req->cost < c ? req->cost : c) : 0;
    int64_t want_keep = refund ? c - want_drop : c < cap - want_add ? c : cap - want_add;
    if (plan.add != want_add || plan.keep != want_keep || plan.drop != want_drop || plan.keep + plan.add > limit + 1 ||
        plan.at_us != req->now_us) {
        plan_bad++;
        fprintf(stderr,
                "bad plan: add %lld keep %lld drop %lld at %lld (in window %lld, %s %lld, limit %lld, now %lld)\n",
                (long long)plan.add, (long long)plan.keep, (long long)plan.drop, (long long)plan.at_us, (long long)c,
                refund ? "refund" : "cost", (long long)req->cost, (long long)limit, (long long)req->now_us);
        return reply;
    }
    tlog_apply(lg, req->now_us, &plan);
    return reply;
}

/* --- 1. tables --------------------------------------------------------------------------------------- */

typedef struct row {
    int64_t t_us, cost, mingap_ms;
    int64_t allowed, remaining, retry_ms, reset_ms;
    int64_t units; /* log size (units) after the call */
} row;

/* A row of a table with refunds: REFUND r.cost instead of COST r.cost when refund is set (RF), COST r.cost
 * FORCE when it is FO. */
typedef struct refund_row {
    row r;
    int refund;
} refund_row;
#define RF 1
#define FO 2

/* One call of a table on lg, checked against its row (row number i + 1). */
static void run_row(tlog *lg, const char *name, int64_t limit, int64_t window_ms, const row *r, int refund, size_t i) {
    rl_request req = refund == RF ? make_refund(limit, window_ms, r->cost, r->mingap_ms, r->t_us)
                                  : make_req(limit, window_ms, r->cost, r->mingap_ms, r->t_us);
    if (refund == FO) req.flags |= RL_F_FORCE;
    rl_reply got = tlog_call(lg, &req);
    int64_t units = tlog_units(lg);
    int ok = got.allowed == r->allowed && got.limit == limit && got.remaining == r->remaining &&
             got.retry_after_ms == r->retry_ms && got.reset_after_ms == r->reset_ms && got.wait_ms == 0 &&
             got.granted == (refund == RF || !got.allowed ? 0 : r->cost) && units == r->units;
    if (!check_record(ok, __FILE__, __LINE__, name))
        fprintf(stderr,
                "     row %zu: got allowed %lld remaining %lld retry %lld reset %lld units %lld, expected "
                "%lld %lld %lld %lld %lld\n",
                i + 1, (long long)got.allowed, (long long)got.remaining, (long long)got.retry_after_ms,
                (long long)got.reset_after_ms, (long long)units, (long long)r->allowed, (long long)r->remaining,
                (long long)r->retry_ms, (long long)r->reset_ms, (long long)r->units);
}

static void run_table(const char *name, int64_t limit, int64_t window_ms, const row *rows, size_t nrows) {
    tlog lg = {0};
    for (size_t i = 0; i < nrows; i++) run_row(&lg, name, limit, window_ms, &rows[i], 0, i);
    free(lg.e);
}

static void run_refund_table(const char *name, int64_t limit, int64_t window_ms, const refund_row *rows, size_t nrows) {
    tlog lg = {0};
    for (size_t i = 0; i < nrows; i++) run_row(&lg, name, limit, window_ms, &rows[i].r, rows[i].refund, i);
    free(lg.e);
}

#define S 1000000LL /* one second in µs */

static void test_tables(void) {
    /* limit 3 in 1 s, no MINGAP. */
    static const row count_rows[] = {
        /* t           cost gap  allowed rem retry reset units */
        {1 * S, 1, 0, 1, 2, -1, 1000, 1},
        {1200000, 1, 0, 1, 1, -1, 1000, 2},
        {1400000, 2, 0, 0, 0, 1000, 1000, 4},     /* 2 + 2 > 3; the 2nd newest (1.4) leaves at 2.4 */
        {1400000, 0, 0, 0, 0, 600, 1000, 4},      /* peek: 4 > 3; the 4th newest (1.0) leaves at 2.0 */
        {2 * S, 0, 0, 1, 0, -1, 400, 3},          /* 1.0 has left: 3 <= 3; newest 1.4 leaves at 2.4 */
        {2000001, 1, 0, 0, 0, 400, 1000, 4},      /* 3 + 1 > 3; 1.4 leaves at 2.4: 399.999 ms */
        {2200000, 1, 0, 0, 0, 200, 1000, 4},      /* 1.2 has left, blocked again, log {2.2 2.000001 1.4 1.4} */
        {2400000, 1, 0, 1, 0, -1, 1000, 3},       /* both 1.4 left */
        {2400000, 5, 0, 0, 0, -1, 1000, 3},       /* cost > limit: never, and not logged */
        {3399999, 1, 0, 1, 1, -1, 1000, 2},       /* only 2.4 is in the window: the cost 5 locked nothing */
        {3400000, 1, 0, 1, 1, -1, 1000, 2},       /* 2.4 has left: {3.4 3.399999} */
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

    /* limit 2 in 100 ms, the clock going back: entries above now count as logged now (and are moved
     * there), the call decides and logs at now. */
    static const row back_rows[] = {
        {5 * S, 1, 0, 1, 1, -1, 100, 1},
        {4900000, 1, 0, 1, 0, -1, 100, 2},        /* 5.0 counts as 4.9: {4.9 4.9} */
        {4950000, 1, 0, 0, 0, 50, 100, 3},        /* {4.95 4.9 4.9}: the 2nd newest leaves at 5.0 */
        {4950000, 0, 10, 0, 0, 50, 100, 3},       /* peek: the 3rd newest leaves at 5.0 (gap: 4.96) */
        {5 * S, 2, 0, 0, 0, 100, 100, 3},         /* both 4.9 left; {5.0 5.0 4.95} */
        {4 * S, 1, 0, 0, 0, 100, 100, 3},         /* back 1 s: all three count as 4.0: {4.0 x3} */
        {4 * S, 0, 0, 0, 0, 100, 100, 3},
        {4100000, 1, 0, 1, 1, -1, 100, 1},        /* all left at 4.1 (a clock that held still at 5.0 would
                                                     block until 5.1: the price of the rule) */
    };
    run_table("clock-back rows", 2, 100, back_rows, sizeof back_rows / sizeof *back_rows);

    /* An entry above now counts as now, for MINGAP too: the gap runs from now. */
    static const row future_gap_rows[] = {
        {5 * S, 1, 0, 1, 9, -1, 100, 1},
        {4 * S, 1, 1, 0, 8, 1, 100, 2},           /* 5.0 counts as 4.0: 0 µs old; logged at 4.0 */
        {4000999, 0, 1, 0, 8, 1, 100, 2},         /* 999 µs after 4.0: the gap is not over */
        {4001000, 1, 1, 1, 7, -1, 100, 3},
    };
    run_table("future mingap rows", 10, 100, future_gap_rows, sizeof future_gap_rows / sizeof *future_gap_rows);

    /* REFUND n, limit 5 in 1 s: the newest min(n, c) units of the window go (c at most limit + 1), nothing
     * is logged; always allowed (retry -1, wait 0, granted 0); remaining and reset describe the log after. */
    static const refund_row refund_rows[] = {
        /* t           n  gap  allowed rem retry reset units refund */
        {{20 * S, 2, 0, 1, 3, -1, 1000, 2}, 0},
        {{20200000, 2, 0, 1, 1, -1, 1000, 4}, 0},     /* {20.2*2 20.0*2} */
        {{20300000, 1, 0, 1, 2, -1, 900, 3}, RF},     /* one of 20.2 goes: {20.2 20.0*2}; 20.2 leaves at 21.2 */
        {{20300000, 0, 0, 1, 2, -1, 900, 3}, RF},     /* a refund of 0 changes nothing */
        {{20400000, 2, 0, 1, 4, -1, 600, 1}, RF},     /* 20.2 and one of 20.0: {20.0} */
        /* 1 + 5 > 5: blocked and logged {20.5*5 20.0}; cost 5 needs the newest out: 1000 */
        {{20500000, 5, 0, 0, 0, 1000, 1000, 6}, 0},
        /* c = 6 (limit + 1), blocked, logged; the cap keeps the newest 6: {20.5*6}, 20.0 is forgotten */
        {{20500000, 1, 0, 0, 0, 1000, 1000, 6}, 0},
        /* 3 of the 6 go: {20.5*3}. (A log that kept 20.0 would hold 4: remaining 1. The cap forgot it.) */
        {{20600000, 3, 0, 1, 2, -1, 900, 3}, RF},
        {{20600000, 100, 0, 1, 5, -1, 0, 0}, RF},     /* more than the log holds: empty, idle */
        {{20600000, 1, 0, 1, 5, -1, 0, 0}, RF},       /* on an empty log: nothing */
        {{20700000, 1, 300, 1, 4, -1, 1000, 1}, 0},
        {{20800000, 1, 300, 1, 5, -1, 0, 0}, RF},     /* MINGAP has no say in a refund */
        {{20800000, 1, 300, 1, 4, -1, 1000, 1}, 0},   /* the log is empty again: no newest entry, no gap */
        {{21 * S, 2, 0, 1, 2, -1, 1000, 3}, 0},       /* {21.0*2 20.8} */
        /* 20.8 has left (trimmed, as by every call): c = 2, one goes: {21.0}, leaving at 22.0 */
        {{21900000, 1, 0, 1, 4, -1, 100, 1}, RF},
        {{21900000, 5, 0, 1, 5, -1, 0, 0}, RF},
    };
    run_refund_table("refund rows", 5, 1000, refund_rows, sizeof refund_rows / sizeof *refund_rows);

    /* A refund after the clock stepped back: the entries above now count as now, and the newest go first;
     * limit 3 in 100 ms. */
    static const refund_row refund_back_rows[] = {
        {{5 * S, 2, 0, 1, 1, -1, 100, 2}, 0},
        {{5010000, 1, 0, 1, 0, -1, 100, 3}, 0},       /* {5.01 5.0*2} */
        {{4900000, 1, 0, 1, 1, -1, 100, 2}, RF},      /* all three count as 4.9; one goes: {4.9*2} */
        {{4950000, 1, 0, 1, 2, -1, 50, 1}, RF},       /* {4.9}, leaving at 5.0 */
        {{4950000, 2, 0, 1, 0, -1, 100, 3}, 0},       /* {4.95*2 4.9} */
        {{4999999, 3, 0, 1, 3, -1, 0, 0}, RF},
    };
    run_refund_table("refund clock-back rows", 3, 100, refund_back_rows,
                     sizeof refund_back_rows / sizeof *refund_back_rows);

    /* FORCE, limit 3 in 1 s: admitted whatever the log holds; a cost above limit + 1 logs limit + 1 units. */
    static const refund_row force_rows[] = {
        {{1 * S, 5, 0, 1, 0, -1, 1000, 4}, FO},       /* 4 of the 5 logged at 1.0: all leave at 2.0 */
        {{1200000, 1, 0, 0, 0, 800, 1000, 4}, 0},     /* blocked, logged: {1.2 1.0*3}; 1.0 leaves at 2.0 */
        {{1200000, 0, 0, 0, 0, 800, 1000, 4}, 0},     /* a peek: 4 > 3 */
        {{2 * S, 1, 0, 1, 1, -1, 1000, 2}, 0},        /* the debt has left: {2.0 1.2} */
        {{2 * S, 0, 0, 1, 1, -1, 1000, 2}, FO},       /* COST 0 FORCE logs nothing */
        {{2 * S, 2, 500, 1, 0, -1, 1000, 4}, FO},     /* MINGAP has no say either */
        {{2 * S, 1, 500, 0, 0, 1000, 1000, 4}, 0},    /* blocked by both rules until 3.0 */
        {{2 * S, 3, 0, 1, 0, -1, 1000, 4}, FO},       /* {2.0*4}: the 1.2 is cut, as by any attempt */
    };
    run_refund_table("force rows", 3, 1000, force_rows, sizeof force_rows / sizeof *force_rows);
}
#undef RF
#undef FO

/* --- 2. the reference model ------------------------------------------------------------------------ */

/* Every unit ever logged, as runs (score, how many), in no particular order. A call first moves the
 * units above now to now; with forget set, it also removes the units with score <= now - W, as the sorted
 * set does (the only difference from keeping them all is when the clock goes back past a removal). */
typedef struct run {
    int64_t s, m;
} run;
typedef struct ref {
    run *r;
    size_t n, cap;
} ref;

static void ref_push(ref *f, int64_t s, int64_t m) {
    if (m <= 0) return;
    if (f->n == f->cap) {
        f->cap = f->cap ? f->cap * 2 : 64;
        f->r = realloc(f->r, f->cap * sizeof *f->r);
        if (!f->r) abort();
    }
    f->r[f->n++] = (run){s, m};
}

/* Units with score > t - W, and the newest of them. */
static int64_t ref_count(const ref *f, int64_t t, int64_t w_us, int64_t *newest) {
    int64_t c = 0;
    *newest = INT64_MIN;
    for (size_t i = 0; i < f->n; i++)
        if (f->r[i].s > t - w_us) {
            c += f->r[i].m;
            if (f->r[i].s > *newest) *newest = f->r[i].s;
        }
    return c;
}

static int ref_admits(const ref *f, int64_t t, int64_t cost, int64_t limit, int64_t w_us, int64_t g_us) {
    if (cost > limit) return 0;
    int64_t newest, c = ref_count(f, t, w_us, &newest);
    if (c + cost > limit) return 0;
    if (g_us > 0 && c > 0 && t - newest < g_us) return 0;
    return 1;
}

static int cmp_run_desc(const void *a, const void *b);

/* REFUND n on the reference: of the units in the window, the newest limit + 1 are what the trimmed log
 * holds; the newest n of those go, and so do the ones beyond them (the trimmed log forgot them when the cap
 * cut them: slidinglog.c). Units out of the window stay as they are. */
static rl_reply ref_refund(ref *f, const rl_request *req) {
    int64_t limit = req->params[0], w_us = req->params[1] * 1000, now = req->now_us;
    if (f->n > 1) qsort(f->r, f->n, sizeof *f->r, cmp_run_desc);
    int64_t newest, c = ref_count(f, now, w_us, &newest);
    int64_t held = c < limit + 1 ? c : limit + 1;
    int64_t drop = req->cost < held ? req->cost : held, skip = drop, room = held - drop;
    size_t j = 0;
    for (size_t i = 0; i < f->n; i++) {
        run r = f->r[i];
        if (r.s > now - w_us) {
            int64_t d = r.m < skip ? r.m : skip;
            r.m -= d;
            skip -= d;
            int64_t k = r.m < room ? r.m : room;
            r.m = k;
            room -= k;
        }
        if (r.m > 0) f->r[j++] = r;
    }
    f->n = j;
    rl_reply out = {0};
    out.allowed = 1;
    out.limit = limit;
    c = ref_count(f, now, w_us, &newest);
    out.remaining = limit - c > 0 ? limit - c : 0;
    out.retry_after_ms = -1;
    out.reset_after_us = c > 0 ? newest + w_us - now : 0;
    out.reset_after_ms = (out.reset_after_us + 999) / 1000;
    return out;
}

static rl_reply ref_call(ref *f, const rl_request *req, int forget) {
    int64_t limit = req->params[0], w_us = req->params[1] * 1000, g_us = req->mingap_ms * 1000;
    int64_t now = req->now_us, cost = req->cost;
    size_t j = 0;
    for (size_t i = 0; i < f->n; i++) {
        if (f->r[i].s > now) f->r[i].s = now;
        if (!forget || f->r[i].s > now - w_us) f->r[j++] = f->r[i];
    }
    f->n = j;
    if (req->flags & RL_F_REFUND) return ref_refund(f, req);
    int force = (req->flags & RL_F_FORCE) != 0;
    rl_reply out = {0};
    out.allowed = force || ref_admits(f, now, cost, limit, w_us, g_us);
    if (cost <= limit || force) ref_push(f, now, cost);
    out.limit = limit;
    out.wait_ms = 0;
    int64_t newest, c = ref_count(f, now, w_us, &newest);
    out.remaining = limit - c > 0 ? limit - c : 0;
    int64_t idle = c > 0 ? newest + w_us - now : 0;
    out.reset_after_us = idle;
    out.reset_after_ms = (idle + 999) / 1000;
    out.retry_after_ms = -1;
    if (!out.allowed && cost <= limit) {
        /* Try each ms up to the one where every unit has left the window (then the log is empty and
         * any cost <= limit passes); every unit is at or below now after the call. */
        int64_t horizon_ms = c > 0 ? (newest + w_us - now) / 1000 + 1 : 0;
        out.retry_after_ms = -2; /* not found within the horizon: a failure */
        for (int64_t k = 0; k <= horizon_ms; k++)
            if (ref_admits(f, now + k * 1000, cost, limit, w_us, g_us)) {
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

static int cmp_run_desc(const void *a, const void *b) {
    int64_t x = ((const run *)a)->s, y = ((const run *)b)->s;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Runs newest first, equal scores merged, cut after `max` units. */
static size_t runs_normalise(run *r, size_t n, int64_t max) {
    if (n > 1) qsort(r, n, sizeof *r, cmp_run_desc);
    size_t k = 0;
    int64_t total = 0;
    for (size_t i = 0; i < n && total < max; i++) {
        int64_t m = r[i].m < max - total ? r[i].m : max - total;
        total += m;
        if (k > 0 && r[k - 1].s == r[i].s) r[k - 1].m += m;
        else r[k++] = (run){r[i].s, m};
    }
    return k;
}

/* The trimmed log must be exactly the newest limit + 1 units of the reference's window. */
static int trimmed_is_prefix(const tlog *lg, const ref *f, int64_t now, int64_t w_us, int64_t limit, run **a,
                             run **b, size_t *cap) {
    size_t need = (f->n > lg->n ? f->n : lg->n) + 1;
    if (*cap < need) {
        *cap = need * 2;
        *a = realloc(*a, *cap * sizeof **a);
        *b = realloc(*b, *cap * sizeof **b);
        if (!*a || !*b) abort();
    }
    size_t na = 0, nb = 0;
    for (size_t i = 0; i < f->n; i++)
        if (f->r[i].s > now - w_us) (*a)[na++] = f->r[i];
    for (size_t i = 0; i < lg->n; i++) (*b)[nb++] = (run){lg->e[i].at_us, lg->e[i].weight};
    na = runs_normalise(*a, na, limit + 1);
    size_t nb0 = nb;
    nb = runs_normalise(*b, nb, INT64_MAX);
    if (na != nb || nb0 > (size_t)limit + 1) return 0;
    for (size_t i = 0; i < na; i++)
        if ((*a)[i].s != (*b)[i].s || (*a)[i].m != (*b)[i].m) return 0;
    return 1;
}

typedef struct trace_stats {
    long steps, blocked, allowed, probes, max_ref_runs, refunds;
    int64_t max_units;
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

static int cmp_entry_desc(const void *a, const void *b) {
    int64_t x = ((const rl_slog_entry *)a)->at_us, y = ((const rl_slog_entry *)b)->at_us;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* A log left by someone else: weight-1 entries (an earlier version's members, a user's ZADD) around t,
 * some of them above it. */
static void seed_log(tlog *lg, ref *f, int64_t t, int64_t w_us, int64_t max) {
    size_t n = (size_t)rng_range(1, max);
    tlog_reserve(lg, n);
    for (size_t i = 0; i < n; i++) {
        int64_t s = rng_range(0, 9) == 0 ? t + rng_range(0, 2 * w_us) : t - rng_range(0, 2 * w_us);
        lg->e[i] = (rl_slog_entry){s, 1};
        ref_push(f, s, 1);
    }
    lg->n = n;
    qsort(lg->e, n, sizeof *lg->e, cmp_entry_desc);
}

/* A trace's shape: its limits, and how costs are drawn. */
typedef struct shape {
    const int64_t *limits;
    size_t nlimits;
    int64_t max_cost; /* costs above the limit go up to this */
    int seed;         /* start from a log of weight-1 entries */
} shape;

static int64_t pick_cost(int64_t limit, int64_t max_cost) {
    int64_t u = rng_range(0, 99);
    if (u < 15) return 0;
    if (u < 50) return 1;
    if (u < 75) return rng_range(1, limit);
    if (u < 82) return limit;
    if (u < 92) return limit + rng_range(1, 2);
    return rng_range(limit < max_cost ? limit : 1, max_cost > limit + 3 ? max_cost : limit + 3);
}

/* One generated trace. back: the clock sometimes steps back (the reference then forgets as the sorted
 * set does, and the monotonicity of admission in time is checked). */
static void run_trace(int trace_no, int back, int steps, const shape *sh, trace_stats *st) {
    static const int64_t windows[] = {1, 2, 3, 5, 8, 20};
    int64_t limit = sh->limits[rng() % sh->nlimits];
    int64_t window_ms = windows[rng() % (sizeof windows / sizeof *windows)];
    int64_t w_us = window_ms * 1000;
    int64_t t = 1700000000000000LL + rng_range(0, 999999);

    tlog lg = {0}, scratch = {0};
    ref r = {0};
    run *ra = NULL, *rb = NULL;
    size_t rcap = 0;
    if (sh->seed) seed_log(&lg, &r, t, w_us, limit < 300 ? 3 * limit + 2 : 300);

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
        int64_t cost = pick_cost(limit, sh->max_cost);
        /* MINGAP: none, shorter than, equal to, longer than the window. */
        int64_t gap;
        u = rng_range(0, 99);
        if (u < 35) gap = 0;
        else if (u < 60) gap = rng_range(1, window_ms);
        else if (u < 70) gap = window_ms;
        else gap = rng_range(window_ms + 1, 3 * window_ms);

        /* Now and then a refund instead: of nothing, one unit, up to the log, more than it holds. */
        int refund = rng_range(0, 99) < 10;
        if (refund) {
            u = rng_range(0, 99);
            cost = u < 15 ? 0 : u < 45 ? 1 : u < 85 ? rng_range(1, limit + 1) : rng_range(limit + 1, 2 * limit + 3);
        }
        rl_request req = refund ? make_refund(limit, window_ms, cost, gap, t)
                                : make_req(limit, window_ms, cost, gap, t);
        if (!refund && rng_range(0, 99) < 8) req.flags |= RL_F_FORCE; /* debt, even above the limit */

        if (back) { /* for this log, admitted earlier => admitted later */
            rl_request later = req;
            later.now_us += rng_range(0, 2 * w_us);
            if (tlog_peek(&lg, &req, NULL).allowed && !tlog_peek(&lg, &later, NULL).allowed) monotone_bad++;
        }

        rl_reply want = ref_call(&r, &req, back);
        rl_reply got = tlog_call(&lg, &req);
        st->steps++;
        st->refunds += refund;
        if (got.allowed) st->allowed++;
        else st->blocked++;
        if ((long)r.n > st->max_ref_runs) st->max_ref_runs = (long)r.n;
        int64_t units = tlog_units(&lg);
        if (units > st->max_units) st->max_units = units;

        if (!same_reply(&got, &want)) {
            if (mismatch++ < 5) {
                fprintf(stderr, "trace %d (limit %lld window %lld ms%s) step %d: t %lld %s %lld mingap %lld\n",
                        trace_no, (long long)limit, (long long)window_ms, back ? ", clock back" : "", step,
                        (long long)t, refund ? "refund" : "cost", (long long)cost, (long long)gap);
                print_reply("trimmed  ", &got);
                print_reply("reference", &want);
            }
        }
        if (units > limit + 1) size_bad++;
        if (!trimmed_is_prefix(&lg, &r, t, w_us, limit, &ra, &rb, &rcap)) {
            if (prefix_bad++ < 5)
                fprintf(stderr, "trace %d step %d: trimmed log is not the newest limit+1 units of the window\n",
                        trace_no, step);
        }
        if (!got.allowed) probe_retry(&lg, &req, got.retry_after_ms, &scratch, st);
    }
    free(lg.e);
    free(scratch.e);
    free(r.r);
    free(ra);
    free(rb);
}

static void test_traces(void) {
    static const int64_t small[] = {1, 2, 3, 4, 5, 8, 13};
    static const int64_t large[] = {1000, 9999, 100000};
    const shape small_shape = {small, 7, 0, 0}, small_seeded = {small, 7, 0, 1};
    const shape large_shape = {large, 3, RL_SLOG_MAX_LIMIT, 0}, large_seeded = {large, 3, RL_SLOG_MAX_LIMIT, 1};
    trace_stats st = {0};
    long before_mismatch = mismatch;
    for (int i = 0; i < 600; i++) run_trace(i, 0, 250, i % 4 ? &small_shape : &small_seeded, &st);
    for (int i = 0; i < 400; i++) run_trace(1000 + i, 1, 250, i % 4 ? &small_shape : &small_seeded, &st);
    for (int i = 0; i < 150; i++) run_trace(2000 + i, 0, 200, i % 3 ? &large_shape : &large_seeded, &st);
    for (int i = 0; i < 150; i++) run_trace(3000 + i, 1, 200, i % 3 ? &large_shape : &large_seeded, &st);
    CHECK_EQ(mismatch - before_mismatch, 0);
    CHECK_EQ(size_bad, 0);
    CHECK_EQ(prefix_bad, 0);
    CHECK_EQ(exact_bad, 0);
    CHECK_EQ(monotone_bad, 0);
    CHECK_EQ(plan_bad, 0);
    /* The traces do exercise both outcomes, the probes, and logs of 10^5 units. */
    CHECK(st.allowed > 1000 && st.blocked > 1000 && st.probes > 1000);
    CHECK(st.max_units > 50000);
    CHECK(st.refunds > 1000);
    printf("traces: %ld steps (%ld allowed, %ld blocked, %ld refunds), %ld retry probes, trimmed log up to %lld "
           "units, reference up to %ld runs\n",
           st.steps, st.allowed, st.blocked, st.refunds, st.probes, (long long)st.max_units, st.max_ref_runs);
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
        if (tlog_units(&lg) > limit + 1 || lg.n > (size_t)limit + 1) too_big++;
        t += i % 5 == 0 ? 0 : 1;
    }
    CHECK_EQ(blocked, 100000 - 4);
    CHECK_EQ(too_big, 0);
    CHECK_EQ(tlog_units(&lg), limit + 1);
    CHECK_EQ(plan_bad, 0);
    free(lg.e);
}

/* The case: limit 10^5, COST 10^5, 50 times at one instant and 1 µs apart: one entry of at most
 * limit + 1 units, whatever the cost. */
static void test_big_cost(void) {
    tlog lg = {0};
    int64_t t = 1700000000000000LL;
    long bad = 0;
    for (int i = 0; i < 50; i++, t += i % 2) {
        rl_request req = make_req(RL_SLOG_MAX_LIMIT, 60000, RL_SLOG_MAX_LIMIT, 0, t);
        rl_reply rep = tlog_call(&lg, &req);
        /* Blocked, it logs its own 10^5 units, which must leave before it fits: retry = W. */
        if (rep.allowed != (i == 0) || rep.remaining != 0 || rep.retry_after_ms != (i == 0 ? -1 : 60000) ||
            rep.reset_after_ms != 60000 || lg.n > 2 || tlog_units(&lg) != (i == 0 ? RL_SLOG_MAX_LIMIT : RL_SLOG_MAX_LIMIT + 1))
            bad++;
    }
    CHECK_EQ(bad, 0);
    free(lg.e);
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

    rl_slog_entry log1[2] = {{now - 5, 1}, {now - RL_MAX_PERIOD_MS * 1000 + 1, 1}};
    req.cost = 1; /* two entries, one in its last µs; MINGAP = window */
    rl_slog_decide(&req, log1, 2, &plan, &rep);
    CHECK_EQ(rep.allowed, 0);
    CHECK_EQ(plan.add, 1);
    CHECK_EQ(plan.keep, 2);
    CHECK_EQ(rep.remaining, RL_MAX_COUNT - 3);
    CHECK_EQ(rep.retry_after_ms, RL_MAX_PERIOD_MS); /* the gap: now + W */
    CHECK_EQ(rep.reset_after_ms, RL_MAX_PERIOD_MS);

    req.params[0] = RL_MAX_COUNT - 1; /* cost above the limit: never, and nothing logged */
    req.cost = RL_MAX_COUNT;
    req.mingap_ms = 0;
    rl_slog_decide(&req, log1, 2, &plan, &rep);
    CHECK_EQ(rep.allowed, 0);
    CHECK_EQ(rep.retry_after_ms, -1);
    CHECK_EQ(plan.add, 0);
    CHECK_EQ(plan.keep, 2);
    CHECK_EQ(rep.remaining, RL_MAX_COUNT - 3);
    CHECK_EQ(rep.reset_after_ms, RL_MAX_PERIOD_MS); /* the newest (now - 5 µs) leaves in W - 5 µs */
    CHECK_EQ(rep.reset_after_us, RL_MAX_PERIOD_MS * 1000 - 5);

    /* Weights: two entries of 10^12 - 1 and 10^12 units; only limit + 1 of them count. */
    rl_slog_entry heavy[2] = {{now - 1, RL_MAX_COUNT - 1}, {now - 2, RL_MAX_COUNT}};
    req.params[0] = RL_MAX_COUNT;
    req.cost = 1;
    rl_slog_decide(&req, heavy, 2, &plan, &rep);
    CHECK_EQ(rep.allowed, 0);
    CHECK_EQ(plan.add, 1);
    CHECK_EQ(plan.keep, RL_MAX_COUNT);
    CHECK_EQ(rep.retry_after_ms, RL_MAX_PERIOD_MS); /* the (10^12 - 1)-th newest unit: in the second entry */
    CHECK_EQ(rep.reset_after_ms, RL_MAX_PERIOD_MS);

    req.params[0] = INT64_MAX;
    CHECK_EQ(rl_slog_read_max(&req), INT64_MAX);
}

/* Entries read past the window's edge are ignored, not counted; entries above now count as now. */
static void test_stale_and_future_input(void) {
    rl_slog_plan plan;
    rl_reply rep;
    rl_slog_entry log1[3] = {{9000, 1}, {5000, 1}, {1000, 1}}; /* window 5 ms at 10000: 5000 has left */
    rl_request req = make_req(2, 5, 1, 0, 10000);
    rl_slog_decide(&req, log1, 3, &plan, &rep);
    CHECK_EQ(rep.allowed, 1);
    CHECK_EQ(plan.keep, 1);
    CHECK_EQ(plan.add, 1);
    CHECK_EQ(rep.remaining, 0);
    CHECK_EQ(rep.reset_after_ms, 5);

    /* A user's member at +inf (clamped by the module to 2 * RL_MAX_TIME_US) and one at 20000: both count
     * as 10000, so the log empties 5 ms after now, not at +inf. */
    rl_slog_entry log2[3] = {{2 * RL_MAX_TIME_US, 1}, {20000, 1}, {9000, 1}};
    req = make_req(5, 5, 0, 3, 10000);
    rl_slog_decide(&req, log2, 3, &plan, &rep);
    CHECK_EQ(rep.allowed, 0); /* MINGAP 3 ms: the newest counts as now */
    CHECK_EQ(rep.retry_after_ms, 3);
    CHECK_EQ(rep.reset_after_ms, 5);
    CHECK_EQ(rep.remaining, 2);
    CHECK_EQ(plan.keep, 3);
    CHECK_EQ(plan.add, 0);
    CHECK_EQ(plan.at_us, 10000);
}

/* --- 5. refunds ------------------------------------------------------------------------------------- */

/* Two logs hold the same units at the same scores (however they are split into entries). */
static int same_units(const tlog *a, const tlog *b) {
    size_t na = a->n, nb = b->n;
    run *ra = malloc((na + 1) * sizeof *ra), *rb = malloc((nb + 1) * sizeof *rb);
    if (!ra || !rb) abort();
    for (size_t i = 0; i < na; i++) ra[i] = (run){a->e[i].at_us, a->e[i].weight};
    for (size_t i = 0; i < nb; i++) rb[i] = (run){b->e[i].at_us, b->e[i].weight};
    na = runs_normalise(ra, na, INT64_MAX);
    nb = runs_normalise(rb, nb, INT64_MAX);
    int same = na == nb;
    for (size_t i = 0; same && i < na; i++) same = ra[i].s == rb[i].s && ra[i].m == rb[i].m;
    free(ra);
    free(rb);
    return same;
}

/* On logs left by random calls (entries above now included, as after a step back): a refund is always
 * allowed and logs nothing; a refund of 0 decides as COST 0 and leaves the same log; refunds of a and b
 * leave the log of one refund of a + b (the second answering as that one); later, the log after a refund
 * never leaves less room than the log without it; and a refund of what an admitted attempt took, right
 * after it, leaves the log that a COST 0 instead of the attempt would have left. */
static void test_refund_properties(void) {
    static const int64_t limits[] = {1, 2, 3, 5, 9, 40};
    long bad_zero = 0, bad_split = 0, bad_room = 0, bad_undo = 0, bad_reply = 0, undos = 0, splits = 0;
    tlog lg = {0}, a = {0}, b = {0};
    for (int round = 0; round < 3000; round++) {
        int64_t limit = limits[rng() % 6], window_ms = rng_range(1, 20), w_us = window_ms * 1000;
        int64_t t = 1700000000000000LL + rng_range(0, 999999);
        lg.n = 0;
        int calls = (int)rng_range(0, 30);
        for (int i = 0; i < calls; i++) {
            t += rng_range(0, 3) == 0 ? 0 : rng_range(1, w_us / 2 + 1);
            rl_request q = make_req(limit, window_ms, rng_range(0, limit + 1), 0, t);
            tlog_call(&lg, &q);
        }
        if (rng_range(0, 3) == 0) t -= rng_range(1, w_us); /* entries above now */
        int64_t gap = rng_range(0, 2) ? 0 : rng_range(1, 2 * window_ms);
        int64_t n = rng_range(0, limit + 2), m = rng_range(0, limit + 2);

        /* Always allowed, logs nothing (granted 0, retry -1, wait 0). */
        rl_request rq = make_refund(limit, window_ms, n, gap, t);
        tlog_copy(&a, &lg);
        rl_reply r1 = tlog_call(&a, &rq);
        if (!r1.allowed || r1.retry_after_ms != -1 || r1.wait_ms != 0 || r1.granted != 0 ||
            tlog_units(&a) > tlog_units(&lg))
            bad_reply++;

        /* REFUND 0 is COST 0 but for the verdict. */
        rl_request z = make_refund(limit, window_ms, 0, gap, t), c0 = make_req(limit, window_ms, 0, gap, t);
        tlog_copy(&a, &lg);
        tlog_copy(&b, &lg);
        rl_reply rz = tlog_call(&a, &z), rc = tlog_call(&b, &c0);
        if (rz.remaining != rc.remaining || rz.reset_after_us != rc.reset_after_us || !same_units(&a, &b)) bad_zero++;

        /* n then m, against n + m. */
        tlog_copy(&a, &lg);
        tlog_copy(&b, &lg);
        tlog_call(&a, &rq);
        rl_request rm = make_refund(limit, window_ms, m, 0, t), rnm = make_refund(limit, window_ms, n + m, 0, t);
        rl_reply two = tlog_call(&a, &rm), one = tlog_call(&b, &rnm);
        splits++;
        if (!same_reply(&two, &one) || !same_units(&a, &b)) bad_split++;

        /* Later, never less room than without the refund (b: the log a COST 0 leaves). */
        tlog_copy(&a, &lg);
        tlog_copy(&b, &lg);
        tlog_call(&a, &rq);
        tlog_call(&b, &c0);
        rl_request later = make_req(limit, window_ms, 0, 0, t + rng_range(0, 2 * w_us));
        if (tlog_peek(&a, &later, NULL).remaining < tlog_peek(&b, &later, NULL).remaining) bad_room++;

        /* Undo: an admitted attempt of u (often what fits: the remaining of a COST 0), then REFUND u at the
         * same instant. */
        rl_request peek = make_req(limit, window_ms, 0, 0, t);
        int64_t u = rng_range(0, 2) ? rng_range(0, tlog_peek(&lg, &peek, NULL).remaining) : n;
        rl_request at = make_req(limit, window_ms, u, u == n ? gap : 0, t);
        tlog_copy(&a, &lg);
        if (tlog_call(&a, &at).allowed) {
            undos++;
            rl_request back = make_refund(limit, window_ms, u, 0, t);
            tlog_call(&a, &back);
            tlog_copy(&b, &lg);
            tlog_call(&b, &c0);
            rl_reply pa = tlog_peek(&a, &later, NULL), pb = tlog_peek(&b, &later, NULL);
            if (!same_units(&a, &b) || !same_reply(&pa, &pb)) bad_undo++;
        }
    }
    CHECK_EQ(bad_reply, 0);
    CHECK_EQ(bad_zero, 0);
    CHECK_EQ(bad_split, 0);
    CHECK_EQ(bad_room, 0);
    CHECK_EQ(bad_undo, 0);
    CHECK_EQ(plan_bad, 0);
    CHECK(undos > 400 && splits == 3000);
    printf("refund properties: %ld rounds, %ld undos\n", splits, undos);
    free(lg.e);
    free(a.e);
    free(b.e);
}

/* A refund over huge weights and limits: nothing is proportional to them. */
static void test_refund_large(void) {
    rl_slog_plan plan;
    rl_reply rep;
    int64_t now = RL_MAX_TIME_US;
    rl_slog_entry heavy[2] = {{now - 1, RL_MAX_COUNT - 1}, {now - 2, RL_MAX_COUNT}};
    rl_request req = make_refund(RL_MAX_COUNT, RL_MAX_PERIOD_MS, RL_MAX_COUNT, 0, now);
    rl_slog_decide(&req, heavy, 2, &plan, &rep);
    /* c = limit + 1 = 10^12 + 1: 10^12 go, the one left is the second entry's second unit (now - 2). */
    CHECK_EQ(rep.allowed, 1);
    CHECK_EQ(plan.drop, RL_MAX_COUNT);
    CHECK_EQ(plan.keep, 1);
    CHECK_EQ(plan.add, 0);
    CHECK_EQ(plan.at_us, now);
    CHECK_EQ(rep.remaining, RL_MAX_COUNT - 1);
    CHECK_EQ(rep.retry_after_ms, -1);
    CHECK_EQ(rep.reset_after_us, RL_MAX_PERIOD_MS * 1000 - 2);
    CHECK_EQ(rep.reset_after_ms, RL_MAX_PERIOD_MS);
    CHECK_EQ(rep.granted, 0);
    CHECK_EQ(rep.wait_ms, 0);

    req.cost = RL_MAX_COUNT - 1; /* the first entry exactly: the second is left whole (capped at 2 units) */
    rl_slog_decide(&req, heavy, 2, &plan, &rep);
    CHECK_EQ(plan.drop, RL_MAX_COUNT - 1);
    CHECK_EQ(plan.keep, 2);
    CHECK_EQ(rep.reset_after_us, RL_MAX_PERIOD_MS * 1000 - 2);

    req.cost = 0; /* nothing goes; the log is full: remaining 0, the newest leaves in W - 1 µs */
    rl_slog_decide(&req, heavy, 2, &plan, &rep);
    CHECK_EQ(plan.drop, 0);
    CHECK_EQ(plan.keep, RL_MAX_COUNT + 1);
    CHECK_EQ(rep.remaining, 0);
    CHECK_EQ(rep.reset_after_us, RL_MAX_PERIOD_MS * 1000 - 1);

    rl_slog_decide(&req, NULL, 0, &plan, &rep); /* an empty log */
    CHECK_EQ(rep.allowed, 1);
    CHECK_EQ(plan.drop + plan.keep + plan.add, 0);
    CHECK_EQ(rep.remaining, RL_MAX_COUNT);
    CHECK_EQ(rep.reset_after_ms, 0);
}

int main(void) {
    test_tables();
    test_traces();
    test_hammering();
    test_big_cost();
    test_large();
    test_stale_and_future_input();
    test_refund_properties();
    test_refund_large();
    return check_summary("unit_slidinglog");
}
