/* integration_slidinglog.c -- RL.SLIDINGLOG against a real redis-server with the module loaded: the log
 * as a plain sorted set (scores = attempt times in Unix µs, one member "<t_us>-<seq>:<weight>:<x>:<floor>"
 * per attempt), blocked attempts logged, the limit + 1 memory bound, MINGAP, peeks, exact retry_after,
 * users' own ZADD (also in the future, or at +inf), logs of earlier versions (one member "<t_us>-<seq>"
 * per unit), DRYRUN, key expiry, replication and AOF of the verbatim sorted-set writes, bad input, key
 * metadata, generated traces against a reference model of one entry per unit, and REFUND (exact replies,
 * the members after, others' members and members above now, DRYRUN, WATCH and keyspace events, errors,
 * replicas equal by DUMP).
 *
 * Every expected reply in the tables is computed by hand from the rules (docs/commands.md, RL.SLIDINGLOG):
 * with L = limit, n = cost, W = window, t = now: a score above t counts as t; units with score <= t - W no
 * longer count, c = the rest; blocked iff n > L (retry -1, nothing logged), c + n > L, or MINGAP G given
 * and t - newest < G; an attempt with n <= L logs n units at t (at most L + 1 kept); remaining =
 * max(0, L - units after the call); retry = first time the same attempt passes both rules once it is
 * logged; reset = newest + W - t. Logs are checked as units per instant ("200*2": one member of weight
 * 2 at 200 ms), and every check of a log also checks the module's running totals in the names. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "effect_checks.h"
#include "rl_checks.h"
#include "server.h"
#include "suite.h"

static server *srv;
static redisContext *c;

#define T0 1700000000000LL /* a frozen test-clock instant (ms) */
#define HOUR_MS 3600000LL

static void clock_set(long long ms) { CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", ms)); }
static void clock_advance(long long ms) { CHECK(cmd_status_is(c, "OK", "RL.CLOCK ADVANCE %lld", ms)); }
static void del(const char *key) { freeReplyObject(cmd(c, "DEL %s", key)); }
static long long exists(const char *key) { return cmd_int(c, "EXISTS %s", key); }
static long long zcard(redisContext *x, const char *key) { return cmd_int(x, "ZCARD %s", key); }

#define X_MOD 1000000000000LL /* the module's running totals wrap here (module/store_log.c) */

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

/* A member name in the module's format "<t_us>-<seq>:<weight>:<x>:<floor>"; 0 if it is not one. */
typedef struct own_name {
    long long t, seq, w, x, floor;
} own_name;

static int parse_own(const char *s, own_name *o) {
    int used = -1;
    if (sscanf(s, "%lld-%lld:%lld:%lld:%lld%n", &o->t, &o->seq, &o->w, &o->x, &o->floor, &used) != 5) return 0;
    return used == (int)strlen(s) && s[0] >= '0' && s[0] <= '9' && o->w >= 1;
}

static long long xmod(long long v) { return ((v % X_MOD) + X_MOD) % X_MOD; }

/* What a log holds, read with ZRANGE: its units, and whether the module's members keep their bookkeeping:
 * the time in the name is the score, one module member per score, x runs on by weight - 1 from member to
 * member, and the newest member's floor is the total just below the oldest. */
typedef struct log_facts {
    long long members, units;
    int bookkeeping_ok;
    char *text; /* "off*w" per module member (off = ms from base, "*w" when w > 1), "name@off" for others */
} log_facts;

static void offset_text(char *buf, size_t size, long long score_us, long long base_ms) {
    long long off = score_us - base_ms * 1000;
    if (off % 1000 == 0) snprintf(buf, size, "%lld", off / 1000);
    else snprintf(buf, size, "%lld.%06lld", off / 1000, (off % 1000 + 1000) % 1000);
}

static log_facts log_read(redisContext *x, const char *key, long long base_ms) {
    log_facts f = {0, 0, 1, NULL};
    redisReply *r = cmd(x, "ZRANGE %s 0 -1 WITHSCORES", key);
    size_t cap = 64, len = 0;
    f.text = malloc(cap);
    f.text[0] = '\0';
    long long last_score = LLONG_MIN, first_x = 0, first_w = 0, prev_x = 0, newest_floor = 0;
    int owns = 0;
    for (size_t i = 0; r->type == REDIS_REPLY_ARRAY && i + 1 < r->elements; i += 2) {
        const char *name = r->element[i]->str;
        double score = strtod(r->element[i + 1]->str, NULL);
        long long us = (long long)score;
        own_name o;
        char off[48], item[160];
        offset_text(off, sizeof off, us, base_ms);
        f.members++;
        if (parse_own(name, &o)) {
            f.units += o.w;
            if ((double)o.t != score || (owns && us == last_score)) f.bookkeeping_ok = 0;
            if (owns && o.x != xmod(prev_x + o.w - 1)) f.bookkeeping_ok = 0;
            if (!owns) first_x = o.x, first_w = o.w;
            owns++, prev_x = o.x, last_score = us, newest_floor = o.floor;
            if (o.w > 1) snprintf(item, sizeof item, "%s*%lld", off, o.w);
            else snprintf(item, sizeof item, "%s", off);
        } else {
            f.units++;
            snprintf(item, sizeof item, "%s@%s", name, off);
        }
        while (len + strlen(item) + 2 >= cap) f.text = realloc(f.text, cap *= 2);
        len += (size_t)sprintf(f.text + len, "%s%s", len ? " " : "", item);
    }
    if (owns && newest_floor != xmod(first_x - (first_w - 1))) f.bookkeeping_ok = 0;
    freeReplyObject(r);
    return f;
}

/* The log must read `spec` (log_read's text, "" for no key), and keep its bookkeeping. */
static void check_log(const char *key, long long base_ms, const char *spec, const char *where) {
    log_facts f = log_read(c, key, base_ms);
    if (!CHECK(strcmp(f.text, spec) == 0)) fprintf(stderr, "     %s: log of %s\n     got  %s\n     want %s\n", where, key, f.text, spec);
    if (!CHECK(f.bookkeeping_ok)) {
        char *raw = log_render(c, key);
        fprintf(stderr, "     %s: running totals of %s broken: %s\n", where, key, raw);
        free(raw);
    }
    if (spec[0] == '\0') CHECK_EQ(exists(key), 0);
    free(f.text);
}

/* --- 1. tables: calls at clock offsets, full replies, and the log after each call ------------------- */

typedef struct step {
    long long at_ms; /* offset from the table's base */
    const char *args;
    long long allowed, remaining, retry, reset;
    const char *log; /* the sorted set after the call ("off*w ..."; "" = no key; NULL = not checked) */
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
        {0, "3 1000", 1, 2, -1, 1000, "0"},
        {100, "3 1000", 1, 1, -1, 1000, "0 100"},
        /* c = 2, 2 + 2 > 3: blocked, and logged (one member of weight 2). After it the log is
         * 200,200,100,0: cost 2 needs the 2nd newest (200) out: 1200. */
        {200, "3 1000 COST 2", 0, 0, 1000, 1000, "0 100 200*2"},
        /* A peek while 4 > 3 are in the window: blocked until the 4th newest (0) leaves at 1000. */
        {300, "3 1000 COST 0", 0, 0, 700, 900, "0 100 200*2"},
        {999, "3 1000 COST 0", 0, 0, 1, 201, "0 100 200*2"},
        /* 0 <= 1000 - 1000: out, trimmed. c = 3 is not > 3: the peek passes. */
        {1000, "3 1000 COST 0", 1, 0, -1, 200, "100 200*2"},
        /* Blocked, logged: 1000,200,200,100 -> the 3rd newest (200) must leave: 1200. */
        {1000, "3 1000", 0, 0, 200, 1000, "100 200*2 1000"},
        {1100, "3 1000", 0, 0, 100, 1000, "200*2 1000 1100"},
        {1200, "3 1000", 1, 0, -1, 1000, "1000 1100 1200"},
        /* Cost above the limit: blocked for good (retry -1), and not logged: it locks nothing. */
        {1200, "3 1000 COST 4", 0, 0, -1, 1000, "1000 1100 1200"},
        /* 1000 and 1100 have left: one in the window, the peek passes. */
        {2199, "3 1000 COST 0", 1, 2, -1, 1, "1200"},
        /* The window is empty: idle, and the key is gone. */
        {2200, "3 1000 COST 0", 1, 3, -1, 0, ""},
        {2200, "3 1000 COST 3", 1, 0, -1, 1000, "2200*3"},
        {2200, "3 1000 COST 0", 1, 0, -1, 1000, "2200*3"},
        /* DRYRUN answers as if it logged itself (2500,2200,2200,2200 -> 3rd newest 2200), writes nothing. */
        {2500, "3 1000 DRYRUN", 0, 0, 700, 1000, "2200*3"},
        /* COST 3 would log 2500 x3 (+ 2200): the newest (2500) must leave: 3500. */
        {2500, "3 1000 COST 3 DRYRUN", 0, 0, 1000, 1000, "2200*3"},
        /* Calls at one instant add to one member. */
        {3200, "3 1000", 1, 2, -1, 1000, "3200"},
        {3200, "3 1000", 1, 1, -1, 1000, "3200*2"},
        {3200, "3 1000", 1, 0, -1, 1000, "3200*3"},
        {3200, "3 1000", 0, 0, 1000, 1000, "3200*4"},
        /* At the cap: limit + 1 units are kept. */
        {3200, "3 1000", 0, 0, 1000, 1000, "3200*4"},
        /* Clock back by 200 ms: the entries at 3200 count as logged now (and move to 3000); blocked and
         * logged; retry when the 3rd newest (3000) leaves: 4000 (a clock that held still at 3200 would
         * have said 4200). */
        {3000, "3 1000", 0, 0, 1000, 1000, "3000*4"},
    };
    run_steps("sl:table", T0, 3, steps, sizeof steps / sizeof steps[0]);
}

