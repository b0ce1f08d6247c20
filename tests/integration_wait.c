/* integration_wait.c -- WAIT (server-side waiting for RL.TOKEN, RL.WINDOW and RL.ALL) and BLOCK's held
 * replies, with several real clients on a real redis-server:
 *
 *   1. first in, first out under the test clock: waiters are admitted one by one in arrival order as the
 *      clock moves, each reply as a fresh call at that moment; a call without WAIT pipelined right behind a
 *      clock step does not pass a waiter that fits; a bigger head holds the ones behind it;
 *   2. timeouts: a request that cannot fit within its timeout is answered at once; one that waits longer
 *      than its timeout gets the denial of that moment; WAIT 0 is an error, WAIT with REFUND too, the _RO
 *      forms take no WAIT; MULTI and Lua answer at once;
 *      budget that comes back (a refund, RL.ALL's REFUND, RL.RESET) admits the waiters that fit at once;
 *   3. CLIENT UNBLOCK (the denial of that moment) and CLIENT UNBLOCK ERROR (-UNBLOCKED); a waiter that
 *      disconnects leaves nothing, and the one behind it is served;
 *   4. exactness: 50 clients waiting on one token bucket and one fixed window while the clock steps: each
 *      step admits exactly what the limit allows, never more, in arrival order;
 *   5. RL.ALL WAIT on two keys; the real clock (timers, no clock steps);
 *   6. only admissions are replicated: a replica ends byte-identical;
 *   7. BLOCK (RL.LEAKY, RL.SMOOTH): the held reply's fields are true when it is sent, CLIENT UNBLOCK sends
 *      it early, ERROR answers -UNBLOCKED.
 * The closing line is "integration_wait: N passed, N failed". */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "clients.h"
#include "effect_checks.h"
#include "server.h"
#include "suite.h"

#define T0 1700000000000LL

static server *srv;
static redisContext *c;

