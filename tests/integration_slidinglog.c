/* integration_slidinglog.c -- RL.SLIDINGLOG against a real redis-server with the module loaded: the log
 * as a plain sorted set (scores = attempt times in Unix µs, members "<t_us>-<seq>"), blocked attempts
 * logged, the limit + 1 memory bound, MINGAP, peeks, exact retry_after, users' own ZADD, DRYRUN, key
 * expiry, replication and AOF of the verbatim sorted-set writes, bad input, key metadata.
 *
 * Every expected reply below is computed by hand from the rules (docs/commands.md, RL.SLIDINGLOG): with
 * L = limit, n = cost, W = window: entries with score <= t - W no longer count, c = the rest; blocked iff
 * n > L (retry -1), c + n > L, or MINGAP G given and t - newest < G; the attempt logs n entries at t
 * (at most L + 1 kept); remaining = max(0, L - entries after the call); retry = first time the same
 * attempt passes both rules once it is logged; reset = newest + W - t. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rl_checks.h"
#include "server.h"

static server *srv;
static redisContext *c;

#define T0 1700000000000LL /* a frozen test-clock instant (ms) */
#define HOUR_MS 3600000LL

static void clock_set(long long ms) { CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", ms)); }
static void clock_advance(long long ms) { CHECK(cmd_status_is(c, "OK", "RL.CLOCK ADVANCE %lld", ms)); }
static void del(const char *key) { freeReplyObject(cmd(c, "DEL %s", key)); }
static long long exists(const char *key) { return cmd_int(c, "EXISTS %s", key); }
static long long zcard(redisContext *x, const char *key) { return cmd_int(x, "ZCARD %s", key); }

/* Every sliding-log reply has wait_ms 0. */
#define CHECK_SLOG(r, a, lim, rem, retry, reset) CHECK_RL(r, a, lim, rem, retry, reset, 0)

/* --- the log as text ------------------------------------------------------------------------------ */

/* ZRANGE key 0 -1 WITHSCORES as "member=score member=score ..." (malloc'd; "" for no key). */
static char *log_render(redisContext *x, const char *key) {
    redisReply *r = cmd(x, "ZRANGE %s 0 -1 WITHSCORES", key);
    size_t cap = 64, len = 0;
    char *out = malloc(cap);
    out[0] = '\0';
    if (r->type != REDIS_REPLY_ARRAY) {
        snprintf(out, cap, "(not an array: %s)", r->str ? r->str : "?");
    } else {
        for (size_t i = 0; i + 1 < r->elements; i += 2) {
            size_t need = r->element[i]->len + r->element[i + 1]->len + 3;
            while (len + need >= cap) out = realloc(out, cap *= 2);
            len += (size_t)sprintf(out + len, "%s%s=%s", len ? " " : "", r->element[i]->str, r->element[i + 1]->str);
        }
    }
    freeReplyObject(r);
    return out;
}

/* Expand "off/seq off/seq ..." (ms offsets from base_ms) into the rendering of the log the module writes:
 * member "<t_us>-<seq>" with score t_us. Entries must be listed in ZRANGE order (score, then member). */
static char *log_expect(long long base_ms, const char *spec) {
    size_t cap = strlen(spec) * 8 + 64, len = 0;
    char *out = malloc(cap);
    out[0] = '\0';
    const char *p = spec;
    long long off, seq;
    int used;
    while (sscanf(p, " %lld/%lld%n", &off, &seq, &used) == 2) {
        long long us = (base_ms + off) * 1000;
        len += (size_t)sprintf(out + len, "%s%lld-%lld=%lld", len ? " " : "", us, seq, us);
        p += used;
    }
    return out;
}

static void check_log(const char *key, long long base_ms, const char *spec, const char *where) {
    char *got = log_render(c, key), *want = log_expect(base_ms, spec);
    if (!CHECK(strcmp(got, want) == 0)) fprintf(stderr, "     %s: log of %s\n     got  %s\n     want %s\n", where, key, got, want);
    if (spec[0] == '\0') CHECK_EQ(exists(key), 0);
    free(got);
    free(want);
}

/* --- 1. tables: calls at clock offsets, full replies, and the log after each call ------------------- */

typedef struct step {
    long long at_ms; /* offset from the table's base */
    const char *args;
    long long allowed, remaining, retry, reset;
    const char *log; /* the sorted set after the call ("off/seq ..."; "" = no key; NULL = not checked) */
} step;

static void run_steps(const char *key, long long base, long long limit, const step *steps, size_t n) {
    del(key);
    for (size_t i = 0; i < n; i++) {
        clock_set(base + steps[i].at_ms);
        rl_result r = rl(c, "RL.SLIDINGLOG %s %s", key, steps[i].args);
        long long failed = check_failed;
        CHECK_SLOG(r, steps[i].allowed, limit, steps[i].remaining, steps[i].retry, steps[i].reset);
        if (steps[i].log) {
            char where[128];
            snprintf(where, sizeof where, "step %zu (at %lld: %s)", i, steps[i].at_ms, steps[i].args);
            check_log(key, base, steps[i].log, where);
        }
        if (check_failed != failed)
            fprintf(stderr, "     ^ %s step %zu (at %lld: %s): got %lld %lld %lld %lld %lld\n", key, i, steps[i].at_ms,
                    steps[i].args, r.allowed, r.remaining, r.retry_after_ms, r.reset_after_ms, r.wait_ms);
    }
}

/* limit 3 per 1000 ms: the count rule, blocked attempts logged, peeks, cost above the limit, the
 * limit + 1 cap, same-µs members, DRYRUN, the clock going back. */
static void test_count_table(void) {
    static const step steps[] = {
        {0, "3 1000", 1, 2, -1, 1000, "0/0"},
        {100, "3 1000", 1, 1, -1, 1000, "0/0 100/0"},
        /* c = 2, 2 + 2 > 3: blocked, and logged (two members at the same µs). After it the log is
         * 200,200,100,0: cost 2 needs the 2nd newest (200) out: 1200. */
        {200, "3 1000 COST 2", 0, 0, 1000, 1000, "0/0 100/0 200/0 200/1"},
        /* A peek while 4 > 3 are in the window: blocked until the 4th newest (0) leaves at 1000. */
        {300, "3 1000 COST 0", 0, 0, 700, 900, "0/0 100/0 200/0 200/1"},
        {999, "3 1000 COST 0", 0, 0, 1, 201, "0/0 100/0 200/0 200/1"},
        /* 0 <= 1000 - 1000: out, trimmed. c = 3 is not > 3: the peek passes. */
        {1000, "3 1000 COST 0", 1, 0, -1, 200, "100/0 200/0 200/1"},
        /* Blocked, logged: 1000,200,200,100 -> the 3rd newest (200) must leave: 1200. */
        {1000, "3 1000", 0, 0, 200, 1000, "100/0 200/0 200/1 1000/0"},
        {1100, "3 1000", 0, 0, 100, 1000, "200/0 200/1 1000/0 1100/0"},
        {1200, "3 1000", 1, 0, -1, 1000, "1000/0 1100/0 1200/0"},
        /* Cost above the limit: blocked for good (retry -1), logs limit + 1 entries, which push out
         * everything older (including 1200/0: seqs continue after it). */
        {1200, "3 1000 COST 4", 0, 0, -1, 1000, "1200/1 1200/2 1200/3 1200/4"},
        {2199, "3 1000 COST 0", 0, 0, 1, 1, "1200/1 1200/2 1200/3 1200/4"},
        /* The window is empty: idle, and the key is gone. */
        {2200, "3 1000 COST 0", 1, 3, -1, 0, ""},
        {2200, "3 1000 COST 3", 1, 0, -1, 1000, "2200/0 2200/1 2200/2"},
        {2200, "3 1000 COST 0", 1, 0, -1, 1000, "2200/0 2200/1 2200/2"},
        /* DRYRUN answers as if it logged itself (2500,2200,2200,2200 -> 3rd newest 2200), writes nothing. */
        {2500, "3 1000 DRYRUN", 0, 0, 700, 1000, "2200/0 2200/1 2200/2"},
        /* COST 3 would log 2500 x3 (+ 2200): the newest (2500) must leave: 3500. */
        {2500, "3 1000 COST 3 DRYRUN", 0, 0, 1000, 1000, "2200/0 2200/1 2200/2"},
        {3200, "3 1000", 1, 2, -1, 1000, "3200/0"},
        {3200, "3 1000", 1, 1, -1, 1000, "3200/0 3200/1"},
        {3200, "3 1000", 1, 0, -1, 1000, "3200/0 3200/1 3200/2"},
        {3200, "3 1000", 0, 0, 1000, 1000, "3200/0 3200/1 3200/2 3200/3"},
        /* At the cap: the lowest-ranked entry goes, the new member gets a fresh seq. */
        {3200, "3 1000", 0, 0, 1000, 1000, "3200/1 3200/2 3200/3 3200/4"},
        /* Clock back by 200 ms: the log's clock does not run back, so the attempt is decided and logged
         * at 3200 (the newest entry), blocked; retry when the 3rd newest (3200) leaves: 4200. */
        {3000, "3 1000", 0, 0, 1200, 1200, "3200/2 3200/3 3200/4 3200/5"},
    };
    run_steps("sl:table", T0, 3, steps, sizeof steps / sizeof steps[0]);
}

/* MINGAP shorter than the window: limit 10 per 1000 ms, at least 300 ms apart. */
static void test_mingap_short_table(void) {
    static const step steps[] = {
        {0, "10 1000 MINGAP 300", 1, 9, -1, 1000, "0/0"},
        /* 100 ms after the newest: blocked, and logged, so the gap now runs from 100. */
        {100, "10 1000 MINGAP 300", 0, 8, 300, 1000, "0/0 100/0"},
        {399, "10 1000 MINGAP 300 DRYRUN", 0, 7, 300, 1000, "0/0 100/0"},
        {400, "10 1000 MINGAP 300 DRYRUN", 1, 7, -1, 1000, "0/0 100/0"},
        {400, "10 1000 MINGAP 300", 1, 7, -1, 1000, "0/0 100/0 400/0"},
        {700, "10 1000 MINGAP 300 COST 0", 1, 7, -1, 700, "0/0 100/0 400/0"},
        {700, "10 1000 MINGAP 300 COST 2", 1, 5, -1, 1000, "0/0 100/0 400/0 700/0 700/1"},
        /* A peek within the gap is blocked too. */
        {700, "10 1000 MINGAP 300 COST 0", 0, 5, 300, 1000, "0/0 100/0 400/0 700/0 700/1"},
        /* 0 left; c = 4, 4 + 6 = 10 fits, gap 300 over. */
        {1000, "10 1000 MINGAP 300 COST 6", 1, 0, -1, 1000,
         "100/0 400/0 700/0 700/1 1000/0 1000/1 1000/2 1000/3 1000/4 1000/5"},
        {1300, "10 1000 MINGAP 300 COST 0", 1, 1, -1, 700,
         "400/0 700/0 700/1 1000/0 1000/1 1000/2 1000/3 1000/4 1000/5"},
        /* c = 9, 9 + 2 > 10: log 1300,1300,1000x6,700,700,400 (11 = limit + 1); cost 2 needs the 9th
         * newest (700) out at 1700; the gap would be over at 1600. */
        {1300, "10 1000 MINGAP 300 COST 2", 0, 0, 400, 1000,
         "400/0 700/0 700/1 1000/0 1000/1 1000/2 1000/3 1000/4 1000/5 1300/0 1300/1"},
    };
    run_steps("sl:gap1", T0 + 100000, 10, steps, sizeof steps / sizeof steps[0]);
}

/* MINGAP longer than the window acts as the window: limit 10 per 500 ms, MINGAP 2000. */
static void test_mingap_long_table(void) {
    static const step steps[] = {
        {0, "10 500 MINGAP 2000", 1, 9, -1, 500, "0/0"},
        {499, "10 500 MINGAP 2000", 0, 8, 500, 500, "0/0 499/0"},
        /* 0 has left; 499 is 499 ms old: blocked; logged it would run the gap from 998 (to 1498). */
        {998, "10 500 MINGAP 2000 DRYRUN", 0, 8, 500, 500, "0/0 499/0"},
        /* 499 left the window at 999: no newest entry, no gap. */
        {999, "10 500 MINGAP 2000 DRYRUN", 1, 9, -1, 500, "0/0 499/0"},
        {999, "10 500 MINGAP 2000", 1, 9, -1, 500, "999/0"},
        {999, "10 500 MINGAP 2000 COST 0", 0, 9, 500, 500, "999/0"},
        {1499, "10 500 MINGAP 2000 COST 0", 1, 10, -1, 0, ""},
    };
    run_steps("sl:gap2", T0 + 200000, 10, steps, sizeof steps / sizeof steps[0]);
}

/* --- 2. a client that hammers stays blocked until it slows down ----------------------------------- */

static void test_hammering(void) {
    const long long base = T0 + 300000;
    del("sl:hammer");
    long long t = 0, bad = 0;
    for (int i = 0; i < 50; i++, t += 100) {
        clock_set(base + t);
        rl_result r = rl(c, "RL.SLIDINGLOG sl:hammer 3 1000");
        /* After 3 admitted, every attempt finds 4 in its window (it logged itself, 100 ms ago, ...);
         * logged, its 3rd newest entry is 200 ms old: retry 800. */
        long long want_allowed = i < 3, want_rem = i < 3 ? 2 - i : 0, want_retry = i < 3 ? -1 : 800;
        if (!r.ok || r.allowed != want_allowed || r.remaining != want_rem || r.retry_after_ms != want_retry ||
            r.reset_after_ms != 1000) {
            bad++;
            fprintf(stderr, "     hammer %d: got %lld %lld %lld %lld\n", i, r.allowed, r.remaining, r.retry_after_ms,
                    r.reset_after_ms);
        }
    }
    CHECK_EQ(bad, 0);
    CHECK_EQ(zcard(c, "sl:hammer"), 4);
    long long last = t - 100; /* 4900 */
    /* Honouring retry_after_ms lets it through: at last + 799 still blocked (4700 is in the window; had
     * it been logged, its 3rd newest would be 4800: retry 101), at last + 800 admitted. */
    clock_set(base + last + 799);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:hammer 3 1000 DRYRUN"), 0, 3, 0, 101, 1000);
    clock_set(base + last + 800);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:hammer 3 1000 DRYRUN"), 1, 3, 0, -1, 1000);
    /* Hammer on for 5 more seconds: still nothing. Then stop for a whole window: one goes through. */
    for (int i = 0; i < 50; i++) {
        clock_set(base + last + 100 * (i + 1));
        rl_result r = rl(c, "RL.SLIDINGLOG sl:hammer 3 1000");
        if (!r.ok || r.allowed != 0 || r.retry_after_ms != 800) {
            bad++;
            fprintf(stderr, "     hammer again %d: got %lld %lld %lld %lld\n", i, r.allowed, r.remaining,
                    r.retry_after_ms, r.reset_after_ms);
        }
    }
    CHECK_EQ(bad, 0);
    last += 5000;
    clock_set(base + last + 1000);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:hammer 3 1000"), 1, 3, 2, -1, 1000);
    check_log("sl:hammer", base, "10900/0", "after a pause");
}

/* --- 3. the limit + 1 bound ------------------------------------------------------------------------ */

static void test_memory_bound(void) {
    const long long base = T0 + 400000;
    del("sl:flood");
    clock_set(base);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:flood 5 1000000000 COST 5"), 1, 5, 0, -1, 1000000000);
    /* 10^5 blocked attempts of cost 1..7, 0, 1, ... (the first, cost 1, makes 6 > 5 in the window, so
     * the peeks that follow are blocked too), pipelined in batches of 1000, the clock one ms further each
     * batch: the set never exceeds limit + 1. */
    long long max_card = 0, bad = 0;
    for (int batch = 0; batch < 100; batch++) {
        for (int i = 0; i < 1000; i++)
            redisAppendCommand(c, "RL.SLIDINGLOG sl:flood 5 1000000000 COST %d", (batch * 1000 + i + 1) % 8);
        redisAppendCommand(c, "RL.CLOCK ADVANCE 1");
        for (int i = 0; i <= 1000; i++) {
            redisReply *r = next_reply(c);
            rl_result f = rl_of(r);
            if (i < 1000 && !(f.ok && f.allowed == 0 && f.remaining == 0)) bad++;
            freeReplyObject(r);
        }
        long long card = zcard(c, "sl:flood");
        if (card > max_card) max_card = card;
        if (batch % 10 == 9) CHECK(card <= 6);
    }
    CHECK_EQ(bad, 0);
    CHECK_EQ(max_card, 6);
    CHECK_EQ(zcard(c, "sl:flood"), 6);
    /* The newest six: all from the last batch's instant, members unique. */
    CHECK_EQ(cmd_int(c, "ZCOUNT sl:flood %lld %lld", (base + 99) * 1000, (base + 99) * 1000), 6);
    del("sl:flood");

    /* A cost above limit + 1 writes limit + 1 entries only. */
    del("sl:big");
    clock_set(base + 1000);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:big 5 1000 COST 100000"), 0, 5, 0, -1, 1000);
    check_log("sl:big", base + 1000, "0/0 0/1 0/2 0/3 0/4 0/5", "cost above limit + 1");
    del("sl:big");
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:big 1000 60000 COST 100000"), 0, 1000, 0, -1, 60000);
    CHECK_EQ(zcard(c, "sl:big"), 1001);
    /* The largest limit: 10^5 admitted in one call, then one more blocked: 10^5 + 1 entries. */
    del("sl:big");
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:big 100000 60000 COST 100000"), 1, 100000, 0, -1, 60000);
    CHECK_EQ(zcard(c, "sl:big"), 100000);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:big 100000 60000 COST 100000"), 0, 100000, 0, 60000, 60000);
    CHECK_EQ(zcard(c, "sl:big"), 100001);
    del("sl:big");
}

/* --- 4. retry_after_ms and reset_after_ms are exact ------------------------------------------------ */

static void test_exact_retry(void) {
    static const struct {
        const char *params; /* limit window [MINGAP g] */
        long long limit, fill1, fill2_at, fill2, at, cost;
        long long retry, reset; /* hand-computed */
    } cases[] = {
        /* fill 3 at 0; at 250: log 250,0,0,0 -> 3rd newest (0) out at 1000 */
        {"3 1000", 3, 3, 0, 0, 250, 1, 750, 1000},
        /* fill 2 at 0; count fits at 10, the gap does not: 10 + 300 */
        {"5 1000 MINGAP 300", 5, 2, 0, 0, 10, 1, 300, 1000},
        /* both rules fail: count wins (0 leaves at 1000, the gap is over at 150) */
        {"5 1000 MINGAP 100", 5, 5, 0, 0, 50, 1, 950, 1000},
        /* MINGAP > window: the newest (100) leaves at 600 */
        {"10 500 MINGAP 2000", 10, 1, 0, 0, 100, 1, 500, 500},
        {"1 1", 1, 1, 0, 0, 0, 1, 1, 1},
        /* log 100,100,0,0,0 (cost 2 needs the 3rd newest out): 333 */
        {"4 333", 4, 3, 0, 0, 100, 2, 233, 333},
        /* 2 at 0, 2 at 400, cost 2 at 600: log 600,600,400,400,0 -> 3rd newest (400) out at 1400 */
        {"4 1000", 4, 2, 400, 2, 600, 2, 800, 1000},
        {"7 86400000 MINGAP 3600000", 7, 7, 0, 0, 1000, 1, 86399000, 86400000},
        /* count fits, gap 998 < 999: newest 998 + 999 = 1997 */
        {"2 1000 MINGAP 999", 2, 1, 0, 0, 998, 1, 999, 1000},
        /* peek while 4 > 3 (the fill, cost 4 > limit, was blocked and logged 4): 0 leaves at 1000 */
        {"3 1000", 3, 4, 0, 0, 100, 0, 900, 900},
        /* peek within the gap: 0 + 250 */
        {"3 1000 MINGAP 250", 3, 1, 0, 0, 100, 0, 150, 900},
        /* the largest limit and window */
        {"100000 1000000000000", 100000, 100000, 0, 0, 5, 1, 999999999995LL, 1000000000000LL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *p = cases[i].params;
        long long base = T0 + 500000 + (long long)i * 7, failed = check_failed;
        del("sl:probe");
        clock_set(base);
        CHECK(rl(c, "RL.SLIDINGLOG sl:probe %s COST %lld", p, cases[i].fill1).ok);
        if (cases[i].fill2) {
            clock_set(base + cases[i].fill2_at);
            CHECK(rl(c, "RL.SLIDINGLOG sl:probe %s COST %lld", p, cases[i].fill2).ok);
        }
        long long at = base + cases[i].at;
        clock_set(at);
        rl_result r = rl(c, "RL.SLIDINGLOG sl:probe %s COST %lld", p, cases[i].cost);
        CHECK(r.ok && r.allowed == 0);
        CHECK_EQ(r.retry_after_ms, cases[i].retry);
        CHECK_EQ(r.reset_after_ms, cases[i].reset);
        long long retry = r.retry_after_ms, reset = r.reset_after_ms;
        /* One ms earlier the same attempt is still blocked; at retry_after_ms it is admitted. */
        clock_set(at + retry - 1);
        CHECK_EQ(rl(c, "RL.SLIDINGLOG sl:probe %s COST %lld DRYRUN", p, cases[i].cost).allowed, 0);
        clock_set(at + retry);
        CHECK_EQ(rl(c, "RL.SLIDINGLOG sl:probe %s COST %lld DRYRUN", p, cases[i].cost).allowed, 1);
        /* One ms before reset_after_ms the log still holds something; at it, it is empty. */
        clock_set(at + reset - 1);
        CHECK_EQ(rl(c, "RL.SLIDINGLOG sl:probe %s COST 0 DRYRUN", p).reset_after_ms, 1);
        clock_set(at + reset);
        CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:probe %s COST 0 DRYRUN", p), 1, cases[i].limit, cases[i].limit, -1, 0);
        if (check_failed != failed) fprintf(stderr, "     ^ exact retry case %zu (%s)\n", i, p);
    }
    del("sl:probe");
}

/* --- 5. users' own members, DRYRUN, TTL, deletion -------------------------------------------------- */

static void test_user_members(void) {
    const long long t = T0 + 600000, us = t * 1000;
    del("sl:user");
    /* old and edge (score == t - W) are out of the window at t; a and b are in. */
    freeReplyObject(cmd(c, "ZADD sl:user %lld old %lld edge %lld a %lld b", us - 2000000, us - 1000000, us - 999999,
                        us - 500000));
    clock_set(t);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:user 3 1000"), 1, 3, 0, -1, 1000);
    char want[256];
    snprintf(want, sizeof want, "a=%lld b=%lld %lld-0=%lld", us - 999999, us - 500000, us, us);
    char *got = log_render(c, "sl:user");
    CHECK_STR(got, want);
    free(got);
    /* Logged, a fourth would need b (the 3rd newest) out: t + 500. */
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:user 3 1000 DRYRUN"), 0, 3, 0, 500, 1000);
    /* a leaves at us + 1 µs: one ms later there is room again. */
    clock_set(t + 1);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:user 3 1000 DRYRUN"), 1, 3, 0, -1, 1000);

    /* More than limit + 1 of the user's entries in the window: blocked, logged, and trimmed to the newest
     * limit + 1; with the attempt logged, the 3rd newest is m7 (t - 820 ms): retry 180. */
    del("sl:many");
    for (int j = 0; j < 10; j++) freeReplyObject(cmd(c, "ZADD sl:many %lld m%d", us - 900000 + j * 10000, j));
    clock_set(t);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:many 3 1000"), 0, 3, 0, 180, 1000);
    snprintf(want, sizeof want, "m7=%lld m8=%lld m9=%lld %lld-0=%lld", us - 830000, us - 820000, us - 810000, us, us);
    got = log_render(c, "sl:many");
    CHECK_STR(got, want);
    free(got);
    del("sl:many");

    /* A score with a fraction of a µs just inside the window (t - W + 0.5 > t - W) counts by the rule
     * (the module rounds scores up, which is exact since decisions happen at whole µs). */
    del("sl:frac");
    freeReplyObject(cmd(c, "ZADD sl:frac %lld.5 x", us - 1000000));
    clock_set(t);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:frac 1 1000 DRYRUN"), 0, 1, 0, 1000, 1000);
    del("sl:frac");

    /* A user's member whose name is what the module would pick for its own entry must not be lost:
     * ZADD key (t - 100 ms) "<t_us>-0", then one attempt at t: two entries are in the window (the module
     * skips member names the set already holds at any score). */
    del("sl:clash");
    freeReplyObject(cmd(c, "ZADD sl:clash %lld %lld-0", us - 100000, us));
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:clash 3 1000"), 1, 3, 1, -1, 1000);
    CHECK_EQ(zcard(c, "sl:clash"), 2);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:clash 3 1000 COST 0"), 1, 3, 1, -1, 1000);
    del("sl:clash");
}

static int same_bytes(const char *a, size_t la, const char *b, size_t lb) {
    return (!a && !b) || (a && b && la == lb && memcmp(a, b, la) == 0);
}

static void test_dryrun_writes_nothing(void) {
    const long long t = T0 + 700000;
    del("sl:dry");
    clock_set(t);
    /* On a missing key no DRYRUN creates one, whatever it answers. */
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:dry 5 1000 COST 3 DRYRUN"), 1, 5, 2, -1, 1000);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:dry 5 1000 COST 100000 DRYRUN"), 0, 5, 0, -1, 1000);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:dry 5 1000 MINGAP 10 DRYRUN"), 1, 5, 4, -1, 1000);
    CHECK_EQ(exists("sl:dry"), 0);

    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:dry 5 1000 COST 3"), 1, 5, 2, -1, 1000);
    clock_set(t + 600);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:dry 5 1000"), 1, 5, 1, -1, 1000);
    size_t l0;
    char *before = dump_key(c, "sl:dry", &l0);
    long long expire0 = cmd_int(c, "PEXPIRETIME sl:dry");
    CHECK(before != NULL && expire0 > 0);
    /* At t + 1200 a real call would trim the three entries at t, add, and move the expiry. */
    static const struct {
        long long at;
        const char *args;
        long long allowed, remaining, retry, reset;
    } dry[] = {
        {1200, "5 1000 COST 2 DRYRUN", 1, 2, -1, 1000},
        {1200, "5 1000 COST 0 DRYRUN", 1, 4, -1, 400},
        {1200, "5 1000 COST 6 DRYRUN", 0, 0, -1, 1000},
        {1200, "5 1000 MINGAP 700 DRYRUN", 0, 3, 700, 1000},
        {700, "5 1000 COST 2 DRYRUN", 0, 0, 300, 1000}, /* 4 + 2 > 5; logged: 700,700,600,0,0,0 -> 4th (0) */
        {5000, "5 1000 COST 0 DRYRUN", 1, 5, -1, 0},   /* would delete the key */
        {5000, "5 1000 dryrun cost 5 mingap 1", 1, 0, -1, 1000}, /* options in any case and order */
    };
    for (size_t i = 0; i < sizeof dry / sizeof dry[0]; i++) {
        clock_set(t + dry[i].at);
        long long failed = check_failed;
        CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:dry %s", dry[i].args), dry[i].allowed, 5, dry[i].remaining, dry[i].retry,
                 dry[i].reset);
        size_t l1;
        char *after = dump_key(c, "sl:dry", &l1);
        CHECK(same_bytes(before, l0, after, l1));
        CHECK_EQ(cmd_int(c, "PEXPIRETIME sl:dry"), expire0);
        free(after);
        if (check_failed != failed) fprintf(stderr, "     ^ dryrun case %zu (%s)\n", i, dry[i].args);
    }
    check_log("sl:dry", t, "0/0 0/1 0/2 600/0", "after the DRYRUNs");
    free(before);
    del("sl:dry");
}

