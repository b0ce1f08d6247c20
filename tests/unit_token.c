/* unit_token.c -- tests of the token bucket (algorithms/token.c), continuous and INTERVAL, driven by a
 * fake clock.
 *
 * The harness in alg_checks.h plays the module (it keeps the cell between calls, stores it unless DRYRUN
 * and drops the key when the reply says idle) and checks the promises every algorithm's reply makes, here
 * on pseudo-random parameter sets in both refill modes and in keys that switch between them. This file
 * brings what is the token bucket's own: scripted tables with every reply field (continuous exactness,
 * INTERVAL's whole chunks counted from the anchor), REFUND and ATMOST in both modes (a refund keeps the
 * fraction held and the INTERVAL anchor; ATMOST takes the whole tokens there), no drift over a million
 * calls, extreme rates and counts, parameter and mode changes, time going backwards, and the cell
 * layout; FORCE in both modes (the debt, its exact repayment, its saturation, the INTERVAL debt's cell). The
 * generic runs issue refunds, ATMOST and FORCE requests too (promise_plan.options). */
#define RNG_SEED 0xb7e151628aed2a6bULL
#include "alg_checks.h"
#include "../algorithms/token.h"

#define MS 1000LL
#define T0 (1700000000000LL * MS) /* an ordinary present-day time, Nov 2023 */

/* A token bucket on the harness's stand-in for the module. */
static limiter new_token(int64_t capacity, int64_t refill_tokens, int64_t refill_ms) {
    return limiter_new(&rl_token_algorithm, capacity, refill_tokens, refill_ms);
}

/* --- scripted tables -------------------------------------------------------------------------------- */

/* 3 tokens per second, capacity 1: 333 ms is too early, 334 ms is enough. */
static const row exact[] = {
    {0, 1, 0, 1, 0, -1, 334, 0},
    {333 * MS, 1, 0, 0, 0, 1, 1, 0},
    {334 * MS, 1, 0, 1, 0, -1, 334, 0},
    {334 * MS, 1, 0, 0, 0, 334, 334, 0},
    {1000 * MS, 0, 0, 1, 1, -1, 0, 0},
};

/* Capacity 10, 5 per 1000 ms (one per 200 ms). */
static const row cont[] = {
    {0, 10, 0, 1, 0, -1, 2000, 0},
    {0, 1, 0, 0, 0, 200, 2000, 0},
    {100 * MS, 0, 0, 1, 0, -1, 1900, 0},
    {399 * MS, 2, 0, 0, 1, 1, 1601, 0},
    {400 * MS, 2, 0, 1, 0, -1, 2000, 0},
    {400 * MS, 11, 0, 0, 0, -1, 2000, 0},
    {2400 * MS, 0, 0, 1, 10, -1, 0, 0},
    {9999 * MS, 3, 0, 1, 7, -1, 600, 0},
};

/* INTERVAL: capacity 5, chunks of 2 every 1000 ms from the anchor. */
static const row chunks[] = {
    {0, 5, RL_F_INTERVAL, 1, 0, -1, 3000, 0},
    {999 * MS, 1, RL_F_INTERVAL, 0, 0, 1, 2001, 0},
    {1000 * MS, 1, RL_F_INTERVAL, 1, 1, -1, 2000, 0},
    {1500 * MS, 3, RL_F_INTERVAL, 0, 1, 500, 1500, 0},
    {2999 * MS, 0, RL_F_INTERVAL, 1, 3, -1, 1, 0},
    {3000 * MS, 0, RL_F_INTERVAL, 1, 5, -1, 0, 0},
    {3500 * MS, 2, RL_F_INTERVAL, 1, 3, -1, 1000, 0},
    {4499 * MS, 4, RL_F_INTERVAL, 0, 3, 1, 1, 0},
    {4500 * MS, 4, RL_F_INTERVAL, 1, 1, -1, 2000, 0},
    {4500 * MS, 6, RL_F_INTERVAL, 0, 1, -1, 2000, 0},
};

