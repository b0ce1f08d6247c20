/* cell_type.c -- the Redis data types of the cell limiters: one per limiter, so a key made by RL.TOKEN
 * answers WRONGTYPE to RL.LEAKY, as a list does to SET.
 *
 * A value is the limiter's state: the words of its cell in use (algorithms/rl_common.h), as many as the
 * algorithm's `words` reads from the first one, and nothing else (no length, no header), or, for the
 * commonest small state, no allocation at all (see "values" below). Every callback needs the word count,
 * so each limiter gets its own set, generated below from the list: RDB save/load, AOF rewrite, copy,
 * memory usage and digest, so DUMP/RESTORE, COPY, MOVE, DEBUG RELOAD and DEBUG DIGEST-VALUE work.
 *
 * A key whose lock record (algorithms/lockout.h) still says something holds it in its value too: an allocation
 * of the state's words followed by the record (rl_lock_rec: the lock, and the expiry the state alone would
 * have), its pointer tagged (below). A value without one is exactly what it was before lockouts, and the words
 * of either are at the pointer with its tag cleared, so a call that never meets a lock pays one bit test.
 *
 * RDB encoding version 3 writes the word count, the words, then 0, or 1 and the record's four numbers;
 * version 2 (before lockouts) the count and the words; version 1 (every value written before states could be
 * longer than two words) is read as two words. RDB load checks the state with the
 * algorithm (a crafted RDB or RESTORE payload must not make a limiter misbehave). AOF rewrite emits the
 * readable RL.SETSTATE key KIND w0 w1 ... (Redis adds the PEXPIREAT). */
#include <stdint.h>
#include <string.h>

#include "rl_module.h"

#define RL_ENCODING_VERSION 3

const rl_limiter *rl_cell_limiter_of(RedisModuleKey *key) {
    int type = RedisModule_KeyType(key);
    if (type == REDISMODULE_KEYTYPE_EMPTY) return NULL;
    if (type == REDISMODULE_KEYTYPE_MODULE) {
        RedisModuleType *mt = RedisModule_ModuleTypeGetType(key);
        for (int i = 0; i < RL_NLIMITERS; i++)
            if (rl_limiters[i].type && rl_limiters[i].type == mt) return &rl_limiters[i];
    }
    return RL_CELL_OTHER;
}

/* --- values: inline or allocated --------------------------------------------------------------------
 *
 * A two-word state whose second word is 0 (a token or leaky bucket whose instant is a whole µs, which it
 * is whenever the rate's period divides into whole µs per token) lives in the value pointer itself: the
 * first word shifted left, with the low bit set, which no allocation has (they are at least 8-byte
 * aligned). Redis never reads a module value but through these callbacks, so it only saves the 16-byte
 * allocation and its lookup, a tenth of a small key's memory. Any other state is an allocation of its
 * words; a state with a lock record, an allocation of the words then the record, its pointer's bit 1 set
 * (again a bit no allocation has). */

#define LOCK_TAG ((uintptr_t)2)
#define LOCK_WORDS 4 /* rl_lock_rec: until_us, forgive_us, strikes, state_expire_ms */
static uint64_t *locked_words(const void *value) { return (uint64_t *)((uintptr_t)value & ~LOCK_TAG); }

#if UINTPTR_MAX == UINT64_MAX
#define INLINE_LIMIT (1LL << 62) /* the first word, signed, must fit in 63 bits */
static int value_is_inline(const void *value) { return ((uintptr_t)value & 1) != 0; }
static uint64_t inline_word(const void *value) { return (uint64_t)((int64_t)(uintptr_t)value >> 1); }
static int fits_inline(const rl_cell *cell, unsigned n) {
    int64_t w0 = (int64_t)cell->w[0];
    return n == 2 && cell->w[1] == 0 && w0 >= -INLINE_LIMIT && w0 < INLINE_LIMIT;
}
static void *inline_value(const rl_cell *cell) { return (void *)(uintptr_t)((cell->w[0] << 1) | 1); }
#else /* no room in a 32-bit pointer */
static int value_is_inline(const void *value) { (void)value; return 0; }
static uint64_t inline_word(const void *value) { (void)value; return 0; }
static int fits_inline(const rl_cell *cell, unsigned n) { (void)cell; (void)n; return 0; }
static void *inline_value(const rl_cell *cell) { (void)cell; return NULL; }
#endif

