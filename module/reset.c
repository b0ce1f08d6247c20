/* reset.c -- RL.RESET key [key ...]: forget limiters, as if they had been idle for long.
 *
 * Deletes every key that holds a limiter (a cell limiter's data type, or a sorted set: the sliding log's; or a
 * lock alone, lock_type.c: its lock goes with it; or a policy's limits, RL.CHECK's key: all of them go)
 * and answers how many it deleted; a missing key counts 0. It checks every key before deleting any, so a
 * key of another type answers WRONGTYPE and nothing is deleted. Clients waiting (WAIT) on a deleted key
 * are served at once: a forgotten limiter is a full one. Each deletion is replicated as DEL and
 * fires Redis's usual `del` event, as DEL would. INFO counts its calls, its errors and the keys it deleted. */
#include "rl_module.h"

static int holds_limiter(RedisModuleKey *key) {
    int type = RedisModule_KeyType(key);
    if (type == REDISMODULE_KEYTYPE_EMPTY || type == REDISMODULE_KEYTYPE_ZSET) return 1;
    rl_lock alone;
    return rl_cell_limiter_of(key) != RL_CELL_OTHER || rl_lock_only_read(key, &alone) || rl_bundle_type_is(key);
}

int rl_reset_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    rl_counters *stats = &rl_stats[RL_STAT_RESET];
    rl_tally error = {RL_TALLY_ERROR, 0, 0, 0, 0, 0};
    if (argc < 2) {
        rl_stats_count(stats, &error);
        return RedisModule_WrongArity(ctx);
    }
    for (int i = 1; i < argc; i++) {
        RedisModuleKey *key = RedisModule_OpenKey(ctx, argv[i], REDISMODULE_READ);
        int ok = holds_limiter(key);
        RedisModule_CloseKey(key);
        if (!ok) {
            rl_stats_count(stats, &error);
            return RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
        }
    }
    long long deleted = 0;
    for (int i = 1; i < argc; i++) {
        RedisModuleKey *key = RedisModule_OpenKey(ctx, argv[i], REDISMODULE_READ | REDISMODULE_WRITE);
        if (RedisModule_KeyType(key) != REDISMODULE_KEYTYPE_EMPTY) {
            RedisModule_DeleteKey(key);
            RedisModule_Replicate(ctx, "DEL", "s", argv[i]);
            RedisModule_SignalModifiedKey(ctx, argv[i]);
            RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_GENERIC, "del", argv[i]);
            deleted++;
        }
        RedisModule_CloseKey(key);
    }
    if (deleted) rl_wait_serve_keys(ctx, argv + 1, argc - 1); /* a forgotten limiter is a full one */
    rl_tally t = {RL_TALLY_DONE, 0, 0, 0, deleted, 0};
    rl_stats_count(stats, &t);
    return RedisModule_ReplyWithLongLong(ctx, deleted);
}
