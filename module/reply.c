/* reply.c -- the one reply of every RL.* command: six integers (RESP2), or a map of the same names for a
 * RESP3 client, so code written against HELLO 3 reads fields by name; a seventh, `granted`, with ATMOST, or
 * `lease` (a bulk string, or nil) for a concurrency limit; RL.ALL's reply wraps one per limit. */
#include "rl_module.h"

static int is_resp3(RedisModuleCtx *ctx) { return (RedisModule_GetContextFlags(ctx) & REDISMODULE_CTX_FLAGS_RESP3) != 0; }

int rl_send_reply(RedisModuleCtx *ctx, const rl_reply *reply, int with_granted, const rl_lease_text *lease) {
    const long long values[RL_REPLY_FIELDS + 1] = {reply->allowed,        reply->limit,          reply->remaining,
                                                   reply->retry_after_ms, reply->reset_after_ms, reply->wait_ms,
                                                   reply->granted};
    int resp3 = is_resp3(ctx), numbers = RL_REPLY_FIELDS + (with_granted != 0), fields = numbers + (lease != NULL);
    if (resp3)
        RedisModule_ReplyWithMap(ctx, fields);
    else
        RedisModule_ReplyWithArray(ctx, fields);
    for (int i = 0; i < numbers; i++) {
        if (resp3) RedisModule_ReplyWithSimpleString(ctx, rl_reply_field_names[i]);
        RedisModule_ReplyWithLongLong(ctx, values[i]);
    }
    if (lease) {
        if (resp3) RedisModule_ReplyWithSimpleString(ctx, "lease");
        if (lease->len) RedisModule_ReplyWithStringBuffer(ctx, lease->id, lease->len);
        else RedisModule_ReplyWithNull(ctx);
    }
    return REDISMODULE_OK;
}

/* RL.CHECK's limits in RESP3: a map by the policy's names, in its order. */
static __attribute__((noinline)) int send_named(RedisModuleCtx *ctx, const rl_outcome *o) {
    RedisModule_ReplyWithSimpleString(ctx, "limits");
    RedisModule_ReplyWithMap(ctx, o->n);
    for (int i = 0; i < o->n; i++) {
        RedisModule_ReplyWithStringBuffer(ctx, o->names[i], o->name_len[i]);
        rl_send_reply(ctx, &o->replies[i], 0, (o->leased >> i & 1) ? &o->lease[i] : NULL);
    }
    return REDISMODULE_OK;
}

int rl_send_all_reply(RedisModuleCtx *ctx, const rl_outcome *o) {
    int n = o->n;
    int resp3 = is_resp3(ctx);
    if (resp3) {
        RedisModule_ReplyWithMap(ctx, 4);
        RedisModule_ReplyWithSimpleString(ctx, "allowed");
    } else {
        RedisModule_ReplyWithArray(ctx, 3 + n);
    }
    RedisModule_ReplyWithLongLong(ctx, o->allowed);
    if (resp3) RedisModule_ReplyWithSimpleString(ctx, "retry_after_ms");
    RedisModule_ReplyWithLongLong(ctx, o->retry_after_ms);
    if (resp3) RedisModule_ReplyWithSimpleString(ctx, "reset_after_ms");
    RedisModule_ReplyWithLongLong(ctx, o->reset_after_ms);
    if (resp3 && o->named) return send_named(ctx, o);
    if (resp3) {
        RedisModule_ReplyWithSimpleString(ctx, "limits");
        RedisModule_ReplyWithArray(ctx, n);
    }
    for (int i = 0; i < n; i++) rl_send_reply(ctx, &o->replies[i], 0, (o->leased >> i & 1) ? &o->lease[i] : NULL);
    return REDISMODULE_OK;
}