static void test_ttl_and_deletion(void) {
    const long long t = T0 + 800000;
    del("sl:idle");
    clock_set(t);
    /* Frozen clock: the expiry is the real reset plus an hour. */
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:idle 5 1000 COST 2"), 1, 5, 3, -1, 1000);
    long long pttl = cmd_int(c, "PTTL sl:idle");
    CHECK(pttl > HOUR_MS + 1000 - 100 && pttl <= HOUR_MS + 1000);
    /* Once the window has passed: a DRYRUN reports idle but keeps the key; a peek deletes it. */
    clock_advance(1000);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:idle 5 1000 COST 0 DRYRUN"), 1, 5, 5, -1, 0);
    CHECK_EQ(exists("sl:idle"), 1);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:idle 5 1000 COST 0"), 1, 5, 5, -1, 0);
    CHECK_EQ(exists("sl:idle"), 0);
    /* A peek on a missing key creates nothing. */
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:idle 5 1000 COST 0"), 1, 5, 5, -1, 0);
    CHECK_EQ(exists("sl:idle"), 0);

    /* Real clock: reset_after_ms == PTTL within 1 ms, both read at the same instant (MULTI). */
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK REAL"));
    static const char *calls[] = {"5 7000 COST 2", "5 7000 COST 0", "5 7000 MINGAP 100", "5 7000 COST 9",
                                  "5 7000 COST 0"};
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        if (i) sleep_ms(13);
        freeReplyObject(cmd(c, "MULTI"));
        freeReplyObject(cmdline(c, "RL.SLIDINGLOG sl:ttl %s", calls[i]));
        freeReplyObject(cmd(c, "PTTL sl:ttl"));
        redisReply *x = cmd(c, "EXEC");
        rl_result f = reply_is_array(x, 2) ? rl_of(x->element[0]) : rl_of(NULL);
        if (CHECK(f.ok)) {
            long long reset = f.reset_after_ms, ttl = x->element[1]->integer;
            if (i == 0 || i == 3) CHECK_EQ(reset, 7000); /* the newest entry is now */
            CHECK(reset > 6900 && reset <= 7000);
            if (!CHECK(ttl >= reset - 1 && ttl <= reset + 1))
                fprintf(stderr, "     call %zu: reset %lld, PTTL %lld\n", i, reset, ttl);
        }
        freeReplyObject(x);
    }
    del("sl:ttl");
    /* On the real clock the key expires when the log empties. */
    CHECK_EQ(rl(c, "RL.SLIDINGLOG sl:short 5 30 COST 2").reset_after_ms, 30);
    CHECK_EQ(exists("sl:short"), 1);
    sleep_ms(100);
    CHECK_EQ(exists("sl:short"), 0);
    clock_set(t);
}

