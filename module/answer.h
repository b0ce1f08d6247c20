/* answer.h -- the end of every call (answer.c): count it once (rl_stats_count), then answer it, now or
 * later. The common path, rl_answer, is inline: every call passes here. */
#ifndef RL_ANSWER_H
#define RL_ANSWER_H

#include "rl_module.h"

/* 1 when this call may block its client (not in MULTI, a script, a replicated or loading stream). */
int rl_can_block(RedisModuleCtx *ctx);
/* Hold an admitted reply server-side for its wait_ms (BLOCK), its fields made true when it is sent. */
int rl_answer_hold(RedisModuleCtx *ctx, const rl_call *call, const rl_outcome *o);
/* What a decided call adds to its counters. */
static inline void rl_answer_count(const rl_call *call, const rl_outcome *o) {
    rl_counters *stats = call->stats;
    if (__builtin_expect(call->policy != NULL, 0)) rl_policy_count(call->policy, o);
    /* (locked: read only for a decided call, whose outcome sets it; only a denial has it) */
    rl_tally t = {o->error ? RL_TALLY_ERROR : RL_TALLY_DECIDED, (int)o->allowed, o->units, o->keys_created, 0,
                  o->locked};
    rl_stats_count(stats, &t);
}
/* Count a decided call, then reply now, or with BLOCK hold the admitted reply (the one BLOCK dispatch).
 * Inline: every call passes here. */
static inline int rl_answer(RedisModuleCtx *ctx, const rl_call *call, const rl_outcome *o) {
    rl_answer_count(call, o);
    if ((call->flags & (RL_F_BLOCK | RL_F_DRYRUN)) == RL_F_BLOCK && !o->error && o->allowed &&
        o->replies[0].wait_ms > 0 && rl_can_block(ctx))
        return rl_answer_hold(ctx, call, o);
    return rl_send_outcome(ctx, o);
}
/* A call that failed before it was decided: its error (NULL: the wrong number of arguments). */
int rl_answer_error(RedisModuleCtx *ctx, rl_counters *stats, const char *err);
/* A blocked client's answer, sent by answer.c's reply callback, which wait.c blocks its clients with. */
void rl_answer_blocked(RedisModuleBlockedClient *bc, const rl_call *call, const rl_outcome *o);
RedisModuleBlockedClient *rl_answer_block(RedisModuleCtx *ctx, RedisModuleCmdFunc timeout_cb);
/* In a blocked client's timeout callback (CLIENT UNBLOCK): its answer, replied in ctx. */
int rl_answer_unblocked(RedisModuleCtx *ctx, const rl_call *call, const rl_outcome *o);
/* A blocked call that ends with no answer (disconnect, CLIENT UNBLOCK ... ERROR): counted as a call only. */
void rl_answer_gone(const rl_call *call);

#endif
