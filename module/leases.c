/* leases.c -- RL.RELEASE, RL.RENEW and RL.LEASES: what a concurrency limit's client does with a lease that
 * RL.ACQUIRE gave it (store_lease.c takes them).
 *
 *   RL.RELEASE key lease_id            ends the lease now: 1, or 0 when there is no such lease (released
 *                                      already, expired, never made);
 *   RL.RENEW key lease_id lease_ms     the lease now ends lease_ms from now (a heartbeat for long work): 1,
 *                                      or 0 when it no longer exists (its slot may be someone else's);
 *   RL.LEASES key                      the unexpired leases, oldest first: id, units, ms until it ends.
 *
 * A lease that has ended is gone for all three, whether or not a write has dropped it yet. A release or a
 * renewal writes like any limiter write (the key's leases replicated whole, its expiry the last lease's end,
 * the key signalled, the event rl.release or rl.renew), then serves the clients waiting on the key: a slot
 * given back admits the head of the queue at once, not at a timer. An answer 0 writes nothing.
 *
 * A key RL.CHECK checks (a policy's limits, store_bundle.c) holds the leases of its policy's CONCURRENCY limits:
 * the three commands find a lease there by its id among all of them (a made id is unique in the server). */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "compat.h"
#include "rl_module.h"
#include "evict.h"

static const rl_limiter *lease_limiter(void) {
    for (int i = 0; i < RL_NLIMITERS; i++)
        if (rl_limiters[i].steps == &rl_lease_steps) return &rl_limiters[i];
    return NULL;
}

/* The key's leases (NULL when the key is empty), or -1 when it holds something else, or 1 when it is a
 * policy's key (its value a bundle: *value NULL). */
static int open_leases(RedisModuleCtx *ctx, RedisModuleString *keyname, int mode, RedisModuleKey **key,
                       rl_lease_value **value) {
    *key = RedisModule_OpenKey(ctx, keyname, mode);
    const rl_limiter *found = rl_cell_limiter_of(*key);
    *value = NULL;
    rl_lock alone;
    if (found == NULL || (found == RL_CELL_OTHER && rl_lock_only_read(*key, &alone))) return 0; /* no lease */
    if (rl_bundle_type_is(*key)) return 1;
    if (found != lease_limiter()) {
        RedisModule_CloseKey(*key);
        return -1;
    }
    *value = RedisModule_ModuleTypeGetValue(*key);
    return 0;
}

static const char *id_of(RedisModuleString *arg, size_t *len) {
    const char *id = RedisModule_StringPtrLen(arg, len);
    return *len >= 1 && *len <= RL_LEASE_ID_MAX ? id : NULL;
}

#define BAD_ID "ERR lease_id: must be 1 to 64 bytes"

static int count(int stat, rl_tally_kind kind, int answer) {
    rl_tally t = {kind, answer, 0, 0, 0, 0};
    rl_stats_count(&rl_stats[stat], &t);
    return answer;
}

static int fail(RedisModuleCtx *ctx, int stat, const char *err) {
    count(stat, RL_TALLY_ERROR, 0);
    return err ? RedisModule_ReplyWithError(ctx, err) : RedisModule_WrongArity(ctx);
}

/* After a write of the key: stored (or deleted), signalled, its event fired, its waiters served; answers 1. */
static int written(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *keyname, rl_lease_value *value,
                   int64_t now_us, int stat, const char *event) {
    rl_lease_store(ctx, key, keyname, value, now_us);
    rl_lfu_keep(key);
    RedisModule_CloseKey(key);
    RedisModule_SignalModifiedKey(ctx, keyname);
    RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_MODULE, event, keyname);
    rl_wait_serve_keys(ctx, &keyname, 1); /* a slot given back, or an end moved: the queue's head may fit */
    return RedisModule_ReplyWithLongLong(ctx, count(stat, RL_TALLY_DECIDED, 1));
}

/* The lease a release or a renewal names: its key open for writing, its leases, the time, its index. */
typedef struct named_lease {
    RedisModuleKey *key;
    rl_lease_value *value;
    int64_t now_us;
    int at;
} named_lease;

/* Find the unexpired lease named id on keyname: 1 when found (the key left open in *l), else 0 after
 * answering (0 when there is no such lease, WRONGTYPE), the key closed. A policy's key is released or renewed
 * here (renew_ms: 0 for a release), and answered. */
