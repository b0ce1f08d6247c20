/* integration_lockout_log.c -- locks beyond the cell limiters' own (integration_lockout.c has those): on the
 * sliding log (LOCKOUT on RL.SLIDINGLOG and RL.ALL's SLIDINGLOG clause, RL.BLOCK of a log), on a concurrency
 * limit's keys (RL.BLOCK: RL.ACQUIRE takes no LOCKOUT), and on RL.QUOTA, against a real redis-server with the
 * module, on the frozen test clock.
 *
 * The idea: a log keeps its lock as one member at score -inf, which must never count as an attempt. So a
 * locked log is run beside a twin that gets the same calls and has no lock: every reply's count, the units
 * above -inf (member names, running totals included) and the member count must be the twin's, through the
 * window's trimming, the limit + 1 cap, REFUND, MINGAP and COST; only the lock member differs. A replica is
 * attached throughout and compared member for member (ZRANGE WITHSCORES), since the lowest members' removal
 * replicates by name once a lock member sits below them. Everything a lock promises is checked as a client sees
 * it: the six fields (retry the later of the lock and the limiter, reset covering the record), RL.LOCKINFO,
 * the key's expiry, and, while it holds, that nothing is written (members, DUMP, replication offset, events).
 * The locks must outlive AOF (as written and rewritten, after kill -9), DEBUG RELOAD and DUMP/RESTORE. */
#include <stdlib.h>
#include <string.h>

#include "clients.h"
#include "effect_checks.h"
#include "lock_checks.h"
#include "rl_checks.h"
#include "server.h"
#include "suite.h"

static server *srv, *rep;
static redisContext *c, *rc; /* the primary, and its replica (attached for the whole suite) */

#define T0 1700000000000LL /* a frozen test-clock instant (ms): 2023-11-14 22:13:20 UTC */
#define MIDNIGHT 1700006400000LL /* the next UTC midnight after T0 */

