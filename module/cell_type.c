/* cell_type.c -- the Redis data types of the cell limiters: one per limiter, so a key made by RL.TOKEN
 * answers WRONGTYPE to RL.LEAKY, as a list does to SET.
 *
 * A value is the limiter's 16-byte cell (algorithms/rl_common.h). All the types share the callbacks
 * below: RDB save/load (encoding version 1: the two words), AOF rewrite, copy, memory usage and digest,
 * so DUMP/RESTORE, COPY, MOVE, DEBUG RELOAD and DEBUG DIGEST-VALUE work. RDB load checks the cell with the
 * algorithm (a crafted RDB or RESTORE payload must not make a limiter misbehave), and AOF rewrite emits the
 * readable RL.SETSTATE key KIND w0 w1 (Redis adds the PEXPIREAT). The two callbacks that need to know their
 * limiter are generated per limiter in command.c. */
#include <string.h>

#include "rl_module.h"

#define RL_ENCODING_VERSION 1

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

void rl_cell_put(RedisModuleKey *key, const rl_limiter *lim, rl_cell *stored, const rl_cell *cell) {
    if (stored) {
        *stored = *cell;
        return;
    }
    rl_cell *fresh = RedisModule_Alloc(sizeof *fresh);
    *fresh = *cell;
    RedisModule_ModuleTypeSetValue(key, lim->type, fresh);
}

void *rl_cell_rdb_load(RedisModuleIO *io, int encver, const rl_limiter *lim) {
    if (encver != RL_ENCODING_VERSION) return NULL;
    rl_cell cell;
    cell.w[0] = RedisModule_LoadUnsigned(io);
    cell.w[1] = RedisModule_LoadUnsigned(io);
    if (RedisModule_IsIOError(io) || !lim->alg->cell_valid(&cell)) return NULL;
    rl_cell *value = RedisModule_Alloc(sizeof *value);
    *value = cell;
    return value;
}

static void cell_save(RedisModuleIO *io, void *value) {
    const rl_cell *cell = value;
    RedisModule_SaveUnsigned(io, cell->w[0]);
    RedisModule_SaveUnsigned(io, cell->w[1]);
}

void rl_cell_aof_rewrite(RedisModuleIO *aof, RedisModuleString *keyname, void *value, const rl_limiter *lim) {
    const rl_cell *cell = value;
    RedisModule_EmitAOF(aof, "RL.SETSTATE", "scll", keyname, lim->kind, (long long)cell->w[0], (long long)cell->w[1]);
}

static void cell_free(void *value) { RedisModule_Free(value); }

static size_t cell_mem_usage(const void *value) {
    (void)value;
    return sizeof(rl_cell);
}

static void cell_digest(RedisModuleDigest *md, void *value) {
    const rl_cell *cell = value;
    RedisModule_DigestAddLongLong(md, (long long)cell->w[0]);
    RedisModule_DigestAddLongLong(md, (long long)cell->w[1]);
    RedisModule_DigestEndSequence(md);
}

static void *cell_copy(RedisModuleString *fromkey, RedisModuleString *tokey, const void *value) {
    (void)fromkey;
    (void)tokey;
    rl_cell *copy = RedisModule_Alloc(sizeof *copy);
    memcpy(copy, value, sizeof *copy);
    return copy;
}

int rl_cell_types_register(RedisModuleCtx *ctx) {
    for (int i = 0; i < RL_NLIMITERS; i++) {
        rl_limiter *lim = &rl_limiters[i];
        if (lim->steps != &rl_cell_steps) continue;
        if (!lim->alg || !lim->rdb_load || !lim->aof_rewrite) {
            RedisModule_Log(ctx, "warning", "ratelimit: cell limiter %s lacks its algorithm", lim->kind);
            return REDISMODULE_ERR;
        }
        RedisModuleTypeMethods methods = {
            .version = REDISMODULE_TYPE_METHOD_VERSION,
            .rdb_load = lim->rdb_load,
            .rdb_save = cell_save,
            .aof_rewrite = lim->aof_rewrite,
            .mem_usage = cell_mem_usage,
            .digest = cell_digest,
            .free = cell_free,
            .copy = cell_copy,
        };
        lim->type = RedisModule_CreateDataType(ctx, lim->type_name, RL_ENCODING_VERSION, &methods);
        if (!lim->type) return REDISMODULE_ERR;
    }
    return REDISMODULE_OK;
}
