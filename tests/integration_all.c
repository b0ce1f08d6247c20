/* integration_all.c -- RL.ALL (several limits in one atomic call) and RL.RESET against real redis-servers.
 *
 * The reference for RL.ALL is built from the single-key commands on a second set of keys: check every limit
 * with DRYRUN, then apply all of them (the real single-key command) or none. On generated traces of 2 to 4
 * mixed limits, under the test clock, RL.ALL must then answer the same verdict, the same per-limit replies
 * when admitted, leave every key byte-for-byte equal to its twin (DUMP), and, when denied, describe each limit
 * as it stands: whether it alone would admit, what remains (its COST 0 reply), and a retry_after_ms that is
 * exactly the first ms at which the same RL.ALL is admitted. Then racing clients (no limit ever admits more
 * than its budget), replication (a replica ends equal), the RESP3 shape, bad input, and RL.RESET; then REFUND
 * and ATMOST on the single-key commands: exact replies, the seventh field `granted`, replication.
 *
 * RL.ALL's own REFUND is checked the same way, in the traces: a step that gives back (REFUND n for the
 * call, some clauses their own REFUND m) must answer, per limit, what the single-key command's REFUND
 * answers on the twin key, and leave every key equal to its twin; a refund right after an admission undoes
 * it; it replicates as one unit; it is refused, changing nothing, with a SMOOTH clause, a clause's COST, or
 * a clause's REFUND in a call that takes. RL.ALL_RO answers exactly what RL.ALL DRYRUN answers at every
 * step, writing nothing. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define RNG_SEED 0x5eed0a11c0ffee01ULL
#include "effect_checks.h"
#include "rl_checks.h"
#include "rng.h"
#include "server.h"
#include "suite.h"

static server *srv;
static redisContext *c;

#define T0 1700000000000LL
#define MAX_LIMITS 4

static void clock_set(long long ms) { CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", ms)); }

/* One limit of a trace: its kind (the RL.ALL clause word), its command, and its arguments after the key. */
typedef struct limit {
    const char *kind, *command;
    char args[96];
} limit;

static void random_limit(limit *l) {
    switch (rng() % 6) {
    case 0: l->kind = "TOKEN", l->command = "RL.TOKEN";
        snprintf(l->args, sizeof l->args, "%lld %lld %lld", (long long)rng_range(1, 8), (long long)rng_range(1, 3),
                 (long long)rng_range(200, 3000));
        break;
    case 1: l->kind = "TOKEN", l->command = "RL.TOKEN";
        snprintf(l->args, sizeof l->args, "%lld 2 1000 INTERVAL", (long long)rng_range(2, 6));
        break;
    case 2: l->kind = "LEAKY", l->command = "RL.LEAKY";
        snprintf(l->args, sizeof l->args, "%lld 1 %lld%s", (long long)rng_range(1, 6), (long long)rng_range(100, 2000),
                 rng() % 2 ? " NODELAY" : "");
        break;
    case 3: l->kind = "WINDOW", l->command = "RL.WINDOW";
        snprintf(l->args, sizeof l->args, "%lld %lld FIXED", (long long)rng_range(1, 8), (long long)rng_range(500, 5000));
        break;
    case 4: l->kind = "WINDOW", l->command = "RL.WINDOW";
        snprintf(l->args, sizeof l->args, "%lld %lld", (long long)rng_range(1, 8), (long long)rng_range(500, 5000));
        break;
    default: l->kind = "SLIDINGLOG", l->command = "RL.SLIDINGLOG";
        snprintf(l->args, sizeof l->args, "%lld %lld%s", (long long)rng_range(1, 8), (long long)rng_range(500, 5000),
                 rng() % 3 ? "" : " MINGAP 100");
        break;
    }
}

/* The line of command (RL.ALL, RL.ALL_RO) over keys "<set>:<trace>:<i>", taking (word COST) or giving back
 * (word REFUND) global for every limit, or its own cost_i (< 0: none). */
static void all_line(char *out, size_t n, const char *command, const char *word, const char *set, int trace,
                     const limit *ls, int nl, const long long *cost, long long global, const char *extra) {
    size_t used = (size_t)snprintf(out, n, "%s %d", command, nl);
    for (int i = 0; i < nl; i++) used += (size_t)snprintf(out + used, n - used, " {t%d}%s:%d", trace, set, i);
    used += (size_t)snprintf(out + used, n - used, " %s %lld%s", word, global, extra);
    for (int i = 0; i < nl; i++) {
        used += (size_t)snprintf(out + used, n - used, " LIMIT %s %s", ls[i].kind, ls[i].args);
        if (cost[i] >= 0) used += (size_t)snprintf(out + used, n - used, " %s %lld", word, cost[i]);
    }
}

typedef struct all_result {
    int ok;
    long long allowed, retry, reset;
    rl_result limits[MAX_LIMITS];
} all_result;

static all_result run_all(const char *line, int nl) {
    all_result a = {0};
    redisReply *x = cmdline(c, "%s", line);
    if (x->type == REDIS_REPLY_ARRAY && x->elements == (size_t)(3 + nl)) {
        a.ok = 1;
        a.allowed = x->element[0]->integer;
        a.retry = x->element[1]->integer;
        a.reset = x->element[2]->integer;
        for (int i = 0; i < nl; i++) {
            a.limits[i] = rl_of(x->element[3 + i]);
            a.ok &= a.limits[i].ok;
        }
    } else {
        fprintf(stderr, "     %s\n     -> %s\n", line, x->type == REDIS_REPLY_ERROR ? x->str : "(not an RL.ALL reply)");
    }
    freeReplyObject(x);
    return a;
}

