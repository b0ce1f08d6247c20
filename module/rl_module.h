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

extern rl_kind rl_kinds[];
extern const int rl_nkinds;

/* type.c */
int rl_types_register(RedisModuleCtx *ctx);
int rl_setstate_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
/* The kind stored in an open key, NULL if the key is empty, (rl_kind *)-1 if it holds anything else. */
#define RL_KIND_OTHER ((const rl_kind *)-1)
const rl_kind *rl_key_kind(RedisModuleKey *key);
/* Store (or delete, when the limiter is idle) a cell and replicate the effect. */
void rl_store_cell(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *keyname, const rl_kind *kind,
                   rl_cell *stored, const rl_cell *cell, int64_t now_us, const rl_reply *reply);

/* reply.c */
int rl_send_reply(RedisModuleCtx *ctx, const rl_reply *reply);

/* command.c */
int rl_commands_register(RedisModuleCtx *ctx);

#endif
