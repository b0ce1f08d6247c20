/* crossversion.c -- limiter data across server versions: Redis 7.0 (the system's) with each newer server
 * of the matrix (SERVERS: redis-8.0, valkey-8.1, built by scripts/servers.sh).
 *
 *   - An RDB written by 7.0 with every kind of limiter key loads into each newer server, and every limiter
 *     continues exactly: the same calls at the same test-clock instants answer the same replies as on 7.0
 *     restarted from the same RDB.
 *     The RDB holds a policy too (the module's aux data) and a key checked under it: each newer server loads
 *     the policy as it was set, and RL.CHECK continues the key exactly as 7.0 does.
 *   - A 7.0 primary replicates limiter state to a replica of each newer server: after mixed traffic the
 *     replica answers every read-only probe as the primary does, holds the same logs and the same expiries,
 *     and the same policies (one by the full sync, one by the stream), answering RL.CHECK_RO as 7.0 does.
 * A downgrade (a newer server's RDB into 7.0) is refused by the RDB version, by Redis itself: not tested
 * here, documented in docs/operations.md. Runs once, not per server: it picks the servers itself. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "effect_checks.h"
#include "lock_checks.h"
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

/* A policy of four limits (RL.CHECK's reply: allowed, retry, reset, then six fields per limit) and its key. */
#define CV_POLICY "LIMIT burst TOKEN 10 3 1000 LIMIT win WINDOW 12 5000 FIXED LIMIT drip LEAKY 8 3 1000 NODELAY LIMIT day QUOTA 50 DAY"
#define CV_POLICY_LIMITS 4
#define CHECK_FIELDS (3 + 6 * CV_POLICY_LIMITS)

typedef struct check_reply {
    int ok;
    long long f[CHECK_FIELDS];
} check_reply;

/* An RL.CHECK reply of CV_POLICY's shape as its 27 integers (ok = 0 for anything else: an error). */
static check_reply check_of(redisContext *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    words w;
    words_vformat(&w, fmt, ap);
    va_end(ap);
    redisReply *r = cmdargv(c, w.argc, w.argv, w.lens);
    check_reply out = {0};
    out.ok = r->type == REDIS_REPLY_ARRAY && r->elements == 3 + CV_POLICY_LIMITS;
    for (int i = 0; out.ok && i < 3; i++) {
        out.ok = r->element[i]->type == REDIS_REPLY_INTEGER;
        out.f[i] = r->element[i]->integer;
    }
    for (int l = 0; out.ok && l < CV_POLICY_LIMITS; l++) out.ok = rl_fields(r->element[3 + l], out.f + 3 + 6 * l);
    if (!out.ok) fprintf(stderr, "     %s: %s\n", w.line, r->str ? r->str : "(not RL.CHECK's reply)");
    freeReplyObject(r);
    return out;
}

static int same_check(const check_reply *a, const check_reply *b) {
    return a->ok && b->ok && memcmp(a->f, b->f, sizeof a->f) == 0;
}

/* RL.POLICY GET name as one line of words ("(nil)" when there is none); the caller frees it. */
static char *policy_words(redisContext *c, const char *name) {
    redisReply *r = cmd(c, "RL.POLICY GET %s", name);
    char *text = r->type == REDIS_REPLY_NIL ? strdup("(nil)") : reply_words(r);
    freeReplyObject(r);
    return text;
}

static void use_server(const char *binary) { setenv("REDIS_SERVER", binary, 1); }