/* Bit 1 marks a record only in an allocation's pointer: an inline value's bit 1 is its first word's bit 0. */
static int value_is_locked(const void *value) { return !value_is_inline(value) && ((uintptr_t)value & LOCK_TAG) != 0; }

static unsigned heap_words(const rl_limiter *lim, const uint64_t *words) {
    rl_cell head;
    head.w[0] = words[0]; /* `words` reads the first word alone */
    return lim->alg->words(&head);
}

/* A value's words: an allocation of them, or one with a lock record after them (the tag tells). Not inline. */
static const uint64_t *heap_words_of(const void *value) { return locked_words(value); /* the tag off, if any */ }

unsigned rl_value_read(const rl_limiter *lim, const void *value, rl_cell *cell) {
    if (value_is_inline(value)) {
        cell->w[0] = inline_word(value);
        cell->w[1] = 0;
        return 2;
    }
    const uint64_t *words = heap_words_of(value);
    unsigned n = heap_words(lim, words);
    if (n == 2) { /* the usual size, without a call to memcpy */
        cell->w[0] = words[0];
        cell->w[1] = words[1];
    } else {
        memcpy(cell->w, words, n * sizeof cell->w[0]);
    }
    return n;
}

int rl_value_holds(const void *value, unsigned stored_words, const rl_cell *cell, unsigned n) {
    if (value_is_inline(value)) return n == 2 && cell->w[0] == inline_word(value) && cell->w[1] == 0;
    return stored_words == n && memcmp(heap_words_of(value), cell->w, n * sizeof cell->w[0]) == 0;
}

int rl_value_lock(const rl_limiter *lim, const void *value, rl_lock_rec *rec) {
    if (!value_is_locked(value)) return 0;
    const uint64_t *w = locked_words(value);
    w += heap_words(lim, w); /* the record follows the state's words */
    rec->lock.until_us = (int64_t)w[0];
    rec->lock.forgive_us = (int64_t)w[1];
    rec->lock.strikes = (int64_t)w[2];
    rec->state_expire_ms = (int64_t)w[3];
    return 1;
}

static void rec_write(uint64_t *w, const rl_lock_rec *rec) {
    w[0] = (uint64_t)rec->lock.until_us;
    w[1] = (uint64_t)rec->lock.forgive_us;
    w[2] = (uint64_t)rec->lock.strikes;
    w[3] = (uint64_t)rec->state_expire_ms;
}

/* A new value holding rec, then cell's n words. */
static void *value_new_locked(const rl_cell *cell, unsigned n, const rl_lock_rec *rec) {
    uint64_t *w = RedisModule_Alloc((n + LOCK_WORDS) * sizeof *w);
    memcpy(w, cell->w, n * sizeof *w);
    rec_write(w + n, rec);
    return (void *)((uintptr_t)w | LOCK_TAG);
}

/* A new value holding cell's n words, and rec when not NULL. */
static void *value_new(const rl_cell *cell, unsigned n, const rl_lock_rec *rec) {
    if (rec) return value_new_locked(cell, n, rec);
    if (fits_inline(cell, n)) return inline_value(cell);
    uint64_t *value = RedisModule_Alloc(n * sizeof *value);
    memcpy(value, cell->w, n * sizeof *value);
    return value;
}

static void value_free(void *value) {
    if (value_is_locked(value)) RedisModule_Free(locked_words(value));
    else if (!value_is_inline(value)) RedisModule_Free(value);
}

void rl_cell_put_locked(RedisModuleKey *key, const rl_limiter *lim, void *stored, unsigned stored_words,
                        const rl_cell *cell, unsigned n, const rl_lock_rec *rec) {
    if (!stored) {
        RedisModule_ModuleTypeSetValue(key, lim->type, value_new_locked(cell, n, rec));
        return;
    }
    if (value_is_locked(stored) && stored_words == n) {
        uint64_t *w = locked_words(stored);
        memcpy(w, cell->w, n * sizeof *w);
        rec_write(w + n, rec);
        return;
    }
    void *old = NULL;
    RedisModule_ModuleTypeReplaceValue(key, lim->type, value_new_locked(cell, n, rec), &old);
    value_free(old);
}

