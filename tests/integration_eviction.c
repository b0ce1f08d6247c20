/* integration_eviction.c -- eviction is never silent, on a real redis-server: limiter keys of every kind
 * the module stores in a data type of its own (token, leaky, window, smooth, quota, concurrency leases, a
 * lock alone, a policy's checks), plus sliding logs (plain sorted sets), then filler values past a small
 * maxmemory under allkeys-lru until the server evicts. INFO ratelimit's evicted_keys must equal the number
 * of the module's data-type keys that are gone (counted one by one with EXISTS), whatever else the server
 * evicted (filler, sliding logs: not counted, docs/operations.md says why); the warning line appears in the
 * server's log, at most once a minute; the policy warning appears at load and on CONFIG SET of a policy or
 * a maxmemory that makes limiter keys evictable, and never under noeviction. Under an LFU policy with a
 * maxmemory, every write of a limiter key sets its LFU counter to 255 (OBJECT FREQ), and nothing else does
 * (docs/eviction-protection.md). The closing line is
 * "integration_eviction: N passed, N failed". */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "server.h"

#define PER_KIND 150
#define POLICY_WARNING "lets the server evict limiter keys"
#define EVICTED_LINE "limiter key(s) evicted since the last such line"

/* The calls that create one key of each data-type kind (%d: the key's number); every period is long, so
 * no key expires during the test. */
static const char *const kinds[] = {
    "RL.TOKEN ev:token:%d 5 1 3600000",       "RL.LEAKY ev:leaky:%d 5 1 3600000",
    "RL.WINDOW ev:window:%d 5 3600000",       "RL.SMOOTH ev:smooth:%d 1",
    "RL.QUOTA ev:quota:%d 5 MONTH",           "RL.ACQUIRE ev:lease:%d 5 3600000",
    "RL.BLOCK ev:lock:%d 3600000",            "RL.CHECK evpol ev:check:%d",
};
static const char *const kind_keys[] = {"ev:token:%d", "ev:leaky:%d", "ev:window:%d", "ev:smooth:%d",
                                        "ev:quota:%d", "ev:lease:%d", "ev:lock:%d",   "ev:check:%d"};
#define NKINDS (sizeof kinds / sizeof kinds[0])

/* How many lines of the server's log contain text. */
static int log_lines(const server *s, const char *text) {
    char path[300], line[4096];
    snprintf(path, sizeof path, "%s/redis.log", s->dir);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    int n = 0;
    while (fgets(line, sizeof line, f))
        if (strstr(line, text)) n++;
    fclose(f);
    return n;
}

static int reply_ok(redisReply *r) {
    int ok = r && r->type != REDIS_REPLY_ERROR;
    if (!ok && r) fprintf(stderr, "     error: %s\n", r->str);
    freeReplyObject(r);
    return ok;
}

/* Policy warnings: none at load without maxmemory, none for noeviction, one for each CONFIG SET that
 * makes limiter keys evictable, naming the policy. */
static void test_policy_warnings(void) {
    server *s = server_start(NULL);
    redisContext *c = server_connect(s);
    CHECK_EQ(log_lines(s, POLICY_WARNING), 0);
    CHECK(cmd_status_is(c, "OK", "CONFIG SET maxmemory 100mb"));
    CHECK_EQ(log_lines(s, POLICY_WARNING), 0); /* noeviction (the default) */
    CHECK(cmd_status_is(c, "OK", "CONFIG SET maxmemory-policy allkeys-lru"));
    CHECK_EQ(log_lines(s, POLICY_WARNING), 1);
    CHECK_EQ(log_lines(s, "maxmemory-policy allkeys-lru with maxmemory set"), 1);
    CHECK(cmd_status_is(c, "OK", "CONFIG SET maxmemory-policy allkeys-lfu")); /* still evictable: no repeat */
    CHECK_EQ(log_lines(s, POLICY_WARNING), 1);
    CHECK(cmd_status_is(c, "OK", "CONFIG SET maxmemory 0"));
    CHECK(cmd_status_is(c, "OK", "CONFIG SET maxmemory-policy volatile-ttl"));
    CHECK_EQ(log_lines(s, POLICY_WARNING), 1); /* no maxmemory: nothing is evicted */
    CHECK(cmd_status_is(c, "OK", "CONFIG SET maxmemory 100mb"));
    CHECK_EQ(log_lines(s, POLICY_WARNING), 2);
    CHECK_EQ(log_lines(s, "maxmemory-policy volatile-ttl with maxmemory set"), 1);
    CHECK(cmd_status_is(c, "OK", "CONFIG SET maxmemory-policy noeviction"));
    CHECK(cmd_status_is(c, "OK", "CONFIG SET maxmemory 50mb"));
    CHECK_EQ(log_lines(s, POLICY_WARNING), 2);
    redisFree(c);
    server_stop(s);

    const char *const evictable[] = {"--maxmemory", "100mb", "--maxmemory-policy", "volatile-lru", NULL};
    s = server_start(evictable);
    CHECK_EQ(log_lines(s, "maxmemory-policy volatile-lru with maxmemory set"), 1);
    server_stop(s);
    const char *const safe[] = {"--maxmemory", "100mb", "--maxmemory-policy", "noeviction", NULL};
    s = server_start(safe);
    CHECK_EQ(log_lines(s, POLICY_WARNING), 0);
    server_stop(s);
}

