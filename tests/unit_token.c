/* unit_token.c -- tests of the token bucket (algorithms/token.c), continuous and INTERVAL, driven by a
 * fake clock.
 *
 * The harness in alg_checks.h plays the module (it keeps the cell between calls, stores it unless DRYRUN
 * and drops the key when the reply says idle) and checks the promises every algorithm's reply makes, here
 * on pseudo-random parameter sets in both refill modes and in keys that switch between them. This file
 * brings what is the token bucket's own: scripted tables with every reply field (continuous exactness,
 * INTERVAL's whole chunks counted from the anchor), no drift over a million calls, extreme rates and
 * counts, parameter and mode changes, time going backwards, and the cell layout. */
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
    limiter l = new_token(1, 3, 1000);
    RUN_TABLE(&l, T0, exact);
    l = new_token(10, 5, 1000);
    RUN_TABLE(&l, T0, cont);
    l = new_token(5, 2, 1000);
    RUN_TABLE(&l, T0, chunks);
}

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

/* A token bucket never delays an admitted request. */
static void check_no_wait(const limiter *before, int64_t now, int64_t cost, uint32_t flags,
                          const rl_reply *r) {
    (void)before, (void)now, (void)cost, (void)flags;
    CHECK_EQ(r->wait_ms, 0);
}

static void test_generic(void) {
    const promise_plan plan = {1500, 40, T0, RL_F_INTERVAL, random_token, random_gap, random_flags,
                               check_no_wait};
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
}

int main(void) {
    test_tables();
    test_generic();
    test_clock_back_sequences();
    test_no_drift();
    test_extreme_rates();
    test_parameter_change();
    test_clock_backwards();
    test_cell_valid();
    return check_summary("unit_token");
}
