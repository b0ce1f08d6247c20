/* unit_leaky.c -- tests of the leaky bucket (algorithms/leaky.c), driven by a fake clock.
 *
 * A small stand-in for the module keeps one limiter's cell between calls the way the module does: it
 * stores the cell unless DRYRUN, and drops the key when the reply says idle (reset_after_ms 0). Scripted
 * tables then replay requests against it and compare every reply field. A second, generic part checks
 * the promises of the reply on many pseudo-random parameter sets by probing a copy of the cell (what
 * DRYRUN does): retry_after_ms and reset_after_ms are exact to the ms, remaining is exact, wait_ms is the
 * time the units ahead take to drain, and an earlier clock never admits more. */
#include <stdlib.h>

#include "check.h"
#define RNG_SEED 0x9e3779b97f4a7c15ULL
#include "rng.h"
#include "../algorithms/leaky.h"

#define MS 1000LL

static char validate_err[RL_ERR_LEN]; /* validate's message, unread */
#define SEC (1000 * MS)
#define BASE_US (1700000000000LL * MS) /* an ordinary present-day time, Nov 2023 */

/* --- the module stand-in ---------------------------------------------------------------------------- */

typedef struct limiter {
    int64_t params[3]; /* capacity, leak_tokens, leak_ms */
    rl_cell cell;
    int exists;
} limiter;

static limiter limiter_new(int64_t capacity, int64_t leak_tokens, int64_t leak_ms) {
    limiter l = {{capacity, leak_tokens, leak_ms}, {{0, 0}}, 0};
    return l;
}

static rl_request request_of(const limiter *l, int64_t now_us, int64_t cost, uint32_t flags) {
    rl_request req = {{l->params[0], l->params[1], l->params[2]}, cost, 0, flags, now_us};
    return req;
}

/* Decide on a copy of the cell: the limiter is left as it was. */
static rl_reply probe(const limiter *l, int64_t now_us, int64_t cost, uint32_t flags) {
    rl_request req = request_of(l, now_us, cost, flags);
    rl_cell cell = l->cell;
    rl_reply reply;
    memset(&reply, 0, sizeof reply);
    rl_leaky_algorithm.decide(&req, &cell, l->exists, &reply);
    return reply;
}

/* Decide and keep the result, as the module does. */
static rl_reply call(limiter *l, int64_t now_us, int64_t cost, uint32_t flags) {
    rl_request req = request_of(l, now_us, cost, flags);
    rl_cell cell = l->cell;
    rl_reply reply;
    memset(&reply, 0, sizeof reply);
    CHECK(rl_leaky_algorithm.validate(&req, validate_err) == 0);
    rl_leaky_algorithm.decide(&req, &cell, l->exists, &reply);
    if (!(flags & RL_F_DRYRUN)) {
        l->exists = reply.reset_after_ms > 0;
        l->cell = cell;
        if (l->exists) CHECK(rl_leaky_algorithm.cell_valid(&cell));
    }
    return reply;
}

/* --- scripted tables -------------------------------------------------------------------------------- */

typedef struct row {
    int64_t at_us; /* fake clock, from BASE_US */
    int64_t cost;
    uint32_t flags;
    int64_t allowed, remaining, retry_ms, reset_ms, wait_ms;
} row;

static void expect_field(const char *table, size_t i, const char *field, int64_t got, int64_t want) {
    char what[160];
    snprintf(what, sizeof what, "%s, row %zu: %s", table, i + 1, field);
    if (!check_record(got == want, __FILE__, __LINE__, what))
        fprintf(stderr, "     got %lld, expected %lld\n", (long long)got, (long long)want);
}

static void run_table(const char *table, limiter *l, const row *rows, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const row *w = &rows[i];
        rl_reply r = call(l, BASE_US + w->at_us, w->cost, w->flags);
        expect_field(table, i, "allowed", r.allowed, w->allowed);
        expect_field(table, i, "limit", r.limit, l->params[0]);
        expect_field(table, i, "remaining", r.remaining, w->remaining);
        expect_field(table, i, "retry_after_ms", r.retry_after_ms, w->retry_ms);
        expect_field(table, i, "reset_after_ms", r.reset_after_ms, w->reset_ms);
        expect_field(table, i, "wait_ms", r.wait_ms, w->wait_ms);
    }
}

#define RUN_TABLE(l, rows) run_table(#rows, (l), (rows), sizeof(rows) / sizeof((rows)[0]))