static void test_tables(void) {
    RUN_TABLE_NEW(new_token(1, 3, 1000), T0, exact);
    RUN_TABLE_NEW(new_token(10, 5, 1000), T0, cont);
    RUN_TABLE_NEW(new_token(5, 2, 1000), T0, chunks);
}

/* REFUND and ATMOST. Every row spells out granted: the cost when a plain request is allowed, what ATMOST
 * took, 0 for a refund. */
#define R RL_F_REFUND
#define A RL_F_ATMOST
#define I RL_F_INTERVAL
#define BIG RL_MAX_COUNT

/* Capacity 10, 5 per 1000 ms (one per 200 ms), continuous: a refund adds whole tokens to the exact
 * fraction held, capped at the capacity. */
static const row_g refund_cont[] = {
    {0, 10, 0, 1, 0, -1, 2000, 0, 10},
    {0, 3, R, 1, 3, -1, 1400, 0, 0},
    {100 * MS, 0, R, 1, 3, -1, 1300, 0, 0},    /* 3.5 tokens: a refund of 0 changes nothing */
    {100 * MS, 4, R, 1, 7, -1, 500, 0, 0},     /* 7.5: the half token is kept */
    {100 * MS, 100, R, 1, 10, -1, 0, 0, 0},    /* more than was consumed: full, idle (the key goes) */
    {100 * MS, 5, R, 1, 10, -1, 0, 0, 0},      /* on a full (new) bucket: nothing */
    {200 * MS, 10, 0, 1, 0, -1, 2000, 0, 10},
    {200 * MS, 2, R | RL_F_DRYRUN, 1, 2, -1, 1600, 0, 0},
    {200 * MS, 0, 0, 1, 0, -1, 2000, 0, 0},    /* the DRYRUN refund stored nothing */
    {50 * MS, 1, R, 1, 0, -1, 1950, 0, 0},     /* clock 150 ms back: -0.75 + 1 = 0.25 tokens */
    {200 * MS, 0, 0, 1, 1, -1, 1800, 0, 0},    /* back at 200 ms: 1 token, as a refund at 200 ms gives */
};

/* INTERVAL, capacity 5, chunks of 2 every 1000 ms: whole tokens back, the anchor kept (the chunk in
 * progress arrives on time). */
static const row_g refund_interval[] = {
    {0, 5, I, 1, 0, -1, 3000, 0, 5},
    {500 * MS, 1, I | R, 1, 1, -1, 1500, 0, 0},  /* 2 chunks from full now, not 3 */
    {1000 * MS, 0, I, 1, 3, -1, 1000, 0, 0},     /* the chunk at anchor + 1000 ms came */
    {1000 * MS, 1, I | R, 1, 4, -1, 1000, 0, 0},
    {1500 * MS, 9, I | R, 1, 5, -1, 0, 0, 0},    /* capped: full, idle */
    {1500 * MS, 2, I, 1, 3, -1, 1000, 0, 2},     /* a new bucket: anchored at 1500 ms */
    {2499 * MS, 0, I | R, 1, 3, -1, 1, 0, 0},
    {2500 * MS, 3, I | R, 1, 5, -1, 0, 0, 0},    /* full by its chunk already: nothing to add */
};

/* ATMOST, continuous (capacity 10, one token per 200 ms): what is there, up to n; 1 token's wait when
 * nothing is. A cost above the capacity is no longer "never". */
static const row_g atmost_cont[] = {
    {0, 7, A, 1, 3, -1, 1400, 0, 7},
    {0, 5, A, 1, 0, -1, 2000, 0, 3},           /* only 3 left: granted 3 */
    {0, 5, A, 0, 0, 200, 2000, 0, 0},          /* nothing: retry when 1 token is there */
    {100 * MS, 0, A, 1, 0, -1, 1900, 0, 0},    /* COST 0: a peek */
    {199 * MS, 1, A, 0, 0, 1, 1801, 0, 0},     /* 0.995 tokens */
    {300 * MS, 20, A, 1, 0, -1, 1900, 0, 1},   /* 1.5 tokens: 1 taken, the half kept */
    {300 * MS, 20, 0, 0, 0, -1, 1900, 0, 0},   /* the plain request: never */
    {2300 * MS, 20, A, 1, 0, -1, 2000, 0, 10}, /* full again: all of it */
};