static int same(const rl_result *a, const rl_result *b) {
    return a->ok && b->ok && a->allowed == b->allowed && a->limit == b->limit && a->remaining == b->remaining &&
           a->retry_after_ms == b->retry_after_ms && a->reset_after_ms == b->reset_after_ms && a->wait_ms == b->wait_ms;
}

/* 1 if two keys of one server hold the same value (DUMP, byte for byte; both missing counts as equal). */
static int same_value(const char *ka, const char *kb) {
    size_t la = 0, lb = 0;
    char *a = dump_key(c, ka, &la), *b = dump_key(c, kb, &lb);
    int same = (!a && !b) || (a && b && la == lb && memcmp(a, b, la) == 0);
    free(a);
    free(b);
    return same;
}

static long long mismatches, steps_admitted, steps_denied, steps_refunded, retry_probes;

static void mismatch(const char *what, const char *line, int i) {
    if (mismatches++ < 5) fprintf(stderr, "     %s (limit %d): %s\n", what, i, line);
}

static int same_all(const all_result *a, const all_result *b, int nl) {
    int ok = a->ok && b->ok && a->allowed == b->allowed && a->retry == b->retry && a->reset == b->reset;
    for (int i = 0; ok && i < nl; i++) ok = same(&a->limits[i], &b->limits[i]);
    return ok;
}

/* RL.ALL_RO answers what RL.ALL DRYRUN answers (word: COST or REFUND). */
static void ro_is_dryrun(const char *word, int trace, const limit *ls, int nl, const long long *cost, long long global) {
    char ro[1024], dry[1100];
    all_line(ro, sizeof ro, "RL.ALL_RO", word, "a", trace, ls, nl, cost, global, "");
    all_line(dry, sizeof dry, "RL.ALL", word, "a", trace, ls, nl, cost, global, " DRYRUN");
    all_result r = run_all(ro, nl), d = run_all(dry, nl);
    if (!same_all(&r, &d, nl)) mismatch("RL.ALL_RO differs from RL.ALL DRYRUN", ro, -1);
}

/* A step that gives back: RL.ALL REFUND on set A, each single command's REFUND on set B. */
static void refund_step(int trace, const limit *ls, int nl, const long long *cost, long long global) {
    char line[1024];
    all_line(line, sizeof line, "RL.ALL", "REFUND", "a", trace, ls, nl, cost, global, "");
    all_result a = run_all(line, nl);
    if (!CHECK(a.ok)) return;
    if (a.allowed != 1 || a.retry != -1) mismatch("a refund is not admitted", line, -1);
    long long reset = 0;
    for (int i = 0; i < nl; i++) {
        long long k = cost[i] >= 0 ? cost[i] : global;
        rl_result real = rl(c, "%s {t%d}b:%d %s REFUND %lld", ls[i].command, trace, i, ls[i].args, k);
        if (!same(&a.limits[i], &real)) mismatch("refund reply differs from the single command's", line, i);
        if (a.limits[i].reset_after_ms > reset) reset = a.limits[i].reset_after_ms;
        char ka[64], kb[64];
        snprintf(ka, sizeof ka, "{t%d}a:%d", trace, i);
        snprintf(kb, sizeof kb, "{t%d}b:%d", trace, i);
        if (!same_value(ka, kb)) mismatch("keys differ from the reference's after a refund", line, i);
    }
    if (a.reset != reset) mismatch("reset_after_ms is not the largest", line, -1);
    steps_refunded++;
}

/* One step: RL.ALL on set A, the reference on set B, then every comparison. One step in five gives back. */
static void step(int trace, const limit *ls, int nl, long long now) {
    long long cost[MAX_LIMITS], global = rng_range(0, 3);
    for (int i = 0; i < nl; i++) cost[i] = rng() % 3 ? -1 : rng_range(0, 4);
    int refund = rng() % 5 == 0;
    clock_set(now);
    ro_is_dryrun(refund ? "REFUND" : "COST", trace, ls, nl, cost, global);
    if (refund) {
        refund_step(trace, ls, nl, cost, global);
        return;
    }
    char line[1024];
    all_line(line, sizeof line, "RL.ALL", "COST", "a", trace, ls, nl, cost, global, "");
    all_result a = run_all(line, nl);
    if (!CHECK(a.ok)) return;

    /* The reference: DRYRUN each limit on set B, then all or nothing. */
    rl_result dry[MAX_LIMITS], zero[MAX_LIMITS];
    int all_admit = 1;
    for (int i = 0; i < nl; i++) {
        long long k = cost[i] >= 0 ? cost[i] : global;
        dry[i] = rl(c, "%s {t%d}b:%d %s COST %lld DRYRUN", ls[i].command, trace, i, ls[i].args, k);
        zero[i] = rl(c, "%s {t%d}b:%d %s COST 0 DRYRUN", ls[i].command, trace, i, ls[i].args);
        all_admit &= (int)dry[i].allowed;
    }
    if (a.allowed != all_admit) mismatch("verdict", line, -1);
    long long reset = 0;
    for (int i = 0; i < nl; i++) {
        long long k = cost[i] >= 0 ? cost[i] : global;
        const rl_result *got = &a.limits[i];
        if (all_admit) {
            rl_result real = rl(c, "%s {t%d}b:%d %s COST %lld", ls[i].command, trace, i, ls[i].args, k);
            if (!same(got, &real)) mismatch("admitted reply differs from the single command's", line, i);
        } else if (got->allowed != dry[i].allowed) {
            mismatch("per-limit verdict", line, i);
        } else if (got->remaining != zero[i].remaining || got->reset_after_ms != zero[i].reset_after_ms ||
                   got->limit != dry[i].limit || got->wait_ms != 0) {
            mismatch("denied call does not describe the limit as it stands", line, i);
        } else if (dry[i].allowed && got->retry_after_ms != -1) {
            mismatch("a limit that admits has a retry", line, i);
        } else if (!dry[i].allowed && strcmp(ls[i].kind, "SLIDINGLOG") != 0 &&
                   got->retry_after_ms != dry[i].retry_after_ms) {
            mismatch("a denying limit's retry differs from its DRYRUN's", line, i);
        }
        if (got->reset_after_ms > reset) reset = got->reset_after_ms;
        char ka[64], kb[64];
        snprintf(ka, sizeof ka, "{t%d}a:%d", trace, i);
        snprintf(kb, sizeof kb, "{t%d}b:%d", trace, i);
        if (!same_value(ka, kb)) mismatch("keys differ from the reference's", line, i);
    }
    if (a.reset != reset) mismatch("reset_after_ms is not the largest", line, -1);
    steps_admitted += a.allowed;
    steps_denied += !a.allowed;
    if (a.allowed) {
        if (a.retry != -1) mismatch("admitted with a retry", line, -1);
        return;
    }
    /* retry_after_ms: the same call (DRYRUN) is admitted exactly then, and not 1 ms before. */
    if (a.retry < 0) return;
    char dry_line[1100];
    all_line(dry_line, sizeof dry_line, "RL.ALL", "COST", "a", trace, ls, nl, cost, global, " DRYRUN");
    retry_probes++;
    clock_set(now + a.retry - 1);
    all_result before = run_all(dry_line, nl);
    clock_set(now + a.retry);
    all_result at = run_all(dry_line, nl);
    if (!before.ok || !at.ok || before.allowed || !at.allowed) mismatch("retry_after_ms is not exact", line, -1);
    clock_set(now);
}