static void clock_set(long long ms) { CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", ms)); }
static void clock_advance(long long ms) { CHECK(cmd_status_is(c, "OK", "RL.CLOCK ADVANCE %lld", ms)); }
static void del(const char *key) { freeReplyObject(cmd(c, "DEL %s", key)); }

#define CHECK_LOCK(key, want_ms, want_strikes) CHECK_LOCK_ON(c, key, want_ms, want_strikes)

static void check_expiry(const char *key, long long reset_after_ms) { check_expiry_on(c, key, reset_after_ms); }

static long long repl_offset(void) { return info_field(c, "replication", "master_repl_offset"); }

static void check_type(const char *key, const char *want) {
    redisReply *t = cmd(c, "TYPE %s", key);
    CHECK_STR(t->type == REDIS_REPLY_STATUS ? t->str : "(not a status)", want);
    freeReplyObject(t);
}

/* --- the sliding log's members ----------------------------------------------------------------------------- */

/* The members above -inf (the attempts), with their scores, as one line; the caller frees. */
static char *units_text(redisContext *ctx, const char *key) {
    redisReply *x = cmd(ctx, "ZRANGEBYSCORE %s (-inf +inf WITHSCORES", key);
    char *text = reply_words(x);
    freeReplyObject(x);
    return text;
}

/* The lock members: those at -inf whose name is a lock's. */
static long long lock_members(redisContext *ctx, const char *key) {
    redisReply *x = cmd(ctx, "ZRANGEBYSCORE %s -inf -inf", key);
    long long n = 0;
    for (size_t i = 0; x->type == REDIS_REPLY_ARRAY && i < x->elements; i++)
        n += strncmp(x->element[i]->str, "rl-lock:", 8) == 0;
    freeReplyObject(x);
    return n;
}

/* One check: key's units are exactly want ("" for none). */
static void check_units(const char *key, const char *want) {
    char *got = units_text(c, key);
    if (!CHECK(strcmp(got, want) == 0)) fprintf(stderr, "     %s: %s\n     want: %s\n", key, got, want);
    free(got);
}

/* Two checks: the replica has caught up, and key is member for member the primary's (scores included). */
static void check_same_members(const char *key) {
    check_replica_caught_up(c);
    char *p = zset_text(c, key), *r = zset_text(rc, key);
    if (!CHECK(strcmp(p, r) == 0)) fprintf(stderr, "     %s on the primary: %s\n     on the replica: %s\n", key, p, r);
    free(p);
    free(r);
}

static void start_replica(void) {
    rep = replica_start(srv);
    rc = server_connect(rep);
}

/* --- a lock starts at a denial, and holds ------------------------------------------------------------------ */

/* The log's own retry is the later: 3 units at T0 in a window of 10 s keep a limit of 2 full until T0 + 10 s,
 * after a lock of 1 s. The denied attempt is logged, then nothing is while the lock holds. */
static void test_log_lock_starts(void) {
    del("ll:a");
    clock_set(T0);
    const char *line = "RL.SLIDINGLOG ll:a 2 10000 LOCKOUT 1000";
    CHECK_RL(rl(c, "%s", line), 1, 2, 1, -1, 10000, 0);
    CHECK_RL(rl(c, "%s", line), 1, 2, 0, -1, 10000, 0);
    CHECK_EQ(lock_members(c, "ll:a"), 0);
    CHECK_RL(rl(c, "%s", line), 0, 2, 0, 10000, 10000, 0); /* the record ends at 2 s: the log's 10 s cover it */
    CHECK_LOCK("ll:a", 1000, 1);
    check_expiry("ll:a", 10000);
    check_units("ll:a", "1700000000000000-0:3:2:0 1700000000000000 "); /* the three attempts, one member */
    CHECK_EQ(lock_members(c, "ll:a"), 1);
    CHECK_EQ(cmd_int(c, "ZCARD ll:a"), 2);
    check_same_members("ll:a");
    clock_advance(500);
    CHECK_RL(rl(c, "%s", line), 0, 2, 0, 9500, 9500, 0); /* the log's own retry, not logged */
    CHECK_RL(rl(c, "RL.SLIDINGLOG ll:a 2 10000"), 0, 2, 0, 9500, 9500, 0);
    check_units("ll:a", "1700000000000000-0:3:2:0 1700000000000000 ");
    CHECK_LOCK("ll:a", 500, 1);
    del("ll:a");

    /* The lock is the later: a window of 1 s, a lock of 5 s forgiven 5 s after it. */
    del("ll:b");
    clock_set(T0);
    line = "RL.SLIDINGLOG ll:b 2 1000 LOCKOUT 5000";
    CHECK_RL(rl(c, "%s", line), 1, 2, 1, -1, 1000, 0);
    CHECK_RL(rl(c, "%s", line), 1, 2, 0, -1, 1000, 0);
    CHECK_RL(rl(c, "%s", line), 0, 2, 0, 5000, 10000, 0);
    check_expiry("ll:b", 10000);
    long long expiry = cmd_int(c, "PEXPIRETIME ll:b");
    clock_advance(2000); /* the log's units have left its window: it alone would admit */
    CHECK_RL(rl(c, "%s", line), 0, 2, 0, 3000, 8000, 0);
    CHECK_EQ(cmd_int(c, "PEXPIRETIME ll:b"), expiry); /* nothing written */
    check_units("ll:b", "1700000000000000-0:3:2:0 1700000000000000 "); /* not even trimmed */
    clock_advance(3000); /* the lock is over; its strike lives 5 s more */
    CHECK_RL(rl(c, "%s", line), 1, 2, 1, -1, 5000, 0);
    CHECK_LOCK("ll:b", 0, 1);
    check_units("ll:b", "1700000005000000-0:1:2:2 1700000005000000 "); /* the old member trimmed, the totals on */
    CHECK_EQ(lock_members(c, "ll:b"), 1);
    check_same_members("ll:b");
    check_expiry("ll:b", 5000);
    clock_advance(5000);
    CHECK_LOCK("ll:b", 0, 0); /* forgiven */
    CHECK_EQ(lock_members(c, "ll:b"), 1); /* until a call drops the record */
    CHECK_RL(rl(c, "RL.SLIDINGLOG ll:b 2 1000"), 1, 2, 1, -1, 1000, 0);
    CHECK_EQ(lock_members(c, "ll:b"), 0);
    CHECK_EQ(cmd_int(c, "ZCARD ll:b"), 1);
    check_expiry("ll:b", 1000);
    check_same_members("ll:b");
    /* A forgiven record on a log that has gone idle: a look drops it, and the empty key with it. */
    CHECK_RL(rl(c, "%s", line), 1, 2, 0, -1, 1000, 0);
    CHECK_RL(rl(c, "%s", line), 0, 2, 0, 5000, 10000, 0);
    clock_advance(10000);
    CHECK_LOCK("ll:b", 0, 0);
    CHECK_EQ(lock_members(c, "ll:b"), 1);
    CHECK_RL(rl(c, "RL.SLIDINGLOG ll:b 2 1000 COST 0"), 1, 2, 2, -1, 0, 0);
    CHECK_EQ(cmd_int(c, "EXISTS ll:b"), 0);
    check_same_members("ll:b");
}

/* A flood during a lock writes nothing: no member, no byte of the DUMP, no replication, no event, WATCH holds.
 * Every kind of call is denied with the lock's retry (-1 stays -1 for a cost above the limit). */
static void test_log_flood(void) {
    del("ll:flood");
    clock_set(T0);
    CHECK(cmd_status_is(c, "OK", "CONFIG SET repl-ping-replica-period 3600")); /* no PING moves the offset */
    CHECK(rl(c, "RL.SLIDINGLOG ll:flood 1 1000 LOCKOUT 60000").allowed == 1);
    CHECK_RL(rl(c, "RL.SLIDINGLOG ll:flood 1 1000 LOCKOUT 60000"), 0, 1, 0, 60000, 120000, 0);
    check_same_members("ll:flood");
    size_t before_len, after_len;
    char *before = dump_key(c, "ll:flood", &before_len);
    long long offset = repl_offset(), expiry = cmd_int(c, "PEXPIRETIME ll:flood");
    long long locked = info_field(c, "ratelimit", "ratelimit_slidinglog_locked");
    clock_advance(1500); /* the log alone would admit: its units have left the window */
    static const char *const flood[] = {"LOCKOUT 60000", "", "COST 0", "REFUND 1", "MINGAP 10",
                                        "LOCKOUT 10 BACKOFF 2", "DRYRUN"};
    const int nflood = sizeof flood / sizeof flood[0];
    for (int round = 0; round < 10; round++)
        for (int i = 0; i < nflood; i++)
            CHECK_RL(rl(c, "RL.SLIDINGLOG ll:flood 1 1000 %s", flood[i]), 0, 1, 0, 58500, 118500, 0);
    CHECK_RL(rl(c, "RL.SLIDINGLOG ll:flood 1 1000 COST 2"), 0, 1, 0, -1, 118500, 0); /* never fits */
    CHECK_RL(rl(c, "RL.SLIDINGLOG_RO ll:flood 1 1000"), 0, 1, 0, 58500, 118500, 0);
    CHECK_EQ(info_field(c, "ratelimit", "ratelimit_slidinglog_locked"), locked + 10 * nflood + 1);
    CHECK_EQ(repl_offset(), offset);
    char *after = dump_key(c, "ll:flood", &after_len);
    CHECK(before && after && before_len == after_len && memcmp(before, after, before_len) == 0);
    free(before);
    free(after);
    CHECK_EQ(cmd_int(c, "PEXPIRETIME ll:flood"), expiry);
    CHECK_EQ(cmd_int(c, "ZCARD ll:flood"), 2); /* the two attempts' member (one µs), and the lock */
    CHECK(watch_survives(srv, c, "ll:flood", "RL.SLIDINGLOG ll:flood 1 1000 LOCKOUT 60000"));
    del("watch:side");
    static const char *const quiet[] = {"RL.SLIDINGLOG ll:flood 1 1000 LOCKOUT 60000", "RL.SLIDINGLOG ll:flood 1 1000",
                                        "RL.SLIDINGLOG ll:flood 1 1000 REFUND 1", "RL.LOCKINFO ll:flood", NULL};
    check_events(srv, c, "Ed", "RL.BLOCK ll:flood 90000", "rl.block ll:flood", quiet, "RL.UNBLOCK ll:flood",
                 "rl.unblock ll:flood");
    CHECK(cmd_status_is(c, "OK", "CONFIG SET repl-ping-replica-period 10"));
    check_same_members("ll:flood");
    del("ll:flood");
}

/* Repeat offences: 1 s, then 3, 9, at most 20 s (BACKOFF 3, MAXLOCK 20000), forgiven 50 s after a lock ends;
 * RL.BLOCK keeps the strikes; after forgiveness the next offence is a first one again. */
static void test_log_escalation(void) {
    del("ll:esc");
    clock_set(T0);
    const char *line = "RL.SLIDINGLOG ll:esc 1 100 LOCKOUT 1000 BACKOFF 3 MAXLOCK 20000 FORGIVE 50000";
    long long lengths[] = {1000, 3000, 9000, 20000, 20000};
    for (int n = 0; n < 5; n++) {
        CHECK_RL(rl(c, "%s", line), 1, 1, 0, -1, n == 0 ? 100 : 50000, 0);
        CHECK_RL(rl(c, "%s", line), 0, 1, 0, lengths[n], lengths[n] + 50000, 0);
        CHECK_LOCK("ll:esc", lengths[n], n + 1);
        check_expiry("ll:esc", lengths[n] + 50000);
        CHECK_EQ(lock_members(c, "ll:esc"), 1);
        check_same_members("ll:esc");
        clock_advance(lengths[n]);
        CHECK_LOCK("ll:esc", 0, n + 1);
    }
    CHECK(cmd_status_is(c, "OK", "RL.BLOCK ll:esc 2000")); /* by hand: no strike, the strikes kept */
    CHECK_LOCK("ll:esc", 2000, 5);
    CHECK_RL(rl(c, "%s", line), 0, 1, 0, 2000, 50000, 0);
    clock_advance(2000);
    CHECK_LOCK("ll:esc", 0, 5);
    clock_advance(47999);
    CHECK_LOCK("ll:esc", 0, 5);
    clock_advance(1);
    CHECK_LOCK("ll:esc", 0, 0);
    CHECK_RL(rl(c, "%s", line), 1, 1, 0, -1, 100, 0); /* the record dropped */
    CHECK_EQ(lock_members(c, "ll:esc"), 0);
    CHECK_RL(rl(c, "%s", line), 0, 1, 0, 1000, 51000, 0); /* a first offence again */
    CHECK_LOCK("ll:esc", 1000, 1);
    check_same_members("ll:esc");
    del("ll:esc");
}

/* --- the lock member is no attempt ------------------------------------------------------------------------- */

/* Run line (with %s for the key) on the locked log and on its twin: the same reply, but reset_after, which on
 * the locked one also covers the record (which ends record_left_ms from now); the same units. */
static void twin_step(const char *fmt, long long record_left_ms) {
    char line_lock[256], line_twin[256];
    snprintf(line_lock, sizeof line_lock, fmt, "ll:lock");
    snprintf(line_twin, sizeof line_twin, fmt, "ll:twin");
    rl_result a = rl(c, "%s", line_lock), b = rl(c, "%s", line_twin);
    long long want_reset = b.reset_after_ms > record_left_ms ? b.reset_after_ms : record_left_ms;
    if (!CHECK(a.ok && b.ok && a.allowed == b.allowed && a.remaining == b.remaining &&
               a.retry_after_ms == b.retry_after_ms && a.reset_after_ms == want_reset && a.wait_ms == b.wait_ms))
        fprintf(stderr, "     %s: %lld %lld %lld %lld, the twin %lld %lld %lld %lld\n", line_lock, a.allowed,
                a.remaining, a.retry_after_ms, a.reset_after_ms, b.allowed, b.remaining, b.retry_after_ms,
                b.reset_after_ms);
    char *ua = units_text(c, "ll:lock"), *ub = units_text(c, "ll:twin");
    if (!CHECK(strcmp(ua, ub) == 0)) fprintf(stderr, "     after %s: %s\n     the twin: %s\n", line_lock, ua, ub);
    free(ua);
    free(ub);
    CHECK_EQ(lock_members(c, "ll:lock"), 1);
    CHECK_EQ(cmd_int(c, "ZCARD ll:lock"), cmd_int(c, "ZCARD ll:twin") + 1);
}

/* A lock of 500 ms forgiven 10^6 ms later: its record (the member) lives through every step below, while the
 * log trims what leaves its window, cuts what is beyond the newest limit + 1 units, refunds, and counts. */
static void test_log_lock_member_counts_nothing(void) {
    freeReplyObject(cmd(c, "DEL ll:lock ll:twin"));
    clock_set(T0);
    for (int i = 0; i < 3; i++) {
        CHECK_RL(rl(c, "RL.SLIDINGLOG ll:lock 3 1000 LOCKOUT 500 FORGIVE 1000000"), 1, 3, 2 - i, -1, 1000, 0);
        CHECK_RL(rl(c, "RL.SLIDINGLOG ll:twin 3 1000"), 1, 3, 2 - i, -1, 1000, 0);
    }
    CHECK_RL(rl(c, "RL.SLIDINGLOG ll:lock 3 1000 LOCKOUT 500 FORGIVE 1000000"), 0, 3, 0, 1000, 1000500, 0);
    CHECK_RL(rl(c, "RL.SLIDINGLOG ll:twin 3 1000"), 0, 3, 0, 1000, 1000, 0);
    clock_advance(500); /* the lock is over, its record lives on */
    long long record_end = 1000500, now = 500;
    static const struct {
        long long advance;
        const char *args;
    } steps[] = {
        {0, "COST 0"},          {100, ""},         /* denied: logged, the cap cuts the oldest units */
        {0, "COST 2"},          {0, "COST 3"},     /* more units at one instant: the cap cuts into that member */
        {450, "COST 1"},        {500, "COST 2"},   /* the T0 units leave the window: the lowest go, by name */
        {10, "MINGAP 300"},     {100, "MINGAP 50"}, {0, "REFUND 1"}, {0, "REFUND 5"},
        {20, "COST 2"},         {0, "DRYRUN"},     {1, "COST 1 DRYRUN"}, {700, ""},
        {1, "COST 4"},          {2, ""},           {3, "REFUND 2"}, {2000, "COST 0"}, /* all gone */
        {5, "COST 3"},          {1, ""},
    };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        if (steps[i].advance) clock_advance(steps[i].advance);
        now += steps[i].advance;
        char fmt[128];
        snprintf(fmt, sizeof fmt, "RL.SLIDINGLOG %%s 3 1000 %s", steps[i].args);
        twin_step(fmt, record_end - now);
        check_same_members("ll:lock");
        check_same_members("ll:twin");
    }
    CHECK_LOCK("ll:lock", 0, 1);
    /* Forgiven: the next call drops the record, and the two logs are the same set. */
    clock_advance(record_end - now);
    CHECK_LOCK("ll:lock", 0, 0);
    CHECK_EQ(rl(c, "RL.SLIDINGLOG ll:lock 3 1000").allowed, rl(c, "RL.SLIDINGLOG ll:twin 3 1000").allowed);
    char *a = zset_text(c, "ll:lock"), *b = zset_text(c, "ll:twin");
    CHECK_STR(a, b);
    free(a);
    free(b);
    check_same_members("ll:lock");
    freeReplyObject(cmd(c, "DEL ll:lock ll:twin"));
}

