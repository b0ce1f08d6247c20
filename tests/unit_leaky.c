/* unit_leaky.c -- tests of the leaky bucket (algorithms/leaky.c), driven by a fake clock.
 *
 * The harness in alg_checks.h plays the module (it keeps the cell between calls, stores it unless DRYRUN
 * and drops the key when the reply says idle) and checks the promises every algorithm's reply makes. This
 * file brings what is the leaky bucket's own: scripted tables of shaping and policing with every reply
 * field, parameter changes, the extremes of every parameter, the bucket's parameter space and gaps for
 * the pseudo-random runs of the generic promises, and wait_ms: the time the units ahead take to drain.
 * REFUND tables (not below empty, never before now, over a lowered capacity, with the clock behind, at
 * 10^12), and refunds in the generic runs (the leaky bucket has no ATMOST). FORCE tables (over the
 * capacity, drained exactly, saturated; refused without NODELAY) and FORCE in the generic runs where the
 * call polices. A long steady run shows no fraction of a unit is ever lost or gained. */
#define RNG_SEED 0x9e3779b97f4a7c15ULL
#include "alg_checks.h"
#include "../algorithms/leaky.h"

#define MS 1000LL
#define SEC (1000 * MS)
#define BASE_US (1700000000000LL * MS) /* an ordinary present-day time, Nov 2023 */

/* A leaky bucket on the harness's stand-in for the module. */
static limiter new_leaky(int64_t capacity, int64_t leak_tokens, int64_t leak_ms) {
    return limiter_new(&rl_leaky_algorithm, capacity, leak_tokens, leak_ms);
}

/* --- scripted tables -------------------------------------------------------------------------------- */

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
    RUN_TABLE_NEW(new_leaky(4, 3, 1000), BASE_US, burst_shaping);
    RUN_TABLE_NEW(new_leaky(4, 3, 1000), BASE_US, burst_nodelay);
    RUN_TABLE_NEW(new_leaky(3, 3, 1000), BASE_US, dryrun);

    limiter l = new_leaky(10, 1, 1000);
    RUN_TABLE(&l, BASE_US, change_before);
    l.params[0] = 5;
    RUN_TABLE(&l, BASE_US, change_smaller);
    l.params[1] = 2;
    RUN_TABLE(&l, BASE_US, change_faster);

    l = new_leaky(4, 3, 1000);
    RUN_TABLE(&l, BASE_US, rem_before);
    l.params[1] = 1;
    RUN_TABLE(&l, BASE_US, rem_after);

    RUN_TABLE_NEW(new_leaky(2, 1, 1000), BASE_US, clock_back);
    RUN_TABLE_NEW(new_leaky(31, 1, YEAR_MS), BASE_US, one_a_year);
    RUN_TABLE_NEW(new_leaky(1000000000000LL, 1000000000LL, 1000), BASE_US, billion_per_second);
}

/* REFUND: units out of the bucket now, not below empty (granted 0, wait 0). 4 units, 3 per second
 * (T = 333.33.. ms); every row spells out granted. */
#define R RL_F_REFUND
static const row_g refund[] = {
    {0, 4, 0, 1, 0, -1, 1334, 0, 4},
    {0, 1, R, 1, 1, -1, 1000, 0, 0},             /* level 3: empty at exactly 1000 ms */
    {0, 0, R, 1, 1, -1, 1000, 0, 0},             /* a refund of 0 changes nothing */
    {500 * MS, 1, R, 1, 3, -1, 167, 0, 0},       /* level 1.5 - 1 = 0.5 */
    {500 * MS, 9, R, 1, 4, -1, 0, 0, 0},         /* more than is in the bucket: empty, idle */
    {500 * MS, 2, R, 1, 4, -1, 0, 0, 0},         /* on an empty (new) bucket: nothing */
    {600 * MS, 2, 0, 1, 2, -1, 667, 0, 2},
    {600 * MS, 1, R | RL_F_NODELAY, 1, 3, -1, 334, 0, 0},
    {600 * MS, 3, 0, 1, 0, -1, 1334, 334, 3},    /* shaping: 1 unit ahead */
    {600 * MS, 1, 0, 0, 0, 334, 1334, 0, 0},
    {600 * MS, 1, R, 1, 1, -1, 1000, 0, 0},      /* the refund waits for nothing */
    {600 * MS, 2, R | RL_F_DRYRUN, 1, 3, -1, 334, 0, 0},
    {600 * MS, 0, 0, 1, 1, -1, 1000, 1000, 0},   /* the DRYRUN refund stored nothing */
};
/* Then the capacity drops to 2 with 3 units in: a refund of 2 leaves 1, so 1 fits, not min(2, 0 + 2). */
static const row_g refund_over_capacity[] = {
    {600 * MS, 0, 0, 0, 0, 334, 1000, 0, 0},
    {600 * MS, 2, R, 1, 1, -1, 334, 0, 0},
};
/* A clock 1 s behind: the bucket looks fuller, and the refund comes off that level, never below the
 * earlier now. Back at the real time the bucket holds what the same refund then would have left (3 units
 * in, less 2): nothing gained. */
