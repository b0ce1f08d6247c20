/* reply.c -- the one reply of every RL.* command: six integers (RESP2), or a map of the same names for a
 * RESP3 client, so code written against HELLO 3 reads fields by name. */
#include "rl_module.h"

int rl_send_reply(RedisModuleCtx *ctx, const rl_reply *reply) {
    const long long values[RL_REPLY_FIELDS] = {reply->allowed, reply->limit, reply->remaining,
                                               reply->retry_after_ms, reply->reset_after_ms, reply->wait_ms};
    int resp3 = (RedisModule_GetContextFlags(ctx) & REDISMODULE_CTX_FLAGS_RESP3) != 0;
    if (resp3)
        RedisModule_ReplyWithMap(ctx, RL_REPLY_FIELDS);
    else
        RedisModule_ReplyWithArray(ctx, RL_REPLY_FIELDS);
    for (int i = 0; i < RL_REPLY_FIELDS; i++) {
        if (resp3) RedisModule_ReplyWithSimpleString(ctx, rl_reply_field_names[i]);
        RedisModule_ReplyWithLongLong(ctx, values[i]);
    }
    return REDISMODULE_OK;
}
