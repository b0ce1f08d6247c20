/* integration_lockout.c -- lockouts (LOCKOUT ms [BACKOFF f] [MAXLOCK ms] [FORGIVE ms], RL.BLOCK, RL.UNBLOCK,
 * RL.LOCKINFO) against a real redis-server with the module, on the frozen test clock.
 *
 * The idea: a lock is judged by what a client can see of it, all of it checked together at every step: each
 * reply's six fields, RL.LOCKINFO's [lock_ms, strikes], and the key's expiry, which must cover the lock record
 * exactly (PEXPIRETIME = the clock's base + reset_after_ms; the base is read from a plain token bucket set at
 * the same instant, since the frozen clock's expiries sit an offset away from real time). A locked key must
 * write nothing (same DUMP, no event, WATCH survives, no replication traffic), and the lock must outlive every
 * way a key travels: replica, AOF (as written and rewritten), DEBUG RELOAD, DUMP/RESTORE and COPY. */
#include <stdlib.h>
#include <string.h>

#include "clients.h"
#include "effect_checks.h"
#include "lock_checks.h"
#include "rl_checks.h"
#include "server.h"
#include "suite.h"

static server *srv;
static redisContext *c;

#define T0 1700000000000LL /* a frozen test-clock instant (ms) */
#define HOUR 3600000LL
#define DAY (24 * HOUR)

