/* cl_throttle.h -- CL.THROTTLE, redis-cell's command, served by this module (cl_throttle.c) and registered by
 * command.c's table unless the module is loaded with no-cl-throttle or another module (redis-cell) already
 * has the name. */
#ifndef RL_CL_THROTTLE_H
#define RL_CL_THROTTLE_H

#include "redismodule.h"

#define RL_CL_THROTTLE_NAME "cl.throttle"
#define RL_CL_THROTTLE_SUMMARY                                                                                   \
    "redis-cell's GCRA command: checks and consumes quantity against max_burst + 1 per count_per_period per "    \
    "period seconds, on redis-cell's own keys."

int rl_cl_throttle_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
/* COMMAND DOCS' arguments: key max_burst count_per_period period [quantity]. */
extern const RedisModuleCommandArg rl_cl_throttle_args[];

#endif