/* ATMOST with INTERVAL (capacity 5, 2 per 1000 ms). */
static const row_g atmost_interval[] = {
    {0, 3, I | A, 1, 2, -1, 2000, 0, 3},
    {0, 4, I | A, 1, 0, -1, 3000, 0, 2},
    {999 * MS, 2, I | A, 0, 0, 1, 2001, 0, 0},
    {1000 * MS, 9, I | A, 1, 0, -1, 3000, 0, 2}, /* the chunk: all 2 */
    {1000 * MS, 0, I | A, 1, 0, -1, 3000, 0, 0},
};

/* Capacity 10^12, 10^9 per second (one per ns): counts near the top of the range. */
static const row_g refund_atmost_huge[] = {
    {0, BIG, 0, 1, 0, -1, 1000000, 0, BIG},
    {MS, BIG, A, 1, 0, -1, 1000000, 0, 1000000},  /* 10^6 came in 1 ms */
    {MS, BIG, R, 1, BIG, -1, 0, 0, 0},
    {MS, BIG - 1, 0, 1, 1, -1, 1000000, 0, BIG - 1},
    {MS, BIG - 2, R, 1, BIG - 1, -1, 1, 0, 0},    /* 1 ns from full */
    {MS, BIG, A, 1, 0, -1, 1000000, 0, BIG - 1},
    {MS, BIG, A, 0, 0, 1, 1000000, 0, 0},
};

static void test_refund_atmost_tables(void) {
    RUN_TABLE_G_NEW(new_token(10, 5, 1000), T0, refund_cont);
    RUN_TABLE_G_NEW(new_token(5, 2, 1000), T0, refund_interval);
    RUN_TABLE_G_NEW(new_token(10, 5, 1000), T0, atmost_cont);
    RUN_TABLE_G_NEW(new_token(5, 2, 1000), T0, atmost_interval);
    RUN_TABLE_G_NEW(new_token(BIG, 1000000000, 1000), T0, refund_atmost_huge);

    /* The longest refill accepted, at the end of the clock's range: 1 token per ms, or chunks of 10^12
     * every 10^12 ms. */
    limiter e = new_token(BIG, BIG, RL_MAX_PERIOD_MS);
    int64_t late = RL_MAX_TIME_US - 1;
    CHECK_EQ(call(&e, late, BIG, 0).reset_after_ms, RL_MAX_PERIOD_MS);
    rl_reply r = call(&e, late, BIG - 1, R);
    CHECK_EQ(r.remaining, BIG - 1);
    CHECK_EQ(r.reset_after_ms, 1);
    r = call(&e, late, BIG, A);
    CHECK_EQ(r.granted, BIG - 1);
    CHECK_EQ(r.reset_after_ms, RL_MAX_PERIOD_MS);
    r = call(&e, late, BIG, A | I);
    CHECK_EQ(r.allowed, 0);
    CHECK_EQ(r.retry_after_ms, RL_MAX_PERIOD_MS); /* switched with 0 whole tokens: a whole period */
}

/* FORCE: the tokens are taken whatever is there, the bucket goes below empty, and the debt is repaid at the
 * refill rate. Capacity 10, 5 per 1000 ms (one per 200 ms), continuous. */