static void clock_set(long long ms) { CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", ms)); }
static void clock_advance(long long ms) { CHECK(cmd_status_is(c, "OK", "RL.CLOCK ADVANCE %lld", ms)); }
static void del(const char *key) { freeReplyObject(cmd(c, "DEL %s", key)); }

#define CHECK_LOCK(key, want_ms, want_strikes) CHECK_LOCK_ON(c, key, want_ms, want_strikes)

/* The key lives exactly as long as the reply says its record (or state) does. */
static void check_expiry(const char *key, long long reset_after_ms) { check_expiry_on(c, key, reset_after_ms); }

static long long counter(const char *field) { return info_field(c, "ratelimit", field); }

/* --- the example --------------------------------------------------------------------------------- */

/* 5 failed logins per 15 minutes per account (fixed windows); the 6th locks for 1 hour, the next offence 2
 * hours, then 4, ... at most 24 hours; the strikes are forgiven after a day without a lock. T0 is 800 s into
 * its 15-minute window, so the window itself resets 100 s later. */
#define LOGIN "RL.WINDOW login:alice 5 900000 FIXED LOCKOUT 3600000 BACKOFF 2 MAXLOCK 86400000 FORGIVE 86400000"

/* Five attempts admitted in a fresh window (remaining 4..0, the window's own reset), then the sixth locks for
 * lock_ms, the strikes-th lock: its reply, RL.LOCKINFO and the key's expiry; a seventh is denied by the lock
 * alone (same reply). */
static void login_round(long long window_reset_ms, long long lock_ms, long long strikes) {
    for (int i = 0; i < 5; i++) {
        rl_result r = rl(c, LOGIN);
        CHECK_RL(r, 1, 5, 4 - i, -1, window_reset_ms, 0);
    }
    check_expiry("login:alice", window_reset_ms);
    rl_result r = rl(c, LOGIN);
    CHECK_RL(r, 0, 5, 0, lock_ms, lock_ms + DAY, 0); /* the record ends a day after the lock */
    CHECK_LOCK("login:alice", lock_ms, strikes);
    check_expiry("login:alice", lock_ms + DAY);
    r = rl(c, LOGIN);
    CHECK_RL(r, 0, 5, 0, lock_ms, lock_ms + DAY, 0);
}

static void test_login_example(void) {
    del("login:alice");
    clock_set(T0);
    /* The first offence: 1 hour. */
    login_round(100000, HOUR, 1);
    clock_advance(HOUR - 1);
    rl_result r = rl(c, LOGIN);
    CHECK_RL(r, 0, 5, 0, 1, 1 + DAY, 0); /* one ms before the end: still locked */
    CHECK_LOCK("login:alice", 1, 1);
    clock_advance(1);
    CHECK_LOCK("login:alice", 0, 1); /* the lock is over; its strike counts for a day */
    /* T0 + 1 h is 800 s into a window again: the window had no attempt since, so it starts afresh. The
     * admitted calls' reset_after covers the strike's day. */
    long long lengths[] = {2 * HOUR, 4 * HOUR, 8 * HOUR, 16 * HOUR, DAY, DAY};
    for (int n = 0; n < 6; n++) {
        for (int i = 0; i < 5; i++) {
            r = rl(c, LOGIN);
            CHECK_RL(r, 1, 5, 4 - i, -1, DAY, 0);
        }
        check_expiry("login:alice", DAY);
        r = rl(c, LOGIN);
        CHECK_RL(r, 0, 5, 0, lengths[n], lengths[n] + DAY, 0);
        CHECK_LOCK("login:alice", lengths[n], n + 2);
        check_expiry("login:alice", lengths[n] + DAY);
        /* Every lock length is a whole number of windows: after it, the window is fresh again. */
        clock_advance(lengths[n]);
        CHECK_LOCK("login:alice", 0, n + 2);
    }
    /* Forgiveness: a day after the last lock ended without a new one, exactly. */
    clock_advance(DAY - 1);
    CHECK_LOCK("login:alice", 0, 7);
    clock_advance(1);
    CHECK_LOCK("login:alice", 0, 0);
    /* Forgiven: the next offence is a first one again, one hour. */
    login_round(100000, HOUR, 1);
    /* A wrong password of a forgiven account answers like a new one; RL.UNBLOCK lets the user in at once. */
    CHECK_EQ(cmd_int(c, "RL.UNBLOCK login:alice"), 1);
    CHECK_LOCK("login:alice", 0, 0);
    check_expiry("login:alice", 100000); /* back to the window's own expiry */
    r = rl(c, LOGIN);
    CHECK_RL(r, 0, 5, 0, HOUR, HOUR + DAY, 0); /* the window is still used up: a new lock, a first one */
    CHECK_LOCK("login:alice", HOUR, 1);
    del("login:alice");
}

/* --- every cell limiter ---------------------------------------------------------------------------------- */

typedef struct limiter_row {
    const char *command, *args; /* args end before LOCKOUT */
    long long limit;            /* the calls it admits from new at one instant */
    const char *info; /* INFO's counter prefix */
} limiter_row;

static const limiter_row rows[] = {
    {"RL.TOKEN", "2 1 1000", 2, "ratelimit_token"},
    {"RL.LEAKY", "2 1 1000 NODELAY", 2, "ratelimit_leaky"},
    {"RL.WINDOW", "2 1000", 2, "ratelimit_window"},
    {"RL.WINDOW", "2 1000 FIXED", 2, "ratelimit_window"},
    {"RL.WINDOW", "2 1000 SUBWINDOWS 4", 2, "ratelimit_window"},
    {"RL.SMOOTH", "1 MAXWAIT 0", 2, "ratelimit_smooth"}, /* the first pays ahead: the second is admitted too */
};
#define NROWS (sizeof rows / sizeof rows[0])

/* Each limiter: admitted until it denies; that denial starts a 5 s lock (its own retry is at most 1 s); the
 * lock denies every call, counted as locked, not denied; after it the limiter decides as before. */
static void test_every_limiter(void) {
    for (size_t i = 0; i < NROWS; i++) {
        const limiter_row *l = &rows[i];
        char key[32], locked[64], denied[64];
        snprintf(key, sizeof key, "lo:lim:%zu", i);
        snprintf(locked, sizeof locked, "%s_locked", l->info);
        snprintf(denied, sizeof denied, "%s_denied", l->info);
        del(key);
        clock_set(T0);
        rl_result r;
        int admitted = 0;
        for (int n = 0; n < 10; n++) {
            r = rl(c, "%s %s %s LOCKOUT 5000", l->command, key, l->args);
            if (!r.ok || !r.allowed) break;
            admitted++;
        }
        if (!CHECK(admitted == l->limit)) fprintf(stderr, "     %s %s: %d admitted\n", l->command, l->args, admitted);
        CHECK(r.ok && r.allowed == 0 && r.remaining == 0 && r.retry_after_ms == 5000 && r.reset_after_ms >= 5000);
        CHECK_LOCK(key, 5000, 1);
        check_expiry(key, r.reset_after_ms);
        long long locked_before = counter(locked), denied_before = counter(denied);
        clock_advance(2000); /* the limiter alone would admit by now */
        rl_result again = rl(c, "%s %s %s LOCKOUT 5000", l->command, key, l->args);
        CHECK(again.ok && again.allowed == 0 && again.retry_after_ms == 3000);
        rl_result plain = rl(c, "%s %s %s", l->command, key, l->args); /* without LOCKOUT: locked all the same */
        CHECK(plain.ok && plain.allowed == 0 && plain.retry_after_ms == 3000);
        CHECK_EQ(counter(locked), locked_before + 2);
        CHECK_EQ(counter(denied), denied_before);
        CHECK_LOCK(key, 3000, 1);
        clock_advance(3000);
        r = rl(c, "%s %s %s LOCKOUT 5000", l->command, key, l->args);
        if (!CHECK(r.ok && r.allowed == 1)) fprintf(stderr, "     %s %s after the lock: %s\n", l->command, l->args, r.error);
        CHECK_LOCK(key, 0, 1); /* forgiven 5 s after the lock (FORGIVE: the lock's length) */
        clock_advance(5000);
        CHECK_LOCK(key, 0, 0);
        del(key);
    }
}

/* COST 0 looks, REFUND gives back: neither locks, though the limiter says no. */
static void test_looks_never_lock(void) {
    del("lo:look");
    clock_set(T0);
    CHECK(rl(c, "RL.TOKEN lo:look 1 1 1000 LOCKOUT 5000").allowed == 1);
    rl_result r = rl(c, "RL.TOKEN lo:look 1 1 1000 COST 0 LOCKOUT 5000");
    CHECK_RL(r, 1, 1, 0, -1, 1000, 0);
    r = rl(c, "RL.TOKEN lo:look 1 1 1000 REFUND 1 LOCKOUT 5000");
    CHECK(r.ok && r.allowed == 1);
    CHECK_LOCK("lo:look", 0, 0);
    del("lo:look");
}

/* --- a locked key writes nothing ------------------------------------------------------------------------- */

static long long repl_offset(redisContext *ctx) { return info_field(ctx, "replication", "master_repl_offset"); }

static void test_flood_writes_nothing(void) {
    del("lo:flood");
    clock_set(T0);
    server *rep = replica_start(srv);
    redisContext *r = server_connect(rep);
    CHECK(cmd_status_is(c, "OK", "CONFIG SET repl-ping-replica-period 3600")); /* no PING moves the offset */
    CHECK(rl(c, "RL.TOKEN lo:flood 1 1 1000 LOCKOUT 60000").allowed == 1);
    CHECK(rl(c, "RL.TOKEN lo:flood 1 1 1000 LOCKOUT 60000").allowed == 0); /* the lock starts */
    check_replicated(c, r, "lo:flood", NULL);
    check_same_expiry_on_replica(c, r, "lo:flood");
    size_t before_len, after_len;
    char *before = dump_key(c, "lo:flood", &before_len);
    long long offset = repl_offset(c), expiry = cmd_int(c, "PEXPIRETIME lo:flood");
    clock_advance(1500); /* the bucket alone would admit */
    for (int i = 0; i < 50; i++) {
        rl_result x = rl(c, "RL.TOKEN lo:flood 1 1 1000 LOCKOUT 60000");
        CHECK(x.ok && x.allowed == 0 && x.retry_after_ms == 58500);
    }
    freeReplyObject(cmd(c, "RL.LEAKY lo:flood 1 1 1000 LOCKOUT 60000")); /* WRONGTYPE: nothing either */
    CHECK_EQ(repl_offset(c), offset);
    char *after = dump_key(c, "lo:flood", &after_len);
    CHECK(before && after && before_len == after_len && memcmp(before, after, before_len) == 0);
    free(before);
    free(after);
    CHECK_EQ(cmd_int(c, "PEXPIRETIME lo:flood"), expiry);
    CHECK(watch_survives(srv, c, "lo:flood", "RL.TOKEN lo:flood 1 1 1000 LOCKOUT 60000"));
    del("watch:side");
    static const char *const quiet[] = {"RL.TOKEN lo:flood 1 1 1000 LOCKOUT 60000", "RL.TOKEN lo:flood 1 1 1000",
                                        "RL.LOCKINFO lo:flood", NULL};
    check_events(srv, c, "Ed", "RL.BLOCK lo:flood 90000", "rl.block lo:flood", quiet, "RL.UNBLOCK lo:flood",
                 "rl.unblock lo:flood");
    CHECK(cmd_status_is(c, "OK", "CONFIG SET repl-ping-replica-period 10"));
    redisFree(r);
    server_stop(rep);
    del("lo:flood");
}

/* --- RL.BLOCK, RL.UNBLOCK, RL.LOCKINFO ------------------------------------------------------------------- */

/* RL.BLOCK of a key that does not exist: a lock alone (rl-locked), which every cell limiter answers as locked,
 * and after which each finds a new limiter. */
static void test_block_new_key(void) {
    clock_set(T0);
    static const char *const lines[] = {"RL.TOKEN %s 5 1 1000", "RL.LEAKY %s 5 1 1000", "RL.WINDOW %s 5 1000",
                                        "RL.SMOOTH %s 5 MAXWAIT 0", "RL.TOKEN_RO %s 5 1 1000",
                                        "RL.WINDOW %s 5 1000 DRYRUN"};
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        char key[32];
        snprintf(key, sizeof key, "lo:new:%zu", i);
        del(key);
        clock_set(T0);
        CHECK(cmd_status_is(c, "OK", "RL.BLOCK %s 4000", key));
        redisReply *t = cmd(c, "TYPE %s", key);
        CHECK(t->type == REDIS_REPLY_STATUS && strcmp(t->str, "rl-locked") == 0);
        freeReplyObject(t);
        CHECK_LOCK(key, 4000, 0);
        check_expiry(key, 4000);
        char line[64];
        snprintf(line, sizeof line, lines[i], key);
        rl_result r = rl(c, "%s", line);
        CHECK(r.ok && r.allowed == 0 && r.remaining == 0 && r.retry_after_ms == 4000 && r.reset_after_ms == 4000);
        clock_advance(4000);
        r = rl(c, "%s", line);
        if (!CHECK(r.ok && r.allowed == 1 && r.remaining == 4))
            fprintf(stderr, "     %s after the block: %lld %lld %s\n", line, r.allowed, r.remaining, r.error);
        CHECK_LOCK(key, 0, 0);
        del(key);
    }
}

