/* unit_token.c -- the token bucket on a fake clock: tables of calls with their full replies, exactness
 * of every deadline it reports, no drift, extreme rates and counts, parameter changes, time going
 * backwards. */
#include <stdlib.h>

#include "../algorithms/token.h"
#include "check.h"

#define MS 1000LL

static char validate_err[RL_ERR_LEN]; /* validate's message, unread */
#define T0 (1700000000000LL * MS)

typedef struct bucket {
    rl_cell cell;
    int exists;
} bucket;

/* One call as the module makes it; dryrun leaves the bucket untouched. */
static rl_reply call(bucket *b, int64_t cap, int64_t tokens, int64_t period_ms, uint32_t flags, int64_t cost,
                     int64_t now_us, int dryrun) {
    rl_request req = {.params = {cap, tokens, period_ms}, .cost = cost, .flags = flags, .now_us = now_us};
    rl_cell cell = b->cell;
    rl_reply reply;
    rl_token_algorithm.decide(&req, &cell, b->exists, &reply);
    if (!dryrun) {
        /* Counted only when it fails: a stored cell must pass the check RDB load applies. */
        if (reply.reset_after_ms > 0 && !rl_token_algorithm.cell_valid(&cell)) CHECK(!"stored cell is valid");
        b->cell = cell;
        b->exists = reply.reset_after_ms > 0;
    }
    return reply;
}

typedef struct row {
    int64_t at_ms, cost;
    int64_t allowed, remaining, retry, reset;
} row;

static void run_table(int64_t cap, int64_t tokens, int64_t period_ms, uint32_t flags, const row *rows, size_t n) {
    bucket b = {{{0, 0}}, 0};
    for (size_t i = 0; i < n; i++) {
        rl_reply r = call(&b, cap, tokens, period_ms, flags, rows[i].cost, T0 + rows[i].at_ms * MS, 0);
        CHECK_EQ(r.allowed, rows[i].allowed);
        CHECK_EQ(r.limit, cap);
        CHECK_EQ(r.remaining, rows[i].remaining);
        CHECK_EQ(r.retry_after_ms, rows[i].retry);
        CHECK_EQ(r.reset_after_ms, rows[i].reset);
        CHECK_EQ(r.wait_ms, 0);
    }
}

static void test_tables(void) {
    /* 3 tokens per second, capacity 1: 333 ms is too early, 334 ms is enough. */
    static const row exact[] = {
        {0, 1, 1, 0, -1, 334}, {333, 1, 0, 0, 1, 1}, {334, 1, 1, 0, -1, 334}, {334, 1, 0, 0, 334, 334},
        {1000, 0, 1, 1, -1, 0},
    };
    run_table(1, 3, 1000, 0, exact, sizeof exact / sizeof exact[0]);

    /* capacity 10, 5 per 1000 ms (one per 200 ms) */
    static const row cont[] = {
        {0, 10, 1, 0, -1, 2000}, {0, 1, 0, 0, 200, 2000}, {100, 0, 1, 0, -1, 1900}, {399, 2, 0, 1, 1, 1601},
        {400, 2, 1, 0, -1, 2000}, {400, 11, 0, 0, -1, 2000}, {2400, 0, 1, 10, -1, 0}, {9999, 3, 1, 7, -1, 600},
    };
    run_table(10, 5, 1000, 0, cont, sizeof cont / sizeof cont[0]);

    /* INTERVAL: capacity 5, chunks of 2 every 1000 ms from the anchor */
    static const row chunks[] = {
        {0, 5, 1, 0, -1, 3000}, {999, 1, 0, 0, 1, 2001}, {1000, 1, 1, 1, -1, 2000}, {1500, 3, 0, 1, 500, 1500},
        {2999, 0, 1, 3, -1, 1}, {3000, 0, 1, 5, -1, 0}, {3500, 2, 1, 3, -1, 1000}, {4499, 4, 0, 3, 1, 1},
        {4500, 4, 1, 1, -1, 2000}, {4500, 6, 0, 1, -1, 2000},
    };
    run_table(5, 2, 1000, RL_F_INTERVAL, chunks, sizeof chunks / sizeof chunks[0]);
}

