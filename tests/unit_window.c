/* unit_window.c -- tests of the window counters (algorithms/window.c), driven by a fake clock.
 *
 * A small stand-in for the module keeps one limiter's cell between calls the way the module does: it
 * stores the cell unless DRYRUN, and drops the key when the reply says idle (reset_after_ms 0). Scripted
 * tables then replay requests against it and compare every reply field. A second, generic part checks
 * the promises of the reply on many pseudo-random parameter sets by probing a copy of the cell (what
 * DRYRUN does): retry_after_ms and reset_after_ms are exact to the ms, remaining is exact, and an earlier
 * clock never admits more. Long steady runs are compared with a naive model that keeps every window's
 * count in an array. */
#include <stdlib.h>

#include "check.h"
#define RNG_SEED 0x243f6a8885a308d3ULL
#include "rng.h"
#include "../algorithms/window.h"

#define MS 1000LL

static char validate_err[RL_ERR_LEN]; /* validate's message, unread */
#define SEC (1000 * MS)
/* An ordinary present-day time (Nov 2023), a multiple of 60 s and of 3 ms: window boundaries fall on
 * round offsets from it. */
#define BASE_MS 1700000040000LL
#define BASE_US (BASE_MS * MS)
#define BIG 1000000000000LL /* 10^12 */

/* --- the module stand-in ---------------------------------------------------------------------------- */

typedef struct limiter {
    int64_t params[3]; /* limit, window_ms, unused */
    rl_cell cell;
    int exists;
} limiter;

static limiter limiter_new(int64_t limit, int64_t window_ms) {
    limiter l = {{limit, window_ms, 0}, {{0, 0}}, 0};
    return l;
}

static rl_request request_of(const limiter *l, int64_t now_us, int64_t cost, uint32_t flags) {
    rl_request req = {{l->params[0], l->params[1], l->params[2]}, cost, 0, flags, now_us};
    return req;
}

static rl_reply decide(const limiter *l, int64_t now_us, int64_t cost, uint32_t flags, rl_cell *cell) {
    rl_request req = request_of(l, now_us, cost, flags);
    rl_reply reply;
    memset(&reply, 0, sizeof reply);
    *cell = l->cell;
    rl_window_algorithm.decide(&req, cell, l->exists, &reply);
    return reply;
}

/* Decide on a copy of the cell: the limiter is left as it was. */
static rl_reply probe(const limiter *l, int64_t now_us, int64_t cost, uint32_t flags) {
    rl_cell cell;
    return decide(l, now_us, cost, flags, &cell);
}

/* Decide and keep the result, as the module does. */
static rl_reply call(limiter *l, int64_t now_us, int64_t cost, uint32_t flags) {
    rl_request req = request_of(l, now_us, cost, flags);
    CHECK(rl_window_algorithm.validate(&req, validate_err) == 0);
    rl_cell cell;
    rl_reply reply = decide(l, now_us, cost, flags, &cell);
    if (!(flags & RL_F_DRYRUN)) {
        l->exists = reply.reset_after_ms > 0;
        l->cell = cell;
        CHECK(rl_window_algorithm.cell_valid(&cell));
    }
    return reply;
}

/* --- scripted tables -------------------------------------------------------------------------------- */

typedef struct row {
    int64_t at_us; /* fake clock, from the table's base */
    int64_t cost;
    uint32_t flags;
    int64_t allowed, remaining, retry_ms, reset_ms;
} row;

static void expect_field(const char *table, size_t i, const char *field, int64_t got, int64_t want) {
    char what[160];
    snprintf(what, sizeof what, "%s, row %zu: %s", table, i + 1, field);
    if (!check_record(got == want, __FILE__, __LINE__, what))
        fprintf(stderr, "     got %lld, expected %lld\n", (long long)got, (long long)want);
}