void rl_cell_put(RedisModuleKey *key, const rl_limiter *lim, void *stored, unsigned stored_words, const rl_cell *cell,
                 unsigned n) {
    if (!stored) {
        RedisModule_ModuleTypeSetValue(key, lim->type, value_new(cell, n, NULL));
        return;
    }
    if (((uintptr_t)stored & 3) == 0 && stored_words == n && !fits_inline(cell, n)) { /* neither inline nor locked */
        memcpy(stored, cell->w, n * sizeof cell->w[0]); /* in place */
        return;
    }
    /* Inline, locked, or another size: swap the value (the key keeps its expiry), free the old one. */
    void *old = NULL;
    RedisModule_ModuleTypeReplaceValue(key, lim->type, value_new(cell, n, NULL), &old);
    value_free(old);
}

/* --- the callbacks, for one limiter ---------------------------------------------------------------- */

static void *cell_rdb_load(RedisModuleIO *io, int encver, const rl_limiter *lim) {
    if (encver < 1 || encver > RL_ENCODING_VERSION) return NULL;
    uint64_t n = encver == 1 ? 2 : RedisModule_LoadUnsigned(io);
    if (RedisModule_IsIOError(io) || n < 1 || n > RL_CELL_MAX_WORDS) return NULL;
    rl_cell cell;
    for (uint64_t i = 0; i < n; i++) cell.w[i] = RedisModule_LoadUnsigned(io);
    if (RedisModule_IsIOError(io) || lim->alg->words(&cell) != n || !lim->alg->cell_valid(&cell)) return NULL;
    rl_lock_rec rec;
    uint64_t locked = encver >= 3 ? RedisModule_LoadUnsigned(io) : 0;
    if (locked) {
        rec.lock.until_us = RedisModule_LoadSigned(io);
        rec.lock.forgive_us = RedisModule_LoadSigned(io);
        rec.lock.strikes = RedisModule_LoadSigned(io);
        rec.state_expire_ms = RedisModule_LoadSigned(io);
        if (!rl_lock_rec_valid(&rec)) return NULL;
    }
    if (RedisModule_IsIOError(io) || locked > 1) return NULL;
    return value_new(&cell, (unsigned)n, locked ? &rec : NULL);
}

static void cell_rdb_save(RedisModuleIO *io, void *value, const rl_limiter *lim) {
    rl_cell cell;
    unsigned n = rl_value_read(lim, value, &cell);
    RedisModule_SaveUnsigned(io, n);
    for (unsigned i = 0; i < n; i++) RedisModule_SaveUnsigned(io, cell.w[i]);
    rl_lock_rec rec;
    int locked = rl_value_lock(lim, value, &rec);
    RedisModule_SaveUnsigned(io, (uint64_t)locked);
    if (locked) {
        RedisModule_SaveSigned(io, rec.lock.until_us);
        RedisModule_SaveSigned(io, rec.lock.forgive_us);
        RedisModule_SaveSigned(io, rec.lock.strikes);
        RedisModule_SaveSigned(io, rec.state_expire_ms);
    }
}

/* RL.SETSTATE key KIND w0 [w1 ...] [LOCK until_us forgive_us strikes state_expire_ms] */
static void cell_aof_rewrite(RedisModuleIO *aof, RedisModuleString *keyname, void *value, const rl_limiter *lim) {
    rl_cell cell;
    unsigned n = rl_value_read(lim, value, &cell);
    RedisModuleString *words[RL_CELL_MAX_WORDS + 1 + LOCK_WORDS];
    for (unsigned i = 0; i < n; i++) words[i] = RedisModule_CreateStringFromLongLong(NULL, (long long)cell.w[i]);
    unsigned all = n;
    rl_lock_rec rec;
    if (rl_value_lock(lim, value, &rec)) {
        words[all++] = RedisModule_CreateString(NULL, "LOCK", 4);
        long long v[LOCK_WORDS] = {rec.lock.until_us, rec.lock.forgive_us, rec.lock.strikes, rec.state_expire_ms};
        for (int i = 0; i < LOCK_WORDS; i++) words[all++] = RedisModule_CreateStringFromLongLong(NULL, v[i]);
    }
    RedisModule_EmitAOF(aof, "RL.SETSTATE", "scv", keyname, lim->kind, words, (size_t)all);
    for (unsigned i = 0; i < all; i++) RedisModule_FreeString(NULL, words[i]);
}

static size_t cell_mem_usage(const void *value, const rl_limiter *lim) {
    if (value_is_locked(value)) return (heap_words(lim, locked_words(value)) + LOCK_WORDS) * sizeof(uint64_t);
    return value_is_inline(value) ? 0 : heap_words(lim, value) * sizeof(uint64_t);
}

