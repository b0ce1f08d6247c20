/* lease_type.c -- the Redis data type of a concurrency limiter's key ("rl-leases"), and its replicated state.
 *
 * A value is the key's leases (algorithms/concurrency.h), sorted by end, soonest first, 48 bytes each (an id
 * longer than RL_LEASE_ID_INLINE in an allocation of its own, which dropping, freeing and copying see to):
 * an array that grows by doubling and shrinks when it is three-quarters empty, so a key takes memory for
 * the leases it holds, at most `limit` of them after any write (the expired ones at the front go with the
 * next write). Its callbacks make RDB, DUMP/RESTORE, COPY, MOVE, DEBUG RELOAD, DEBUG DIGEST-VALUE and MEMORY
 * USAGE work; RDB load checks the leases (a crafted payload must not make the limiter misbehave).
 *
 * Effects, not commands, are replicated, as for every limiter: after a write the primary sends the key's
 * whole state, RL.SETSTATE key <blob>, or DEL when no lease is left. The blob is the limiter's tag, the
 * lease count (4 bytes), each lease (end and acquired µs, 8 bytes each; units, 4; the id's length, 1; the
 * id), the key's lock record when it has one (RL.BLOCK: the lock's end, the strikes' forgiveness and the
 * strikes, 8 bytes each), then the key's absolute expiry in ms (8; 0 in an AOF rewrite, which Redis follows
 * with its own PEXPIREAT), every number little-endian. A replica or an AOF replay then holds exactly the
 * primary's leases, ending at the same absolute instants, whatever its own clock says: a replica promoted at
 * a failover keeps every lease. Sending the whole state costs O(leases) per write; the limit's bound
 * (RL_LEASE_MAX_LIMIT) keeps it under a MB, and a usual key (a few leases) sends a few hundred bytes. */
#include <string.h>

#include "clock.h"
#include "rl_module.h"

/* Version 2 adds the key's lock record after the leases (a flag, then its three numbers when set). */
#define LEASE_ENCODING_VERSION 2
/* A blob's fixed parts: tag, count, expiry; and each lease's, before its id; and the lock record (its three
 * numbers, 8 bytes each), which follows the leases when the key has one. */
#define BLOB_HEAD (1 + 4)
#define BLOB_TAIL 8
#define BLOB_LEASE 21
#define BLOB_LOCK 24

/* --- values ------------------------------------------------------------------------------------------- */

static rl_lease_value *value_new(void) { return RedisModule_Calloc(1, sizeof(rl_lease_value)); }

/* Give a lease its id (1 to RL_LEASE_ID_MAX bytes), a copy: in the lease, or in an allocation of its own when
 * longer than RL_LEASE_ID_INLINE. */
static void id_set(rl_lease *l, const char *id, size_t len) {
    l->id_len = (uint8_t)len;
    if (len <= RL_LEASE_ID_INLINE) {
        memcpy(l->id.bytes, id, len);
    } else {
        l->id.heap = RedisModule_Alloc(len);
        memcpy(l->id.heap, id, len);
    }
}

static void id_free(rl_lease *l) {
    if (l->id_len > RL_LEASE_ID_INLINE) RedisModule_Free(l->id.heap);
}

static void value_free(void *value) {
    rl_lease_value *val = value;
    for (int i = 0; i < val->n; i++) id_free(&val->v[i]);
    RedisModule_Free(val->v);
    RedisModule_Free(val);
}

/* Room for n leases: doubled when full, halved when three-quarters empty. */
static void value_fit(rl_lease_value *val, int n) {
    int cap = val->cap;
    if (n > cap) cap = cap ? 2 * cap : 1;
    while (cap > 4 && n < cap / 4) cap /= 2;
    if (cap < n) cap = n;
    if (cap == val->cap) return;
    val->v = RedisModule_Realloc(val->v, (size_t)cap * sizeof *val->v);
    val->cap = cap;
}

/* Take out leases [at, at + count), their ids freed. */
static void drop(rl_lease_value *val, int at, int count) {
    if (count == 0) return;
    for (int i = at; i < at + count; i++) id_free(&val->v[i]);
    memmove(&val->v[at], &val->v[at + count], (size_t)(val->n - at - count) * sizeof *val->v);
    val->n -= count;
}