/* How many of the PER_KIND keys of pattern exist. */
static long long existing(redisContext *c, const char *pattern) {
    long long n = 0;
    for (int i = 0; i < PER_KIND; i++) {
        char key[64];
        snprintf(key, sizeof key, pattern, i);
        n += cmd_int(c, "EXISTS %s", key);
    }
    return n;
}

static void test_evictions_counted(void) {
    server *s = server_start(NULL);
    redisContext *c = server_connect(s);
    time_t started = time(NULL);
    CHECK(reply_ok(cmd(c, "RL.POLICY SET evpol LIMIT a TOKEN 5 1 3600000")));
    int created_ok = 1;
    for (size_t k = 0; k < NKINDS; k++)
        for (int i = 0; i < PER_KIND; i++) created_ok &= reply_ok(cmdline(c, kinds[k], i));
    for (int i = 0; i < PER_KIND; i++) created_ok &= reply_ok(cmdline(c, "RL.SLIDINGLOG ev:log:%d 5 3600000", i));
    CHECK(created_ok);
    for (size_t k = 0; k < NKINDS; k++) CHECK_EQ(existing(c, kind_keys[k]), PER_KIND);
    CHECK_EQ(info_field(c, "ratelimit", "ratelimit_evicted_keys"), 0);

    /* Room for about 1 MB more than now, then 1,000-byte filler values well past it. */
    long long used = info_field(c, "memory", "used_memory");
    CHECK(used > 0);
    CHECK(cmd_status_is(c, "OK", "CONFIG SET maxmemory-policy allkeys-lru"));
    CHECK(reply_ok(cmdline(c, "CONFIG SET maxmemory %lld", used + 1000000)));
    char value[1001];
    memset(value, 'f', 1000);
    value[1000] = 0;
    for (int i = 0; i < 4000; i++) freeReplyObject(cmd(c, "SET ev:filler:%d %s", i, value));
    CHECK(info_field(c, "stats", "evicted_keys") > 0);

    long long gone = 0;
    for (size_t k = 0; k < NKINDS; k++) gone += PER_KIND - existing(c, kind_keys[k]);
    long long counted = info_field(c, "ratelimit", "ratelimit_evicted_keys");
    CHECK(gone > 0);
    CHECK_EQ(counted, gone);
    /* Logs the server evicted too (probably) and filler keys are not counted: */
    fprintf(stderr, "     %lld of %d data-type limiter keys evicted, %lld of %d sliding logs, %lld keys in all\n", gone,
            (int)(NKINDS * PER_KIND), PER_KIND - existing(c, "ev:log:%d"), PER_KIND,
            info_field(c, "stats", "evicted_keys"));

    /* The eviction line: at least one, and no more than one a minute since the start. */
    int lines = log_lines(s, EVICTED_LINE);
    long minutes = (long)(time(NULL) - started) / 60;
    CHECK(lines >= 1);
    CHECK(lines <= 1 + minutes);
    CHECK_EQ(log_lines(s, POLICY_WARNING), 1);

    /* A deleted limiter key, recreated as a plain value and then evicted, is not counted. */
    CHECK(cmd_status_is(c, "OK", "CONFIG SET maxmemory 0"));
    CHECK(cmd_int(c, "DEL ev:token:0 ev:token:1") >= 0);
    CHECK(cmd_status_is(c, "OK", "SET ev:token:0 plain"));
    CHECK(cmd_status_is(c, "OK", "FLUSHALL"));
    used = info_field(c, "memory", "used_memory");
    CHECK(cmd_status_is(c, "OK", "SET ev:token:1 plain"));
    CHECK(reply_ok(cmdline(c, "CONFIG SET maxmemory %lld", used + 200000)));
    /* (LRU picks from samples: filler until the plain key is gone) */
    for (int i = 0; i < 20000 && cmd_int(c, "EXISTS ev:token:1") == 1; i++)
        freeReplyObject(cmd(c, "SET ev:filler:%d %s", i, value));
    CHECK_EQ(cmd_int(c, "EXISTS ev:token:1"), 0);
    CHECK_EQ(info_field(c, "ratelimit", "ratelimit_evicted_keys"), counted);
    redisFree(c);
    server_stop(s);
}

/* OBJECT FREQ of a key: its LFU counter (LLONG_MIN when refused: not an LFU policy). */
static long long lfu_of(redisContext *c, const char *key) { return cmd_int(c, "OBJECT FREQ %s", key); }

