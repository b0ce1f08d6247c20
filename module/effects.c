/* effects.c -- whether anything can receive the effects a command replicates, and so whether to build them.
 *
 * Every write replicates its effect (RL.SETSTATE, DEL, ZADD...) and never the command, because the
 * commands read the clock. Building an effect costs: RedisModule_Replicate looks its command up by name
 * and copies its arguments, about a third of RL.TOKEN's time in the server. And with no AOF, no
 * replication backlog and no replica, Redis then drops it (shouldPropagate() in server.c, the same in
 * Redis 7.0, 8.0 and Valkey 8.1: AOF on, or a primary with a backlog or a replica). Only then is the effect
 * skipped: the write calls RedisModule_ReplicateVerbatim instead, which in that state propagates nothing and
 * only counts the change (server.dirty++) for the save points, as RedisModule_Replicate would have.
 *
 * The state, one of three:
 *   UNKNOWN  at load, and after any event below: the next write asks the server (probe);
 *   NONE     the probe found no consumer: writes skip their effects;
 *   MAYBE    a consumer may exist: every write builds its effect, from then on (sticky, never cleared).
 * The probe reads exactly what shouldPropagate() reads: the context flags (AOF on; a replica, whose own
 * writes would go to its AOF and whose backlog serves sub-replicas once promoted; loading), and INFO
 * replication (repl_backlog_active, connected_slaves). Any doubt (a field missing) counts as MAYBE. It costs
 * one INFO section, once per event, never per call.
 *
 * Why events are enough. Between two probes, shouldPropagate() can turn true only by:
 *   - AOF turned on: CONFIG SET appendonly (the config event fires before the next command runs), or a
 *     replica's sync or a load (loading and role events);
 *   - becoming a primary with a backlog: REPLICAOF NO ONE, FAILOVER (role event); a restart that loads
 *     an RDB carrying replication info, whose backlog partial resyncs may read (loading events; the first
 *     probe after load sees the backlog);
 *   - a replica's SYNC or PSYNC on a primary without a backlog, which creates the backlog with a fresh
 *     replication ID. No event fires then; the fork for its RDB (fork event) comes in the same call, or, with
 *     diskless sync and repl-diskless-sync-delay (or another child running), up to seconds later. Writes in
 *     between call ReplicateVerbatim, which does feed the backlog, but no replica ever reads that part:
 *     each replica starts (+FULLRESYNC replid offset, the main channel of Redis 8's rdb-channel sync, the
 *     $ENDOFF of Valkey's dual-channel sync) at the offset of the fork, and the RDB made by the fork holds
 *     those writes. The replication ID is new, so no replica holds an older offset of it. The one way to
 *     read that part would be a hand-made PSYNC naming the new ID (from INFO) and an offset before the fork.
 * The AOF is never fed a command: a write only skips while the probe saw the AOF off, and the config event
 * makes the next write probe again. */
#include "rl_module.h"

typedef enum { CONSUMERS_UNKNOWN, CONSUMERS_NONE, CONSUMERS_MAYBE } consumers;

static consumers state = CONSUMERS_UNKNOWN;

static consumers probe(RedisModuleCtx *ctx) {
    const int busy = REDISMODULE_CTX_FLAGS_AOF | REDISMODULE_CTX_FLAGS_SLAVE | REDISMODULE_CTX_FLAGS_LOADING |
                     REDISMODULE_CTX_FLAGS_ASYNC_LOADING;
    if (RedisModule_GetContextFlags(ctx) & busy) return CONSUMERS_MAYBE;
    RedisModuleServerInfoData *info = RedisModule_GetServerInfo(ctx, "replication");
    if (!info) return CONSUMERS_MAYBE;
    int err_backlog = 0, err_replicas = 0;
    long long backlog = RedisModule_ServerInfoGetFieldSigned(info, "repl_backlog_active", &err_backlog);
    long long replicas = RedisModule_ServerInfoGetFieldSigned(info, "connected_slaves", &err_replicas);
    RedisModule_FreeServerInfo(ctx, info);
    return err_backlog || err_replicas || backlog != 0 || replicas != 0 ? CONSUMERS_MAYBE : CONSUMERS_NONE;
}

int rl_effects_on(RedisModuleCtx *ctx) {
    if (rl_effects_forced) return 1;
    if (state == CONSUMERS_UNKNOWN) state = probe(ctx);
    if (state == CONSUMERS_MAYBE) return 1;
    RedisModule_ReplicateVerbatim(ctx); /* propagates nothing here; counts the change for save points */
    return 0;
}

int rl_effects_state(void) { return state == CONSUMERS_UNKNOWN ? -1 : state == CONSUMERS_MAYBE; }

/* Something that may bring a consumer happened: ask again at the next write (unless already sticky). */
static void on_event(RedisModuleCtx *ctx, RedisModuleEvent event, uint64_t subevent, void *data) {
    (void)ctx, (void)event, (void)subevent, (void)data;
    if (state == CONSUMERS_NONE) state = CONSUMERS_UNKNOWN;
}

int rl_effects_register(RedisModuleCtx *ctx) {
    const RedisModuleEvent events[] = {
        RedisModuleEvent_ForkChild,     RedisModuleEvent_ReplicationRoleChanged, RedisModuleEvent_Loading,
        RedisModuleEvent_ReplicaChange, RedisModuleEvent_MasterLinkChange,       RedisModuleEvent_Config,
    };
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++)
        if (RedisModule_SubscribeToServerEvent(ctx, events[i], on_event) != REDISMODULE_OK) {
            /* Without every signal, never skip. */
            RedisModule_Log(ctx, "notice", "ratelimit: a server event is missing: effects are always replicated");
            state = CONSUMERS_MAYBE;
            break;
        }
    return REDISMODULE_OK;
}
