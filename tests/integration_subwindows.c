/* integration_subwindows.c -- RL.WINDOW SUBWINDOWS n on a real redis-server: the decisions of a window
 * made of n cells under the test clock, its errors, the key (type, size for n = 6 and n = 60, expiry on the
 * real clock, DUMP/RESTORE, DEBUG RELOAD, RL.SETSTATE's readable form as AOF rewrite writes it), the
 * read-only form, an RL.ALL clause and a replica. Many clients, durability and replication under load
 * are in integration_reliability.c (its mixer has a SUBWINDOWS family). The closing line is
 * "integration_subwindows: N passed, N failed". */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rl_checks.h"
#include "effect_checks.h"
#include "server.h"
#include "suite.h"

#define T0 1700000000000LL /* a multiple of 10 s: cells of 10 s start on it */

static server *srv;
static redisContext *c;

static void clock_set(long long ms) { CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", ms)); }

static int is(rl_result r, long long allowed, long long remaining, long long retry, long long reset) {
    int ok = r.ok && r.allowed == allowed && r.remaining == remaining && r.retry_after_ms == retry &&
             r.reset_after_ms == reset && r.wait_ms == 0;
    if (!ok)
        fprintf(stderr, "     got %lld %lld %lld %lld %lld %lld %s\n", r.allowed, r.limit, r.remaining, r.retry_after_ms,
                r.reset_after_ms, r.wait_ms, r.error);
    return ok;
}

static void test_decisions(void) {
    clock_set(T0);
    CHECK(cmd_int(c, "DEL sw:a") >= 0);
    CHECK(is(rl(c, "RL.WINDOW sw:a 6 60000 SUBWINDOWS 6 COST 3"), 1, 3, -1, 60000));
    clock_set(T0 + 25000);
    CHECK(is(rl(c, "RL.WINDOW sw:a 6 60000 SUBWINDOWS 6 COST 3"), 1, 0, -1, 55000));
    CHECK(is(rl(c, "RL.WINDOW sw:a 6 60000 SUBWINDOWS 6"), 0, 0, 35000, 55000)); /* cell 0 leaves at 60 s */
    CHECK(is(rl(c, "RL.WINDOW_RO sw:a 6 60000 SUBWINDOWS 6"), 0, 0, 35000, 55000));
    clock_set(T0 + 60000);
    CHECK(is(rl(c, "RL.WINDOW sw:a 6 60000 SUBWINDOWS 6 COST 3 DRYRUN"), 1, 0, -1, 60000));
    CHECK(is(rl(c, "RL.WINDOW sw:a 6 60000 SUBWINDOWS 6 COST 0"), 1, 3, -1, 20000)); /* DRYRUN wrote nothing */
    CHECK(is(rl(c, "RL.WINDOW sw:a 6 60000 SUBWINDOWS 6 REFUND 2"), 1, 5, -1, 20000));
    redisReply *x = cmd(c, "RL.WINDOW sw:a 6 60000 SUBWINDOWS 6 COST 9 ATMOST");
    CHECK(x->type == REDIS_REPLY_ARRAY && x->elements == 7 && x->element[6]->integer == 5);
    freeReplyObject(x);
    /* In RL.ALL, a clause of its own. */
    x = cmd(c, "RL.ALL 1 sw:a DRYRUN LIMIT WINDOW 6 60000 SUBWINDOWS 6 COST 0");
    CHECK(reply_is_array(x, 4) && x->element[3]->element[2]->integer == 0);
    freeReplyObject(x);
}

static void test_errors(void) {
    CHECK(cmd_status_is(c, "ERR SUBWINDOWS: window_ms must be a multiple of n (60000 is not a multiple of 7)",
                        "RL.WINDOW sw:e 6 60000 SUBWINDOWS 7"));
    CHECK(cmd_status_is(c, "ERR SUBWINDOWS: must be an integer between 2 and 60", "RL.WINDOW sw:e 6 60000 SUBWINDOWS 1"));
    CHECK(cmd_status_is(c, "ERR SUBWINDOWS: must be an integer between 2 and 60", "RL.WINDOW sw:e 6 60000 SUBWINDOWS 61"));
    CHECK(cmd_status_is(c, "ERR SUBWINDOWS: needs a value", "RL.WINDOW sw:e 6 60000 SUBWINDOWS"));
    CHECK(cmd_status_is(c, "ERR FIXED: cannot be combined with SUBWINDOWS", "RL.WINDOW sw:e 6 60000 SUBWINDOWS 6 FIXED"));
    CHECK(cmd_status_is(c, "ERR SUBWINDOWS: cannot be combined with SLIDING", "RL.WINDOW sw:e 6 60000 SLIDING SUBWINDOWS 6"));
    CHECK(cmd_status_is(c, "ERR state: not a valid state of this kind",
                        "RL.SETSTATE sw:e WINDOW -9223301668110598144 10000")); /* n = 1: two words, refused */
    CHECK_EQ(cmd_int(c, "EXISTS sw:e"), 0);
}

/* The key: its size, the real clock's expiry, and every way it is copied. */
static void test_key(void) {
    clock_set(T0);
    CHECK(cmd_int(c, "DEL sw:6 sw:60 sw:copy") >= 0);
    CHECK(rl(c, "RL.WINDOW sw:6 100 60000 SUBWINDOWS 6 COST 7").ok);
    CHECK(rl(c, "RL.WINDOW sw:60 100 60000 SUBWINDOWS 60 COST 7").ok);
    CHECK(cmd_status_is(c, "rl-window", "TYPE sw:6"));
    long long m6 = cmd_int(c, "MEMORY USAGE sw:6"), m60 = cmd_int(c, "MEMORY USAGE sw:60");
    CHECK(m6 >= 64 && m60 >= 496 && m60 - m6 >= 54 * 8); /* 8 and 62 words of state */
    printf("  MEMORY USAGE: %lld bytes with SUBWINDOWS 6 (8 words of state), %lld with SUBWINDOWS 60 (62 words)\n", m6,
           m60);
    check_copy_and_reload(c, "RL.WINDOW_RO", "sw:60", "sw:copy", "100 60000 SUBWINDOWS 60", T0);

    /* The readable form AOF rewrite writes: w0 (bit 63, n, newest cell), cell_ms, the n counts. */
    redisReply *w = cmd(c, "RL.SETSTATE sw:set WINDOW %lld 10000 0 0 0 0 0 5 PXAT 4102444800000",
                        (long long)(0x8000000000000000ULL | (6ULL << 46) | (unsigned long long)(T0 / 10000)));
    CHECK(reply_is_status(w, "OK"));
    freeReplyObject(w);
    CHECK(is(rl(c, "RL.WINDOW_RO sw:set 6 60000 SUBWINDOWS 6"), 1, 0, -1, 60000)); /* 5 in cell T0 + 1 */

    /* The real clock: the key lives until its newest counted cell has left the window. */
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK REAL"));
    rl_result r = rl(c, "RL.WINDOW sw:ttl 5 6000 SUBWINDOWS 6");
    long long pttl = cmd_int(c, "PTTL sw:ttl");
    CHECK(r.ok && pttl > 0 && pttl <= r.reset_after_ms + 1 && pttl > r.reset_after_ms - 1000);
    clock_set(T0);
}

static void test_replica(void) {
    server *replica = replica_start(srv);
    redisContext *rc = server_connect(replica);
    clock_set(T0);
    for (int i = 0; i < 50; i++) {
        freeReplyObject(cmdline(c, "RL.WINDOW sw:r%d 9 6000 SUBWINDOWS %d COST %d", i % 5, 2 + i % 5 * 10 + (i % 5 == 4 ? -38 : 0), 1 + i % 3));
        CHECK(cmd_status_is(c, "OK", "RL.CLOCK ADVANCE 700"));
    }
    CHECK(cmd_status_is(c, "OK", "SET sw:barrier 1"));
    check_replica_caught_up(c);
    for (int i = 0; i < 5; i++) {
        char key[16];
        snprintf(key, sizeof key, "sw:r%d", i);
        check_same_on_replica(c, rc, key);
    }
    redisFree(rc);
    server_stop(replica);
}

int main(void) {
    static const suite_test tests[] = {test_decisions, test_errors, test_key, test_replica, NULL};
    return server_suite("integration_subwindows", &srv, &c, tests);
}
