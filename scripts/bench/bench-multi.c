/* bench-multi.c -- a small hiredis load generator for what redis-benchmark cannot send: the ClassDojo
 * sliding log as a MULTI/EXEC transaction, and (so that ratios come from the same tool and run) plain
 * commands such as INCR and RL.SLIDINGLOG. Used by scripts/bench/throughput.sh, checks.sh and memory.sh.
 *
 *   bench-multi [options] cmd ARG...              one command per request; "__rand_int__" in an argument
 *                                                 becomes a 12-digit key number (as in redis-benchmark),
 *                                                 "__now_us__" the wall clock in Unix µs;
 *                                                 ";" separates commands sent together as one request
 *   bench-multi [options] classdojo PREFIX LIMIT WINDOW_MS
 *                                                 ClassDojo's rolling-rate-limiter: MULTI, ZREMRANGEBYSCORE
 *                                                 key 0 now-W, ZADD key now <uuid>, ZRANGE key 0 -1
 *                                                 WITHSCORES, EXPIRE key ceil(W/1000 s), EXEC, then the
 *                                                 decision on the client (blocked iff the log, the new
 *                                                 attempt included, holds more than LIMIT entries)
 * Options:
 *   -h HOST -p PORT     server (127.0.0.1:6379)
 *   -c N                connections (50)
 *   -n N                requests in all (100000)
 *   -P N                pipeline: each connection sends N requests, waits for all their replies (1)
 *   -r N                random key numbers in [0, N) (100000)
 *   --fill K            instead of random keys: K requests on each key in turn, key numbers 0, 1, 2...
 *   --check             one connection, no pipeline, all requests on key number 0, and print the
 *                       decisions (A admitted, B blocked) in order
 *   --name NAME         the name printed in the result line
 *   --seed N            random seed (1)
 *
 * A request is timed from the moment its pipeline is written to the moment its last reply is read. The
 * result is one line:
 *   NAME rps=... avg_ms=... p50_ms=... p99_ms=... max_ms=... requests=... allowed=... blocked=... errors=...
 * allowed/blocked count RL.* replies (first element 1 or 0) and ClassDojo decisions. The exit status is 1
 * if any reply was an error or the connection failed. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <inttypes.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_PIPELINE 1024
#define MAX_ARGS 64
#define MAX_CMDS 8
#define KEY_DIGITS 12
#define RAND_TOKEN "__rand_int__"
#define NOW_TOKEN "__now_us__"

typedef enum { WL_TEMPLATE, WL_CLASSDOJO } workload_kind;

/* A template command: its arguments, with the positions of "__rand_int__" in them. */
typedef struct tmpl_cmd {
    int argc;
    char *argv[MAX_ARGS];
} tmpl_cmd;

typedef struct workload {
    workload_kind kind;
    int ncmds; /* replies per request */
    tmpl_cmd cmds[MAX_CMDS];
    /* classdojo */
    const char *prefix;
    long long limit, window_ms;
} workload;

typedef struct conn {
    redisContext *ctx;
    int nreq;           /* requests in the current pipeline */
    int next_req;       /* the request whose replies are being read */
    int replies_left;   /* replies still expected for next_req */
    int failed_req;     /* next_req got an error reply */
    uint64_t start_ns;  /* when the pipeline was written */
    int want_write;
} conn;

static struct {
    const char *host;
    int port, clients, pipeline;
    long long requests, keyspace, fill;
    int check;
    const char *name;
    uint64_t seed;
} opt = {"127.0.0.1", 6379, 50, 1, 100000, 100000, 0, 0, NULL, 1};

static workload wl;
static long long issued, completed, allowed_n, blocked_n, errors_n;
static uint32_t *latency_us; /* one per completed request */
static char decisions[4096];
static size_t ndecisions;
static uint64_t rng_state;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static long long wall_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static uint64_t rng_next(void) { /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}