static void clock_set(long long ms) { CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", ms)); }
static void advance(long long ms) { CHECK(cmd_status_is(c, "OK", "RL.CLOCK ADVANCE %lld", ms)); }

/* The ids of the clients blocked in a command (CLIENT LIST's cmd=), lowest (earliest) first. */
static int blocked_ids(const char *command, long long *ids, int max) {
    redisReply *list = cmd(c, "CLIENT LIST");
    char want[64];
    snprintf(want, sizeof want, " cmd=%s ", command);
    int n = 0;
    for (char *line = list->str; line && *line && n < max;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        if (strstr(line, want) && strstr(line, " flags=b ")) ids[n++] = atoll(strstr(line, "id=") + 3);
        line = nl ? nl + 1 : NULL;
    }
    freeReplyObject(list);
    for (int i = 1; i < n; i++) /* a few: insertion sort */
        for (int j = i; j > 0 && ids[j - 1] > ids[j]; j--) {
            long long t = ids[j];
            ids[j] = ids[j - 1];
            ids[j - 1] = t;
        }
    return n;
}

/* 1. FIFO ---------------------------------------------------------------------------------------------- */

static void test_fifo(void) {
    clock_set(T0);
    CHECK(cmd_int(c, "DEL wt:f") >= 0);
    CHECK(rl(c, "RL.TOKEN wt:f 1 1 1000").allowed == 1); /* the one token */
    pending p[3];
    for (int i = 0; i < 3; i++) {
        p[i] = pending_send(srv, "RL.TOKEN wt:f 1 1 1000 WAIT 60000");
        CHECK(wait_for_waiting(c, i + 1));
    }
    CHECK(!pending_poll(&p[0], 50)); /* the clock holds still: nothing fits */
    for (int step = 0; step < 3; step++) {
        advance(1000); /* one token: the next in line, and only it */
        CHECK(pending_poll(&p[step], 2000));
        CHECK(p[step].r.ok && p[step].r.allowed == 1 && p[step].r.remaining == 0 && p[step].r.reset_after_ms == 1000);
        for (int later = step + 1; later < 3; later++) CHECK(!pending_poll(&p[later], 50));
        CHECK(wait_for_waiting(c, 2 - step));
    }
    for (int i = 0; i < 3; i++) pending_close(&p[i]);

    /* A call without WAIT right behind a clock step (one pipeline, before any timer runs) does not pass the
     * waiter that now fits: the waiter is admitted, the call denied. */
    CHECK(cmd_int(c, "DEL wt:j") >= 0);
    CHECK(rl(c, "RL.TOKEN wt:j 1 1 1000").allowed == 1);
    pending w = pending_send(srv, "RL.TOKEN wt:j 1 1 1000 WAIT 60000");
    CHECK(wait_for_waiting(c, 1));
    redisAppendCommand(c, "RL.CLOCK ADVANCE 1000");
    redisAppendCommand(c, "RL.TOKEN wt:j 1 1 1000");
    freeReplyObject(next_reply(c));
    redisReply *jump = next_reply(c);
    rl_result j = rl_of(jump);
    freeReplyObject(jump);
    CHECK(j.ok && j.allowed == 0 && j.retry_after_ms == 1000);
    CHECK(pending_poll(&w, 2000) && w.r.allowed == 1);
    pending_close(&w);

    /* While a client waits, DRYRUN and the read-only forms still write nothing, on the waited key or another
     * one, and do not serve the waiter either (RL.TOKEN_RO may run where nothing can be written). */
    CHECK(cmd_int(c, "DEL wt:ro wt:other") >= 0);
    CHECK(rl(c, "RL.TOKEN wt:ro 1 1 1000").allowed == 1);
    CHECK(rl(c, "RL.TOKEN wt:other 5 1 1000").allowed == 1);
    pending ro = pending_send(srv, "RL.TOKEN wt:ro 1 1 1000 WAIT 60000");
    CHECK(wait_for_waiting(c, 1));
    for (int i = 0; i < 3; i++) {
        CHECK(rl(c, "RL.TOKEN_RO wt:other 5 1 1000").remaining == 3);
        CHECK(rl(c, "RL.TOKEN wt:other 5 1 1000 DRYRUN").remaining == 3);
    }
    redisAppendCommand(c, "RL.CLOCK ADVANCE 1000");
    redisAppendCommand(c, "RL.TOKEN_RO wt:ro 1 1 1000");
    freeReplyObject(next_reply(c));
    redisReply *look = next_reply(c);
    CHECK(rl_of(look).ok && rl_of(look).allowed == 1); /* the token is back, and the read served no one */
    freeReplyObject(look);
    CHECK(pending_poll(&ro, 2000) && ro.r.allowed == 1); /* the waiter got it */
    pending_close(&ro);
    CHECK(rl(c, "RL.TOKEN_RO wt:other 5 1 1000").remaining == 4); /* one more refilled meanwhile */

    /* A head that needs 3 holds a later waiter that needs 1, although 1 would fit first. */
    CHECK(cmd_int(c, "DEL wt:h") >= 0);
    CHECK(rl(c, "RL.TOKEN wt:h 3 1 1000 COST 3").allowed == 1);
    pending big = pending_send(srv, "RL.TOKEN wt:h 3 1 1000 COST 3 WAIT 60000");
    CHECK(wait_for_waiting(c, 1));
    pending small = pending_send(srv, "RL.TOKEN wt:h 3 1 1000 COST 1 WAIT 60000");
    CHECK(wait_for_waiting(c, 2));
    advance(1000);
    CHECK(!pending_poll(&small, 100) && !pending_poll(&big, 10));
    advance(2000);
    CHECK(pending_poll(&big, 2000) && big.r.allowed == 1 && big.r.remaining == 0);
    CHECK(!pending_poll(&small, 100));
    advance(1000);
    CHECK(pending_poll(&small, 2000) && small.r.allowed == 1);
    pending_close(&big);
    pending_close(&small);
    CHECK(wait_for_waiting(c, 0));
}

/* 2. timeouts and where WAIT does not block -------------------------------------------------------------- */

static void test_timeouts(void) {
    clock_set(T0);
    CHECK(cmd_int(c, "DEL wt:t") >= 0);
    CHECK(rl(c, "RL.TOKEN wt:t 1 1 1000").allowed == 1);
    /* Would fit in 10^6 ms, the timeout is 1 ms less: answered at once (held, it would outlast the
     * client's 10 s timeout and end the test). */
    CHECK(cmd_int(c, "DEL wt:t1") >= 0);
    CHECK(rl(c, "RL.TOKEN wt:t1 1 1 1000000").allowed == 1);
    rl_result r = rl(c, "RL.TOKEN wt:t1 1 1 1000000 WAIT 999999");
    CHECK(r.ok && r.allowed == 0 && r.retry_after_ms == 1000000);
    /* Never fits (COST above the capacity): at once. */
    r = rl(c, "RL.TOKEN wt:t 1 1 1000 COST 2 WAIT 60000");
    CHECK(r.ok && r.allowed == 0 && r.retry_after_ms == -1);
    /* Fits in 1000 ms, may wait 1500, but the frozen clock never gets there: after 1500 ms of real time the
     * denial of that moment (the clock moved 400 ms meanwhile: fresh fields). */
    pending p = pending_send(srv, "RL.TOKEN wt:t 1 1 1000 WAIT 1500");
    CHECK(wait_for_waiting(c, 1));
    advance(400);
    CHECK(!pending_poll(&p, 800));
    CHECK(pending_poll(&p, 3000));
    CHECK(p.r.ok && p.r.allowed == 0 && p.r.retry_after_ms == 600 && p.r.reset_after_ms == 600);
    pending_close(&p);
    CHECK(wait_for_waiting(c, 0));

    CHECK(cmd_status_is(c, "ERR WAIT: must be an integer between 1 and 1000000000000", "RL.TOKEN wt:t 1 1 1000 WAIT 0"));
    CHECK(cmd_status_is(c, "ERR REFUND: cannot be combined with WAIT", "RL.TOKEN wt:t 1 1 1000 WAIT 10 REFUND 1"));
    CHECK(cmd_status_is(c, "ERR 'WAIT': not an option of rl.window_ro", "RL.WINDOW_RO wt:w 1 1000 WAIT 10"));
    CHECK(cmd_status_is(c, "ERR 'WAIT': not an option of rl.leaky", "RL.LEAKY wt:l 1 1 1000 WAIT 10"));
    CHECK(cmd_status_is(c, "ERR LIMIT 1: 'WAIT' is not an option of TOKEN", "RL.ALL 1 wt:t LIMIT TOKEN 1 1 1000 WAIT 10"));

    /* MULTI and Lua: no blocking, the denial at once (a held EXEC would trip the client's timeout). */
    static const char *const waiting_call[] = {"RL.TOKEN wt:t 1 1 1000 WAIT 60000", NULL};
    redisReply *x = multi_exec(c, waiting_call);
    CHECK(reply_is_array(x, 1) && rl_of(x->element[0]).allowed == 0);
    freeReplyObject(x);
    x = cmd(c, "EVAL %s 1 wt:t", "return redis.call('RL.TOKEN', KEYS[1], 1, 1, 1000, 'WAIT', 60000)");
    CHECK(rl_of(x).ok && rl_of(x).allowed == 0);
    freeReplyObject(x);
    /* DRYRUN never waits either. */
    r = rl(c, "RL.TOKEN wt:t 1 1 1000 WAIT 60000 DRYRUN");
    CHECK(r.ok && r.allowed == 0);
    CHECK(clients_waiting(c) == 0);
}

/* Budget that comes back admits the waiters that now fit at once, under a clock that stands still: a refund
 * on the key, RL.ALL's REFUND, RL.RESET. */
static void test_budget_back(void) {
    clock_set(T0);
    const char *gives_back[] = {"RL.TOKEN wt:b 1 1 1000 REFUND 1", "RL.ALL 1 wt:b REFUND 1 LIMIT TOKEN 1 1 1000",
                                "RL.RESET wt:b"};
    for (int i = 0; i < 3; i++) {
        CHECK(cmd_int(c, "DEL wt:b") >= 0);
        CHECK(rl(c, "RL.TOKEN wt:b 1 1 1000").allowed == 1);
        pending p = pending_send(srv, "RL.TOKEN wt:b 1 1 1000 WAIT 60000");
        CHECK(wait_for_waiting(c, 1));
        CHECK(!pending_poll(&p, 50));
        redisReply *x = cmdline(c, "%s", gives_back[i]);
        CHECK(x->type != REDIS_REPLY_ERROR);
        freeReplyObject(x);
        CHECK(pending_poll(&p, 5000));
        CHECK(p.r.ok && p.r.allowed == 1 && p.r.remaining == 0);
        pending_close(&p);
        CHECK(wait_for_waiting(c, 0));
    }
}

/* 3. CLIENT UNBLOCK, disconnects --------------------------------------------------------------------------- */

static void test_unblock(void) {
    clock_set(T0);
    CHECK(cmd_int(c, "DEL wt:u") >= 0);
    CHECK(rl(c, "RL.WINDOW wt:u 1 1000 FIXED").allowed == 1);
    pending a = pending_send(srv, "RL.WINDOW wt:u 1 1000 FIXED WAIT 60000");
    CHECK(wait_for_waiting(c, 1));
    pending b = pending_send(srv, "RL.WINDOW wt:u 1 1000 FIXED WAIT 60000");
    CHECK(wait_for_waiting(c, 2));
    long long ids[2] = {0, 0};
    CHECK(blocked_ids("rl.window", ids, 2) == 2);
    advance(300);
    CHECK_EQ(cmd_int(c, "CLIENT UNBLOCK %lld", ids[0]), 1); /* a: the denial of this moment */
    CHECK(pending_poll(&a, 2000));
    CHECK(a.r.ok && a.r.allowed == 0 && a.r.retry_after_ms == 700 && a.r.reset_after_ms == 700);
    CHECK_EQ(cmd_int(c, "CLIENT UNBLOCK %lld ERROR", ids[1]), 1);
    CHECK(pending_poll(&b, 2000));
    CHECK(!b.r.ok && strncmp(b.r.error, "UNBLOCKED", 9) == 0);
    CHECK(wait_for_waiting(c, 0));
    pending_close(&a);
    pending_close(&b);

    /* A waiter that disconnects: the next one is served when the window turns, nothing is left. */
    pending gone = pending_send(srv, "RL.WINDOW wt:u 1 1000 FIXED WAIT 60000");
    CHECK(wait_for_waiting(c, 1));
    pending next = pending_send(srv, "RL.WINDOW wt:u 1 1000 FIXED WAIT 60000");
    CHECK(wait_for_waiting(c, 2));
    pending_close(&gone);
    CHECK(wait_for_waiting(c, 1));
    advance(700);
    CHECK(pending_poll(&next, 2000) && next.r.allowed == 1 && next.r.remaining == 0);
    pending_close(&next);
    CHECK(wait_for_waiting(c, 0));
    CHECK_EQ(info_field(c, "clients", "blocked_clients"), 0);
}

/* 4. exactness with 50 waiting clients --------------------------------------------------------------------- */

#define NWAIT 50

/* Read the replies the module has just answered: as many as left the waiting count. */
static long long collect(pending *p, int n, long long before_waiting, long long *admitted, int *order_ok) {
    long long got = 0, answered_now = 0, target = 0;
    for (int tries = 0; tries < 200; tries++) {
        target = before_waiting - clients_waiting(c);
        for (int i = 0; i < n; i++) {
            if (p[i].answered) continue;
            if (pending_poll(&p[i], 0)) {
                answered_now++;
                if (p[i].r.ok && p[i].r.allowed == 1) {
                    got++;
                    if (i != (int)(*admitted)++) *order_ok = 0;
                }
            }
        }
        if (answered_now >= target && tries > 0) break;
        sleep_ms(10);
    }
    return got;
}

static void exactness(const char *what, const char *line, long long step_ms, long long per_step) {
    clock_set(T0);
    pending p[NWAIT];
    for (int i = 0; i < NWAIT; i++) { /* one by one, so that arrival order is the index */
        long long before = clients_waiting(c);
        p[i] = pending_send(srv, line);
        for (int t = 0; t < 200 && clients_waiting(c) == before && !pending_poll(&p[i], 0); t++) sleep_ms(5);
    }
    long long admitted = 0;
    for (int i = 0; i < NWAIT; i++)
        if (p[i].answered && p[i].r.allowed == 1) admitted++;
    int order_ok = admitted == per_step, exact = 1;
    for (int s = 0; admitted < NWAIT && s < 40; s++) {
        long long before = clients_waiting(c);
        advance(step_ms);
        if (collect(p, NWAIT, before, &admitted, &order_ok) > per_step) exact = 0;
    }
    if (!CHECK(exact && order_ok && admitted == NWAIT))
        fprintf(stderr, "     %s: %lld admitted, order %d, never above %lld per step %d\n", what, admitted, order_ok,
                per_step, exact);
    for (int i = 0; i < NWAIT; i++) pending_close(&p[i]);
    CHECK(wait_for_waiting(c, 0));
}

static void test_exactness(void) {
    CHECK(cmd_int(c, "DEL wt:x1 wt:x2 wt:x3") >= 0);
    exactness("token bucket", "RL.TOKEN wt:x1 5 5 1000 WAIT 600000", 1000, 5);
    exactness("fixed window", "RL.WINDOW wt:x2 5 1000 FIXED WAIT 600000", 1000, 5);
    exactness("sliding window", "RL.WINDOW wt:x3 5 1000 WAIT 600000", 1000, 5);
}

/* 5. RL.ALL, the real clock --------------------------------------------------------------------------------- */

static void test_all_and_real_clock(void) {
    clock_set(T0 + 1000); /* the start of a 3 s window */
    CHECK(cmd_int(c, "DEL {wa}s {wa}m") >= 0);
    redisReply *x = cmd(c, "RL.ALL 2 {wa}s {wa}m LIMIT TOKEN 1 1 1000 LIMIT WINDOW 2 3000 FIXED");
    CHECK(reply_is_array(x, 5) && x->element[0]->integer == 1);
    freeReplyObject(x);
    pending p = pending_send(srv, "RL.ALL 2 {wa}s {wa}m WAIT 60000 LIMIT TOKEN 1 1 1000 LIMIT WINDOW 2 3000 FIXED");
    CHECK(wait_for_waiting(c, 1));
    advance(1000); /* both fit: admitted */
    CHECK(pending_poll(&p, 2000));
    pending_close(&p);
    pending q = pending_send(srv, "RL.ALL 2 {wa}s {wa}m WAIT 60000 LIMIT TOKEN 1 1 1000 LIMIT WINDOW 2 3000 FIXED");
    CHECK(wait_for_waiting(c, 1));
    advance(1000); /* the bucket fits, the window (2 per 3 s, spent) does not */
    CHECK(!pending_poll(&q, 200));
    advance(1000); /* a new window */
    CHECK(pending_poll(&q, 2000));
    pending_close(&q);
    x = cmd(c, "RL.ALL 2 {wa}s {wa}m DRYRUN COST 0 LIMIT TOKEN 1 1 1000 LIMIT WINDOW 2 3000 FIXED");
    CHECK(reply_is_array(x, 5) && x->element[0]->integer == 1 && x->element[4]->element[2]->integer == 1); /* 1 of 2 */
    freeReplyObject(x);

    /* The real clock: a timer wakes the waiter at its retry instant, and it is admitted then (an answer
     * before the refill would be a denial). */
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK REAL"));
    CHECK(cmd_int(c, "DEL wt:r") >= 0);
    CHECK(rl(c, "RL.TOKEN wt:r 1 1 300").allowed == 1);
    rl_result r = rl(c, "RL.TOKEN wt:r 1 1 300 WAIT 5000");
    CHECK(r.ok && r.allowed == 1 && r.remaining == 0);
    clock_set(T0);
}

/* 6. replication ------------------------------------------------------------------------------------------- */

static void test_replication(void) {
    server *replica = replica_start(srv);
    redisContext *rc = server_connect(replica);
    clock_set(T0);
    CHECK(cmd_int(c, "DEL wt:rep") >= 0);
    CHECK(rl(c, "RL.TOKEN wt:rep 2 1 1000 COST 2").allowed == 1);
    pending p[4];
    for (int i = 0; i < 4; i++) {
        p[i] = pending_send(srv, "RL.TOKEN wt:rep 2 1 1000 WAIT 600000");
        CHECK(wait_for_waiting(c, i + 1));
    }
    /* Waiting writes nothing: at most a replication PING (14 bytes) may pass meanwhile, never an effect. */
    long long offset = info_field(c, "replication", "master_repl_offset");
    sleep_ms(100);
    CHECK(info_field(c, "replication", "master_repl_offset") - offset < 50);
    advance(1000);
    CHECK(pending_poll(&p[0], 2000));
    advance(1000);
    CHECK(pending_poll(&p[1], 2000));
    CHECK(cmd_status_is(c, "OK", "SET wt:barrier 1"));
    check_replicated(c, rc, "wt:rep", NULL);
    for (int i = 0; i < 4; i++) pending_close(&p[i]);
    CHECK(wait_for_waiting(c, 0));
    redisFree(rc);
    server_stop(replica);
}

/* 7. BLOCK ------------------------------------------------------------------------------------------------- */

static void test_block(void) {
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK REAL"));
    CHECK(cmd_int(c, "DEL wt:lb wt:sb") >= 0);
    /* Capacity 3, 1 per 400 ms: the third waits ~800 ms; when its reply comes the level has drained by
     * that much, so remaining and reset_after_ms are those of that moment, not of the admission. */
    CHECK(rl(c, "RL.LEAKY wt:lb 3 1 400").allowed == 1);
    CHECK(rl(c, "RL.LEAKY wt:lb 3 1 400").allowed == 1);
    rl_result r = rl(c, "RL.LEAKY wt:lb 3 1 400 BLOCK");
    CHECK(r.ok && r.allowed == 1 && r.wait_ms > 700 && r.wait_ms <= 800);
    if (!CHECK(r.remaining == 2 && r.reset_after_ms <= 450 && r.reset_after_ms > 300))
        fprintf(stderr, "     held reply: remaining %lld, reset_after_ms %lld\n", r.remaining, r.reset_after_ms);

    /* RL.SMOOTH BLOCK, released early by CLIENT UNBLOCK: the admission, at once. */
    CHECK(rl(c, "RL.SMOOTH wt:sb 0.1 MAXBURST 0").allowed == 1);
    pending h = pending_send(srv, "RL.SMOOTH wt:sb 0.1 MAXBURST 0 BLOCK");
    CHECK(wait_for_waiting(c, 1));
    long long id = 0;
    CHECK(blocked_ids("rl.smooth", &id, 1) == 1);
    CHECK_EQ(cmd_int(c, "CLIENT UNBLOCK %lld", id), 1);
    CHECK(pending_poll(&h, 2000));
    CHECK(h.r.ok && h.r.allowed == 1 && h.r.wait_ms > 9000);
    pending_close(&h);
    pending e = pending_send(srv, "RL.SMOOTH wt:sb 0.1 MAXBURST 0 BLOCK");
    CHECK(wait_for_waiting(c, 1));
    CHECK(blocked_ids("rl.smooth", &id, 1) == 1);
    CHECK_EQ(cmd_int(c, "CLIENT UNBLOCK %lld ERROR", id), 1);
    CHECK(pending_poll(&e, 2000) && !e.r.ok && strncmp(e.r.error, "UNBLOCKED", 9) == 0);
    pending_close(&e);
    CHECK(wait_for_waiting(c, 0));
    clock_set(T0);
}

int main(void) {
    static const suite_test tests[] = {test_fifo, test_timeouts, test_budget_back, test_unblock, test_exactness,
        test_all_and_real_clock, test_replication, test_block, NULL};
    return server_suite("integration_wait", &srv, &c, tests);
}
