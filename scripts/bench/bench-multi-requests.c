/* bench-multi-requests.c -- bench-multi's workload: what one request is and which key it goes to (see
 * bench-multi.c for the command line). A "cmd" workload is one or more template commands whose
 * "__rand_int__" becomes the request's key number and "__now_us__" the wall clock; "classdojo" is
 * ClassDojo's rolling-rate-limiter transaction, its member a random UUID as the library makes it; "lease"
 * is a concurrency limit's client, taking a lease with RL.ACQUIRE (its id made by the module) and giving it
 * back with RL.RELEASE, so that acquires and releases alternate as in a pool of workers (a request is an
 * acquire, tried again while the pool is full, then the release of its lease). Key numbers and UUIDs
 * come from one seeded xorshift64* stream, so a seed gives the same keys every run. */
#include <stdlib.h>
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bench-multi.h"

workload wl;
long long issued; /* requests written so far, over all connections */
static uint64_t rng_state;

static long long wall_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void rng_seed(uint64_t seed) {
    rng_state = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
    if (!rng_state) rng_state = 1;
}

static uint64_t rng_next(void) { /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}

/* --- the workload, from the command line ------------------------------------------------------------ */

void parse_workload(int argc, char **argv) {
    if (argc < 2) usage();
    if (strcmp(argv[0], "classdojo") == 0) {
        if (argc != 4) usage();
        wl.kind = WL_CLASSDOJO;
        wl.ncmds = 6;
        wl.prefix = argv[1];
        wl.limit = num_arg(argv[2], 1);
        wl.window_ms = num_arg(argv[3], 1);
        return;
    }
    if (strcmp(argv[0], "lease") == 0) {
        if (argc != 4) usage();
        wl.kind = WL_LEASE;
        wl.ncmds = 1; /* one reply per pipeline entry; a request spans two pipelines */
        wl.prefix = argv[1];
        wl.limit = num_arg(argv[2], 1);
        wl.window_ms = num_arg(argv[3], 1);
        return;
    }
    if (strcmp(argv[0], "cmd") != 0) usage();
    wl.kind = WL_TEMPLATE;
    wl.ncmds = 0;
    tmpl_cmd *cur = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], ";") == 0) {
            cur = NULL;
            continue;
        }
        if (!cur) {
            if (wl.ncmds == MAX_CMDS) die("too many commands");
            cur = &wl.cmds[wl.ncmds++];
            cur->argc = 0;
        }
        if (cur->argc == MAX_ARGS) die("too many arguments");
        cur->argv[cur->argc++] = argv[i];
    }
    if (wl.ncmds == 0) usage();
}

/* --- building requests ------------------------------------------------------------------------------ */

/* The first token of an argument at or after a: "__rand_int__" or "__now_us__" (NULL: none); *is_now
 * tells which. */
static const char *next_token(const char *a, int *is_now) {
    const char *r = strstr(a, RAND_TOKEN), *t = strstr(a, NOW_TOKEN);
    *is_now = !(r && (!t || r < t));
    return *is_now ? t : r;
}

/* Append one command, its arguments with "__rand_int__" replaced by the 12-digit key number and
 * "__now_us__" by the wall clock in Unix µs (read once per command). */
static void append_template(redisContext *c, const tmpl_cmd *cmd, const char *keynum) {
    const char *argv[MAX_ARGS];
    size_t lens[MAX_ARGS];
    char bufs[MAX_ARGS][256], now[24] = "";
    for (int i = 0; i < cmd->argc; i++) {
        const char *a = cmd->argv[i];
        int is_now;
        const char *hit = next_token(a, &is_now);
        if (!hit) {
            argv[i] = a;
            lens[i] = strlen(a);
            continue;
        }
        size_t out = 0;
        while (hit) {
            if (is_now && !now[0]) snprintf(now, sizeof now, "%lld", wall_us());
            const char *value = is_now ? now : keynum;
            size_t vlen = strlen(value);
            if (out + (size_t)(hit - a) + vlen >= sizeof bufs[i]) die("argument too long");
            memcpy(bufs[i] + out, a, (size_t)(hit - a));
            out += (size_t)(hit - a);
            memcpy(bufs[i] + out, value, vlen);
            out += vlen;
            a = hit + strlen(is_now ? NOW_TOKEN : RAND_TOKEN);
            hit = next_token(a, &is_now);
        }
        size_t rest = strlen(a);
        if (out + rest >= sizeof bufs[i]) die("argument too long");
        memcpy(bufs[i] + out, a, rest);
        out += rest;
        argv[i] = bufs[i];
        lens[i] = out;
    }
    if (redisAppendCommandArgv(c, cmd->argc, argv, lens) != REDIS_OK) die("out of memory");
}

