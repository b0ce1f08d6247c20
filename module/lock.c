/* lock.c -- the keys' locks (algorithms/lockout.h) as commands see them: RL.BLOCK, RL.UNBLOCK and RL.LOCKINFO on
 * any limiter's key, and the write of a lock alone into a key (RL.ALL's denied clauses, rl_lock_start).
 *
 * A lock lives in its key's value: beside a cell limiter's state (cell_type.c), in a concurrency limit's
 * leases' value (lease_type.c), as a member of a sliding log's set at score -inf (store_log_name.c), or, when
 * the key has no state, as a value of its own type (lock_type.c). Whatever holds it, the key's expiry is the
 * later of the state's idle instant and the end of the lock record, so the key lives exactly as long as
 * either says something; every write is replicated as the holder's usual effect. The file sits above the
 * storages it writes into, and calls nothing that decides or waits (RL.UNBLOCK's waiters are served by its
 * command, in command.c). */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "clock.h"
#include "evict.h"
#include "store_log_parts.h"

/* --- a key's lock, whatever holds it ---------------------------------------------------------------- */

/* An open key, as the lock commands see it. */
typedef struct lock_target {
    RedisModuleKey *key;
    const rl_limiter *lim; /* a cell or lease limiter's key, else NULL (empty, a lock alone, a sliding log) */
    int is_log;            /* a sliding log's sorted set */
    RedisModuleString *lock_name; /* its lock member (owned), NULL when none */
    void *stored;          /* a cell or lease limiter's value */
    rl_lock_rec rec;       /* its record (zeros when none), and the expiry its state alone gives the key */
    int has_rec;
} lock_target;

/* The key's expiry as a state's own: 0 for none would read as idle, so a key without one (RL.SETSTATE without
 * PXAT) counts as living to the end of the clock's range. */
static int64_t own_expiry(RedisModuleKey *key) {
    int64_t expire = RedisModule_GetAbsExpire(key);
    return expire > 0 ? expire : RL_MAX_TIME_MS;
}

/* A sliding log's lock member: among the members at -inf (store_log_name.c). */
static void log_lock_read(RedisModuleCtx *ctx, lock_target *t) {
    t->is_log = 1;
    if (RedisModule_ZsetFirstInScoreRange(t->key, RL_LOG_NEG_INF, RL_LOG_NEG_INF, 0, 0) == REDISMODULE_OK) {
        while (!RedisModule_ZsetRangeEndReached(t->key)) {
            double score;
            RedisModuleString *name = RedisModule_ZsetRangeCurrentElement(t->key, &score);
            if (rl_log_lock_parse(name, score, &t->rec)) {
                t->lock_name = name;
                t->has_rec = 1;
                break;
            }
            RedisModule_FreeString(ctx, name);
            if (!RedisModule_ZsetRangeNext(t->key)) break;
        }
        RedisModule_ZsetRangeStop(t->key);
    }
    if (!t->has_rec) t->rec.state_expire_ms = own_expiry(t->key);
}

/* Open keyname and read its lock. Returns NULL or the error (the key is then closed). */
static const char *target_open(RedisModuleCtx *ctx, RedisModuleString *keyname, int mode, lock_target *t) {
    memset(t, 0, sizeof *t);
    t->key = RedisModule_OpenKey(ctx, keyname, mode);
    int type = RedisModule_KeyType(t->key);
    if (type == REDISMODULE_KEYTYPE_EMPTY) return NULL;
    if (type == REDISMODULE_KEYTYPE_ZSET) {
        log_lock_read(ctx, t);
        return NULL;
    }
    if (rl_lock_only_read(t->key, &t->rec.lock)) {
        t->has_rec = 1;
        return NULL;
    }
    const rl_limiter *lim = rl_cell_limiter_of(t->key);
    if (lim == RL_CELL_OTHER) {
        RedisModule_CloseKey(t->key);
        t->key = NULL;
        return REDISMODULE_ERRORMSG_WRONGTYPE;
    }
    t->lim = lim;
    t->stored = RedisModule_ModuleTypeGetValue(t->key);
    if (lim->steps == &rl_lease_steps) { /* leases: the record in the value, the expiry from the leases */
        const rl_lease_value *val = t->stored;
        t->rec.lock = val->lock;
        t->has_rec = val->lock.until_us != 0 || val->lock.strikes != 0;
        return NULL;
    }
    t->has_rec = rl_value_lock(t->lim, t->stored, &t->rec);
    if (!t->has_rec) t->rec.state_expire_ms = own_expiry(t->key);
    return NULL;
}