#define F RL_F_FORCE
static const row_g force_cont[] = {
    {0, 25, F, 1, 0, -1, 5000, 0, 25},          /* 15 below empty: 25 tokens to full */
    {0, 1, 0, 0, 0, 3200, 5000, 0, 0},          /* 16 tokens away */
    {0, 0, 0, 0, 0, 3000, 5000, 0, 0},          /* even a peek is denied until the debt is repaid */
    {3000 * MS, 0, 0, 1, 0, -1, 2000, 0, 0},
    {3199 * MS, 1, 0, 0, 0, 1, 1801, 0, 0},
    {3200 * MS, 1, 0, 1, 0, -1, 2000, 0, 1},
    {3200 * MS, 3, F, 1, 0, -1, 2600, 0, 3},
    {3200 * MS, 2, F | RL_F_DRYRUN, 1, 0, -1, 3000, 0, 2},
    {3200 * MS, 0, 0, 0, 0, 600, 2600, 0, 0},   /* the DRYRUN stored nothing */
    {3200 * MS, 11, F, 1, 0, -1, 4800, 0, 11},  /* above the capacity: admitted too */
    {8000 * MS, 0, 0, 1, 10, -1, 0, 0, 0},      /* full again, idle */
    {8000 * MS, 4, F, 1, 6, -1, 800, 0, 4},     /* what fits is a plain request */
};

/* INTERVAL, capacity 5, chunks of 2 every 1000 ms: the whole count goes negative; chunks come on the
 * anchor's schedule. */
static const row_g force_interval[] = {
    {0, 9, I | F, 1, 0, -1, 5000, 0, 9},        /* from full: anchored now, 4 owed, ceil(9 / 2) chunks */
    {0, 1, I, 0, 0, 3000, 5000, 0, 0},
    {999 * MS, 0, I, 0, 0, 1001, 4001, 0, 0},
    {2000 * MS, 0, I, 1, 0, -1, 3000, 0, 0},    /* two chunks: back to 0 */
    {2000 * MS, 1, I | F, 1, 0, -1, 3000, 0, 1},
    {3000 * MS, 1, I, 1, 0, -1, 3000, 0, 1},
};

/* Switching modes keeps a debt in whole tokens (a fraction owed is a whole token owed). Capacity 10, 5 per
 * 1000 ms. */
static const row_g force_switch[] = {
    {0, 13, F, 1, 0, -1, 2600, 0, 13},         /* 3 owed */
    {100 * MS, 1, I, 0, 0, 1000, 3000, 0, 0},  /* 2.5 owed: 3 whole, anchored at 100 ms */
    {1100 * MS, 0, 0, 1, 2, -1, 1600, 0, 0},   /* the chunk came: 2 tokens, continuous again */
};

/* Saturation. 1 token per 10^6 ms, capacity 1: a debt only as deep as leaves the bucket full again within
 * 10^12 ms, that is 999999 tokens; a FORCE beyond is admitted and the debt stays there. */
static const row_g force_deepest_cont[] = {
    {0, 2000000, F, 1, 0, -1, RL_MAX_IDLE_MS, 0, 2000000},
    {0, 1, F, 1, 0, -1, RL_MAX_IDLE_MS, 0, 1},
    {0, 1, 0, 0, 0, RL_MAX_IDLE_MS, RL_MAX_IDLE_MS, 0, 0},
    {MS, 1, 0, 0, 0, RL_MAX_IDLE_MS - 1, RL_MAX_IDLE_MS - 1, 0, 0},
};

/* A fast bucket (10^9 per s, capacity 10) records at most RL_MAX_DEBT tokens owed. */
static const row_g force_most_debt[] = {
    {0, BIG, F, 1, 0, -1, 1000000, 0, BIG},    /* 10^12 - 10 owed: 10^12 tokens to full */
    {0, BIG, F, 1, 0, -1, 1000001, 0, BIG},    /* saturated at 10^12 owed */
    {0, 1, 0, 0, 0, 1000001, 1000001, 0, 0},   /* 10^12 + 1 tokens away, at one per µs (rounded up) */
};

/* INTERVAL: 1 per 10^9 ms, capacity 1: ceil((1 + D) / 1) chunks of 10^9 ms within 10^12 ms: 999 owed. And a
 * bucket whose capacity alone takes 10^12 ms (10^12 per 10^12 ms) records no debt: a FORCE empties it. */