static void cell_digest(RedisModuleDigest *md, void *value, const rl_limiter *lim) {
    rl_cell cell;
    unsigned n = rl_value_read(lim, value, &cell);
    for (unsigned i = 0; i < n; i++) RedisModule_DigestAddLongLong(md, (long long)cell.w[i]);
    rl_lock_rec rec;
    if (rl_value_lock(lim, value, &rec)) {
        RedisModule_DigestAddLongLong(md, rec.lock.until_us);
        RedisModule_DigestAddLongLong(md, rec.lock.forgive_us);
        RedisModule_DigestAddLongLong(md, rec.lock.strikes);
        RedisModule_DigestAddLongLong(md, rec.state_expire_ms);
    }
    RedisModule_DigestEndSequence(md);
}

static void *cell_copy(const void *value, const rl_limiter *lim) {
    rl_cell cell;
    unsigned n = rl_value_read(lim, value, &cell);
    rl_lock_rec rec;
    return value_new(&cell, n, rl_value_lock(lim, value, &rec) ? &rec : NULL);
}

static void cell_free(void *value) { value_free(value); }

/* Redis gives the callbacks no private data, so each cell limiter gets wrappers that name it. */
#define CELL_METHODS_cell(id)                                                                           \
    static void *rdb_load_##id(RedisModuleIO *io, int encver) {                                          \
        return cell_rdb_load(io, encver, &rl_limiters[RL_LIM_##id]);                                     \
    }                                                                                                    \
    static void rdb_save_##id(RedisModuleIO *io, void *value) {                                          \
        cell_rdb_save(io, value, &rl_limiters[RL_LIM_##id]);                                             \
    }                                                                                                    \
    static void aof_rewrite_##id(RedisModuleIO *aof, RedisModuleString *key, void *value) {             \
        cell_aof_rewrite(aof, key, value, &rl_limiters[RL_LIM_##id]);                                    \
    }                                                                                                    \
    static size_t mem_usage_##id(const void *value) { return cell_mem_usage(value, &rl_limiters[RL_LIM_##id]); } \
    static void digest_##id(RedisModuleDigest *md, void *value) { cell_digest(md, value, &rl_limiters[RL_LIM_##id]); } \
    static void *copy_##id(RedisModuleString *fromkey, RedisModuleString *tokey, const void *value) {   \
        (void)fromkey;                                                                                   \
        (void)tokey;                                                                                     \
        return cell_copy(value, &rl_limiters[RL_LIM_##id]);                                              \
    }
#define CELL_METHODS_log(id)
#define CELL_METHODS_lease(id)
#define CELL_METHODS(id, command, type_name, tag, algorithm, storage) CELL_METHODS_##storage(id)
RL_LIMITERS(CELL_METHODS)

#define METHODS_ROW_cell(id)                                                                                   \
    [RL_LIM_##id] = {.version = REDISMODULE_TYPE_METHOD_VERSION, .rdb_load = rdb_load_##id, .rdb_save = rdb_save_##id, \
                     .aof_rewrite = aof_rewrite_##id, .mem_usage = mem_usage_##id, .digest = digest_##id,      \
                     .free = cell_free, .copy = copy_##id, .unlink = rl_evict_unlink},
#define METHODS_ROW_log(id)
#define METHODS_ROW_lease(id)
#define METHODS_ROW(id, command, type_name, tag, algorithm, storage) METHODS_ROW_##storage(id)
static RedisModuleTypeMethods cell_methods[RL_NLIMITERS] = {RL_LIMITERS(METHODS_ROW)};

int rl_cell_types_register(RedisModuleCtx *ctx) {
    for (int i = 0; i < RL_NLIMITERS; i++) {
        rl_limiter *lim = &rl_limiters[i];
        if (lim->steps != &rl_cell_steps) continue;
        if (!lim->alg || !lim->alg->words) {
            RedisModule_Log(ctx, "warning", "ratelimit: cell limiter %s lacks its algorithm", lim->kind);
            return REDISMODULE_ERR;
        }
        lim->type = RedisModule_CreateDataType(ctx, lim->type_name, RL_ENCODING_VERSION, &cell_methods[i]);
        if (!lim->type) return REDISMODULE_ERR;
    }
    return REDISMODULE_OK;
}