static void target_close(RedisModuleCtx *ctx, lock_target *t) {
    if (t->lock_name) RedisModule_FreeString(ctx, t->lock_name);
    RedisModule_CloseKey(t->key);
}

static void delete_key(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *keyname) {
    RedisModule_DeleteKey(key);
    if (rl_effects_on(ctx)) RedisModule_Replicate(ctx, "DEL", "s", keyname);
}

/* A sliding log's lock: its member rewritten (or removed), the key's expiry the later of the log's own and the
 * record's end; a log whose state is idle and whose record is gone goes. */
static void log_lock_write(RedisModuleCtx *ctx, lock_target *t, RedisModuleString *keyname, const rl_lock *l,
                           int alive, int64_t lock_expire) {
    rl_lock_rec rec = {*l, t->rec.state_expire_ms};
    rl_log_lock_write(ctx, t->key, keyname, t->lock_name, &rec, alive);
    int64_t expire = lock_expire > rec.state_expire_ms ? lock_expire : rec.state_expire_ms;
    if (RedisModule_KeyType(t->key) != REDISMODULE_KEYTYPE_ZSET) return; /* its last member went: no key */
    if (expire == 0) {
        delete_key(ctx, t->key, keyname);
        return;
    }
    RedisModule_SetAbsExpire(t->key, expire);
    if (rl_effects_on(ctx)) RedisModule_Replicate(ctx, "PEXPIREAT", "sl", keyname, (long long)expire);
}

/* Write lock l into the open key t (whatever it holds), or drop the record when l says nothing at now: the key
 * keeps its state with the state's own expiry (or goes, if that state is idle), a lock alone goes. */
static void lock_store(RedisModuleCtx *ctx, lock_target *t, RedisModuleString *keyname, const rl_lock *l,
                       int64_t now_us) {
    int alive = rl_lock_alive(l, now_us);
    int64_t lock_expire = alive ? rl_clock_expire_at_ms(now_us, rl_lock_end_us(l) - now_us) : 0;
    if (t->is_log) {
        log_lock_write(ctx, t, keyname, l, alive, lock_expire);
        return;
    }
    const rl_limiter *lim = t->lim;
    if (lim && lim->steps == &rl_lease_steps) { /* the leases keep the record; their store sets the expiry */
        rl_lease_value *val = t->stored;
        val->lock = alive ? *l : (rl_lock){0, 0, 0};
        rl_lease_store(ctx, t->key, keyname, val, now_us);
        return;
    }
    int64_t state_expire_ms = t->rec.state_expire_ms;
    if (!lim || (alive && state_expire_ms == 0)) { /* no state to keep */
        if (alive) rl_lock_only_put(ctx, t->key, keyname, l, lock_expire);
        else delete_key(ctx, t->key, keyname);
        return;
    }
    if (!alive && state_expire_ms == 0) {
        delete_key(ctx, t->key, keyname);
        return;
    }
    int64_t expire = lock_expire > state_expire_ms ? lock_expire : state_expire_ms;
    rl_cell cell;
    unsigned n = rl_value_read(lim, t->stored, &cell);
    rl_lock_rec rec = {*l, state_expire_ms};
    if (alive) rl_cell_put_locked(t->key, lim, t->stored, n, &cell, n, &rec);
    else rl_cell_put(t->key, lim, t->stored, n, &cell, n);
    RedisModule_SetAbsExpire(t->key, expire);
    if (alive) rl_replicate_cell_locked(ctx, keyname, lim, &cell, n, &rec, expire);
    else rl_replicate_cell(ctx, keyname, lim, &cell, n, expire);
}

