/* integration_quota.c -- RL.QUOTA against a real redis-server with the module loaded, on the test clock:
 * scripted replies at day, week and month boundaries (offsets, leap days, Dec -> Jan), DRYRUN and the
 * read-only form, FORCE and its debt, REFUND, a live change of period, RL.ALL's QUOTA clause (all or
 * nothing with another limit, its read-only form), the key's type and TTL (PTTL equals reset_after_ms on
 * the real clock), DUMP/RESTORE and DEBUG RELOAD, RL.SETSTATE's QUOTA kind, a replica, and an AOF replayed
 * as written and after a rewrite.
 *
 * Every expected value was worked out by hand from docs/commands.md; the comments show the calendar. */
#include <stdlib.h>
#include <string.h>

#include "effect_checks.h"
#include "rl_checks.h"
#include "server.h"
#include "suite.h"

static server *srv;
static redisContext *c;

#define HOUR 3600000LL
#define DAY (24 * HOUR)
#define JAN1 1767225600000LL /* 2026-01-01 00:00 UTC, a Thursday */

static void clock_set(long long ms) { CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", ms)); }
static void del(const char *key) { freeReplyObject(cmd(c, "DEL %s", key)); }
static long long exists(const char *key) { return cmd_int(c, "EXISTS %s", key); }

/* --- boundaries ------------------------------------------------------------------------------------- */

static void test_day_and_week(void) {
    del("q:d");
    clock_set(JAN1 + 12 * HOUR);
    CHECK_RL(rl(c, "RL.QUOTA q:d 3 DAY COST 2"), 1, 3, 1, -1, 12 * HOUR, 0);
    CHECK_RL(rl(c, "RL.QUOTA q:d 3 day COST 2"), 0, 3, 1, 12 * HOUR, 12 * HOUR, 0);
    CHECK_RL(rl(c, "RL.QUOTA q:d 3 DAY COST 4"), 0, 3, 1, -1, 12 * HOUR, 0); /* above the limit: never */
    clock_set(JAN1 + DAY - 1);
    CHECK_RL(rl(c, "RL.QUOTA q:d 3 DAY COST 2"), 0, 3, 1, 1, 1, 0);
    clock_set(JAN1 + DAY); /* midnight: a new day */
    CHECK_RL(rl(c, "RL.QUOTA q:d 3 DAY COST 3"), 1, 3, 0, -1, DAY, 0);

    /* UTC+1 and UTC-14: the local day ends at 23:00 and 14:00 UTC. */
    del("q:tz");
    clock_set(JAN1);
    CHECK_RL(rl(c, "RL.QUOTA q:tz 2 DAY OFFSET 60"), 1, 2, 1, -1, 23 * HOUR, 0);
    del("q:tz2");
    CHECK_RL(rl(c, "RL.QUOTA q:tz2 2 DAY OFFSET -840"), 1, 2, 1, -1, 14 * HOUR, 0);
    /* Weeks from Monday: Thursday's week ends 4 days later; UTC-1's an hour after that. */
    del("q:w");
    CHECK_RL(rl(c, "RL.QUOTA q:w 10 WEEK COST 10"), 1, 10, 0, -1, 4 * DAY, 0);
    CHECK_RL(rl(c, "RL.QUOTA q:w 10 WEEK"), 0, 10, 0, 4 * DAY, 4 * DAY, 0);
    del("q:w2");
    CHECK_RL(rl(c, "RL.QUOTA q:w2 10 Week OFFSET -60"), 1, 10, 9, -1, 4 * DAY + HOUR, 0);
    del("q:d q:tz q:tz2 q:w q:w2");
}

/* Months of every length: the reset is the time to the 1st. */
static void test_months(void) {
    static const struct {
        long long at_ms, offset, reset_ms;
        const char *what;
    } m[] = {
        {JAN1, 0, 31 * DAY, "January 2026"},
        {1707523200000LL, 0, 20 * DAY, "2024-02-10: Feb 2024 has 29 days"},
        {1675987200000LL, 0, 19 * DAY, "2023-02-10: Feb 2023 has 28"},
        {4107499200000LL, 0, 12 * HOUR, "2100-02-28 12:00: no Feb 29 in 2100"},
        {951739200000LL, 0, DAY + 12 * HOUR, "2000-02-28 12:00: Feb 29 in 2000"},
        {1767222000000LL, 0, HOUR, "2025-12-31 23:00: December ends at midnight"},
        {1767223800000LL, 60, 31 * DAY - 30 * 60000, "2025-12-31 23:30 UTC is January 1 in UTC+1"},
        {0, -840, 14 * HOUR, "the epoch is December 1969 in UTC-14"},
    };
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
        del("q:m");
        clock_set(m[i].at_ms);
        rl_result r = rl(c, "RL.QUOTA q:m 5 MONTH OFFSET %lld COST 5", m[i].offset);
        if (!CHECK(r.ok && r.allowed == 1 && r.remaining == 0 && r.reset_after_ms == m[i].reset_ms))
            fprintf(stderr, "     %s: reset %lld, expected %lld\n", m[i].what, r.reset_after_ms, m[i].reset_ms);
        clock_set(m[i].at_ms + m[i].reset_ms - 1);
        CHECK_RL(rl(c, "RL.QUOTA q:m 5 MONTH OFFSET %lld", m[i].offset), 0, 5, 0, 1, 1, 0);
        clock_set(m[i].at_ms + m[i].reset_ms);
        CHECK_RL(rl(c, "RL.QUOTA q:m 5 MONTH OFFSET %lld COST 0", m[i].offset), 1, 5, 5, -1, 0, 0);
        CHECK_EQ(exists("q:m"), 0); /* the window ended: idle, and no key (a COST 0 made none) */
    }
}

