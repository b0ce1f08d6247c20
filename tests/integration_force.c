/* integration_force.c -- FORCE (charging after the fact: debt) on a real redis-server, for every limiter and
 * mode that takes it.
 *
 * The idea: a forced request is usage that already happened, so it is always admitted and the limiter goes
 * into debt; what the suite checks is what a client can see of that debt on the server. Under the frozen test
 * clock, for RL.TOKEN (continuous and INTERVAL), RL.LEAKY NODELAY, RL.WINDOW (FIXED, SLIDING, SUBWINDOWS n) and
 * RL.SLIDINGLOG:
 *   - a FORCE of a cost above the limit is admitted (allowed 1, retry_after_ms -1), says remaining 0, and
 *     its reset_after_ms includes the debt; the key's PTTL follows it; FORCE without COST is COST 1;
 *   - the plain request right after is denied with a retry_after_ms that is exact: a DRYRUN 1 ms before it
 *     is denied, one at it admitted;
 *   - the read-only form and DRYRUN answer exactly what the forced call then answers, and write nothing
 *     (DUMP and PEXPIRETIME unchanged, no key created);
 *   - RL.ALL: its own FORCE forces every limit (all admitted, all written), a clause's FORCE only its own
 *     limit (the call still denied, and nothing written, when another limit denies), RL.ALL_RO writes nothing;
 *   - the debt survives DUMP/RESTORE and DEBUG RELOAD (the INTERVAL debt's cell among them), reaches a replica
 *     byte for byte, and an AOF replays it, as written and after a rewrite (RL.SETSTATE's readable form).
 * Bad input with FORCE is integration_badinput.c's (test_force). The closing line is
 * "integration_force: N passed, N failed". */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "effect_checks.h"
#include "rl_checks.h"
#include "server.h"
#include "suite.h"

#define T0 1700000000000LL /* a multiple of 1 s: windows of 1 s start on it */

static server *srv;
static redisContext *c;

