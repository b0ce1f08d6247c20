/* rl_module.h -- declarations shared by the module's glue files (not a public API). */
#ifndef RL_MODULE_H
#define RL_MODULE_H

#include "redismodule.h"

#include "../algorithms/rl_common.h"
#include "parse.h"

/* One stored kind of limiter: the algorithm, and the Redis data type its cells are stored in. */
typedef struct rl_kind {
    const rl_algorithm *alg;
    const char *type_name;  /* the 9-character Redis module type name */
    RedisModuleType *type;  /* set at load */
} rl_kind;

/* Indexes into rl_kinds (type.c). */
enum { RL_KIND_TOKEN, RL_KIND_LEAKY, RL_KIND_WINDOW };
extern rl_kind rl_kinds[];
extern const int rl_nkinds;

/* How a command executes a parsed request against its key: decide, and unless DRYRUN store the effect
 * and replicate it. Returns NULL, or the error to reply (e.g. WRONGTYPE) when nothing was done. */
typedef const char *(*rl_execute_fn)(RedisModuleCtx *ctx, RedisModuleString *keyname, const rl_request *req,
                                     const void *target, rl_reply *reply);

/* type.c */
int rl_types_register(RedisModuleCtx *ctx);
int rl_setstate_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
/* Execute a cell command; target is its rl_kind. */
const char *rl_cell_execute(RedisModuleCtx *ctx, RedisModuleString *keyname, const rl_request *req,
                            const void *target, rl_reply *reply);

/* slidinglog.c: execute RL.SLIDINGLOG against a sorted set (target unused). */
const char *rl_slog_execute(RedisModuleCtx *ctx, RedisModuleString *keyname, const rl_request *req,
                            const void *target, rl_reply *reply);

/* reply.c */
int rl_send_reply(RedisModuleCtx *ctx, const rl_reply *reply);
/* 1 when this call may block its client (not in MULTI, a script, a replicated or loading stream). */
int rl_can_block(RedisModuleCtx *ctx);
/* Block the client and send reply after reply->wait_ms. */
int rl_hold_reply(RedisModuleCtx *ctx, const rl_reply *reply);

/* command.c */
int rl_commands_register(RedisModuleCtx *ctx);

#endif