/* Room for a lease ending at end_us at its place by end: its slot, the ones after it moved up. */
static rl_lease *make_room(rl_lease_value *val, int64_t end_us) {
    if (val->n == val->cap) value_fit(val, val->n + 1);
    int at = rl_lease_insert_at(val->v, val->n, end_us);
    if (at < val->n) memmove(&val->v[at + 1], &val->v[at], (size_t)(val->n - at) * sizeof *val->v);
    val->n++;
    return &val->v[at];
}

rl_lease_value *rl_lease_apply(rl_lease_value *value, const rl_lease_plan *plan, int64_t now_us) {
    rl_lease_value *val = value ? value : value_new();
    drop(val, 0, plan->expired);
    if (plan->action == RL_LEASE_RENEW) {
        int at = plan->found - plan->expired;
        rl_lease renewed = val->v[at]; /* moved to its new place by end, its id with it */
        renewed.end_us = plan->end_us;
        /* A clock that went back since the acquisition would leave it acquired after its new end, which no lease
         * can be (an RDB load refuses it): it counts as acquired now. */
        if (renewed.acquired_us > now_us) renewed.acquired_us = now_us;
        memmove(&val->v[at], &val->v[at + 1], (size_t)(val->n - at - 1) * sizeof *val->v);
        val->n--;
        *make_room(val, renewed.end_us) = renewed;
    } else if (plan->action == RL_LEASE_ADD) {
        rl_lease *lease = make_room(val, plan->end_us); /* written in place: the usual case, at the end */
        lease->end_us = plan->end_us;
        lease->acquired_us = now_us;
        lease->units = (int32_t)plan->units;
        id_set(lease, plan->id, plan->id_len);
    }
    if (plan->expired) value_fit(val, val->n); /* (a renewal or an addition never leaves it emptier) */
    return val;
}

void rl_lease_remove(rl_lease_value *value, int i, int64_t now_us) {
    int expired = rl_lease_expired(value->v, value->n, now_us); /* i is unexpired: expired <= i */
    drop(value, i, 1);
    drop(value, 0, expired);
    value_fit(value, value->n);
}

/* --- the replicated state ------------------------------------------------------------------------------ */

/* value's blob with expire_at_ms, in an allocation of *len bytes the caller frees. */
static int has_lock(const rl_lease_value *val) { return val->lock.until_us != 0 || val->lock.strikes != 0; }

size_t rl_leases_size(const rl_lease_value *val) {
    size_t size = 4;
    for (int i = 0; i < val->n; i++) size += BLOB_LEASE + val->v[i].id_len;
    return size;
}

unsigned char *rl_leases_put(unsigned char *p, const rl_lease_value *val) {
    rl_put_le(p, (uint64_t)val->n, 4), p += 4;
    for (int i = 0; i < val->n; i++) {
        const rl_lease *l = &val->v[i];
        rl_put_le(p, (uint64_t)l->end_us, 8), p += 8;
        rl_put_le(p, (uint64_t)l->acquired_us, 8), p += 8;
        rl_put_le(p, (uint64_t)l->units, 4), p += 4;
        *p++ = l->id_len;
        memcpy(p, rl_lease_id(l), l->id_len), p += l->id_len;
    }
    return p;
}

rl_lease_value *rl_leases_get(const unsigned char **at, const unsigned char *end) {
    const unsigned char *p = *at;
    if (end - p < 4) return NULL;
    uint64_t n = rl_get_le(p, 4);
    if (n > RL_LEASE_MAX_LIMIT) return NULL;
    p += 4;
    rl_lease_value *val = value_new();
    value_fit(val, (int)n);
    for (uint64_t i = 0; i < n; i++) {
        rl_lease *l = &val->v[i];
        if (end - p < BLOB_LEASE || end - p < BLOB_LEASE + p[20]) break;
        l->end_us = (int64_t)rl_get_le(p, 8);
        l->acquired_us = (int64_t)rl_get_le(p + 8, 8);
        l->units = (int32_t)rl_get_le(p + 16, 4);
        size_t id_len = p[20];
        id_set(l, (const char *)p + BLOB_LEASE, id_len > RL_LEASE_ID_MAX ? 0 : id_len); /* 0: refused below */
        p += BLOB_LEASE + id_len;
        val->n++;
    }
    if ((uint64_t)val->n != n || !rl_lease_valid(val->v, val->n)) {
        value_free(val);
        return NULL;
    }
    *at = p;
    return val;
}