/* RL.BLOCK of a half-used bucket keeps its state: after the block it has what it had (a refill of 1 per
 * 10^9 ms adds nothing in 5 s). */
static void test_block_keeps_state(void) {
    del("lo:half");
    clock_set(T0);
    rl_result r = rl(c, "RL.TOKEN lo:half 10 1 1000000000 COST 4");
    CHECK(r.ok && r.allowed == 1 && r.remaining == 6);
    long long own_reset = r.reset_after_ms;
    CHECK(cmd_status_is(c, "OK", "RL.BLOCK lo:half 5000"));
    CHECK_LOCK("lo:half", 5000, 0);
    check_expiry("lo:half", own_reset); /* the state outlives the lock */
    r = rl(c, "RL.TOKEN lo:half 10 1 1000000000");
    /* (reset_after_ms: at least the state's own; the reply counts the token the lock did not let it take) */
    CHECK(r.ok && r.allowed == 0 && r.remaining == 0 && r.retry_after_ms == 5000 && r.reset_after_ms >= own_reset);
    CHECK(cmd_status_is(c, "OK", "RL.BLOCK lo:half 2000")); /* replaces the end: shorter */
    CHECK_LOCK("lo:half", 2000, 0);
    clock_advance(2000);
    r = rl(c, "RL.TOKEN_RO lo:half 10 1 1000000000 COST 0");
    CHECK_RL(r, 1, 10, 6, -1, own_reset - 2000, 0);
    /* RL.UNBLOCK: 1 while a lock holds, then 0; the strikes go, the expiry is the state's own. */
    CHECK(rl(c, "RL.TOKEN lo:half 10 1 1000000000 COST 6").allowed == 1);
    r = rl(c, "RL.TOKEN lo:half 10 1 1000000000 LOCKOUT 30000");
    CHECK(r.ok && r.allowed == 0 && r.retry_after_ms > 30000); /* the bucket's own retry is the later */
    CHECK_LOCK("lo:half", 30000, 1);
    CHECK(cmd_status_is(c, "OK", "RL.BLOCK lo:half 1000")); /* strikes kept by RL.BLOCK */
    CHECK_LOCK("lo:half", 1000, 1);
    CHECK_EQ(cmd_int(c, "RL.UNBLOCK lo:half"), 1);
    CHECK_LOCK("lo:half", 0, 0);
    r = rl(c, "RL.TOKEN_RO lo:half 10 1 1000000000 COST 0");
    CHECK(r.ok && r.remaining == 0);
    check_expiry("lo:half", r.reset_after_ms);
    CHECK_EQ(cmd_int(c, "RL.UNBLOCK lo:half"), 0);
    CHECK_EQ(cmd_int(c, "RL.UNBLOCK lo:missing"), 0);
    CHECK_EQ(cmd_int(c, "EXISTS lo:missing"), 0);
    /* RL.UNBLOCK of a lock alone deletes the key. */
    CHECK(cmd_status_is(c, "OK", "RL.BLOCK lo:alone 1000"));
    CHECK_EQ(cmd_int(c, "RL.UNBLOCK lo:alone"), 1);
    CHECK_EQ(cmd_int(c, "EXISTS lo:alone"), 0);
    CHECK_LOCK("lo:alone", 0, 0);
    del("lo:half");
}