static void test_traces(void) {
    for (int trace = 0; trace < 60; trace++) {
        limit ls[MAX_LIMITS];
        int nl = (int)rng_range(2, MAX_LIMITS);
        for (int i = 0; i < nl; i++) random_limit(&ls[i]);
        long long now = T0 + trace * 100000000LL;
        for (int s = 0; s < 25; s++) {
            step(trace, ls, nl, now);
            now += rng() % 4 ? (long long)rng_range(0, 300) : (long long)rng_range(0, 5000);
        }
    }
    CHECK_EQ(mismatches, 0);
    printf("traces: %lld calls admitted, %lld denied, %lld refunds, %lld retries probed\n", steps_admitted, steps_denied,
           steps_refunded, retry_probes);
    /* every path, well exercised */
    CHECK(steps_admitted > 200 && steps_denied > 200 && steps_refunded > 150 && retry_probes > 100);
}

/* --- atomicity, racing clients ------------------------------------------------------------------- */

typedef struct racer {
    int port, n;
    long long admitted;
} racer;

static void *race(void *arg) {
    racer *r = arg;
    redisContext *rc = redisConnect("127.0.0.1", r->port);
    for (int i = 0; i < r->n; i++) {
        redisReply *x = redisCommand(rc, "RL.ALL 3 {r}s {r}h {r}l LIMIT TOKEN 40 1 86400000 LIMIT WINDOW 25 86400000 "
                                         "FIXED LIMIT SLIDINGLOG 30 86400000");
        if (x && x->type == REDIS_REPLY_ARRAY && x->elements == 6) r->admitted += x->element[0]->integer;
        if (x) freeReplyObject(x);
    }
    redisFree(rc);
    return NULL;
}

static void test_racing(void) {
    clock_set(T0);
    enum { THREADS = 10 };
    pthread_t th[THREADS];
    racer rs[THREADS];
    for (int i = 0; i < THREADS; i++) {
        rs[i] = (racer){srv->port, 20, 0};
        pthread_create(&th[i], NULL, race, &rs[i]);
    }
    long long admitted = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        admitted += rs[i].admitted;
    }
    CHECK_EQ(admitted, 25); /* the tightest budget, exactly: no limit ever admits more than its own */
    CHECK_RL(rl(c, "RL.TOKEN_RO {r}s 40 1 86400000 COST 0"), 1, 40, 15, -1, 25 * 86400000LL, 0);
    CHECK_EQ(rl(c, "RL.WINDOW_RO {r}h 25 86400000 FIXED COST 0").remaining, 0);
    /* Denied attempts are not logged by RL.ALL: the log holds the 25 admitted units (one weighted member
     * for attempts in the same µs, as the frozen clock makes them), so 5 of 30 remain. */
    CHECK_EQ(rl(c, "RL.SLIDINGLOG_RO {r}l 30 86400000 COST 0").remaining, 5);
}

/* --- replication, RESP3 ---------------------------------------------------------------------------- */

static void test_replication(void) {
    clock_set(T0);
    server *rep = replica_start(srv);
    redisContext *r = server_connect(rep);
    for (int i = 0; i < 40; i++) {
        clock_set(T0 + i * 150);
        freeReplyObject(cmd(c, "RL.ALL 3 {p}a {p}b {p}c LIMIT LEAKY 5 1 1000 LIMIT WINDOW 7 2000 LIMIT SLIDINGLOG 6 3000 "
                               "COST 2"));
    }
    check_replicated(c, r, "{p}a", "{p}b", "{p}c", NULL);
    CHECK_EQ(cmd_int(r, "EXISTS {p}a {p}b {p}c"), 3);
    redisFree(r);
    server_stop(rep);
}

