/* bundle_type.c -- the data type of a key that RL.CHECK checks, "rl-checks", and its replicated state.
 *
 * A policy (policy.c) applies several limits to one key, so the key's value holds the states of all of
 * them: the policy's name (a key checked under one policy is refused by another), then one entry per limit
 * that has something to keep: the limit's name and kind (a limit is matched by both when the policy changes:
 * store_bundle.c), its cell state's words (0: none, the limit is new), its lock record, and the instant the
 * entry says nothing any more. The key expires with the last of its entries.
 *
 * One encoding serves the RDB (a string buffer), AOF rewrite and replication (RL.SETSTATE key <blob>, the
 * blob then ending with the key's absolute expiry), and every path in checks it the same way: each state one
 * its algorithm could have written (cell_valid), each record a valid lock, names as RL.POLICY takes them.
 *
 *   'P' | policy_len (1) | policy | n (1) | n entries | [expire_at_ms (8): RL.SETSTATE only; 0 in an AOF
 *                                                       rewrite, which Redis follows with the key's PEXPIREAT]
 *   entry: tag (1) | name_len (1) | name | words (1) | has_rec (1) | expire_ms (8) | [until_us, forgive_us,
 *          strikes, state_expire_ms (4 x 8): has_rec] | words x 8 | [nlog (4) | nlog x (at_us, weight) (16):
 *          a sliding log's, tag 'S', newest first] | [a concurrency limit's leases, tag 'C', as lease_type.c
 *          writes them: the count (4), then each lease]
 * Numbers are little-endian (rl_put_le). */
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "rl_module.h"

#define BUNDLE_ENCVER 1
#define ENTRY_FIXED (1 + 1 + 1 + 1 + 8)
#define REC_BYTES 32
/* The tag, a policy name of one byte, one entry of a one-byte name, the expiry. */
#define BLOB_MIN (3 + 1 + ENTRY_FIXED + 1 + 8)

static RedisModuleType *bundle_type;

rl_bundle *rl_bundle_new(int cap) {
    rl_bundle *b = RedisModule_Calloc(1, sizeof *b + sizeof b->e[0] * (size_t)cap);
    b->cap = cap;
    return b;
}

void rl_bundle_free(rl_bundle *b) {
    if (!b) return;
    for (int i = 0; i < b->n; i++) {
        RedisModule_Free(b->e[i].w);
        RedisModule_Free(b->e[i].log);
        if (b->e[i].leases) rl_lease_value_free(b->e[i].leases);
    }
    RedisModule_Free(b);
}

static int is_log(unsigned char tag) { return tag == rl_limiters[RL_LIM_SLIDINGLOG].tag; }
static int is_lease(unsigned char tag) { return tag == rl_limiters[RL_LIM_CONCURRENCY].tag; }

/* 1 when log[0..n) could have been written by the storage: newest first, each weight >= 1, times in range, at
 * most a log's most units (a limit's + 1). */
static int log_valid(const rl_slog_entry *log, int64_t n) {
    int64_t units = 0;
    for (int64_t i = 0; i < n; i++) {
        if (log[i].weight < 1 || log[i].weight > RL_SLOG_MAX_LIMIT + 1) return 0;
        if (log[i].at_us < 0 || log[i].at_us >= RL_MAX_TIME_US) return 0;
        if (i > 0 && log[i].at_us > log[i - 1].at_us) return 0;
        units += log[i].weight;
    }
    return units <= RL_SLOG_MAX_LIMIT + 1;
}

/* --- the encoding ------------------------------------------------------------------------------------ */

static size_t encoded_len(const rl_bundle *b) {
    size_t len = 3 + b->policy_len;
    for (int i = 0; i < b->n; i++)
        len += ENTRY_FIXED + b->e[i].name_len + (b->e[i].has_rec ? REC_BYTES : 0) + 8 * (size_t)b->e[i].words +
               (is_log(b->e[i].tag) ? 4 + 16 * (size_t)b->e[i].nlog : 0) +
               (is_lease(b->e[i].tag) ? (b->e[i].leases ? rl_leases_size(b->e[i].leases) : 4) : 0);
    return len;
}