/* Deterministic pseudo-random numbers for the property tests. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static int64_t rnd_range(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }

/* For random parameters and histories: retry_after_ms and reset_after_ms are exact to the ms. */
static void test_deadlines_are_exact(void) {
    long failures_before = check_failed;
    for (int trial = 0; trial < 3000 && check_failed == failures_before; trial++) {
        int64_t cap = rnd_range(1, trial % 3 ? 50 : RL_MAX_COUNT);
        int64_t tokens = rnd_range(1, trial % 5 ? 20 : 1000000000);
        int64_t period = rnd_range(1, trial % 7 ? 5000 : 86400000);
        uint32_t flags = trial % 2 ? RL_F_INTERVAL : 0;
        rl_request probe = {.params = {cap, tokens, period}};
        if (rl_token_algorithm.validate(&probe, validate_err)) continue;
        bucket b = {{{0, 0}}, 0};
        int64_t now = T0 + rnd_range(0, 999) * MS;
        for (int i = 0; i < 20; i++) {
            int64_t cost = rnd_range(0, cap < 4 ? cap + 1 : cap / 2);
            now += rnd_range(0, period / 2 + 1) * MS;
            rl_reply r = call(&b, cap, tokens, period, flags, cost, now, 0);
            rl_reply again = call(&b, cap, tokens, period, flags, cost, now, 1);
            if (!r.allowed && r.retry_after_ms > 0) {
                CHECK(call(&b, cap, tokens, period, flags, cost, now + (r.retry_after_ms - 1) * MS, 1).allowed == 0);
                CHECK(call(&b, cap, tokens, period, flags, cost, now + r.retry_after_ms * MS, 1).allowed == 1);
            } else {
                CHECK(r.allowed || cost > cap);
            }
            CHECK(again.allowed || again.retry_after_ms != 0);
            if (r.reset_after_ms > 0) {
                CHECK(call(&b, cap, tokens, period, flags, 0, now + (r.reset_after_ms - 1) * MS, 1).reset_after_ms > 0);
                rl_reply idle = call(&b, cap, tokens, period, flags, 0, now + r.reset_after_ms * MS, 1);
                CHECK_EQ(idle.reset_after_ms, 0);
                CHECK_EQ(idle.remaining, cap);
            }
            CHECK(r.remaining >= 0 && r.remaining <= cap);
        }
    }
}

/* No drift: 7 tokens per 3 ms (one per 428.571.. µs, no finite binary fraction), 10^6 calls at random
 * gaps shorter than that, after emptying a bucket too big to fill. Each call takes a token if one is
 * there, so the total admitted is exactly floor(tokens earned) = floor(7 * elapsed_us / 3000). */
static void test_no_drift(void) {
    bucket b = {{{0, 0}}, 0};
    CHECK_EQ(call(&b, RL_MAX_COUNT, 7, 3, 0, RL_MAX_COUNT, T0, 0).allowed, 1);
    int64_t admitted = 0, now = T0;
    for (int64_t i = 0; i < 1000000; i++) {
        now += rnd_range(1, 400);
        admitted += call(&b, RL_MAX_COUNT, 7, 3, 0, 1, now, 0).allowed;
    }
    CHECK_EQ(admitted, 7 * (now - T0) / 3000);

    /* Capacity 1, 3 per second, calls every 333333 µs: each call is 1/3 µs short of a whole token, so
     * only every other call is admitted (a limiter that rounded the period to 333.333 ms would admit
     * them all). */
    bucket d = {{{0, 0}}, 0};
    int64_t count = 0;
    for (int64_t i = 0; i < 1000000; i++) count += call(&d, 1, 3, 1000, 0, 1, T0 + i * 333333, 0).allowed;
    CHECK_EQ(count, 500000);
}