static void test_resp3(void) {
    clock_set(T0);
    const char *expected = "%4\r\n+allowed\r\n:1\r\n+retry_after_ms\r\n:-1\r\n+reset_after_ms\r\n:1000\r\n+limits\r\n*2\r\n"
                           "%6\r\n+allowed\r\n:1\r\n+limit\r\n:5\r\n+remaining\r\n:4\r\n+retry_after_ms\r\n:-1\r\n"
                           "+reset_after_ms\r\n:1000\r\n+wait_ms\r\n:0\r\n"
                           "%6\r\n+allowed\r\n:1\r\n+limit\r\n:3\r\n+remaining\r\n:2\r\n+retry_after_ms\r\n:-1\r\n"
                           "+reset_after_ms\r\n:1000\r\n+wait_ms\r\n:0\r\n";
    char *got = raw_exchange(srv->port, "HELLO 3\r\nRL.ALL 2 {3}a {3}b LIMIT TOKEN 5 1 1000 LIMIT WINDOW 3 1000 FIXED\r\n",
                             expected);
    if (!CHECK(strstr(got, expected) != NULL)) fprintf(stderr, "     got: %s\n", got);
    free(got);
}

/* The AOF carries one admitted RL.ALL as one unit: MULTI, the effects of every key, EXEC. (Redis wraps what
 * one module command propagates; this checks that the module's effects are propagated within the call.) */
static void test_aof_unit(void) {
    server *s = server_start(server_aof_always);
    redisContext *a = server_connect(s);
    freeReplyObject(cmd(a, "RL.ALL 3 {q}t {q}w {q}l LIMIT TOKEN 5 1 1000 LIMIT WINDOW 3 60000 LIMIT SLIDINGLOG 3 60000"));
    char path[512];
    snprintf(path, sizeof path, "%s/appendonlydir/appendonly.aof.1.incr.aof", s->dir);
    FILE *f = fopen(path, "rb");
    char aof[8192] = "";
    size_t n = f ? fread(aof, 1, sizeof aof - 1, f) : 0;
    if (f) fclose(f);
    aof[n] = '\0';
    for (size_t i = 0; i < n; i++)
        if (aof[i] == '\0') aof[i] = ' '; /* the binary RL.SETSTATE state */
    const char *multi = strstr(aof, "MULTI"), *exec = strstr(aof, "EXEC");
    const char *t = strstr(aof, "{q}t"), *w = strstr(aof, "{q}w"), *l = strstr(aof, "{q}l");
    if (!CHECK(multi && exec && t && w && l && multi < t && multi < w && multi < l && t < exec && w < exec && l < exec))
        fprintf(stderr, "     %s: %zu bytes, MULTI %d EXEC %d keys %d %d %d\n", path, n, !!multi, !!exec, !!t, !!w, !!l);
    CHECK(exec && strstr(exec + 4, "{q}") == NULL); /* nothing of the call after its EXEC */
    redisFree(a);
    server_stop(s);
}

/* Random RL.ALL argument vectors from words that mean something to it (and some that do not): every answer
 * is an error starting with "ERR " or "WRONGTYPE" that changes no key, or a well-formed reply (one of
 * RL.ALL_RO's changes no key either); the server keeps answering. */
static void test_random_vectors(void) {
    static const char *const words[] = {"LIMIT", "limit", "TOKEN", "LEAKY", "WINDOW", "SLIDINGLOG", "SMOOTH", "0.5", "COST", "DRYRUN", "MAXWAIT", "WARMUP",
                                        "INTERVAL", "NODELAY", "BLOCK", "FIXED", "SLIDING", "MINGAP", "REFUND",
                                        "ATMOST", "0", "1", "2", "3", "5", "16", "17", "1000", "-1", "x",
                                        "1000000000000", "1000000000001", "99999999999999999999", "", "{v}k1",
                                        "{v}k2", "{v}str"};
    const int nwords = (int)(sizeof words / sizeof words[0]);
    clock_set(T0);
    freeReplyObject(cmd(c, "SET {v}str s"));
    freeReplyObject(cmd(c, "RL.TOKEN {v}k1 5 1 1000 COST 2"));
    long long bad = 0, errors = 0, replies = 0;
    for (int v = 0; v < 5000; v++) {
        const char *argv[40];
        size_t lens[40];
        int argc = 0;
        int ro = rng() % 4 == 0;
        argv[argc++] = ro ? "RL.ALL_RO" : "RL.ALL";
        /* A well-shaped call (numkeys, keys, LIMIT clauses of a kind and small numbers), then in half of
         * them one word replaced by any word, and in a few some words appended. */
        static const char *const kinds[] = {"TOKEN 5 1 1000", "LEAKY 5 1 1000", "WINDOW 5 1000", "SLIDINGLOG 5 1000",
                                            "WINDOW 5 1000 FIXED", "TOKEN 5 1 1000 COST 2", "WINDOW 5 1000 REFUND 2"};
        int k = (int)rng_range(1, 2);
        static char clause_words[2][64];
        argv[argc++] = k == 1 ? "1" : "2";
        argv[argc++] = "{v}k1";
        if (k == 2) argv[argc++] = "{v}k2";
        for (int i = 0; i < k; i++) {
            argv[argc++] = "LIMIT";
            snprintf(clause_words[i], sizeof clause_words[i], "%s", kinds[rng() % 7]);
            argc += split_words(clause_words[i], argv + argc, lens + argc, 6);
        }
        if (rng() % 2) argv[1 + rng() % (uint64_t)(argc - 1)] = words[rng() % (uint64_t)nwords];
        for (int extra = (int)(rng() % 8 == 0 ? rng_range(1, 3) : 0); extra > 0; extra--)
            argv[argc++] = words[rng() % (uint64_t)nwords];
        for (int i = 0; i < argc; i++) lens[i] = strlen(argv[i]);
        /* The keys as they were (COPY of a missing key copies nothing), to compare after an error. */
        freeReplyObject(cmd(c, "DEL {v}was1 {v}was2"));
        freeReplyObject(cmd(c, "COPY {v}k1 {v}was1"));
        freeReplyObject(cmd(c, "COPY {v}k2 {v}was2"));
        redisReply *x = cmdargv(c, argc, argv, lens);
        int ok;
        if (x->type == REDIS_REPLY_ERROR) {
            errors++;
            ok = (strncmp(x->str, "ERR ", 4) == 0 || strncmp(x->str, "WRONGTYPE", 9) == 0) &&
                 same_value("{v}k1", "{v}was1") && same_value("{v}k2", "{v}was2");
        } else {
            replies++;
            ok = x->type == REDIS_REPLY_ARRAY && x->elements >= 4 && x->element[0]->type == REDIS_REPLY_INTEGER &&
                 (!ro || (same_value("{v}k1", "{v}was1") && same_value("{v}k2", "{v}was2")));
        }
        if (!ok && bad++ < 3) fprintf(stderr, "     vector %d -> %s\n", v, x->type == REDIS_REPLY_ERROR ? x->str : "(reply)");
        freeReplyObject(x);
    }
    CHECK_EQ(bad, 0);
    CHECK(errors > 1000 && replies > 20); /* both kinds of answer, well exercised */
    CHECK(cmd_status_is(c, "PONG", "PING"));
    printf("random RL.ALL vectors: %lld errors, %lld replies\n", errors, replies);
    freeReplyObject(cmd(c, "DEL {v}str {v}k1 {v}k2 {v}was1 {v}was2"));
}