static size_t encode(const rl_bundle *b, unsigned char *out) {
    unsigned char *p = out;
    *p++ = RL_BUNDLE_TAG;
    *p++ = b->policy_len;
    memcpy(p, b->policy, b->policy_len);
    p += b->policy_len;
    *p++ = (unsigned char)b->n;
    for (int i = 0; i < b->n; i++) {
        const rl_bundle_entry *e = &b->e[i];
        *p++ = e->tag;
        *p++ = e->name_len;
        memcpy(p, e->name, e->name_len);
        p += e->name_len;
        *p++ = (unsigned char)e->words;
        *p++ = (unsigned char)e->has_rec;
        rl_put_le(p, (uint64_t)e->expire_ms, 8);
        p += 8;
        if (e->has_rec) {
            const int64_t r[4] = {e->rec.lock.until_us, e->rec.lock.forgive_us, e->rec.lock.strikes,
                                  e->rec.state_expire_ms};
            for (int k = 0; k < 4; k++, p += 8) rl_put_le(p, (uint64_t)r[k], 8);
        }
        for (unsigned k = 0; k < e->words; k++, p += 8) rl_put_le(p, e->w[k], 8);
        if (is_lease(e->tag)) {
            if (e->leases) {
                p = rl_leases_put(p, e->leases);
            } else {
                rl_put_le(p, 0, 4);
                p += 4;
            }
        }
        if (!is_log(e->tag)) continue;
        rl_put_le(p, (uint64_t)e->nlog, 4);
        p += 4;
        for (int64_t k = 0; k < e->nlog; k++, p += 16) {
            rl_put_le(p, (uint64_t)e->log[k].at_us, 8);
            rl_put_le(p + 8, (uint64_t)e->log[k].weight, 8);
        }
    }
    return (size_t)(p - out);
}

/* b encoded in a new allocation (the caller frees it), with room for extra bytes after it. */
static unsigned char *encoded(const rl_bundle *b, size_t extra, size_t *len) {
    *len = encoded_len(b);
    unsigned char *blob = RedisModule_Alloc(*len + extra);
    encode(b, blob);
    return blob;
}

/* One entry at *p (len bytes left), checked; NULL, or what is wrong. */
static const char *decode_entry(const unsigned char **at, size_t *left, rl_bundle_entry *e) {
    const unsigned char *p = *at;
    if (*left < 2) return "truncated";
    e->tag = p[0];
    e->name_len = p[1];
    const rl_limiter *lim = rl_bundle_limiter_tagged(e->tag);
    if (!lim) return "unknown kind";
    e->w = NULL;
    e->log = NULL;
    e->nlog = 0;
    e->leases = NULL;
    if (*left < (size_t)ENTRY_FIXED + e->name_len) return "truncated";
    if (!rl_policy_name_ok((const char *)p + 2, e->name_len, RL_POLICY_LIMIT_NAME_MAX)) return "bad limit name";
    memcpy(e->name, p + 2, e->name_len);
    p += 2 + e->name_len;
    e->words = p[0];
    e->has_rec = p[1];
    e->expire_ms = (int64_t)rl_get_le(p + 2, 8);
    p += 10;
    size_t need = (size_t)ENTRY_FIXED + e->name_len + (e->has_rec ? REC_BYTES : 0) + 8 * (size_t)e->words;
    if (e->has_rec > 1 || e->words > RL_CELL_MAX_WORDS || *left < need) return "truncated";
    if ((is_log(e->tag) || is_lease(e->tag)) && e->words) return "a sliding log or leases have no words";
    if (e->expire_ms < 0 || e->expire_ms > RL_MAX_TIME_MS * 4) return "bad expiry";
    if (e->has_rec) {
        int64_t r[4];
        for (int k = 0; k < 4; k++, p += 8) r[k] = (int64_t)rl_get_le(p, 8);
        e->rec = (rl_lock_rec){{r[0], r[1], r[2]}, r[3]};
        if (!rl_lock_rec_valid(&e->rec)) return "not a valid lock";
    }
    if (e->words) {
        rl_cell cell;
        for (unsigned k = 0; k < e->words; k++, p += 8) cell.w[k] = rl_get_le(p, 8);
        if (lim->alg->words(&cell) != e->words || !lim->alg->cell_valid(&cell)) return "not a valid state of its kind";
        e->w = RedisModule_Alloc(8 * (size_t)e->words);
        memcpy(e->w, cell.w, 8 * (size_t)e->words);
    }
    *left -= need;
    if (is_log(e->tag)) {
        if (*left < 4) return "truncated";
        e->nlog = (int64_t)rl_get_le(p, 4);
        p += 4;
        *left -= 4;
        if (e->nlog > RL_SLOG_MAX_LIMIT + 1 || *left < 16 * (size_t)e->nlog) return "truncated";
        if (e->nlog) {
            e->log = RedisModule_Alloc(sizeof *e->log * (size_t)e->nlog);
            for (int64_t k = 0; k < e->nlog; k++, p += 16)
                e->log[k] = (rl_slog_entry){(int64_t)rl_get_le(p, 8), (int64_t)rl_get_le(p + 8, 8)};
            *left -= 16 * (size_t)e->nlog;
            if (!log_valid(e->log, e->nlog)) return "not a valid sliding log";
        }
    }
    if (is_lease(e->tag)) {
        const unsigned char *from = p;
        e->leases = rl_leases_get(&p, p + *left);
        if (!e->leases) return "not valid leases";
        *left -= (size_t)(p - from);
        if (e->leases->n == 0) {
            rl_lease_value_free(e->leases);
            e->leases = NULL;
        }
    }
    if (!e->has_rec && e->words == 0 && e->nlog == 0 && !e->leases) return "an entry with nothing";
    *at = p;
    return NULL;
}