static void test_extreme_rates(void) {
    /* 1 token per year, capacity 2. */
    const int64_t year = 31536000000LL;
    bucket b = {{{0, 0}}, 0};
    CHECK_EQ(call(&b, 2, 1, year, 0, 2, T0, 0).allowed, 1);
    rl_reply r = call(&b, 2, 1, year, 0, 1, T0, 0);
    CHECK_EQ(r.retry_after_ms, year);
    CHECK_EQ(r.reset_after_ms, 2 * year);
    CHECK_EQ(call(&b, 2, 1, year, 0, 1, T0 + (year - 1) * MS, 1).allowed, 0);
    CHECK_EQ(call(&b, 2, 1, year, 0, 1, T0 + year * MS, 1).allowed, 1);

    /* 10^9 per second, capacity 10^12: 10^9 tokens come back each second, 1 per µs. */
    bucket f = {{{0, 0}}, 0};
    CHECK_EQ(call(&f, RL_MAX_COUNT, 1000000000, 1000, 0, RL_MAX_COUNT, T0, 0).remaining, 0);
    r = call(&f, RL_MAX_COUNT, 1000000000, 1000, 0, 0, T0 + 1000 * MS, 0);
    CHECK_EQ(r.remaining, 1000000000);
    CHECK_EQ(r.reset_after_ms, 999000);
    CHECK_EQ(call(&f, RL_MAX_COUNT, 1000000000, 1000, 0, 1, T0 + 1000 * MS + 1, 0).remaining, 1000000999); /* 1000 per µs */

    /* The longest refill accepted, at the end of the clock's range. */
    rl_request edge = {.params = {RL_MAX_COUNT, RL_MAX_COUNT, RL_MAX_PERIOD_MS}};
    CHECK(rl_token_algorithm.validate(&edge, validate_err) == 0);
    edge.params[1] = RL_MAX_COUNT - 1;
    CHECK(rl_token_algorithm.validate(&edge, validate_err) != 0);
    bucket e = {{{0, 0}}, 0};
    int64_t late = RL_MAX_TIME_US - 1;
    r = call(&e, RL_MAX_COUNT, RL_MAX_COUNT, RL_MAX_PERIOD_MS, 0, RL_MAX_COUNT, late, 0);
    CHECK_EQ(r.allowed, 1);
    CHECK_EQ(r.reset_after_ms, RL_MAX_PERIOD_MS);
    r = call(&e, RL_MAX_COUNT, RL_MAX_COUNT, RL_MAX_PERIOD_MS, 0, 1, late, 0);
    CHECK_EQ(r.retry_after_ms, 1);
    bucket ei = {{{0, 0}}, 0};
    r = call(&ei, RL_MAX_COUNT, 1, 1, RL_F_INTERVAL, RL_MAX_COUNT, late, 0);
    CHECK_EQ(r.reset_after_ms, RL_MAX_COUNT);
}

static void test_parameter_change(void) {
    bucket b = {{{0, 0}}, 0};
    CHECK_EQ(call(&b, 10, 1, 1000, 0, 2, T0, 0).remaining, 8);
    /* A smaller capacity clamps at once. */
    CHECK_EQ(call(&b, 5, 1, 1000, 0, 0, T0, 0).remaining, 5);
    CHECK_EQ(call(&b, 5, 1, 1000, 0, 5, T0, 0).allowed, 1);
    /* Back to 10: the bucket holds what it held, nothing appears. */
    CHECK_EQ(call(&b, 10, 1, 1000, 0, 1, T0, 0).allowed, 0);
    /* Faster refill applies to the time since the last call. */
    CHECK_EQ(call(&b, 10, 10, 1000, 0, 0, T0 + 500 * MS, 0).remaining, 5);
    /* INTERVAL and back keeps the whole tokens. */
    CHECK_EQ(call(&b, 10, 10, 1000, RL_F_INTERVAL, 0, T0 + 500 * MS, 0).remaining, 5);
    CHECK_EQ(call(&b, 10, 10, 1000, 0, 0, T0 + 500 * MS, 0).remaining, 5);
}

/* Time going backwards never grants more than the same calls would get without it. */
static void test_clock_backwards(void) {
    for (int mode = 0; mode < 2; mode++) {
        uint32_t flags = mode ? RL_F_INTERVAL : 0;
        bucket b = {{{0, 0}}, 0};
        CHECK_EQ(call(&b, 5, 1, 1000, flags, 5, T0 + 10000 * MS, 0).allowed, 1);
        int64_t granted = 0;
        for (int64_t back = 1; back <= 20000; back += 37) granted += call(&b, 5, 1, 1000, flags, 1, T0 + (10000 - back) * MS, 0).allowed;
        CHECK_EQ(granted, 0);
        /* Forward again: what refilled since the emptying, no more. */
        CHECK_EQ(call(&b, 5, 1, 1000, flags, 0, T0 + 12000 * MS, 0).remaining, 2);
        rl_reply r = call(&b, 5, 1, 1000, flags, 0, T0, 0);
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
    test_deadlines_are_exact();
    test_no_drift();
    test_extreme_rates();
    test_parameter_change();
    test_clock_backwards();
    test_cell_valid();
    return check_summary("unit_token");
}