/* --- RL.ALL ---------------------------------------------------------------------------------------------- */

static void test_all(void) {
    freeReplyObject(cmd(c, "DEL {a}1 {a}2"));
    clock_set(T0);
    const char *line = "RL.ALL 2 {a}1 {a}2 LIMIT TOKEN 1 1 60000 LOCKOUT 5000 LIMIT TOKEN 10 1 1000";
    redisReply *x = cmdline(c, "%s", line);
    CHECK(x->type == REDIS_REPLY_ARRAY && x->element[0]->integer == 1);
    freeReplyObject(x);
    size_t n1, n2;
    char *b2 = dump_key(c, "{a}2", &n2);
    /* Denied by the first clause: its lock alone is written, the second key stays as it was. */
    x = cmdline(c, "%s", line);
    CHECK(x->type == REDIS_REPLY_ARRAY && x->element[0]->integer == 0 && x->element[1]->integer == 60000);
    freeReplyObject(x);
    CHECK_LOCK("{a}1", 5000, 1);
    CHECK_LOCK("{a}2", 0, 0);
    char *a2 = dump_key(c, "{a}2", &n1);
    CHECK(b2 && a2 && n1 == n2 && memcmp(a2, b2, n1) == 0);
    free(a2);
    /* The lock denies the whole call, though the first bucket is full again; counted as locked. */
    clock_advance(5000);
    CHECK_LOCK("{a}1", 0, 1); /* ended; its strike forgiven 5 s later (FORGIVE: the lock's length) */
    clock_advance(55000);
    CHECK_LOCK("{a}1", 0, 0);
    CHECK(cmd_status_is(c, "OK", "RL.BLOCK {a}1 10000"));
    long long locked = counter("ratelimit_all_locked");
    x = cmdline(c, "%s", line);
    CHECK(x->type == REDIS_REPLY_ARRAY && x->element[0]->integer == 0 && x->element[1]->integer >= 10000);
    freeReplyObject(x);
    CHECK_EQ(counter("ratelimit_all_locked"), locked + 1);
    a2 = dump_key(c, "{a}2", &n1);
    CHECK(a2 && n1 == n2 && memcmp(a2, b2, n1) == 0);
    free(a2);
    free(b2);
    /* RL.ALL_RO shows the lock, writes nothing. */
    clock_advance(10000);
    x = cmdline(c, "RL.ALL 2 {a}1 {a}2 LIMIT TOKEN 1 1 60000 LIMIT TOKEN 10 1 1000");
    CHECK(x->type == REDIS_REPLY_ARRAY && x->element[0]->integer == 1);
    freeReplyObject(x);
    x = cmdline(c, "RL.ALL_RO 2 {a}1 {a}2 LIMIT TOKEN 1 1 60000 LOCKOUT 5000 LIMIT TOKEN 10 1 1000");
    CHECK(x->type == REDIS_REPLY_ARRAY && x->element[0]->integer == 0 && x->element[1]->integer == 60000);
    freeReplyObject(x);
    CHECK_LOCK("{a}1", 0, 0); /* no lock started */
    freeReplyObject(cmd(c, "DEL {a}1 {a}2"));
}

