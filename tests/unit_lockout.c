/* unit_lockout.c -- the lockout rules (algorithms/lockout.c) on a fake clock.
 *
 * The idea: the module only stores what lockout.c decides, so the rules are checked here alone, on plain
 * records and replies:
 *   1. tables: escalation (ms * factor^(n-1), capped by MAXLOCK, no overflow at factor 16 and n in the
 *      millions), FORGIVE's default (with BACKOFF MAXLOCK, whose default is the largest period; without, the
 *      lock's length) and explicit value, strikes
 *      forgiven exactly at forgive_us, COST 0 and REFUND never locking, rl_lock_deny's reply, rl_lock_block,
 *      rl_lock_valid and rl_lockout_validate's errors;
 *   2. random request sequences against a small model of the rules written here from the documentation
 *      (int128 arithmetic, no loop shortcut), every record and reply field compared. */
#include <stdlib.h>

#include "check.h"
#define RNG_SEED 0x10c4017ULL
#include "rng.h"
#include "../algorithms/lockout.h"

#define MS 1000LL
#define T0 (1700000000000LL * MS)

static rl_request lockout_req(int64_t now_us, int64_t ms, int64_t backoff, int64_t maxlock, int64_t forgive) {
    rl_request r;
    memset(&r, 0, sizeof r);
    r.now_us = now_us;
    r.cost = 1;
    r.flags = RL_F_LOCKOUT;
    r.lockout_ms = ms;
    if (backoff) r.flags |= RL_F_BACKOFF, r.lock_backoff = backoff;
    if (maxlock) r.flags |= RL_F_MAXLOCK, r.lock_max_ms = maxlock;
    if (forgive) r.flags |= RL_F_FORGIVE, r.lock_forgive_ms = forgive;
    return r;
}

/* A limiter's denial: retry_ms its own retry, reset_ms its own reset. */
static rl_reply denial(int64_t retry_ms, int64_t reset_ms) {
    rl_reply r = {0, 5, 0, retry_ms, reset_ms, 0, 0, reset_ms * MS};
    return r;
}

/* --- 1. tables ------------------------------------------------------------------------------------------- */

static void test_escalation(void) {
    rl_request r = lockout_req(T0, 3600000, 2, 86400000, 0);
    static const int64_t want[] = {3600000, 7200000, 14400000, 28800000, 57600000, 86400000, 86400000};
    for (int n = 1; n <= 7; n++) CHECK_EQ(rl_lock_length_ms(&r, n), want[n - 1]);
    /* No BACKOFF: every lock the same; no MAXLOCK: capped by the longest period. */
    r = lockout_req(T0, 1000, 0, 0, 0);
    CHECK_EQ(rl_lock_length_ms(&r, 1), 1000);
    CHECK_EQ(rl_lock_length_ms(&r, 1000000), 1000);
    r = lockout_req(T0, 1000, 16, 0, 0);
    CHECK_EQ(rl_lock_length_ms(&r, 2), 16000);
    CHECK_EQ(rl_lock_length_ms(&r, 8), 1000 * 268435456LL);
    CHECK_EQ(rl_lock_length_ms(&r, 9), RL_MAX_PERIOD_MS); /* 4.3e12 > 1e12 */
    CHECK_EQ(rl_lock_length_ms(&r, 5000000), RL_MAX_PERIOD_MS);
    CHECK_EQ(rl_lock_length_ms(&r, INT64_MAX), RL_MAX_PERIOD_MS);
    r = lockout_req(T0, RL_MAX_PERIOD_MS, 16, 0, 0);
    CHECK_EQ(rl_lock_length_ms(&r, 3000000), RL_MAX_PERIOD_MS);
    r = lockout_req(T0, 7, 3, 100, 0);
    CHECK_EQ(rl_lock_length_ms(&r, 3), 63);
    CHECK_EQ(rl_lock_length_ms(&r, 4), 100); /* 189, capped */
    r = lockout_req(T0, 5, 2, 5, 0); /* MAXLOCK = LOCKOUT: never longer */
    CHECK_EQ(rl_lock_length_ms(&r, 10), 5);
}