static void run_table(const char *table, limiter *l, int64_t base_us, const row *rows, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const row *w = &rows[i];
        rl_reply r = call(l, base_us + w->at_us, w->cost, w->flags);
        expect_field(table, i, "allowed", r.allowed, w->allowed);
        expect_field(table, i, "limit", r.limit, l->params[0]);
        expect_field(table, i, "remaining", r.remaining, w->remaining);
        expect_field(table, i, "retry_after_ms", r.retry_after_ms, w->retry_ms);
        expect_field(table, i, "reset_after_ms", r.reset_after_ms, w->reset_ms);
        expect_field(table, i, "wait_ms", r.wait_ms, 0);
    }
}

#define RUN_TABLE(l, base, rows) run_table(#rows, (l), (base), (rows), sizeof(rows) / sizeof((rows)[0]))

/* 10 per minute, sliding. 8 requests in the first window; 15 s into the next, they still weigh
 * 8 * 45/60 = 6, so 4 more fit. The next one fits once the weight is down to 5: 22.5 s in. */
static const row cloudflare[] = {
    {10 * SEC, 8, 0, 1, 2, -1, 110000},
    {75 * SEC, 1, 0, 1, 3, -1, 105000},
    {75 * SEC, 3, 0, 1, 0, -1, 105000},
    {75 * SEC, 1, 0, 0, 0, 7500, 105000},
    {82499 * MS, 1, 0, 0, 0, 1, 97501},                /* weight 5.0002: 1 ms early */
    {82500 * MS, 1, 0, 1, 0, -1, 97500},
    {82500 * MS, 1, 0, 0, 0, 7500, 97500},             /* weight 4 needed: 30 s in */
    {119999 * MS, 6, RL_F_DRYRUN, 0, 4, 12001, 60001}, /* next window: 5 * (60-12)/60 + 6 = 10 */
    {119999 * MS, 10, RL_F_DRYRUN, 0, 4, 60001, 60001}, /* only once both windows are empty */
    {119999 * MS, 11, 0, 0, 4, -1, 60001},             /* more than the limit: never */
    {120 * SEC, 5, 0, 1, 0, -1, 120000},
    {150 * SEC, 2, 0, 1, 0, -1, 90000},
    {235 * SEC, 0, 0, 1, 9, -1, 5000}, /* only the previous window weighs: idle at its end */
    {240 * SEC, 0, 0, 1, 10, -1, 0},
};

/* Fixed windows of 1 s, limit 3: the boundary resets the count. The counts are shared with SLIDING,
 * which sees the previous window that FIXED ignores. */
static const row fixed_boundary[] = {
    {999 * MS, 3, RL_F_FIXED, 1, 0, -1, 1},
    {999500, 1, RL_F_FIXED, 0, 0, 1, 1},
    {1000 * MS, 3, RL_F_FIXED, 1, 0, -1, 1000},
    {1000 * MS, 4, RL_F_FIXED, 0, 0, -1, 1000},
    {1000 * MS, 0, RL_F_FIXED, 1, 0, -1, 1000},
    {1500 * MS, 1, RL_F_SLIDING, 0, 0, 834, 1500}, /* 3 * (1000-334)/1000 + 1 <= 3 */
    {1500 * MS, 1, RL_F_FIXED, 0, 0, 500, 500},
    {2000 * MS, 2, RL_F_FIXED, 1, 1, -1, 1000},
    /* SLIDING reads the FIXED write of [1000, 2000): idle since 2000 (its key would have expired), so its
     * 3 do not weigh as the previous window's; only this window's 2 count. */
    {2000 * MS, 0, 0, 1, 1, -1, 2000},
    {3000 * MS, 0, RL_F_FIXED, 1, 3, -1, 0},
};

/* The clock steps back into the previous window after the limit was reached: the decision is made at
 * the start of the stored window (nothing gained). The FIXED calls there leave a FIXED write of
 * [1000, 2000), idle (its key expired) when that window ends: at 2200 the limiter is new. */
