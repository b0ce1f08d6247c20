/* integration_smooth.c -- RL.SMOOTH (Guava's RateLimiter) on a real redis-server:
 *
 *   1. the waits Guava gives, worked out by hand from its formulas, on the test clock: SmoothBursty at 5/s
 *      (stored permits at no cost, then 200 ms per permit charged to the next caller), SmoothWarmingUp at
 *      2/s over 4 s with cold factor 3 (1375, 1125, 875, 625, then 500 ms: cold to stable), MAXWAIT
 *      (tryAcquire with a timeout), a rested key answering as a new one;
 *   2. the key: its type, six words, expiry when rested (PTTL == reset_after_ms on the real clock), DUMP +
 *      RESTORE and DEBUG RELOAD keep it exactly, RL.SETSTATE reads back, RL.SMOOTH_RO and DRYRUN change
 *      nothing;
 *   3. BLOCK holds the reply for wait_ms on the real clock, and answers at once inside MULTI.
 * Many clients, durability and replication of RL.SMOOTH keys are in integration_reliability.c, bad input
 * in integration_badinput.c. The closing line is "integration_smooth: N passed, N failed". */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "rl_checks.h"
#include "server.h"
#include "suite.h"

#define T0 1700000000000LL

static server *srv;
static redisContext *c;

