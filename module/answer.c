/* answer.c -- the end of every call: count it once, then answer it, now or later.
 *
 * Every call of the module ends here, whatever path it took: a call decided at once (rl_answer, inline in
 * rl_module.h, which holds BLOCK's replies through rl_answer_hold), one that failed before it was decided
 * (rl_answer_error), a waiter answered later by wait.c (rl_answer_blocked, or rl_answer_unblocked on CLIENT
 * UNBLOCK), and a waiter that left with no answer (rl_answer_gone). Each counts the call in INFO ratelimit
 * exactly once, through rl_stats_count, so a call that waits is counted when it is answered, with the
 * verdict it got.
 *
 * BLOCK (RL.LEAKY, RL.SMOOTH). The decision (and its replication) happens at admission; only the reply
 * waits for wait_ms, under one timer. When it is sent, limit, remaining and reset_after_ms are read again
 * (the same call as a DRYRUN of COST 0, which writes nothing), so they are true at that moment; wait_ms stays
 * the wait the request was admitted with. CLIENT UNBLOCK sends it at once (the request was admitted: its
 * reply is the admission), ERROR answers -UNBLOCKED; a disconnect ends it. Inside MULTI, a script or the
 * replication stream the reply is sent at once.
 *
 * A blocked client (a held reply, or a waiter of wait.c) gets its answer through this file's reply
 * callback: the outcome travels as the private data of RedisModule_UnblockClient. */
#include <string.h>

#include "answer.h"
#include "rl_module.h"

int rl_can_block(RedisModuleCtx *ctx) {
    int flags = RedisModule_GetContextFlags(ctx);
    return !(flags & (REDISMODULE_CTX_FLAGS_MULTI | REDISMODULE_CTX_FLAGS_LUA | REDISMODULE_CTX_FLAGS_DENY_BLOCKING |
                      REDISMODULE_CTX_FLAGS_REPLICATED | REDISMODULE_CTX_FLAGS_LOADING));
}

int rl_answer_error(RedisModuleCtx *ctx, rl_counters *stats, const char *err) {
    rl_tally t = {RL_TALLY_ERROR, 0, 0, 0, 0, 0};
    rl_stats_count(stats, &t);
    return err ? RedisModule_ReplyWithError(ctx, err) : RedisModule_WrongArity(ctx);
}

void rl_answer_gone(const rl_call *call) {
    rl_tally t = {RL_TALLY_GONE, 0, 0, 0, 0, 0};
    rl_stats_count(call->stats, &t);
    rl_clients_waiting--;
}

int rl_answer_unblocked(RedisModuleCtx *ctx, const rl_call *call, const rl_outcome *o) {
    rl_answer_count(call, o);
    rl_clients_waiting--;
    return rl_send_outcome(ctx, o);
}

/* --- blocked clients -------------------------------------------------------------------------------------- */

static int reply_cb(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    return rl_send_outcome(ctx, RedisModule_GetBlockedClientPrivateData(ctx));
}

static void free_cb(RedisModuleCtx *ctx, void *privdata) {
    (void)ctx;
    if (privdata) RedisModule_Free(privdata);
}

RedisModuleBlockedClient *rl_answer_block(RedisModuleCtx *ctx, RedisModuleCmdFunc timeout_cb) {
    rl_clients_waiting++;
    return RedisModule_BlockClient(ctx, reply_cb, timeout_cb, free_cb, 0);
}

/* Unblock bc with a copy of o as its reply (reply_cb sends it, free_cb frees it). */
static void unblock_with(RedisModuleBlockedClient *bc, const rl_outcome *o) {
    rl_outcome *copy = RedisModule_Alloc(sizeof *copy);
    *copy = *o;
    if (copy->error == o->errbuf) copy->error = copy->errbuf;
    rl_clients_waiting--;
    RedisModule_UnblockClient(bc, copy);
}

void rl_answer_blocked(RedisModuleBlockedClient *bc, const rl_call *call, const rl_outcome *o) {
    rl_answer_count(call, o);
    unblock_with(bc, o);
}

/* --- BLOCK: held replies ---------------------------------------------------------------------------------- */

typedef struct held {
    RedisModuleBlockedClient *bc;
    int db;
    rl_call *call; /* kept: its keys retained */
    rl_reply reply;
    RedisModuleTimerID timer;
} held;

static RedisModuleDict *holds; /* the RedisModuleBlockedClient pointer's bytes -> held */

static held *held_of(RedisModuleBlockedClient *bc) {
    return holds ? RedisModule_DictGetC(holds, &bc, sizeof bc, NULL) : NULL;
}

static void held_free(held *h) {
    RedisModule_DictDelC(holds, &h->bc, sizeof h->bc, NULL);
    rl_call_free(h->call);
    RedisModule_Free(h);
}

/* The reply of a held request, its fields read again now. */
static void held_outcome(RedisModuleCtx *ctx, held *h, rl_outcome *o) {
    rl_outcome now;
    rl_call_decide(ctx, h->call, RL_F_DRYRUN, 0, &now);
    memset(o, 0, sizeof *o);
    o->n = 1;
    o->replies[0] = h->reply;
    if (!now.error) {
        o->replies[0].limit = now.replies[0].limit;
        o->replies[0].remaining = now.replies[0].remaining;
        o->replies[0].reset_after_ms = now.replies[0].reset_after_ms;
    }
}

static void on_held_timer(RedisModuleCtx *ctx, void *data) {
    held *h = data;
    rl_outcome o;
    RedisModule_SelectDb(ctx, h->db);
    held_outcome(ctx, h, &o);
    unblock_with(h->bc, &o);
    held_free(h);
}

/* CLIENT UNBLOCK (TIMEOUT): the reply at once. Redis then unblocks the client itself. */
static int held_timeout_cb(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    RedisModuleBlockedClient *bc = RedisModule_GetBlockedClientHandle(ctx);
    held *h = held_of(bc);
    if (!h) return RedisModule_ReplyWithNull(ctx);
    rl_outcome o;
    RedisModule_StopTimer(ctx, h->timer, NULL);
    held_outcome(ctx, h, &o);
    held_free(h);
    rl_clients_waiting--;
    rl_send_outcome(ctx, &o);
    RedisModule_UnblockClient(bc, NULL);
    return REDISMODULE_OK;
}

/* A disconnect, or CLIENT UNBLOCK ... ERROR: the admission stands, its reply is not sent. */
static void held_disconnect_cb(RedisModuleCtx *ctx, RedisModuleBlockedClient *bc) {
    held *h = held_of(bc);
    if (!h) return;
    RedisModule_StopTimer(ctx, h->timer, NULL);
    held_free(h);
    rl_clients_waiting--;
    RedisModule_UnblockClient(bc, NULL);
}

int rl_answer_hold(RedisModuleCtx *ctx, const rl_call *call, const rl_outcome *o) {
    const rl_reply *reply = &o->replies[0];
    held *h = RedisModule_Alloc(sizeof *h);
    h->db = RedisModule_GetSelectedDb(ctx);
    h->call = rl_call_keep(call);
    h->reply = *reply;
    h->bc = rl_answer_block(ctx, held_timeout_cb);
    RedisModule_SetDisconnectCallback(h->bc, held_disconnect_cb);
    if (!holds) holds = RedisModule_CreateDict(NULL);
    RedisModule_DictSetC(holds, &h->bc, sizeof h->bc, h);
    h->timer = RedisModule_CreateTimer(ctx, reply->wait_ms, on_held_timer, h);
    return REDISMODULE_OK;
}
