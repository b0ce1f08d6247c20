/* ratelimit_example.c -- the smallest useful client of the module, with hiredis: N requests of one API
 * key against a token bucket, printing each decision and what an HTTP server would answer.
 *
 *   ratelimit-example [host] [port] [requests]        (defaults: 127.0.0.1 6379 5)
 *
 * The idea: one RL.TOKEN call per request is the whole client; the six reply fields say everything
 * (admitted or not, what is left, when to retry), so no client-side state or clock is needed. The bucket
 * holds 3 tokens and refills 1 per second; the key is rl:example:alice. */
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>

enum { ALLOWED, LIMIT, REMAINING, RETRY_AFTER_MS, RESET_AFTER_MS, WAIT_MS, NFIELDS };

/* One RL.TOKEN request; fills the six fields. Returns 0, or -1 with a message on stderr. */
static int take_token(redisContext *c, const char *key, long long f[NFIELDS]) {
    redisReply *r = redisCommand(c, "RL.TOKEN %s 3 1 1000", key);
    if (!r) {
        fprintf(stderr, "redis: %s\n", c->errstr);
        return -1;
    }
    int ok = r->type == REDIS_REPLY_ARRAY && r->elements == NFIELDS;
    for (size_t i = 0; ok && i < NFIELDS; i++) {
        ok = r->element[i]->type == REDIS_REPLY_INTEGER;
        if (ok) f[i] = r->element[i]->integer;
    }
    if (!ok) fprintf(stderr, "unexpected reply%s%s\n", r->type == REDIS_REPLY_ERROR ? ": " : "",
                     r->type == REDIS_REPLY_ERROR ? r->str : "");
    freeReplyObject(r);
    return ok ? 0 : -1;
}

/* What a web server would do with the decision: 200, or 429 with Retry-After in whole seconds. */
static void print_decision(int n, const long long f[NFIELDS]) {
    if (f[ALLOWED])
        printf("request %d: 200, %lld of %lld tokens left, full again in %lld ms\n", n, f[REMAINING], f[LIMIT],
               f[RESET_AFTER_MS]);
    else
        printf("request %d: 429, retry in %lld ms (Retry-After: %lld)\n", n, f[RETRY_AFTER_MS],
               (f[RETRY_AFTER_MS] + 999) / 1000);
}

int main(int argc, char **argv) {
    const char *host = argc > 1 ? argv[1] : "127.0.0.1";
    int port = argc > 2 ? atoi(argv[2]) : 6379;
    int requests = argc > 3 ? atoi(argv[3]) : 5;
    redisContext *c = redisConnect(host, port);
    if (!c || c->err) {
        fprintf(stderr, "cannot connect to %s:%d: %s\n", host, port, c ? c->errstr : "out of memory");
        return 1;
    }
    int rc = 0;
    for (int n = 1; n <= requests && rc == 0; n++) {
        long long f[NFIELDS];
        rc = take_token(c, "rl:example:alice", f);
        if (rc == 0) print_decision(n, f);
    }
    redisFree(c);
    return rc == 0 ? 0 : 1;
}