/* DRYRUN and the _RO forms answer the lock that would start, and start none. */
static void test_dryrun_shows_lock(void) {
    del("lo:dry");
    clock_set(T0);
    CHECK(rl(c, "RL.WINDOW lo:dry 1 10000").allowed == 1);
    size_t n, m;
    char *before = dump_key(c, "lo:dry", &n);
    rl_result r = rl(c, "RL.WINDOW lo:dry 1 10000 LOCKOUT 30000 DRYRUN");
    CHECK(r.ok && r.allowed == 0 && r.retry_after_ms == 30000 && r.reset_after_ms == 60000);
    r = rl(c, "RL.WINDOW_RO lo:dry 1 10000 LOCKOUT 30000 BACKOFF 3 FORGIVE 1000");
    CHECK(r.ok && r.allowed == 0 && r.retry_after_ms == 30000 && r.reset_after_ms == 31000);
    CHECK_LOCK("lo:dry", 0, 0);
    char *after = dump_key(c, "lo:dry", &m);
    CHECK(before && after && n == m && memcmp(before, after, n) == 0);
    free(before);
    free(after);
    del("lo:dry");
}

/* WAIT on a locked key waits for the lock's end, not the bucket's refill. */
static void test_wait_for_lock(void) {
    del("lo:wait");
    clock_set(T0);
    CHECK(cmd_status_is(c, "OK", "RL.BLOCK lo:wait 5000"));
    pending p = pending_send(srv, "RL.TOKEN lo:wait 5 1 1000 WAIT 60000");
    CHECK(wait_for_waiting(c, 1));
    clock_advance(4999);
    CHECK(!pending_poll(&p, 200)); /* not yet */
    clock_advance(1);
    CHECK(pending_poll(&p, 5000));
    CHECK(p.answered && p.r.ok && p.r.allowed == 1 && p.r.remaining == 4);
    pending_close(&p);
    del("lo:wait");
}

/* --- persistence and copies ------------------------------------------------------------------------------ */

/* Two locked keys: a window with a record beside its state, and a lock alone. */
static void make_locked_pair(void) {
    freeReplyObject(cmd(c, "DEL lo:rec lo:only lo:copy lo:restored"));
    CHECK(rl(c, "RL.WINDOW lo:rec 1 10000 FIXED LOCKOUT 20000 BACKOFF 4").allowed == 1);
    CHECK(rl(c, "RL.WINDOW lo:rec 1 10000 FIXED LOCKOUT 20000 BACKOFF 4").allowed == 0);
    CHECK(cmd_status_is(c, "OK", "RL.BLOCK lo:only 30000"));
}