/* --- RL.BLOCK, RL.UNBLOCK, RL.LOCKINFO on a log ------------------------------------------------------------- */

static void test_log_block(void) {
    del("ll:blk");
    clock_set(T0);
    CHECK_RL(rl(c, "RL.SLIDINGLOG ll:blk 5 10000 COST 2"), 1, 5, 3, -1, 10000, 0);
    long long own_expiry = cmd_int(c, "PEXPIRETIME ll:blk");
    char *units = units_text(c, "ll:blk");
    CHECK(cmd_status_is(c, "OK", "RL.BLOCK ll:blk 3000"));
    CHECK_LOCK("ll:blk", 3000, 0);
    CHECK_EQ(cmd_int(c, "PEXPIRETIME ll:blk"), own_expiry); /* the log outlives the lock */
    CHECK_EQ(lock_members(c, "ll:blk"), 1);
    check_units("ll:blk", units);
    check_same_members("ll:blk");
    CHECK_RL(rl(c, "RL.SLIDINGLOG ll:blk 5 10000"), 0, 5, 0, 3000, 10000, 0);
    CHECK(cmd_status_is(c, "OK", "RL.BLOCK ll:blk 20000")); /* replaces the end: now the later */
    CHECK_LOCK("ll:blk", 20000, 0);
    check_expiry("ll:blk", 20000);
    CHECK_RL(rl(c, "RL.SLIDINGLOG ll:blk 5 10000"), 0, 5, 0, 20000, 20000, 0);
    check_units("ll:blk", units);
    check_same_members("ll:blk");
    clock_advance(1000);
    CHECK_EQ(cmd_int(c, "RL.UNBLOCK ll:blk"), 1);
    CHECK_LOCK("ll:blk", 0, 0);
    CHECK_EQ(lock_members(c, "ll:blk"), 0);
    CHECK_EQ(cmd_int(c, "PEXPIRETIME ll:blk"), own_expiry); /* back to the log's own */
    check_units("ll:blk", units);
    check_same_members("ll:blk");
    check_same_expiry_on_replica(c, rc, "ll:blk");
    CHECK_EQ(cmd_int(c, "RL.UNBLOCK ll:blk"), 0);
    CHECK_RL(rl(c, "RL.SLIDINGLOG ll:blk 5 10000"), 1, 5, 2, -1, 10000, 0);
    free(units);
    del("ll:blk");

    /* A new key: a lock alone, which RL.SLIDINGLOG reads as a new log under the lock, then a log with no lock. */
    del("ll:new");
    CHECK(cmd_status_is(c, "OK", "RL.BLOCK ll:new 4000"));
    check_type("ll:new", "rl-locked");
    CHECK_RL(rl(c, "RL.SLIDINGLOG ll:new 3 1000 LOCKOUT 10"), 0, 3, 0, 4000, 4000, 0);
    CHECK_RL(rl(c, "RL.SLIDINGLOG_RO ll:new 3 1000"), 0, 3, 0, 4000, 4000, 0);
    CHECK_RL(rl(c, "RL.SLIDINGLOG ll:new 3 1000 COST 4"), 0, 3, 0, -1, 4000, 0);
    check_type("ll:new", "rl-locked");
    CHECK_LOCK("ll:new", 4000, 0);
    check_expiry("ll:new", 4000);
    clock_advance(4000);
    CHECK_RL(rl(c, "RL.SLIDINGLOG ll:new 3 1000"), 1, 3, 2, -1, 1000, 0);
    check_type("ll:new", "zset");
    CHECK_EQ(cmd_int(c, "ZCARD ll:new"), 1);
    CHECK_EQ(lock_members(c, "ll:new"), 0);
    CHECK_LOCK("ll:new", 0, 0);
    check_expiry("ll:new", 1000);
    check_same_members("ll:new");
    /* A lock alone whose strikes live on (a LOCKOUT denial on a blocked new key's successor): the log it becomes
     * keeps them in its member. */
    del("ll:new");
    CHECK(cmd_status_is(c, "OK", "RL.BLOCK ll:new 1000"));
    clock_advance(1000);
    CHECK_RL(rl(c, "RL.SLIDINGLOG ll:new 1 1000 LOCKOUT 2000"), 1, 1, 0, -1, 1000, 0);
    CHECK_RL(rl(c, "RL.SLIDINGLOG ll:new 1 1000 LOCKOUT 2000"), 0, 1, 0, 2000, 4000, 0);
    CHECK_LOCK("ll:new", 2000, 1);
    CHECK_EQ(lock_members(c, "ll:new"), 1);
    check_same_members("ll:new");
    del("ll:new");
}