static unsigned char *blob_of(const rl_limiter *lim, const rl_lease_value *val, int64_t expire_at_ms, size_t *len) {
    size_t size = 1 + rl_leases_size(val) + BLOB_TAIL + (has_lock(val) ? BLOB_LOCK : 0);
    unsigned char *blob = RedisModule_Alloc(size), *p = blob;
    *p++ = lim->tag;
    p = rl_leases_put(p, val);
    if (has_lock(val)) {
        rl_put_le(p, (uint64_t)val->lock.until_us, 8), p += 8;
        rl_put_le(p, (uint64_t)val->lock.forgive_us, 8), p += 8;
        rl_put_le(p, (uint64_t)val->lock.strikes, 8), p += 8;
    }
    rl_put_le(p, (uint64_t)expire_at_ms, 8);
    *len = size;
    return blob;
}

/* The value a blob holds (NULL when it is not a valid one), and its expiry. */
static rl_lease_value *value_of_blob(const unsigned char *p, size_t len, int64_t *expire_at_ms) {
    if (len < BLOB_HEAD + BLOB_TAIL) return NULL;
    const unsigned char *end = p + len - BLOB_TAIL;
    if (rl_get_le(p + 1, 4) < 1) return NULL; /* a key without leases is no key: DEL is its effect */
    p += 1;
    rl_lease_value *val = rl_leases_get(&p, end);
    if (!val) return NULL;
    if (end - p == BLOB_LOCK) {
        val->lock.until_us = (int64_t)rl_get_le(p, 8);
        val->lock.forgive_us = (int64_t)rl_get_le(p + 8, 8);
        val->lock.strikes = (int64_t)rl_get_le(p + 16, 8);
        p += BLOB_LOCK;
        if (!rl_lock_valid(&val->lock) || !has_lock(val)) p = NULL; /* refused below */
    }
    if (p != end) {
        value_free(val);
        return NULL;
    }
    *expire_at_ms = (int64_t)rl_get_le(end, 8);
    if (*expire_at_ms < 0) { /* 0: none (an AOF rewrite, whose PEXPIREAT follows) */
        value_free(val);
        return NULL;
    }
    return val;
}

void rl_lease_store(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *keyname, rl_lease_value *value,
                    int64_t now_us) {
    int locked = rl_lock_alive(&value->lock, now_us);
    if (!locked) value->lock = (rl_lock){0, 0, 0};
    int64_t lock_expire_ms = locked ? rl_clock_expire_at_ms(now_us, rl_lock_end_us(&value->lock) - now_us) : 0;
    if (value->n == 0) {
        if (locked) {
            rl_lock_only_put(ctx, key, keyname, &value->lock, lock_expire_ms); /* frees value, the key's */
            return;
        }
        RedisModule_DeleteKey(key);
        if (rl_effects_on(ctx)) RedisModule_Replicate(ctx, "DEL", "s", keyname);
        return;
    }
    /* Every lease left has not ended (a write drops the ended ones): the key lives until the last ends, or its
     * lock record does. */
    int64_t expire_at_ms = rl_clock_expire_at_ms(now_us, value->v[value->n - 1].end_us - now_us);
    if (lock_expire_ms > expire_at_ms) expire_at_ms = lock_expire_ms;
    RedisModule_SetAbsExpire(key, expire_at_ms); /* (looking first would cost as much: the same lookup) */
    if (!rl_effects_on(ctx)) return;
    const rl_limiter *lim = rl_cell_limiter_of(key);
    size_t len;
    unsigned char *blob = blob_of(lim, value, expire_at_ms, &len);
    RedisModule_Replicate(ctx, "RL.SETSTATE", "sb", keyname, (const char *)blob, len);
    RedisModule_Free(blob);
}

