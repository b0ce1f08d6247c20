/* lock_type.c -- the data type of a key that holds a lock (algorithms/lockout.h) and no limiter state,
 * "rl-locked", and its replicated state. lock.c has the commands on any key's lock.
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

#include "rl_module.h"

#define LOCK_TAG_BYTE 'K'
#define LOCK_BLOB_LEN (1 + 8 * 3 + 8)

static RedisModuleType *lock_type;

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
                                      .free = locked_free, .copy = locked_copy,
                                      .unlink = rl_evict_unlink};
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