static void clock_set(redisContext *c, long long ms) { CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", ms)); }

/* A deterministic sequence of calls after the RDB was written: every kind, and the policy's key, at 150 ms
 * steps. */
static void continue_limiters(redisContext *c, rl_result out[STEPS][NKINDS], check_reply checked[STEPS]) {
    for (int s = 0; s < STEPS; s++) {
        clock_set(c, T0 + 10000 + 150LL * s);
        for (size_t k = 0; k < NKINDS; k++) out[s][k] = rl(c, kinds[k].write, 1 + (s + (int)k) % 3);
        checked[s] = check_of(c, "RL.CHECK cv-policy cv:chk COST %d", 1 + s % 4);
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
    CHECK(cmd_status_is(c, "OK", "RL.POLICY SET cv-policy " CV_POLICY));
    for (int s2 = 0; s2 < 4; s2++) CHECK(check_of(c, "RL.CHECK cv-policy cv:chk COST 3").ok);
    CHECK(cmd_status_is(c, "OK", "SAVE"));
    redisFree(c);
    server_shutdown(s); /* NOSAVE: the RDB stays the one just saved */

    static rl_result on_70[STEPS][NKINDS], on_newer[STEPS][NKINDS];
    static check_reply checked_70[STEPS], checked_newer[STEPS];
    server_restart(s);
    c = server_connect(s);
    char *policy_70 = policy_words(c, "cv-policy");
    continue_limiters(c, on_70, checked_70);
    redisFree(c);
    server_shutdown(s);

    use_server(newer);
    server_restart(s);
    c = server_connect(s);
    CHECK_EQ(cmd_int(c, "DBSIZE"), (long long)NKINDS + 1);
    char *policy_newer = policy_words(c, "cv-policy");
    CHECK_STR(policy_newer, CV_POLICY " ");
    CHECK_STR(policy_newer, policy_70);
    free(policy_70);
    free(policy_newer);
    continue_limiters(c, on_newer, checked_newer);
    int differ = 0;
    for (int i = 0; i < STEPS; i++)
        for (size_t k = 0; k < NKINDS; k++)
            if (!same_result(&on_70[i][k], &on_newer[i][k]) && differ++ < 3)
                fprintf(stderr, "     %s step %d: %s differs (%lld %lld %lld vs %lld %lld %lld)\n", newer, i, kinds[k].key,
                        on_70[i][k].allowed, on_70[i][k].remaining, on_70[i][k].retry_after_ms, on_newer[i][k].allowed,
                        on_newer[i][k].remaining, on_newer[i][k].retry_after_ms);
    CHECK_EQ(differ, 0);
    /* The policy's key, call for call (every field of every limit), and the trace admits and denies. */
    int checks_differ = 0, checks_admitted = 0;
    for (int i = 0; i < STEPS; i++) {
        if (!same_check(&checked_70[i], &checked_newer[i]) && checks_differ++ < 3)
            fprintf(stderr, "     %s step %d: RL.CHECK differs (allowed %lld retry %lld vs allowed %lld retry %lld)\n",
                    newer, i, checked_70[i].f[0], checked_70[i].f[1], checked_newer[i].f[0], checked_newer[i].f[1]);
        checks_admitted += checked_newer[i].ok && checked_newer[i].f[0] == 1;
    }
    CHECK_EQ(checks_differ, 0);
    CHECK(checks_admitted > 0 && checks_admitted < STEPS);
    /* The day's quota carries the RDB's count: 2 calls of 3 admitted before the save (the leaky bucket of 8
     * refused the third and fourth), then this one of 1. */
    CHECK_EQ(checked_newer[0].f[3 + 6 * 3 + 2], 50 - 6 - 1);
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
    CHECK(cmd_status_is(p, "OK", "RL.POLICY SET cv-full " CV_POLICY)); /* reaches the replica by the full sync */
    use_server(newer);
    server *replica = replica_start(primary);
    redisContext *r = server_connect(replica);
    CHECK(cmd_status_is(p, "OK", "RL.POLICY SET cv-stream " CV_POLICY)); /* and this one by the stream */
    for (int s = 0; s < 40; s++) {
        clock_set(p, T0 + 97LL * s);
        for (size_t k = 0; k < NKINDS; k++) freeReplyObject(cmdline(p, kinds[k].write, 1 + (s * 7 + (int)k) % 4));
        CHECK(check_of(p, "RL.CHECK cv-full cv:full COST %d", 1 + s % 3).ok);
        CHECK(check_of(p, "RL.CHECK cv-stream cv:stream COST %d", 1 + s % 2).ok);
    }
    check_replica_caught_up(p);
    clock_set(p, T0 + 4000);
    clock_set(r, T0 + 4000);
    for (size_t k = 0; k < NKINDS; k++) {
        if (!CHECK(same_probe(p, r, kinds[k].probe))) fprintf(stderr, "     %s: %s\n", newer, kinds[k].probe);
        CHECK_EQ(cmd_int(r, "PEXPIRETIME %s", kinds[k].key), cmd_int(p, "PEXPIRETIME %s", kinds[k].key));
    }
    static const char *const policy_names[] = {"cv-full", "cv-stream"}, *const policy_keys[] = {"cv:full", "cv:stream"};
    for (int i = 0; i < 2; i++) {
        char *on_p = policy_words(p, policy_names[i]), *on_r = policy_words(r, policy_names[i]);
        CHECK_STR(on_r, CV_POLICY " ");
        CHECK_STR(on_r, on_p);
        free(on_p);
        free(on_r);
        check_reply a = check_of(p, "RL.CHECK_RO %s %s COST 2", policy_names[i], policy_keys[i]);
        check_reply b = check_of(r, "RL.CHECK_RO %s %s COST 2", policy_names[i], policy_keys[i]);
        if (!CHECK(same_check(&a, &b))) fprintf(stderr, "     %s: RL.CHECK_RO %s differs on the replica\n", newer, policy_names[i]);
        CHECK_EQ(cmd_int(r, "PEXPIRETIME %s", policy_keys[i]), cmd_int(p, "PEXPIRETIME %s", policy_keys[i]));
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