/* What both answer now (the clock at T0 + 1000: 19 s and 29 s left). */
static void check_locked_pair(redisContext *ctx, const char *rec, const char *only) {
    lockinfo a = lockinfo_of(ctx, rec), b = lockinfo_of(ctx, only);
    if (!CHECK(a.ms == 19000 && a.strikes == 1 && b.ms == 29000 && b.strikes == 0))
        fprintf(stderr, "     %s [%lld %lld], %s [%lld %lld]\n", rec, a.ms, a.strikes, only, b.ms, b.strikes);
    rl_result r = rl(ctx, "RL.WINDOW_RO %s 1 10000 FIXED", rec);
    CHECK(r.ok && r.allowed == 0 && r.retry_after_ms == 19000);
    r = rl(ctx, "RL.TOKEN_RO %s 1 1 1000", only);
    CHECK(r.ok && r.allowed == 0 && r.retry_after_ms == 29000);
}

static void test_copies_and_reload(void) {
    clock_set(T0);
    make_locked_pair();
    clock_set(T0 + 1000);
    CHECK_EQ(cmd_int(c, "COPY lo:rec lo:copy"), 1);
    CHECK_EQ(cmd_int(c, "COPY lo:only lo:copyonly"), 1);
    check_locked_pair(c, "lo:copy", "lo:copyonly");
    redisReply *d = cmd(c, "DUMP lo:rec"), *e = cmd(c, "DUMP lo:only");
    CHECK(d->type == REDIS_REPLY_STRING && e->type == REDIS_REPLY_STRING);
    CHECK(cmd_status_is(c, "OK", "RESTORE lo:restored 0 %b", d->str, d->len));
    CHECK(cmd_status_is(c, "OK", "RESTORE lo:restoredonly 0 %b", e->str, e->len));
    freeReplyObject(d);
    freeReplyObject(e);
    check_locked_pair(c, "lo:restored", "lo:restoredonly");
    CHECK(cmd_status_is(c, "OK", "DEBUG RELOAD"));
    clock_set(T0 + 1000);
    check_locked_pair(c, "lo:rec", "lo:only");
    check_locked_pair(c, "lo:copy", "lo:copyonly");
    freeReplyObject(cmd(c, "DEL lo:rec lo:only lo:copy lo:copyonly lo:restored lo:restoredonly"));
}

static void test_replica(void) {
    clock_set(T0);
    server *rep = replica_start(srv);
    redisContext *r = server_connect(rep);
    CHECK(cmd_status_is(r, "OK", "RL.CLOCK SET %lld", T0 + 1000));
    make_locked_pair();
    check_replicated(c, r, "lo:rec", "lo:only", NULL);
    check_same_expiry_on_replica(c, r, "lo:rec");
    check_same_expiry_on_replica(c, r, "lo:only");
    check_locked_pair(r, "lo:rec", "lo:only");
    /* Strikes that outlive an idle state are kept alone (a call that leaves the bucket full writes them so),
     * on the replica too; RL.UNBLOCK then forgives them, which deletes the key on both. */
    freeReplyObject(cmd(c, "DEL lo:idle"));
    CHECK(rl(c, "RL.TOKEN lo:idle 1 1 1000 LOCKOUT 60000").allowed == 1);
    CHECK(rl(c, "RL.TOKEN lo:idle 1 1 1000 LOCKOUT 60000").allowed == 0);
    clock_advance(61000);
    rl_result idle = rl(c, "RL.TOKEN lo:idle 1 1 1000 COST 0");
    CHECK(idle.ok && idle.allowed == 1 && idle.remaining == 1 && idle.reset_after_ms == 59000);
    check_replicated(c, r, "lo:idle", NULL);
    check_same_expiry_on_replica(c, r, "lo:idle");
    redisReply *t = cmd(r, "TYPE lo:idle");
    CHECK(t->type == REDIS_REPLY_STATUS && strcmp(t->str, "rl-locked") == 0);
    freeReplyObject(t);
    CHECK_EQ(lockinfo_of(r, "lo:idle").strikes, 1);
    CHECK_EQ(cmd_int(c, "RL.UNBLOCK lo:idle"), 0); /* no lock held; the strike goes all the same */
    check_replicated(c, r, "lo:idle", NULL);
    CHECK_EQ(cmd_int(r, "EXISTS lo:idle"), 0);
    redisFree(r);
    server_stop(rep);
    freeReplyObject(cmd(c, "DEL lo:rec lo:only"));
}