static const row_g refund_clock_back[] = {
    {10 * SEC, 3, 0, 1, 1, -1, 1000, 0, 3},       /* 3 per second: empty at 11 s */
    {9 * SEC, 2, R, 1, 0, -1, 1334, 0, 0},        /* level 6 at 9 s (> 4): down to 4... */
    {10 * SEC, 0, 0, 1, 3, -1, 334, 334, 0},      /* ...empty at 10333 ms: level 1 at 10 s */
    {9 * SEC, 9, R, 1, 4, -1, 0, 0, 0},           /* level 4 at 9 s: empty at 9 s, not before */
    {10 * SEC, 0, 0, 1, 4, -1, 0, 0, 0},          /* idle at 10 s */
};
/* 10^12 units, 10^9 per second (one per ns). */
static const row_g refund_huge[] = {
    {0, 1000000000000LL, 0, 1, 0, -1, 1000000, 0, 1000000000000LL},
    {0, 999999999999LL, R, 1, 999999999999LL, -1, 1, 0, 0}, /* 1 unit: 1 ns to drain */
    {1, 0, 0, 1, 1000000000000LL, -1, 0, 0, 0},             /* 1 µs later: empty */
    {1, 1000000000000LL, R, 1, 1000000000000LL, -1, 0, 0, 0},
};
#undef R

static void test_refund_tables(void) {
    limiter l = new_leaky(4, 3, 1000);
    RUN_TABLE_G(&l, BASE_US, refund);
    l.params[0] = 2;
    RUN_TABLE_G(&l, BASE_US, refund_over_capacity);
    RUN_TABLE_G_NEW(new_leaky(4, 3, 1000), BASE_US, refund_clock_back);
    RUN_TABLE_G_NEW(new_leaky(1000000000000LL, 1000000000LL, 1000), BASE_US, refund_huge);
    /* The leaky bucket has no ATMOST: the flag changes nothing (granted is the cost when allowed). */
    l = new_leaky(4, 3, 1000);
    rl_reply r = call(&l, BASE_US, 5, RL_F_ATMOST);
    CHECK(r.allowed == 0 && r.granted == 0 && r.retry_after_ms == -1);
    r = call(&l, BASE_US, 3, RL_F_ATMOST);
    CHECK(r.allowed == 1 && r.granted == 3 && r.remaining == 1);
}

/* FORCE (with NODELAY): the units go in whatever the room, the level passes the capacity (the debt), and it
 * drains at the leak rate. Capacity 4, 3 per 1000 ms. */
#define N RL_F_NODELAY
#define F RL_F_FORCE
static const row_g force[] = {
    {0, 10, N | F, 1, 0, -1, 3334, 0, 10},        /* 6 over the capacity: 10 units to drain */
    {0, 1, N, 0, 0, 2334, 3334, 0, 0},            /* 7 must drain first */
    {0, 0, N, 0, 0, 2000, 3334, 0, 0},            /* even a peek is denied while over */
    {2000 * MS, 0, N, 1, 0, -1, 1334, 0, 0},
    {2334 * MS, 1, N | F, 1, 0, -1, 1333, 0, 1},  /* 2.998 + 1: room for it, a plain admission */
    {2334 * MS, 2, 0, 0, 0, 666, 1333, 0, 0},     /* shaping reads the same level */
    {2334 * MS, 5, N | F | RL_F_DRYRUN, 1, 0, -1, 3000, 0, 5},
    {2334 * MS, 0, N, 1, 0, -1, 1333, 0, 0},      /* the DRYRUN added nothing */
};

/* Saturation: 1 per 10^6 ms, capacity 1: the level recorded drains within 10^12 ms, so at most 10^6 units
 * (999999 over); a FORCE beyond is admitted and the level stays there. */
static const row_g force_highest[] = {
    {0, 2000000, N | F, 1, 0, -1, RL_MAX_IDLE_MS, 0, 2000000},
    {0, 1, N | F, 1, 0, -1, RL_MAX_IDLE_MS, 0, 1},
    {0, 1, N, 0, 0, RL_MAX_IDLE_MS, RL_MAX_IDLE_MS, 0, 0},
};

