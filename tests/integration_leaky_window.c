/* integration_leaky_window.c -- RL.LEAKY and RL.WINDOW against a real redis-server with the module loaded:
 * scripted tables with the full reply, exactness of retry_after_ms / reset_after_ms on the test clock,
 * BLOCK with real clients (held replies, MULTI, Lua, disconnects, RESP3), replication, bad input and
 * WRONGTYPE, persistence (DEBUG RELOAD, DUMP/RESTORE).
 *
 * Every expected value in the tables was worked out by hand from the spec (docs/commands.md and the
 * brief for RL.LEAKY / RL.WINDOW); the comments show the arithmetic. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "effect_checks.h"
#include "rl_checks.h"
#include "server.h"
#include "suite.h"

static server *srv;
static redisContext *c;

#define T0 1700000000000LL /* a frozen test-clock instant (ms); 20 s into a 60 s window */
#define W0 1700000040000LL /* a multiple of 60000 (and so of 1000): window boundaries at round offsets */

static void clock_set(long long ms) { CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", ms)); }
static void del(const char *key) { freeReplyObject(cmd(c, "DEL %s", key)); }
static long long exists(const char *key) { return cmd_int(c, "EXISTS %s", key); }

static long long mono_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* ------------------------------------------------------------------------------------------------- */
/* 1. Tables: calls on one key at clock offsets, with the full expected reply.                        */

typedef struct step {
    long long at_ms; /* offset from the table's base */
    const char *args;
    long long allowed, remaining, retry, reset, wait;
    int exists; /* EXISTS key after the step: 0 or 1; -1 not checked */
} step;

static void run_steps(const char *command, const char *key, long long base, long long limit, const step *steps,
                      size_t n) {
    del(key);
    for (size_t i = 0; i < n; i++) {
        clock_set(base + steps[i].at_ms);
        rl_result r = rl(c, "%s %s %s", command, key, steps[i].args);
        if (!r.ok) fprintf(stderr, "     %s step %zu: %s\n", key, i, r.error);
        int failed_before = (int)check_failed;
        CHECK_RL(r, steps[i].allowed, limit, steps[i].remaining, steps[i].retry, steps[i].reset, steps[i].wait);
        if (steps[i].exists >= 0) CHECK_EQ(exists(key), steps[i].exists);
        if ((int)check_failed != failed_before)
            fprintf(stderr, "     ^ %s %s %s at +%lld ms (step %zu): got %lld %lld %lld %lld %lld %lld\n", command,
                    key, steps[i].args, steps[i].at_ms, i, r.allowed, r.limit, r.remaining, r.retry_after_ms,
                    r.reset_after_ms, r.wait_ms);
    }
}
#define RUN_STEPS(command, key, base, limit, steps) \
    run_steps(command, key, base, limit, steps, sizeof steps / sizeof steps[0])

/* Capacity 3, 3 per 1000 ms: T = 333.33.. ms, one unit = 10^6 "scaled" units (units * leak period in µs),
 * the level drains by 3 scaled units per µs. */
static void test_leaky_shaping_table(void) {
    static const step steps[] = {
        /* burst on an idle key: waits 0, ceil(T) = 334, ceil(2T) = 667 */
        {0, "3 3 1000", 1, 2, -1, 334, 0, 1},     /* level 1: drains in 333333.3 µs -> 334 ms */
        {0, "3 3 1000", 1, 1, -1, 667, 334, 1},   /* level 2: 666666.7 µs -> 667 */
        {0, "3 3 1000", 1, 0, -1, 1000, 667, 1},  /* full: 1000 ms */
        {0, "3 3 1000", 0, 0, 334, 1000, 0, 1},   /* one unit drains in 333.3 ms -> 334 */
        {0, "3 3 1000 COST 4", 0, 0, -1, 1000, 0, 1},   /* above capacity: never */
        {0, "3 3 1000 COST 0", 1, 0, -1, 1000, 1000, 1}, /* admitted behind the 3 units queued */
        /* at 333 ms: level 3 - 0.999 = 2.001; room for one more in 0.333 ms -> 1 */
        {333, "3 3 1000", 0, 0, 1, 667, 0, 1},
        /* at 334 ms: level 1.998 -> wait ceil(666 ms) = 666; level 2.998 drains in 999.33 ms -> 1000 */
        {334, "3 3 1000", 1, 0, -1, 1000, 666, 1},
        /* empty at 1333.33 ms: at 1333 the level is 0.001 (remaining 2, 1 ms to idle, wait 1) */
        {1333, "3 3 1000 COST 0 DRYRUN", 1, 2, -1, 1, 1, 1},
        {1334, "3 3 1000 COST 0", 1, 3, -1, 0, 0, 0}, /* idle: the key is deleted */
        {1334, "3 3 1000 DRYRUN", 1, 2, -1, 334, 0, 0}, /* DRYRUN creates no key */
    };
    RUN_STEPS("RL.LEAKY", "lb:shape", T0, 3, steps);
}

/* The same burst policed (NODELAY): the same admissions, no wait. */
static void test_leaky_nodelay_table(void) {
    static const step steps[] = {
        {0, "3 3 1000 NODELAY", 1, 2, -1, 334, 0, 1},
        {0, "3 3 1000 NODELAY", 1, 1, -1, 667, 0, 1},
        {0, "3 3 1000 nodelay", 1, 0, -1, 1000, 0, 1},
        {0, "3 3 1000 NODELAY", 0, 0, 334, 1000, 0, 1},
        {334, "3 3 1000 NODELAY", 1, 0, -1, 1000, 0, 1}, /* level 1.998 -> 2.998 */
        /* at 500: level 2.998 - 0.498 = 2.5; COST 2 needs level 1: 1.5 units = 500 ms; idle in 833.3 */
        {500, "3 3 1000 NODELAY COST 2", 0, 0, 500, 834, 0, 1},
        {999, "3 3 1000 NODELAY COST 2 DRYRUN", 0, 1, 1, 335, 0, 1}, /* level 1.003: 1 fits */
        {1000, "3 3 1000 NODELAY COST 2", 1, 0, -1, 1000, 0, 1},
        /* shaping and policing share the state: the same request without NODELAY would wait */
        {1000, "3 3 1000 COST 0 DRYRUN", 1, 0, -1, 1000, 1000, 1},
        {2000, "3 3 1000 NODELAY COST 0", 1, 3, -1, 0, 0, 0},
    };
    RUN_STEPS("RL.LEAKY", "lb:nodelay", T0, 3, steps);
}

/* COST: capacity 10, 1 per 100 ms (T = 100 ms). */
static void test_leaky_cost_table(void) {
    static const step steps[] = {
        {0, "10 1 100 COST 0", 1, 10, -1, 0, 0, 0},    /* idle: nothing stored */
        {0, "10 1 100 COST 11", 0, 10, -1, 0, 0, 0},   /* above capacity on an idle key: never, no key */
        {0, "10 1 100 COST 4", 1, 6, -1, 400, 0, 1},
        {0, "10 1 100 COST 11", 0, 6, -1, 400, 0, 1},
        {0, "10 1 100 COST 7", 0, 6, 100, 400, 0, 1},  /* room for 7 when the level is 3 */
        {50, "10 1 100 COST 0", 1, 6, -1, 350, 350, 1}, /* level 3.5 */
        {100, "10 1 100 COST 6", 1, 1, -1, 900, 300, 1}, /* level 3 ahead: wait 300; then 9 */
        {100, "10 1 100 COST 10", 0, 1, 900, 900, 0, 1}, /* cost == capacity: once empty */
        {999, "10 1 100 COST 10 DRYRUN", 0, 9, 1, 1, 0, 1},
        {1000, "10 1 100 COST 10", 1, 0, -1, 1000, 0, 1},
        {1000, "10 1 100 COST 11", 0, 0, -1, 1000, 0, 1},
        {1000, "10 1 100 COST 1000000000000", 0, 0, -1, 1000, 0, 1},
    };
    RUN_STEPS("RL.LEAKY", "lb:cost", T0, 10, steps);
}

/* Fixed windows of 1 s, limit 3, windows [W0 + k*1000, W0 + (k+1)*1000). */
static void test_window_fixed_table(void) {
    static const step steps[] = {
        {0, "3 1000 FIXED", 1, 2, -1, 1000, 0, 1},
        {0, "3 1000 FIXED COST 2", 1, 0, -1, 1000, 0, 1},
        {0, "3 1000 FIXED", 0, 0, 1000, 1000, 0, 1},
        {400, "3 1000 FIXED", 0, 0, 600, 600, 0, 1},
        {400, "3 1000 FIXED COST 4", 0, 0, -1, 600, 0, 1},   /* above the limit: never */
        {400, "3 1000 FIXED COST 0", 1, 0, -1, 600, 0, 1},
        {999, "3 1000 FIXED DRYRUN", 0, 0, 1, 1, 0, 1},
        {1000, "3 1000 FIXED", 1, 2, -1, 1000, 0, 1},          /* new window: count 0 */
        {1500, "3 1000 fixed COST 2", 1, 0, -1, 500, 0, 1},
        {1999, "3 1000 FIXED COST 0", 1, 0, -1, 1, 0, 1},
        {2000, "3 1000 FIXED COST 0", 1, 3, -1, 0, 0, 0},      /* count 0: idle, deleted */
        {2000, "3 1000 FIXED COST 3 DRYRUN", 1, 0, -1, 1000, 0, 0},
        {2000, "3 1000 FIXED COST 3", 1, 0, -1, 1000, 0, 1},
        {2500, "3 1000 FIXED COST 3", 0, 0, 500, 500, 0, 1},
    };
    RUN_STEPS("RL.WINDOW", "win:fixed", W0, 3, steps);

    /* Windows are aligned to the epoch, not to the first request: T0 is 20 s into a minute. */
    static const step epoch[] = {
        {-40000, "2 60000 FIXED COST 2", 1, 0, -1, 40000, 0, 1},
        {-1, "2 60000 FIXED", 0, 0, 1, 1, 0, 1},
        {0, "2 60000 FIXED", 1, 1, -1, 60000, 0, 1},
    };
    RUN_STEPS("RL.WINDOW", "win:epoch", W0, 2, epoch);
}

/* Sliding-window counter, 10 per 60 s; windows start at W0 + k*60000. Admitted iff
 * p*(W-e) + (c+n)*W <= limit*W (all in ms). */
static void test_window_sliding_table(void) {
    static const step steps[] = {
        {0, "10 60000 COST 8", 1, 2, -1, 120000, 0, 1},  /* c = 8; idle once the next window has passed */
        {0, "10 60000 COST 11", 0, 2, -1, 120000, 0, 1}, /* above the limit: never */
        /* next window, e = 0: p = 8, 8*60000 + 3*60000 > 600000. Room 7*60000 = 420000 for p*(W-e):
         * W - e <= 52500, e >= 7500: the retry falls inside the current window. Idle when p's window
         * stops weighing, at its end. */
        {60000, "10 60000 COST 3", 0, 2, 7500, 60000, 0, 1},
        {60000, "10 60000 SLIDING COST 2", 1, 0, -1, 120000, 0, 1}, /* 480000 + 120000 = 600000 */
        /* c = 2 now: room (10-2-3)*60000 = 300000 for 8*(W-e): e >= 22500 */
        {60000, "10 60000 COST 3", 0, 0, 22500, 120000, 0, 1},
        /* e = 22499: 8*37501 = 300008 > 300000; remaining floor((600000-300008-120000)/60000) = 2 */
        {82499, "10 60000 COST 3 DRYRUN", 0, 2, 1, 97501, 0, 1},
        {82500, "10 60000 COST 3", 1, 0, -1, 97500, 0, 1},   /* c = 5 */
        /* c = 5: room (10-5-1)*60000 = 240000: e >= 30000 */
        {82500, "10 60000", 0, 0, 7500, 97500, 0, 1},
        {90000, "10 60000", 1, 0, -1, 90000, 0, 1},          /* c = 6 */
        /* COST 7 does not fit in this window (10-6-7 < 0); in the next p = 6, room 3*60000: 6*(W-e) <=
         * 180000, e >= 30000: at W0 + 150000, 60 s from now */
        {90000, "10 60000 COST 7", 0, 0, 60000, 90000, 0, 1},
        /* COST 10 only fits once both windows are empty: at W0 + 180000 */
        {90000, "10 60000 COST 10", 0, 0, 90000, 90000, 0, 1},
        /* next window, p = 6, e = 29999: 6*30001 + 7*60000 = 600006 > 600000; remaining
         * floor((600000 - 180006) / 60000) = 6; only p weighs: idle at W0 + 180000 */
        {149999, "10 60000 COST 7 DRYRUN", 0, 6, 1, 30001, 0, 1},
        {150000, "10 60000 COST 7 DRYRUN", 1, 0, -1, 90000, 0, 1},
        {179999, "10 60000 COST 0 DRYRUN", 1, 9, -1, 1, 0, 1}, /* 6*1 weighs: floor(599994/60000) */
        {180000, "10 60000 COST 0", 1, 10, -1, 0, 0, 0},       /* idle: deleted */
        {180000, "10 60000 COST 10 DRYRUN", 1, 0, -1, 120000, 0, 0},
    };
    RUN_STEPS("RL.WINDOW", "win:sliding", W0, 10, steps);

    /* The Cloudflare example: 8 in the previous minute, 15 s into this one they weigh 6, so 4 fit; the
     * fifth must wait until the weight is 5 (e = 22500). */
    static const step cloudflare[] = {
        {10000, "10 60000 COST 8", 1, 2, -1, 110000, 0, 1},
        {75000, "10 60000 COST 4", 1, 0, -1, 105000, 0, 1},
        {75000, "10 60000", 0, 0, 7500, 105000, 0, 1},
        {82500, "10 60000", 1, 0, -1, 97500, 0, 1},
    };
    RUN_STEPS("RL.WINDOW", "win:cf", W0, 10, cloudflare);
}

/* ------------------------------------------------------------------------------------------------- */
/* 2. Exactness on the test clock: retry_after_ms and reset_after_ms, to the ms.                      */

typedef struct exact_case {
    const char *params;
    long long fill;  /* first request's cost */
    long long gap;   /* ms after it, the probe requests (repeated until one is denied) */
    long long cost;  /* probe request's cost */
} exact_case;

static void exact_one(const char *command, const char *key, long long base, const exact_case *x) {
    del(key);
    clock_set(base);
    /* DRYRUN creates no key, even when it would leave the limiter busy. */
    rl_result r = rl(c, "%s %s %s COST %lld DRYRUN", command, key, x->params, x->fill);
    CHECK(r.ok && r.allowed == 1 && r.reset_after_ms > 0);
    CHECK_EQ(exists(key), 0);
    long long limit = r.limit;
    r = rl(c, "%s %s %s COST %lld", command, key, x->params, x->fill);
    CHECK_EQ(r.allowed, 1);
    CHECK_EQ(exists(key), 1);
    long long now = base + x->gap;
    clock_set(now);
    int tries = 0;
    do {
        r = rl(c, "%s %s %s COST %lld", command, key, x->params, x->cost);
    } while (r.ok && r.allowed && ++tries < 200);
    if (!CHECK(r.ok && r.allowed == 0)) {
        fprintf(stderr, "     %s %s: no denial (%s)\n", command, x->params, r.error);
        return;
    }
    long long retry = r.retry_after_ms, reset = r.reset_after_ms;
    if (!CHECK(retry >= 1 && reset >= retry)) {
        fprintf(stderr, "     %s %s: retry %lld reset %lld\n", command, x->params, retry, reset);
        return;
    }
    clock_set(now + retry - 1);
    r = rl(c, "%s %s %s COST %lld DRYRUN", command, key, x->params, x->cost);
    if (!CHECK(r.ok && r.allowed == 0)) fprintf(stderr, "     %s %s: admitted 1 ms before retry\n", command, x->params);
    clock_set(now + retry);
    r = rl(c, "%s %s %s COST %lld DRYRUN", command, key, x->params, x->cost);
    if (!CHECK(r.ok && r.allowed == 1)) fprintf(stderr, "     %s %s: denied at retry %lld\n", command, x->params, retry);
    clock_set(now + reset - 1);
    r = rl(c, "%s %s %s COST 0 DRYRUN", command, key, x->params);
    if (!CHECK(r.ok && r.reset_after_ms > 0)) fprintf(stderr, "     %s %s: idle 1 ms before reset\n", command, x->params);
    clock_set(now + reset);
    r = rl(c, "%s %s %s COST 0 DRYRUN", command, key, x->params);
    CHECK_RL(r, 1, limit, limit, -1, 0, 0);
    CHECK_EQ(exists(key), 1); /* DRYRUN deletes nothing either */
    r = rl(c, "%s %s %s COST 0", command, key, x->params);
    CHECK_RL(r, 1, limit, limit, -1, 0, 0);
    CHECK_EQ(exists(key), 0); /* an idle limiter holds no key */
}

static void test_exact_retry_and_reset(void) {
    static const exact_case leaky[] = {
        {"3 3 1000", 3, 0, 1},
        {"10 7 333", 10, 100, 3},
        {"1 1 1", 1, 0, 1},
        {"5 2 999", 5, 1234, 2},
        {"100 1 86400000", 100, 0, 1},
        {"1000000000000 1000000000 1000", 1000000000000LL, 500, 600000000000LL},
        {"7 3 1000 NODELAY", 7, 10, 1},
        {"2 1 31536000000", 2, 0, 1},
        {"1000 1 1000000000", 1000, 0, 1}, /* capacity / leak_tokens * leak_ms = 10^12 ms exactly */
        {"6 5 7", 4, 3, 2},
    };
    for (size_t i = 0; i < sizeof leaky / sizeof leaky[0]; i++)
        exact_one("RL.LEAKY", "lb:exact", T0 + (long long)i * 7, &leaky[i]);
    static const exact_case window[] = {
        {"10 60000 FIXED", 10, 0, 1},
        {"10 60000", 8, 60000, 1},
        {"3 1000 SLIDING", 3, 1500, 1},
        {"7 333", 5, 400, 2},
        {"1 1", 1, 0, 1},
        {"1 1 FIXED", 1, 0, 1},
        {"5 86400000 FIXED", 5, 0, 1},
        {"1000000000000 1000", 1000000000000LL, 1500, 100000000000LL},
        {"100 7 FIXED", 100, 3, 30},
        {"4 1000000000000", 4, 0, 1},
        {"9 1000", 2, 1700, 3},
    };
    for (size_t i = 0; i < sizeof window / sizeof window[0]; i++)
        exact_one("RL.WINDOW", "win:exact", W0 + (long long)i * 7, &window[i]);
}

/* ------------------------------------------------------------------------------------------------- */
/* 3. BLOCK with real clients.                                                                        */

static void test_block(void) {
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK REAL")); /* BLOCK holds on real time */

    /* Capacity 2, 1 per 300 ms: the first request waits 0, the second about 300 ms, and is held. */
    del("lb:blk");
    rl_result r = rl(c, "RL.LEAKY lb:blk 2 1 300 BLOCK");
    CHECK_EQ(r.allowed, 1);
    CHECK_EQ(r.wait_ms, 0);
    long long t0 = mono_us();
    r = rl(c, "RL.LEAKY lb:blk 2 1 300 BLOCK");
    long long held_us = mono_us() - t0;
    CHECK_EQ(r.allowed, 1);
    CHECK(r.wait_ms > 200 && r.wait_ms <= 300);
    if (!CHECK(held_us >= (r.wait_ms - 5) * 1000))
        fprintf(stderr, "     held %lld us for wait_ms %lld\n", held_us, r.wait_ms);

    /* DRYRUN BLOCK admits nothing, so holds nothing: a 60 s wait comes back at once (a held reply would
     * trip the client's 10 s timeout and end the test). */
    del("lb:blkdry");
    CHECK_EQ(rl(c, "RL.LEAKY lb:blkdry 3 1 60000").wait_ms, 0);
    r = rl(c, "RL.LEAKY lb:blkdry 3 1 60000 DRYRUN BLOCK");
    CHECK(r.ok && r.allowed == 1 && r.wait_ms > 59000);
    CHECK_EQ(info_field(c, "clients", "blocked_clients"), 0);

    /* Denied with BLOCK: answered at once, nothing held. */
    del("lb:blkd");
    CHECK_EQ(rl(c, "RL.LEAKY lb:blkd 2 1 60000 NODELAY COST 2").allowed, 1);
    r = rl(c, "RL.LEAKY lb:blkd 2 1 60000 BLOCK");
    CHECK(r.ok);
    CHECK_EQ(r.allowed, 0);
    CHECK_EQ(r.wait_ms, 0);
    CHECK(r.retry_after_ms > 59000 && r.retry_after_ms <= 60000);

    /* NODELAY BLOCK: nothing could ever be held, so the combination is refused, and changes nothing. */
    del("lb:blkn");
    CHECK_EQ(rl(c, "RL.LEAKY lb:blkn 5 1 60000 NODELAY COST 2").allowed, 1);
    CHECK(cmd_status_is(c, "ERR BLOCK: cannot be combined with NODELAY", "RL.LEAKY lb:blkn 5 1 60000 NODELAY BLOCK"));
    CHECK_EQ(rl(c, "RL.LEAKY lb:blkn 5 1 60000 NODELAY COST 0 DRYRUN").remaining, 3);

    /* Inside MULTI the reply cannot be held: it comes in EXEC's array with wait_ms set, at once. The wait
     * is 60 s, so a held EXEC would trip the client's 10 s timeout and end the test. */
    del("lb:multi");
    static const char *const twice[] = {"RL.LEAKY lb:multi 3 1 60000 BLOCK", "RL.LEAKY lb:multi 3 1 60000 BLOCK", NULL};
    redisReply *x = multi_exec(c, twice);
    if (CHECK(reply_is_array(x, 2))) {
        rl_result a = rl_of(x->element[0]), b = rl_of(x->element[1]);
        CHECK_RL(a, 1, 3, 2, -1, 60000, 0);
        /* Back to back on the real clock (well under 1 ms apart): level 1 ahead, wait 60000 ms. */
        CHECK(b.ok && b.allowed == 1 && b.remaining == 1 && b.retry_after_ms == -1);
        CHECK(b.wait_ms >= 59990 && b.wait_ms <= 60000);
        CHECK(b.reset_after_ms >= 119990 && b.reset_after_ms <= 120000);
    }
    freeReplyObject(x);

    /* In a Lua script likewise (the same 60 s wait). */
    del("lb:lua");
    const char *script = "return redis.call('RL.LEAKY', KEYS[1], '3', '1', '60000', 'BLOCK')";
    x = cmd(c, "EVAL %s 1 lb:lua", script);
    CHECK_RL(rl_of(x), 1, 3, 2, -1, 60000, 0);
    freeReplyObject(x);
    x = cmd(c, "EVAL %s 1 lb:lua", script);
    rl_result l = rl_of(x);
    freeReplyObject(x);
    if (!CHECK(l.ok && l.allowed == 1 && l.wait_ms > 59900 && l.wait_ms <= 60000))
        fprintf(stderr, "     EVAL: ok %d allowed %lld wait_ms %lld error '%s'\n", l.ok, l.allowed, l.wait_ms, l.error);

    /* On the real clock PTTL equals reset_after_ms (within 1 ms) for both commands. */
    del("lb:ttl");
    del("win:ttl");
    static const char *const with_pttl[] = {"RL.LEAKY lb:ttl 10 1 100 COST 5",        "PTTL lb:ttl",
                                            "RL.WINDOW win:ttl 5 60000 COST 2",       "PTTL win:ttl",
                                            "RL.WINDOW win:ttl 5 60000 FIXED COST 0", "PTTL win:ttl",
                                            NULL};
    x = multi_exec(c, with_pttl);
    if (CHECK(reply_is_array(x, 6))) {
        for (int i = 0; i < 6; i += 2) {
            long long reset = rl_of(x->element[i]).reset_after_ms, ttl = x->element[i + 1]->integer;
            if (!CHECK(reset > 0 && ttl >= reset - 1 && ttl <= reset + 1))
                fprintf(stderr, "     element %d: reset %lld pttl %lld\n", i, reset, ttl);
        }
        CHECK_EQ(rl_of(x->element[0]).reset_after_ms, 500);
    }
    freeReplyObject(x);

    /* A client that disconnects while held: the request was admitted (the level counts it), the timer
     * still fires, nothing stays blocked and the server carries on. Capacity 2, 1 per 1000 ms, level 1:
     * the next request is admitted with a wait of about 1000 ms. */
    del("lb:disc");
    CHECK_EQ(rl(c, "RL.LEAKY lb:disc 2 1 1000 NODELAY").allowed, 1);
    redisContext *dc = server_connect(srv);
    CHECK(redisAppendCommand(dc, "RL.LEAKY lb:disc 2 1 1000 BLOCK") == REDIS_OK);
    int done = 0;
    while (!done)
        if (redisBufferWrite(dc, &done) != REDIS_OK) break;
    CHECK(done);
    redisFree(dc);
    long long disconnected = mono_us();
    /* Before the request the level is just under 1 (remaining 1, reset <= 1000); once it is admitted
     * the level is just under 2 (remaining 0, reset > 1000). */
    int counted = 0;
    for (int i = 0; i < 100 && !counted; i++) {
        r = rl(c, "RL.LEAKY lb:disc 2 1 1000 COST 0 DRYRUN NODELAY");
        counted = r.ok && r.remaining == 0 && r.reset_after_ms > 1000;
        if (!counted) sleep_ms(2);
    }
    CHECK(counted);
    long long left = 1100 - (mono_us() - disconnected) / 1000;
    if (left > 0) sleep_ms(left);
    long long blocked = -1;
    for (int i = 0; i < 100; i++) {
        blocked = info_field(c, "clients", "blocked_clients");
        if (blocked == 0) break;
        sleep_ms(10);
    }
    CHECK_EQ(blocked, 0);
    CHECK(cmd_status_is(c, "PONG", "PING"));
    /* The level still holds the admitted unit: about 1 now, so a unit fits but two do not. */
    r = rl(c, "RL.LEAKY lb:disc 2 1 1000 COST 2 DRYRUN NODELAY");
    CHECK(r.ok && r.allowed == 0);

    /* RESP3, held reply: decided on the frozen clock (exact fields), held on real time. Capacity 2, 1 per
     * 300 ms, level 1: wait 300, level 2 drains in 600 ms. */
    clock_set(T0);
    del("lb:resp3");
    CHECK_EQ(rl(c, "RL.LEAKY lb:resp3 2 1 300").allowed, 1);
    const char *expected = "%6\r\n+allowed\r\n:1\r\n+limit\r\n:2\r\n+remaining\r\n:0\r\n+retry_after_ms\r\n:-1\r\n"
                           "+reset_after_ms\r\n:600\r\n+wait_ms\r\n:300\r\n";
    t0 = mono_us();
    char *got = raw_exchange(srv->port, "HELLO 3\r\nRL.LEAKY lb:resp3 2 1 300 BLOCK\r\n", expected);
    long long resp3_us = mono_us() - t0;
    if (!CHECK(strstr(got, expected) != NULL)) fprintf(stderr, "     got: %s\n", got);
    CHECK(resp3_us >= 295000);
    free(got);
    /* And a RESP3 reply that is not held (window). */
    del("win:resp3");
    expected = "%6\r\n+allowed\r\n:1\r\n+limit\r\n:5\r\n+remaining\r\n:3\r\n+retry_after_ms\r\n:-1\r\n"
               "+reset_after_ms\r\n:40000\r\n+wait_ms\r\n:0\r\n";
    got = raw_exchange(srv->port, "HELLO 3\r\nRL.WINDOW win:resp3 5 60000 FIXED COST 2\r\n", expected);
    if (!CHECK(strstr(got, expected) != NULL)) fprintf(stderr, "     got: %s\n", got);
    free(got);
}

/* ------------------------------------------------------------------------------------------------- */
/* 5. Bad input: exact error text, and the key byte-identical afterwards.                             */


static void check_bad_inputs(const char *command, const char *key, const char *setup, const bad_case *cases,
                             size_t n) {
    clock_set(T0);
    del(key);
    rl_result s = rl(c, "%s %s %s", command, key, setup);
    CHECK(s.ok && s.reset_after_ms > 0);
    check_errors_change_nothing(c, command, key, cases, n);
}

#define LEAKY_ARITY "ERR wrong number of arguments for 'rl.leaky' command"
#define WINDOW_ARITY "ERR wrong number of arguments for 'rl.window' command"
#define RANGE(name) "ERR " name ": must be an integer between 1 and 1000000000000"
#define COST_RANGE "ERR COST: must be an integer between 0 and 1000000000000"

static void test_bad_input(void) {
    static const bad_case leaky[] = {
        {"", LEAKY_ARITY},
        {"10", LEAKY_ARITY},
        {"10 1", LEAKY_ARITY},
        {"10 1 1000 DRYRUN a b c d e f g h i j k l m n o p q r s t u", LEAKY_ARITY}, /* more than any valid call */
        {"x 1 1000", RANGE("capacity")},
        {"0 1 1000", RANGE("capacity")},
        {"-5 1 1000", RANGE("capacity")},
        {"99999999999999999999 1 1000", RANGE("capacity")},
        {"1000000000001 1 1000", RANGE("capacity")},
        {"1.5 1 1000", RANGE("capacity")},
        {"010 1 1000", RANGE("capacity")},
        {"0 0 0", RANGE("capacity")}, /* the first bad argument is named */
        {"10 0 1000", RANGE("leak_tokens")},
        {"10 -1 1000", RANGE("leak_tokens")},
        {"10 abc 1000", RANGE("leak_tokens")},
        {"10 99999999999999999999 1000", RANGE("leak_tokens")},
        {"10 1 0", RANGE("leak_ms")},
        {"10 1 -1000", RANGE("leak_ms")},
        {"10 1 1e3", RANGE("leak_ms")},
        {"10 1 1000000000001", RANGE("leak_ms")},
        {"10 1 99999999999999999999", RANGE("leak_ms")},
        {"10 1 1000 COST", "ERR COST: needs a value"},
        {"10 1 1000 NODELAY COST", "ERR COST: needs a value"},
        {"10 1 1000 COST -1", COST_RANGE},
        {"10 1 1000 COST x", COST_RANGE},
        {"10 1 1000 COST 1000000000001", COST_RANGE},
        {"10 1 1000 COST 99999999999999999999", COST_RANGE},
        {"10 1 1000 COST 1 COST 1", "ERR COST: given more than once"},
        {"10 1 1000 NODELAY nodelay", "ERR NODELAY: given more than once"},
        {"10 1 1000 BLOCK BLOCK", "ERR BLOCK: given more than once"},
        {"10 1 1000 DRYRUN DRYRUN", "ERR DRYRUN: given more than once"},
        {"10 1 1000 FOO", "ERR 'FOO': not an option of rl.leaky"},
        {"10 1 1000 FIXED", "ERR 'FIXED': not an option of rl.leaky"},
        {"10 1 1000 SLIDING", "ERR 'SLIDING': not an option of rl.leaky"},
        {"10 1 1000 INTERVAL", "ERR 'INTERVAL': not an option of rl.leaky"},
        {"10 1 1000 1", "ERR '1': not an option of rl.leaky"},
        {"1000000000000 1 1000000000000",
         "ERR capacity: capacity / leak_tokens * leak_ms must not exceed 1000000000000 ms (draining from full to empty "
         "would take longer than 31 years)"},
        {"1001 1 1000000000",
         "ERR capacity: capacity / leak_tokens * leak_ms must not exceed 1000000000000 ms (draining from full to empty "
         "would take longer than 31 years)"},
    };
    check_bad_inputs("RL.LEAKY", "lb:bad", "10 1 1000 COST 3", leaky, sizeof leaky / sizeof leaky[0]);

    static const bad_case window[] = {
        {"", WINDOW_ARITY},
        {"10", WINDOW_ARITY},
        {"10 1000 DRYRUN a b c d e f g h i j k l m n o p q r s t u v", WINDOW_ARITY},
        {"x 1000", RANGE("limit")},
        {"0 1000", RANGE("limit")},
        {"-1 1000", RANGE("limit")},
        {"99999999999999999999 1000", RANGE("limit")},
        {"1000000000001 1000", RANGE("limit")},
        {"10 0", RANGE("window_ms")},
        {"10 -60000", RANGE("window_ms")},
        {"10 60s", RANGE("window_ms")},
        {"10 1000000000001", RANGE("window_ms")},
        {"10 99999999999999999999", RANGE("window_ms")},
        {"10 1000 COST", "ERR COST: needs a value"},
        {"10 1000 COST -1", COST_RANGE},
        {"10 1000 COST 99999999999999999999", COST_RANGE},
        {"10 1000 COST 1 cost 2", "ERR COST: given more than once"},
        {"10 1000 FIXED FIXED", "ERR FIXED: given more than once"},
        {"10 1000 SLIDING SLIDING", "ERR SLIDING: given more than once"},
        {"10 1000 DRYRUN DRYRUN", "ERR DRYRUN: given more than once"},
        {"10 1000 FIXED SLIDING", "ERR SLIDING: cannot be combined with FIXED"},
        {"10 1000 sliding fixed", "ERR FIXED: cannot be combined with SLIDING"},
        {"10 1000 NODELAY", "ERR 'NODELAY': not an option of rl.window"},
        {"10 1000 BLOCK", "ERR 'BLOCK': not an option of rl.window"},
        {"10 1000 INTERVAL", "ERR 'INTERVAL': not an option of rl.window"},
        {"10 1000 10", "ERR '10': not an option of rl.window"},
        {"10 1000 ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", "ERR 'ABCDEFGHIJKLMNOPQRSTUVWXYZ012...': not an option of rl.window"},
    };
    check_bad_inputs("RL.WINDOW", "win:bad", "10 60000 COST 3", window, sizeof window / sizeof window[0]);

    /* Binary junk in an option is shown as '?' and the connection stays in step. */
    const char *argv[] = {"RL.LEAKY", "lb:bad", "10", "1", "1000", "\r\n\x01'junk"};
    size_t lens[] = {8, 6, 2, 1, 4, 8};
    redisReply *r = cmdargv(c, 6, argv, lens);
    CHECK(r->type == REDIS_REPLY_ERROR && strcmp(r->str, "ERR '???\?junk': not an option of rl.leaky") == 0);
    freeReplyObject(r);
    CHECK(cmd_status_is(c, "PONG", "PING"));

    /* The boundary of the drain-time check is accepted: 1000 * 10^9 ms / 1 = 10^12 ms. */
    del("lb:edge");
    rl_result e = rl(c, "RL.LEAKY lb:edge 1000 1 1000000000 COST 1000");
    CHECK_RL(e, 1, 1000, 0, -1, 1000000000000LL, 0);
    del("lb:edge");
}

/* WRONGTYPE: a key of another limiter kind or of a Redis type answers WRONGTYPE and is left as it was. */
static void check_wrongtype(const char *key, const char *line) {
    size_t l0, l1;
    char *before = dump_key(c, key, &l0);
    long long expire0 = cmd_int(c, "PEXPIRETIME %s", key);
    if (!CHECK(cmd_status_is(c, "WRONGTYPE Operation against a key holding the wrong kind of value", line)))
        fprintf(stderr, "     for: %s\n", line);
    char *after = dump_key(c, key, &l1);
    CHECK(before && after && l0 == l1 && memcmp(before, after, l0) == 0);
    CHECK_EQ(cmd_int(c, "PEXPIRETIME %s", key), expire0);
    free(before);
    free(after);
}

static void test_wrongtype(void) {
    clock_set(T0);
    del("wt:token");
    del("wt:leaky");
    del("wt:window");
    del("wt:str");
    CHECK(rl(c, "RL.TOKEN wt:token 10 1 1000 COST 3").allowed == 1);
    CHECK(rl(c, "RL.LEAKY wt:leaky 10 1 1000 COST 3").allowed == 1);
    CHECK(rl(c, "RL.WINDOW wt:window 10 60000 COST 3").allowed == 1);
    CHECK(cmd_status_is(c, "OK", "SET wt:str hello"));
    check_wrongtype("wt:token", "RL.LEAKY wt:token 10 1 1000");
    check_wrongtype("wt:token", "RL.LEAKY wt:token 10 1 1000 COST 0 DRYRUN");
    check_wrongtype("wt:token", "RL.WINDOW wt:token 10 60000");
    check_wrongtype("wt:token", "RL.WINDOW wt:token 10 60000 FIXED DRYRUN");
    check_wrongtype("wt:leaky", "RL.WINDOW wt:leaky 10 60000");
    check_wrongtype("wt:leaky", "RL.TOKEN wt:leaky 10 1 1000");
    check_wrongtype("wt:window", "RL.LEAKY wt:window 10 1 1000 BLOCK");
    check_wrongtype("wt:window", "RL.TOKEN wt:window 10 1 1000");
    check_wrongtype("wt:str", "RL.LEAKY wt:str 10 1 1000");
    check_wrongtype("wt:str", "RL.WINDOW wt:str 10 60000 FIXED");
    redisReply *s = cmd(c, "GET wt:str");
    CHECK(s->type == REDIS_REPLY_STRING && strcmp(s->str, "hello") == 0);
    freeReplyObject(s);
    /* A list too. */
    freeReplyObject(cmd(c, "DEL wt:list"));
    CHECK_EQ(cmd_int(c, "RPUSH wt:list a"), 1);
    check_wrongtype("wt:list", "RL.WINDOW wt:list 10 60000");
    check_wrongtype("wt:list", "RL.LEAKY wt:list 10 1 1000 NODELAY");
    /* The type command reports the module types. */
    redisReply *t = cmd(c, "TYPE wt:leaky");
    CHECK(reply_is_status(t, "rl-leakyb"));
    freeReplyObject(t);
    t = cmd(c, "TYPE wt:window");
    CHECK(reply_is_status(t, "rl-window"));
    freeReplyObject(t);
}

/* ------------------------------------------------------------------------------------------------- */
/* 6. Persistence: DEBUG RELOAD, DUMP/RESTORE.                                                        */

static int same_bytes(const char *a, size_t la, const char *b, size_t lb) {
    return a && b && la == lb && memcmp(a, b, la) == 0;
}

static void test_persistence(void) {
    clock_set(T0);
    const char *keys[] = {"ps:leaky", "ps:nodelay", "ps:sliding", "ps:fixed"};
    const char *calls[] = {"RL.LEAKY ps:leaky 10 3 1000 COST 4", "RL.LEAKY ps:nodelay 7 2 333 NODELAY COST 5",
                           "RL.WINDOW ps:sliding 10 60000 COST 6", "RL.WINDOW ps:fixed 5 1000 FIXED COST 2"};
    for (int k = 0; k < 4; k++) del(keys[k]);
    for (int k = 0; k < 4; k++) CHECK_EQ(rl(c, "%s", calls[k]).allowed, 1);
    /* A second call later, so the sliding key holds a previous window too. */
    clock_set(T0 + 60000);
    CHECK_EQ(rl(c, "RL.WINDOW ps:sliding 10 60000 COST 2").allowed, 1);
    CHECK_EQ(rl(c, "RL.LEAKY ps:leaky 10 3 1000 COST 3").allowed, 1);
    CHECK_EQ(rl(c, "RL.WINDOW ps:fixed 5 1000 FIXED COST 2").allowed, 1);
    CHECK_EQ(rl(c, "RL.LEAKY ps:nodelay 7 2 333 NODELAY COST 2").allowed, 1);

    char *dumps[4];
    size_t lens[4];
    long long expires[4];
    for (int k = 0; k < 4; k++) {
        dumps[k] = dump_key(c, keys[k], &lens[k]);
        expires[k] = cmd_int(c, "PEXPIRETIME %s", keys[k]);
        CHECK(dumps[k] != NULL && expires[k] > 0);
    }
    CHECK(cmd_status_is(c, "OK", "DEBUG RELOAD"));
    for (int k = 0; k < 4; k++) {
        size_t l;
        char *d = dump_key(c, keys[k], &l);
        if (!CHECK(same_bytes(d, l, dumps[k], lens[k]))) fprintf(stderr, "     %s changed by DEBUG RELOAD\n", keys[k]);
        CHECK_EQ(cmd_int(c, "PEXPIRETIME %s", keys[k]), expires[k]);
        free(d);
    }

    /* RESTORE makes a key that is byte-identical and behaves the same, call for call. */
    const char *params[] = {"10 3 1000", "7 2 333 NODELAY", "10 60000", "5 1000 FIXED"};
    const char *cmds[] = {"RL.LEAKY", "RL.LEAKY", "RL.WINDOW", "RL.WINDOW"};
    for (int k = 0; k < 4; k++) {
        char copy[32];
        snprintf(copy, sizeof copy, "%s:r", keys[k]);
        del(copy);
        redisReply *rr = redisCommand(c, "RESTORE %s 0 %b", copy, dumps[k], lens[k]);
        CHECK(reply_is_status(rr, "OK"));
        if (rr) freeReplyObject(rr);
        size_t l;
        char *d = dump_key(c, copy, &l);
        CHECK(same_bytes(d, l, dumps[k], lens[k]));
        free(d);
        static const struct {
            long long at;
            const char *opts;
        } seq[] = {{60000, "COST 0 DRYRUN"}, {60000, "COST 3 DRYRUN"}, {60100, "COST 2"}, {60100, "COST 9"},
                   {60500, ""}, {61000, "COST 4 DRYRUN"}, {90000, "COST 1"}, {125000, "COST 0"}};
        for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++) {
            clock_set(T0 + seq[i].at);
            rl_result a = rl(c, "%s %s %s %s", cmds[k], keys[k], params[k], seq[i].opts);
            rl_result b = rl(c, "%s %s %s %s", cmds[k], copy, params[k], seq[i].opts);
            if (!CHECK(a.ok && b.ok && a.allowed == b.allowed && a.limit == b.limit && a.remaining == b.remaining &&
                       a.retry_after_ms == b.retry_after_ms && a.reset_after_ms == b.reset_after_ms &&
                       a.wait_ms == b.wait_ms))
                fprintf(stderr, "     %s vs %s at step %zu differ\n", keys[k], copy, i);
            size_t la, lb;
            char *da = dump_key(c, keys[k], &la), *db = dump_key(c, copy, &lb);
            CHECK((!da && !db) || same_bytes(da, la, db, lb));
            free(da);
            free(db);
        }
        del(copy);
    }
    /* The restored key keeps its type. */
    del("ps:typed");
    redisReply *rr = redisCommand(c, "RESTORE ps:typed 0 %b", dumps[0], lens[0]);
    CHECK(reply_is_status(rr, "OK"));
    if (rr) freeReplyObject(rr);
    check_wrongtype("ps:typed", "RL.WINDOW ps:typed 10 60000");
    del("ps:typed");
    for (int k = 0; k < 4; k++) free(dumps[k]);
    clock_set(T0);
}