/* --- options ---------------------------------------------------------------------------------------- */

static void test_options(void) {
    del("q:o");
    clock_set(JAN1);
    /* DRYRUN and the read-only form answer as the call would, and write nothing. */
    CHECK_RL(rl(c, "RL.QUOTA q:o 3 DAY COST 2 DRYRUN"), 1, 3, 1, -1, DAY, 0);
    CHECK_RL(rl(c, "RL.QUOTA_RO q:o 3 DAY COST 2"), 1, 3, 1, -1, DAY, 0);
    CHECK_EQ(exists("q:o"), 0);
    CHECK_RL(rl(c, "RL.QUOTA q:o 3 DAY COST 2"), 1, 3, 1, -1, DAY, 0);
    CHECK(cmd_status_is(c, "rl-quotas", "TYPE q:o"));
    /* FORCE: admitted past the limit, debt; a plain request, COST 0 too, denied until midnight. */
    CHECK_RL(rl(c, "RL.QUOTA q:o 3 DAY COST 5 FORCE"), 1, 3, 0, -1, DAY, 0);
    CHECK_RL(rl(c, "RL.QUOTA_RO q:o 3 DAY COST 0"), 0, 3, 0, DAY, DAY, 0);
    clock_set(JAN1 + HOUR);
    CHECK_RL(rl(c, "RL.QUOTA q:o 3 DAY"), 0, 3, 0, 23 * HOUR, 23 * HOUR, 0);
    /* REFUND pays the debt back: 7 counted, 5 given back leave 2, so 1 fits. */
    CHECK_RL(rl(c, "RL.QUOTA q:o 3 DAY REFUND 5"), 1, 3, 1, -1, 23 * HOUR, 0);
    CHECK_RL(rl(c, "RL.QUOTA q:o 3 DAY"), 1, 3, 0, -1, 23 * HOUR, 0);
    CHECK_RL(rl(c, "RL.QUOTA q:o 3 DAY REFUND 100"), 1, 3, 3, -1, 0, 0); /* back to nothing: idle */
    CHECK_EQ(exists("q:o"), 0);

    /* A live change of period: the stored day runs to its end, then the month follows. */
    del("q:live");
    CHECK_RL(rl(c, "RL.QUOTA q:live 2 DAY COST 2"), 1, 2, 0, -1, 23 * HOUR, 0);
    CHECK_RL(rl(c, "RL.QUOTA q:live 2 MONTH OFFSET 300"), 0, 2, 0, 23 * HOUR, 23 * HOUR, 0);
    clock_set(JAN1 + DAY); /* Jan 2 00:00 UTC is 05:00 in UTC+5: January ends Jan 31 19:00 UTC */
    CHECK_RL(rl(c, "RL.QUOTA q:live 2 MONTH OFFSET 300"), 1, 2, 1, -1, 29 * DAY + 19 * HOUR, 0);
    /* A clock stepping back still reads the stored window. */
    clock_set(JAN1);
    CHECK_RL(rl(c, "RL.QUOTA q:live 2 DAY COST 2"), 0, 2, 1, 30 * DAY + 19 * HOUR, 30 * DAY + 19 * HOUR, 0);
    del("q:live");
}