static void die(const char *msg) {
    fprintf(stderr, "bench-multi: %s\n", msg);
    exit(1);
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

/* Write the next pipeline of up to opt.pipeline requests; 0 if none is left. */
static int start_pipeline(conn *cn) {
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

/* --- reading replies -------------------------------------------------------------------------------- */

static int has_error(const redisReply *r) {
    if (r->type == REDIS_REPLY_ERROR) return 1;
    if (r->type == REDIS_REPLY_ARRAY)
        for (size_t i = 0; i < r->elements; i++)
            if (r->element[i] && has_error(r->element[i])) return 1;
    return 0;
}

static void note_decision(int allowed) {
    if (allowed)
        allowed_n++;
    else
        blocked_n++;
    if (opt.check && ndecisions + 1 < sizeof decisions) decisions[ndecisions++] = allowed ? 'A' : 'B';
}

/* Look at one reply of the request being read (index = which of its ncmds replies). */
static void inspect_reply(conn *cn, const redisReply *r, int index) {
    if (has_error(r)) {
        if (!cn->failed_req && errors_n < 5) fprintf(stderr, "bench-multi: error reply: %s\n",
                                                     r->type == REDIS_REPLY_ERROR ? r->str : "(in EXEC)");
        cn->failed_req = 1;
        return;
    }
    if (wl.kind == WL_CLASSDOJO) {
        if (index != wl.ncmds - 1) return; /* +OK, +QUEUED... */
        /* EXEC: [removed, added, [member, score, ...], expire]; the log includes this attempt. */
        if (r->type != REDIS_REPLY_ARRAY || r->elements != 4 || r->element[2]->type != REDIS_REPLY_ARRAY) {
            cn->failed_req = 1;
            return;
        }
        long long entries = (long long)r->element[2]->elements / 2;
        note_decision(entries <= wl.limit);
    } else if (index == 0 && r->type == REDIS_REPLY_ARRAY && r->elements == 6 &&
               r->element[0]->type == REDIS_REPLY_INTEGER) {
        note_decision(r->element[0]->integer == 1); /* an RL.* reply (or a baseline's) */
    }
}

static void on_reply(conn *cn, redisReply *r) {
    inspect_reply(cn, r, wl.ncmds - cn->replies_left);
    freeReplyObject(r);
    if (--cn->replies_left > 0) return;
    uint64_t lat = (now_ns() - cn->start_ns) / 1000;
    latency_us[completed++] = lat > UINT32_MAX ? UINT32_MAX : (uint32_t)lat;
    if (cn->failed_req) errors_n++;
    cn->failed_req = 0;
    cn->next_req++;
    cn->replies_left = wl.ncmds;
}

/* --- setup ------------------------------------------------------------------------------------------ */

static void usage(void) {
    fprintf(stderr, "usage: bench-multi [-h host] [-p port] [-c conns] [-n requests] [-P pipeline] [-r keyspace]\n"
                    "                   [--fill per_key] [--check] [--name name] [--seed n]\n"
                    "                   cmd ARG... [; ARG...] | classdojo PREFIX LIMIT WINDOW_MS\n");
    exit(2);
}

static long long num_arg(const char *s, long long min) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || v < min) usage();
    return v;
}