/* 4 units, 3 per second: T = 333.33.. ms, not a whole number of ms. A burst waits 0, T, 2T, 3T, each
 * rounded up; the fifth is denied until one unit has drained. */
static const row burst_shaping[] = {
    {0, 1, 0, 1, 3, -1, 334, 0},
    {0, 1, 0, 1, 2, -1, 667, 334},
    {0, 1, 0, 1, 1, -1, 1000, 667},
    {0, 1, 0, 1, 0, -1, 1334, 1000},
    {0, 1, 0, 0, 0, 334, 1334, 0},
    {0, 5, 0, 0, 0, -1, 1334, 0},               /* more than the capacity: never */
    {333 * MS, 1, 0, 0, 0, 1, 1001, 0},         /* level 3.001: 1/3 ms short */
    {334 * MS, 1, 0, 1, 0, -1, 1333, 1000},     /* level 2.998 ahead, then 3.998 */
    {334 * MS, 0, 0, 1, 0, -1, 1333, 1333},     /* cost 0 reports: level 3.998 <= 4 */
    {1000 * MS, 3, 0, 0, 2, 334, 667, 0},       /* level 2.0 exactly: one more unit to drain */
    {1333 * MS, 3, 0, 0, 2, 1, 334, 0},         /* level 1.001 */
    {1334 * MS, 3, 0, 1, 0, -1, 1333, 333},     /* level 0.998 ahead */
    {3000 * MS, 0, 0, 1, 4, -1, 0, 0},          /* drained: idle */
    {3000 * MS, 4, 0, 1, 0, -1, 1334, 0},       /* the key was dropped: a new, empty bucket */
    {3000 * MS + 1, 4, 0, 0, 0, 1334, 1334, 0}, /* 1 µs later: 1333.33.. ms to empty */
};

/* The same burst, policed: same admissions, no wait. */
static const row burst_nodelay[] = {
    {0, 1, RL_F_NODELAY, 1, 3, -1, 334, 0},
    {0, 1, RL_F_NODELAY, 1, 2, -1, 667, 0},
    {0, 1, RL_F_NODELAY, 1, 1, -1, 1000, 0},
    {0, 1, RL_F_NODELAY, 1, 0, -1, 1334, 0},
    {0, 1, RL_F_NODELAY, 0, 0, 334, 1334, 0},
    {334 * MS, 1, RL_F_NODELAY, 1, 0, -1, 1333, 0},
    {334 * MS, 1, 0, 0, 0, 333, 1333, 0}, /* the flag changes no admission */
};

/* DRYRUN answers like the real call but stores nothing. */
static const row dryrun[] = {
    {0, 3, RL_F_DRYRUN, 1, 0, -1, 1000, 0},
    {0, 3, 0, 1, 0, -1, 1000, 0},
    {0, 1, RL_F_DRYRUN, 0, 0, 334, 1000, 0},
    {0, 0, RL_F_DRYRUN, 1, 0, -1, 1000, 1000},
};

/* 10 units, one per second, then the capacity drops to 5 while 8 are in the bucket. */
static const row change_before[] = {
    {0, 10, 0, 1, 0, -1, 10000, 0},
    {2 * SEC, 1, 0, 1, 1, -1, 9000, 8000},
};
static const row change_smaller[] = {
    {2 * SEC, 0, 0, 0, 0, 4000, 9000, 0}, /* level 9 > 5: even cost 0 is denied */
    {3 * SEC, 1, 0, 0, 0, 4000, 8000, 0}, /* room for 1 when the level is 4 */
    {7 * SEC, 1, 0, 1, 0, -1, 5000, 4000},
    {7 * SEC + 1, 0, 0, 1, 0, -1, 5000, 5000},
};
/* Then the rate doubles to 2 per second: the drain-complete instant is kept (5 s away), which the new
 * rate reads as 10 units: a unit is denied until the level is down to 4 (3 s). */
static const row change_faster[] = {
    {7 * SEC, 1, 0, 0, 0, 3000, 5000, 0},
    {10 * SEC, 1, 0, 1, 0, -1, 2500, 2000},
};

/* A remainder written under a larger leak_tokens is clamped below the new one: 1 unit at 3 per second
 * leaves the empty instant at 333333 1/3 µs; at 1 per second that reads as 333333 µs, not a µs more. */
static const row rem_before[] = {
    {0, 1, 0, 1, 3, -1, 334, 0},
};
static const row rem_after[] = {
    {333, 0, 0, 1, 3, -1, 333, 333},
};

/* The clock steps back 1 s after filling the bucket: the bucket looks fuller, nothing more gets in, and
 * once the clock is back the state is what it would have been without the excursion. */