/* --- RL.ALL's QUOTA clause -------------------------------------------------------------------------- */

/* RL.ALL's reply: its verdict, retry and reset, then one six-field reply per limit. */
static int all_limit(const redisReply *x, size_t i, long long f[6]) {
    return x->type == REDIS_REPLY_ARRAY && x->elements > 3 + i && rl_fields(x->element[3 + i], f);
}

static void test_all(void) {
    freeReplyObject(cmd(c, "DEL {q}rate {q}day"));
    clock_set(JAN1);
    long long f[6];
    redisReply *x = cmd(c, "RL.ALL 2 {q}rate {q}day LIMIT TOKEN 10 1 1000 LIMIT QUOTA 3 DAY OFFSET 60 COST 2");
    CHECK(x->type == REDIS_REPLY_ARRAY && x->elements == 5 && x->element[0]->integer == 1);
    CHECK(all_limit(x, 0, f) && f[0] == 1 && f[2] == 9);
    CHECK(all_limit(x, 1, f) && f[0] == 1 && f[1] == 3 && f[2] == 1 && f[4] == 23 * HOUR);
    freeReplyObject(x);
    /* The quota denies: nothing is written, the token bucket keeps its 9. */
    x = cmd(c, "RL.ALL 2 {q}rate {q}day COST 2 LIMIT TOKEN 10 1 1000 LIMIT QUOTA 3 DAY OFFSET 60");
    CHECK(x->type == REDIS_REPLY_ARRAY && x->elements == 5 && x->element[0]->integer == 0);
    CHECK(all_limit(x, 1, f) && f[0] == 0 && f[2] == 1 && f[3] == 23 * HOUR);
    freeReplyObject(x);
    CHECK_RL(rl(c, "RL.TOKEN_RO {q}rate 10 1 1000 COST 0"), 1, 10, 9, -1, 1000, 0);
    /* FORCE in a clause: the call is admitted, the quota in debt; RL.ALL_RO then sees the debt. */
    x = cmd(c, "RL.ALL 2 {q}rate {q}day LIMIT TOKEN 10 1 1000 LIMIT QUOTA 3 DAY OFFSET 60 COST 4 FORCE");
    CHECK(x->type == REDIS_REPLY_ARRAY && x->element[0]->integer == 1);
    freeReplyObject(x);
    x = cmd(c, "RL.ALL_RO 1 {q}day LIMIT QUOTA 3 DAY OFFSET 60 COST 0");
    CHECK(x->type == REDIS_REPLY_ARRAY && x->element[0]->integer == 0 && all_limit(x, 0, f) && f[2] == 0);
    freeReplyObject(x);
    /* RL.ALL's REFUND gives back to the quota as RL.QUOTA REFUND does: 6 - 5 = 1 counted. */
    x = cmd(c, "RL.ALL 1 {q}day REFUND 5 LIMIT QUOTA 3 DAY OFFSET 60");
    CHECK(x->type == REDIS_REPLY_ARRAY && all_limit(x, 0, f) && f[0] == 1 && f[2] == 2);
    freeReplyObject(x);
    check_error(c, "ERR LIMIT 1: QUOTA needs 2 arguments", "RL.ALL 1 {q}day LIMIT QUOTA 3");
    check_error(c, "ERR LIMIT 1: period: must be DAY, WEEK or MONTH", "RL.ALL 1 {q}day LIMIT QUOTA 3 YEAR");
    check_error(c, "ERR LIMIT 1: 'WAIT' is not an option of QUOTA", "RL.ALL 1 {q}day LIMIT QUOTA 3 DAY WAIT 5");
    freeReplyObject(cmd(c, "DEL {q}rate {q}day"));
}

