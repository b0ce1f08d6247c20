/* lock.c -- the keys' locks (algorithms/lockout.h): the data type of a key that holds a lock and no limiter
 * state, RL.BLOCK, RL.UNBLOCK and RL.LOCKINFO, and the write of a lock alone (RL.ALL's denied clauses).
 *
 * A lock lives in its key's value: beside a cell limiter's state (cell_type.c), or, when the key has no state
 * (RL.BLOCK of a key that does not exist, a lock that outlives an idle state), as a value of its own type,
 * rl-locked, which every cell limiter's command reads as "locked, and new after the lock". Whatever the
 * value, the key's expiry is the later of the state's idle instant and the end of the lock record, so the
 * key lives exactly as long as either says something. Every write is replicated as its effect, RL.SETSTATE
 * key <state> (a cell state with its record, or a lock alone: tag 'K', the three numbers and the expiry), or
 * DEL. The sliding log and concurrency leases keep no lock yet: their keys answer an error here. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "clock.h"
#include "rl_module.h"

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

static void put_le64(unsigned char *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

/* Store a lock alone in an open key (whatever it held), with its expiry, and replicate it. */
void rl_lock_only_put(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *keyname, const rl_lock *l,
                      int64_t expire_at_ms) {
    RedisModule_ModuleTypeSetValue(key, lock_type, lock_new(l));
    RedisModule_SetAbsExpire(key, expire_at_ms);
    if (!rl_effects_on(ctx)) return;
    unsigned char blob[LOCK_BLOB_LEN];
    blob[0] = LOCK_TAG_BYTE;
    put_le64(blob + 1, (uint64_t)l->until_us);
    put_le64(blob + 9, (uint64_t)l->forgive_us);
    put_le64(blob + 17, (uint64_t)l->strikes);
    put_le64(blob + 25, (uint64_t)expire_at_ms);
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
        l.until_us = (int64_t)get_le64(p + 1);
        l.forgive_us = (int64_t)get_le64(p + 9);
        l.strikes = (int64_t)get_le64(p + 17);
        expire_at_ms = (int64_t)get_le64(p + 25);
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
    /* A cell limiter's key too: the primary replaces its state by a lock alone when the state goes idle. */
    const rl_limiter *lim = type == REDISMODULE_KEYTYPE_EMPTY || rl_lock_only_read(key, &old) ? NULL : rl_cell_limiter_of(key);
    if (lim == RL_CELL_OTHER || (lim && lim->steps != &rl_cell_steps)) {
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
    const rl_limiter *lim; /* a cell limiter's key, else NULL (empty, or a lock alone) */
    void *stored;          /* its value */
    rl_lock_rec rec;       /* its record (zeros when none) */
    int has_rec;
} lock_target;

/* Open keyname and read its lock. Returns NULL or the error (the key is then closed). */
static const char *target_open(RedisModuleCtx *ctx, RedisModuleString *keyname, int mode, lock_target *t) {
    memset(t, 0, sizeof *t);
    t->key = RedisModule_OpenKey(ctx, keyname, mode);
    if (RedisModule_KeyType(t->key) == REDISMODULE_KEYTYPE_EMPTY) return NULL;
    if (rl_lock_only_read(t->key, &t->rec.lock)) {
        t->has_rec = 1;
        return NULL;
    }
    const rl_limiter *lim = rl_cell_limiter_of(t->key);
    const char *err = NULL;
    if (lim == RL_CELL_OTHER)
        err = RedisModule_KeyType(t->key) == REDISMODULE_KEYTYPE_ZSET
                  ? "ERR key: a sliding log's key takes no lock (RL.SLIDINGLOG has no LOCKOUT yet)"
                  : REDISMODULE_ERRORMSG_WRONGTYPE;
    else if (lim->steps != &rl_cell_steps)
        err = "ERR key: a concurrency limit's key takes no lock (RL.ACQUIRE has no LOCKOUT)";
    if (err) {
        RedisModule_CloseKey(t->key);
        t->key = NULL;
        return err;
    }
    t->lim = lim;
    t->stored = RedisModule_ModuleTypeGetValue(t->key);
    if (rl_value_lock(t->stored, &t->rec)) {
        t->has_rec = 1;
    } else {
        int64_t expire = RedisModule_GetAbsExpire(t->key);
        t->rec.state_expire_ms = expire > 0 ? expire : 0;
    }
    return NULL;
}

/* Write lock l into the open key t (whatever it holds), or drop the record when l says nothing at now: a cell
 * key then keeps its state with the state's own expiry (or goes, if that state is idle), a lock alone goes. */
void rl_lock_write(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *keyname, const rl_limiter *lim,
                   void *stored, int64_t state_expire_ms, const rl_lock *l, int64_t now_us) {
    int alive = rl_lock_alive(l, now_us);
    int64_t lock_expire = alive ? rl_clock_expire_at_ms(now_us, rl_lock_end_us(l) - now_us) : 0;
    int64_t expire = lock_expire > state_expire_ms ? lock_expire : state_expire_ms;
    if (!lim || (alive && state_expire_ms == 0)) { /* no state to keep */
        if (alive) {
            rl_lock_only_put(ctx, key, keyname, l, lock_expire);
        } else {
            RedisModule_DeleteKey(key);
            if (rl_effects_on(ctx)) RedisModule_Replicate(ctx, "DEL", "s", keyname);
        }
        return;
    }
    if (!alive && state_expire_ms == 0) {
        RedisModule_DeleteKey(key);
        if (rl_effects_on(ctx)) RedisModule_Replicate(ctx, "DEL", "s", keyname);
        return;
    }
    rl_cell cell;
    unsigned n = rl_value_read(lim, stored, &cell);
    rl_lock_rec rec = {*l, state_expire_ms};
    rl_cell_put(key, lim, stored, n, &cell, n, alive ? &rec : NULL);
    RedisModule_SetAbsExpire(key, expire);
    rl_replicate_cell(ctx, keyname, lim, &cell, n, alive ? &rec : NULL, expire);
}

static void touched(RedisModuleCtx *ctx, RedisModuleString *keyname, const char *event) {
    RedisModule_SignalModifiedKey(ctx, keyname);
    RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_MODULE, event, keyname);
}

void rl_lock_start(RedisModuleCtx *ctx, RedisModuleString *keyname, const rl_lock *l, int64_t now_us) {
    lock_target t;
    if (target_open(ctx, keyname, REDISMODULE_READ | REDISMODULE_WRITE, &t) != NULL) return; /* prepared a moment ago */
    rl_lock_write(ctx, t.key, keyname, t.lim, t.stored, t.rec.state_expire_ms, l, now_us);
    RedisModule_CloseKey(t.key);
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
    rl_lock_write(ctx, t.key, argv[1], t.lim, t.stored, t.rec.state_expire_ms, &l, now_us);
    RedisModule_CloseKey(t.key);
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
        rl_lock_write(ctx, t.key, argv[1], t.lim, t.stored, t.rec.state_expire_ms, &none, now_us);
    }
    RedisModule_CloseKey(t.key);
    if (t.has_rec) touched(ctx, argv[1], "rl.unblock");
    return RedisModule_ReplyWithLongLong(ctx, held);
}

/* RL.LOCKINFO key: the ms left on the lock (0 when none holds) and the strikes that count now. */
int rl_lockinfo_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    lock_target t;
    const char *failed = target_open(ctx, argv[1], REDISMODULE_READ, &t);
    if (failed) return RedisModule_ReplyWithError(ctx, failed);
    RedisModule_CloseKey(t.key);
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