/* --- 6. replication and AOF ------------------------------------------------------------------------ */

/* A deterministic mix of calls over nkeys keys: admitted, blocked, peeks, costs above the limit, MINGAP,
 * DRYRUN, a user's ZADD, and the clock moving (also back a little). */
static void mixed_calls(redisContext *x, const char *prefix, int nkeys, int ncalls) {
    static const char *opts[] = {"", "COST 0", "COST 3", "MINGAP 40", "DRYRUN", "COST 9", "MINGAP 700 COST 2",
                                 "COST 2 DRYRUN", ""};
    static const long long windows[] = {100, 1000, 5000};
    long long now = T0 + 900000;
    freeReplyObject(cmd(x, "RL.CLOCK SET %lld", now));
    for (int i = 0; i < ncalls; i++) {
        if (i % 7 == 0) {
            now += (i * 13) % 97;
            if (i % 63 == 0) now -= 30; /* the clock steps back */
            freeReplyObject(cmd(x, "RL.CLOCK SET %lld", now));
        }
        if (i % 101 == 50)
            freeReplyObject(cmd(x, "ZADD %s:%d %lld user:%d", prefix, i % nkeys, now * 1000 - 3000 - i, i));
        redisReply *r = cmdline(x, "RL.SLIDINGLOG %s:%d %d %lld %s", prefix, i % nkeys, 1 + (i / nkeys) % 6,
                                windows[(i / 3) % 3], opts[(i * 5) % 9]);
        if (r->type != REDIS_REPLY_ARRAY) fprintf(stderr, "     mixed call %d: %s\n", i, r->str ? r->str : "?");
        freeReplyObject(r);
    }
    /* One key goes idle: the module deletes it. */
    freeReplyObject(cmd(x, "RL.SLIDINGLOG %s:idle 3 100 COST 2", prefix));
    freeReplyObject(cmd(x, "RL.CLOCK SET %lld", now + 100));
    freeReplyObject(cmd(x, "RL.SLIDINGLOG %s:idle 3 100 COST 0", prefix));
}