/* MINGAP shorter than the window: limit 10 per 1000 ms, at least 300 ms apart. */
static void test_mingap_short_table(void) {
    static const step steps[] = {
        {0, "10 1000 MINGAP 300", 1, 9, -1, 1000, "0"},
        /* 100 ms after the newest: blocked, and logged, so the gap now runs from 100. */
        {100, "10 1000 MINGAP 300", 0, 8, 300, 1000, "0 100"},
        {399, "10 1000 MINGAP 300 DRYRUN", 0, 7, 300, 1000, "0 100"},
        {400, "10 1000 MINGAP 300 DRYRUN", 1, 7, -1, 1000, "0 100"},
        {400, "10 1000 MINGAP 300", 1, 7, -1, 1000, "0 100 400"},
        {700, "10 1000 MINGAP 300 COST 0", 1, 7, -1, 700, "0 100 400"},
        {700, "10 1000 MINGAP 300 COST 2", 1, 5, -1, 1000, "0 100 400 700*2"},
        /* A peek within the gap is blocked too. */
        {700, "10 1000 MINGAP 300 COST 0", 0, 5, 300, 1000, "0 100 400 700*2"},
        /* 0 left; c = 4, 4 + 6 = 10 fits, gap 300 over. */
        {1000, "10 1000 MINGAP 300 COST 6", 1, 0, -1, 1000, "100 400 700*2 1000*6"},
        {1300, "10 1000 MINGAP 300 COST 0", 1, 1, -1, 700, "400 700*2 1000*6"},
        /* c = 9, 9 + 2 > 10: log 1300,1300,1000x6,700,700,400 (11 = limit + 1); cost 2 needs the 9th
         * newest (700) out at 1700; the gap would be over at 1600. */
        {1300, "10 1000 MINGAP 300 COST 2", 0, 0, 400, 1000, "400 700*2 1000*6 1300*2"},
    };
    run_steps("sl:gap1", T0 + 100000, 10, steps, sizeof steps / sizeof steps[0]);
}

/* MINGAP longer than the window acts as the window: limit 10 per 500 ms, MINGAP 2000. */
static void test_mingap_long_table(void) {
    static const step steps[] = {
        {0, "10 500 MINGAP 2000", 1, 9, -1, 500, "0"},
        {499, "10 500 MINGAP 2000", 0, 8, 500, 500, "0 499"},
        /* 0 has left; 499 is 499 ms old: blocked; logged it would run the gap from 998 (to 1498). */
        {998, "10 500 MINGAP 2000 DRYRUN", 0, 8, 500, 500, "0 499"},
        /* 499 left the window at 999: no newest entry, no gap. */
        {999, "10 500 MINGAP 2000 DRYRUN", 1, 9, -1, 500, "0 499"},
        {999, "10 500 MINGAP 2000", 1, 9, -1, 500, "999"},
        {999, "10 500 MINGAP 2000 COST 0", 0, 9, 500, 500, "999"},
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
    check_log("sl:hammer", base, "10900", "after a pause");
}

/* --- 3. the limit + 1 bound ------------------------------------------------------------------------ */

static long long units_of(redisContext *x, const char *key) {
    log_facts f = log_read(x, key, 0);
    free(f.text);
    return f.units;
}

static void test_memory_bound(void) {
    const long long base = T0 + 400000;
    del("sl:flood");
    clock_set(base);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:flood 5 1000000000 COST 5"), 1, 5, 0, -1, 1000000000);
    /* 10^5 blocked attempts of cost 1..7, 0, 1, ... (the first, cost 1, makes 6 > 5 in the window, so
     * the peeks that follow are blocked too; costs 6 and 7 are above the limit and log nothing),
     * pipelined in batches of 1000, the clock one ms further each batch: the set never holds more than
     * limit + 1 units, in at most two members (the attempts of one instant share one). */
    long long max_card = 0, max_units = 0, bad = 0;
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
        long long card = zcard(c, "sl:flood"), units = units_of(c, "sl:flood");
        if (card > max_card) max_card = card;
        if (units > max_units) max_units = units;
        if (batch % 10 == 9) CHECK(units <= 6);
    }
    CHECK_EQ(bad, 0);
    CHECK(max_card <= 2);
    CHECK_EQ(max_units, 6);
    /* The newest six: all from the last batch's instant, in one member. */
    check_log("sl:flood", base, "99*6", "after the flood");
    del("sl:flood");

    /* A cost above the limit logs nothing, whatever its size. */
    del("sl:big");
    clock_set(base + 1000);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:big 5 1000 COST 100000"), 0, 5, 5, -1, 0);
    CHECK_EQ(exists("sl:big"), 0);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:big 1000 60000 COST 100000"), 0, 1000, 1000, -1, 0);
    CHECK_EQ(exists("sl:big"), 0);
    /* The largest limit: 10^5 admitted in one call, then one more blocked: 10^5 + 1 units in one
     * member. */
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:big 100000 60000 COST 100000"), 1, 100000, 0, -1, 60000);
    CHECK_EQ(zcard(c, "sl:big"), 1);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:big 100000 60000 COST 100000"), 0, 100000, 0, 60000, 60000);
    check_log("sl:big", base + 1000, "0*100001", "the largest limit");
    del("sl:big");
}