static void append_classdojo(redisContext *c, const char *keynum) {
    char key[256], uuid[40];
    snprintf(key, sizeof key, "%s%s", wl.prefix, keynum);
    long long now = wall_us(); /* ClassDojo takes the time on the client, in µs */
    uint64_t a = rng_next(), b = rng_next();
    /* A version-4 UUID, as rolling-rate-limiter's member (uuid.v4()). */
    snprintf(uuid, sizeof uuid, "%08" PRIx32 "-%04" PRIx32 "-4%03" PRIx32 "-%04" PRIx32 "-%012" PRIx64,
             (uint32_t)(a >> 32), (uint32_t)(a >> 16) & 0xffff, (uint32_t)a & 0xfff,
             (uint32_t)(0x8000 | ((b >> 48) & 0x3fff)), (uint64_t)(b & 0xffffffffffffull));
    long long ttl_s = (wl.window_ms + 999) / 1000;
    redisAppendCommand(c, "MULTI");
    redisAppendCommand(c, "ZREMRANGEBYSCORE %s 0 %lld", key, now - wl.window_ms * 1000);
    redisAppendCommand(c, "ZADD %s %lld %s", key, now, uuid);
    redisAppendCommand(c, "ZRANGE %s 0 -1 WITHSCORES", key);
    redisAppendCommand(c, "EXPIRE %s %lld", key, ttl_s);
    redisAppendCommand(c, "EXEC");
}

static void next_keynum(char out[KEY_DIGITS + 1]) {
    unsigned long long k;
    if (opt.check)
        k = 0;
    else if (opt.fill > 0)
        k = (unsigned long long)(issued / opt.fill);
    else
        k = rng_next() % (unsigned long long)opt.keyspace;
    snprintf(out, KEY_DIGITS + 1, "%0*llu", KEY_DIGITS, k % 1000000000000ull);
}

/* The lease workload: each connection takes a batch of requests on random keys and sends, pipeline after
 * pipeline, each request's next command: RL.ACQUIRE (the module makes the lease's id), again while it is
 * denied, then RL.RELEASE of that lease (bench-multi-replies.c moves the requests on). */
static void new_lease_batch(conn *cn, int n) {
    lease_batch *b = cn->lease;
    for (int i = 0; i < n; i++) {
        next_keynum(b->key[i]);
        b->step[i] = LEASE_TO_ACQUIRE;
    }
    b->n = n;
    cn->start_ns = now_ns(); /* a request's latency: from its batch's first pipeline to its release's reply */
}

static int send_lease_steps(conn *cn) {
    lease_batch *b = cn->lease;
    char lim[24], ms[24];
    snprintf(lim, sizeof lim, "%lld", wl.limit);
    snprintf(ms, sizeof ms, "%lld", wl.window_ms);
    int sent = 0;
    for (int i = 0; i < b->n; i++) {
        if (b->step[i] == LEASE_DONE) continue;
        char key[256];
        snprintf(key, sizeof key, "%s%s", wl.prefix, b->key[i]);
        const char *acquire[] = {"RL.ACQUIRE", key, lim, ms}, *release[] = {"RL.RELEASE", key, b->id[i]};
        int ok = b->step[i] == LEASE_TO_ACQUIRE ? redisAppendCommandArgv(cn->ctx, 4, acquire, NULL)
                                                : redisAppendCommandArgv(cn->ctx, 3, release, NULL);
        if (ok != REDIS_OK) die("out of memory");
        b->sent[sent++] = i;
    }
    return sent;
}

/* The lease workload's next pipeline: the batch's next steps, or a new batch when it is all done. */
static int start_lease_pipeline(conn *cn) {
    if (!cn->lease && !(cn->lease = calloc(1, sizeof *cn->lease))) die("out of memory");
    int n = send_lease_steps(cn);
    if (n == 0) {
        long long left = opt.requests - issued;
        if (left <= 0) return 0;
        int batch = left < opt.pipeline ? (int)left : opt.pipeline;
        issued += batch;
        new_lease_batch(cn, batch);
        n = send_lease_steps(cn);
    }
    cn->nreq = n;
    cn->next_req = 0;
    cn->replies_left = 1;
    cn->failed_req = 0;
    cn->want_write = 1;
    return 1;
}

/* Write the next pipeline of up to opt.pipeline requests into cn's buffer; 0 if none is left. */
int start_pipeline(conn *cn) {
    if (wl.kind == WL_LEASE) return start_lease_pipeline(cn);
    long long left = opt.requests - issued;
    if (left <= 0) return 0;
    int n = left < opt.pipeline ? (int)left : opt.pipeline;
    for (int i = 0; i < n; i++) {
        char keynum[KEY_DIGITS + 1];
        next_keynum(keynum);
        issued++;
        if (wl.kind == WL_CLASSDOJO)
            append_classdojo(cn->ctx, keynum);
        else
            for (int j = 0; j < wl.ncmds; j++) append_template(cn->ctx, &wl.cmds[j], keynum);
    }
    cn->nreq = n;
    cn->next_req = 0;
    cn->replies_left = wl.ncmds;
    cn->failed_req = 0;
    cn->start_ns = now_ns();
    cn->want_write = 1;
    return 1;
}