static const row_g force_deepest_interval[] = {
    {0, 5000, I | F, 1, 0, -1, RL_MAX_IDLE_MS, 0, 5000},
    {0, 1, I, 0, 0, RL_MAX_IDLE_MS, RL_MAX_IDLE_MS, 0, 0},
};
static const row_g force_no_debt_interval[] = {
    {0, BIG, I | F, 1, 0, -1, RL_MAX_PERIOD_MS, 0, BIG},
    {0, 1, I | F, 1, 0, -1, RL_MAX_PERIOD_MS, 0, 1},
    {0, 1, I, 0, 0, RL_MAX_PERIOD_MS, RL_MAX_PERIOD_MS, 0, 0},
};

static void test_force_tables(void) {
    RUN_TABLE_G_NEW(new_token(10, 5, 1000), T0, force_cont);
    RUN_TABLE_G_NEW(new_token(5, 2, 1000), T0, force_interval);
    RUN_TABLE_G_NEW(new_token(10, 5, 1000), T0, force_switch);
    RUN_TABLE_G_NEW(new_token(1, 1, 1000000), T0, force_deepest_cont);
    RUN_TABLE_G_NEW(new_token(10, 1000000000, 1000), T0, force_most_debt);
    RUN_TABLE_G_NEW(new_token(1, 1, 1000000000), T0, force_deepest_interval);
    RUN_TABLE_G_NEW(new_token(BIG, BIG, RL_MAX_PERIOD_MS), T0, force_no_debt_interval);

    /* The INTERVAL debt's cell: the tokens owed with the debt bit; a bucket out of debt is written as
     * before. */
    limiter b = new_token(5, 2, 1000);
    call(&b, T0, 9, I | F);
    CHECK_EQ(b.cell.w[1], RL_TOKEN_INTERVAL_BIT | RL_TOKEN_DEBT_BIT | 4);
    call(&b, T0 + 2000 * MS, 0, I);
    CHECK_EQ(b.cell.w[1], RL_TOKEN_INTERVAL_BIT);
    /* A debt written under a faster rate reads as the deepest the slower one records. */
    limiter fast = new_token(1, 1000, 1);
    call(&fast, T0, 500000, I | F); /* 499999 owed */
    fast.params[1] = 1;
    fast.params[2] = 1000000000;    /* 1 per 10^9 ms: at most 999 owed */
    rl_reply r = call(&fast, T0, 0, I);
    CHECK_EQ(r.reset_after_ms, RL_MAX_IDLE_MS);
    /* At the end of the clock's range, the deepest debt still leaves every deadline inside the cell's
     * bounds. */
    limiter late = new_token(1, 1, 1000000);
    CHECK_EQ(call(&late, RL_MAX_TIME_US - 1, BIG, F).reset_after_ms, RL_MAX_IDLE_MS);
}
#undef F

#undef R
#undef A
#undef I
#undef BIG

/* --- generic promises, on pseudo-random parameters -------------------------------------------------- */

/* Small numbers, where rounding shows: capacity up to 50, up to 20 tokens per period of up to 5 s, each
 * now and then much larger. Drawn until valid. */
static limiter random_small_token(void) {
    for (int trial = 0;; trial++) {
        int64_t capacity = rng_range(1, trial % 3 ? 50 : RL_MAX_COUNT);
        int64_t tokens = rng_range(1, trial % 5 ? 20 : 1000000000);
        limiter l = new_token(capacity, tokens, rng_range(1, trial % 7 ? 5000 : 86400000));
        rl_request req = request_of(&l, T0, 1, 0);
        if (rl_token_algorithm.validate(&req, validate_err) == 0) return l;
    }
}

/* Half the sets with small numbers, half with every parameter over all magnitudes. */
static limiter random_token(void) {
    static const int64_t max[3] = {RL_MAX_COUNT, RL_MAX_COUNT, RL_MAX_PERIOD_MS};
    return rng() % 2 ? random_small_token() : random_limiter(&rl_token_algorithm, max);
}