/* --- the key: TTL, copies, RL.SETSTATE ------------------------------------------------------------ */

static void test_key(void) {
    del("q:k");
    clock_set(JAN1 + 6 * HOUR);
    CHECK_RL(rl(c, "RL.QUOTA q:k 10 DAY COST 4"), 1, 10, 6, -1, 18 * HOUR, 0);
    /* Frozen clock: the key outlives the real reset by an hour. */
    long long pttl = cmd_int(c, "PTTL q:k");
    CHECK(pttl > 18 * HOUR + 3600000 - 5000 && pttl <= 18 * HOUR + 3600000);
    check_copy_and_reload(c, "RL.QUOTA_RO", "q:k", "q:k2", "10 DAY", JAN1 + 6 * HOUR);
    /* The readable state: the window's end and its count. */
    CHECK(cmd_status_is(c, "OK", "RL.SETSTATE q:s QUOTA %lld 7 PXAT %lld", JAN1 + DAY, 4102444800000LL));
    CHECK_RL(rl(c, "RL.QUOTA_RO q:s 10 DAY COST 0"), 1, 10, 3, -1, 18 * HOUR, 0);
    check_error(c, "ERR state: not a valid state of this kind", "RL.SETSTATE q:s QUOTA 0 7");
    check_error(c, "ERR state: not a valid state of this kind", "RL.SETSTATE q:s QUOTA 1 2000000000001");
    check_error(c, "ERR state: not a valid state of this kind", "RL.SETSTATE q:s QUOTA -1 1");
    CHECK(cmd_status_is(c, "OK", "SET q:s2 x"));
    check_error(c, "WRONGTYPE Operation against a key holding the wrong kind of value", "RL.QUOTA q:s2 10 DAY");
    check_error(c, "WRONGTYPE Operation against a key holding the wrong kind of value", "RL.WINDOW q:s 10 1000");
    freeReplyObject(cmd(c, "DEL q:k q:k2 q:s q:s2"));

    /* On the real clock, PTTL is reset_after_ms, and reset_after_ms the time to the next UTC midnight. */
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK REAL"));
    static const char *const with_pttl[] = {"RL.QUOTA q:real 1000 DAY COST 7", "PTTL q:real", "RL.CLOCK GET", NULL};
    redisReply *x = multi_exec(c, with_pttl);
    if (CHECK(reply_is_array(x, 3))) {
        long long reset = rl_of(x->element[0]).reset_after_ms, ttl = x->element[1]->integer;
        long long now = x->element[2]->integer, midnight = (now / DAY + 1) * DAY;
        CHECK(ttl >= reset - 1 && ttl <= reset + 1);
        CHECK(reset >= midnight - now - 1 && reset <= midnight - now + 1);
    }
    freeReplyObject(x);
    del("q:real");
}

/* --- replication and AOF ---------------------------------------------------------------------------- */

