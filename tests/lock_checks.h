/* lock_checks.h -- the checks the lock suites (integration_lockout, integration_lockout_log) make of a key's lock
 * beyond a reply: what RL.LOCKINFO says, how long the key lives, and a sorted set's members as text.
 *
 * The idea: a lock is judged by what a client can see of it. The key's expiry must cover the lock record
 * exactly, but the frozen test clock's expiries sit an offset away from real time, so "how long from now" is
 * read against an anchor: a token bucket made at the same instant (capacity 1, 1 per s: reset_after 1000).
 * Static inline, as check.h's counters are the including program's own. */
#ifndef RL_LOCK_CHECKS_H
#define RL_LOCK_CHECKS_H

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rl_checks.h"
#include "server.h"

/* RL.LOCKINFO key as [lock_ms, strikes] ({-1, -1} when the reply is not two integers: one check). */
typedef struct lockinfo {
    long long ms, strikes;
} lockinfo;

static inline lockinfo lockinfo_of(redisContext *ctx, const char *key) {
    lockinfo li = {-1, -1};
    redisReply *x = cmd(ctx, "RL.LOCKINFO %s", key);
    if (CHECK(x->type == REDIS_REPLY_ARRAY && x->elements == 2 && x->element[0]->type == REDIS_REPLY_INTEGER &&
              x->element[1]->type == REDIS_REPLY_INTEGER)) {
        li.ms = x->element[0]->integer;
        li.strikes = x->element[1]->integer;
    } else if (x->type == REDIS_REPLY_ERROR) {
        fprintf(stderr, "     RL.LOCKINFO %s: %s\n", key, x->str);
    }
    freeReplyObject(x);
    return li;
}

/* Two checks: the reply's shape, and RL.LOCKINFO key on ctx is [want_ms, want_strikes]. */
#define CHECK_LOCK_ON(ctx, key, want_ms, want_strikes)                                                    \
    do {                                                                                                  \
        lockinfo li_ = lockinfo_of(ctx, key);                                                             \
        if (!CHECK(li_.ms == (want_ms) && li_.strikes == (want_strikes)))                                 \
            fprintf(stderr, "     RL.LOCKINFO %s: [%lld, %lld], want [%lld, %lld]\n", key, li_.ms, li_.strikes, \
                    (long long)(want_ms), (long long)(want_strikes));                                     \
    } while (0)

/* The frozen clock's expiry base now: PEXPIRETIME of a key whose reset_after_ms is r is base + r (one check,
 * of the anchor's reply). */
static inline long long expiry_base(redisContext *ctx) {
    freeReplyObject(cmd(ctx, "DEL lock-checks:anchor"));
    rl_result a = rl(ctx, "RL.TOKEN lock-checks:anchor 1 1 1000");
    CHECK(a.ok && a.reset_after_ms == 1000);
    long long at = cmd_int(ctx, "PEXPIRETIME lock-checks:anchor") - 1000;
    freeReplyObject(cmd(ctx, "DEL lock-checks:anchor"));
    return at;
}

/* Two checks: the key lives exactly reset_after_ms from now, as the reply said. */
static inline void check_expiry_on(redisContext *ctx, const char *key, long long reset_after_ms) {
    long long base = expiry_base(ctx), at = cmd_int(ctx, "PEXPIRETIME %s", key);
    if (!CHECK(at - base == reset_after_ms))
        fprintf(stderr, "     %s expires %lld ms after now, want %lld\n", key, at - base, reset_after_ms);
}

/* An array reply's strings as one malloc'd line, each followed by a space ("" for none). */
static inline char *reply_words(const redisReply *x) {
    size_t size = 1;
    for (size_t i = 0; x->type == REDIS_REPLY_ARRAY && i < x->elements; i++) size += x->element[i]->len + 1;
    char *text = calloc(1, size), *at = text;
    for (size_t i = 0; x->type == REDIS_REPLY_ARRAY && i < x->elements; i++) {
        if (x->element[i]->str) memcpy(at, x->element[i]->str, x->element[i]->len);
        at += x->element[i]->len;
        *at++ = ' ';
    }
    return text;
}

/* ZRANGE key 0 -1 WITHSCORES as one line "name score name score ..." ("" for a missing key), for comparing two
 * sets member for member; the caller frees. */
static inline char *zset_text(redisContext *ctx, const char *key) {
    redisReply *x = cmd(ctx, "ZRANGE %s 0 -1 WITHSCORES", key);
    char *text = reply_words(x);
    freeReplyObject(x);
    return text;
}

#endif