static const row clock_back[] = {
    {1500 * MS, 5, 0, 1, 0, -1, 1500},
    {900 * MS, 1, 0, 0, 0, 1300, 2100},
    {900 * MS, 0, RL_F_FIXED, 1, 0, -1, 1100},
    {900 * MS, 1, RL_F_FIXED, 0, 0, 1100, 1100},
    {2200 * MS, 1, 0, 1, 4, -1, 1800},
};

/* The window grows from 1 s to 3 s, then shrinks back: the stored window is mapped onto the new grid
 * at floor(start / W), its counts kept. */
static const row resize_1s[] = {
    {1500 * MS, 4, 0, 1, 6, -1, 1500},
    {2500 * MS, 3, 0, 1, 5, -1, 1500},
};
static const row resize_3s[] = {
    {2600 * MS, 5, 0, 1, 1, -1, 3400}, /* window [2000, 3000) counts as [0, 3000): 4*400/3000 + 3 + 5 */
    {3000 * MS, 3, 0, 0, 2, 375, 3000},
};
static const row resize_back[] = {
    {3375 * MS, 3, 0, 1, 2, -1, 1625}, /* [0, 3000)'s 8 are now the 1 s window before [3000, 4000) */
};

/* Limit 10^12 per 10^12 ms, at the end of the clock's range (2^46 ms - 1). */
static const row huge[] = {
    {0, BIG, 0, 1, 0, -1, 1631255822337LL},
    {0, 1, 0, 0, 0, 631255822338LL, 1631255822337LL},
    {1000, 1, RL_F_FIXED, 0, 0, 631255822336LL, 631255822336LL},
    {0, BIG, RL_F_DRYRUN, 0, 0, 1631255822337LL, 1631255822337LL},
    {0, BIG + 1, 0, 0, 0, -1, 1631255822337LL},
};

static void test_tables(void) {
    limiter l = limiter_new(10, 60000);
    RUN_TABLE(&l, BASE_US, cloudflare);
    l = limiter_new(3, 1000);
    RUN_TABLE(&l, BASE_US, fixed_boundary);
    l = limiter_new(5, 1000);
    RUN_TABLE(&l, BASE_US, clock_back);

    l = limiter_new(10, 1000);
    RUN_TABLE(&l, BASE_US, resize_1s);
    l.params[1] = 3000;
    RUN_TABLE(&l, BASE_US, resize_3s);
    l.params[1] = 1000;
    RUN_TABLE(&l, BASE_US, resize_back);

    l = limiter_new(BIG, BIG);
    RUN_TABLE(&l, RL_MAX_TIME_US - 1000, huge);
}

/* --- cells ------------------------------------------------------------------------------------------ */