/* The login example: strikes 1, 2, ... and each lock's forgiving. */
static void test_after_and_forgive(void) {
    rl_request r = lockout_req(T0, 3600000, 2, 86400000, 0); /* FORGIVE defaults to MAXLOCK */
    rl_lock l = {0, 0, 0};
    rl_reply y = denial(100000, 100000);
    CHECK_EQ(rl_lock_after(&r, &l, &y), 1);
    CHECK(l.strikes == 1 && l.until_us == T0 + 3600000 * MS && l.forgive_us == l.until_us + 86400000 * MS);
    CHECK(y.allowed == 0 && y.remaining == 0 && y.retry_after_ms == 3600000 && y.reset_after_ms == 90000000);
    /* Denied again after the lock ends (the module only calls rl_lock_after then): the second lock. */
    r.now_us = l.until_us;
    y = denial(100000, 100000);
    CHECK_EQ(rl_lock_after(&r, &l, &y), 1);
    CHECK(l.strikes == 2 && l.until_us == r.now_us + 7200000 * MS && y.retry_after_ms == 7200000);
    /* Forgiven exactly at forgive_us; one µs before, not. */
    rl_lock before = l;
    CHECK_EQ(rl_lock_strikes(&l, l.forgive_us - 1), 2);
    CHECK(rl_lock_alive(&l, l.forgive_us - 1));
    CHECK_EQ(rl_lock_strikes(&l, l.forgive_us), 0);
    CHECK(!rl_lock_alive(&l, l.forgive_us));
    r.now_us = before.forgive_us - 1;
    y = denial(10, 10);
    CHECK_EQ(rl_lock_after(&r, &l, &y), 1);
    CHECK_EQ(l.strikes, 3);
    l = before;
    r.now_us = before.forgive_us;
    y = denial(10, 10);
    CHECK_EQ(rl_lock_after(&r, &l, &y), 1);
    CHECK_EQ(l.strikes, 1);
    CHECK_EQ(l.until_us - r.now_us, 3600000 * MS);
    /* An admitted call on a record that says nothing any more clears it, and leaves the reply as it was. */
    l = before;
    r.now_us = before.forgive_us + 5;
    rl_reply ok = {1, 5, 4, -1, 100, 0, 1, 100 * MS};
    CHECK_EQ(rl_lock_after(&r, &l, &ok), 0);
    CHECK(l.until_us == 0 && l.forgive_us == 0 && l.strikes == 0);
    CHECK(ok.allowed == 1 && ok.remaining == 4 && ok.reset_after_ms == 100);
    /* Admitted while strikes count: the reply's reset covers them. */
    l = before;
    r.now_us = before.until_us;
    ok = (rl_reply){1, 5, 4, -1, 100, 0, 1, 100 * MS};
    CHECK_EQ(rl_lock_after(&r, &l, &ok), 0);
    CHECK(ok.allowed == 1 && ok.reset_after_ms == 86400000 && l.strikes == 2);
}