/* A lock (or its end) written into its key, which then carries the LFU hint (rl_module.h, rl_lfu_keep). */
static void lock_write(RedisModuleCtx *ctx, lock_target *t, RedisModuleString *keyname, const rl_lock *l,
                       int64_t now_us) {
    lock_store(ctx, t, keyname, l, now_us);
    rl_lfu_keep(t->key);
}

static void touched(RedisModuleCtx *ctx, RedisModuleString *keyname, const char *event) {
    RedisModule_SignalModifiedKey(ctx, keyname);
    RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_MODULE, event, keyname);
}

void rl_lock_start(RedisModuleCtx *ctx, const rl_pending *p, const rl_lock *l, int64_t now_us) {
    RedisModuleString *keyname = p->keyname;
    lock_target t;
    if (target_open(ctx, keyname, REDISMODULE_READ | REDISMODULE_WRITE, &t) != NULL) return; /* prepared a moment ago */
    lock_write(ctx, &t, keyname, l, now_us);
    target_close(ctx, &t);
    touched(ctx, keyname, "rl.lockout");
}

/* RL.BLOCK key ms */
int rl_block_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 3) return RedisModule_WrongArity(ctx);
    size_t len;
    const char *s = RedisModule_StringPtrLen(argv[2], &len);
    int64_t ms;
    char err[RL_ERR_LEN];
    if (rl_parse_int64(s, len, &ms) != 0 || ms < 1 || ms > RL_MAX_PERIOD_MS) {
        rl_range_error(err, "ms", 1, RL_MAX_PERIOD_MS);
        return RedisModule_ReplyWithError(ctx, err);
    }
    lock_target t;
    const char *failed = target_open(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, &t);
    if (failed) return RedisModule_ReplyWithError(ctx, failed);
    int64_t now_us = rl_clock_now_us();
    rl_lock l = t.rec.lock;
    rl_lock_block(&l, now_us, ms);
    lock_write(ctx, &t, argv[1], &l, now_us);
    target_close(ctx, &t);
    touched(ctx, argv[1], "rl.block");
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

const char *rl_unblock(RedisModuleCtx *ctx, RedisModuleString *keyname, int *held) {
    lock_target t;
    const char *failed = target_open(ctx, keyname, REDISMODULE_READ | REDISMODULE_WRITE, &t);
    if (failed) return failed;
    int64_t now_us = rl_clock_now_us();
    *held = t.has_rec && rl_lock_holds(&t.rec.lock, now_us);
    if (t.has_rec) {
        rl_lock none = {0, 0, 0};
        lock_write(ctx, &t, keyname, &none, now_us);
    }
    target_close(ctx, &t);
    if (t.has_rec) touched(ctx, keyname, "rl.unblock");
    return NULL;
}

/* RL.LOCKINFO key: the ms left on the lock (0 when none holds) and the strikes that count now. */
int rl_lockinfo_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    lock_target t;
    const char *failed = target_open(ctx, argv[1], REDISMODULE_READ, &t);
    if (failed) return RedisModule_ReplyWithError(ctx, failed);
    target_close(ctx, &t);
    int64_t now_us = rl_clock_now_us();
    int64_t left_ms = t.has_rec && rl_lock_holds(&t.rec.lock, now_us) ? rl_us_to_ms_ceil(t.rec.lock.until_us - now_us) : 0;
    int64_t strikes = t.has_rec ? rl_lock_strikes(&t.rec.lock, now_us) : 0;
    /* As every reply of the module: the numbers in RESP2, a map of them in RESP3. */
    int resp3 = (RedisModule_GetContextFlags(ctx) & REDISMODULE_CTX_FLAGS_RESP3) != 0;
    if (resp3) RedisModule_ReplyWithMap(ctx, 2);
    else RedisModule_ReplyWithArray(ctx, 2);
    if (resp3) RedisModule_ReplyWithSimpleString(ctx, "lock_ms");
    RedisModule_ReplyWithLongLong(ctx, left_ms);
    if (resp3) RedisModule_ReplyWithSimpleString(ctx, "strikes");
    return RedisModule_ReplyWithLongLong(ctx, strikes);
}