/* A mix of calls on n keys: periods, offsets, costs, FORCE, REFUND, DRYRUN, the clock moving by hours. */
static void mixed_calls(redisContext *on, const char *prefix, int n, int calls) {
    static const char *const periods[] = {"DAY", "WEEK", "MONTH"};
    static const char *const extras[] = {"", "FORCE", "REFUND 2", "DRYRUN", "COST 0", "OFFSET -300", "OFFSET 840 COST 3"};
    long long now = JAN1;
    for (int i = 0; i < calls; i++) {
        if (i % 9 == 0) {
            now += (i * 7919LL) % (30 * HOUR);
            freeReplyObject(cmd(on, "RL.CLOCK SET %lld", now));
        }
        freeReplyObject(cmdline(on, "RL.QUOTA %s:%d %d %s %s", prefix, i % n, 3 + i % 5, periods[i % 3],
                                extras[(i / 3) % 7]));
    }
}

static void test_replica(void) {
    server *rep = replica_start(srv);
    redisContext *rc = server_connect(rep);
    enum { NK = 10 };
    mixed_calls(c, "qr", NK, 400);
    check_replica_caught_up(c);
    char key[32];
    int present = 0;
    for (int k = 0; k < NK; k++) {
        snprintf(key, sizeof key, "qr:%d", k);
        present += (int)exists(key);
        check_same_on_replica(c, rc, key);
        check_same_expiry_on_replica(c, rc, key);
    }
    if (!CHECK(present >= NK / 2)) fprintf(stderr, "     only %d keys left\n", present);
    /* A key that goes idle is deleted on both. */
    CHECK_EQ(rl(c, "RL.QUOTA qr:idle 5 DAY").allowed, 1);
    CHECK_EQ(rl(c, "RL.QUOTA qr:idle 5 DAY REFUND 1").reset_after_ms, 0);
    check_replica_caught_up(c);
    CHECK_EQ(cmd_int(rc, "EXISTS qr:idle"), 0);
    rl_result w = rl(rc, "RL.QUOTA qr:0 10 DAY");
    CHECK(!w.ok && strncmp(w.error, "READONLY", 8) == 0);
    CHECK(rl(rc, "RL.QUOTA_RO qr:0 10 DAY").ok);
    redisFree(rc);
    server_stop(rep);
    for (int k = 0; k < NK; k++) freeReplyObject(cmd(c, "DEL qr:%d", k));
}

static void test_aof(void) {
    server *a = server_start(server_aof_always);
    redisContext *ac = server_connect(a);
    enum { NK = 8 };
    mixed_calls(ac, "qa", NK, 300);
    char *before[NK];
    size_t len[NK];
    long long expire[NK];
    char key[32];
    int present = 0;
    for (int k = 0; k < NK; k++) {
        snprintf(key, sizeof key, "qa:%d", k);
        before[k] = dump_key(ac, key, &len[k]);
        expire[k] = cmd_int(ac, "PEXPIRETIME %s", key);
        present += before[k] != NULL;
    }
    if (!CHECK(present >= NK / 2)) fprintf(stderr, "     only %d keys left\n", present);
    for (int round = 0; round < 2; round++) {
        ac = aof_replay_round(a, ac, round);
        for (int k = 0; k < NK; k++) {
            snprintf(key, sizeof key, "qa:%d", k);
            size_t l;
            char *after = dump_key(ac, key, &l);
            int same = (!after && !before[k]) || (after && before[k] && l == len[k] && memcmp(after, before[k], l) == 0);
            if (!CHECK(same)) fprintf(stderr, "     AOF round %d: %s differs\n", round, key);
            CHECK_EQ(cmd_int(ac, "PEXPIRETIME %s", key), expire[k]);
            free(after);
        }
    }
    for (int k = 0; k < NK; k++) free(before[k]);
    redisFree(ac);
    server_stop(a);
}

int main(void) {
    static const suite_test tests[] = {test_day_and_week, test_months, test_options, test_all, test_key,
                                       test_replica, test_aof, NULL};
    return server_suite("integration_quota", &srv, &c, tests);
}