/* --- bad input and RL.RESET ------------------------------------------------------------------------ */

static void test_bad_input(void) {
    clock_set(T0);
    freeReplyObject(cmd(c, "RL.TOKEN {x}tok 5 1 1000 COST 2"));
    freeReplyObject(cmd(c, "SET {x}str v"));
    freeReplyObject(cmd(c, "RL.TOKEN {x}twin 5 1 1000 COST 2"));
    static const bad_case rows[] = {
        {"RL.ALL 0 k LIMIT TOKEN 5 1 1000 x", "ERR numkeys: must be an integer between 1 and 16"},
        {"RL.ALL 17 k LIMIT TOKEN 5 1 1000 x", "ERR numkeys: must be an integer between 1 and 16"},
        {"RL.ALL x k LIMIT TOKEN 5 1 1000 x", "ERR numkeys: must be an integer between 1 and 16"},
        {"RL.ALL 2 {x}tok {x}n LIMIT TOKEN 5 1 1000", "ERR LIMIT 2: expected LIMIT kind ... for key 2 (one LIMIT per key)"},
        {"RL.ALL 1 {x}tok LIMIT TOKEN 5 1 1000 LIMIT TOKEN 5 1 1000", "ERR LIMIT: more LIMIT clauses than keys (numkeys is 1)"},
        {"RL.ALL 1 {x}tok LIMIT BUCKET 5 1 1000", "ERR LIMIT 1: kind must be TOKEN, LEAKY, WINDOW, SLIDINGLOG, SMOOTH, CONCURRENCY or QUOTA"},
        {"RL.ALL 1 {x}tok LIMIT TOKEN 5 1", "ERR LIMIT 1: TOKEN needs 3 numbers"},
        {"RL.ALL 2 {x}n {x}tok LIMIT WINDOW 5 1000 LIMIT TOKEN 0 1 1000",
         "ERR LIMIT 2: capacity: must be an integer between 1 and 1000000000000"},
        {"RL.ALL 2 {x}n {x}tok LIMIT WINDOW 5 1000 FIXED SLIDING LIMIT TOKEN 5 1 1000",
         "ERR LIMIT 1: SLIDING: cannot be combined with FIXED"},
        {"RL.ALL 1 {x}tok LIMIT TOKEN 5 1 1000 DRYRUN", "ERR LIMIT 1: 'DRYRUN' is not an option of TOKEN"},
        {"RL.ALL 1 {x}tok LIMIT LEAKY 5 1 1000 BLOCK", "ERR LIMIT 1: 'BLOCK' is not an option of LEAKY"},
        {"RL.ALL 1 {x}tok COST -1 LIMIT TOKEN 5 1 1000", "ERR COST: must be an integer between 0 and 1000000000000"},
        {"RL.ALL 1 {x}tok FOO LIMIT TOKEN 5 1 1000",
         "ERR 'FOO': not an option of rl.all (before the first LIMIT: COST, REFUND, DRYRUN, FORCE, WAIT or LIMIT)"},
        {"RL.ALL 1 {x}tok COST 2 ATMOST LIMIT TOKEN 5 1 1000",
         "ERR ATMOST: not an option of RL.ALL, which takes each limit's whole COST or none"},
        {"RL.ALL 1 {x}tok LIMIT TOKEN 5 1 1000 COST 2 ATMOST",
         "ERR LIMIT 1: ATMOST: not an option of RL.ALL, which takes each limit's whole COST or none"},
        /* REFUND: the whole call gives back, or it takes; never a mix, never a limiter without refunds. */
        {"RL.ALL 2 {x}n {x}tok LIMIT WINDOW 5 1000 LIMIT TOKEN 5 1 1000 REFUND 2",
         "ERR LIMIT 2: REFUND: needs REFUND n before the first LIMIT (a call gives back to every limit or takes from every one)"},
        {"RL.ALL 2 {x}n {x}tok REFUND 1 LIMIT WINDOW 5 1000 LIMIT TOKEN 5 1 1000 COST 2",
         "ERR LIMIT 2: COST: cannot be combined with the call's REFUND (a clause gives back its own REFUND n)"},
        {"RL.ALL 2 {x}tok {x}n REFUND 1 LIMIT TOKEN 5 1 1000 LIMIT SMOOTH 5",
         "ERR LIMIT 2: REFUND: SMOOTH gives nothing back (rl.smooth has no REFUND)"},
        {"RL.ALL 1 {x}tok REFUND 1 COST 1 LIMIT TOKEN 5 1 1000", "ERR COST: cannot be combined with REFUND"},
        {"RL.ALL 1 {x}tok COST 1 REFUND 1 LIMIT TOKEN 5 1 1000", "ERR REFUND: cannot be combined with COST"},
        {"RL.ALL 1 {x}tok REFUND 1 WAIT 100 LIMIT TOKEN 5 1 1000", "ERR WAIT: cannot be combined with REFUND"},
        {"RL.ALL 1 {x}tok REFUND -1 LIMIT TOKEN 5 1 1000", "ERR REFUND: must be an integer between 0 and 1000000000000"},
        {"RL.ALL 1 {x}tok REFUND LIMIT TOKEN 5 1 1000", "ERR REFUND: must be an integer between 0 and 1000000000000"},
        {"RL.ALL 1 {x}tok REFUND 1 LIMIT TOKEN 5 1 1000 REFUND 1 REFUND 1", "ERR LIMIT 1: REFUND: given more than once"},
        {"RL.ALL 2 {x}tok {x}str REFUND 1 LIMIT TOKEN 5 1 1000 LIMIT WINDOW 5 1000",
         "WRONGTYPE Operation against a key holding the wrong kind of value"},
        /* The read-only form: neither DRYRUN (implied) nor WAIT. */
        {"RL.ALL_RO 1 {x}tok DRYRUN LIMIT TOKEN 5 1 1000",
         "ERR 'DRYRUN': not an option of rl.all_ro (before the first LIMIT: COST, REFUND, FORCE or LIMIT)"},
        {"RL.ALL_RO 1 {x}tok WAIT 100 LIMIT TOKEN 5 1 1000",
         "ERR 'WAIT': not an option of rl.all_ro (before the first LIMIT: COST, REFUND, FORCE or LIMIT)"},
        {"RL.ALL_RO 1 {x}tok LIMIT LEAKY 5 1 1000 BLOCK", "ERR LIMIT 1: 'BLOCK' is not an option of LEAKY"},
        {"RL.ALL_RO 1 {x}tok LIMIT TOKEN 5 1 1000 LIMIT TOKEN 5 1 1000",
         "ERR LIMIT: more LIMIT clauses than keys (numkeys is 1)"},
        {"RL.ALL 2 {x}tok {x}tok LIMIT TOKEN 5 1 1000 LIMIT TOKEN 5 1 1000",
         "ERR key 2: the same key as key 1 (one limit per key)"},
        {"RL.ALL 1 {x}tok LIMIT TOKEN 2 1 1000000000000", "ERR LIMIT 1: capacity: capacity / refill_tokens * refill_ms must not "
                                                          "exceed 1000000000000 ms (refill from empty to full would take longer than 31 years)"},
        {"RL.ALL 2 {x}tok {x}str LIMIT TOKEN 5 1 1000 LIMIT WINDOW 5 1000", "WRONGTYPE Operation against a key holding the wrong kind of value"},
        {"RL.ALL 2 {x}str {x}tok LIMIT TOKEN 5 1 1000 LIMIT TOKEN 5 1 1000", "WRONGTYPE Operation against a key holding the wrong kind of value"},
        {"RL.ALL 1 {x}tok LIMIT WINDOW 5 1000", "WRONGTYPE Operation against a key holding the wrong kind of value"},
    };
    check_errors(c, rows, sizeof rows / sizeof rows[0]);
    CHECK(same_value("{x}tok", "{x}twin")); /* nothing changed */
    CHECK_EQ(cmd_int(c, "EXISTS {x}n"), 0);
    redisReply *k = cmd(c, "COMMAND GETKEYS RL.ALL 2 one two COST 1 LIMIT TOKEN 5 1 1000 LIMIT WINDOW 3 1000");
    CHECK(k->type == REDIS_REPLY_ARRAY && k->elements == 2 && strcmp(k->element[0]->str, "one") == 0 &&
          strcmp(k->element[1]->str, "two") == 0);
    freeReplyObject(k);
}