static void test_forgive_defaults(void) {
    rl_lock l = {0, 0, 0};
    rl_reply y = denial(1, 1);
    rl_request r = lockout_req(T0, 1000, 3, 0, 0); /* BACKOFF, no MAXLOCK: MAXLOCK's default */
    rl_lock_after(&r, &l, &y);
    CHECK_EQ(l.forgive_us - l.until_us, RL_MAX_PERIOD_MS * MS);
    r.now_us = l.until_us;
    y = denial(1, 1);
    rl_lock_after(&r, &l, &y);
    CHECK_EQ(l.strikes, 2);
    CHECK_EQ(l.until_us - r.now_us, 3000 * MS); /* the second lock: 1000 * 3 */
    CHECK_EQ(l.forgive_us - l.until_us, RL_MAX_PERIOD_MS * MS);
    l = (rl_lock){0, 0, 0};
    r = lockout_req(T0, 1000, 3, 50000, 0); /* BACKOFF and MAXLOCK */
    y = denial(1, 1);
    rl_lock_after(&r, &l, &y);
    CHECK_EQ(l.forgive_us - l.until_us, 50000 * MS);
    l = (rl_lock){0, 0, 0};
    r = lockout_req(T0, 1000, 0, 50000, 0); /* MAXLOCK without BACKOFF: the lock's length */
    y = denial(1, 1);
    rl_lock_after(&r, &l, &y);
    CHECK_EQ(l.forgive_us - l.until_us, 1000 * MS);
    l = (rl_lock){0, 0, 0};
    r = lockout_req(T0, 1000, 0, 0, 0); /* neither: the lock's length */
    y = denial(1, 1);
    rl_lock_after(&r, &l, &y);
    CHECK_EQ(l.forgive_us - l.until_us, 1000 * MS);
    l = (rl_lock){0, 0, 0};
    r = lockout_req(T0, 1000, 3, 50000, 7); /* explicit */
    y = denial(1, 1);
    rl_lock_after(&r, &l, &y);
    CHECK_EQ(l.forgive_us - l.until_us, 7 * MS);
    CHECK_EQ(y.reset_after_ms, 1007);
}

static void test_looks_never_lock(void) {
    rl_request r = lockout_req(T0, 1000, 0, 0, 0);
    rl_lock l = {0, 0, 0};
    r.cost = 0;
    rl_reply y = denial(5, 5);
    CHECK_EQ(rl_lock_after(&r, &l, &y), 0);
    CHECK(l.strikes == 0 && y.retry_after_ms == 5);
    r.cost = 1;
    r.flags |= RL_F_REFUND;
    CHECK_EQ(rl_lock_after(&r, &l, &y), 0);
    r.flags &= ~(uint32_t)(RL_F_REFUND | RL_F_LOCKOUT);
    CHECK_EQ(rl_lock_after(&r, &l, &y), 0); /* no LOCKOUT */
    CHECK(l.strikes == 0 && l.until_us == 0);
}

static void test_deny(void) {
    rl_lock l = {T0 + 5000 * MS, T0 + 9000 * MS, 2};
    rl_reply y = {1, 10, 7, -1, 300, 0, 1, 300 * MS}; /* the limiter would admit */
    rl_lock_deny(&l, T0, &y);
    CHECK(y.allowed == 0 && y.remaining == 0 && y.granted == 0 && y.wait_ms == 0);
    CHECK_EQ(y.retry_after_ms, 5000);
    CHECK_EQ(y.reset_after_ms, 9000);
    y = denial(7000, 20000); /* the limiter's own retry is later */
    y.wait_ms = 3;
    rl_lock_deny(&l, T0, &y);
    CHECK(y.retry_after_ms == 7000 && y.reset_after_ms == 20000 && y.wait_ms == 0);
    y = denial(-1, 100); /* never fits: stays -1 */
    rl_lock_deny(&l, T0, &y);
    CHECK(y.retry_after_ms == -1 && y.reset_after_ms == 9000);
    y = denial(1, 1);
    rl_lock_deny(&l, T0 + 4999 * MS + 1, &y); /* ms rounded up */
    CHECK_EQ(y.retry_after_ms, 1);
}

static void test_block(void) {
    rl_lock l = {0, 0, 0};
    rl_lock_block(&l, T0, 4000);
    CHECK(l.until_us == T0 + 4000 * MS && l.strikes == 0 && l.forgive_us == l.until_us);
    rl_lock s = {T0 + 1000 * MS, T0 + 3000 * MS, 3};
    l = s;
    rl_lock_block(&l, T0, 2000); /* strikes kept, forgiving where it was */
    CHECK(l.until_us == T0 + 2000 * MS && l.strikes == 3 && l.forgive_us == T0 + 3000 * MS);
    l = s;
    rl_lock_block(&l, T0, 10000); /* forgiving moved to the lock's end */
    CHECK(l.until_us == T0 + 10000 * MS && l.strikes == 3 && l.forgive_us == T0 + 10000 * MS);
    l = s;
    rl_lock_block(&l, T0 + 3000 * MS, 10); /* the strikes were forgiven: none */
    CHECK(l.strikes == 0 && l.until_us == T0 + 3010 * MS);
    CHECK_EQ(rl_lock_after(&(rl_request){.now_us = T0 + 3010 * MS}, &l, &(rl_reply){1, 1, 0, -1, 0, 0, 1, 0}), 0);
}

