/* floor-module.c -- the benchmarks' calibration module (docs/benchmarks.md, "The floor"): FLOOR.CALL key, a
 * command that does only what every limiter command on this module API must do, and nothing else.
 *
 * Measured in the same server as the RL.* commands, it is the floor of the module API on this machine: no
 * module command that keeps a state per key can be faster. INCR is not that floor: a module command pays
 * the module dispatch, a key opened through RedisModuleKey, a value of a module type, an absolute expiry
 * and a six-integer reply, none of which INCR does. So make bench reports every command as a ratio to
 * this, and to INCR.
 *
 * What one call does, as a limiter's allowed request does: read the clock; open the key for writing;
 * create a 16-byte value of its own module type, or update the one there (two words, as a cell); set the
 * absolute expiry a day ahead; ReplicateVerbatim (the least a write can do to count for save points and
 * replicas; with no replica and no AOF Redis propagates nothing); reply six integers. No parsing: the
 * arguments after the key are ignored, as a limiter's fast path would read them in about as many
 * instructions as this takes to skip them.
 *
 * Built by mk/bench.mk (or scripts/bench/tools.sh) into build/floor.so, only for the benchmarks: it is not part of
 * build/ratelimit.so and make run never loads it. */
#include <stdint.h>

#include "redismodule.h"

#define DAY_MS 86400000LL

typedef struct floor_value {
    uint64_t w[2];
} floor_value;

static RedisModuleType *floor_type;

static void *floor_rdb_load(RedisModuleIO *io, int encver) {
    if (encver != 0) return NULL;
    floor_value *v = RedisModule_Alloc(sizeof *v);
    v->w[0] = RedisModule_LoadUnsigned(io);
    v->w[1] = RedisModule_LoadUnsigned(io);
    return v;
}

static void floor_rdb_save(RedisModuleIO *io, void *value) {
    const floor_value *v = value;
    RedisModule_SaveUnsigned(io, v->w[0]);
    RedisModule_SaveUnsigned(io, v->w[1]);
}

static void floor_free(void *value) { RedisModule_Free(value); }

static size_t floor_mem_usage(const void *value) {
    (void)value;
    return sizeof(floor_value);
}

static int floor_call(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc < 2) return RedisModule_WrongArity(ctx);
    long long now_ms = RedisModule_Milliseconds();
    RedisModuleKey *key = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
    int type = RedisModule_KeyType(key);
    floor_value *v;
    if (type == REDISMODULE_KEYTYPE_EMPTY) {
        v = RedisModule_Alloc(sizeof *v);
        v->w[0] = v->w[1] = 0;
        RedisModule_ModuleTypeSetValue(key, floor_type, v);
    } else if (RedisModule_ModuleTypeGetType(key) == floor_type) {
        v = RedisModule_ModuleTypeGetValue(key);
    } else {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
    }
    v->w[0]++;
    v->w[1] = (uint64_t)now_ms;
    long long remaining = (long long)(v->w[0] % 100);
    RedisModule_SetAbsExpire(key, now_ms + DAY_MS);
    RedisModule_CloseKey(key);
    RedisModule_ReplicateVerbatim(ctx);
    RedisModule_ReplyWithArray(ctx, 6);
    RedisModule_ReplyWithLongLong(ctx, 1);
    RedisModule_ReplyWithLongLong(ctx, 100);
    RedisModule_ReplyWithLongLong(ctx, remaining);
    RedisModule_ReplyWithLongLong(ctx, 0);
    RedisModule_ReplyWithLongLong(ctx, DAY_MS);
    RedisModule_ReplyWithLongLong(ctx, 0);
    return REDISMODULE_OK;
}

__attribute__((visibility("default"))) int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv,
                                                              int argc) {
    (void)argv, (void)argc;
    if (RedisModule_Init(ctx, "floor", 1, REDISMODULE_APIVER_1) == REDISMODULE_ERR) return REDISMODULE_ERR;
    RedisModuleTypeMethods methods = {.version = REDISMODULE_TYPE_METHOD_VERSION,
                                      .rdb_load = floor_rdb_load,
                                      .rdb_save = floor_rdb_save,
                                      .free = floor_free,
                                      .mem_usage = floor_mem_usage};
    floor_type = RedisModule_CreateDataType(ctx, "rl-floor0", 0, &methods);
    if (!floor_type) return REDISMODULE_ERR;
    return RedisModule_CreateCommand(ctx, "floor.call", floor_call, "write deny-oom fast", 1, 1, 1);
}