static const row clock_back[] = {
    {10 * SEC, 2, 0, 1, 0, -1, 2000, 0},
    {9 * SEC, 1, 0, 0, 0, 2000, 3000, 0},
    {9 * SEC, 0, 0, 0, 0, 1000, 3000, 0},
    {11 * SEC, 1, 0, 1, 0, -1, 2000, 1000},
};

/* A rate of one unit a year: each ceil is exact over the whole range. */
#define YEAR_MS 31536000000LL
static const row one_a_year[] = {
    {0, 31, 0, 1, 0, -1, 31 * YEAR_MS, 0},
    {0, 1, 0, 0, 0, YEAR_MS, 31 * YEAR_MS, 0},
    {YEAR_MS * MS - 1, 1, 0, 0, 0, 1, 30 * YEAR_MS + 1, 0},
    {YEAR_MS * MS, 1, 0, 1, 0, -1, 31 * YEAR_MS, 30 * YEAR_MS},
};

/* 10^9 per second into a bucket of 10^12: 1000 s to drain from full. */
static const row billion_per_second[] = {
    {0, 1000000000000LL, 0, 1, 0, -1, 1000 * 1000, 0},
    {1, 1000, 0, 1, 0, -1, 1000 * 1000, 1000000},    /* 1 µs drains 1000 units */
    {1, 1001, 0, 0, 0, 1, 1000 * 1000, 0},
    {SEC + 1, 1000000000LL, 0, 1, 0, -1, 1000 * 1000, 999000},
    {1000 * SEC + 1, 1, 0, 1, 998999999999LL, -1, 1001, 1000}, /* 10^9 units ahead */
};

static void test_tables(void) {
    limiter l = limiter_new(4, 3, 1000);
    RUN_TABLE(&l, burst_shaping);
    l = limiter_new(4, 3, 1000);
    RUN_TABLE(&l, burst_nodelay);
    l = limiter_new(3, 3, 1000);
    RUN_TABLE(&l, dryrun);

    l = limiter_new(10, 1, 1000);
    RUN_TABLE(&l, change_before);
    l.params[0] = 5;
    RUN_TABLE(&l, change_smaller);
    l.params[1] = 2;
    RUN_TABLE(&l, change_faster);

    l = limiter_new(4, 3, 1000);
    RUN_TABLE(&l, rem_before);
    l.params[1] = 1;
    RUN_TABLE(&l, rem_after);

    l = limiter_new(2, 1, 1000);
    RUN_TABLE(&l, clock_back);
    l = limiter_new(31, 1, YEAR_MS);
    RUN_TABLE(&l, one_a_year);
    l = limiter_new(1000000000000LL, 1000000000LL, 1000);
    RUN_TABLE(&l, billion_per_second);
}

/* --- validation and cells --------------------------------------------------------------------------- */

static void test_validate(void) {
    limiter ok[] = {
        limiter_new(1000000000000LL, 1000000000000LL, RL_MAX_PERIOD_MS), /* 10^12 ms from full */
        limiter_new(31, 1, YEAR_MS),
        limiter_new(1, 1, RL_MAX_PERIOD_MS),
        limiter_new(1000000000000LL, 1, 1),
    };
    limiter refused[] = {
        limiter_new(1000000000000LL, 999999999999LL, RL_MAX_PERIOD_MS),
        limiter_new(32, 1, YEAR_MS),
        limiter_new(2, 1, RL_MAX_PERIOD_MS),
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        rl_request req = request_of(&ok[i], BASE_US, 1, 0);
        CHECK(rl_leaky_algorithm.validate(&req, validate_err) == 0);
    }
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        rl_request req = request_of(&refused[i], BASE_US, 1, 0);
        CHECK(rl_leaky_algorithm.validate(&req, validate_err) != 0);
    }

    /* A new key is an empty bucket, whatever the cell holds. */
    limiter fresh = limiter_new(4, 3, 1000);
    fresh.cell.w[0] = (uint64_t)(BASE_US + 10 * SEC);
    CHECK_EQ(probe(&fresh, BASE_US, 0, 0).remaining, 4);
    CHECK_EQ(probe(&fresh, BASE_US, 0, 0).reset_after_ms, 0);

    rl_cell good = {{(uint64_t)(RL_MAX_TIME_US + RL_MAX_IDLE_MS * 1000), (uint64_t)RL_MAX_COUNT - 1}};
    rl_cell late = {{(uint64_t)(RL_MAX_TIME_US + RL_MAX_IDLE_MS * 1000) + 1, 0}};
    rl_cell negative = {{(uint64_t)-1, 0}};
    rl_cell big_rem = {{0, (uint64_t)RL_MAX_COUNT}};
    CHECK(rl_leaky_algorithm.cell_valid(&good));
    CHECK(!rl_leaky_algorithm.cell_valid(&late));
    CHECK(!rl_leaky_algorithm.cell_valid(&negative));
    CHECK(!rl_leaky_algorithm.cell_valid(&big_rem));
}