/* The case: RL.SLIDINGLOG k 100000 60000 COST 100000, 50 times, on the frozen clock 1 ms apart
 * and on the real clock. The first is admitted; each later one is blocked and logged, so it must wait for
 * its own units: retry = the window. The set holds the new member and one unit of the previous one: two
 * members, 10^5 + 1 units. (How long a call takes is measured in docs/benchmarks.md, not asserted.) */
static void test_big_cost_repeated(void) {
    const long long base = T0 + 450000;
    for (int real = 0; real < 2; real++) {
        const char *key = real ? "sl:cost:real" : "sl:cost:frozen";
        del(key);
        if (real) CHECK(cmd_status_is(c, "OK", "RL.CLOCK REAL"));
        long long bad = 0, max_card = 0;
        for (int i = 0; i < 50; i++) {
            if (!real) clock_set(base + i);
            rl_result r = rl(c, "RL.SLIDINGLOG %s 100000 60000 COST 100000", key);
            long long want_allowed = i == 0, want_retry = i == 0 ? -1 : 60000;
            if (!r.ok || r.allowed != want_allowed || r.limit != 100000 || r.remaining != 0 ||
                r.retry_after_ms != want_retry || r.reset_after_ms != 60000 || r.wait_ms != 0) {
                bad++;
                fprintf(stderr, "     big cost %s %d: got %lld %lld %lld %lld\n", key, i, r.allowed, r.remaining,
                        r.retry_after_ms, r.reset_after_ms);
            }
            long long card = zcard(c, key);
            if (card > max_card) max_card = card;
            if (units_of(c, key) != (i == 0 ? 100000 : 100001)) bad++;
        }
        CHECK_EQ(bad, 0);
        CHECK(max_card <= 2);
        if (!real) check_log(key, base, "48 49*100000", "after 50 calls of COST 100000");
        del(key);
    }
    clock_set(base);
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
        /* peek while 4 > 3 (a fill of 3, then one more blocked and logged at 0): 0 leaves at 1000 */
        {"3 1000", 3, 3, 0, 1, 100, 0, 900, 900},
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
    snprintf(want, sizeof want, "a=%lld b=%lld %lld-0:1:0:0=%lld", us - 999999, us - 500000, us, us);
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
    snprintf(want, sizeof want, "m7=%lld m8=%lld m9=%lld %lld-0:1:0:0=%lld", us - 830000, us - 820000, us - 810000, us,
             us);
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
     * ZADD key (t - 100 ms) "<t_us>-0" (an earlier version's name) or "<t_us>-0:1:0:0" (this one's), then
     * one attempt at t: two entries are in the window (the module skips member names the set already
     * holds at any score). */
    const char *clashes[] = {"%lld-0", "%lld-0:1:0:0"};
    for (int k = 0; k < 2; k++) {
        char name[64];
        snprintf(name, sizeof name, clashes[k], us);
        del("sl:clash");
        freeReplyObject(cmd(c, "ZADD sl:clash %lld %s", us - 100000, name));
        CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:clash 3 1000"), 1, 3, 1, -1, 1000);
        CHECK_EQ(zcard(c, "sl:clash"), 2);
        CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:clash 3 1000 COST 0"), 1, 3, 1, -1, 1000);
        /* c = 2, blocked and logged: 4 units, 3 of them at t; the 2nd newest (t) must leave: 1000. */
        CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:clash 3 1000 COST 2"), 0, 3, 0, 1000, 1000);
    }
    /* The user's member keeps its name; the module's members at t merged into one of weight 3. */
    snprintf(want, sizeof want, "%lld-0:1:0:0=%lld %lld-0:3:2:0=%lld", us, us - 100000, us, us);
    got = log_render(c, "sl:clash");
    CHECK_STR(got, want);
    free(got);
    del("sl:clash");
}

/* A log written by an earlier version: one member "<t_us>-<seq>" per unit. Each weighs 1; the first call
 * that logs adds a member of this version above them, and both are read together. */
static void test_earlier_version_log(void) {
    const long long t = T0 + 650000;
    del("sl:old");
    /* 2 units at t, 3 at t + 100, as the earlier version wrote them for limit 5 per 1000 ms. */
    freeReplyObject(cmd(c, "ZADD sl:old %lld %lld-0 %lld %lld-1 %lld %lld-0 %lld %lld-1 %lld %lld-2", t * 1000,
                        t * 1000, t * 1000, t * 1000, (t + 100) * 1000, (t + 100) * 1000, (t + 100) * 1000,
                        (t + 100) * 1000, (t + 100) * 1000, (t + 100) * 1000));
    clock_set(t + 200);
    /* 5 in the window: blocked, logged; cost 1 needs the 5th newest (t) out: t + 1000. */
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:old 5 1000"), 0, 5, 0, 800, 1000);
    char want[512];
    snprintf(want, sizeof want, "%lld-0@0 %lld-1@0 %lld-0@100 %lld-1@100 %lld-2@100 200", t * 1000, t * 1000,
             (t + 100) * 1000, (t + 100) * 1000, (t + 100) * 1000);
    check_log("sl:old", t, want, "an earlier version's log, one attempt later");
    /* At t + 1000 the two units at t leave (trimmed); c = 4: a cost 2 is blocked, logged as one member
     * (6 units, limit + 1); it needs the 4th newest (t + 100) out: t + 1100. */
    clock_set(t + 1000);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:old 5 1000 COST 2"), 0, 5, 0, 100, 1000);
    snprintf(want, sizeof want, "%lld-0@100 %lld-1@100 %lld-2@100 200 1000*2", (t + 100) * 1000, (t + 100) * 1000,
             (t + 100) * 1000);
    check_log("sl:old", t, want, "trimmed to limit + 1 units");
    clock_set(t + 1100);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:old 5 1000 COST 2 DRYRUN"), 1, 5, 0, -1, 1000);
    del("sl:old");
}

/* A member with a score above now (a user's ZADD, even +inf, or an entry logged before the clock stepped
 * back) counts as logged now, and the next call that writes moves it to now: the key's TTL never
 * exceeds the window. DRYRUN answers the same and moves nothing. */
