/* bench-multi.c -- a small hiredis load generator for what redis-benchmark cannot send: the ClassDojo
 * sliding log as a MULTI/EXEC transaction, and (so that ratios come from the same tool and run) plain
 * commands such as INCR and RL.SLIDINGLOG. Used by scripts/bench/throughput.sh, checks.sh and memory.sh.
 *
 *   bench-multi [options] cmd ARG...              one command per request; "__rand_int__" in an argument
 *                                                 becomes a 12-digit key number (as in redis-benchmark),
 *                                                 "__now_us__" the wall clock in Unix µs;
 *                                                 ";" separates commands sent together as one request
 *   bench-multi [options] lease PREFIX LIMIT LEASE_MS
 *                                                 a concurrency limit's client: a request is RL.ACQUIRE
 *                                                 PREFIX<key> LIMIT LEASE_MS (again while denied), then
 *                                                 RL.RELEASE of its lease (the id the module made), which
 *                                                 must answer 1; each pipeline carries each request's
 *                                                 next step
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
 * if any reply was an error or the connection failed.
 *
 * The parts: bench-multi.c (this file: options, connections, the loop), bench-multi-requests.c (the
 * workload and the writing of pipelines), bench-multi-replies.c (replies, decisions, latencies, the
 * result line), bench-multi.h (what they share). scripts/bench/tools.sh builds them. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench-multi.h"

options opt = {"127.0.0.1", 6379, 50, 1, 100000, 100000, 0, 0, NULL, 1};

uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void die(const char *msg) {
    fprintf(stderr, "bench-multi: %s\n", msg);
    exit(1);
}

void usage(void) {
    fprintf(stderr, "usage: bench-multi [-h host] [-p port] [-c conns] [-n requests] [-P pipeline] [-r keyspace]\n"
                    "                   [--fill per_key] [--check] [--name name] [--seed n]\n"
                    "                   cmd ARG... [; ARG...] | classdojo PREFIX LIMIT WINDOW_MS | lease PREFIX LIMIT LEASE_MS\n");
    exit(2);
}

long long num_arg(const char *s, long long min) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || v < min) usage();
    return v;
}

/* The options before the workload; returns the index of the workload's first word. */
static int parse_options(int argc, char **argv) {
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
    return i;
}

/* A connection in non-blocking mode: the loop writes and reads only when poll says it can. */
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

/* Whatever poll found ready on cn: write the rest of its pipeline, read the replies that came; when the
 * pipeline is all answered, write the next. Returns 0 when cn has no request left to send. */
static int serve(conn *cn, short revents) {
    if (cn->want_write) {
        int done = 0;
        if (redisBufferWrite(cn->ctx, &done) != REDIS_OK) die(cn->ctx->errstr);
        if (done) cn->want_write = 0;
    }
    if (revents & (POLLIN | POLLHUP | POLLERR)) {
        if (redisBufferRead(cn->ctx) != REDIS_OK) die(cn->ctx->errstr);
        void *r;
        while (cn->next_req < cn->nreq) {
            if (redisGetReplyFromReader(cn->ctx, &r) != REDIS_OK) die(cn->ctx->errstr);
            if (!r) break;
            on_reply(cn, r);
        }
        if (cn->next_req == cn->nreq) {
            cn->nreq = 0;
            if (!start_pipeline(cn)) return 0;
        }
    }
    return 1;
}

/* Every connection keeps one pipeline in flight until all the requests are answered. */
static void run(conn *conns, struct pollfd *pfds) {
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
            if (!pfds[k].revents || conns[k].nreq == 0) continue;
            if (!serve(&conns[k], pfds[k].revents)) active--;
        }
    }
}

int main(int argc, char **argv) {
    int i = parse_options(argc, argv);
    parse_workload(argc - i, argv + i);
    if (opt.pipeline > MAX_PIPELINE) die("pipeline too deep");
    if (opt.check) opt.clients = 1, opt.pipeline = 1;
    if (!opt.name) opt.name = wl.kind == WL_CLASSDOJO ? "classdojo" : wl.kind == WL_LEASE ? "lease" : wl.cmds[0].argv[0];
    rng_seed(opt.seed);

    latency_us = malloc((size_t)opt.requests * sizeof *latency_us);
    conn *conns = calloc((size_t)opt.clients, sizeof *conns);
    struct pollfd *pfds = calloc((size_t)opt.clients, sizeof *pfds);
    if (!latency_us || !conns || !pfds) die("out of memory");
    for (int k = 0; k < opt.clients; k++) conns[k].ctx = connect_one();

    uint64_t t0 = now_ns();
    run(conns, pfds);
    print_result((double)(now_ns() - t0) / 1e9);
    for (int k = 0; k < opt.clients; k++) redisFree(conns[k].ctx);
    free(latency_us);
    free(conns);
    free(pfds);
    return errors_n > 0 ? 1 : 0;
}