/* The extremes of every parameter at the end of the clock's range: no overflow (the sanitizers would
 * say), and the replies stay consistent. */
static void test_extremes(void) {
    static const int64_t sets[][3] = {
        {1000000000000LL, 1000000000000LL, RL_MAX_PERIOD_MS},
        {1000000000000LL, 1000000000000LL, 1},
        {1, 1, RL_MAX_PERIOD_MS},
        {1000000000000LL, 1, 1},
        {31, 1, YEAR_MS},
    };
    const int64_t times[] = {0, BASE_US, RL_MAX_TIME_US - 1, RL_MAX_TIME_US};
    for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
        for (size_t t = 0; t < sizeof times / sizeof times[0]; t++) {
            limiter l = limiter_new(sets[s][0], sets[s][1], sets[s][2]);
            int64_t capacity = sets[s][0];
            rl_reply full = call(&l, times[t], capacity, 0);
            CHECK_EQ(full.allowed, 1);
            CHECK_EQ(full.remaining, 0);
            CHECK_EQ(full.reset_after_ms, rl_ceil_div((rl_i128)capacity * sets[s][2], sets[s][1]));
            rl_reply more = call(&l, times[t], capacity, 0);
            CHECK_EQ(more.allowed, 0);
            CHECK_EQ(more.retry_after_ms, full.reset_after_ms);
            rl_reply again = probe(&l, times[t] + full.reset_after_us, capacity, 0);
            CHECK_EQ(again.allowed, 1);
            CHECK_EQ(again.wait_ms, 0);
            CHECK_EQ(again.reset_after_us, full.reset_after_us);
        }
    }
}

/* --- generic promises, on pseudo-random parameters ------------------------------------------------ */

static limiter random_limiter(void) {
    for (;;) {
        int64_t capacity = rng_magnitude(RL_MAX_COUNT), leak_tokens = rng_magnitude(RL_MAX_COUNT);
        limiter l = limiter_new(capacity, leak_tokens, rng_magnitude(RL_MAX_PERIOD_MS));
        rl_request req = request_of(&l, BASE_US, 1, 0);
        if (rl_leaky_algorithm.validate(&req, validate_err) == 0) return l;
    }
}

/* A cost: mostly small against the capacity, sometimes 0, the whole capacity, or more. */
static int64_t random_cost(int64_t capacity) {
    switch (rng() % 8) {
    case 0: return 0;
    case 1: return capacity;
    case 2: return capacity + 1;
    case 3: return 1;
    default: return 1 + (int64_t)(rng() % (uint64_t)capacity);
    }
}