const rl_limiter *rl_lease_limiter_tagged(unsigned char tag) {
    for (int i = 0; i < RL_NLIMITERS; i++)
        if (rl_limiters[i].steps == &rl_lease_steps && rl_limiters[i].tag == tag) return &rl_limiters[i];
    return NULL;
}

int rl_lease_setstate(RedisModuleCtx *ctx, const rl_limiter *lim, RedisModuleString **argv) {
    size_t len;
    const unsigned char *p = (const unsigned char *)RedisModule_StringPtrLen(argv[2], &len);
    int64_t expire_at_ms;
    rl_lease_value *val = value_of_blob(p, len, &expire_at_ms);
    if (!val) return RedisModule_ReplyWithError(ctx, "ERR state: not a valid state of this kind");
    RedisModuleKey *key = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
    const rl_limiter *current = rl_cell_limiter_of(key);
    rl_lock alone; /* a lock alone (lock_type.c) is replaced: the primary makes leases over one after its lock */
    if (current == RL_CELL_OTHER && rl_lock_only_read(key, &alone)) current = NULL;
    if (current != NULL && current != lim) {
        RedisModule_CloseKey(key);
        value_free(val);
        return RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
    }
    if (current) {
        void *old = NULL;
        RedisModule_ModuleTypeReplaceValue(key, lim->type, val, &old);
        value_free(old);
    } else {
        RedisModule_ModuleTypeSetValue(key, lim->type, val);
    }
    if (expire_at_ms > 0) RedisModule_SetAbsExpire(key, expire_at_ms);
    else RedisModule_SetExpire(key, REDISMODULE_NO_EXPIRE);
    RedisModule_CloseKey(key);
    RedisModule_SignalModifiedKey(ctx, argv[1]);
    RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_MODULE, "rl.setstate", argv[1]);
    RedisModule_ReplicateVerbatim(ctx);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

/* --- the callbacks ------------------------------------------------------------------------------------- */

static void *lease_rdb_load(RedisModuleIO *io, int encver) {
    if (encver < 1 || encver > LEASE_ENCODING_VERSION) return NULL;
    uint64_t n = RedisModule_LoadUnsigned(io);
    if (RedisModule_IsIOError(io) || n > RL_LEASE_MAX_LIMIT) return NULL;
    rl_lease_value *val = value_new();
    value_fit(val, (int)n);
    for (uint64_t i = 0; i < n && !RedisModule_IsIOError(io); i++) {
        rl_lease *l = &val->v[i];
        l->end_us = RedisModule_LoadSigned(io);
        l->acquired_us = RedisModule_LoadSigned(io);
        uint64_t units = RedisModule_LoadUnsigned(io);
        size_t id_len = 0;
        char *id = RedisModule_LoadStringBuffer(io, &id_len);
        if (RedisModule_IsIOError(io)) break;
        l->units = units > RL_LEASE_MAX_LIMIT ? 0 : (int32_t)units; /* 0: refused below */
        id_set(l, id, id_len > RL_LEASE_ID_MAX ? 0 : id_len);
        RedisModule_Free(id);
        val->n++;
    }
    uint64_t locked = encver >= 2 && !RedisModule_IsIOError(io) ? RedisModule_LoadUnsigned(io) : 0;
    if (locked) {
        val->lock.until_us = RedisModule_LoadSigned(io);
        val->lock.forgive_us = RedisModule_LoadSigned(io);
        val->lock.strikes = RedisModule_LoadSigned(io);
    }
    if (RedisModule_IsIOError(io) || (uint64_t)val->n != n || !rl_lease_valid(val->v, val->n) || locked > 1 ||
        (locked && (!rl_lock_valid(&val->lock) || !has_lock(val)))) {
        value_free(val);
        return NULL;
    }
    return val;
}

