/* lock.c -- the keys' locks (algorithms/lockout.h): the data type of a key that holds a lock and no limiter
 * state, RL.BLOCK, RL.UNBLOCK and RL.LOCKINFO, and the write of a lock alone (RL.ALL's denied clauses).
 *
 * A lock lives in its key's value: beside a cell limiter's state (cell_type.c), or, when the key has no state
 * (RL.BLOCK of a key that does not exist, a lock that outlives an idle state), as a value of its own type,
 * rl-locked, which every cell limiter's command reads as "locked, and new after the lock". Whatever the
 * value, the key's expiry is the later of the state's idle instant and the end of the lock record, so the
 * key lives exactly as long as either says something. Every write is replicated as its effect, RL.SETSTATE
 * key <state> (a cell state with its record, or a lock alone: tag 'K', the three numbers and the expiry), or
 * DEL. A concurrency limit's key keeps its record in its leases' value (lease_type.c), a sliding log's in a
 * member of its set at score -inf (store_log_name.c), whose writes are the log's usual sorted-set effects. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "clock.h"
#include "store_log_parts.h"

#define LOCK_TAG_BYTE 'K'
#define LOCK_BLOB_LEN (1 + 8 * 3 + 8)

static RedisModuleType *lock_type;

int rl_lock_rec_valid(const rl_lock_rec *rec) {
    return rl_lock_valid(&rec->lock) && rec->state_expire_ms >= 0 && rec->state_expire_ms <= RL_MAX_TIME_MS * 4;
}

/* --- the rl-locked type ----------------------------------------------------------------------------- */

static rl_lock *lock_new(const rl_lock *l) {
    rl_lock *v = RedisModule_Alloc(sizeof *v);
    *v = *l;
    return v;
}

static void *locked_rdb_load(RedisModuleIO *io, int encver) {
    if (encver != 1) return NULL;
    rl_lock l;
    l.until_us = RedisModule_LoadSigned(io);
    l.forgive_us = RedisModule_LoadSigned(io);
    l.strikes = RedisModule_LoadSigned(io);
    if (RedisModule_IsIOError(io) || !rl_lock_valid(&l)) return NULL;
    return lock_new(&l);
}

static void locked_rdb_save(RedisModuleIO *io, void *value) {
    const rl_lock *l = value;
    RedisModule_SaveSigned(io, l->until_us);
    RedisModule_SaveSigned(io, l->forgive_us);
    RedisModule_SaveSigned(io, l->strikes);
}

static void locked_aof_rewrite(RedisModuleIO *aof, RedisModuleString *key, void *value) {
    const rl_lock *l = value;
    RedisModule_EmitAOF(aof, "RL.SETSTATE", "scllll", key, "LOCK", (long long)l->until_us, (long long)l->forgive_us,
                        (long long)l->strikes);
}

static size_t locked_mem_usage(const void *value) {
    (void)value;
    return sizeof(rl_lock);
}

static void locked_digest(RedisModuleDigest *md, void *value) {
    const rl_lock *l = value;
    RedisModule_DigestAddLongLong(md, l->until_us);
    RedisModule_DigestAddLongLong(md, l->forgive_us);
    RedisModule_DigestAddLongLong(md, l->strikes);
    RedisModule_DigestEndSequence(md);
}

static void *locked_copy(RedisModuleString *fromkey, RedisModuleString *tokey, const void *value) {
    (void)fromkey;
    (void)tokey;
    return lock_new(value);
}

static void locked_free(void *value) { RedisModule_Free(value); }

int rl_lock_type_register(RedisModuleCtx *ctx) {
    RedisModuleTypeMethods methods = {.version = REDISMODULE_TYPE_METHOD_VERSION, .rdb_load = locked_rdb_load,
                                      .rdb_save = locked_rdb_save, .aof_rewrite = locked_aof_rewrite,
                                      .mem_usage = locked_mem_usage, .digest = locked_digest,
                                      .free = locked_free, .copy = locked_copy};
    lock_type = RedisModule_CreateDataType(ctx, "rl-locked", 1, &methods);
    return lock_type ? REDISMODULE_OK : REDISMODULE_ERR;
}

int rl_lock_only_read(RedisModuleKey *key, rl_lock *l) {
    if (RedisModule_KeyType(key) != REDISMODULE_KEYTYPE_MODULE || RedisModule_ModuleTypeGetType(key) != lock_type)
        return 0;
    *l = *(const rl_lock *)RedisModule_ModuleTypeGetValue(key);
    return 1;
}

/* Store a lock alone in an open key (whatever it held), with its expiry, and replicate it. */
void rl_lock_only_put(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *keyname, const rl_lock *l,
                      int64_t expire_at_ms) {
    RedisModule_ModuleTypeSetValue(key, lock_type, lock_new(l));
    RedisModule_SetAbsExpire(key, expire_at_ms);
    if (!rl_effects_on(ctx)) return;
    unsigned char blob[LOCK_BLOB_LEN];
    blob[0] = LOCK_TAG_BYTE;
    rl_put_le(blob + 1, (uint64_t)l->until_us, 8);
    rl_put_le(blob + 9, (uint64_t)l->forgive_us, 8);
    rl_put_le(blob + 17, (uint64_t)l->strikes, 8);
    rl_put_le(blob + 25, (uint64_t)expire_at_ms, 8);
    RedisModule_Replicate(ctx, "RL.SETSTATE", "sb", keyname, (const char *)blob, sizeof blob);
}

