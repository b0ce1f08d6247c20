/* evict.h -- what memory pressure asks of a write: the two flags evict.c keeps from maxmemory and
 * maxmemory-policy (at load and on every CONFIG SET of either), and the two checks every write path makes
 * with them: refuse the write past maxmemory where Redis refuses deny-oom commands (rl_write_refused:
 * under noeviction, or when the policy has nothing left to evict), and mark the written key
 * as hot under an LFU policy (rl_lfu_keep). Apart from rl_module.h because the write paths (call.c,
 * cl_throttle.c, leases.c, lock.c, store_bundle.c, wait.c) are what include it, not the whole module. */
#ifndef RL_EVICT_H
#define RL_EVICT_H

#include "redismodule.h"

/* Past maxmemory, where Redis refuses a deny-oom command: under noeviction, or under a policy that evicts
 * when it found nothing left to evict (volatile-*: no key with a TTL; allkeys-*: no key at all).
 * The limiter commands take no deny-oom, so that a call that writes nothing (a denial, DRYRUN, COST 0, a
 * waiter that keeps waiting) is still answered; the call path asks this only when it is about to write, and
 * then answers RL_OOM_ERROR with nothing changed. REDISMODULE_CTX_FLAGS_OOM is set by the very test Redis
 * applies before a deny-oom command (used memory, less replication buffers, above maxmemory). Under a policy
 * that evicts, the flag alone does not tell a server that has nothing left to evict (Redis refuses) from
 * one still freeing memory (a time-limited or lazy eviction: Redis lets the command in), so then
 * rl_nothing_to_evict (evict.c) counts what the policy could still take; that is asked only past maxmemory.
 * Never for the replication stream or while loading: Redis refuses those nothing either. */
#define RL_OOM_ERROR "OOM command not allowed when used memory > 'maxmemory'."
/* Whether and how to test (evict.c keeps it, at load and on CONFIG SET): off without a maxmemory. The flags
 * cost some 130 instructions a write when on. */
enum { RL_OOM_OFF, RL_OOM_NOEVICTION, RL_OOM_ALLKEYS, RL_OOM_VOLATILE };
extern int rl_oom_check;
int rl_nothing_to_evict(RedisModuleCtx *ctx, int volatile_only);
static inline int rl_write_refused(RedisModuleCtx *ctx) {
    if (!rl_oom_check) return 0;
    int flags = RedisModule_GetContextFlags(ctx);
    if (!(flags & REDISMODULE_CTX_FLAGS_OOM) || (flags & (REDISMODULE_CTX_FLAGS_REPLICATED | REDISMODULE_CTX_FLAGS_LOADING)))
        return 0;
    return rl_oom_check == RL_OOM_NOEVICTION || rl_nothing_to_evict(ctx, rl_oom_check == RL_OOM_VOLATILE);
}

/* The LFU hint (docs/eviction-protection.md): under an LFU maxmemory-policy (allkeys-lfu, volatile-lfu) with a
 * maxmemory, every write of a limiter key sets its LFU counter to the top, 255, so that an exhausted limiter
 * left idle outlives fresh data: a new key starts at 5, and a counter loses one per lfu-decay-time minutes
 * of idleness, so 255 keeps the key ahead for about 250 of them (4 hours at the default). Only on a write:
 * a call that writes nothing (a denial, DRYRUN, _RO) opens the key as any read does, and the server's own
 * LFU update applies; the state the key holds is what a write last left, so the write is the moment to
 * mark it. Never above 255: RedisModule_SetLFU asserts lfu_freq <= 255 and aborts Redis 7.0. evict.c keeps
 * the flag (at load and on CONFIG SET); off, this is one test of it. */
#define RL_LFU_TOP 255
extern int rl_lfu_hint;
static inline void rl_lfu_keep(RedisModuleKey *key) {
    if (__builtin_expect(rl_lfu_hint, 0) && key) RedisModule_SetLFU(key, RL_LFU_TOP); /* ERR on an emptied key */
}

#endif