static int find_named(RedisModuleCtx *ctx, RedisModuleString *keyname, const char *id, size_t id_len, int stat,
                      int64_t renew_ms, named_lease *l) {
    int kind = open_leases(ctx, keyname, REDISMODULE_READ | REDISMODULE_WRITE, &l->key, &l->value);
    if (kind < 0) {
        fail(ctx, stat, REDISMODULE_ERRORMSG_WRONGTYPE);
        return 0;
    }
    l->now_us = rl_clock_now_us();
    if (kind == 1) {
        int done = rl_bundle_lease_edit(ctx, l->key, keyname, id, id_len, renew_ms, l->now_us);
        if (done) rl_lfu_keep(l->key);
        RedisModule_CloseKey(l->key);
        if (done) {
            RedisModule_SignalModifiedKey(ctx, keyname);
            RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_MODULE, renew_ms ? "rl.renew" : "rl.release",
                                            keyname);
            rl_wait_serve_keys(ctx, &keyname, 1);
        }
        RedisModule_ReplyWithLongLong(ctx, count(stat, RL_TALLY_DECIDED, done));
        return 0;
    }
    l->at = l->value ? rl_lease_find(l->value->v, l->value->n, l->now_us, id, id_len) : -1;
    if (l->at >= 0) return 1;
    RedisModule_CloseKey(l->key); /* none: answered 0, nothing written */
    RedisModule_ReplyWithLongLong(ctx, count(stat, RL_TALLY_DECIDED, 0));
    return 0;
}

int rl_release_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 3) return fail(ctx, RL_STAT_RELEASE, NULL);
    size_t id_len;
    const char *id = id_of(argv[2], &id_len);
    if (!id) return fail(ctx, RL_STAT_RELEASE, BAD_ID);
    named_lease l;
    if (!find_named(ctx, argv[1], id, id_len, RL_STAT_RELEASE, 0, &l)) return REDISMODULE_OK;
    rl_lease_remove(l.value, l.at, l.now_us);
    return written(ctx, l.key, argv[1], l.value, l.now_us, RL_STAT_RELEASE, "rl.release");
}

int rl_renew_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 4) return fail(ctx, RL_STAT_RENEW, NULL);
    size_t id_len, ms_len;
    const char *id = id_of(argv[2], &id_len), *ms = RedisModule_StringPtrLen(argv[3], &ms_len);
    if (!id) return fail(ctx, RL_STAT_RENEW, BAD_ID);
    int64_t lease_ms;
    if (rl_parse_int64(ms, ms_len, &lease_ms) != 0 || lease_ms < 1 || lease_ms > RL_MAX_PERIOD_MS) {
        char err[RL_ERR_LEN];
        rl_range_error(err, "lease_ms", 1, RL_MAX_PERIOD_MS);
        return fail(ctx, RL_STAT_RENEW, err);
    }
    named_lease l;
    if (!find_named(ctx, argv[1], id, id_len, RL_STAT_RENEW, lease_ms, &l)) return REDISMODULE_OK;
    rl_lease_plan plan = {.action = RL_LEASE_RENEW,
                          .expired = rl_lease_expired(l.value->v, l.value->n, l.now_us),
                          .found = l.at,
                          .end_us = l.now_us + lease_ms * 1000};
    rl_lease_apply(l.value, &plan, l.now_us);
    return written(ctx, l.key, argv[1], l.value, l.now_us, RL_STAT_RENEW, "rl.renew");
}

/* RL.LEASES lists by age: the leases' positions sorted by when each was acquired (ties by end). */
static const rl_lease *sorting;
static int by_age(const void *a, const void *b) {
    const rl_lease *x = &sorting[*(const int *)a], *y = &sorting[*(const int *)b];
    if (x->acquired_us != y->acquired_us) return x->acquired_us < y->acquired_us ? -1 : 1;
    return *(const int *)a - *(const int *)b;
}

int rl_leases_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    rl_lease_value *value, all = {0};
    int kind = open_leases(ctx, argv[1], rl_compat_read_mode(), &key, &value);
    if (kind < 0) return RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
    if (kind == 1) { /* a policy's key: the leases of all its concurrency limits, side by side (not owned) */
        const rl_bundle *b = RedisModule_ModuleTypeGetValue(key);
        for (int i = 0; i < b->n; i++) all.n += b->e[i].leases ? b->e[i].leases->n : 0;
        all.v = all.n ? RedisModule_Alloc((size_t)all.n * sizeof *all.v) : NULL;
        all.n = 0;
        for (int i = 0; i < b->n; i++)
            for (int k = 0; b->e[i].leases && k < b->e[i].leases->n; k++) all.v[all.n++] = b->e[i].leases->v[k];
        value = &all;
    }
    int64_t now_us = rl_clock_now_us();
    /* (the ended leases: a prefix of one key's, anywhere among a policy's) */
    int n = 0, total = value ? value->n : 0;
    int *order = total ? RedisModule_Alloc((size_t)total * sizeof *order) : NULL;
    for (int i = 0; i < total; i++)
        if (value->v[i].end_us > now_us) order[n++] = i;
    if (n > 1) {
        sorting = value->v;
        qsort(order, (size_t)n, sizeof *order, by_age);
    }
    RedisModule_ReplyWithArray(ctx, n);
    for (int i = 0; i < n; i++) {
        const rl_lease *l = &value->v[order[i]];
        RedisModule_ReplyWithArray(ctx, 3);
        RedisModule_ReplyWithStringBuffer(ctx, rl_lease_id(l), l->id_len);
        RedisModule_ReplyWithLongLong(ctx, l->units);
        RedisModule_ReplyWithLongLong(ctx, rl_us_to_ms_ceil(l->end_us - now_us));
    }
    if (order) RedisModule_Free(order);
    if (all.v) RedisModule_Free(all.v);
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}