static void test_cells(void) {
    const rl_window_state states[] = {
        {0, 0, 0, 0},
        {RL_MAX_TIME_MS - 1, RL_MAX_COUNT, RL_MAX_COUNT, 1},
        {BASE_MS, 1, (1LL << 17) - 1, 0},
        {BASE_MS, 0, 1LL << 17, 1},
        {12345, (1LL << 40) - 1, (1LL << 40) - 1, 0},
    };
    for (size_t i = 0; i < sizeof states / sizeof states[0]; i++) {
        rl_cell cell = rl_window_pack(states[i]);
        rl_window_state back = rl_window_unpack(&cell);
        CHECK(back.start_ms == states[i].start_ms && back.curr == states[i].curr &&
              back.prev == states[i].prev && back.fixed == states[i].fixed);
        CHECK((cell.w[0] >> 63) == 0 && (cell.w[1] >> 63) == (uint64_t)states[i].fixed);
        CHECK_EQ(rl_window_algorithm.cell_valid(&cell), states[i].curr <= RL_MAX_COUNT &&
                                                           states[i].prev <= RL_MAX_COUNT);
    }
    rl_cell top0 = {{1ULL << 63, 0}}, top1 = {{0, 1ULL << 63}};
    CHECK(!rl_window_algorithm.cell_valid(&top0));
    CHECK(rl_window_algorithm.cell_valid(&top1)); /* the FIXED mark */
    CHECK(rl_window_unpack(&top1).fixed);

    /* A new key has no counts, whatever the cell holds. */
    limiter fresh = limiter_new(10, 1000);
    fresh.cell = rl_window_pack((rl_window_state){BASE_MS, 10, 10, 0});
    CHECK_EQ(probe(&fresh, BASE_US, 0, 0).remaining, 10);
    CHECK_EQ(probe(&fresh, BASE_US, 0, RL_F_FIXED).reset_after_ms, 0);

    /* Idle is new in every mode: a FIXED write is idle when its window ends, so a SLIDING read in the
     * next window finds a new limiter (it does not weigh the FIXED window's count). Before it ends, the
     * count is the current window's for both modes. */
    limiter mixed = limiter_new(10, 1000);
    CHECK_EQ(call(&mixed, BASE_US, 7, RL_F_FIXED).reset_after_ms, 1000);
    CHECK_EQ(probe(&mixed, BASE_US + 999 * 1000, 0, 0).remaining, 3);
    rl_reply after = probe(&mixed, BASE_US + 1000 * 1000, 0, 0);
    CHECK_EQ(after.remaining, 10);
    CHECK_EQ(after.reset_after_ms, 0);
    CHECK_EQ(call(&mixed, BASE_US + 1000 * 1000, 1, 0).reset_after_ms, 2000);
    /* Written by SLIDING, the count still weighs in the next window. */
    CHECK_EQ(probe(&mixed, BASE_US + 2000 * 1000, 0, 0).remaining, 9);
    CHECK_EQ(probe(&fresh, BASE_US, 0, 0).remaining, 10);
    CHECK_EQ(probe(&fresh, BASE_US, 0, RL_F_FIXED).reset_after_ms, 0);

    limiter l = limiter_new(BIG, BIG);
    rl_request req = request_of(&l, BASE_US, 1, 0);
    CHECK(rl_window_algorithm.validate(&req, validate_err) == 0);
}

/* --- generic promises, on pseudo-random parameters ------------------------------------------------ */

static uint32_t random_mode(void) {
    static const uint32_t modes[] = {0, RL_F_SLIDING, RL_F_FIXED};
    return modes[rng() % 3];
}

/* A cost: mostly small against the limit, sometimes 0, the whole limit, or more. */
static int64_t random_cost(int64_t limit) {
    switch (rng() % 8) {
    case 0: return 0;
    case 1: return limit;
    case 2: return limit + 1;
    case 3: return 1;
    default: return 1 + (int64_t)(rng() % (uint64_t)limit);
    }
}

/* A gap between calls: none, under a ms, or up to two windows. */
static int64_t random_gap(const limiter *l) {
    switch (rng() % 5) {
    case 0: return 0;
    case 1: return (int64_t)(rng() % 3000);
    default: return (int64_t)(rng() % (uint64_t)(l->params[1] * 2 * MS + 1));
    }
}

static int64_t ms_before(int64_t now_us, int64_t ms) { return now_us + (ms - 1) * MS; }
static int64_t ms_at(int64_t now_us, int64_t ms) { return now_us + ms * MS; }

/* retry_after_ms is the first whole ms at which the same request is admitted. */
static void check_retry(const limiter *l, int64_t now, int64_t cost, uint32_t flags, const rl_reply *r) {
    if (r->allowed || cost > l->params[0]) {
        CHECK_EQ(r->retry_after_ms, -1);
        return;
    }
    if (!CHECK(r->retry_after_ms >= 1)) return;
    CHECK_EQ(probe(l, ms_before(now, r->retry_after_ms), cost, flags).allowed, 0);
    CHECK_EQ(probe(l, ms_at(now, r->retry_after_ms), cost, flags).allowed, 1);
}

