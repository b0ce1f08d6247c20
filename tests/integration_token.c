/* integration_token.c -- RL.TOKEN and the shared machinery (reply, TTL, DRYRUN, bad input, data type,
 * persistence, replication) against a real redis-server with the module loaded. */
#include <stdlib.h>
#include <string.h>

#include "effect_checks.h"
#include "rl_checks.h"
#include "server.h"
#include "suite.h"

static server *srv;
static redisContext *c;

#define T0 1700000000000LL /* a frozen test-clock instant (ms) */

static void clock_set(long long ms) { CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", ms)); }
static void clock_advance(long long ms) { CHECK(cmd_status_is(c, "OK", "RL.CLOCK ADVANCE %lld", ms)); }
static void del(const char *key) { freeReplyObject(cmd(c, "DEL %s", key)); }
static long long exists(const char *key) { return cmd_int(c, "EXISTS %s", key); }

/* 3 tokens per 1000 ms, capacity 1: 333 ms after emptying is too early, 334 ms is enough. */
static void test_exact_rational_refill(void) {
    del("tb:exact");
    clock_set(T0);
    rl_result r = rl(c, "RL.TOKEN tb:exact 1 3 1000");
    CHECK_RL(r, 1, 1, 0, -1, 334, 0);
    clock_advance(333);
    r = rl(c, "RL.TOKEN tb:exact 1 3 1000");
    CHECK_RL(r, 0, 1, 0, 1, 1, 0);
    clock_advance(1);
    r = rl(c, "RL.TOKEN tb:exact 1 3 1000");
    CHECK_RL(r, 1, 1, 0, -1, 334, 0);
}

/* A table of calls on one key at given clock offsets, with the full expected reply. */
typedef struct step {
    long long at_ms; /* offset from T0 */
    const char *args;
    long long allowed, remaining, retry, reset;
} step;

static void run_steps(const char *key, long long limit, const step *steps, size_t n) {
    del(key);
    for (size_t i = 0; i < n; i++) {
        clock_set(T0 + steps[i].at_ms);
        rl_result r = rl(c, "RL.TOKEN %s %s", key, steps[i].args);
        if (!r.ok) fprintf(stderr, "     step %zu: %s\n", i, r.error);
        CHECK_RL(r, steps[i].allowed, limit, steps[i].remaining, steps[i].retry, steps[i].reset, 0);
    }
}

static void test_continuous_table(void) {
    /* capacity 5, 1 token per 200 ms */
    static const step steps[] = {
        {0, "5 1 200", 1, 4, -1, 200},
        {0, "5 1 200 COST 4", 1, 0, -1, 1000},
        {0, "5 1 200", 0, 0, 200, 1000},
        {100, "5 1 200 COST 0", 1, 0, -1, 900},
        {199, "5 1 200", 0, 0, 1, 801},
        {200, "5 1 200", 1, 0, -1, 1000},
        {1000, "5 1 200 COST 5", 0, 4, 200, 200},  /* 4 back; 5 needs one more period */
        {1000, "5 1 200 COST 6", 0, 4, -1, 200},   /* above capacity: never */
        {1200, "5 1 200 COST 0", 1, 5, -1, 0},     /* full again: idle */
        {5000, "5 1 200 COST 5", 1, 0, -1, 1000},
    };
    run_steps("tb:table", 5, steps, sizeof steps / sizeof steps[0]);
}

static void test_interval_table(void) {
    /* capacity 5, chunks of 2 every 1000 ms */
    static const step steps[] = {
        {0, "5 2 1000 INTERVAL COST 5", 1, 0, -1, 3000},   /* anchor = 0 */
        {999, "5 2 1000 INTERVAL", 0, 0, 1, 2001},
        {1000, "5 2 1000 INTERVAL", 1, 1, -1, 2000},       /* +2, anchor 1000 */
        {1500, "5 2 1000 INTERVAL COST 3", 0, 1, 500, 1500},  /* one chunk away */
        {2999, "5 2 1000 INTERVAL COST 0", 1, 3, -1, 1},   /* +2 at 2000 */
        {3000, "5 2 1000 INTERVAL COST 0", 1, 5, -1, 0},   /* +2, capped: full, idle */
        {3500, "5 2 1000 INTERVAL COST 2", 1, 3, -1, 1000}, /* new anchor 3500 */
        {4499, "5 2 1000 INTERVAL COST 4", 0, 3, 1, 1},
        {4500, "5 2 1000 INTERVAL COST 4", 1, 1, -1, 2000},
    };
    run_steps("tb:interval", 5, steps, sizeof steps / sizeof steps[0]);
}

/* For many parameter sets: retry_after_ms and reset_after_ms are exact (one ms earlier the answer still
 * differs). Probed with DRYRUN so the probes change nothing. */
static void test_exact_retry_and_reset(void) {
    static const char *params[] = {"1 3 1000", "10 7 333", "3 1 1", "100 1 86400000", "7 7 1000 INTERVAL",
                                   "1000000000000 1000000000 1000", "5 2 999 INTERVAL", "2 1 31536000000"};
    for (size_t i = 0; i < sizeof params / sizeof params[0]; i++) {
        del("tb:probe");
        clock_set(T0 + (long long)i * 7);
        rl_result full = rl(c, "RL.TOKEN tb:probe %s COST 0 DRYRUN", params[i]);
        CHECK(full.ok);
        rl_result r = rl(c, "RL.TOKEN tb:probe %s COST %lld", params[i], full.limit);
        CHECK_EQ(r.allowed, 1);
        r = rl(c, "RL.TOKEN tb:probe %s", params[i]);
        CHECK_EQ(r.allowed, 0);
        long long retry = r.retry_after_ms, reset = r.reset_after_ms;
        CHECK(retry >= 1 && reset >= retry);
        long long base = T0 + (long long)i * 7;
        clock_set(base + retry - 1);
        CHECK_EQ(rl(c, "RL.TOKEN tb:probe %s DRYRUN", params[i]).allowed, 0);
        clock_set(base + retry);
        CHECK_EQ(rl(c, "RL.TOKEN tb:probe %s DRYRUN", params[i]).allowed, 1);
        clock_set(base + reset - 1);
        CHECK(rl(c, "RL.TOKEN tb:probe %s COST 0 DRYRUN", params[i]).reset_after_ms > 0);
        clock_set(base + reset);
        r = rl(c, "RL.TOKEN tb:probe %s COST 0 DRYRUN", params[i]);
        CHECK_EQ(r.reset_after_ms, 0);
        CHECK_EQ(r.remaining, full.limit);
    }
}

static void test_dryrun_writes_nothing(void) {
    del("tb:dry");
    clock_set(T0);
    rl_result r = rl(c, "RL.TOKEN tb:dry 10 1 1000 COST 3 DRYRUN");
    CHECK_RL(r, 1, 10, 7, -1, 3000, 0);
    CHECK_EQ(exists("tb:dry"), 0);
    rl(c, "RL.TOKEN tb:dry 10 1 1000 COST 2");
    size_t l1, l2;
    char *before = dump_key(c, "tb:dry", &l1);
    long long pttl = cmd_int(c, "PTTL tb:dry");
    clock_advance(100);
    r = rl(c, "RL.TOKEN tb:dry 10 1 1000 COST 5 DRYRUN");
    CHECK_EQ(r.allowed, 1);
    char *after = dump_key(c, "tb:dry", &l2);
    CHECK(before && after && l1 == l2 && memcmp(before, after, l1) == 0);
    CHECK(cmd_int(c, "PTTL tb:dry") <= pttl);
    free(before);
    free(after);
}

/* Idle is the same as new, and holds no key; on the real clock PTTL == reset_after_ms (within 1 ms). */
static void test_idle_and_ttl(void) {
    del("tb:idle");
    clock_set(T0);
    CHECK_EQ(rl(c, "RL.TOKEN tb:idle 4 1 100 COST 0").allowed, 1);
    CHECK_EQ(exists("tb:idle"), 0);
    rl(c, "RL.TOKEN tb:idle 4 1 100 COST 2");
    CHECK_EQ(exists("tb:idle"), 1);
    /* Frozen clock: the key outlives the real reset by an hour, so no state the test needs vanishes. */
    long long pttl = cmd_int(c, "PTTL tb:idle");
    CHECK(pttl > 3600000 && pttl <= 3600000 + 200);
    clock_advance(200);
    rl_result r = rl(c, "RL.TOKEN tb:idle 4 1 100 COST 0");
    CHECK_RL(r, 1, 4, 4, -1, 0, 0);
    CHECK_EQ(exists("tb:idle"), 0);

    CHECK(cmd_status_is(c, "OK", "RL.CLOCK REAL"));
    static const char *const with_pttl[] = {"RL.TOKEN tb:idle 1000 1 10 COST 700", "PTTL tb:idle", NULL};
    redisReply *x = multi_exec(c, with_pttl);
    if (CHECK(reply_is_array(x, 2))) {
        long long reset = rl_of(x->element[0]).reset_after_ms, ttl = x->element[1]->integer;
        CHECK_EQ(reset, 7000);
        CHECK(ttl >= reset - 1 && ttl <= reset + 1);
    }
    freeReplyObject(x);
    del("tb:idle");
}

/* Parameters changed on a live key apply at once; tokens never exceed the new capacity. */
static void test_parameter_change(void) {
    del("tb:change");
    clock_set(T0);
    CHECK_EQ(rl(c, "RL.TOKEN tb:change 10 1 1000 COST 2").remaining, 8);
    CHECK_EQ(rl(c, "RL.TOKEN tb:change 5 1 1000 COST 0").remaining, 5);
    CHECK_EQ(rl(c, "RL.TOKEN tb:change 5 1 1000 COST 5").allowed, 1);
    CHECK_EQ(rl(c, "RL.TOKEN tb:change 10 1 1000 COST 1").allowed, 0);
    clock_advance(1000);
    CHECK_EQ(rl(c, "RL.TOKEN tb:change 10 1 1000 COST 0").remaining, 1);
    /* Switching modes keeps the whole tokens present. */
    CHECK_EQ(rl(c, "RL.TOKEN tb:change 10 1 1000 INTERVAL COST 0").remaining, 1);
    clock_advance(3000);
    CHECK_EQ(rl(c, "RL.TOKEN tb:change 10 1 1000 INTERVAL COST 0").remaining, 4);
    CHECK_EQ(rl(c, "RL.TOKEN tb:change 10 1 1000 COST 0").remaining, 4);
}

/* Every bad input answers an error naming the argument, and the key is byte-identical afterwards. */
static void test_bad_input(void) {
    static const bad_case cases[] = { /* after "RL.TOKEN tb:bad" */
        {"", "ERR wrong number of arguments for 'rl.token' command"},
        {"10 1", "ERR wrong number of arguments for 'rl.token' command"},
        {"x 1 1000", "ERR capacity: must be an integer between 1 and 1000000000000"},
        {"0 1 1000", "ERR capacity: must be an integer between 1 and 1000000000000"},
        {"-5 1 1000", "ERR capacity: must be an integer between 1 and 1000000000000"},
        {"99999999999999999999 1 1000", "ERR capacity: must be an integer between 1 and 1000000000000"},
        {"1000000000001 1 1000", "ERR capacity: must be an integer between 1 and 1000000000000"},
        {"10 0 1000", "ERR refill_tokens: must be an integer between 1 and 1000000000000"},
        {"10 1 0", "ERR refill_ms: must be an integer between 1 and 1000000000000"},
        {"10 1 1.5", "ERR refill_ms: must be an integer between 1 and 1000000000000"},
        {"10 1 010", "ERR refill_ms: must be an integer between 1 and 1000000000000"},
        {"10 1 1000 COST", "ERR COST: needs a value"},
        {"10 1 1000 COST -1", "ERR COST: must be an integer between 0 and 1000000000000"},
        {"10 1 1000 COST 9223372036854775808", "ERR COST: must be an integer between 0 and 1000000000000"},
        {"10 1 1000 COST 1 COST 1", "ERR COST: given more than once"},
        {"10 1 1000 DRYRUN DRYRUN", "ERR DRYRUN: given more than once"},
        {"10 1 1000 FOO", "ERR 'FOO': not an option of rl.token"},
        {"10 1 1000 NODELAY", "ERR 'NODELAY': not an option of rl.token"},
        {"1000000000000 1 1000000000000",
         "ERR capacity: capacity / refill_tokens * refill_ms must not exceed 1000000000000 ms (refill from empty to full "
         "would take longer than 31 years)"},
    };
    clock_set(T0);
    del("tb:bad");
    rl(c, "RL.TOKEN tb:bad 10 1 1000 COST 3");
    check_errors_change_nothing(c, "RL.TOKEN", "tb:bad", cases, sizeof cases / sizeof cases[0]);
    /* Binary junk in an option is reported without breaking the protocol. */
    const char *argv[] = {"RL.TOKEN", "tb:bad", "10", "1", "1000", "\r\n\x01'junk"};
    size_t lens[] = {8, 6, 2, 1, 4, 8};
    redisReply *r = cmdargv(c, 6, argv, lens);
    CHECK(r->type == REDIS_REPLY_ERROR && strcmp(r->str, "ERR '???\?junk': not an option of rl.token") == 0);
    freeReplyObject(r);
    CHECK(cmd_status_is(c, "PONG", "PING")); /* the connection is still in step */

    /* A key of another type: WRONGTYPE, unchanged. */
    CHECK(cmd_status_is(c, "OK", "SET tb:str hello"));
    CHECK(cmd_status_is(c, "WRONGTYPE Operation against a key holding the wrong kind of value",
                        "RL.TOKEN tb:str 10 1 1000"));
    redisReply *s = cmd(c, "GET tb:str");
    CHECK(s->type == REDIS_REPLY_STRING && strcmp(s->str, "hello") == 0);
    freeReplyObject(s);
}

static void test_resp3_map(void) {
    del("tb:resp3");
    clock_set(T0);
    const char *expected = "%6\r\n+allowed\r\n:1\r\n+limit\r\n:5\r\n+remaining\r\n:4\r\n+retry_after_ms\r\n:-1\r\n"
                           "+reset_after_ms\r\n:1000\r\n+wait_ms\r\n:0\r\n";
    char *got = raw_exchange(srv->port, "HELLO 3\r\nRL.TOKEN tb:resp3 5 1 1000\r\n", expected);
    CHECK(strstr(got, expected) != NULL);
    free(got);
}

static void test_command_metadata(void) {
    redisReply *r = cmd(c, "COMMAND GETKEYS RL.TOKEN some:key 1 1 1 COST 1");
    CHECK(r->type == REDIS_REPLY_ARRAY && r->elements == 1 && strcmp(r->element[0]->str, "some:key") == 0);
    freeReplyObject(r);
    CHECK(command_info_is(c, "RL.TOKEN", -5, "write fast"));
}

/* DUMP/RESTORE, COPY, MOVE, DEBUG DIGEST-VALUE, DEBUG RELOAD, SAVE + restart. */
static void test_data_type(void) {
    clock_set(T0);
    del("tb:dt");
    del("tb:dt2");
    del("tb:dt3");
    rl(c, "RL.TOKEN tb:dt 10 3 1000 COST 4");
    rl(c, "RL.TOKEN tb:dti 10 3 1000 INTERVAL COST 4");
    CHECK_EQ(cmd_int(c, "COPY tb:dt tb:dt2"), 1);
    CHECK(same_dump(c, c, "tb:dt"));
    size_t l1, l2;
    char *d1 = dump_key(c, "tb:dt", &l1), *d2 = dump_key(c, "tb:dt2", &l2);
    CHECK(d1 && d2 && l1 == l2 && memcmp(d1, d2, l1) == 0);
    redisReply *g1 = cmd(c, "DEBUG DIGEST-VALUE tb:dt tb:dt2");
    CHECK(g1->type == REDIS_REPLY_ARRAY && g1->elements == 2 && strcmp(g1->element[0]->str, g1->element[1]->str) == 0);
    freeReplyObject(g1);
    redisReply *rr = redisCommand(c, "RESTORE tb:dt3 0 %b", d1, l1);
    CHECK(reply_is_status(rr, "OK"));
    if (rr) freeReplyObject(rr);
    size_t l3;
    char *d3 = dump_key(c, "tb:dt3", &l3);
    CHECK(d3 && l3 == l1 && memcmp(d3, d1, l1) == 0);
    /* The restored limiter behaves as the original. */
    rl_result a = rl(c, "RL.TOKEN tb:dt 10 3 1000 DRYRUN"), b = rl(c, "RL.TOKEN tb:dt3 10 3 1000 DRYRUN");
    CHECK(a.ok && a.remaining == b.remaining && a.reset_after_ms == b.reset_after_ms);
    CHECK_EQ(cmd_int(c, "MOVE tb:dt2 1"), 1);
    freeReplyObject(cmd(c, "SELECT 1"));
    CHECK_EQ(exists("tb:dt2"), 1);
    del("tb:dt2");
    freeReplyObject(cmd(c, "SELECT 0"));
    /* RESTORE of a payload whose state no algorithm could have written is refused. */
    char *bad = malloc(l1);
    memcpy(bad, d1, l1);
    rr = redisCommand(c, "RESTORE tb:dt4 0 %b", bad, l1 - 1);
    CHECK(rr && rr->type == REDIS_REPLY_ERROR);
    if (rr) freeReplyObject(rr);
    free(bad);

    CHECK(cmd_status_is(c, "OK", "DEBUG RELOAD"));
    size_t l4;
    char *d4 = dump_key(c, "tb:dt", &l4);
    CHECK(d4 && l4 == l1 && memcmp(d4, d1, l1) == 0);
    CHECK(cmd_status_is(c, "OK", "SAVE"));
    c = server_shutdown_restart(srv, c);
    size_t l5;
    char *d5 = dump_key(c, "tb:dt", &l5);
    CHECK(d5 && l5 == l1 && memcmp(d5, d1, l1) == 0);
    CHECK_EQ(cmd_int(c, "EXISTS tb:dti"), 1);
    free(d1);
    free(d2);
    free(d3);
    free(d4);
    free(d5);
    clock_set(T0);
}

/* A mixed run of calls, then AOF replay after kill -9 (appendfsync always) and after BGREWRITEAOF. */
static void test_aof(void) {
    server *a = server_start(server_aof_always);
    redisContext *ac = server_connect(a);
    const char *keys[] = {"aof:1", "aof:2", "aof:3", "aof:4"};
    freeReplyObject(cmd(ac, "RL.CLOCK SET %lld", T0));
    for (int i = 0; i < 200; i++) {
        freeReplyObject(cmd(ac, "RL.CLOCK ADVANCE %d", i % 7));
        freeReplyObject(cmdline(ac, "RL.TOKEN %s 20 3 1000 COST %d", keys[i % 2], i % 4));
        freeReplyObject(cmd(ac, "RL.TOKEN %s 20 3 1000 INTERVAL COST %d", keys[2 + i % 2], i % 3));
    }
    char *before[4];
    size_t lens[4];
    for (int k = 0; k < 4; k++) before[k] = dump_key(ac, keys[k], &lens[k]);
    for (int round = 0; round < 2; round++) {
        ac = aof_replay_round(a, ac, round);
        for (int k = 0; k < 4; k++) {
            size_t l;
            char *d = dump_key(ac, keys[k], &l);
            CHECK(d && before[k] && l == lens[k] && memcmp(d, before[k], l) == 0);
            free(d);
        }
    }
    for (int k = 0; k < 4; k++) free(before[k]);
    redisFree(ac);
    server_stop(a);
}

static long long info_offset(redisContext *ctx) { return info_field(ctx, "replication", "master_repl_offset"); }

/* Primary on a frozen clock, replica on the real clock: the replica ends in exactly the primary's state. */
static void test_replication(void) {
    /* A limiter made before the replica exists reaches it by the full sync (the type's RDB form). */
    CHECK_EQ(rl(c, "RL.TOKEN rep:pre 10 1 1000 COST 3").allowed, 1);
    server *rep = replica_start(srv);
    redisContext *rc = server_connect(rep);
    CHECK(cmd_int(rc, "EXISTS rep:pre") == 1 && same_dump(c, rc, "rep:pre"));

    clock_set(T0 + 5000000);
    char keys[20][32];
    for (int i = 0; i < 20; i++) snprintf(keys[i], sizeof keys[i], "rep:%d", i);
    for (int i = 0; i < 400; i++) {
        if (i % 9 == 0) clock_advance(i % 50);
        freeReplyObject(cmdline(c, "RL.TOKEN %s 10 %d 1000 %s COST %d", keys[i % 20], 1 + i % 3,
                            (i % 20) < 10 ? "" : "INTERVAL", i % 5));
    }
    CHECK_EQ(cmd_int(c, "EXISTS rep:1"), 1);
    /* One key goes idle again: the primary deletes it, and so must the replica. */
    freeReplyObject(cmd(c, "RL.TOKEN rep:idle 5 1 100 COST 1"));
    clock_advance(100);
    freeReplyObject(cmd(c, "RL.TOKEN rep:idle 5 1 100 COST 0"));
    check_replica_caught_up(c);
    for (int i = 0; i < 20; i++) {
        check_same_on_replica(c, rc, keys[i]);
        check_same_expiry_on_replica(c, rc, keys[i]);
    }
    CHECK_EQ(cmd_int(rc, "EXISTS rep:idle"), 0);
    /* A request that changes nothing (denied, on the real clock where the expiry is absolute) has no
     * effect to replicate: the replication offset stays put; an admitted one moves it. */
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK REAL"));
    CHECK_EQ(rl(c, "RL.TOKEN rep:flood 2 1 600000 COST 2").allowed, 1);
    check_replica_caught_up(c);
    long long offset = info_offset(c);
    for (int i = 0; i < 5; i++) CHECK_EQ(rl(c, "RL.TOKEN rep:flood 2 1 600000").allowed, 0);
    CHECK_EQ(info_offset(c), offset);
    CHECK_EQ(rl(c, "RL.TOKEN rep:flood 2 1 600000 COST 0").allowed, 1); /* a look changes nothing either */
    CHECK_EQ(info_offset(c), offset);
    CHECK_EQ(rl(c, "RL.TOKEN rep:flood2 2 1 600000").allowed, 1); /* a new limiter is an effect */
    CHECK(info_offset(c) > offset);
    check_replicated(c, rc, "rep:flood", "rep:flood2", NULL);
    clock_set(T0);

    /* The replica refuses writes, as it should. */
    rl_result w = rl(rc, "RL.TOKEN rep:0 10 1 1000");
    CHECK(!w.ok && strncmp(w.error, "READONLY", 8) == 0);
    redisFree(rc);
    server_stop(rep);
}

int main(void) {
    static const suite_test tests[] = {test_exact_rational_refill, test_continuous_table, test_interval_table,
        test_exact_retry_and_reset, test_dryrun_writes_nothing, test_idle_and_ttl, test_parameter_change,
        test_bad_input, test_resp3_map, test_command_metadata, test_data_type, test_aof, test_replication, NULL};
    return server_suite("integration_token", &srv, &c, tests);
}