static void clock_set(long long ms) { CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", ms)); }

static long long mono_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

typedef struct row {
    long long at_ms; /* after T0 */
    const char *args;
    long long want[6];
} row;

static void run_rows(const char *key, const row *rows, size_t n) {
    CHECK(cmd_int(c, "DEL %s", key) >= 0);
    for (size_t i = 0; i < n; i++) {
        clock_set(T0 + rows[i].at_ms);
        redisReply *r = cmdline(c, "RL.SMOOTH %s %s", key, rows[i].args);
        long long got[6];
        int ok = rl_fields(r, got);
        if (!CHECK(ok && memcmp(got, rows[i].want, sizeof got) == 0))
            fprintf(stderr, "     row %zu (%s at +%lld ms): got %lld %lld %lld %lld %lld %lld%s%s\n", i, rows[i].args,
                    rows[i].at_ms, got[0], got[1], got[2], got[3], got[4], got[5], r->type == REDIS_REPLY_ERROR ? " " : "",
                    r->type == REDIS_REPLY_ERROR ? r->str : "");
        freeReplyObject(r);
    }
}

/* 1. Guava's waits. */
static void test_waits(void) {
    /* 5/s: stable interval 200 ms, maxPermits 5 (1 s of burst), a missing key holds all 5. */
    static const row bursty[] = {
        {0, "5", {1, 5, 4, -1, 200, 0}},              /* a stored permit: free; 1 to rest: 200 ms */
        {0, "5 COST 10", {1, 5, 0, -1, 2200, 0}},     /* 4 stored + 6 fresh: the next caller waits 1200 */
        {0, "5", {1, 5, 0, -1, 2400, 1200}},          /* waits for the ticket; charges 200 more */
        {0, "5 MAXWAIT 1000", {0, 5, 0, 400, 2400, 0}}, /* the ticket is 1400 ms away: refused, 400 ms early */
        {399, "5 MAXWAIT 1000", {0, 5, 0, 1, 2001, 0}},
        {400, "5 MAXWAIT 1000", {1, 5, 0, -1, 2200, 1000}},
        {1600, "5", {1, 5, 0, -1, 1200, 0}},          /* at the ticket: no wait, 1 fresh permit */
        {2800, "5 DRYRUN", {1, 5, 4, -1, 200, 0}},    /* rested: as a new limiter */
        {2800, "5", {1, 5, 4, -1, 200, 0}},
        {2900, "5", {1, 5, 3, -1, 300, 0}},           /* 0.5 permit back in 100 ms: 4.5 - 1, 1.5 to rest */
    };
    run_rows("sm:b", bursty, sizeof bursty / sizeof bursty[0]);

    /* 2/s warming up over 4 s, cold factor 3: stable 500 ms, cold 1500 ms, thresholdPermits 4,
     * maxPermits 8, slope 250 ms per permit, cool-down 500 ms per permit. A missing key is cold (8 stored);
     * each permit above the threshold costs the mean interval along the slope. */
    static const row warm[] = {
        {0, "2 WARMUP 4000", {1, 8, 7, -1, 1875, 0}},
        {0, "2 WARMUP 4000", {1, 8, 6, -1, 3500, 1375}},
        {0, "2 WARMUP 4000", {1, 8, 5, -1, 4875, 2500}},
        {0, "2 WARMUP 4000", {1, 8, 4, -1, 6000, 3375}},
        {0, "2 WARMUP 4000", {1, 8, 3, -1, 7000, 4000}},
        {0, "2 WARMUP 4000 COLDFACTOR 3", {1, 8, 2, -1, 8000, 4500}}, /* the default, spelled out */
        {0, "2 WARMUP 4000 MAXWAIT 4999", {0, 8, 2, 1, 8000, 0}},
        {1, "2 WARMUP 4000 MAXWAIT 4999", {1, 8, 1, -1, 8999, 4999}},
    };
    run_rows("sm:w", warm, sizeof warm / sizeof warm[0]);

    /* A fractional rate and no burst: 0.5/s, every permit 2 s after the one before. */
    static const row slow[] = {
        {0, "0.5 MAXBURST 0", {1, 0, 0, -1, 2000, 0}},
        {0, "0.5 MAXBURST 0", {1, 0, 0, -1, 4000, 2000}},
        {3000, "0.5 MAXBURST 0", {1, 0, 0, -1, 3000, 1000}},
        {6000, "0.5 MAXBURST 0", {1, 0, 0, -1, 2000, 0}},
    };
    run_rows("sm:s", slow, sizeof slow / sizeof slow[0]);

    /* setRate: a key charged at 5/s, then asked at 10/s, keeps its ticket (the waits already promised)
     * and charges the new interval from there. */
    static const row rerate[] = {
        {0, "5 MAXBURST 0", {1, 0, 0, -1, 200, 0}},
        {0, "10 MAXBURST 0", {1, 0, 0, -1, 300, 200}},
        {0, "10 MAXBURST 0", {1, 0, 0, -1, 400, 300}},
    };
    run_rows("sm:r", rerate, sizeof rerate / sizeof rerate[0]);
}

/* 2. The key. */
static void test_key(void) {
    clock_set(T0);
    CHECK(cmd_int(c, "DEL sm:k sm:k2") >= 0);
    CHECK(rl(c, "RL.SMOOTH sm:k 5 COST 10").ok);
    CHECK(cmd_status_is(c, "rl-smooth", "TYPE sm:k"));
    rl_result before = rl(c, "RL.SMOOTH_RO sm:k 5");
    CHECK(before.ok && before.allowed == 1 && before.wait_ms == 1000 && before.reset_after_ms == 2200);
    CHECK(rl(c, "RL.SMOOTH sm:k 5 DRYRUN").wait_ms == 1000); /* neither changed anything */
    check_copy_and_reload(c, "RL.SMOOTH_RO", "sm:k", "sm:k2", "5", T0);

    /* RL.SETSTATE: Guava's state as six words (mode, rate in millionths, period, cold factor, stored
     * permits as binary64 bits, next free ticket in µs): 2.0 stored, the ticket 300 ms ahead. */
    CHECK(cmd_status_is(c, "OK", "RL.SETSTATE sm:st SMOOTH 1 5000000 1000 0 4611686018427387904 %lld PXAT 4102444800000",
                        (T0 + 300) * 1000));
    rl_result st = rl(c, "RL.SMOOTH_RO sm:st 5");
    CHECK(st.ok && st.allowed == 1 && st.remaining == 1 && st.wait_ms == 300 && st.reset_after_ms == 1100);
    long long mem = cmd_int(c, "MEMORY USAGE sm:st");
    CHECK(mem >= 48 && mem < 200); /* the six words at least (Valkey 8 counts the key apart) */
    printf("  MEMORY USAGE of an RL.SMOOTH key: %lld bytes (six words of state)\n", mem);

    /* The real clock: the key lives until the limiter has rested (PTTL is reset_after_ms within 1 ms, the
     * rounding of the expiry to a ms). */
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK REAL"));
    rl_result r = rl(c, "RL.SMOOTH sm:ttl 2 WARMUP 4000 COST 5");
    long long pttl = cmd_int(c, "PTTL sm:ttl");
    if (!CHECK(r.ok && pttl > 0 && pttl <= r.reset_after_ms + 1 && pttl > r.reset_after_ms - 1000))
        fprintf(stderr, "     PTTL %lld, reset_after_ms %lld (%s)\n", pttl, r.reset_after_ms, r.error);
    /* A rested key is deleted, not kept with a TTL: one permit at 1000/s rests within 1 ms. */
    CHECK(rl(c, "RL.SMOOTH sm:gone 1000").ok);
    sleep_ms(20);
    CHECK_EQ(cmd_int(c, "EXISTS sm:gone"), 0);
    clock_set(T0);
}

/* 3. BLOCK. */
static void test_block(void) {
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK REAL"));
    CHECK(cmd_int(c, "DEL sm:blk sm:multi") >= 0);
    rl_result r = rl(c, "RL.SMOOTH sm:blk 4 MAXBURST 0 BLOCK");
    CHECK(r.ok && r.allowed == 1 && r.wait_ms == 0);
    long long t0 = mono_us();
    r = rl(c, "RL.SMOOTH sm:blk 4 MAXBURST 0 BLOCK");
    long long held_us = mono_us() - t0;
    CHECK(r.ok && r.allowed == 1 && r.wait_ms > 150 && r.wait_ms <= 250);
    if (!CHECK(held_us >= (r.wait_ms - 5) * 1000)) fprintf(stderr, "     held %lld us for wait_ms %lld\n", held_us, r.wait_ms);

    /* Inside MULTI nothing is held: EXEC answers at once with the waits (60 s would trip the client's
     * timeout). */
    static const char *const twice[] = {"RL.SMOOTH sm:multi 0.01 MAXBURST 0 BLOCK",
                                        "RL.SMOOTH sm:multi 0.01 MAXBURST 0 BLOCK", NULL};
    redisReply *x = multi_exec(c, twice);
    if (CHECK(reply_is_array(x, 2))) {
        rl_result a = rl_of(x->element[0]), b = rl_of(x->element[1]);
        CHECK(a.ok && a.wait_ms == 0 && b.ok && b.wait_ms > 99000);
    }
    freeReplyObject(x);
    CHECK_EQ(info_field(c, "clients", "blocked_clients"), 0);
}

int main(void) {
    static const suite_test tests[] = {test_waits, test_key, test_block, NULL};
    return server_suite("integration_smooth", &srv, &c, tests);
}