/* RL.ALL with a SLIDINGLOG clause that locks: a denied call logs no attempt (RL.ALL's rule), and writes the lock
 * member alone; the other key is untouched. */
/* A look (DRYRUN, _RO, RL.ALL_RO) with LOCKOUT at a log that does not exist: a read-only open gives no key at
 * all, whose expiry the storage must not ask for (it did: the server crashed). It answers, writes nothing. */
static void test_log_look_missing(void) {
    freeReplyObject(cmd(c, "DEL {m}log {m}tok"));
    static const char *const looks[] = {
        "RL.SLIDINGLOG_RO {m}log 5 1000 LOCKOUT 100",
        "RL.SLIDINGLOG {m}log 5 1000 LOCKOUT 100 DRYRUN",
        "RL.ALL_RO 2 {m}log {m}tok LIMIT SLIDINGLOG 5 1000 LOCKOUT 100 LIMIT TOKEN 10 1 1000",
    };
    for (size_t i = 0; i < sizeof looks / sizeof looks[0]; i++) {
        redisReply *x = cmdline(c, "%s", looks[i]);
        if (!CHECK(x && x->type == REDIS_REPLY_ARRAY && x->elements >= 5 &&
                   (x->element[0]->type != REDIS_REPLY_INTEGER || x->element[0]->integer == 1)))
            fprintf(stderr, "     %s\n", looks[i]);
        freeReplyObject(x);
    }
    CHECK_EQ(cmd_int(c, "EXISTS {m}log {m}tok"), 0);
}

