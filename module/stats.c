/* stats.c -- the module's INFO section: how many calls each command took, admitted, denied, with how many
 * units, how many failed, how many limiter keys they created (RL.RESET: deleted), and how many clients wait
 * now (WAIT, and held BLOCK replies), and how many limiter keys the server evicted (evict.c).
 *
 * `INFO ratelimit` (and `INFO everything`, `INFO modules`) shows one numeric field per counter,
 * "ratelimit_<command>_<counter>:<n>" (Redis prefixes a module's fields with its name), so exporters that
 * scrape INFO read them as they are. Every command has the same six counters but RL.RESET, which decides
 * nothing and so has calls, errors and keys_deleted, and RL.RELEASE and RL.RENEW, which have calls, released
 * or renewed (answered 1), missing (answered 0: no such lease) and errors; CL.THROTTLE's are shown only
 * while it is registered.
 * Every call is counted once, when it is answered (answer.c; CL.THROTTLE and RL.RESET, which answer
 * themselves, likewise), through rl_stats_count, the one place where a counter changes: a call that waits is
 * counted with the verdict it finally gets. Counting costs a few increments of a static array on the hot path. Redis 7.0 tells a module nothing of
 * CONFIG RESETSTAT, so the counters run from the module's load. */
#include <stdio.h>

#include "rl_module.h"

rl_counters rl_stats[RL_NSTATS];
long long rl_clients_waiting;
int rl_cl_throttle_on;

/* "token", "token_ro", ..., "all", "all_ro", "cl_throttle", "reset": the counters' names, in rl_stats order. */
static void stat_name(int i, char *out, size_t n) {
    static const char *const others[] = {"all", "all_ro", "cl_throttle", "reset", "release", "renew", "check", "check_ro"};
    if (i >= RL_STAT_ALL) {
        snprintf(out, n, "%s", others[i - RL_STAT_ALL]);
        return;
    }
    const char *command = rl_limiters[i / 2].syntax->name + 3; /* past "rl." */
    snprintf(out, n, "%s%s", command, i % 2 ? "_ro" : "");
}

static void add_field(RedisModuleInfoCtx *ctx, const char *command, const char *counter, long long v) {
    char field[64];
    snprintf(field, sizeof field, "%s_%s", command, counter);
    RedisModule_InfoAddFieldLongLong(ctx, field, v);
}

static void info(RedisModuleInfoCtx *ctx, int for_crash_report) {
    (void)for_crash_report;
    if (RedisModule_InfoAddSection(ctx, "") == REDISMODULE_ERR) return;
    RedisModule_InfoAddFieldLongLong(ctx, "clients_waiting", rl_clients_waiting);
    RedisModule_InfoAddFieldLongLong(ctx, "effects_replicated", rl_effects_state()); /* effects.c */
    RedisModule_InfoAddFieldLongLong(ctx, "evicted_keys", rl_evicted_keys()); /* evict.c */
    for (int i = 0; i < RL_NSTATS; i++) {
        if (i == RL_STAT_CL_THROTTLE && !rl_cl_throttle_on) continue;
        char command[32];
        stat_name(i, command, sizeof command);
        const rl_counters *c = &rl_stats[i];
        add_field(ctx, command, "calls", c->calls);
        if (i == RL_STAT_RESET) {
            add_field(ctx, command, "errors", c->errors);
            add_field(ctx, command, "keys_deleted", c->keys_deleted);
            continue;
        }
        if (i == RL_STAT_RELEASE || i == RL_STAT_RENEW) { /* answered 1 (done), answered 0 (no such lease) */
            add_field(ctx, command, i == RL_STAT_RELEASE ? "released" : "renewed", c->admitted);
            add_field(ctx, command, "missing", c->denied);
            add_field(ctx, command, "errors", c->errors);
            continue;
        }
        add_field(ctx, command, "admitted", c->admitted);
        add_field(ctx, command, "denied", c->denied - c->locked);
        add_field(ctx, command, "locked", c->locked);
        add_field(ctx, command, "units_admitted", c->units_admitted);
        add_field(ctx, command, "errors", c->errors);
        add_field(ctx, command, "keys_created", c->keys_created);
    }
    rl_policy_info(ctx);
}

int rl_stats_register(RedisModuleCtx *ctx) { return RedisModule_RegisterInfoFunc(ctx, info); }