static void test_reset(void) {
    clock_set(T0);
    freeReplyObject(cmd(c, "RL.TOKEN rs:t 5 1 1000"));
    freeReplyObject(cmd(c, "RL.LEAKY rs:l 5 1 1000"));
    freeReplyObject(cmd(c, "RL.WINDOW rs:w 5 1000"));
    freeReplyObject(cmd(c, "RL.SLIDINGLOG rs:s 5 1000"));
    freeReplyObject(cmd(c, "SET rs:str v"));
    CHECK(cmd_status_is(c, "WRONGTYPE Operation against a key holding the wrong kind of value", "RL.RESET rs:t rs:str"));
    CHECK_EQ(cmd_int(c, "EXISTS rs:t"), 1);
    CHECK_EQ(cmd_int(c, "RL.RESET rs:t rs:l rs:w rs:s rs:none rs:t"), 4);
    CHECK_EQ(cmd_int(c, "EXISTS rs:t rs:l rs:w rs:s"), 0);
    CHECK_RL(rl(c, "RL.TOKEN rs:t 5 1 1000 COST 0"), 1, 5, 5, -1, 0, 0); /* a new limiter again */
    CHECK_EQ(cmd_int(c, "RL.RESET rs:none"), 0);
    CHECK(cmd_status_is(c, "ERR wrong number of arguments for 'rl.reset' command", "RL.RESET"));
    redisReply *k = cmd(c, "COMMAND GETKEYS RL.RESET a b c");
    CHECK(k->type == REDIS_REPLY_ARRAY && k->elements == 3);
    freeReplyObject(k);
    freeReplyObject(cmd(c, "DEL rs:str"));
}