static void test_future_members(void) {
    const long long t = T0 + 680000, us = t * 1000;
    del("sl:future");
    freeReplyObject(cmd(c, "ZADD sl:future +inf forever %lld soon", us + 3600000000LL));
    CHECK_EQ(cmd_int(c, "PTTL sl:future"), -1);
    clock_set(t);
    /* Both count as now: 2 + 1 <= 3, admitted; MINGAP would see a newest entry 0 ms old (and, logged, the
     * attempt would then need the 3rd newest, itself, out: 1000). */
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:future 3 1000 MINGAP 10 DRYRUN"), 0, 3, 0, 1000, 1000);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:future 3 1000 DRYRUN"), 1, 3, 0, -1, 1000);
    CHECK_EQ(cmd_int(c, "PTTL sl:future"), -1);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:future 3 1000"), 1, 3, 0, -1, 1000);
    char want[256];
    snprintf(want, sizeof want, "0 forever@0 soon@0");
    check_log("sl:future", t, want, "members from the future moved to now");
    long long pttl = cmd_int(c, "PTTL sl:future");
    CHECK(pttl > HOUR_MS + 1000 - 100 && pttl <= HOUR_MS + 1000); /* frozen clock: the window plus an hour */
    /* They leave with the window. */
    clock_set(t + 1000);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:future 3 1000 COST 0"), 1, 3, 3, -1, 0);
    CHECK_EQ(exists("sl:future"), 0);

    /* The clock steps back: this version's members above now merge into one at now. */
    clock_set(t + 5000);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:future 10 1000 COST 3"), 1, 10, 7, -1, 1000);
    clock_set(t + 5100);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:future 10 1000 COST 2"), 1, 10, 5, -1, 1000);
    clock_set(t + 4000);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:future 10 1000 COST 0 DRYRUN"), 1, 10, 5, -1, 1000);
    check_log("sl:future", t, "5000*3 5100*2", "DRYRUN moves nothing");
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:future 10 1000 COST 1"), 1, 10, 4, -1, 1000);
    check_log("sl:future", t, "4000*6", "merged at now");
    del("sl:future");
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
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:dry 5 1000 COST 100000 DRYRUN"), 0, 5, 5, -1, 0);
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
        {1200, "5 1000 COST 6 DRYRUN", 0, 4, -1, 400}, /* above the limit: logs nothing, only 600 is left */
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
    check_log("sl:dry", t, "0*3 600", "after the DRYRUNs");
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
        char call[128];
        snprintf(call, sizeof call, "RL.SLIDINGLOG sl:ttl %s", calls[i]);
        const char *const with_pttl[] = {call, "PTTL sl:ttl", NULL};
        redisReply *x = multi_exec(c, with_pttl);
        rl_result f = reply_is_array(x, 2) ? rl_of(x->element[0]) : rl_of(NULL);
        if (CHECK(f.ok)) {
            long long reset = f.reset_after_ms, ttl = x->element[1]->integer;
            if (i == 0) CHECK_EQ(reset, 7000); /* the newest entry is now (COST 9, above the limit, logs nothing) */
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

/* A deterministic mix of calls over nkeys keys: admitted, blocked, peeks, costs above the limit, large
 * costs and limits, MINGAP, DRYRUN, refunds, a user's ZADD (in the past, in the future, at +inf), members
 * in an earlier version's format, and the clock moving (also back a little). */
static void mixed_calls(redisContext *x, const char *prefix, int nkeys, int ncalls) {
    static const char *opts[] = {"",        "COST 0",     "COST 3",      "MINGAP 40", "DRYRUN",     "COST 9",
                                 "MINGAP 700 COST 2", "COST 2 DRYRUN", "",      "COST 20000", "COST 60000",
                                 "REFUND 2", "REFUND 30000"};
    static const long long windows[] = {100, 1000, 5000};
    static const int limits[] = {1, 2, 3, 4, 5, 6, 50000};
    long long now = T0 + 900000;
    freeReplyObject(cmd(x, "RL.CLOCK SET %lld", now));
    for (int i = 0; i < ncalls; i++) {
        if (i % 7 == 0) {
            now += (i * 13) % 97;
            if (i % 63 == 0) now -= 30; /* the clock steps back */
            freeReplyObject(cmd(x, "RL.CLOCK SET %lld", now));
        }
        int k = i % nkeys;
        if (i % 101 == 50) freeReplyObject(cmd(x, "ZADD %s:%d %lld user:%d", prefix, k, now * 1000 - 3000 - i, i));
        if (i % 97 == 40) freeReplyObject(cmd(x, "ZADD %s:%d %lld fut:%d", prefix, k, (now + 2000) * 1000, i));
        if (i % 211 == 100) freeReplyObject(cmd(x, "ZADD %s:%d +inf inf:%d", prefix, k, i));
        if (i % 89 == 30)
            freeReplyObject(cmd(x, "ZADD %s:%d %lld %lld-0 %lld %lld-1", prefix, k, now * 1000 - 7, now * 1000 - 7,
                                now * 1000 - 7, now * 1000 - 7));
        redisReply *r = cmdline(x, "RL.SLIDINGLOG %s:%d %d %lld %s", prefix, k, limits[(i / nkeys) % 7],
                                windows[(i / 3) % 3], opts[(i * 5) % 13]);
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
    CHECK_EQ(zcard(rc, "rep:pre"), 1); /* one member of weight 3 */
    CHECK_EQ(units_of(rc, "rep:pre"), 3);
    check_same_key(c, rc, "rep:pre", "full sync");

    mixed_calls(c, "rep", 12, 900); /* primary: frozen clock; the replica's stays real */
    check_replica_caught_up(c);
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
    server *a = server_start(server_aof_always);
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
        ac = aof_replay_round(a, ac, round);
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
    static const bad_case cases[] = { /* after "RL.SLIDINGLOG sl:bad" */
        {"", "ERR wrong number of arguments for 'rl.slidinglog' command"},
        {"3", "ERR wrong number of arguments for 'rl.slidinglog' command"},
        {"3 1000 DRYRUN DRYRUN DRYRUN DRYRUN DRYRUN DRYRUN DRYRUN DRYRUN DRYRUN DRYRUN DRYRUN DRYRUN DRYRUN DRYRUN "
         "DRYRUN DRYRUN DRYRUN DRYRUN DRYRUN DRYRUN DRYRUN DRYRUN DRYRUN", /* 25 after the key: more than any call */
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
    check_errors_change_nothing(c, "RL.SLIDINGLOG", "sl:bad", cases, sizeof cases / sizeof cases[0]);
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

/* --- 9. generated traces against a reference model -------------------------------------------------- */

/* The reference: every unit ever logged (or ZADDed by someone else) and not yet out of the window, as
 * runs (score in µs, how many), newest first: the untrimmed log of one entry per unit. Each real call
 * moves the units above now to now, drops those out of the window, and adds its cost at now when the
 * cost is within the limit; the reply follows the rule of docs/commands.md on it. */
typedef struct urun {
    long long s, m;
} urun;
typedef struct uref {
    urun *r;
    size_t n, cap;
} uref;

static void uref_add(uref *f, long long s, long long m) {
    size_t i = 0;
    while (i < f->n && f->r[i].s > s) i++;
    if (i < f->n && f->r[i].s == s) {
        f->r[i].m += m;
        return;
    }
    if (f->n == f->cap) f->r = realloc(f->r, (f->cap = f->cap ? 2 * f->cap : 64) * sizeof *f->r);
    memmove(&f->r[i + 1], &f->r[i], (f->n - i) * sizeof *f->r);
    f->r[i] = (urun){s, m};
    f->n++;
}

static long long min_ll(long long a, long long b) { return a < b ? a : b; }
static long long ceil_ms(long long us) { return us <= 0 ? 0 : (us + 999) / 1000; }

/* The k-th newest unit after the call (add units at now, then the runs in the window); 0 if none. */
static int uref_unit(const uref *f, size_t runs, long long now, long long add, long long k, long long *out) {
    if (k < add) return *out = now, 1;
    k -= add;
    for (size_t i = 0; i < runs; i++) {
        if (k < f->r[i].m) return *out = min_ll(f->r[i].s, now), 1;
        k -= f->r[i].m;
    }
    return 0;
}

static rl_result uref_decide(const uref *f, long long now, long long limit, long long w, long long cost, long long gap) {
    size_t runs = 0;
    long long c = 0, e;
    while (runs < f->n && f->r[runs].s > now - w) c += f->r[runs++].m;
    int over = cost > limit;
    int allowed = !over && c + cost <= limit;
    if (allowed && gap > 0 && c > 0 && now - min_ll(f->r[0].s, now) < gap) allowed = 0;
    long long add = over ? 0 : cost, size = c + add;
    rl_result r = {1, allowed, limit, size < limit ? limit - size : 0, -1, 0, 0, ""};
    if (size > 0 && uref_unit(f, runs, now, add, 0, &e)) r.reset_after_ms = ceil_ms(e + w - now);
    if (!allowed && !over) {
        long long at = now;
        if (uref_unit(f, runs, now, add, limit - cost, &e) && e + w > at) at = e + w;
        if (gap > 0 && size > 0 && uref_unit(f, runs, now, add, 0, &e) && e + min_ll(gap, w) > at) at = e + min_ll(gap, w);
        r.retry_after_ms = ceil_ms(at - now);
    }
    return r;
}

/* REFUND n on the reference: of the c units in the window, the newest limit + 1 are what the module's log
 * holds; the newest min(n, those) go (drop), and the ones beyond the limit + 1 are forgotten, as the
 * module's cap forgot them (algorithms/slidinglog.c, "REFUND n"); `left` units stay. */
static void uref_refund_counts(long long c, long long limit, long long n, long long *drop, long long *left) {
    long long held = min_ll(c, limit + 1);
    *drop = min_ll(n, held);
    *left = held - *drop;
}

static rl_result uref_refund_decide(const uref *f, long long now, long long limit, long long w, long long n) {
    size_t runs = 0;
    long long c = 0, e, drop, left;
    while (runs < f->n && f->r[runs].s > now - w) c += f->r[runs++].m;
    uref_refund_counts(c, limit, n, &drop, &left);
    rl_result r = {1, 1, limit, left < limit ? limit - left : 0, -1, 0, 0, ""};
    if (left > 0 && uref_unit(f, runs, now, 0, drop, &e)) r.reset_after_ms = ceil_ms(e + w - now);
    return r;
}

/* refund: n is a refund's (cost is ignored). */
static void uref_apply(uref *f, long long now, long long w, long long cost, long long limit, int refund, long long n) {
    long long above = 0;
    size_t i = 0;
    while (i < f->n && f->r[i].s > now) above += f->r[i++].m;
    memmove(f->r, f->r + i, (f->n - i) * sizeof *f->r);
    f->n -= i;
    if (above) uref_add(f, now, above);
    while (f->n > 0 && f->r[f->n - 1].s <= now - w) f->n--;
    if (refund) { /* keep the units [drop, drop + left) of the window, newest first */
        long long c = 0, skip, room;
        for (size_t k = 0; k < f->n; k++) c += f->r[k].m;
        uref_refund_counts(c, limit, n, &skip, &room);
        size_t j = 0;
        for (size_t k = 0; k < f->n; k++) {
            long long m = f->r[k].m, d = min_ll(m, skip);
            m = min_ll(m - d, room);
            skip -= d;
            room -= m;
            if (m > 0) f->r[j++] = (urun){f->r[k].s, m};
        }
        f->n = j;
        return;
    }
    if (cost > 0 && cost <= limit) uref_add(f, now, cost);
}

static unsigned long long trace_rng = 0x243f6a8885a308d3ULL;
static long long trace_range(long long lo, long long hi) { /* xorshift64*, uniform enough for a test */
    trace_rng ^= trace_rng >> 12;
    trace_rng ^= trace_rng << 25;
    trace_rng ^= trace_rng >> 27;
    return lo + (long long)((trace_rng * 2685821657736338717ULL) % (unsigned long long)(hi - lo + 1));
}

/* n members in an earlier version's format ("<t_us>-<seq>", one per unit), or a user's, added to key and
 * to the reference, in ZADDs of up to 1000 members. */
static void seed_members(const char *key, uref *f, long long now_ms, long long w_ms, long long n, int legacy) {
    static char line[1000 * 48 + 64];
    long long done = 0;
    while (done < n) {
        size_t len = (size_t)sprintf(line, "ZADD %s", key);
        for (int k = 0; k < 1000 && done < n; k++, done++) {
            long long us = (now_ms - trace_range(0, 2 * w_ms)) * 1000 + trace_range(0, 999);
            if (trace_range(0, 19) == 0) us = (now_ms + trace_range(1, 3 * w_ms)) * 1000;
            if (legacy) len += (size_t)sprintf(line + len, " %lld %lld-%lld", us, us, done);
            else len += (size_t)sprintf(line + len, " %lld seed:%lld", us, done);
            uref_add(f, us, 1);
        }
        static const char *argv[2 * 1000 + 2];
        static size_t lens[2 * 1000 + 2];
        int argc = split_words(line, argv, lens, 2 * 1000 + 2);
        redisReply *r = cmdargv(c, argc, argv, lens);
        CHECK(r->type == REDIS_REPLY_INTEGER);
        freeReplyObject(r);
    }
}

typedef struct trace_totals {
    long long calls, blocked, mismatches, bookkeeping_bad, too_big, searched_logs, max_members, refunds;
} trace_totals;

/* deep: many attempts of small cost 1 ms apart in a long window (hundreds of members of weights 1 to 5,
 * others' members between them), so that a blocked attempt needs a unit deep in the window: the binary
 * search over ranks, and its look past members of other formats. */
static void run_generated_trace(int no, int deep, trace_totals *tt) {
    static const long long limits[] = {1, 2, 7, 300, 5000, 100000};
    static const long long windows[] = {3, 50, 1000, 60000};
    long long limit = deep ? limits[trace_range(3, 4)] : limits[trace_range(0, 5)];
    long long w_ms = deep ? 60000 : windows[trace_range(0, 3)], w = w_ms * 1000;
    long long now_ms = T0 + 2000000 + no * 1000000LL;
    char key[32];
    snprintf(key, sizeof key, "sl:trace:%d", no);
    del(key);
    uref f = {0};
    clock_set(now_ms);
    if (no % 3 == 1) seed_members(key, &f, now_ms, w_ms, trace_range(1, min_ll(limit + 1, 100001)), 1);
    if (no % 5 == 2) seed_members(key, &f, now_ms, w_ms, trace_range(1, 40), 0);
    int steps = deep ? 1500 : limit >= 5000 ? 120 : 300;
    for (int step = 0; step < steps; step++) {
        long long u = trace_range(0, 99);
        if (deep) {
            now_ms += u < 90 ? 1 : u < 97 ? 0 : -trace_range(1, 50);
        } else if (u < 30) {
        } else if (u < 55) {
            now_ms += trace_range(1, 3);
        } else if (u < 80) {
            now_ms += trace_range(0, w_ms);
        } else if (u < 92) {
            now_ms += trace_range(w_ms, 3 * w_ms);
        } else {
            now_ms -= trace_range(1, 2 * w_ms);
        }
        clock_set(now_ms);
        long long now = now_ms * 1000;
        if (trace_range(0, deep ? 9 : 39) == 0) { /* someone else's member: past, future or +inf */
            long long v = trace_range(0, 2), us = v == 0 ? now - trace_range(0, w) : v == 1 ? now + trace_range(1, w) : 0;
            if (v == 2) freeReplyObject(cmd(c, "ZADD %s +inf user:%d", key, step)), uref_add(&f, 1LL << 62, 1);
            else freeReplyObject(cmd(c, "ZADD %s %lld user:%d", key, us, step)), uref_add(&f, us, 1);
        }
        long long cost;
        u = trace_range(0, 99);
        if (deep) cost = u < 5 ? 0 : u < 95 ? trace_range(1, 5) : trace_range(1, limit);
        else if (u < 12) cost = 0;
        else if (u < 45) cost = 1;
        else if (u < 75) cost = trace_range(1, limit);
        else if (u < 82) cost = limit;
        else if (u < 90) cost = min_ll(limit + trace_range(1, 2), 100000);
        else cost = trace_range(1, 100000);
        long long gap = trace_range(0, 2) == 0 ? trace_range(1, 2 * w_ms) : 0;
        int dry = trace_range(0, 6) == 0;
        /* Now and then a refund instead: of one unit, a few, up to the whole log, more than it holds. */
        int refund = trace_range(0, 99) < 8;
        if (refund) {
            u = trace_range(0, 99);
            cost = u < 10 ? 0 : u < 40 ? 1 : u < 60 ? trace_range(1, 5) : u < 90 ? trace_range(1, limit + 1) : 100000;
        }
        tt->refunds += refund;
        char args[128];
        int len = snprintf(args, sizeof args, "%lld %lld %s %lld", limit, w_ms, refund ? "REFUND" : "COST", cost);
        if (gap) len += snprintf(args + len, sizeof args - (size_t)len, " MINGAP %lld", gap);
        if (dry) snprintf(args + len, sizeof args - (size_t)len, " DRYRUN");

        rl_result want =
            refund ? uref_refund_decide(&f, now, limit, w, cost) : uref_decide(&f, now, limit, w, cost, gap * 1000);
        rl_result got = rl(c, "RL.SLIDINGLOG %s %s", key, args);
        tt->calls++;
        tt->blocked += !got.allowed;
        if (!got.ok || got.allowed != want.allowed || got.limit != want.limit || got.remaining != want.remaining ||
            got.retry_after_ms != want.retry_after_ms || got.reset_after_ms != want.reset_after_ms || got.wait_ms != 0) {
            if (tt->mismatches++ < 5)
                fprintf(stderr,
                        "     trace %d step %d (%s, at %lld): got %lld %lld %lld %lld %lld, reference %lld %lld %lld "
                        "%lld %lld %s\n",
                        no, step, args, now_ms, got.allowed, got.limit, got.remaining, got.retry_after_ms,
                        got.reset_after_ms, want.allowed, want.limit, want.remaining, want.retry_after_ms,
                        want.reset_after_ms, got.error);
        }
        if (!dry) uref_apply(&f, now, w, cost, limit, refund, cost);
        long long card = zcard(c, key);
        if (card > tt->max_members) tt->max_members = card;
        if (card <= 3000 || step % 40 == 0) {
            log_facts lf = log_read(c, key, 0);
            if (!lf.bookkeeping_ok && tt->bookkeeping_bad++ < 3) fprintf(stderr, "     trace %d step %d: totals broken\n", no, step);
            if (!dry && lf.units > limit + 1) tt->too_big++;
            free(lf.text);
        }
    }
    tt->searched_logs += limit >= 300;
    free(f.r);
    del(key);
}

/* Every reply of the module equals the reference's, whatever the log holds: an earlier version's members
 * (up to 10^5 of them), a user's, members above now; limits and costs up to 10^5; refunds among the calls.
 * The running totals stay consistent and the set never keeps more than limit + 1 units after a call that
 * writes. */
static void test_generated_traces(void) {
    trace_totals tt = {0};
    for (int no = 0; no < 60; no++) run_generated_trace(no, 0, &tt);
    for (int no = 60; no < 72; no++) run_generated_trace(no, 1, &tt);
    CHECK_EQ(tt.mismatches, 0);
    CHECK_EQ(tt.bookkeeping_bad, 0);
    CHECK_EQ(tt.too_big, 0);
    CHECK(tt.blocked > tt.calls / 10 && tt.calls - tt.blocked > tt.calls / 10);
    CHECK(tt.refunds > tt.calls / 20);
    printf("generated traces: %lld calls (%lld blocked, %lld refunds), sets up to %lld members\n", tt.calls, tt.blocked,
           tt.refunds, tt.max_members);
}

/* --- 10. REFUND ------------------------------------------------------------------------------------ */

/* limit 5 per 1000 ms: a refund removes the newest units of the window (up to limit + 1 are kept), logs
 * nothing, is always allowed; the reply describes the log after it. */
static void test_refund_table(void) {
    static const step steps[] = {
        {0, "5 1000 COST 2", 1, 3, -1, 1000, "0*2"},
        {100, "5 1000 COST 2", 1, 1, -1, 1000, "0*2 100*2"},
        /* One unit of 100 goes: the member is rewritten with weight 1; 100 leaves at 1100. */
        {150, "5 1000 REFUND 1", 1, 2, -1, 950, "0*2 100"},
        {150, "5 1000 REFUND 0", 1, 2, -1, 950, "0*2 100"},
        {200, "5 1000 REFUND 2 DRYRUN", 1, 4, -1, 800, "0*2 100"},
        /* 100 goes whole, 0 keeps one unit. */
        {200, "5 1000 REFUND 2", 1, 4, -1, 800, "0"},
        /* 1 + 5 > 5: blocked and logged; then c = 6 = limit + 1, blocked and logged, and the cap keeps the
         * newest 6: the unit at 0 is cut away. */
        {300, "5 1000 COST 5", 0, 0, 1000, 1000, "0 300*5"},
        {300, "5 1000", 0, 0, 1000, 1000, "300*6"},
        {400, "5 1000 REFUND 4", 1, 3, -1, 900, "300*2"},
        /* MINGAP has no say in a refund. */
        {1000, "5 1000 MINGAP 100 REFUND 1", 1, 4, -1, 300, "300"},
        {1000, "5 1000 COST 2", 1, 2, -1, 1000, "300 1000*2"},
        /* At the instant the member was written: it is cut, and stays at now. */
        {1000, "5 1000 REFUND 1", 1, 3, -1, 1000, "300 1000"},
        {1000, "5 1000 COST 1", 1, 2, -1, 1000, "300 1000*2"},
        /* 300 has left the window (trimmed, as by every call); c = 2, one goes. */
        {1350, "5 1000 REFUND 1", 1, 4, -1, 650, "1000"},
        {1350, "5 1000 REFUND 100000", 1, 5, -1, 0, ""},
        {1350, "5 1000 REFUND 3", 1, 5, -1, 0, ""}, /* on no key: nothing created */
    };
    run_steps("sl:refund", T0 + 1100000, 5, steps, sizeof steps / sizeof steps[0]);
}

/* Refunds through others' members and members above now: the newest go first, highest scores first (a
 * user's member weighs 1, and is removed whole); those left above now move to now as on every call. */
static void test_refund_members(void) {
    const long long t = T0 + 1120000, us = t * 1000;
    char want[512];
    del("sl:rfu");
    freeReplyObject(cmd(c, "ZADD sl:rfu %lld a %lld b", us - 500000, us - 200000));
    clock_set(t);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:rfu 5 1000 COST 3"), 1, 5, 0, -1, 1000);
    /* 4 of the 5: the member of weight 3 at t, then b; a is left (t - 500 leaves at t + 500). */
    clock_set(t + 100);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:rfu 5 1000 REFUND 4"), 1, 5, 4, -1, 400);
    check_log("sl:rfu", t, "a@-500", "a refund down to a user's member");
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:rfu 5 1000 COST 2"), 1, 5, 2, -1, 1000);
    check_log("sl:rfu", t, "a@-500 100*2", "logged after the refund");

    /* A user's member in the future (moved to now by the next write), then the clock steps back and one
     * at +inf comes: a refund of 2 takes the +inf one and the highest-named member at t + 200 ("fut",
     * above the module's "<t_us>-..." names), and moves what is left above now to now. */
    freeReplyObject(cmd(c, "ZADD sl:rfu %lld fut", us + 5000000));
    clock_set(t + 200);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:rfu 5 1000 COST 1"), 1, 5, 0, -1, 1000);
    check_log("sl:rfu", t, "a@-500 100*2 200 fut@200", "a future member moved to now");
    clock_set(t + 150);
    freeReplyObject(cmd(c, "ZADD sl:rfu +inf inf"));
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:rfu 5 1000 REFUND 2"), 1, 5, 1, -1, 1000);
    check_log("sl:rfu", t, "a@-500 100*2 150", "a refund through members above now");
    /* The newest kept unit is now; DRYRUN and real refunds of everything agree, and the key goes. */
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:rfu 5 1000 REFUND 4 DRYRUN"), 1, 5, 5, -1, 0);
    check_log("sl:rfu", t, "a@-500 100*2 150", "DRYRUN");
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:rfu 5 1000 REFUND 4"), 1, 5, 5, -1, 0);
    check_log("sl:rfu", t, "", "all given back");

    /* An earlier version's members weigh 1 each: a refund removes them one per unit. */
    del("sl:rfold");
    freeReplyObject(cmd(c, "ZADD sl:rfold %lld %lld-0 %lld %lld-1 %lld %lld-0", us, us, us, us, us + 100000,
                        us + 100000));
    clock_set(t + 300);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:rfold 5 1000 REFUND 2"), 1, 5, 4, -1, 700);
    snprintf(want, sizeof want, "%lld-0@0", us);
    check_log("sl:rfold", t, want, "an earlier version's members");
    del("sl:rfold");

    /* A member of weight above limit + 1 (written under a larger limit): the refund cuts it from the top
     * and the cap from below, in one rewrite. limit 3: c = 4; 2 go, 2 are left of the 6 at 10. */
    del("sl:rfcap");
    clock_set(t + 400);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:rfcap 10 1000 COST 4"), 1, 10, 6, -1, 1000);
    clock_set(t + 410);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:rfcap 10 1000 COST 6"), 1, 10, 0, -1, 1000);
    clock_set(t + 420);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:rfcap 3 1000 REFUND 2"), 1, 3, 1, -1, 990);
    check_log("sl:rfcap", t, "410*2", "cut from both ends");
    /* At now, one member of 9 and limit 3: everything kept is at now, one member of 3. */
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:rfcap 10 1000 COST 7"), 1, 10, 1, -1, 1000);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:rfcap 3 1000 REFUND 1"), 1, 3, 0, -1, 1000);
    check_log("sl:rfcap", t, "420*3", "collapsed at now");
    del("sl:rfcap");
}

/* The next pub/sub message on sub as "channel payload", or "" after its timeout without one. */
/* A refund's reply and log against its DRYRUN: the DRYRUN writes nothing (no trim, no TTL change), the real
 * refund answers the same. A refund that changes the log signals it (WATCH) and fires rl.slidinglog; one
 * that changes nothing does neither. RL.SLIDINGLOG_RO takes REFUND as DRYRUN does. */
static void test_refund_effects(void) {
    const long long t = T0 + 1140000;
    del("sl:rfd");
    clock_set(t);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:rfd 5 1000 COST 3"), 1, 5, 2, -1, 1000);
    clock_set(t + 600);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:rfd 5 1000"), 1, 5, 1, -1, 1000);
    size_t l0;
    char *before = dump_key(c, "sl:rfd", &l0);
    long long expire0 = cmd_int(c, "PEXPIRETIME sl:rfd");
    static const struct {
        long long at;
        const char *args;
        long long remaining, reset;
    } dry[] = {
        {700, "5 1000 REFUND 1 DRYRUN", 2, 300}, /* the newest (600) goes: 0*3 leaves at 1000 */
        {700, "5 1000 REFUND 2 DRYRUN", 3, 300},
        {700, "5 1000 REFUND 0 DRYRUN", 1, 900},
        {1200, "5 1000 REFUND 0 DRYRUN", 4, 400}, /* would trim 0*3 */
        {1200, "5 1000 REFUND 1 DRYRUN", 5, 0},   /* would delete the key */
        {700, "5 1000 dryrun refund 9 mingap 5", 5, 0},
    };
    for (size_t i = 0; i < sizeof dry / sizeof dry[0]; i++) {
        clock_set(t + dry[i].at);
        long long failed = check_failed;
        CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:rfd %s", dry[i].args), 1, 5, dry[i].remaining, -1, dry[i].reset);
        char ro[64];
        snprintf(ro, sizeof ro, "%s", dry[i].args);
        char *d = strstr(ro, " DRYRUN");
        if (d) {
            *d = '\0';
            CHECK_SLOG(rl(c, "RL.SLIDINGLOG_RO sl:rfd %s", ro), 1, 5, dry[i].remaining, -1, dry[i].reset);
        }
        size_t l1;
        char *after = dump_key(c, "sl:rfd", &l1);
        CHECK(same_bytes(before, l0, after, l1));
        CHECK_EQ(cmd_int(c, "PEXPIRETIME sl:rfd"), expire0);
        free(after);
        if (check_failed != failed) fprintf(stderr, "     ^ refund dryrun case %zu (%s)\n", i, dry[i].args);
    }
    free(before);
    /* The real refund answers what its DRYRUN did. */
    clock_set(t + 700);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:rfd 5 1000 REFUND 1"), 1, 5, 2, -1, 300);
    check_log("sl:rfd", t, "0*3", "after the refund");

    /* WATCH: a refund that removes units aborts the transaction; one that changes nothing does not. */
    struct {
        const char *line;
        int changes;
    } watched[] = {
        {"RL.SLIDINGLOG sl:rfd 5 1000 REFUND 0", 0},        /* nothing to trim, the same expiry */
        {"RL.SLIDINGLOG sl:rfd 5 1000 REFUND 1 DRYRUN", 0},
        {"RL.SLIDINGLOG_RO sl:rfd 5 1000 REFUND 1", 0},
        {"RL.SLIDINGLOG sl:rfd:none 5 1000 REFUND 1", 0},  /* no key: nothing */
        {"RL.SLIDINGLOG sl:rfd 5 1000 REFUND 1 COST 1", 0}, /* an error */
        {"RL.SLIDINGLOG sl:rfd 5 1000 REFUND 1", 1},
    };
    for (size_t i = 0; i < sizeof watched / sizeof watched[0]; i++) {
        int ran = watch_survives(srv, c, "sl:rfd", watched[i].line);
        if (!CHECK(ran == !watched[i].changes)) fprintf(stderr, "     WATCH across %s\n", watched[i].line);
    }
    check_log("sl:rfd", t, "0*2", "after the watched refund");
    CHECK_EQ(exists("sl:rfd:none"), 0);
    del("watch:side");

    /* Keyspace events: rl.slidinglog for the refund that changes the log, then nothing until a marker. */
    static const char *const quiet[] = {"RL.SLIDINGLOG sl:rfd 5 1000 REFUND 0",
                                        "RL.SLIDINGLOG sl:rfd 5 1000 REFUND 3 DRYRUN",
                                        "RL.SLIDINGLOG sl:rfd:none 5 1000 REFUND 3", NULL};
    check_events(srv, c, "Ed", "RL.SLIDINGLOG sl:rfd 5 1000 REFUND 1", "rl.slidinglog sl:rfd", quiet,
                 "RL.SLIDINGLOG sl:rfd:mark 5 1000", "rl.slidinglog sl:rfd:mark");
    freeReplyObject(cmd(c, "DEL sl:rfd sl:rfd:mark"));

    /* Errors: REFUND takes COST's place; the log's REFUND has COST's range; RL.ALL takes a clause's REFUND
     * only in a call that gives back (REFUND before its first LIMIT). */
    static const bad_case bad[] = {
        {"RL.SLIDINGLOG sl:rfd 5 1000 REFUND 1 COST 1", "ERR COST: cannot be combined with REFUND"},
        {"RL.SLIDINGLOG sl:rfd 5 1000 COST 1 REFUND 1", "ERR REFUND: cannot be combined with COST"},
        {"RL.SLIDINGLOG sl:rfd 5 1000 REFUND 100001", "ERR REFUND: must be an integer between 0 and 100000"},
        {"RL.SLIDINGLOG sl:rfd 5 1000 REFUND -1", "ERR REFUND: must be an integer between 0 and 100000"},
        {"RL.SLIDINGLOG sl:rfd 5 1000 REFUND", "ERR REFUND: needs a value"},
        {"RL.SLIDINGLOG sl:rfd 5 1000 REFUND 1 refund 1", "ERR REFUND: given more than once"},
        {"RL.SLIDINGLOG sl:rfd 5 1000 REFUND 1 ATMOST", "ERR 'ATMOST': not an option of rl.slidinglog"},
        {"RL.SLIDINGLOG_RO sl:rfd 5 1000 COST 2 REFUND 1", "ERR REFUND: cannot be combined with COST"},
        {"RL.ALL 1 sl:rfd LIMIT SLIDINGLOG 5 1000 REFUND 1",
         "ERR LIMIT 1: REFUND: needs REFUND n before the first LIMIT (a call gives back to every limit or takes from "
         "every one)"},
    };
    clock_set(t + 800);
    CHECK_SLOG(rl(c, "RL.SLIDINGLOG sl:rfd 5 1000 COST 2"), 1, 5, 3, -1, 1000);
    before = dump_key(c, "sl:rfd", &l0);
    check_errors(c, bad, sizeof bad / sizeof bad[0]);
    size_t l1;
    char *after = dump_key(c, "sl:rfd", &l1);
    CHECK(same_bytes(before, l0, after, l1));
    free(before);
    free(after);
    del("sl:rfd");
}

/* Replicas end member-for-member (DUMP byte-for-byte) equal after refunds of every shape: a member cut, a
 * member cut from both ends, members removed whole, others' members (past, future, +inf), an earlier
 * version's members, a refund that empties the key, and DRYRUN refunds in between. */
static void test_refund_replication(void) {
    server *rep = replica_start(srv);
    redisContext *rc = server_connect(rep);
    const long long t = T0 + 1160000, us = t * 1000;
    static const char *const keys[] = {"rr:a", "rr:b", "rr:c", "rr:d", "rr:e"};
    for (int k = 0; k < 5; k++) del(keys[k]);
    clock_set(t);
    freeReplyObject(cmd(c, "ZADD rr:b %lld u1 %lld u2 +inf u3", us - 300000, us + 2000000));
    freeReplyObject(cmd(c, "ZADD rr:d %lld %lld-0 %lld %lld-1 %lld %lld-0", us - 10, us - 10, us - 10, us - 10, us - 5,
                        us - 5));
    static const char *const script[] = {
        "rr:a 10 1000 COST 4", "rr:a 10 1000 COST 3", "rr:a 10 1000 REFUND 2", "rr:a 10 1000 REFUND 2 DRYRUN",
        "rr:b 6 1000 COST 2", "rr:b 6 1000 REFUND 3", "rr:b 6 1000 COST 1", "rr:c 20 1000 COST 9",
        "rr:c 20 1000 COST 9", "rr:c 4 1000 REFUND 1", "rr:d 8 1000 REFUND 2", "rr:d 8 1000 COST 2",
        "rr:d 8 1000 REFUND 1", "rr:e 3 1000 COST 3", "rr:e 3 1000 REFUND 5", "rr:a 10 1000 REFUND 1",
    };
    for (size_t i = 0; i < sizeof script / sizeof script[0]; i++) {
        clock_set(t + 40 * (long long)i);
        rl_result r = rl(c, "RL.SLIDINGLOG %s", script[i]);
        if (!CHECK(r.ok)) fprintf(stderr, "     %s: %s\n", script[i], r.error);
    }
    check_replica_caught_up(c);
    int nonempty = 0;
    for (int k = 0; k < 5; k++) {
        nonempty += exists(keys[k]) == 1;
        check_same_on_replica(c, rc, keys[k]);
        check_same_key(c, rc, keys[k], "replica after refunds");
        log_facts f = log_read(rc, keys[k], 0);
        CHECK(f.bookkeeping_ok);
        free(f.text);
    }
    CHECK_EQ(nonempty, 4); /* rr:e was given back whole: deleted on both */
    redisFree(rc);
    server_stop(rep);
    for (int k = 0; k < 5; k++) del(keys[k]);
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
    CHECK(command_info_is(c, "RL.SLIDINGLOG", -4, "write"));
}

int main(void) {
    static const suite_test tests[] = {test_count_table, test_mingap_short_table, test_mingap_long_table,
        test_hammering, test_memory_bound, test_big_cost_repeated, test_exact_retry, test_user_members,
        test_earlier_version_log, test_future_members, test_dryrun_writes_nothing, test_ttl_and_deletion,
        test_bad_input, test_command_metadata, test_generated_traces, test_refund_table, test_refund_members,
        test_refund_effects, test_refund_replication, test_replication, test_aof, NULL};
    return server_suite("integration_slidinglog", &srv, &c, tests);
}
