/* cl_throttle.h -- CL.THROTTLE, redis-cell's command, served by this module (cl_throttle.c). */
#ifndef RL_CL_THROTTLE_H
#define RL_CL_THROTTLE_H

#include "redismodule.h"

/* Registers CL.THROTTLE when enabled (the module argument no-cl-throttle turns it off). If another module
 * (redis-cell) already has the name, logs a warning and returns REDISMODULE_OK without it. */
int rl_cl_throttle_register(RedisModuleCtx *ctx, int enabled);

#endif
