/* integration_failover.c -- waiters while Redis holds writes, on real redis-servers: no write from a timer
 * or a blocked client's callback while clients are paused (CLIENT PAUSE WRITE, FAILOVER), past maxmemory,
 * or on a server that became a replica (module/wait.c, "Writes held").
 *
 *   1. a waiter whose turn comes during CLIENT PAUSE WRITE, its key's TTL lapsing meanwhile (the pause
 *      keeps expired keys in place: a write then aborted the server), waits until the pause ends, then is
 *      admitted; with a replica attached too, and the replica ends byte-identical;
 *   2. timeouts and CLIENT UNBLOCK during a pause: a waiter whose fresh call would be denied is answered
 *      then (a denial writes nothing); one that would be admitted waits for the pause to end, and CLIENT
 *      UNBLOCK answers it -UNBLOCKED without deciding;
 *   3. past maxmemory (noeviction): nothing is admitted from a timer; a waiter's timeout is the OOM error a
 *      fresh call would get; under maxmemory again, the waiter first in line is admitted;
 *   4. FAILOVER, ten times back and forth, while 50 clients loop on RL.TOKEN ... WAIT 5000 (and 50 on
 *      long-lived keys): both servers stay up, every request gets an answer (admitted, denied, or
 *      -UNBLOCKED when its server became a replica), and the replica ends byte-identical each time.
 * The pauses are long (tens of seconds) and lifted by CLIENT UNPAUSE, so that no check depends on timing:
 * "not answered yet" is always read while the pause still holds. Prints "integration_failover: N passed,
 * N failed". */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "clients.h"
#include "effect_checks.h"
#include "server.h"

#define T0 1700000000000LL


static int alive(redisContext *c) { return cmd_status_is(c, "PONG", "PING"); }

/* A primary's writes have reached the replica: WAIT 1 (Redis's) answers 1. */
static int replica_caught_up(redisContext *primary) { return cmd_int(primary, "WAIT 1 5000") == 1; }

/* 1. a waiter across a pause ------------------------------------------------------------------------------ */

/* The crash report's steps: one token used, a waiter for the next (due in 1 s, when the key's TTL lapses
 * too), then writes paused past both. */
static void test_pause_expired_key(server *s, redisContext *c) {
    CHECK(rl(c, "RL.TOKEN fo:pk 1 1 1000").allowed == 1);
    pending w = pending_send(s, "RL.TOKEN fo:pk 1 1 1000 WAIT 60000");
    CHECK(wait_for_waiting(c, 1));
    CHECK(cmd_status_is(c, "OK", "CLIENT PAUSE 60000 WRITE"));
    sleep_ms(1500); /* its turn and the key's TTL pass while paused */
    CHECK(alive(c));
    CHECK(!pending_poll(&w, 0)); /* held: nothing admitted while writes are paused */
    CHECK_EQ(clients_waiting(c), 1);
    CHECK(cmd_status_is(c, "OK", "CLIENT UNPAUSE"));
    CHECK(pending_poll(&w, 5000));
    CHECK(w.r.ok && w.r.allowed == 1 && w.r.remaining == 0);
    CHECK(alive(c));
    CHECK_EQ(cmd_int(c, "PTTL fo:pk") > 0, 1);
    pending_close(&w);
}

/* With a replica attached and the key alive throughout (a write then aborted the server in propagation). */
static void test_pause_with_replica(server *s, redisContext *c) {
    server *r = replica_start(s);
    redisContext *rc = server_connect(r);
    CHECK(rl(c, "RL.TOKEN fo:rk 2 1 1000").allowed == 1);
    CHECK(rl(c, "RL.TOKEN fo:rk 2 1 1000").allowed == 1); /* empty; full again in 2 s */
    pending w = pending_send(s, "RL.TOKEN fo:rk 2 1 1000 WAIT 60000");
    CHECK(wait_for_waiting(c, 1));
    CHECK(cmd_status_is(c, "OK", "CLIENT PAUSE 60000 WRITE"));
    sleep_ms(1300); /* its turn (1 s) passes while paused */
    CHECK(alive(c));
    CHECK(!pending_poll(&w, 0));
    CHECK(cmd_status_is(c, "OK", "CLIENT UNPAUSE"));
    CHECK(pending_poll(&w, 5000));
    CHECK(w.r.ok && w.r.allowed == 1);
    CHECK(alive(c) && alive(rc));
    CHECK(replica_caught_up(c));
    CHECK_EQ(cmd_int(c, "EXISTS fo:rk"), 1);
    check_same_on_replica(c, rc, "fo:rk");
    check_same_expiry_on_replica(c, rc, "fo:rk");
    pending_close(&w);
    redisFree(rc);
    server_stop(r);
}