/* The same sorted set member for member, the same absolute expiry. */
static void check_same_key(redisContext *a, redisContext *b, const char *key, const char *what) {
    char *la = log_render(a, key), *lb = log_render(b, key);
    if (!CHECK(strcmp(la, lb) == 0)) fprintf(stderr, "     %s %s:\n     %s\n     %s\n", what, key, la, lb);
    long long pa = cmd_int(a, "PEXPIRETIME %s", key), pb = cmd_int(b, "PEXPIRETIME %s", key);
    if (!CHECK(pa == pb && pa != LLONG_MIN && (pa == -2) == (la[0] == '\0')))
        fprintf(stderr, "     %s %s: PEXPIRETIME %lld vs %lld\n", what, key, pa, pb);
    free(la);
    free(lb);
}

static void test_replication(void) {
    /* A log made before the replica exists reaches it by the full sync. */
    clock_set(T0 + 800000);
    CHECK_EQ(rl(c, "RL.SLIDINGLOG rep:pre 5 10000 COST 3").allowed, 1);
    server *rep = replica_start(srv);
    redisContext *rc = server_connect(rep);
    CHECK_EQ(zcard(rc, "rep:pre"), 3);
    check_same_key(c, rc, "rep:pre", "full sync");

    mixed_calls(c, "rep", 12, 900); /* primary: frozen clock; the replica's stays real */
    CHECK_EQ(cmd_int(c, "WAIT 1 5000"), 1);
    int nonempty = 0;
    for (int k = 0; k < 12; k++) {
        char key[32];
        snprintf(key, sizeof key, "rep:%d", k);
        nonempty += exists(key) == 1;
        check_same_key(c, rc, key, "replica");
    }
    if (!CHECK(nonempty >= 6)) fprintf(stderr, "     only %d keys left\n", nonempty);
    CHECK_EQ(exists("rep:idle"), 0);
    check_same_key(c, rc, "rep:idle", "replica");
    /* The replica refuses the command (it writes). */
    rl_result w = rl(rc, "RL.SLIDINGLOG rep:0 3 1000");
    CHECK(!w.ok && strncmp(w.error, "READONLY", 8) == 0);
    redisFree(rc);
    server_stop(rep);
    for (int k = 0; k < 12; k++) freeReplyObject(cmd(c, "DEL rep:%d", k));
    del("rep:pre");
}