/* A bundle from len bytes at p (no trailing expiry), checked: into *out, or NULL and what is wrong. */
static const char *decode(const unsigned char *p, size_t len, rl_bundle **out) {
    *out = NULL;
    if (len < 3 || p[0] != RL_BUNDLE_TAG) return "not a policy's state";
    size_t policy_len = p[1];
    if (len < 3 + policy_len || !rl_policy_name_ok((const char *)p + 2, policy_len, RL_POLICY_NAME_MAX))
        return "bad policy name";
    int n = p[2 + policy_len];
    if (n < 1 || n > RL_ALL_MAX_LIMITS) return "1 to 16 entries";
    rl_bundle *b = rl_bundle_new(n);
    b->policy_len = (uint8_t)policy_len;
    memcpy(b->policy, p + 2, policy_len);
    const unsigned char *at = p + 3 + policy_len;
    size_t left = len - 3 - policy_len;
    const char *failed = NULL;
    for (int i = 0; i < n && !failed; i++) {
        b->n = i + 1; /* (freed with the bundle, even when half read) */
        failed = decode_entry(&at, &left, &b->e[i]);
        if (failed) break;
        for (int j = 0; j < i && !failed; j++)
            if (b->e[j].name_len == b->e[i].name_len && memcmp(b->e[j].name, b->e[i].name, b->e[i].name_len) == 0)
                failed = "a limit name twice";
    }
    if (!failed && left != 0) failed = "bytes after the entries";
    if (failed) {
        rl_bundle_free(b);
        return failed;
    }
    *out = b;
    return NULL;
}

/* --- the rl-checks type ------------------------------------------------------------------------------ */

static void *bundle_rdb_load(RedisModuleIO *io, int encver) {
    if (encver != BUNDLE_ENCVER) return NULL;
    size_t len;
    char *blob = RedisModule_LoadStringBuffer(io, &len);
    if (RedisModule_IsIOError(io) || !blob) return NULL;
    rl_bundle *b;
    const char *failed = decode((const unsigned char *)blob, len, &b);
    RedisModule_Free(blob);
    if (failed) {
        RedisModule_LogIOError(io, "warning", "ratelimit: a policy-checked key's state: %s", failed);
        return NULL;
    }
    return b;
}

static void bundle_rdb_save(RedisModuleIO *io, void *value) {
    size_t len;
    unsigned char *blob = encoded(value, 0, &len);
    RedisModule_SaveStringBuffer(io, (const char *)blob, len);
    RedisModule_Free(blob);
}

/* The blob RL.SETSTATE takes: the encoding, then the key's expiry. */
static unsigned char *setstate_blob(const rl_bundle *b, int64_t expire_at_ms, size_t *len) {
    size_t body;
    unsigned char *blob = encoded(b, 8, &body);
    rl_put_le(blob + body, (uint64_t)expire_at_ms, 8);
    *len = body + 8;
    return blob;
}

/* (The expiry 0, none: Redis writes the key's PEXPIREAT after what the module emits, and a rewrite's context opens
 * no key.) */
static void bundle_aof_rewrite(RedisModuleIO *aof, RedisModuleString *key, void *value) {
    size_t len;
    unsigned char *blob = setstate_blob(value, 0, &len);
    RedisModule_EmitAOF(aof, "RL.SETSTATE", "sb", key, (const char *)blob, len);
    RedisModule_Free(blob);
}

static size_t bundle_mem_usage(const void *value) {
    const rl_bundle *b = value;
    size_t size = sizeof *b + sizeof b->e[0] * (size_t)b->cap;
    for (int i = 0; i < b->n; i++)
        size += 8 * (size_t)b->e[i].words + sizeof(rl_slog_entry) * (size_t)b->e[i].nlog +
                (b->e[i].leases ? sizeof(rl_lease) * (size_t)b->e[i].leases->n : 0);
    return size;
}

static void bundle_digest(RedisModuleDigest *md, void *value) {
    size_t len;
    unsigned char *blob = encoded(value, 0, &len);
    RedisModule_DigestAddStringBuffer(md, (const char *)blob, len);
    RedisModule_DigestEndSequence(md);
    RedisModule_Free(blob);
}