/* Set by set: continuous refill, INTERVAL, or a key that switches modes at random calls. */
static uint32_t random_flags(int set, int step) {
    (void)step;
    switch (set % 3) {
    case 0: return 0;
    case 1: return RL_F_INTERVAL;
    default: return rng() % 2 ? RL_F_INTERVAL : 0;
    }
}

/* A gap between calls, relative to the time one token takes to come back, one refill period (INTERVAL
 * adds its chunks at period boundaries) or a whole bucket's continuous refill. At most 10^15 µs, so the
 * clock stays in range over a run. */
static int64_t random_gap(const limiter *l) {
    rl_i128 unit_us = (rl_i128)l->params[2] * 1000 / l->params[1];
    rl_i128 full_us = unit_us * l->params[0];
    int64_t period_us = l->params[2] * MS;
    switch (rng() % 6) {
    case 0: return 0;
    case 1: return (int64_t)(rng() % 3000);
    case 2: return (int64_t)(rng() % (uint64_t)(unit_us * 2 + 1));
    case 3: return (int64_t)(rng() % (uint64_t)(period_us + 1));
    default: return (int64_t)(rng() % (uint64_t)(full_us + 1));
    }
}

/* A token bucket never delays an admitted request, and a refund gives back whole tokens one for one
 * (in both modes: continuous keeps the fraction it holds). */
static void check_token_own(const limiter *before, int64_t now, int64_t cost, uint32_t flags,
                            const rl_reply *r) {
    CHECK_EQ(r->wait_ms, 0);
    check_refund_exact(before, now, cost, flags, r);
}

static void test_generic(void) {
    const promise_plan plan = {1500, 40, T0, RL_F_INTERVAL, RL_F_REFUND | RL_F_ATMOST | RL_F_FORCE, random_token,
                               random_gap, random_flags, check_token_own};
    check_promises(&plan);
}

/* A run of unit requests whose clock sometimes steps back is admitted no more often than the same run
 * on a clock that holds still instead, in either mode. */
static void test_clock_back_sequences(void) {
    for (int set = 0; set < 300; set++)
        check_clock_back_run(random_token(), set % 2 ? RL_F_INTERVAL : 0, 200, T0, random_gap, random_gap);
}

/* --- the token bucket's own ------------------------------------------------------------------------- */

/* No drift: 7 tokens per 3 ms (one per 428.571.. µs, no finite binary fraction), 10^6 calls at random
 * gaps shorter than that, after emptying a bucket too big to fill. Each call takes a token if one is
 * there, so the total admitted is exactly floor(tokens earned) = floor(7 * elapsed_us / 3000). */
static void test_no_drift(void) {
    limiter b = new_token(RL_MAX_COUNT, 7, 3);
    CHECK_EQ(call(&b, T0, RL_MAX_COUNT, 0).allowed, 1);
    int64_t admitted = 0, now = T0;
    for (int64_t i = 0; i < 1000000; i++) {
        now += rng_range(1, 400);
        admitted += call(&b, now, 1, 0).allowed;
    }
    CHECK_EQ(admitted, 7 * (now - T0) / 3000);

    /* Capacity 1, 3 per second, calls every 333333 µs: each call is 1/3 µs short of a whole token, so
     * only every other call is admitted (a limiter that rounded the period to 333.333 ms would admit
     * them all). */
    limiter d = new_token(1, 3, 1000);
    int64_t count = 0;
    for (int64_t i = 0; i < 1000000; i++) count += call(&d, T0 + i * 333333, 1, 0).allowed;
    CHECK_EQ(count, 500000);
}