static void test_valid(void) {
    CHECK(rl_lock_valid(&(rl_lock){0, 0, 0}));
    CHECK(rl_lock_valid(&(rl_lock){T0, T0 + 1, 5}));
    CHECK(rl_lock_valid(&(rl_lock){T0, T0, 0}));
    CHECK(!rl_lock_valid(&(rl_lock){T0, T0 - 1, 1}));   /* forgiven before it ends */
    CHECK(!rl_lock_valid(&(rl_lock){-1, 0, 0}));
    CHECK(!rl_lock_valid(&(rl_lock){T0, T0, -1}));
    CHECK(!rl_lock_valid(&(rl_lock){T0, T0, RL_MAX_COUNT + 1}));
    CHECK(!rl_lock_valid(&(rl_lock){INT64_MAX, INT64_MAX, 0}));
    CHECK(rl_lock_valid(&(rl_lock){RL_MAX_TIME_US + RL_MAX_PERIOD_MS * 1000, RL_MAX_TIME_US + 2 * RL_MAX_PERIOD_MS * 1000, 1}));
}

static void test_validate(void) {
    char err[RL_ERR_LEN];
    rl_request r = lockout_req(T0, 1000, 2, 5000, 100);
    CHECK_EQ(rl_lockout_validate(&r, err), 0);
    r.flags &= ~(uint32_t)RL_F_LOCKOUT;
    CHECK_EQ(rl_lockout_validate(&r, err), -1);
    CHECK_STR(err, "ERR BACKOFF: needs LOCKOUT ms");
    r.flags &= ~(uint32_t)RL_F_BACKOFF;
    CHECK_EQ(rl_lockout_validate(&r, err), -1);
    CHECK_STR(err, "ERR MAXLOCK: needs LOCKOUT ms");
    r.flags &= ~(uint32_t)RL_F_MAXLOCK;
    CHECK_EQ(rl_lockout_validate(&r, err), -1);
    CHECK_STR(err, "ERR FORGIVE: needs LOCKOUT ms");
    r.flags = 0;
    CHECK_EQ(rl_lockout_validate(&r, err), 0);
    r = lockout_req(T0, 1000, 0, 999, 0);
    CHECK_EQ(rl_lockout_validate(&r, err), -1);
    CHECK_STR(err, "ERR MAXLOCK: must be at least LOCKOUT's ms");
    r.lock_max_ms = 1000;
    CHECK_EQ(rl_lockout_validate(&r, err), 0);
}

/* --- 2. random sequences against a model ------------------------------------------------------------------ */

typedef struct model {
    __int128 until, forgive;
    int64_t strikes;
} model;

static int64_t ceil_ms(__int128 us) { return (int64_t)((us + 999) / 1000); }

/* The n-th lock's length: ms * factor^(n-1), at most the cap (int128, saturated once above the cap). */
static int64_t model_length(int64_t ms, int64_t factor, int64_t cap, int64_t n) {
    __int128 len = ms;
    for (int64_t i = 1; i < n && len <= cap; i++) len *= factor;
    if (factor == 1) len = ms;
    return (int64_t)(len < cap ? len : cap);
}