static rl_bundle *bundle_clone(const rl_bundle *from) {
    rl_bundle *b = rl_bundle_new(from->n);
    b->policy_len = from->policy_len;
    memcpy(b->policy, from->policy, from->policy_len);
    b->n = from->n;
    memcpy(b->e, from->e, sizeof b->e[0] * (size_t)from->n);
    for (int i = 0; i < b->n; i++) {
        if (from->e[i].words) {
            b->e[i].w = RedisModule_Alloc(8 * (size_t)from->e[i].words);
            memcpy(b->e[i].w, from->e[i].w, 8 * (size_t)from->e[i].words);
        }
        if (from->e[i].nlog) {
            b->e[i].log = RedisModule_Alloc(sizeof(rl_slog_entry) * (size_t)from->e[i].nlog);
            memcpy(b->e[i].log, from->e[i].log, sizeof(rl_slog_entry) * (size_t)from->e[i].nlog);
        }
        if (from->e[i].leases) b->e[i].leases = rl_lease_value_copy(from->e[i].leases);
    }
    return b;
}

static void *bundle_copy(RedisModuleString *fromkey, RedisModuleString *tokey, const void *value) {
    (void)fromkey;
    (void)tokey;
    return bundle_clone(value);
}

static void bundle_free_value(void *value) { rl_bundle_free(value); }

int rl_bundle_type_register(RedisModuleCtx *ctx, int (*aux_load)(RedisModuleIO *, int, int),
                            void (*aux_save)(RedisModuleIO *, int)) {
    RedisModuleTypeMethods methods = {.version = REDISMODULE_TYPE_METHOD_VERSION, .rdb_load = bundle_rdb_load,
                                      .rdb_save = bundle_rdb_save, .aof_rewrite = bundle_aof_rewrite,
                                      .mem_usage = bundle_mem_usage, .digest = bundle_digest,
                                      .free = bundle_free_value, .copy = bundle_copy, .unlink = rl_evict_unlink,
                                      .aux_load = aux_load, .aux_save = aux_save,
                                      .aux_save_triggers = REDISMODULE_AUX_BEFORE_RDB};
    bundle_type = RedisModule_CreateDataType(ctx, "rl-checks", BUNDLE_ENCVER, &methods);
    return bundle_type ? REDISMODULE_OK : REDISMODULE_ERR;
}

int rl_bundle_type_is(RedisModuleKey *key) {
    return RedisModule_KeyType(key) == REDISMODULE_KEYTYPE_MODULE && RedisModule_ModuleTypeGetType(key) == bundle_type;
}

void rl_bundle_put(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *keyname, rl_bundle *b,
                   int64_t expire_at_ms) {
    RedisModule_ModuleTypeSetValue(key, bundle_type, b);
    rl_bundle_touched(ctx, key, keyname, b, expire_at_ms);
}

void rl_bundle_touched(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *keyname, rl_bundle *b,
                       int64_t expire_at_ms) {
    RedisModule_SetAbsExpire(key, expire_at_ms);
    if (!rl_effects_on(ctx)) return;
    size_t len;
    unsigned char *blob = setstate_blob(b, expire_at_ms, &len);
    RedisModule_Replicate(ctx, "RL.SETSTATE", "sb", keyname, (const char *)blob, len);
    RedisModule_Free(blob);
}

int rl_bundle_setstate(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    size_t len;
    const unsigned char *p = (const unsigned char *)RedisModule_StringPtrLen(argv[2], &len);
    /* (shorter than the least a policy's state holds, a blob is no policy's: RL.SETSTATE's other forms answer) */
    if (argc != 3 || len < BLOB_MIN || p[0] != RL_BUNDLE_TAG) return 0;
    int64_t expire_at_ms = (int64_t)rl_get_le(p + len - 8, 8); /* 0: none (an AOF rewrite: PEXPIREAT follows) */
    if (expire_at_ms < 0) return RedisModule_ReplyWithError(ctx, "ERR state: no valid expiry"), 1;
    rl_bundle *b;
    const char *failed = decode(p, len - 8, &b);
    if (failed) {
        char err[RL_ERR_LEN];
        snprintf(err, sizeof err, "ERR state: not a valid policy state (%s)", failed);
        return RedisModule_ReplyWithError(ctx, err), 1;
    }
    RedisModuleKey *key = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
    int type = RedisModule_KeyType(key);
    if (type != REDISMODULE_KEYTYPE_EMPTY && !rl_bundle_type_is(key)) {
        RedisModule_CloseKey(key);
        rl_bundle_free(b);
        return RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE), 1;
    }
    RedisModule_ModuleTypeSetValue(key, bundle_type, b);
    if (expire_at_ms > 0) RedisModule_SetAbsExpire(key, expire_at_ms);
    else RedisModule_SetExpire(key, REDISMODULE_NO_EXPIRE);
    RedisModule_CloseKey(key);
    RedisModule_SignalModifiedKey(ctx, argv[1]);
    RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_MODULE, "rl.setstate", argv[1]);
    RedisModule_ReplicateVerbatim(ctx);
    RedisModule_ReplyWithSimpleString(ctx, "OK");
    return 1;
}