static int same_reply(const rl_reply *a, const rl_reply *b) {
    return a->allowed == b->allowed && a->remaining == b->remaining &&
           a->retry_after_ms == b->retry_after_ms && a->reset_after_us == b->reset_after_us;
}

/* reset_after_ms / _us say exactly when the limiter is idle, and an idle cell is a new one. */
static void check_reset(const limiter *l, int64_t now, uint32_t flags, const rl_reply *r) {
    CHECK_EQ(r->reset_after_ms, (r->reset_after_us + 999) / 1000);
    if (r->reset_after_ms == 0) return;
    CHECK(probe(l, ms_before(now, r->reset_after_ms), 0, flags).reset_after_ms > 0);
    CHECK_EQ(probe(l, ms_at(now, r->reset_after_ms), 0, flags).reset_after_ms, 0);
    CHECK(probe(l, now + r->reset_after_us - 1, 0, flags).reset_after_us > 0);
    rl_reply idle = probe(l, now + r->reset_after_us, 0, flags);
    CHECK_EQ(idle.reset_after_us, 0);
    CHECK_EQ(idle.remaining, l->params[0]);

    /* The module drops the key then: nothing may be lost. FIXED forgets a previous window that SLIDING
     * would still weigh, so only the reply is compared for it. */
    limiter fresh = *l;
    fresh.exists = 0;
    int64_t at = now + r->reset_after_us, cost = l->params[0];
    rl_cell kept_cell, fresh_cell;
    rl_reply kept = decide(l, at, cost, flags, &kept_cell);
    rl_reply anew = decide(&fresh, at, cost, flags, &fresh_cell);
    CHECK(same_reply(&kept, &anew));
    if (!(flags & RL_F_FIXED))
        CHECK(kept_cell.w[0] == fresh_cell.w[0] && kept_cell.w[1] == fresh_cell.w[1]);
}

/* remaining more are admitted now, one more is not. */
static void check_remaining(const limiter *l, int64_t now, uint32_t flags, const rl_reply *r) {
    CHECK(r->remaining >= 0 && r->remaining <= l->params[0]);
    if (r->remaining > 0) CHECK_EQ(probe(l, now, r->remaining, flags).allowed, 1);
    CHECK_EQ(probe(l, now, r->remaining + 1, flags).allowed, 0);
}

/* At an earlier time, the same request is never admitted when it is not now, and there is never more
 * room. */
static void check_earlier(const limiter *before, int64_t now, int64_t cost, uint32_t flags) {
    int64_t span = random_gap(before) + 2; /* drawn first: operand order is unspecified */
    int64_t back = (int64_t)(rng() % (uint64_t)span);
    CHECK(probe(before, now - back, cost, flags).allowed <= probe(before, now, cost, flags).allowed);
    CHECK(probe(before, now - back, 0, flags).remaining <= probe(before, now, 0, flags).remaining);
}

static void test_generic(void) {
    for (int set = 0; set < 400; set++) {
        int64_t limit = rng_magnitude(RL_MAX_COUNT);
        limiter l = limiter_new(limit, rng_magnitude(RL_MAX_PERIOD_MS));
        int64_t now = BASE_US + (int64_t)(rng() % (uint64_t)(1000 * SEC));
        for (int step = 0; step < 40; step++) {
            now += random_gap(&l);
            int64_t cost = random_cost(l.params[0]);
            uint32_t flags = random_mode();
            limiter before = l;
            check_earlier(&before, now, cost, flags);
            rl_reply r = call(&l, now, cost, flags);
            CHECK_EQ(r.wait_ms, 0);
            check_retry(&l, now, cost, flags, &r);
            check_reset(&l, now, flags, &r);
            check_remaining(&l, now, flags, &r);
        }
    }
}

/* A sequence of unit requests whose clock sometimes steps back is admitted no more often than the same
 * sequence on a clock that holds still instead. */
