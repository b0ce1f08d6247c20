/* cell_type.c -- the Redis data types of the cell limiters: one per limiter, so a key made by RL.TOKEN
 * answers WRONGTYPE to RL.LEAKY, as a list does to SET.
 *
 * A value is the limiter's state: the words of its cell in use (algorithms/rl_common.h), as many as the
 * algorithm's `words` reads from the first one, and nothing else (no length, no header), or, for the
 * commonest small state, no allocation at all (see "values" below). Every callback needs the word count,
 * so each limiter gets its own set, generated below from the list: RDB save/load, AOF rewrite, copy,
 * memory usage and digest, so DUMP/RESTORE, COPY, MOVE, DEBUG RELOAD and DEBUG DIGEST-VALUE work.
 *
 * RDB encoding version 2 writes the word count, then the words; version 1 (every value written before
 * states could be longer than two words) is read as two words. RDB load checks the state with the
 * algorithm (a crafted RDB or RESTORE payload must not make a limiter misbehave). AOF rewrite emits the
 * readable RL.SETSTATE key KIND w0 w1 ... (Redis adds the PEXPIREAT). */
#include <stdint.h>
#include <string.h>

#include "rl_module.h"

#define RL_ENCODING_VERSION 2

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
 * words. */

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

static unsigned heap_words(const rl_limiter *lim, const uint64_t *words) {
    rl_cell head;
    head.w[0] = words[0]; /* `words` reads the first word alone */
    return lim->alg->words(&head);
}

unsigned rl_value_read(const rl_limiter *lim, const void *value, rl_cell *cell) {
    if (value_is_inline(value)) {
        cell->w[0] = inline_word(value);
        cell->w[1] = 0;
        return 2;
    }
    const uint64_t *words = value;
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
    return stored_words == n && memcmp(value, cell->w, n * sizeof cell->w[0]) == 0;
}

/* A new value holding cell's n words. */
static void *value_new(const rl_cell *cell, unsigned n) {
    if (fits_inline(cell, n)) return inline_value(cell);
    uint64_t *value = RedisModule_Alloc(n * sizeof *value);
    memcpy(value, cell->w, n * sizeof *value);
    return value;
}

static void value_free(void *value) {
    if (!value_is_inline(value)) RedisModule_Free(value);
}

void rl_cell_put(RedisModuleKey *key, const rl_limiter *lim, void *stored, unsigned stored_words, const rl_cell *cell,
                 unsigned n) {
    if (!stored) {
        RedisModule_ModuleTypeSetValue(key, lim->type, value_new(cell, n));
        return;
    }
    if (!value_is_inline(stored) && stored_words == n && !fits_inline(cell, n)) {
        memcpy(stored, cell->w, n * sizeof cell->w[0]); /* in place */
        return;
    }
    /* Inline, or another encoding or size: swap the value (the key keeps its expiry), free the old one. */
    void *old = NULL;
    RedisModule_ModuleTypeReplaceValue(key, lim->type, value_new(cell, n), &old);
    value_free(old);
}

/* --- the callbacks, for one limiter ---------------------------------------------------------------- */

static void *cell_rdb_load(RedisModuleIO *io, int encver, const rl_limiter *lim) {
    if (encver != 1 && encver != RL_ENCODING_VERSION) return NULL;
    uint64_t n = encver == 1 ? 2 : RedisModule_LoadUnsigned(io);
    if (RedisModule_IsIOError(io) || n < 1 || n > RL_CELL_MAX_WORDS) return NULL;
    rl_cell cell;
    for (uint64_t i = 0; i < n; i++) cell.w[i] = RedisModule_LoadUnsigned(io);
    if (RedisModule_IsIOError(io) || lim->alg->words(&cell) != n || !lim->alg->cell_valid(&cell)) return NULL;
    return value_new(&cell, (unsigned)n);
}

static void cell_rdb_save(RedisModuleIO *io, void *value, const rl_limiter *lim) {
    rl_cell cell;
    unsigned n = rl_value_read(lim, value, &cell);
    RedisModule_SaveUnsigned(io, n);
    for (unsigned i = 0; i < n; i++) RedisModule_SaveUnsigned(io, cell.w[i]);
}

static void cell_aof_rewrite(RedisModuleIO *aof, RedisModuleString *keyname, void *value, const rl_limiter *lim) {
    rl_cell cell;
    unsigned n = rl_value_read(lim, value, &cell);
    RedisModuleString *words[RL_CELL_MAX_WORDS];
    for (unsigned i = 0; i < n; i++) words[i] = RedisModule_CreateStringFromLongLong(NULL, (long long)cell.w[i]);
    RedisModule_EmitAOF(aof, "RL.SETSTATE", "scv", keyname, lim->kind, words, (size_t)n);
    for (unsigned i = 0; i < n; i++) RedisModule_FreeString(NULL, words[i]);
}

static size_t cell_mem_usage(const void *value, const rl_limiter *lim) {
    return value_is_inline(value) ? 0 : heap_words(lim, value) * sizeof(uint64_t);
}

static void cell_digest(RedisModuleDigest *md, void *value, const rl_limiter *lim) {
    rl_cell cell;
    unsigned n = rl_value_read(lim, value, &cell);
    for (unsigned i = 0; i < n; i++) RedisModule_DigestAddLongLong(md, (long long)cell.w[i]);
    RedisModule_DigestEndSequence(md);
}

static void *cell_copy(const void *value, const rl_limiter *lim) {
    rl_cell cell;
    unsigned n = rl_value_read(lim, value, &cell);
    return value_new(&cell, n);
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
                     .free = cell_free, .copy = copy_##id},
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