static void clock_set(long long ms) { CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", ms)); }

static int is(rl_result r, long long allowed, long long limit, long long remaining, long long retry, long long reset) {
    int ok = r.ok && r.allowed == allowed && r.limit == limit && r.remaining == remaining &&
             r.retry_after_ms == retry && r.reset_after_ms == reset && r.wait_ms == 0;
    if (!ok)
        fprintf(stderr, "     got %lld %lld %lld %lld %lld %lld %s\n", r.allowed, r.limit, r.remaining, r.retry_after_ms,
                r.reset_after_ms, r.wait_ms, r.error);
    return ok;
}

/* One limiter and mode: its command, parameters and options, and what a FORCE of COST 25 on a new key (limit
 * or capacity 10) leaves: its reset, and the retry of the plain request of 1 right after. */
typedef struct mode {
    const char *command, *key, *params, *mode;
    long long reset_ms, retry_ms;
} mode;

static const mode modes[] = {
    {"RL.TOKEN", "f:tok", "10 5 1000", "", 5000, 3200},        /* 15 below empty, 25 tokens to full */
    {"RL.TOKEN", "f:int", "10 5 1000", "INTERVAL", 5000, 4000}, /* 5 chunks to full, 4 for 1 token */
    {"RL.LEAKY", "f:leak", "10 5 1000", "NODELAY", 5000, 3200},
    {"RL.WINDOW", "f:sliding", "10 1000", "SLIDING", 2000, 1640}, /* 25 * 0.36 + 1 = 10 at 640 ms in the next */
    {"RL.WINDOW", "f:fixed", "10 1000", "FIXED", 1000, 1000},
    {"RL.WINDOW", "f:sub", "10 1000", "SUBWINDOWS 5", 1000, 1000},
    {"RL.SLIDINGLOG", "f:log", "10 1000", "", 1000, 1000},
};
#define NMODES (sizeof modes / sizeof modes[0])

/* "<command> <key> <params> <mode> <rest>", rest being the request's own options. */
static rl_result on(const mode *m, const char *rest) {
    return rl(c, "%s %s %s %s %s", m->command, m->key, m->params, m->mode, rest);
}

static void test_debt(void) {
    for (size_t i = 0; i < NMODES; i++) {
        const mode *m = &modes[i];
        clock_set(T0);
        CHECK(cmd_int(c, "DEL %s", m->key) >= 0);
        CHECK(is(on(m, "COST 25 FORCE"), 1, 10, 0, -1, m->reset_ms));
        long long pttl = cmd_int(c, "PTTL %s", m->key); /* a frozen clock adds an hour, and real time runs */
        CHECK(pttl > 3600000 && pttl <= 3600000 + m->reset_ms);
        CHECK(is(on(m, "DRYRUN"), 0, 10, 0, m->retry_ms, m->reset_ms));
        clock_set(T0 + m->retry_ms - 1);
        CHECK_EQ(on(m, "DRYRUN").allowed, 0);
        clock_set(T0 + m->retry_ms);
        CHECK_EQ(on(m, "DRYRUN").allowed, 1);
        /* Once repaid, a plain request is admitted, and a FORCE of what fits is that request. */
        CHECK_EQ(on(m, "").allowed, 1);
        clock_set(T0 + 100000);
        CHECK(cmd_int(c, "DEL %s", m->key) >= 0);
        rl_result one = on(m, "FORCE"), plain;
        CHECK(cmd_int(c, "DEL %s", m->key) >= 0);
        plain = on(m, "COST 1");
        CHECK(one.ok && memcmp(&one, &plain, sizeof one) == 0); /* FORCE without COST is COST 1 */
    }
}

/* The read-only form and DRYRUN answer what the forced call then answers, and write nothing. */
static void test_read_only(void) {
    for (size_t i = 0; i < NMODES; i++) {
        const mode *m = &modes[i];
        clock_set(T0 + 200000);
        CHECK(cmd_int(c, "DEL %s", m->key) >= 0);
        CHECK_EQ(on(m, "COST 7").allowed, 1);
        size_t l0, l1;
        char *before = dump_key(c, m->key, &l0);
        long long exp0 = cmd_int(c, "PEXPIRETIME %s", m->key);
        rl_result ro = rl(c, "%s_RO %s %s %s COST 30 FORCE", m->command, m->key, m->params, m->mode);
        rl_result dry = on(m, "COST 30 FORCE DRYRUN");
        char *after = dump_key(c, m->key, &l1);
        CHECK(before && after && l0 == l1 && memcmp(before, after, l0) == 0);
        CHECK_EQ(cmd_int(c, "PEXPIRETIME %s", m->key), exp0);
        rl_result real = on(m, "COST 30 FORCE");
        CHECK(ro.ok && memcmp(&ro, &real, sizeof ro) == 0);
        CHECK(dry.ok && memcmp(&dry, &real, sizeof dry) == 0);
        CHECK(is(real, 1, 10, 0, -1, real.reset_after_ms) && real.reset_after_ms > 0);
        free(before);
        free(after);
        /* On a missing key: nothing is created. */
        CHECK(cmd_int(c, "DEL %s", m->key) >= 0);
        CHECK_EQ(rl(c, "%s_RO %s %s %s COST 30 FORCE", m->command, m->key, m->params, m->mode).allowed, 1);
        CHECK_EQ(cmd_int(c, "EXISTS %s", m->key), 0);
    }
}

static void test_all(void) {
    clock_set(T0 + 300000);
    CHECK(cmd_int(c, "DEL {a}t {a}w {a}l {a}k") >= 0);
    /* The call's FORCE: every limit takes 30 of its 10. (RESP2: allowed, retry_after_ms, reset_after_ms, then
     * one six-field reply per limit.) */
    const char *all = "RL.ALL 3 {a}t {a}w {a}l FORCE COST 30 LIMIT TOKEN 10 5 1000 LIMIT WINDOW 10 1000 FIXED "
                      "LIMIT SLIDINGLOG 10 1000";
    redisReply *r = cmdline(c, "%s", all);
    CHECK(r->type == REDIS_REPLY_ARRAY && r->elements == 6 && r->element[0]->integer == 1);
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 6)
        for (int i = 0; i < 3; i++) {
            rl_result f = rl_of(r->element[3 + i]);
            CHECK(f.ok && f.allowed == 1 && f.remaining == 0 && f.retry_after_ms == -1);
        }
    freeReplyObject(r);
    CHECK(is(rl(c, "RL.TOKEN_RO {a}t 10 5 1000"), 0, 10, 0, 4200, 6000));
    CHECK(is(rl(c, "RL.WINDOW_RO {a}w 10 1000 FIXED"), 0, 10, 0, 1000, 1000));
    CHECK(is(rl(c, "RL.SLIDINGLOG_RO {a}l 10 1000 COST 0"), 0, 10, 0, 1000, 1000));
    /* Without FORCE the call is denied, and writes nothing. */
    size_t l0, l1;
    char *before = dump_key(c, "{a}t", &l0);
    r = cmdline(c, "RL.ALL 2 {a}t {a}k LIMIT TOKEN 10 5 1000 LIMIT TOKEN 10 5 1000");
    CHECK(r->type == REDIS_REPLY_ARRAY && r->elements == 5 && r->element[0]->integer == 0);
    freeReplyObject(r);
    CHECK_EQ(cmd_int(c, "EXISTS {a}k"), 0);
    /* A clause's FORCE forces its own limit only: the call is denied while another limit denies, and nothing
     * is written, the forced limit included. */
    r = cmdline(c, "RL.ALL 2 {a}k {a}t LIMIT TOKEN 10 5 1000 FORCE COST 30 LIMIT TOKEN 10 5 1000");
    CHECK(r->type == REDIS_REPLY_ARRAY && r->elements == 5 && r->element[0]->integer == 0);
    freeReplyObject(r);
    CHECK_EQ(cmd_int(c, "EXISTS {a}k"), 0);
    char *after = dump_key(c, "{a}t", &l1);
    CHECK(before && after && l0 == l1 && memcmp(before, after, l0) == 0);
    free(before);
    free(after);
    /* ... and admitted when the others admit. */
    r = cmdline(c, "RL.ALL 2 {a}k {a}w LIMIT TOKEN 10 5 1000 FORCE COST 30 LIMIT WINDOW 10 1000 FIXED COST 0 FORCE");
    CHECK(r->type == REDIS_REPLY_ARRAY && r->elements == 5 && r->element[0]->integer == 1);
    freeReplyObject(r);
    CHECK(is(rl(c, "RL.TOKEN_RO {a}k 10 5 1000 COST 0"), 0, 10, 0, 4000, 6000));
    /* RL.ALL_RO with FORCE answers the forced call and writes nothing. */
    CHECK(cmd_int(c, "DEL {a}k") >= 0);
    r = cmdline(c, "RL.ALL_RO 2 {a}k {a}t FORCE COST 3 LIMIT TOKEN 10 5 1000 LIMIT TOKEN 10 5 1000");
    CHECK(r->type == REDIS_REPLY_ARRAY && r->elements == 5 && r->element[0]->integer == 1);
    freeReplyObject(r);
    CHECK_EQ(cmd_int(c, "EXISTS {a}k"), 0);
}