static void test_log_all(void) {
    freeReplyObject(cmd(c, "DEL {b}log {b}tok"));
    clock_set(T0);
    const char *line = "RL.ALL 2 {b}log {b}tok LIMIT SLIDINGLOG 1 10000 LOCKOUT 5000 LIMIT TOKEN 10 1 1000";
    redisReply *x = cmdline(c, "%s", line);
    CHECK(x->type == REDIS_REPLY_ARRAY && x->elements == 5 && x->element[0]->integer == 1);
    freeReplyObject(x);
    char *units = units_text(c, "{b}log");
    size_t n0, n1;
    char *tok = dump_key(c, "{b}tok", &n0);
    x = cmdline(c, "%s", line);
    CHECK(x->type == REDIS_REPLY_ARRAY && x->elements == 5 && x->element[0]->integer == 0 &&
          x->element[1]->integer == 10000); /* the log's own retry (its unit leaves at 10 s): the later */
    if (x->type == REDIS_REPLY_ARRAY && x->elements == 5) {
        long long f[6];
        CHECK(rl_fields(x->element[3], f) && f[0] == 0 && f[2] == 0 && f[3] == 10000 && f[4] == 10000);
    }
    freeReplyObject(x);
    CHECK_LOCK("{b}log", 5000, 1);
    check_units("{b}log", units);
    CHECK_EQ(lock_members(c, "{b}log"), 1);
    char *tok_after = dump_key(c, "{b}tok", &n1);
    CHECK(tok && tok_after && n0 == n1 && memcmp(tok, tok_after, n0) == 0);
    free(tok_after);
    check_same_members("{b}log");
    /* During the lock: nothing is written at all. */
    long long offset = repl_offset();
    clock_advance(2000);
    x = cmdline(c, "%s", line);
    CHECK(x->type == REDIS_REPLY_ARRAY && x->element[0]->integer == 0 && x->element[1]->integer == 8000);
    freeReplyObject(x);
    CHECK_EQ(repl_offset(), offset);
    check_units("{b}log", units);
    CHECK_LOCK("{b}log", 3000, 1);
    /* After the lock and the log's window: admitted, the record (forgiven at 10 s) dropped. */
    clock_advance(8000);
    x = cmdline(c, "%s", line);
    CHECK(x->type == REDIS_REPLY_ARRAY && x->element[0]->integer == 1);
    freeReplyObject(x);
    CHECK_EQ(lock_members(c, "{b}log"), 0);
    CHECK_EQ(cmd_int(c, "ZCARD {b}log"), 1);
    check_same_members("{b}log");
    free(units);
    free(tok);
    freeReplyObject(cmd(c, "DEL {b}log {b}tok"));
}

/* --- concurrency keys ---------------------------------------------------------------------------------------- */

/* An RL.ACQUIRE reply's lease: 1 when it is a string (a lease taken), 0 when nil. */
static int acquire_leased(const char *line, rl_result *r) {
    redisReply *x = cmdline(c, "%s", line);
    *r = rl_of(x);
    int leased = x->type == REDIS_REPLY_ARRAY && x->elements == 7 && x->element[6]->type == REDIS_REPLY_STRING;
    freeReplyObject(x);
    return leased;
}

static long long leases_held(const char *key) {
    redisReply *x = cmd(c, "RL.LEASES %s", key);
    long long n = x->type == REDIS_REPLY_ARRAY ? (long long)x->elements : -1;
    freeReplyObject(x);
    return n;
}

/* RL.BLOCK on a pool: every acquire denied (a renewal by ID too), nothing made or written; RL.RELEASE and
 * RL.RENEW work; the last lease released leaves the lock alone, and after it a new pool. */
static void test_leases_blocked(void) {
    del("ll:pool");
    clock_set(T0);
    rl_result r;
    CHECK(acquire_leased("RL.ACQUIRE ll:pool 3 10000 ID a", &r) && r.allowed == 1);
    CHECK(cmd_status_is(c, "OK", "RL.BLOCK ll:pool 5000"));
    CHECK_LOCK("ll:pool", 5000, 0);
    check_expiry("ll:pool", 10000);
    check_type("ll:pool", "rl-leases");
    check_replicated(c, rc, "ll:pool", NULL);
    size_t n0, n1;
    char *before = dump_key(c, "ll:pool", &n0);
    long long offset = repl_offset(), locked = info_field(c, "ratelimit", "ratelimit_acquire_locked");
    static const char *const denied[] = {"RL.ACQUIRE ll:pool 3 10000", "RL.ACQUIRE ll:pool 3 10000 ID b",
                                         "RL.ACQUIRE ll:pool 3 10000 ID a", "RL.ACQUIRE ll:pool 3 10000 COST 2",
                                         "RL.ACQUIRE ll:pool 3 10000 DRYRUN", "RL.ACQUIRE_RO ll:pool 3 10000"};
    for (size_t i = 0; i < sizeof denied / sizeof denied[0]; i++) {
        CHECK(!acquire_leased(denied[i], &r));
        CHECK_RL(r, 0, 3, 0, 5000, 10000, 0);
    }
    CHECK(!acquire_leased("RL.ACQUIRE ll:pool 3 10000 COST 4", &r)); /* never fits */
    CHECK_RL(r, 0, 3, 0, -1, 10000, 0);
    CHECK_EQ(info_field(c, "ratelimit", "ratelimit_acquire_locked"), locked + 6); /* (the _RO form apart) */
    CHECK_EQ(repl_offset(), offset);
    char *after = dump_key(c, "ll:pool", &n1);
    CHECK(before && after && n0 == n1 && memcmp(before, after, n0) == 0);
    free(before);
    free(after);
    CHECK_EQ(leases_held("ll:pool"), 1);
    /* RL.RENEW and RL.RELEASE still work, and keep the lock. */
    CHECK_EQ(cmd_int(c, "RL.RENEW ll:pool a 20000"), 1);
    CHECK_LOCK("ll:pool", 5000, 0);
    check_expiry("ll:pool", 20000);
    check_replicated(c, rc, "ll:pool", NULL);
    check_same_expiry_on_replica(c, rc, "ll:pool");
    clock_advance(1000);
    CHECK_EQ(cmd_int(c, "RL.RELEASE ll:pool a"), 1);
    check_type("ll:pool", "rl-locked"); /* the lock alone */
    CHECK_LOCK("ll:pool", 4000, 0);
    check_expiry("ll:pool", 4000);
    CHECK_EQ(leases_held("ll:pool"), 0);
    CHECK(!acquire_leased("RL.ACQUIRE ll:pool 3 10000", &r));
    CHECK_RL(r, 0, 3, 0, 4000, 4000, 0);
    check_type("ll:pool", "rl-locked");
    check_replicated(c, rc, "ll:pool", NULL);
    check_same_expiry_on_replica(c, rc, "ll:pool");
    CHECK_EQ(cmd_int(c, "RL.RELEASE ll:pool a"), 0);
    clock_advance(4000);
    CHECK(acquire_leased("RL.ACQUIRE ll:pool 3 10000", &r)); /* a new pool */
    CHECK_RL(r, 1, 3, 2, -1, 10000, 0);
    check_type("ll:pool", "rl-leases");
    CHECK_LOCK("ll:pool", 0, 0);
    check_expiry("ll:pool", 10000);
    /* RL.UNBLOCK: the key's expiry back to its last lease's end. */
    CHECK(cmd_status_is(c, "OK", "RL.BLOCK ll:pool 60000"));
    check_expiry("ll:pool", 60000);
    clock_advance(100);
    CHECK_EQ(cmd_int(c, "RL.UNBLOCK ll:pool"), 1);
    CHECK_LOCK("ll:pool", 0, 0);
    check_expiry("ll:pool", 9900);
    CHECK(acquire_leased("RL.ACQUIRE ll:pool 3 10000", &r));
    CHECK_RL(r, 1, 3, 1, -1, 10000, 0);
    check_replicated(c, rc, "ll:pool", NULL);
    check_same_expiry_on_replica(c, rc, "ll:pool");
    del("ll:pool");
}