/* A gap between calls, relative to the time one unit or the whole bucket takes to drain. */
static int64_t random_gap(const limiter *l) {
    rl_i128 unit_us = (rl_i128)l->params[2] * 1000 / l->params[1];
    rl_i128 full_us = unit_us * l->params[0];
    switch (rng() % 5) {
    case 0: return 0;
    case 1: return (int64_t)(rng() % 3000);
    case 2: return unit_us > 0 ? (int64_t)(rng() % (uint64_t)(unit_us * 2 + 1)) : 0;
    default: return full_us > 0 ? (int64_t)(rng() % (uint64_t)(full_us + 1)) : 0;
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

/* reset_after_ms / _us say exactly when the limiter is idle, and an idle cell is a new bucket. */
static void check_reset(const limiter *l, int64_t now, uint32_t flags, const rl_reply *r) {
    CHECK_EQ(r->reset_after_ms, (r->reset_after_us + 999) / 1000);
    if (r->reset_after_ms == 0) return;
    CHECK(probe(l, ms_before(now, r->reset_after_ms), 0, flags).reset_after_ms > 0);
    CHECK_EQ(probe(l, ms_at(now, r->reset_after_ms), 0, flags).reset_after_ms, 0);
    CHECK(probe(l, now + r->reset_after_us - 1, 0, flags).reset_after_us > 0);
    rl_reply idle = probe(l, now + r->reset_after_us, 0, flags);
    CHECK_EQ(idle.reset_after_us, 0);
    CHECK_EQ(idle.remaining, l->params[0]);

    limiter fresh = *l;
    fresh.exists = 0;
    int64_t at = now + r->reset_after_us, cost = l->params[0];
    rl_reply a = probe(l, at, cost, flags), b = probe(&fresh, at, cost, flags);
    CHECK(a.allowed == b.allowed && a.remaining == b.remaining && a.reset_after_us == b.reset_after_us &&
          a.wait_ms == b.wait_ms);
}

/* remaining more units are admitted now, one more is not. */
static void check_remaining(const limiter *l, int64_t now, uint32_t flags, const rl_reply *r) {
    CHECK(r->remaining >= 0 && r->remaining <= l->params[0]);
    if (r->remaining > 0) CHECK_EQ(probe(l, now, r->remaining, flags).allowed, 1);
    CHECK_EQ(probe(l, now, r->remaining + 1, flags).allowed, 0);
}

/* wait_ms is when the units that were ahead of the request have drained. */
static void check_wait(const limiter *before, int64_t now, uint32_t flags, const rl_reply *r) {
    if (!r->allowed || (flags & RL_F_NODELAY)) {
        CHECK_EQ(r->wait_ms, 0);
        return;
    }
    if (r->wait_ms == 0) return;
    CHECK(probe(before, ms_before(now, r->wait_ms), 0, flags).wait_ms >= 1);
    CHECK_EQ(probe(before, ms_at(now, r->wait_ms), 0, flags).wait_ms, 0);
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
        limiter l = random_limiter();
        int64_t now = BASE_US + (int64_t)(rng() % (uint64_t)(1000 * SEC));
        for (int step = 0; step < 40; step++) {
            now += random_gap(&l);
            int64_t cost = random_cost(l.params[0]);
            uint32_t flags = (rng() % 3 == 0) ? RL_F_NODELAY : 0;
            limiter before = l;
            check_earlier(&before, now, cost, flags);
            rl_reply r = call(&l, now, cost, flags);
            CHECK_EQ(r.allowed, cost <= l.params[0] && probe(&before, now, cost, flags).allowed);
            check_retry(&l, now, cost, flags, &r);
            check_reset(&l, now, flags, &r);
            check_remaining(&l, now, flags, &r);
            check_wait(&before, now, flags, &r);
        }
    }
}

/* A sequence of unit requests whose clock sometimes steps back is admitted no more often than the same
 * sequence on a clock that holds still instead. */
static void test_clock_back_sequences(void) {
    for (int set = 0; set < 200; set++) {
        limiter jittery = random_limiter(), steady = jittery;
        int64_t now = BASE_US, latest = INT64_MIN, admitted_jittery = 0, admitted_steady = 0;
        for (int step = 0; step < 200; step++) {
            int64_t span = random_gap(&jittery) + 1;
            if (rng() % 4 == 0)
                now -= (int64_t)(rng() % (uint64_t)span);
            else
                now += random_gap(&jittery);
            if (now > latest) latest = now;
            admitted_jittery += call(&jittery, now, 1, 0).allowed;
            admitted_steady += call(&steady, latest, 1, 0).allowed;
        }
        CHECK(admitted_jittery <= admitted_steady);
    }
}

/* 10^6 requests at a steady pace faster than the drain rate: exactly capacity + floor(t * R / P) get
 * in over t, so no fraction of a unit is ever lost or gained. 7 units per 3 ms (T = 428.57.. µs), a
 * request every 100 µs. */
static void test_no_drift(void) {
    const uint32_t modes[] = {0, RL_F_NODELAY};
    for (size_t m = 0; m < 2; m++) {
        limiter l = limiter_new(5, 7, 3);
        int64_t admitted = 0, last_wait = 0;
        const int64_t n = 1000000, pace_us = 100;
        for (int64_t i = 0; i < n; i++) {
            rl_reply r = call(&l, BASE_US + i * pace_us, 1, modes[m]);
            admitted += r.allowed;
            if (r.allowed) last_wait = r.wait_ms;
        }
        int64_t elapsed_us = (n - 1) * pace_us;
        CHECK_EQ(admitted, 5 + elapsed_us * 7 / 3000);
        CHECK_EQ(last_wait, modes[m] ? 0 : 2); /* 4 units ahead: 1.71.. ms */
    }
}

int main(void) {
    test_tables();
    test_validate();
    test_extremes();
    test_generic();
    test_clock_back_sequences();
    test_no_drift();
    return check_summary("unit_leaky");
}