static void test_aof(void) {
    const char *args[] = {"--appendonly", "yes", "--appendfsync", "always", NULL};
    server *a = server_start(args);
    redisContext *ac = server_connect(a);
    enum { NK = 8 };
    mixed_calls(ac, "aof", NK, 600);
    char *before[NK + 1];
    long long expire[NK + 1];
    char key[32];
    for (int k = 0; k <= NK; k++) {
        if (k < NK) snprintf(key, sizeof key, "aof:%d", k); else snprintf(key, sizeof key, "aof:idle");
        before[k] = log_render(ac, key);
        expire[k] = cmd_int(ac, "PEXPIRETIME %s", key);
    }
    CHECK_STR(before[NK], "");
    int nonempty = 0;
    for (int k = 0; k < NK; k++) nonempty += before[k][0] != '\0';
    if (!CHECK(nonempty >= 4)) fprintf(stderr, "     only %d keys left\n", nonempty);
    for (int round = 0; round < 2; round++) {
        if (round == 1) {
            freeReplyObject(cmd(ac, "BGREWRITEAOF"));
            CHECK(aof_rewrite_wait(ac));
        }
        redisFree(ac);
        server_kill9(a);
        server_restart(a);
        ac = server_connect(a);
        for (int k = 0; k <= NK; k++) {
            if (k < NK) snprintf(key, sizeof key, "aof:%d", k); else snprintf(key, sizeof key, "aof:idle");
            char *after = log_render(ac, key);
            if (!CHECK(strcmp(after, before[k]) == 0))
                fprintf(stderr, "     AOF round %d %s:\n     %s\n     %s\n", round, key, before[k], after);
            CHECK_EQ(cmd_int(ac, "PEXPIRETIME %s", key), expire[k]);
            free(after);
        }
    }
    for (int k = 0; k <= NK; k++) free(before[k]);
    redisFree(ac);
    server_stop(a);
}