/* 2. timeouts and CLIENT UNBLOCK during a pause (the test clock frozen: only timeouts run on their own) ---- */

static void test_pause_timeouts(server *s, redisContext *c) {
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", T0));
    const char *keys[] = {"fo:d", "fo:a", "fo:u", "fo:x"};
    for (int i = 0; i < 4; i++) CHECK(rl(c, "RL.TOKEN %s 1 1 %d", keys[i], i == 3 ? 2000 : 1000).allowed == 1);
    /* Each fits within its timeout when it comes (its retry is 1 s, fo:x's 2 s). */
    pending deny = pending_send(s, "RL.TOKEN fo:d 1 1 1000 WAIT 1000");
    pending admit = pending_send(s, "RL.TOKEN fo:a 1 1 1000 WAIT 3000");
    pending unblock_admit = pending_send(s, "RL.TOKEN fo:u 1 1 1000 WAIT 60000");
    pending unblock_deny = pending_send(s, "RL.TOKEN fo:x 1 1 2000 WAIT 60000");
    CHECK(wait_for_waiting(c, 4));
    CHECK(cmd_status_is(c, "OK", "CLIENT PAUSE 60000 WRITE"));

    /* fo:d's timeout comes while paused: the fresh call at the frozen time is a denial, answered now. */
    CHECK(pending_poll(&deny, 5000));
    CHECK(deny.r.ok && deny.r.allowed == 0 && deny.r.retry_after_ms == 1000);

    /* The clock moves (RL.CLOCK is no write): fo:a, fo:u would be admitted, fo:x still not. Nothing is. */
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK ADVANCE 1000"));
    sleep_ms(3500); /* past fo:a's timeout too */
    CHECK(alive(c));
    CHECK(!pending_poll(&admit, 0)); /* would be admitted: it waits for the pause to end */
    CHECK(!pending_poll(&unblock_admit, 0));
    CHECK(!pending_poll(&unblock_deny, 0));
    CHECK_EQ(clients_waiting(c), 3);

    /* CLIENT UNBLOCK: a denial is answered; an admission cannot be written, so nothing is decided. */
    CHECK_EQ(cmd_int(c, "CLIENT UNBLOCK %lld", unblock_deny.id), 1);
    CHECK(pending_poll(&unblock_deny, 5000));
    CHECK(unblock_deny.r.ok && unblock_deny.r.allowed == 0 && unblock_deny.r.retry_after_ms == 1000);
    CHECK_EQ(cmd_int(c, "CLIENT UNBLOCK %lld", unblock_admit.id), 1);
    CHECK(pending_poll(&unblock_admit, 5000));
    CHECK(!unblock_admit.r.ok && strncmp(unblock_admit.r.error, "UNBLOCKED writes are paused", 27) == 0);
    CHECK(rl(c, "RL.TOKEN_RO fo:u 1 1 1000 COST 0").remaining == 1); /* fo:u's token is still there */

    CHECK(cmd_status_is(c, "OK", "CLIENT UNPAUSE"));
    CHECK(pending_poll(&admit, 5000));
    CHECK(admit.r.ok && admit.r.allowed == 1);
    CHECK(wait_for_waiting(c, 0));
    pending_close(&deny);
    pending_close(&admit);
    pending_close(&unblock_admit);
    pending_close(&unblock_deny);
}

/* 3. past maxmemory ---------------------------------------------------------------------------------------- */

static void test_oom(server *s, redisContext *c) {
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", T0));
    CHECK(cmd_status_is(c, "OK", "CONFIG SET maxmemory-policy noeviction"));
    CHECK(rl(c, "RL.TOKEN fo:m 1 1 1000").allowed == 1);
    CHECK(rl(c, "RL.TOKEN fo:n 1 1 1000").allowed == 1);
    pending first = pending_send(s, "RL.TOKEN fo:m 1 1 1000 WAIT 60000");
    pending times_out = pending_send(s, "RL.TOKEN fo:n 1 1 1000 WAIT 1000");
    CHECK(wait_for_waiting(c, 2));
    CHECK(cmd_status_is(c, "OK", "CONFIG SET maxmemory 1"));
    CHECK(rl(c, "RL.TOKEN fo:o 1 1 1000").error[0] == 'O'); /* a command is refused: -OOM */

    CHECK(cmd_status_is(c, "OK", "RL.CLOCK ADVANCE 1000")); /* both fit now, and nothing may be written */
    CHECK(pending_poll(&times_out, 5000));                  /* at its timeout: what a fresh call gets */
    CHECK(!times_out.r.ok && strncmp(times_out.r.error, "OOM ", 4) == 0);
    CHECK(!pending_poll(&first, 0));
    CHECK(rl(c, "RL.TOKEN_RO fo:m 1 1 1000 COST 0").remaining == 1);
    CHECK(rl(c, "RL.TOKEN_RO fo:n 1 1 1000 COST 0").remaining == 1);

    CHECK(cmd_status_is(c, "OK", "CONFIG SET maxmemory 0"));
    CHECK(pending_poll(&first, 5000));
    CHECK(first.r.ok && first.r.allowed == 1);
    CHECK(rl(c, "RL.TOKEN_RO fo:m 1 1 1000 COST 0").remaining == 0);
    CHECK(wait_for_waiting(c, 0));
    pending_close(&first);
    pending_close(&times_out);
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK REAL"));
}