static void test_extreme_rates(void) {
    /* 1 token per year, capacity 2. */
    const int64_t year = 31536000000LL;
    limiter b = new_token(2, 1, year);
    CHECK_EQ(call(&b, T0, 2, 0).allowed, 1);
    rl_reply r = call(&b, T0, 1, 0);
    CHECK_EQ(r.retry_after_ms, year);
    CHECK_EQ(r.reset_after_ms, 2 * year);
    CHECK_EQ(probe(&b, T0 + (year - 1) * MS, 1, 0).allowed, 0);
    CHECK_EQ(probe(&b, T0 + year * MS, 1, 0).allowed, 1);

    /* 10^9 per second, capacity 10^12: 10^9 tokens come back each second, 1 per µs. */
    limiter f = new_token(RL_MAX_COUNT, 1000000000, 1000);
    CHECK_EQ(call(&f, T0, RL_MAX_COUNT, 0).remaining, 0);
    r = call(&f, T0 + 1000 * MS, 0, 0);
    CHECK_EQ(r.remaining, 1000000000);
    CHECK_EQ(r.reset_after_ms, 999000);
    CHECK_EQ(call(&f, T0 + 1000 * MS + 1, 1, 0).remaining, 1000000999); /* 1000 per µs */

    /* The longest refill accepted, at the end of the clock's range. */
    rl_request edge = {.params = {RL_MAX_COUNT, RL_MAX_COUNT, RL_MAX_PERIOD_MS}};
    CHECK(rl_token_algorithm.validate(&edge, validate_err) == 0);
    edge.params[1] = RL_MAX_COUNT - 1;
    CHECK(rl_token_algorithm.validate(&edge, validate_err) != 0);
    limiter e = new_token(RL_MAX_COUNT, RL_MAX_COUNT, RL_MAX_PERIOD_MS);
    int64_t late = RL_MAX_TIME_US - 1;
    r = call(&e, late, RL_MAX_COUNT, 0);
    CHECK_EQ(r.allowed, 1);
    CHECK_EQ(r.reset_after_ms, RL_MAX_PERIOD_MS);
    r = call(&e, late, 1, 0);
    CHECK_EQ(r.retry_after_ms, 1);
    limiter ei = new_token(RL_MAX_COUNT, 1, 1);
    r = call(&ei, late, RL_MAX_COUNT, RL_F_INTERVAL);
    CHECK_EQ(r.reset_after_ms, RL_MAX_COUNT);
}

static void test_parameter_change(void) {
    limiter b = new_token(10, 1, 1000);
    CHECK_EQ(call(&b, T0, 2, 0).remaining, 8);
    /* A smaller capacity clamps at once. */
    b.params[0] = 5;
    CHECK_EQ(call(&b, T0, 0, 0).remaining, 5);
    CHECK_EQ(call(&b, T0, 5, 0).allowed, 1);
    /* Back to 10: the bucket holds what it held, nothing appears. */
    b.params[0] = 10;
    CHECK_EQ(call(&b, T0, 1, 0).allowed, 0);
    /* Faster refill applies to the time since the last call. */
    b.params[1] = 10;
    CHECK_EQ(call(&b, T0 + 500 * MS, 0, 0).remaining, 5);
    /* INTERVAL and back keeps the whole tokens. */
    CHECK_EQ(call(&b, T0 + 500 * MS, 0, RL_F_INTERVAL).remaining, 5);
    CHECK_EQ(call(&b, T0 + 500 * MS, 0, 0).remaining, 5);
}

/* Time going backwards never grants more than the same calls would get without it. */
static void test_clock_backwards(void) {
    for (int mode = 0; mode < 2; mode++) {
        uint32_t flags = mode ? RL_F_INTERVAL : 0;
        limiter b = new_token(5, 1, 1000);
        CHECK_EQ(call(&b, T0 + 10000 * MS, 5, flags).allowed, 1);
        int64_t granted = 0;
        for (int64_t back = 1; back <= 20000; back += 37)
            granted += call(&b, T0 + (10000 - back) * MS, 1, flags).allowed;
        CHECK_EQ(granted, 0);
        /* Forward again: what refilled since the emptying, no more. */
        CHECK_EQ(call(&b, T0 + 12000 * MS, 0, flags).remaining, 2);
        rl_reply r = call(&b, T0, 0, flags);
        CHECK(r.reset_after_ms > 0 && r.reset_after_ms <= 15000);
    }
}