/* --- 7. bad input, WRONGTYPE ----------------------------------------------------------------------- */

static void test_bad_input(void) {
    static const struct {
        const char *args; /* after "RL.SLIDINGLOG sl:bad" */
        const char *error;
    } cases[] = {
        {"", "ERR wrong number of arguments for 'rl.slidinglog' command"},
        {"3", "ERR wrong number of arguments for 'rl.slidinglog' command"},
        {"3 1000 DRYRUN DRYRUN DRYRUN DRYRUN DRYRUN DRYRUN DRYRUN DRYRUN DRYRUN DRYRUN DRYRUN DRYRUN DRYRUN DRYRUN "
         "DRYRUN",
         "ERR wrong number of arguments for 'rl.slidinglog' command"},
        {"x 1000", "ERR limit: must be an integer between 1 and 100000"},
        {"0 1000", "ERR limit: must be an integer between 1 and 100000"},
        {"100001 1000", "ERR limit: must be an integer between 1 and 100000"},
        {"-1 1000", "ERR limit: must be an integer between 1 and 100000"},
        {"1.5 1000", "ERR limit: must be an integer between 1 and 100000"},
        {"03 1000", "ERR limit: must be an integer between 1 and 100000"},
        {"99999999999999999999 1000", "ERR limit: must be an integer between 1 and 100000"},
        {"3 0", "ERR window_ms: must be an integer between 1 and 1000000000000"},
        {"3 abc", "ERR window_ms: must be an integer between 1 and 1000000000000"},
        {"3 1000000000001", "ERR window_ms: must be an integer between 1 and 1000000000000"},
        {"3 1000 COST 100001", "ERR COST: must be an integer between 0 and 100000"},
        {"3 1000 COST -1", "ERR COST: must be an integer between 0 and 100000"},
        {"3 1000 COST 1e3", "ERR COST: must be an integer between 0 and 100000"},
        {"3 1000 COST", "ERR COST: needs a value"},
        {"3 1000 MINGAP 0", "ERR MINGAP: must be an integer between 1 and 1000000000000"},
        {"3 1000 MINGAP 1000000000001", "ERR MINGAP: must be an integer between 1 and 1000000000000"},
        {"3 1000 MINGAP COST 1", "ERR MINGAP: must be an integer between 1 and 1000000000000"},
        {"3 1000 MINGAP", "ERR MINGAP: needs a value"},
        {"3 1000 COST 1 MINGAP", "ERR MINGAP: needs a value"},
        {"3 1000 MINGAP 10 mingap 10", "ERR MINGAP: given more than once"},
        {"3 1000 COST 1 COST 1", "ERR COST: given more than once"},
        {"3 1000 DRYRUN dryrun", "ERR DRYRUN: given more than once"},
        {"3 1000 FOO", "ERR 'FOO': not an option of rl.slidinglog"},
        {"3 1000 FIXED", "ERR 'FIXED': not an option of rl.slidinglog"},
        {"3 1000 INTERVAL", "ERR 'INTERVAL': not an option of rl.slidinglog"},
        {"3 1000 1", "ERR '1': not an option of rl.slidinglog"},
    };
    clock_set(T0 + 1000000);
    del("sl:bad");
    rl(c, "RL.SLIDINGLOG sl:bad 3 1000 COST 2");
    clock_advance(5);
    size_t l0;
    char *before = dump_key(c, "sl:bad", &l0);
    long long expire0 = cmd_int(c, "PEXPIRETIME sl:bad");
    CHECK(before != NULL && expire0 > 0);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char line[256];
        snprintf(line, sizeof line, "RL.SLIDINGLOG sl:bad %s", cases[i].args);
        redisReply *r = cmdline(c, "%s", line);
        int ok = r->type == REDIS_REPLY_ERROR && strcmp(r->str, cases[i].error) == 0;
        if (!CHECK(ok)) fprintf(stderr, "     %s\n     got \"%s\"\n", line, r->str ? r->str : "(not an error)");
        freeReplyObject(r);
        size_t l1;
        char *after = dump_key(c, "sl:bad", &l1);
        CHECK(same_bytes(before, l0, after, l1));
        CHECK_EQ(cmd_int(c, "PEXPIRETIME sl:bad"), expire0);
        free(after);
    }
    free(before);
    /* Bad input on a missing key creates nothing. */
    del("sl:bad");
    CHECK(cmd_status_is(c, "ERR COST: must be an integer between 0 and 100000", "RL.SLIDINGLOG sl:bad 3 1000 COST 100001"));
    CHECK_EQ(exists("sl:bad"), 0);

    /* A string key, an RL.TOKEN key, a list: WRONGTYPE (DRYRUN too), unchanged. */
    static const char *wrong = "WRONGTYPE Operation against a key holding the wrong kind of value";
    CHECK(cmd_status_is(c, "OK", "SET sl:str hello"));
    CHECK(cmd_status_is(c, wrong, "RL.SLIDINGLOG sl:str 3 1000"));
    CHECK(cmd_status_is(c, wrong, "RL.SLIDINGLOG sl:str 3 1000 COST 0 DRYRUN"));
    redisReply *s = cmd(c, "GET sl:str");
    CHECK(s->type == REDIS_REPLY_STRING && strcmp(s->str, "hello") == 0);
    freeReplyObject(s);
    CHECK_EQ(cmd_int(c, "PTTL sl:str"), -1);

    del("sl:tok");
    CHECK(rl(c, "RL.TOKEN sl:tok 10 1 1000 COST 3").ok);
    size_t lt;
    char *tok = dump_key(c, "sl:tok", &lt);
    long long tok_expire = cmd_int(c, "PEXPIRETIME sl:tok");
    CHECK(cmd_status_is(c, wrong, "RL.SLIDINGLOG sl:tok 3 1000"));
    CHECK(cmd_status_is(c, wrong, "RL.SLIDINGLOG sl:tok 3 1000 MINGAP 5 COST 2"));
    size_t lt2;
    char *tok2 = dump_key(c, "sl:tok", &lt2);
    CHECK(tok && same_bytes(tok, lt, tok2, lt2));
    CHECK_EQ(cmd_int(c, "PEXPIRETIME sl:tok"), tok_expire);
    free(tok);
    free(tok2);

    del("sl:list");
    CHECK_EQ(cmd_int(c, "RPUSH sl:list a b"), 2);
    CHECK(cmd_status_is(c, wrong, "RL.SLIDINGLOG sl:list 3 1000"));
    CHECK_EQ(cmd_int(c, "LLEN sl:list"), 2);

    /* And the other way: a sliding log is no token bucket. */
    del("sl:log");
    CHECK(rl(c, "RL.SLIDINGLOG sl:log 3 1000").ok);
    CHECK(cmd_status_is(c, wrong, "RL.TOKEN sl:log 10 1 1000"));
    CHECK_EQ(zcard(c, "sl:log"), 1);
    freeReplyObject(cmd(c, "DEL sl:str sl:tok sl:list sl:log"));
}