static void lease_rdb_save(RedisModuleIO *io, void *value) {
    const rl_lease_value *val = value;
    RedisModule_SaveUnsigned(io, (uint64_t)val->n);
    for (int i = 0; i < val->n; i++) {
        const rl_lease *l = &val->v[i];
        RedisModule_SaveSigned(io, l->end_us);
        RedisModule_SaveSigned(io, l->acquired_us);
        RedisModule_SaveUnsigned(io, (uint64_t)l->units);
        RedisModule_SaveStringBuffer(io, rl_lease_id(l), l->id_len);
    }
    RedisModule_SaveUnsigned(io, (uint64_t)has_lock(val));
    if (has_lock(val)) {
        RedisModule_SaveSigned(io, val->lock.until_us);
        RedisModule_SaveSigned(io, val->lock.forgive_us);
        RedisModule_SaveSigned(io, val->lock.strikes);
    }
}

static void lease_aof_rewrite(RedisModuleIO *aof, RedisModuleString *keyname, void *value) {
    const rl_lease_value *val = value;
    const rl_limiter *lim = NULL;
    for (int i = 0; i < RL_NLIMITERS && !lim; i++)
        if (rl_limiters[i].steps == &rl_lease_steps) lim = &rl_limiters[i];
    size_t len;
    unsigned char *blob = blob_of(lim, val, 0, &len); /* Redis writes the key's PEXPIREAT after it */
    RedisModule_EmitAOF(aof, "RL.SETSTATE", "sb", keyname, (const char *)blob, len);
    RedisModule_Free(blob);
}

static size_t lease_mem_usage(const void *value) {
    const rl_lease_value *val = value;
    size_t size = sizeof *val + (size_t)val->cap * sizeof *val->v;
    for (int i = 0; i < val->n; i++) size += val->v[i].id_len > RL_LEASE_ID_INLINE ? val->v[i].id_len : 0;
    return size;
}

static void lease_digest(RedisModuleDigest *md, void *value) {
    const rl_lease_value *val = value;
    for (int i = 0; i < val->n; i++) {
        const rl_lease *l = &val->v[i];
        RedisModule_DigestAddLongLong(md, l->end_us);
        RedisModule_DigestAddLongLong(md, l->acquired_us);
        RedisModule_DigestAddLongLong(md, l->units);
        RedisModule_DigestAddStringBuffer(md, rl_lease_id(l), l->id_len);
    }
    if (has_lock(val)) {
        RedisModule_DigestAddLongLong(md, val->lock.until_us);
        RedisModule_DigestAddLongLong(md, val->lock.forgive_us);
        RedisModule_DigestAddLongLong(md, val->lock.strikes);
    }
    RedisModule_DigestEndSequence(md);
}

void rl_lease_value_free(rl_lease_value *val) { value_free(val); }

static void *lease_copy(RedisModuleString *fromkey, RedisModuleString *tokey, const void *value) {
    (void)fromkey, (void)tokey;
    return rl_lease_value_copy(value);
}

rl_lease_value *rl_lease_value_copy(const rl_lease_value *val) {
    rl_lease_value *copy = value_new();
    value_fit(copy, val->n);
    for (int i = 0; i < val->n; i++) {
        copy->v[i] = val->v[i];
        id_set(&copy->v[i], rl_lease_id(&val->v[i]), val->v[i].id_len); /* its own copy of a long id */
    }
    copy->n = val->n;
    copy->lock = val->lock;
    return copy;
}

static RedisModuleTypeMethods lease_methods = {.version = REDISMODULE_TYPE_METHOD_VERSION,
                                               .rdb_load = lease_rdb_load,
                                               .rdb_save = lease_rdb_save,
                                               .aof_rewrite = lease_aof_rewrite,
                                               .mem_usage = lease_mem_usage,
                                               .digest = lease_digest,
                                               .free = value_free,
                                               .copy = lease_copy,
                                               .unlink = rl_evict_unlink};

int rl_lease_types_register(RedisModuleCtx *ctx) {
    for (int i = 0; i < RL_NLIMITERS; i++) {
        rl_limiter *lim = &rl_limiters[i];
        if (lim->steps != &rl_lease_steps) continue;
        lim->type = RedisModule_CreateDataType(ctx, lim->type_name, LEASE_ENCODING_VERSION, &lease_methods);
        if (!lim->type) return REDISMODULE_ERR;
    }
    return REDISMODULE_OK;
}