/* Forced writes of every mode, the clock at `ms`: the keys hold debts. */
static void force_every_mode(long long ms, int cost) {
    clock_set(ms);
    for (size_t i = 0; i < NMODES; i++) CHECK_EQ(on(&modes[i], cost == 25 ? "COST 25 FORCE" : "COST 99 FORCE").allowed, 1);
}

/* The debt survives DUMP/RESTORE and DEBUG RELOAD (the INTERVAL debt's cell among them). */
static void test_copy_and_reload(void) {
    long long t = T0 + 400000;
    clock_set(t);
    for (size_t i = 0; i < NMODES; i++) CHECK(cmd_int(c, "DEL %s", modes[i].key) >= 0);
    force_every_mode(t, 25);
    for (size_t i = 0; i < NMODES; i++) {
        if (strcmp(modes[i].command, "RL.SLIDINGLOG") == 0) continue; /* a sorted set: Redis's own */
        char probe[32], args[64], copy[32];
        snprintf(probe, sizeof probe, "%s_RO", modes[i].command);
        snprintf(args, sizeof args, "%s %s COST 0", modes[i].params, modes[i].mode);
        snprintf(copy, sizeof copy, "%s:copy", modes[i].key);
        CHECK(cmd_int(c, "DEL %s", copy) >= 0);
        check_copy_and_reload(c, probe, modes[i].key, copy, args, t);
    }
}

static void test_replication(void) {
    long long t = T0 + 500000;
    clock_set(t);
    server *rep = replica_start(srv);
    redisContext *r = server_connect(rep);
    force_every_mode(t, 25);
    force_every_mode(t + 150, 99); /* deeper */
    check_replica_caught_up(c);
    for (size_t i = 0; i < NMODES; i++) {
        check_same_on_replica(c, r, modes[i].key);
        check_same_expiry_on_replica(c, r, modes[i].key);
    }
    redisFree(r);
    server_stop(rep);
}

/* An AOF replays the debts, as written and after a rewrite. */
static void test_aof(void) {
    server *s = server_start(server_aof_always);
    redisContext *a = server_connect(s);
    for (int round = 0; round < 2; round++) {
        redisContext *saved = c;
        c = a;
        force_every_mode(T0 + 600000 + round * 1000, 25);
        force_every_mode(T0 + 600100 + round * 1000, 99);
        c = saved;
        char *before[NMODES];
        size_t len[NMODES];
        for (size_t i = 0; i < NMODES; i++) before[i] = dump_key(a, modes[i].key, &len[i]);
        a = aof_replay_round(s, a, round);
        for (size_t i = 0; i < NMODES; i++) {
            size_t l;
            char *after = dump_key(a, modes[i].key, &l);
            if (!CHECK(before[i] && after && l == len[i] && memcmp(before[i], after, l) == 0))
                fprintf(stderr, "     %s differs after the AOF replay (round %d)\n", modes[i].key, round);
            free(before[i]);
            free(after);
        }
    }
    redisFree(a);
    server_stop(s);
}

int main(void) {
    static const suite_test tests[] = {test_debt,        test_read_only, test_all, test_copy_and_reload,
                                       test_replication, test_aof,       NULL};
    return server_suite("integration_force", &srv, &c, tests);
}
