/* fake_cell.c -- a stand-in for redis-cell in tests: a module that only registers CL.THROTTLE (answering
 * "+fake-cell"), so integration_cl_throttle.c can load it before ours and see ours give the name up with a
 * warning instead of failing to load. */
#include "redismodule.h"

static int fake_throttle(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv;
    (void)argc;
    return RedisModule_ReplyWithSimpleString(ctx, "fake-cell");
}

__attribute__((visibility("default"))) int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv,
                                                              int argc) {
    (void)argv;
    (void)argc;
    if (RedisModule_Init(ctx, "fakecell", 1, REDISMODULE_APIVER_1) == REDISMODULE_ERR) return REDISMODULE_ERR;
    return RedisModule_CreateCommand(ctx, "cl.throttle", fake_throttle, "write", 1, 1, 1);
}