static void parse_workload(int argc, char **argv) {
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

static redisContext *connect_one(void) {
    redisContext *c = redisConnect(opt.host, opt.port);
    if (!c || c->err) {
        fprintf(stderr, "bench-multi: cannot connect to %s:%d: %s\n", opt.host, opt.port, c ? c->errstr : "?");
        exit(1);
    }
    int fl = fcntl(c->fd, F_GETFL);
    if (fl < 0 || fcntl(c->fd, F_SETFL, fl | O_NONBLOCK) < 0) die("fcntl");
    c->flags &= ~REDIS_BLOCK;
    return c;
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static double percentile_ms(double p) {
    if (completed == 0) return 0;
    long long i = (long long)(p * (double)completed + 0.999999) - 1;
    if (i < 0) i = 0;
    if (i >= completed) i = completed - 1;
    return latency_us[i] / 1000.0;
}

int main(int argc, char **argv) {
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i];
        if (i + 1 >= argc && strcmp(a, "--check") != 0) usage();
        if (strcmp(a, "-h") == 0) opt.host = argv[++i];
        else if (strcmp(a, "-p") == 0) opt.port = (int)num_arg(argv[++i], 1);
        else if (strcmp(a, "-c") == 0) opt.clients = (int)num_arg(argv[++i], 1);
        else if (strcmp(a, "-n") == 0) opt.requests = num_arg(argv[++i], 1);
        else if (strcmp(a, "-P") == 0) opt.pipeline = (int)num_arg(argv[++i], 1);
        else if (strcmp(a, "-r") == 0) opt.keyspace = num_arg(argv[++i], 1);
        else if (strcmp(a, "--fill") == 0) opt.fill = num_arg(argv[++i], 1);
        else if (strcmp(a, "--check") == 0) opt.check = 1;
        else if (strcmp(a, "--name") == 0) opt.name = argv[++i];
        else if (strcmp(a, "--seed") == 0) opt.seed = (uint64_t)num_arg(argv[++i], 0);
        else usage();
    }
    parse_workload(argc - i, argv + i);
    if (opt.pipeline > MAX_PIPELINE) die("pipeline too deep");
    if (opt.check) opt.clients = 1, opt.pipeline = 1;
    if (!opt.name) opt.name = wl.kind == WL_CLASSDOJO ? "classdojo" : wl.cmds[0].argv[0];
    rng_state = opt.seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
    if (!rng_state) rng_state = 1;

    latency_us = malloc((size_t)opt.requests * sizeof *latency_us);
    conn *conns = calloc((size_t)opt.clients, sizeof *conns);
    struct pollfd *pfds = calloc((size_t)opt.clients, sizeof *pfds);
    if (!latency_us || !conns || !pfds) die("out of memory");
    for (int k = 0; k < opt.clients; k++) conns[k].ctx = connect_one();

    uint64_t t0 = now_ns();
    int active = 0;
    for (int k = 0; k < opt.clients; k++) active += start_pipeline(&conns[k]);
    while (active > 0) {
        for (int k = 0; k < opt.clients; k++) {
            pfds[k].fd = conns[k].nreq > 0 ? conns[k].ctx->fd : -1;
            pfds[k].events = POLLIN | (conns[k].want_write ? POLLOUT : 0);
            pfds[k].revents = 0;
        }
        if (poll(pfds, (nfds_t)opt.clients, 10000) <= 0) die(errno == EINTR ? "interrupted" : "server stopped answering");
        for (int k = 0; k < opt.clients; k++) {
            conn *cn = &conns[k];
            if (!pfds[k].revents || cn->nreq == 0) continue;
            if (cn->want_write) {
                int done = 0;
                if (redisBufferWrite(cn->ctx, &done) != REDIS_OK) die(cn->ctx->errstr);
                if (done) cn->want_write = 0;
            }
            if (pfds[k].revents & (POLLIN | POLLHUP | POLLERR)) {
                if (redisBufferRead(cn->ctx) != REDIS_OK) die(cn->ctx->errstr);
                void *r;
                while (cn->next_req < cn->nreq) {
                    if (redisGetReplyFromReader(cn->ctx, &r) != REDIS_OK) die(cn->ctx->errstr);
                    if (!r) break;
                    on_reply(cn, r);
                }
                if (cn->next_req == cn->nreq) {
                    cn->nreq = 0;
                    if (!start_pipeline(cn)) active--;
                }
            }
        }
    }
    double secs = (double)(now_ns() - t0) / 1e9;

    double sum = 0;
    for (long long k = 0; k < completed; k++) sum += latency_us[k];
    qsort(latency_us, (size_t)completed, sizeof *latency_us, cmp_u32);
    printf("%s rps=%.2f avg_ms=%.3f p50_ms=%.3f p99_ms=%.3f max_ms=%.3f requests=%lld allowed=%lld blocked=%lld "
           "errors=%lld\n",
           opt.name, secs > 0 ? (double)completed / secs : 0, completed ? sum / (double)completed / 1000.0 : 0,
           percentile_ms(0.50), percentile_ms(0.99), percentile_ms(1.0), completed, allowed_n, blocked_n, errors_n);
    if (opt.check) printf("decisions %.*s\n", (int)ndecisions, decisions);
    for (int k = 0; k < opt.clients; k++) redisFree(conns[k].ctx);
    free(latency_us);
    free(conns);
    free(pfds);
    return errors_n > 0 ? 1 : 0;
}