/* WAIT on a locked pool: the waiter is decided at the lock's end (the clock moved), not before; RL.UNBLOCK
 * admits it at once. */
static void test_leases_wait(void) {
    del("ll:wq");
    clock_set(T0);
    CHECK(cmd_status_is(c, "OK", "RL.BLOCK ll:wq 5000")); /* a new key: a lock alone */
    pending p = pending_send(srv, "RL.ACQUIRE ll:wq 2 10000 WAIT 60000");
    CHECK(wait_for_waiting(c, 1));
    clock_advance(4999);
    CHECK(!pending_poll(&p, 200)); /* not yet */
    clock_advance(1);
    CHECK(pending_poll(&p, 5000));
    CHECK(p.answered && p.r.ok && p.r.allowed == 1 && p.r.remaining == 1);
    pending_close(&p);
    CHECK_EQ(leases_held("ll:wq"), 1);
    CHECK(cmd_status_is(c, "OK", "RL.BLOCK ll:wq 30000")); /* within the timeout: it waits */
    p = pending_send(srv, "RL.ACQUIRE ll:wq 2 10000 WAIT 60000");
    CHECK(wait_for_waiting(c, 1));
    CHECK(!pending_poll(&p, 100));
    CHECK_EQ(cmd_int(c, "RL.UNBLOCK ll:wq"), 1);
    CHECK(pending_poll(&p, 5000));
    CHECK(p.answered && p.r.ok && p.r.allowed == 1 && p.r.remaining == 0);
    pending_close(&p);
    CHECK_EQ(leases_held("ll:wq"), 2);
    check_replicated(c, rc, "ll:wq", NULL);
    del("ll:wq");
}

/* A lease key with a lock: DUMP/RESTORE and DEBUG RELOAD keep both (the same reply to RL.ACQUIRE_RO, RL.LOCKINFO
 * and the leases). */
static void test_leases_copy_reload(void) {
    freeReplyObject(cmd(c, "DEL ll:lk ll:lkcopy"));
    clock_set(T0);
    CHECK(rl(c, "RL.ACQUIRE ll:lk 3 10000 COST 2").allowed == 1);
    CHECK(cmd_status_is(c, "OK", "RL.BLOCK ll:lk 30000"));
    check_copy_and_reload(c, "RL.ACQUIRE_RO", "ll:lk", "ll:lkcopy", "3 10000", T0);
    CHECK_LOCK("ll:lk", 30000, 0);
    CHECK_LOCK("ll:lkcopy", 30000, 0);
    CHECK_RL(rl(c, "RL.ACQUIRE_RO ll:lkcopy 3 10000"), 0, 3, 0, 30000, 30000, 0);
    CHECK_EQ(leases_held("ll:lkcopy"), 1);
    freeReplyObject(cmd(c, "DEL ll:lk ll:lkcopy"));
}

/* A lease blob (RL.SETSTATE's compact form): one lease "a" of 1 unit acquired at T0, ending at T0 + 10 s, the
 * lock record's three numbers, the key's expiry (absolute, in real time: see expiry_base). */
static size_t lease_blob(unsigned char *out, long long until_us, long long forgive_us, long long strikes,
                         long long expire_at_ms) {
    unsigned char *p = out;
    long long words[] = {(T0 + 10000) * 1000, T0 * 1000};
    *p++ = 'C';
    for (int i = 0; i < 4; i++) *p++ = (unsigned char)(1 >> (8 * i));
    for (int w = 0; w < 2; w++)
        for (int i = 0; i < 8; i++) *p++ = (unsigned char)((unsigned long long)words[w] >> (8 * i));
    for (int i = 0; i < 4; i++) *p++ = (unsigned char)(1 >> (8 * i));
    *p++ = 1;
    *p++ = 'a';
    long long lock[] = {until_us, forgive_us, strikes, expire_at_ms};
    for (int w = 0; w < 4; w++)
        for (int i = 0; i < 8; i++) *p++ = (unsigned char)((unsigned long long)lock[w] >> (8 * i));
    return (size_t)(p - out);
}