static void test_cell_valid(void) {
    rl_cell ok = {{(uint64_t)T0, 5}};
    CHECK(rl_token_algorithm.cell_valid(&ok));
    rl_cell big_rem = {{(uint64_t)T0, 1ULL << 41}};
    CHECK(!rl_token_algorithm.cell_valid(&big_rem));
    rl_cell far = {{(uint64_t)INT64_MAX, 0}};
    CHECK(!rl_token_algorithm.cell_valid(&far));
    rl_cell interval = {{(uint64_t)T0, RL_TOKEN_INTERVAL_BIT | 7}};
    CHECK(rl_token_algorithm.cell_valid(&interval));
    rl_cell too_many = {{(uint64_t)T0, RL_TOKEN_INTERVAL_BIT | (RL_MAX_COUNT + 1)}};
    CHECK(!rl_token_algorithm.cell_valid(&too_many));
    /* An INTERVAL debt: 1 .. RL_MAX_DEBT tokens owed; never 0 owed (written without the bit), never the bit
     * without INTERVAL's. */
    rl_cell owed = {{(uint64_t)T0, RL_TOKEN_INTERVAL_BIT | RL_TOKEN_DEBT_BIT | RL_MAX_DEBT}};
    CHECK(rl_token_algorithm.cell_valid(&owed));
    rl_cell owed_zero = {{(uint64_t)T0, RL_TOKEN_INTERVAL_BIT | RL_TOKEN_DEBT_BIT}};
    CHECK(!rl_token_algorithm.cell_valid(&owed_zero));
    rl_cell owed_too_much = {{(uint64_t)T0, RL_TOKEN_INTERVAL_BIT | RL_TOKEN_DEBT_BIT | (RL_MAX_DEBT + 1)}};
    CHECK(!rl_token_algorithm.cell_valid(&owed_too_much));
    rl_cell debt_alone = {{(uint64_t)T0, RL_TOKEN_DEBT_BIT | 1}};
    CHECK(!rl_token_algorithm.cell_valid(&debt_alone));
}

/* rl_floor_div and rl_ceil_div divide in 64 bits when both operands fit (rl_common.h): the same results
 * as a 128-bit division, around every edge of 64 bits and of the sign. */
static rl_i128 ref_floor(rl_i128 a, rl_i128 b) {
    rl_i128 q = a / b;
    return (q * b != a && a < 0) ? q - 1 : q;
}
static rl_i128 ref_ceil(rl_i128 a, rl_i128 b) { return -ref_floor(-a, b); }

static void test_division_paths(void) {
    const rl_i128 big = (rl_i128)1 << 64;
    const rl_i128 as[] = {0, 1, -1, 7, -7, 999999, -999999, INT64_MAX, INT64_MIN, (rl_i128)INT64_MAX + 1,
                          (rl_i128)INT64_MIN - 1, big * 3 + 5, -big * 3 - 5, (rl_i128)INT64_MAX - 1, (rl_i128)INT64_MIN + 1};
    const rl_i128 bs[] = {1, 2, 3, 7, 1000, 1000000, INT64_MAX, (rl_i128)INT64_MAX + 1, big + 1};
    for (size_t i = 0; i < sizeof as / sizeof as[0]; i++)
        for (size_t j = 0; j < sizeof bs / sizeof bs[0]; j++) {
            CHECK(rl_floor_div(as[i], bs[j]) == ref_floor(as[i], bs[j]));
            CHECK(rl_ceil_div(as[i], bs[j]) == ref_ceil(as[i], bs[j]));
        }
}

int main(void) {
    test_tables();
    test_refund_atmost_tables();
    test_force_tables();
    test_generic();
    test_clock_back_sequences();
    test_no_drift();
    test_extreme_rates();
    test_parameter_change();
    test_clock_backwards();
    test_cell_valid();
    test_division_paths();
    return check_summary("unit_token");
}