/* --- REFUND and ATMOST ----------------------------------------------------------------------------------- */

/* A reply of seven integers (ATMOST): the six fields, and granted. */
static void check_seven(const char *line, const long long want[7]) {
    redisReply *x = cmdline(c, "%s", line);
    int ok = x->type == REDIS_REPLY_ARRAY && x->elements == 7;
    for (size_t i = 0; ok && i < 7; i++) ok = x->element[i]->type == REDIS_REPLY_INTEGER && x->element[i]->integer == want[i];
    if (!CHECK(ok)) {
        fprintf(stderr, "     %s ->", line);
        for (size_t i = 0; x->type == REDIS_REPLY_ARRAY && i < x->elements; i++) fprintf(stderr, " %lld", x->element[i]->integer);
        fprintf(stderr, "%s\n", x->type == REDIS_REPLY_ERROR ? x->str : "");
    }
    freeReplyObject(x);
}

static void test_refund_atmost(void) {
    clock_set(T0);
    freeReplyObject(cmd(c, "DEL rf:t rf:w rf:l"));
    CHECK_RL(rl(c, "RL.TOKEN rf:t 10 1 1000 COST 8"), 1, 10, 2, -1, 8000, 0);
    check_seven("RL.TOKEN rf:t 10 1 1000 COST 5 ATMOST", (long long[7]){1, 10, 0, -1, 10000, 0, 2});
    CHECK_RL(rl(c, "RL.TOKEN rf:t 10 1 1000 REFUND 3 DRYRUN"), 1, 10, 3, -1, 7000, 0);
    CHECK_RL(rl(c, "RL.TOKEN rf:t 10 1 1000 REFUND 3"), 1, 10, 3, -1, 7000, 0);
    check_seven("RL.TOKEN rf:t 10 1 1000 COST 5 ATMOST", (long long[7]){1, 10, 0, -1, 10000, 0, 3});
    check_seven("RL.TOKEN rf:t 10 1 1000 COST 5 ATMOST", (long long[7]){0, 10, 0, 1000, 10000, 0, 0});
    check_seven("RL.TOKEN rf:t 10 1 1000 COST 0 ATMOST", (long long[7]){1, 10, 0, -1, 10000, 0, 0});
    CHECK_RL(rl(c, "RL.TOKEN rf:t 10 1 1000 REFUND 100"), 1, 10, 10, -1, 0, 0); /* capped: full, so idle */
    CHECK_EQ(cmd_int(c, "EXISTS rf:t"), 0);

    /* (T0 is 40 s before a minute's end: the fixed window resets then.) */
    check_seven("RL.WINDOW rf:w 10 60000 FIXED COST 9 ATMOST", (long long[7]){1, 10, 1, -1, 40000, 0, 9});
    check_seven("RL.WINDOW rf:w 10 60000 FIXED COST 3 ATMOST", (long long[7]){1, 10, 0, -1, 40000, 0, 1});
    CHECK_RL(rl(c, "RL.WINDOW rf:w 10 60000 FIXED REFUND 4"), 1, 10, 4, -1, 40000, 0);
    CHECK_RL(rl(c, "RL.WINDOW rf:w 10 60000 FIXED REFUND 50"), 1, 10, 10, -1, 0, 0); /* never below empty */

    CHECK_RL(rl(c, "RL.LEAKY rf:l 5 1 1000 COST 4"), 1, 5, 1, -1, 4000, 0);
    CHECK_RL(rl(c, "RL.LEAKY rf:l 5 1 1000 REFUND 1"), 1, 5, 2, -1, 3000, 0);
    CHECK_RL(rl(c, "RL.LEAKY rf:l 5 1 1000 COST 3"), 0, 5, 2, 1000, 3000, 0); /* 3 + 3 > 5 */
    CHECK_RL(rl(c, "RL.LEAKY rf:l 5 1 1000 COST 2 NODELAY"), 1, 5, 0, -1, 5000, 0);

    /* RESP3: the seventh field is named. */
    const char *expected = "+wait_ms\r\n:0\r\n+granted\r\n:2\r\n";
    char *got = raw_exchange(srv->port, "HELLO 3\r\nRL.TOKEN rf:r 2 1 1000 COST 3 ATMOST\r\n", expected);
    CHECK(strstr(got, expected) != NULL);
    free(got);

    static const bad_case bad[] = {
        {"RL.TOKEN rf:t 10 1 1000 REFUND 1 COST 1", "ERR COST: cannot be combined with REFUND"},
        {"RL.TOKEN rf:t 10 1 1000 COST 1 REFUND 1", "ERR REFUND: cannot be combined with COST"},
        {"RL.WINDOW rf:w 10 1000 REFUND 1 ATMOST", "ERR ATMOST: cannot be combined with REFUND"},
        {"RL.LEAKY rf:l 5 1 1000 BLOCK REFUND 1", "ERR REFUND: cannot be combined with BLOCK"},
        {"RL.LEAKY rf:l 5 1 1000 ATMOST", "ERR 'ATMOST': not an option of rl.leaky"},
        {"RL.TOKEN rf:t 10 1 1000 REFUND -1", "ERR REFUND: must be an integer between 0 and 1000000000000"},
        {"RL.TOKEN rf:t 10 1 1000 REFUND", "ERR REFUND: needs a value"},
    };
    check_errors(c, bad, sizeof bad / sizeof bad[0]);

    /* A refund is an effect like any write: a replica ends equal. */
    server *rep = replica_start(srv);
    redisContext *r = server_connect(rep);
    freeReplyObject(cmd(c, "RL.TOKEN rf:rep 10 1 60000 COST 9"));
    freeReplyObject(cmd(c, "RL.TOKEN rf:rep 10 1 60000 REFUND 4"));
    freeReplyObject(cmd(c, "RL.WINDOW rf:repw 10 60000 COST 7 ATMOST"));
    freeReplyObject(cmd(c, "RL.WINDOW rf:repw 10 60000 REFUND 2"));
    check_replicated(c, r, "rf:rep", "rf:repw", NULL);
    CHECK_EQ(cmd_int(r, "EXISTS rf:rep rf:repw"), 2);
    redisFree(r);
    server_stop(rep);
}