/* Crafted lease states with a lock no lock could have are refused, and the key is left as it was. */
static void test_leases_crafted_lock(void) {
    freeReplyObject(cmd(c, "DEL ll:craft ll:pool2"));
    clock_set(T0);
    unsigned char blob[128];
    long long expire_at = expiry_base(c) + 10000;
    size_t len = lease_blob(blob, (T0 + 5000) * 1000, (T0 + 8000) * 1000, 2, expire_at); /* valid: the builder is right */
    redisReply *x = cmd(c, "RL.SETSTATE ll:craft %b", blob, len);
    CHECK(reply_is_status(x, "OK"));
    freeReplyObject(x);
    CHECK_LOCK("ll:craft", 5000, 2);
    CHECK_RL(rl(c, "RL.ACQUIRE_RO ll:craft 3 10000"), 0, 3, 0, 5000, 10000, 0);
    CHECK(rl(c, "RL.ACQUIRE ll:pool2 3 10000").allowed == 1);
    size_t n0, n1;
    char *before = dump_key(c, "ll:pool2", &n0);
    long long expiry = cmd_int(c, "PEXPIRETIME ll:pool2");
    static const long long bad[][3] = {
        {(T0 + 5000) * 1000, (T0 + 4000) * 1000, 1}, /* forgiven before its end */
        {-1, 0, 0},                                  /* an end before 0 */
        {(T0 + 5000) * 1000, (T0 + 6000) * 1000, -1}, /* negative strikes */
        {0, 0, 0},                                   /* a record that says nothing is never written */
        {4000000000000000000LL, 4000000000000000000LL, 0}, /* past the clock's range */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        len = lease_blob(blob, bad[i][0], bad[i][1], bad[i][2], expire_at);
        x = cmd(c, "RL.SETSTATE ll:pool2 %b", blob, len);
        if (!CHECK(x->type == REDIS_REPLY_ERROR && strcmp(x->str, "ERR state: not a valid state of this kind") == 0))
            fprintf(stderr, "     bad lock %zu: %s\n", i, x->type == REDIS_REPLY_ERROR ? x->str : "(accepted)");
        freeReplyObject(x);
        x = cmd(c, "RL.SETSTATE ll:none %b", blob, len);
        CHECK(x->type == REDIS_REPLY_ERROR);
        freeReplyObject(x);
    }
    char *after = dump_key(c, "ll:pool2", &n1);
    CHECK(before && after && n0 == n1 && memcmp(before, after, n0) == 0);
    CHECK_EQ(cmd_int(c, "PEXPIRETIME ll:pool2"), expiry);
    CHECK_EQ(cmd_int(c, "EXISTS ll:none"), 0);
    free(before);
    free(after);
    freeReplyObject(cmd(c, "DEL ll:craft ll:pool2"));
}

/* --- RL.QUOTA ------------------------------------------------------------------------------------------------ */

/* A denied quota call locks; the retry is the later of the lock and the quota's window, the reset covers both. */
static void test_quota(void) {
    freeReplyObject(cmd(c, "DEL ll:q ll:q2"));
    clock_set(T0); /* 6,400 s before midnight: the window is the later */
    const char *line = "RL.QUOTA ll:q 2 DAY LOCKOUT 60000";
    CHECK_RL(rl(c, "%s", line), 1, 2, 1, -1, 6400000, 0);
    CHECK_RL(rl(c, "%s", line), 1, 2, 0, -1, 6400000, 0);
    CHECK_RL(rl(c, "%s", line), 0, 2, 0, 6400000, 6400000, 0);
    CHECK_LOCK("ll:q", 60000, 1);
    check_expiry("ll:q", 6400000);
    clock_advance(30000);
    CHECK_RL(rl(c, "RL.QUOTA ll:q 2 DAY REFUND 2"), 0, 2, 0, 30000, 6370000, 0); /* a refund too: locked */
    CHECK_RL(rl(c, "%s", line), 0, 2, 0, 6370000, 6370000, 0);
    CHECK_RL(rl(c, "RL.QUOTA ll:q 2 DAY COST 0"), 0, 2, 0, 30000, 6370000, 0);
    clock_advance(30000); /* the lock is over: the quota alone denies, and a call without LOCKOUT locks nothing */
    CHECK_RL(rl(c, "RL.QUOTA ll:q 2 DAY"), 0, 2, 0, 6340000, 6340000, 0);
    CHECK_LOCK("ll:q", 0, 1);
    /* the 2nd (FORGIVE given: BACKOFF's default would be MAXLOCK's, the largest period) */
    CHECK_RL(rl(c, "RL.QUOTA ll:q 2 DAY LOCKOUT 60000 BACKOFF 2 FORGIVE 60000"), 0, 2, 0, 6340000, 6340000, 0);
    CHECK_LOCK("ll:q", 120000, 2);
    check_replicated(c, rc, "ll:q", NULL);

    /* 30 s before midnight: the lock is the later; after midnight the quota is new, the lock still holds. */
    clock_set(MIDNIGHT - 30000);
    line = "RL.QUOTA ll:q2 2 DAY LOCKOUT 60000";
    CHECK_RL(rl(c, "%s", line), 1, 2, 1, -1, 30000, 0);
    CHECK_RL(rl(c, "%s", line), 1, 2, 0, -1, 30000, 0);
    CHECK_RL(rl(c, "%s", line), 0, 2, 0, 60000, 120000, 0);
    check_expiry("ll:q2", 120000);
    clock_advance(40000);
    CHECK_RL(rl(c, "%s", line), 0, 2, 0, 20000, 80000, 0);
    clock_advance(20000);
    CHECK_RL(rl(c, "%s", line), 1, 2, 1, -1, 86400000 - 30000, 0);
    CHECK_LOCK("ll:q2", 0, 1);
    check_replicated(c, rc, "ll:q2", NULL);
    check_same_expiry_on_replica(c, rc, "ll:q2");
    freeReplyObject(cmd(c, "DEL ll:q ll:q2"));
}

/* --- persistence --------------------------------------------------------------------------------------------- */

/* Locked keys of every kind this suite adds (made at T0, read at T0 + 1 s): a log whose lock holds, a log whose
 * record outlives its lock, a log blocked by hand, a pool blocked by hand, and a pool made over a lock alone
 * whose lock has ended (its effect replaces the lock alone wherever it is replayed). */