/* A fast bucket (10^9 per s, capacity 10) records at most RL_MAX_DEBT units over its capacity. */
static const row_g force_most_debt[] = {
    {0, 1000000000000LL, N | F, 1, 0, -1, 1000000, 0, 1000000000000LL},
    {0, 1000000000000LL, N | F, 1, 0, -1, 1000001, 0, 1000000000000LL},
    {0, 1, N, 0, 0, 1000001, 1000001, 0, 0},
};

static void test_force_tables(void) {
    RUN_TABLE_G_NEW(new_leaky(4, 3, 1000), BASE_US, force);
    RUN_TABLE_G_NEW(new_leaky(1, 1, 1000000), BASE_US, force_highest);
    RUN_TABLE_G_NEW(new_leaky(10, 1000000000, 1000), BASE_US, force_most_debt);
    /* Without NODELAY FORCE is refused (validate), naming FORCE. */
    limiter l = new_leaky(4, 3, 1000);
    rl_request req = request_of(&l, BASE_US, 1, F);
    CHECK(rl_leaky_algorithm.validate(&req, validate_err) != 0);
    CHECK(strncmp(validate_err, "ERR FORCE: ", 11) == 0);
    req.flags |= N;
    CHECK(rl_leaky_algorithm.validate(&req, validate_err) == 0);
    /* At the end of the clock's range the highest level still leaves a cell cell_valid accepts. */
    limiter late = new_leaky(1, 1, 1000000);
    CHECK_EQ(call(&late, RL_MAX_TIME_US - 1, 1000000000000LL, N | F).reset_after_ms, RL_MAX_IDLE_MS);
}
#undef N
#undef F

/* --- validation and cells --------------------------------------------------------------------------- */

static void test_validate(void) {
    limiter ok[] = {
        new_leaky(1000000000000LL, 1000000000000LL, RL_MAX_PERIOD_MS), /* 10^12 ms from full */
        new_leaky(31, 1, YEAR_MS),
        new_leaky(1, 1, RL_MAX_PERIOD_MS),
        new_leaky(1000000000000LL, 1, 1),
    };
    limiter refused[] = {
        new_leaky(1000000000000LL, 999999999999LL, RL_MAX_PERIOD_MS),
        new_leaky(32, 1, YEAR_MS),
        new_leaky(2, 1, RL_MAX_PERIOD_MS),
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
    limiter fresh = new_leaky(4, 3, 1000);
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
            limiter l = new_leaky(sets[s][0], sets[s][1], sets[s][2]);
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

static limiter random_leaky(void) {
    static const int64_t max[3] = {RL_MAX_COUNT, RL_MAX_COUNT, RL_MAX_PERIOD_MS};
    return random_limiter(&rl_leaky_algorithm, max);
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

/* Shaping or policing, a third of the calls each way round. */
static uint32_t random_flags(int set, int step) {
    (void)set, (void)step;
    return (rng() % 3 == 0) ? RL_F_NODELAY : 0;
}

/* wait_ms is when the units that were ahead of the request have drained; a refund takes units out one
 * for one. */
static void check_leaky_own(const limiter *before, int64_t now, int64_t cost, uint32_t flags, const rl_reply *r) {
    check_refund_exact(before, now, cost, flags, r);
    if (!r->allowed || (flags & RL_F_NODELAY)) {
        CHECK_EQ(r->wait_ms, 0);
        return;
    }
    if (r->wait_ms == 0) return;
    CHECK(probe(before, ms_before(now, r->wait_ms), 0, flags).wait_ms >= 1);
    CHECK_EQ(probe(before, ms_at(now, r->wait_ms), 0, flags).wait_ms, 0);
}

static void test_generic(void) {
    /* NODELAY changes no state, only the reply's wait: the bucket has one mode. */
    const promise_plan plan = {400, 40, BASE_US, 0, RL_F_REFUND | RL_F_FORCE, random_leaky, random_gap, random_flags,
                               check_leaky_own};
    check_promises(&plan);
}

/* A run of unit requests whose clock sometimes steps back is admitted no more often than the same run
 * on a clock that holds still instead. */
static void test_clock_back_sequences(void) {
    for (int set = 0; set < 200; set++)
        check_clock_back_run(random_leaky(), 0, 200, BASE_US, random_gap, random_gap);
}

/* 10^6 requests at a steady pace faster than the drain rate: exactly capacity + floor(t * R / P) get
 * in over t, so no fraction of a unit is ever lost or gained. 7 units per 3 ms (T = 428.57.. µs), a
 * request every 100 µs. */
static void test_no_drift(void) {
    const uint32_t modes[] = {0, RL_F_NODELAY};
    for (size_t m = 0; m < 2; m++) {
        limiter l = new_leaky(5, 7, 3);
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
    test_refund_tables();
    test_force_tables();
    test_validate();
    test_extremes();
    test_generic();
    test_clock_back_sequences();
    test_no_drift();
    return check_summary("unit_leaky");
}