/* --- RL.ALL REFUND: one unit ------------------------------------------------------------------------------- */

/* The keys of the example: a token bucket, a fixed window, a sliding window of sub-windows and a sliding log. */
#define UNDO_KEYS "{u}t {u}w {u}s {u}l"
#define UNDO_LIMITS "LIMIT TOKEN 10 1 1000 LIMIT WINDOW 5 60000 FIXED LIMIT WINDOW 6 60000 SUBWINDOWS 6 LIMIT SLIDINGLOG 4 1000"

static void test_all_refund(void) {
    clock_set(T0);
    freeReplyObject(cmd(c, "DEL " UNDO_KEYS));
    long long units = info_field(c, "ratelimit", "ratelimit_all_units_admitted");
    long long admitted = info_field(c, "ratelimit", "ratelimit_all_admitted");
    /* A request of 3 admitted by every limit, then given back as one unit at the same instant: every limit
     * is as a COST 0 call would have left it, here idle, so no key is left. */
    all_result took = run_all("RL.ALL 4 " UNDO_KEYS " COST 3 " UNDO_LIMITS, 4);
    CHECK(took.ok && took.allowed == 1);
    CHECK_EQ(cmd_int(c, "EXISTS " UNDO_KEYS), 4);
    all_result back = run_all("RL.ALL 4 " UNDO_KEYS " REFUND 3 " UNDO_LIMITS, 4);
    CHECK(back.ok && back.allowed == 1 && back.retry == -1 && back.reset == 0);
    CHECK_RL(back.limits[0], 1, 10, 10, -1, 0, 0);
    CHECK_RL(back.limits[1], 1, 5, 5, -1, 0, 0);
    CHECK_RL(back.limits[2], 1, 6, 6, -1, 0, 0);
    CHECK_RL(back.limits[3], 1, 4, 4, -1, 0, 0);
    CHECK_EQ(cmd_int(c, "EXISTS " UNDO_KEYS), 0);
    /* Counted as an admitted call that took no units. */
    CHECK_EQ(info_field(c, "ratelimit", "ratelimit_all_units_admitted"), units + 12);
    CHECK_EQ(info_field(c, "ratelimit", "ratelimit_all_admitted"), admitted + 2);

    /* A clause's own REFUND replaces the call's; DRYRUN and RL.ALL_RO only report; a replica ends equal. */
    server *rep = replica_start(srv);
    redisContext *r = server_connect(rep);
    freeReplyObject(cmd(c, "RL.ALL 2 {u}t {u}w COST 4 LIMIT TOKEN 10 1 1000 LIMIT WINDOW 5 60000 FIXED COST 5"));
    const char *refund = "RL.ALL 2 {u}t {u}w REFUND 3 LIMIT TOKEN 10 1 1000 LIMIT WINDOW 5 60000 FIXED REFUND 2";
    freeReplyObject(cmd(c, "COPY {u}t {u}t0"));
    freeReplyObject(cmd(c, "COPY {u}w {u}w0"));
    all_result dry = run_all("RL.ALL 2 {u}t {u}w REFUND 3 DRYRUN LIMIT TOKEN 10 1 1000 LIMIT WINDOW 5 60000 FIXED REFUND 2", 2);
    all_result ro = run_all("RL.ALL_RO 2 {u}t {u}w REFUND 3 LIMIT TOKEN 10 1 1000 LIMIT WINDOW 5 60000 FIXED REFUND 2", 2);
    CHECK(same_value("{u}t", "{u}t0") && same_value("{u}w", "{u}w0")); /* nothing written */
    all_result real = run_all(refund, 2);
    CHECK(same_all(&dry, &real, 2) && same_all(&ro, &real, 2));
    CHECK_RL(real.limits[0], 1, 10, 9, -1, 1000, 0); /* 6 + 3 */
    CHECK_RL(real.limits[1], 1, 5, 2, -1, 40000, 0); /* 5 - 2 counted; the window ends in 40 s */
    check_replicated(c, r, "{u}t", "{u}w", NULL);
    CHECK_EQ(cmd_int(r, "EXISTS {u}t {u}w"), 2);
    redisFree(r);
    server_stop(rep);
    freeReplyObject(cmd(c, "DEL " UNDO_KEYS " {u}t0 {u}w0"));
}

int main(void) {
    static const suite_test tests[] = {test_traces, test_racing, test_replication, test_aof_unit, test_resp3,
        test_bad_input, test_random_vectors, test_reset, test_refund_atmost, test_all_refund, NULL};
    return server_suite("integration_all", &srv, &c, tests);
}