/* The LFU hint: under an LFU policy with a maxmemory, every write of a limiter key (each kind, sliding logs,
 * CL.THROTTLE, a lock) leaves its counter at 255, a plain key's stays low; a call that writes nothing (a
 * denial, DRYRUN) leaves the counter as it was; without a maxmemory, or under an LRU policy, nothing is set
 * (OBJECT FREQ is refused there: the server keeps no counter). */
static void test_lfu_hint(void) {
    const char *const lfu[] = {"--maxmemory", "100mb", "--maxmemory-policy", "allkeys-lfu", NULL};
    server *s = server_start(lfu);
    redisContext *c = server_connect(s);
    CHECK(reply_ok(cmd(c, "RL.POLICY SET evpol LIMIT a TOKEN 5 1 3600000")));
    for (size_t k = 0; k < NKINDS; k++) CHECK(reply_ok(cmdline(c, kinds[k], 0)));
    CHECK(reply_ok(cmd(c, "RL.SLIDINGLOG ev:log:0 5 3600000")));
    CHECK(reply_ok(cmd(c, "CL.THROTTLE ev:cl:0 5 1 60")));
    CHECK(cmd_status_is(c, "OK", "SET ev:plain v"));
    for (size_t k = 0; k < NKINDS; k++) {
        char key[64];
        snprintf(key, sizeof key, kind_keys[k], 0);
        CHECK_EQ(lfu_of(c, key), 255);
    }
    CHECK_EQ(lfu_of(c, "ev:log:0"), 255);
    CHECK_EQ(lfu_of(c, "ev:cl:0"), 255);
    long long plain = lfu_of(c, "ev:plain");
    CHECK(plain >= 0 && plain < 255);

    /* Without a maxmemory nothing is evicted, and nothing is set: a key written then stays low. */
    CHECK(cmd_status_is(c, "OK", "CONFIG SET maxmemory 0"));
    CHECK(reply_ok(cmd(c, "RL.TOKEN ev:deny 1 1 3600000"))); /* admitted: its one token taken */
    long long before = lfu_of(c, "ev:deny");
    CHECK(before >= 0 && before < 255);
    /* With one again, a denial and a DRYRUN write nothing, and leave the counter below the top. */
    CHECK(cmd_status_is(c, "OK", "CONFIG SET maxmemory 100mb"));
    rl_result r = rl(c, "RL.TOKEN ev:deny 1 1 3600000");
    CHECK(r.ok && r.allowed == 0);
    r = rl(c, "RL.TOKEN ev:deny 1 1 3600000 DRYRUN");
    CHECK(r.ok && r.allowed == 0);
    long long after = lfu_of(c, "ev:deny");
    CHECK(after >= before && after < 255);
    /* A write marks it: a lock, a lease's renewal. */
    CHECK(reply_ok(cmd(c, "RL.BLOCK ev:deny 3600000")));
    CHECK_EQ(lfu_of(c, "ev:deny"), 255);
    CHECK(cmd_status_is(c, "OK", "CONFIG SET maxmemory 0"));
    redisReply *lease = cmd(c, "RL.ACQUIRE ev:renew 5 3600000");
    int leased = lease && lease->type == REDIS_REPLY_ARRAY && lease->elements == 7 &&
                 lease->element[6]->type == REDIS_REPLY_STRING;
    CHECK(leased);
    long long unmarked = lfu_of(c, "ev:renew");
    CHECK(unmarked >= 0 && unmarked < 255);
    CHECK(cmd_status_is(c, "OK", "CONFIG SET maxmemory 100mb"));
    if (leased) CHECK_EQ(cmd_int(c, "RL.RENEW ev:renew %s 3600000", lease->element[6]->str), 1);
    freeReplyObject(lease);
    CHECK_EQ(lfu_of(c, "ev:renew"), 255);

    /* volatile-lfu: the same (limiter keys carry a TTL, so they are its candidates). */
    CHECK(cmd_status_is(c, "OK", "CONFIG SET maxmemory-policy volatile-lfu"));
    CHECK(reply_ok(cmd(c, "RL.TOKEN ev:vol 5 1 3600000")));
    CHECK_EQ(lfu_of(c, "ev:vol"), 255);

    /* allkeys-lru: no counter to set; every kind still answers, and OBJECT FREQ is refused. */
    CHECK(cmd_status_is(c, "OK", "CONFIG SET maxmemory-policy allkeys-lru"));
    int answered = 1;
    for (size_t k = 0; k < NKINDS; k++) answered &= reply_ok(cmdline(c, kinds[k], 1));
    answered &= reply_ok(cmd(c, "RL.SLIDINGLOG ev:log:1 5 3600000"));
    answered &= reply_ok(cmd(c, "CL.THROTTLE ev:cl:1 5 1 60"));
    CHECK(answered);
    CHECK_EQ(lfu_of(c, "ev:token:1"), LLONG_MIN);
    CHECK(cmd_int(c, "OBJECT IDLETIME ev:token:1") >= 0);
    redisFree(c);
    server_stop(s);
}

int main(void) {
    test_lfu_hint();
    test_policy_warnings();
    test_evictions_counted();
    return check_summary("integration_eviction");
}