static void test_aof(void) {
    server *s = server_start(server_aof_always);
    redisContext *a = server_connect(s);
    for (int round = 0; round < 2; round++) {
        redisContext *saved = c;
        c = a;
        clock_set(T0);
        make_locked_pair();
        c = saved;
        a = aof_replay_round(s, a, round);
        CHECK(cmd_status_is(a, "OK", "RL.CLOCK SET %lld", T0 + 1000));
        check_locked_pair(a, "lo:rec", "lo:only");
    }
    redisFree(a);
    server_stop(s);
}

/* --- bad input ------------------------------------------------------------------------------------------- */

static void test_errors_change_nothing(void) {
    clock_set(T0);
    del("lo:bad");
    CHECK(rl(c, "RL.TOKEN lo:bad 5 1 1000 COST 2 LOCKOUT 1000").allowed == 1);
    freeReplyObject(cmd(c, "SET lo:str x"));
    freeReplyObject(cmd(c, "DEL lo:log"));
    CHECK(rl(c, "RL.SLIDINGLOG lo:log 5 1000").allowed == 1);
    static const bad_case cases[] = {
        {"RL.TOKEN lo:bad 5 1 1000 BACKOFF 2", "ERR BACKOFF: needs LOCKOUT ms"},
        {"RL.LEAKY lo:bad 5 1 1000 MAXLOCK 2000", "ERR MAXLOCK: needs LOCKOUT ms"},
        {"RL.WINDOW lo:bad 5 1000 FORGIVE 2000", "ERR FORGIVE: needs LOCKOUT ms"},
        {"RL.TOKEN lo:bad 5 1 1000 LOCKOUT 1000 MAXLOCK 999", "ERR MAXLOCK: must be at least LOCKOUT's ms"},
        {"RL.TOKEN lo:bad 5 1 1000 LOCKOUT 0", "ERR LOCKOUT: must be an integer between 1 and 1000000000000"},
        {"RL.TOKEN lo:bad 5 1 1000 LOCKOUT 1000000000001", "ERR LOCKOUT: must be an integer between 1 and 1000000000000"},
        {"RL.TOKEN lo:bad 5 1 1000 LOCKOUT 1000 BACKOFF 17", "ERR BACKOFF: must be an integer between 1 and 16"},
        {"RL.TOKEN lo:bad 5 1 1000 LOCKOUT 1000 BACKOFF 0", "ERR BACKOFF: must be an integer between 1 and 16"},
        {"RL.TOKEN lo:bad 5 1 1000 LOCKOUT 1000 FORGIVE 0", "ERR FORGIVE: must be an integer between 1 and 1000000000000"},
        {"RL.TOKEN lo:bad 5 1 1000 LOCKOUT", "ERR LOCKOUT: needs a value"},
        {"RL.TOKEN lo:bad 5 1 1000 LOCKOUT 5 LOCKOUT 5", "ERR LOCKOUT: given more than once"},
        {"RL.SLIDINGLOG lo:log 5 1000 BACKOFF 2", "ERR BACKOFF: needs LOCKOUT ms"},
        {"RL.SLIDINGLOG lo:log 5 1000 LOCKOUT 1000 MAXLOCK 999", "ERR MAXLOCK: must be at least LOCKOUT's ms"},
        {"RL.SLIDINGLOG lo:log 5 1000 LOCKOUT 0", "ERR LOCKOUT: must be an integer between 1 and 1000000000000"},
        {"RL.ACQUIRE lo:bad 5 1000 LOCKOUT 1000", "ERR 'LOCKOUT': not an option of rl.acquire"},
        {"RL.ALL 1 lo:bad LIMIT TOKEN 5 1 1000 BACKOFF 2", "ERR LIMIT 1: BACKOFF: needs LOCKOUT ms"},
        {"RL.ALL 1 lo:log LIMIT SLIDINGLOG 5 1000 FORGIVE 5", "ERR LIMIT 1: FORGIVE: needs LOCKOUT ms"},
        {"RL.ALL 1 lo:bad LIMIT CONCURRENCY 5 1000 LOCKOUT 5", "ERR LIMIT 1: 'LOCKOUT' is not an option of CONCURRENCY"},
        {"RL.BLOCK lo:bad 0", "ERR ms: must be an integer between 1 and 1000000000000"},
        {"RL.BLOCK lo:bad 1000000000001", "ERR ms: must be an integer between 1 and 1000000000000"},
        {"RL.BLOCK lo:bad x", "ERR ms: must be an integer between 1 and 1000000000000"},
        {"RL.BLOCK lo:bad", "ERR wrong number of arguments for 'rl.block' command"},
        {"RL.BLOCK lo:bad 1 2", "ERR wrong number of arguments for 'rl.block' command"},
        {"RL.UNBLOCK", "ERR wrong number of arguments for 'rl.unblock' command"},
        {"RL.UNBLOCK lo:bad lo:bad", "ERR wrong number of arguments for 'rl.unblock' command"},
        {"RL.LOCKINFO", "ERR wrong number of arguments for 'rl.lockinfo' command"},
        {"RL.BLOCK lo:str 1000", "WRONGTYPE Operation against a key holding the wrong kind of value"},
        {"RL.UNBLOCK lo:str", "WRONGTYPE Operation against a key holding the wrong kind of value"},
        {"RL.LOCKINFO lo:str", "WRONGTYPE Operation against a key holding the wrong kind of value"},
        {"RL.BLOCK lo:log 0", "ERR ms: must be an integer between 1 and 1000000000000"},
        {"RL.UNBLOCK lo:log lo:log", "ERR wrong number of arguments for 'rl.unblock' command"},
        /* Crafted lock states: invalid records, a lock alone over a limiter's key. */
        {"RL.SETSTATE lo:bad LOCK 1 0 0", "ERR state: not a valid lock"},
        {"RL.SETSTATE lo:bad LOCK 1 2 -1", "ERR state: not a valid lock"},
        {"RL.SETSTATE lo:bad LOCK -1 2 1", "ERR state: not a valid lock"},
        {"RL.SETSTATE lo:bad LOCK 1 2 x", "ERR strikes: must be an integer"},
        {"RL.SETSTATE lo:bad LOCK 1 2 1 PX 5", "ERR PXAT: expected PXAT unix_ms after strikes"},
        {"RL.SETSTATE lo:bad LOCK 1 2", "ERR wrong number of arguments for 'rl.setstate' command"},
        {"RL.SETSTATE lo:log LOCK 1 2 1", "WRONGTYPE Operation against a key holding the wrong kind of value"},
        {"RL.SETSTATE lo:str LOCK 1 2 1", "WRONGTYPE Operation against a key holding the wrong kind of value"},
        {"RL.SETSTATE lo:bad TOKEN 2 0 LOCK 5 4 1 0", "ERR state: not a valid lock"},
        {"RL.SETSTATE lo:bad TOKEN 2 0 LOCK 5 6 1 -1", "ERR state: not a valid lock"},
        {"RL.SETSTATE lo:bad TOKEN 2 0 LOCK 5 6 1 x", "ERR state_expire_ms: must be an integer"},
        {"RL.SETSTATE lo:bad Kabc", "ERR state: a lock's state is 33 bytes"},
    };
    size_t nbefore, nafter;
    char *before = dump_key(c, "lo:bad", &nbefore), *log_before = zset_text(c, "lo:log");
    long long expiry = cmd_int(c, "PEXPIRETIME lo:bad"), log_expiry = cmd_int(c, "PEXPIRETIME lo:log");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_error(c, cases[i].error, cases[i].args);
    char *log_after = zset_text(c, "lo:log"); /* the sliding log too: no member, no lock member */
    CHECK_STR(log_after, log_before);
    CHECK_EQ(cmd_int(c, "PEXPIRETIME lo:log"), log_expiry);
    free(log_before);
    free(log_after);
    char *after = dump_key(c, "lo:bad", &nafter);
    CHECK(before && after && nbefore == nafter && memcmp(before, after, nbefore) == 0);
    CHECK_EQ(cmd_int(c, "PEXPIRETIME lo:bad"), expiry);
    free(before);
    free(after);
    /* A 'K' blob with no valid lock, and one with no expiry, over a missing key: nothing made. */
    char blob[33];
    memset(blob, 0, sizeof blob);
    blob[0] = 'K';
    blob[1] = 5; /* until_us 5, forgive_us 0 < until_us */
    blob[25] = 1;
    redisReply *x = cmd(c, "RL.SETSTATE lo:none %b", blob, sizeof blob);
    CHECK(x->type == REDIS_REPLY_ERROR && strcmp(x->str, "ERR state: not a valid lock") == 0);
    freeReplyObject(x);
    blob[1] = 0;
    blob[25] = 0;
    x = cmd(c, "RL.SETSTATE lo:none %b", blob, sizeof blob);
    CHECK(x->type == REDIS_REPLY_ERROR && strcmp(x->str, "ERR state: no valid expiry") == 0);
    freeReplyObject(x);
    CHECK_EQ(cmd_int(c, "EXISTS lo:none"), 0);
    freeReplyObject(cmd(c, "DEL lo:bad lo:str lo:log"));
}

int main(void) {
    static const suite_test tests[] = {test_login_example, test_every_limiter, test_looks_never_lock,
        test_flood_writes_nothing, test_block_new_key, test_block_keeps_state, test_all, test_dryrun_shows_lock,
        test_wait_for_lock, test_copies_and_reload, test_replica, test_aof, test_errors_change_nothing, NULL};
    return server_suite("integration_lockout", &srv, &c, tests);
}
