/* crossversion.c -- limiter data across server versions: Redis 7.0 (the system's) with each newer server
 * of the matrix (SERVERS: redis-8.0, valkey-8.1, built by scripts/servers.sh).
 *
 *   - An RDB written by 7.0 with every kind of limiter key loads into each newer server, and every limiter
 *     continues exactly: the same calls at the same test-clock instants answer the same replies as on 7.0
 *     restarted from the same RDB.
 *   - A 7.0 primary replicates limiter state to a replica of each newer server: after mixed traffic the
 *     replica answers every read-only probe as the primary does, holds the same logs and the same expiries.
 * A downgrade (a newer server's RDB into 7.0) is refused by the RDB version, by Redis itself: not tested
 * here, documented in docs/operations.md. Runs once, not per server: it picks the servers itself. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "effect_checks.h"
#include "rl_checks.h"
#include "server.h"

#define T0 1700000000000LL

/* The keys, one per kind of limiter (and mode), and a call that moves each. */
static const struct {
    const char *key, *write, *probe;
} kinds[] = {
    {"cv:tok", "RL.TOKEN cv:tok 10 3 1000 COST %d", "RL.TOKEN_RO cv:tok 10 3 1000 COST 2"},
    {"cv:int", "RL.TOKEN cv:int 10 4 1000 INTERVAL COST %d", "RL.TOKEN_RO cv:int 10 4 1000 INTERVAL COST 2"},
    {"cv:leak", "RL.LEAKY cv:leak 8 1 700 COST %d", "RL.LEAKY_RO cv:leak 8 1 700 COST 1"},
    {"cv:gcra", "RL.LEAKY cv:gcra 8 3 1000 NODELAY COST %d", "RL.LEAKY_RO cv:gcra 8 3 1000 NODELAY COST 2"},
    {"cv:fix", "RL.WINDOW cv:fix 12 5000 FIXED COST %d", "RL.WINDOW_RO cv:fix 12 5000 FIXED COST 3"},
    {"cv:sl", "RL.WINDOW cv:sl 12 5000 COST %d", "RL.WINDOW_RO cv:sl 12 5000 COST 3"},
    {"cv:log", "RL.SLIDINGLOG cv:log 9 4000 COST %d", "RL.SLIDINGLOG_RO cv:log 9 4000 COST 2"},
};
#define NKINDS (sizeof kinds / sizeof kinds[0])
#define STEPS 12

static void use_server(const char *binary) { setenv("REDIS_SERVER", binary, 1); }