/* --- 8. key metadata ------------------------------------------------------------------------------- */

static void test_command_metadata(void) {
    redisReply *r = cmd(c, "COMMAND GETKEYS RL.SLIDINGLOG k 1 1");
    CHECK(r->type == REDIS_REPLY_ARRAY && r->elements == 1 && r->element[0]->type == REDIS_REPLY_STRING &&
          strcmp(r->element[0]->str, "k") == 0);
    freeReplyObject(r);
    r = cmd(c, "COMMAND GETKEYS RL.SLIDINGLOG other:key 5 1000 MINGAP 10 COST 2 DRYRUN");
    CHECK(r->type == REDIS_REPLY_ARRAY && r->elements == 1 && strcmp(r->element[0]->str, "other:key") == 0);
    freeReplyObject(r);
    CHECK(command_info_is(c, "RL.SLIDINGLOG", -4, "write denyoom"));
}

int main(void) {
    srv = server_start(NULL);
    c = server_connect(srv);
    test_count_table();
    test_mingap_short_table();
    test_mingap_long_table();
    test_hammering();
    test_memory_bound();
    test_exact_retry();
    test_user_members();
    test_dryrun_writes_nothing();
    test_ttl_and_deletion();
    test_bad_input();
    test_command_metadata();
    test_replication();
    test_aof();
    redisFree(c);
    server_stop(srv);
    return check_summary("integration_slidinglog");
}
