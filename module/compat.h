/* compat.h -- what newer servers offer (ACL categories, side-effect-free reads, the cached command time),
 * used when the running server has it; see compat.c. */
#ifndef RL_COMPAT_H
#define RL_COMPAT_H

#include <stdint.h>
#include <stdio.h>

#include "redismodule.h"

/* Look the newer functions up, and create the @ratelimit ACL category where the server allows it. Called
 * once, at load, before any command is registered. */
int rl_compat_init(RedisModuleCtx *ctx);

/* Put a command in @ratelimit (where the server has module categories), @read or @write, and @fast if
 * fast; nothing on a server without command categories (7.0). */
int rl_compat_set_acl(RedisModuleCommand *cmd, int readonly, int fast);

/* The mode to open a key with when only reading it: READ, plus NOEFFECTS where the server has it. */
int rl_compat_read_mode(void);

/* The server's cached time for the current command in µs, or -1 on a server without it. */
int64_t rl_compat_cached_now_us(void);

#endif