/* ------------------------------------------------------------------------------------------------- */
/* 4. Replication: primary on a frozen clock, replica on the real clock.                              */

static void test_replication(void) {
    /* Limiters made before the replica exists reach it by the full sync (the types' RDB form). */
    const char *pre[] = {"rep:preleaky", "rep:prewindow"};
    CHECK_EQ(rl(c, "RL.LEAKY rep:preleaky 10 1 1000 COST 3").allowed, 1);
    CHECK_EQ(rl(c, "RL.WINDOW rep:prewindow 10 1000 SLIDING COST 3").allowed, 1);
    server *rep = replica_start(srv);
    redisContext *rc = server_connect(rep);
    for (int i = 0; i < 2; i++)
        if (!CHECK(cmd_int(rc, "EXISTS %s", pre[i]) == 1 && same_dump(c, rc, pre[i])))
            fprintf(stderr, "     %s differs on the replica after the full sync\n", pre[i]);

    clock_set(T0 + 7000000);
    enum { NKEYS = 24 };
    char keys[NKEYS][32];
    for (int i = 0; i < NKEYS; i++) snprintf(keys[i], sizeof keys[i], "rep:%d", i);
    long long now = T0 + 7000000;
    for (int i = 0; i < 600; i++) {
        if (i % 7 == 0) {
            now += (i * 37) % 211;
            clock_set(now);
        }
        int k = i % NKEYS;
        if (k < 12) {
            const char *mode = k % 3 == 0 ? "NODELAY" : "";
            freeReplyObject(cmdline(c, "RL.LEAKY %s %d %d 1000 %s COST %d%s", keys[k], 5 + k, 1 + k % 4, mode,
                                    i % 4, i % 11 == 0 ? " DRYRUN" : ""));
        } else {
            const char *mode = k % 3 == 0 ? "FIXED" : (k % 3 == 1 ? "SLIDING" : "");
            freeReplyObject(cmdline(c, "RL.WINDOW %s %d %d %s COST %d%s", keys[k], 8 + k, 500 + 100 * (k % 5), mode,
                                    i % 3, i % 13 == 0 ? " DRYRUN" : ""));
        }
    }
    int present = 0;
    for (int i = 0; i < NKEYS; i++) present += (int)exists(keys[i]);
    CHECK(present >= NKEYS / 2);

    /* Keys that go idle again: the primary deletes them, and so must the replica. */
    const char *idle[] = {"rep:lidle", "rep:widle", "rep:fidle"};
    CHECK_EQ(rl(c, "RL.LEAKY rep:lidle 5 1 100 COST 1").allowed, 1);
    CHECK_EQ(rl(c, "RL.WINDOW rep:widle 5 1000 COST 1").allowed, 1);
    CHECK_EQ(rl(c, "RL.WINDOW rep:fidle 5 1000 FIXED COST 1").allowed, 1);
    check_replica_caught_up(c);
    for (int i = 0; i < 3; i++) CHECK_EQ(cmd_int(rc, "EXISTS %s", idle[i]), 1);
    now += 2000;
    clock_set(now);
    CHECK_EQ(rl(c, "RL.LEAKY rep:lidle 5 1 100 COST 0").reset_after_ms, 0);
    CHECK_EQ(rl(c, "RL.WINDOW rep:widle 5 1000 COST 0").reset_after_ms, 0);
    CHECK_EQ(rl(c, "RL.WINDOW rep:fidle 5 1000 FIXED COST 0").reset_after_ms, 0);
    /* A held (BLOCK) request: its effect is replicated at admission. */
    del("rep:blk");
    CHECK_EQ(rl(c, "RL.LEAKY rep:blk 2 1 50 BLOCK").wait_ms, 0);
    CHECK_EQ(rl(c, "RL.LEAKY rep:blk 2 1 50 BLOCK").wait_ms, 50);

    check_replica_caught_up(c);
    for (int i = 0; i < NKEYS; i++) {
        check_same_on_replica(c, rc, keys[i]);
        check_same_expiry_on_replica(c, rc, keys[i]);
    }
    check_same_on_replica(c, rc, "rep:blk");
    check_same_expiry_on_replica(c, rc, "rep:blk");
    CHECK_EQ(cmd_int(rc, "EXISTS rep:blk"), 1);
    for (int i = 0; i < 3; i++) {
        CHECK_EQ(exists(idle[i]), 0);
        CHECK_EQ(cmd_int(rc, "EXISTS %s", idle[i]), 0);
    }
    /* DRYRUN replicates nothing: the primary's replication offset does not move. (A replication PING
     * may land in between, every 10 s: then try again.) */
    long long off1 = -1, off2 = -2;
    for (int attempt = 0; attempt < 3 && off1 != off2; attempt++) {
        off1 = info_field(c, "replication", "master_repl_offset");
        rl(c, "RL.LEAKY rep:0 5 1 1000 COST 1 DRYRUN");
        rl(c, "RL.LEAKY rep:0 5 1 1000 COST 9 DRYRUN");
        rl(c, "RL.LEAKY rep:new 5 1 1000 DRYRUN BLOCK");
        rl(c, "RL.WINDOW rep:12 5 1000 COST 1 DRYRUN");
        rl(c, "RL.WINDOW rep:new 5 1000 FIXED DRYRUN");
        off2 = info_field(c, "replication", "master_repl_offset");
    }
    CHECK(off1 > 0);
    CHECK_EQ(off2, off1);
    CHECK_EQ(exists("rep:new"), 0);

    /* The replica refuses the commands, as any write. */
    rl_result w = rl(rc, "RL.LEAKY rep:0 10 1 1000");
    CHECK(!w.ok && strncmp(w.error, "READONLY", 8) == 0);
    w = rl(rc, "RL.WINDOW rep:12 10 1000");
    CHECK(!w.ok && strncmp(w.error, "READONLY", 8) == 0);
    redisFree(rc);
    server_stop(rep);
}

/* Flags, arity and key position as Cluster, ACL and clients see them. */
static void test_command_metadata(void) {
    CHECK(command_info_is(c, "RL.LEAKY", -5, "write fast"));
    CHECK(command_info_is(c, "RL.WINDOW", -4, "write fast"));
    redisReply *r = cmd(c, "COMMAND GETKEYS RL.LEAKY the:key 3 1 1000 BLOCK NODELAY");
    CHECK(r->type == REDIS_REPLY_ARRAY && r->elements == 1 && strcmp(r->element[0]->str, "the:key") == 0);
    freeReplyObject(r);
}

int main(void) {
    static const suite_test tests[] = {test_leaky_shaping_table, test_leaky_nodelay_table, test_leaky_cost_table,
        test_window_fixed_table, test_window_sliding_table, test_exact_retry_and_reset, test_bad_input, test_wrongtype,
        test_persistence, test_block, test_replication, test_command_metadata, NULL};
    return server_suite("integration_leaky_window", &srv, &c, tests);
}