/* RL.SETSTATE key <'K' blob> | RL.SETSTATE key LOCK until_us forgive_us strikes [PXAT unix_ms]: a lock alone.
 * Returns 0 when argv is not a lock's state (the caller goes on), else 1 having replied. */
int rl_lock_setstate(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    rl_lock l;
    int64_t expire_at_ms = -1;
    size_t len;
    const char *a2 = RedisModule_StringPtrLen(argv[2], &len);
    if (argc == 3) {
        if (len == 0 || (unsigned char)a2[0] != LOCK_TAG_BYTE) return 0;
        if (len != LOCK_BLOB_LEN) return RedisModule_ReplyWithError(ctx, "ERR state: a lock's state is 33 bytes"), 1;
        const unsigned char *p = (const unsigned char *)a2;
        l.until_us = (int64_t)rl_get_le(p + 1, 8);
        l.forgive_us = (int64_t)rl_get_le(p + 9, 8);
        l.strikes = (int64_t)rl_get_le(p + 17, 8);
        expire_at_ms = (int64_t)rl_get_le(p + 25, 8);
        if (expire_at_ms < 1) return RedisModule_ReplyWithError(ctx, "ERR state: no valid expiry"), 1;
    } else {
        if (len != 4 || strncasecmp(a2, "LOCK", 4) != 0) return 0;
        if (argc != 6 && argc != 8) return RedisModule_WrongArity(ctx), 1;
        int64_t v[3];
        for (int i = 0; i < 3; i++) {
            const char *s = RedisModule_StringPtrLen(argv[3 + i], &len);
            if (rl_parse_int64(s, len, &v[i]) != 0) {
                static const char *const names[3] = {"until_us", "forgive_us", "strikes"};
                char err[RL_ERR_LEN];
                snprintf(err, sizeof err, "ERR %s: must be an integer", names[i]);
                return RedisModule_ReplyWithError(ctx, err), 1;
            }
        }
        l = (rl_lock){v[0], v[1], v[2]};
        if (argc == 8) {
            const char *s = RedisModule_StringPtrLen(argv[6], &len);
            if (len != 4 || strncasecmp(s, "PXAT", 4) != 0)
                return RedisModule_ReplyWithError(ctx, "ERR PXAT: expected PXAT unix_ms after strikes"), 1;
            s = RedisModule_StringPtrLen(argv[7], &len);
            if (rl_parse_int64(s, len, &expire_at_ms) != 0 || expire_at_ms < 1)
                return RedisModule_ReplyWithError(ctx, "ERR PXAT: must be a positive integer"), 1;
        }
    }
    if (!rl_lock_valid(&l)) return RedisModule_ReplyWithError(ctx, "ERR state: not a valid lock"), 1;
    RedisModuleKey *key = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
    int type = RedisModule_KeyType(key);
    rl_lock old;
    /* A cell or lease limiter's key too: the primary replaces its state by a lock alone when the state goes idle
     * (or its last lease ends) under a lock. */
    const rl_limiter *lim = type == REDISMODULE_KEYTYPE_EMPTY || rl_lock_only_read(key, &old) ? NULL : rl_cell_limiter_of(key);
    if (lim == RL_CELL_OTHER) {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE), 1;
    }
    RedisModule_ModuleTypeSetValue(key, lock_type, lock_new(&l));
    if (expire_at_ms > 0) RedisModule_SetAbsExpire(key, expire_at_ms);
    RedisModule_CloseKey(key);
    RedisModule_SignalModifiedKey(ctx, argv[1]);
    RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_MODULE, "rl.setstate", argv[1]);
    RedisModule_ReplicateVerbatim(ctx);
    RedisModule_ReplyWithSimpleString(ctx, "OK");
    return 1;
}

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
static void lock_write(RedisModuleCtx *ctx, lock_target *t, RedisModuleString *keyname, const rl_lock *l,
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

static void touched(RedisModuleCtx *ctx, RedisModuleString *keyname, const char *event) {
    RedisModule_SignalModifiedKey(ctx, keyname);
    RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_MODULE, event, keyname);
}

void rl_lock_start(RedisModuleCtx *ctx, RedisModuleString *keyname, const rl_lock *l, int64_t now_us) {
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

/* RL.UNBLOCK key: 1 when a lock held (it ends, and the strikes go), else 0 (the strikes go all the same). */
int rl_unblock_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    lock_target t;
    const char *failed = target_open(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, &t);
    if (failed) return RedisModule_ReplyWithError(ctx, failed);
    int64_t now_us = rl_clock_now_us();
    int held = t.has_rec && rl_lock_holds(&t.rec.lock, now_us);
    if (t.has_rec) {
        rl_lock none = {0, 0, 0};
        lock_write(ctx, &t, argv[1], &none, now_us);
    }
    target_close(ctx, &t);
    if (t.has_rec) touched(ctx, argv[1], "rl.unblock");
    if (held) rl_wait_serve_keys(ctx, argv + 1, 1); /* the clients waiting for the lock's end */
    return RedisModule_ReplyWithLongLong(ctx, held);
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