static void clock_set(redisContext *c, long long ms) { CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", ms)); }

/* A deterministic sequence of calls after the RDB was written: every kind, at 150 ms steps. */
static void continue_limiters(redisContext *c, rl_result out[STEPS][NKINDS]) {
    for (int s = 0; s < STEPS; s++) {
        clock_set(c, T0 + 10000 + 150LL * s);
        for (size_t k = 0; k < NKINDS; k++) out[s][k] = rl(c, kinds[k].write, 1 + (s + (int)k) % 3);
    }
}

static int same_result(const rl_result *a, const rl_result *b) {
    return a->ok && b->ok && a->allowed == b->allowed && a->limit == b->limit && a->remaining == b->remaining &&
           a->retry_after_ms == b->retry_after_ms && a->reset_after_ms == b->reset_after_ms && a->wait_ms == b->wait_ms;
}

static void test_rdb(const char *newer) {
    use_server("redis-server");
    server *s = server_start(NULL);
    redisContext *c = server_connect(s);
    clock_set(c, T0);
    for (int s2 = 0; s2 < 6; s2++)
        for (size_t k = 0; k < NKINDS; k++) freeReplyObject(cmdline(c, kinds[k].write, 2));
    CHECK(cmd_status_is(c, "OK", "SAVE"));
    redisFree(c);
    server_shutdown(s); /* NOSAVE: the RDB stays the one just saved */

    static rl_result on_70[STEPS][NKINDS], on_newer[STEPS][NKINDS];
    server_restart(s);
    c = server_connect(s);
    continue_limiters(c, on_70);
    redisFree(c);
    server_shutdown(s);

    use_server(newer);
    server_restart(s);
    c = server_connect(s);
    CHECK_EQ(cmd_int(c, "DBSIZE"), (long long)NKINDS);
    continue_limiters(c, on_newer);
    int differ = 0;
    for (int i = 0; i < STEPS; i++)
        for (size_t k = 0; k < NKINDS; k++)
            if (!same_result(&on_70[i][k], &on_newer[i][k]) && differ++ < 3)
                fprintf(stderr, "     %s step %d: %s differs (%lld %lld %lld vs %lld %lld %lld)\n", newer, i, kinds[k].key,
                        on_70[i][k].allowed, on_70[i][k].remaining, on_70[i][k].retry_after_ms, on_newer[i][k].allowed,
                        on_newer[i][k].remaining, on_newer[i][k].retry_after_ms);
    CHECK_EQ(differ, 0);
    int admitted = 0;
    for (int i = 0; i < STEPS; i++)
        for (size_t k = 0; k < NKINDS; k++) admitted += (int)on_newer[i][k].allowed;
    CHECK(admitted > 10 && admitted < STEPS * (int)NKINDS); /* the trace admits and denies */
    redisFree(c);
    server_stop(s);
}

/* The same probe on primary and replica at the same frozen instant. */
static int same_probe(redisContext *p, redisContext *r, const char *line) {
    rl_result a = rl(p, "%s", line), b = rl(r, "%s", line);
    return same_result(&a, &b);
}

static void test_replica(const char *newer) {
    use_server("redis-server");
    server *primary = server_start(NULL);
    redisContext *p = server_connect(primary);
    use_server(newer);
    server *replica = replica_start(primary);
    redisContext *r = server_connect(replica);
    for (int s = 0; s < 40; s++) {
        clock_set(p, T0 + 97LL * s);
        for (size_t k = 0; k < NKINDS; k++) freeReplyObject(cmdline(p, kinds[k].write, 1 + (s * 7 + (int)k) % 4));
    }
    check_replica_caught_up(p);
    clock_set(p, T0 + 4000);
    clock_set(r, T0 + 4000);
    for (size_t k = 0; k < NKINDS; k++) {
        if (!CHECK(same_probe(p, r, kinds[k].probe))) fprintf(stderr, "     %s: %s\n", newer, kinds[k].probe);
        CHECK_EQ(cmd_int(r, "PEXPIRETIME %s", kinds[k].key), cmd_int(p, "PEXPIRETIME %s", kinds[k].key));
    }
    redisReply *a = cmd(p, "ZRANGE cv:log 0 -1 WITHSCORES"), *b = cmd(r, "ZRANGE cv:log 0 -1 WITHSCORES");
    int same_log = a->type == REDIS_REPLY_ARRAY && b->type == REDIS_REPLY_ARRAY && a->elements == b->elements &&
                   a->elements > 0;
    for (size_t i = 0; same_log && i < a->elements; i++) same_log = strcmp(a->element[i]->str, b->element[i]->str) == 0;
    CHECK(same_log);
    freeReplyObject(a);
    freeReplyObject(b);
    redisFree(r);
    redisFree(p);
    server_stop(replica);
    server_stop(primary);
    use_server("redis-server");
}

int main(void) {
    /* The newer servers of the matrix: SERVERS as make test passes it, every one of them required. */
    const char *list = getenv("SERVERS");
    char names[256];
    snprintf(names, sizeof names, "%s", list && *list ? list : "redis-7.0 redis-8.0 valkey-8.1");
    int newer = 0;
    char *save = NULL;
    for (char *name = strtok_r(names, " ", &save); name; name = strtok_r(NULL, " ", &save)) {
        if (strcmp(name, "redis-7.0") == 0) continue;
        char cwd[256], binary[512];
        if (!getcwd(cwd, sizeof cwd)) cwd[0] = '\0';
        snprintf(binary, sizeof binary, "%s/build/servers/%s/bin/redis-server", cwd, name);
        if (!CHECK(access(binary, X_OK) == 0)) {
            fprintf(stderr, "     %s is not built (make servers)\n", binary);
            continue;
        }
        printf("crossversion: redis 7.0 with %s\n", name);
        test_rdb(binary);
        test_replica(binary);
        newer++;
    }
    if (newer == 0) printf("crossversion: SERVERS lists no newer server; nothing to compare\n");
    return check_summary("crossversion");
}