static void make_locked_set(redisContext *ctx) {
    freeReplyObject(cmd(ctx, "DEL ll:p:held ll:p:strikes ll:p:blocked ll:p:pool ll:p:regrown"));
    CHECK(cmd_status_is(ctx, "OK", "RL.CLOCK SET %lld", T0 - 1000));
    CHECK(cmd_status_is(ctx, "OK", "RL.BLOCK ll:p:regrown 500"));
    CHECK(cmd_status_is(ctx, "OK", "RL.CLOCK SET %lld", T0));
    CHECK(rl(ctx, "RL.ACQUIRE ll:p:regrown 2 10000").allowed == 1);
    CHECK(rl(ctx, "RL.SLIDINGLOG ll:p:held 1 10000 LOCKOUT 20000").allowed == 1);
    CHECK(rl(ctx, "RL.SLIDINGLOG ll:p:held 1 10000 LOCKOUT 20000").allowed == 0);
    CHECK(rl(ctx, "RL.SLIDINGLOG ll:p:strikes 1 100 LOCKOUT 500 FORGIVE 60000").allowed == 1);
    CHECK(rl(ctx, "RL.SLIDINGLOG ll:p:strikes 1 100 LOCKOUT 500 FORGIVE 60000").allowed == 0);
    CHECK(rl(ctx, "RL.SLIDINGLOG ll:p:blocked 5 10000 COST 3").allowed == 1);
    CHECK(cmd_status_is(ctx, "OK", "RL.BLOCK ll:p:blocked 30000"));
    CHECK(rl(ctx, "RL.ACQUIRE ll:p:pool 2 10000").allowed == 1);
    CHECK(cmd_status_is(ctx, "OK", "RL.BLOCK ll:p:pool 40000"));
}

static void check_locked_set(redisContext *ctx) {
    lockinfo held = lockinfo_of(ctx, "ll:p:held"), strikes = lockinfo_of(ctx, "ll:p:strikes"),
             blocked = lockinfo_of(ctx, "ll:p:blocked"), pool = lockinfo_of(ctx, "ll:p:pool");
    if (!CHECK(held.ms == 19000 && held.strikes == 1 && strikes.ms == 0 && strikes.strikes == 1 &&
               blocked.ms == 29000 && blocked.strikes == 0 && pool.ms == 39000 && pool.strikes == 0))
        fprintf(stderr, "     [%lld %lld] [%lld %lld] [%lld %lld] [%lld %lld]\n", held.ms, held.strikes, strikes.ms,
                strikes.strikes, blocked.ms, blocked.strikes, pool.ms, pool.strikes);
    CHECK_RL(rl(ctx, "RL.SLIDINGLOG_RO ll:p:held 1 10000"), 0, 1, 0, 19000, 39000, 0); /* forgiven 20 s later */
    CHECK_RL(rl(ctx, "RL.SLIDINGLOG_RO ll:p:blocked 5 10000"), 0, 5, 0, 29000, 29000, 0);
    CHECK_RL(rl(ctx, "RL.ACQUIRE_RO ll:p:pool 2 10000"), 0, 2, 0, 39000, 39000, 0);
    CHECK_RL(rl(ctx, "RL.SLIDINGLOG_RO ll:p:strikes 1 100"), 1, 1, 0, -1, 60000 - 500, 0);
    CHECK_RL(rl(ctx, "RL.ACQUIRE_RO ll:p:regrown 2 10000"), 1, 2, 0, -1, 10000, 0); /* its one lease, and this */
    CHECK_LOCK_ON(ctx, "ll:p:regrown", 0, 0);
    CHECK_EQ(lock_members(ctx, "ll:p:held"), 1);
    CHECK_EQ(lock_members(ctx, "ll:p:strikes"), 1);
    CHECK_EQ(lock_members(ctx, "ll:p:blocked"), 1);
}

/* The sets as text, to compare member for member after a restart. */
static void sets_text(redisContext *ctx, char *out[3]) {
    out[0] = zset_text(ctx, "ll:p:held");
    out[1] = zset_text(ctx, "ll:p:strikes");
    out[2] = zset_text(ctx, "ll:p:blocked");
}

static void check_sets_same(char *before[3], char *after[3]) {
    for (int i = 0; i < 3; i++) {
        if (!CHECK(strcmp(before[i], after[i]) == 0)) fprintf(stderr, "     %s\n     now %s\n", before[i], after[i]);
        free(before[i]);
        free(after[i]);
    }
}

static void test_persistence_replica_reload(void) {
    clock_set(T0);
    make_locked_set(c);
    clock_set(T0 + 1000);
    check_locked_set(c);
    check_replicated(c, rc, "ll:p:held", "ll:p:strikes", "ll:p:blocked", "ll:p:pool", "ll:p:regrown", NULL);
    check_same_members("ll:p:held");
    check_same_members("ll:p:strikes");
    check_same_members("ll:p:blocked");
    CHECK(cmd_status_is(rc, "OK", "RL.CLOCK SET %lld", T0 + 1000));
    check_locked_set(rc);
    char *before[3], *after[3];
    sets_text(c, before);
    CHECK(cmd_status_is(c, "OK", "DEBUG RELOAD"));
    clock_set(T0 + 1000);
    sets_text(c, after);
    check_sets_same(before, after);
    check_locked_set(c);
    freeReplyObject(cmd(c, "DEL ll:p:held ll:p:strikes ll:p:blocked ll:p:pool ll:p:regrown"));
}

static void test_aof(void) {
    server *s = server_start(server_aof_always);
    redisContext *a = server_connect(s);
    for (int round = 0; round < 2; round++) {
        CHECK(cmd_status_is(a, "OK", "RL.CLOCK SET %lld", T0));
        make_locked_set(a);
        char *before[3], *after[3];
        sets_text(a, before);
        a = aof_replay_round(s, a, round);
        CHECK(cmd_status_is(a, "OK", "RL.CLOCK SET %lld", T0 + 1000));
        sets_text(a, after);
        check_sets_same(before, after);
        check_locked_set(a);
    }
    redisFree(a);
    server_stop(s);
}

static void test_start_replica(void) {
    start_replica();
    CHECK(rc != NULL);
}

static void test_stop_replica(void) {
    redisFree(rc);
    server_stop(rep);
    rc = NULL;
    rep = NULL;
}

int main(void) {
    static const suite_test tests[] = {test_start_replica, test_log_lock_starts, test_log_flood,
        test_log_escalation, test_log_lock_member_counts_nothing, test_log_block, test_log_look_missing, test_log_all,
        test_leases_blocked, test_leases_wait, test_leases_copy_reload, test_leases_crafted_lock, test_quota,
        test_persistence_replica_reload, test_stop_replica, test_aof, NULL};
    return server_suite("integration_lockout_log", &srv, &c, tests);
}