static void test_clock_back_sequences(void) {
    for (int set = 0; set < 200; set++) {
        int64_t limit = rng_magnitude(20);
        limiter jittery = limiter_new(limit, rng_magnitude(100000)), steady = jittery;
        uint32_t flags = random_mode();
        int64_t now = BASE_US, latest = INT64_MIN, admitted_jittery = 0, admitted_steady = 0;
        for (int step = 0; step < 300; step++) {
            int64_t span = random_gap(&jittery) + 1;
            if (rng() % 4 == 0)
                now -= (int64_t)(rng() % (uint64_t)span);
            else
                now += random_gap(&jittery) / 8;
            if (now > latest) latest = now;
            admitted_jittery += call(&jittery, now, 1, flags).allowed;
            admitted_steady += call(&steady, latest, 1, flags).allowed;
        }
        CHECK(admitted_jittery <= admitted_steady);
    }
}

/* --- long steady runs against a naive model --------------------------------------------------------- */

/* Every window's count in an array, the sliding estimate recomputed from it at each request. */
typedef struct model {
    int64_t limit, window_ms, first_window;
    int64_t *counts;
} model;

static int model_admit(model *m, int64_t now_us, int64_t cost, int fixed) {
    int64_t t_ms = now_us / 1000, k = t_ms / m->window_ms - m->first_window;
    int64_t elapsed = t_ms % m->window_ms, prev = k > 0 ? m->counts[k - 1] : 0;
    rl_i128 weight = (rl_i128)prev * (m->window_ms - elapsed) + (rl_i128)(m->counts[k] + cost) * m->window_ms;
    int ok = fixed ? m->counts[k] + cost <= m->limit : weight <= (rl_i128)m->limit * m->window_ms;
    if (ok) m->counts[k] += cost;
    return ok;
}

/* 10^6 requests at a steady pace: the admitted count is the model's, to the unit (no drift over many
 * rollovers), and for FIXED it is min(limit, requests) in every window. */
static void test_steady_runs(void) {
    static const struct {
        int64_t limit, window_ms, pace_us;
        uint32_t flags;
    } runs[] = {
        {7, 3, 100, RL_F_FIXED},   {7, 3, 100, RL_F_SLIDING},    {1000, 1000, 700, 0},
        {250, 1000, 1000, 0},      {1, 1, 333, RL_F_SLIDING},    {1000, 1000, 700, RL_F_FIXED},
    };
    const int64_t n = 1000000;
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        limiter l = limiter_new(runs[i].limit, runs[i].window_ms);
        int64_t last_ms = (BASE_US + (n - 1) * runs[i].pace_us) / 1000;
        model m = {runs[i].limit, runs[i].window_ms, BASE_MS / runs[i].window_ms, NULL};
        m.counts = calloc((size_t)(last_ms / m.window_ms - m.first_window + 1), sizeof *m.counts);
        int fixed = (runs[i].flags & RL_F_FIXED) != 0;
        int64_t admitted = 0, expected = 0, disagreements = 0;
        for (int64_t j = 0; j < n; j++) {
            int64_t now = BASE_US + j * runs[i].pace_us;
            int a = (int)call(&l, now, 1, runs[i].flags).allowed;
            int b = model_admit(&m, now, 1, fixed);
            admitted += a;
            expected += b;
            disagreements += a != b;
        }
        CHECK_EQ(disagreements, 0);
        CHECK_EQ(admitted, expected);
        if (fixed) {
            /* Requests per window: window_ms * 1000 / pace, give or take one at the edges. */
            int64_t windows = last_ms / m.window_ms - m.first_window + 1, full = 0;
            for (int64_t k = 0; k < windows; k++) full += m.counts[k] == m.limit;
            CHECK_EQ(full, windows);
        }
        free(m.counts);
    }
}

int main(void) {
    test_tables();
    test_cells();
    test_generic();
    test_clock_back_sequences();
    test_steady_runs();
    return check_summary("unit_window");
}