static void random_sequences(void) {
    for (int seq = 0; seq < 2000; seq++) {
        model m = {0, 0, 0};
        rl_lock l = {0, 0, 0};
        int64_t now = T0 + rng_range(0, 1000000);
        int64_t ms = rng_range(1, 5000), factor = rng_range(1, 4), cap = ms * rng_range(1, 40);
        int with_backoff = rng() & 1, with_max = rng() & 1, with_forgive = rng() & 1;
        int64_t forgive = rng_range(1, 20000);
        for (int step = 0; step < 60; step++) {
            now += rng_range(0, 8000) * MS + rng_range(0, 999);
            rl_request r = lockout_req(now, ms, with_backoff ? factor : 0, with_max ? cap : 0, with_forgive ? forgive : 0);
            int64_t cost = rng_range(0, 2);
            r.cost = cost;
            if (rng_range(0, 9) == 0) r.flags |= RL_F_REFUND;
            int allowed = rng_range(0, 2) == 0;
            int64_t own_retry = allowed ? -1 : rng_range(-1, 9000);
            int64_t own_reset = rng_range(0, 9000);
            rl_reply y = {allowed, 5, allowed ? 4 : 0, own_retry, own_reset, 0, allowed ? cost : 0, own_reset * MS};
            if (now < m.until) { /* the lock holds: the module asks rl_lock_deny */
                rl_lock_deny(&l, now, &y);
                int64_t lock_ms = ceil_ms(m.until - now), own = allowed ? 0 : own_retry;
                __int128 end = m.strikes > 0 && m.forgive > m.until ? m.forgive : m.until;
                int64_t cover = ceil_ms(end - now);
                CHECK(y.allowed == 0 && y.remaining == 0 && y.granted == 0);
                CHECK_EQ(y.retry_after_ms, own < 0 ? -1 : own > lock_ms ? own : lock_ms);
                CHECK_EQ(y.reset_after_ms, cover > own_reset ? cover : own_reset);
                continue;
            }
            if (!(now < m.until || (m.strikes > 0 && now < m.forgive))) m = (model){0, 0, 0};
            int starts = !allowed && cost >= 1 && !(r.flags & RL_F_REFUND);
            if (starts) {
                int64_t n = (m.strikes > 0 && now < m.forgive ? m.strikes : 0) + 1;
                int64_t len = model_length(ms, with_backoff ? factor : 1, with_max ? cap : RL_MAX_PERIOD_MS, n);
                int64_t fms = with_forgive ? forgive : with_backoff ? (with_max ? cap : RL_MAX_PERIOD_MS) : len;
                m.strikes = n;
                m.until = (__int128)now + (__int128)len * MS;
                m.forgive = m.until + (__int128)fms * MS;
            }
            int got = rl_lock_after(&r, &l, &y);
            CHECK_EQ(got, starts);
            int alive = now < m.until || (m.strikes > 0 && now < m.forgive);
            if (!alive) CHECK(l.until_us == 0 && l.strikes == 0 && l.forgive_us == 0);
            else CHECK(l.until_us == (int64_t)m.until && l.forgive_us == (int64_t)m.forgive && l.strikes == m.strikes);
            if (starts) {
                int64_t lock_ms = ceil_ms(m.until - now);
                CHECK(y.allowed == 0 && y.remaining == 0);
                CHECK_EQ(y.retry_after_ms, own_retry < 0 ? -1 : own_retry > lock_ms ? own_retry : lock_ms);
            } else {
                CHECK(y.allowed == allowed && y.retry_after_ms == own_retry);
            }
            if (alive) {
                __int128 end = m.strikes > 0 && m.forgive > m.until ? m.forgive : m.until;
                int64_t cover = ceil_ms(end - now);
                CHECK_EQ(y.reset_after_ms, cover > own_reset ? cover : own_reset);
            } else {
                CHECK_EQ(y.reset_after_ms, own_reset);
            }
            CHECK(rl_lock_valid(&l));
        }
    }
}

int main(void) {
    test_escalation();
    test_after_and_forgive();
    test_forgive_defaults();
    test_looks_never_lock();
    test_deny();
    test_block();
    test_valid();
    test_validate();
    random_sequences();
    return check_summary("unit_lockout");
}