/* 4. FAILOVER under WAIT load ------------------------------------------------------------------------------ */

typedef struct role {
    int primary, failover_idle;
} role;

static role role_of(redisContext *c) {
    redisReply *r = cmd(c, "INFO replication");
    role x = {0, 0};
    if (r->type == REDIS_REPLY_STRING) {
        x.primary = strstr(r->str, "role:master") != NULL;
        x.failover_idle = !x.primary || strstr(r->str, "master_failover_state:no-failover") != NULL;
    }
    freeReplyObject(r);
    return x;
}

/* After FAILOVER on from: from is a replica of to, whose role is primary, and to's link is up (10 s). */
static int switched(redisContext *from, redisContext *to) {
    for (int i = 0; i < 1000; i++) {
        role f = role_of(from), t = role_of(to);
        if (!f.primary && t.primary && t.failover_idle && replica_wait_synced(from)) return 1;
        sleep_ms(10);
    }
    return 0;
}

#define FAILOVERS 10
#define WAITERS 50
#define WRITERS 4

static void test_failover(void) {
    server *node[2];
    node[0] = server_start(NULL);
    node[1] = replica_start(node[0]);
    redisContext *nc[2] = {server_connect(node[0]), server_connect(node[1])};
    volatile int primary_port = node[0]->port;
    /* One token every 50 ms, 5 s of patience: the waiters' turns come all the time, their keys' TTLs lapse
     * all the time, and the writers' long-lived keys show what reached the replica. */
    load *waiters = load_start(&primary_port, WAITERS, "RL.TOKEN fo:fk 1 1 50 WAIT 5000");
    load *writers = load_start(&primary_port, WRITERS, "RL.TOKEN fo:big:%d 1000000 1 1000000");
    int p = 0, done = 0;
    for (int i = 0; i < FAILOVERS; i++) {
        sleep_ms(300);
        if (!CHECK(cmd_status_is(nc[p], "OK", "FAILOVER"))) break;
        if (!CHECK(switched(nc[p], nc[1 - p]))) break;
        CHECK(alive(nc[p]) && alive(nc[1 - p]));
        p = 1 - p;
        primary_port = node[p]->port;
        done++;
    }
    sleep_ms(300);
    load_counts w = load_stop(waiters), k = load_stop(writers);
    printf("FAILOVER x%d: waiters sent %lld (admitted %lld, denied %lld, errors %lld: first \"%s\"), dropped %lld, "
           "hung %lld; writers sent %lld (admitted %lld, errors %lld: first \"%s\")\n",
           done, w.sent, w.admitted, w.denied, w.errors, w.first_error, w.dropped, w.hung, k.sent, k.admitted, k.errors,
           k.first_error);
    CHECK_EQ(done, FAILOVERS);
    CHECK(alive(nc[0]) && alive(nc[1]));
    CHECK_EQ(w.dropped + w.hung, 0); /* every request got an answer */
    CHECK_EQ(k.dropped + k.hung, 0);
    CHECK(w.admitted > 0 && k.admitted > 0);
    CHECK(replica_caught_up(nc[p]));
    int same = 0;
    for (int i = 0; i < WRITERS; i++) {
        char key[32];
        snprintf(key, sizeof key, "fo:big:%d", i);
        same += cmd_int(nc[p], "EXISTS %s", key) == 1 && same_dump(nc[p], nc[1 - p], key);
    }
    CHECK_EQ(same, WRITERS);
    for (int i = 0; i < 2; i++) {
        redisFree(nc[i]);
        server_stop(node[i]);
    }
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    server *s = server_start(NULL);
    redisContext *c = server_connect(s);
    test_pause_expired_key(s, c);
    test_pause_with_replica(s, c);
    test_pause_timeouts(s, c);
    test_oom(s, c);
    redisFree(c);
    server_stop(s);
    test_failover();
    return check_summary("integration_failover");
}
