/* ratelimit.c -- the module's entry point.
 *
 * Loads as module `ratelimit`: registers the limiters' data types (cell_type.c, lease_type.c), every command
 * (command.c's table: the RL.* commands, CL.THROTTLE unless loaded with the argument `no-cl-throttle`, and
 * RL.CLOCK when loaded with `test-clock`), its INFO section (stats.c), the server events that say whether
 * effects must be replicated (effects.c), the watch on evictions and on the maxmemory policy (evict.c), and the clock's hook into waiting (wait.c). Only RedisModule_OnLoad is
 * exported from the shared object; everything else is hidden. */
#include <string.h>
#include <strings.h>

#include "compat.h"
#include "rl_module.h"

/* 10100: 1.1.0 (read-only forms, RL.ALL, RL.RESET, REFUND, ATMOST, CL.THROTTLE, INFO); 10200: 1.2.0 (RL.SMOOTH,
 * states of up to 64 words, skipping dead effects); 10300: 1.3.0 (concurrency leases: RL.ACQUIRE, RL.RELEASE,
 * RL.RENEW, RL.LEASES); 10400: 1.4.0 (RL.QUOTA, FORCE, LOCKOUT, RL.BLOCK, RL.UNBLOCK, RL.LOCKINFO); 10500: 1.5.0
 * (RL.POLICY, RL.CHECK, RL.CHECK_RO); COMMAND DOCS reports versions in this form. */
#define RL_MODULE_VERSION 10500

__attribute__((visibility("default"))) int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv,
                                                              int argc) {
    if (RedisModule_Init(ctx, "ratelimit", RL_MODULE_VERSION, REDISMODULE_APIVER_1) == REDISMODULE_ERR)
        return REDISMODULE_ERR;

    int test_clock = 0, cl_throttle = 1;
    for (int i = 0; i < argc; i++) {
        size_t len;
        const char *arg = RedisModule_StringPtrLen(argv[i], &len);
        if (len == 10 && strncasecmp(arg, "test-clock", 10) == 0) {
            test_clock = 1;
        } else if (len == 14 && strncasecmp(arg, "no-cl-throttle", 14) == 0) {
            cl_throttle = 0;
        } else {
            RedisModule_Log(ctx, "warning", "ratelimit: unknown module argument (known: test-clock, no-cl-throttle)");
            return REDISMODULE_ERR;
        }
    }

    /* Keys are signalled by the commands that change them (command.c), not by every open for writing. */
    RedisModule_SetModuleOptions(ctx, REDISMODULE_OPTIONS_HANDLE_IO_ERRORS | REDISMODULE_OPTION_NO_IMPLICIT_SIGNAL_MODIFIED);
    if (rl_compat_init(ctx) != REDISMODULE_OK) return REDISMODULE_ERR;
    if (rl_cell_types_register(ctx) != REDISMODULE_OK) return REDISMODULE_ERR;
    if (rl_lease_types_register(ctx) != REDISMODULE_OK) return REDISMODULE_ERR;
    if (rl_lock_type_register(ctx) != REDISMODULE_OK) return REDISMODULE_ERR;
    /* (the policies, kept as aux data of the type of the keys they check: policy.c) */
    if (rl_bundle_type_register(ctx, rl_policy_aux_load, rl_policy_aux_save) != REDISMODULE_OK) return REDISMODULE_ERR;
    rl_lease_ids_init(test_clock);
    if (rl_commands_register(ctx, test_clock, cl_throttle) != REDISMODULE_OK) return REDISMODULE_ERR;
    if (rl_stats_register(ctx) != REDISMODULE_OK) return REDISMODULE_ERR;
    if (rl_policy_register(ctx) != REDISMODULE_OK) return REDISMODULE_ERR;
    if (rl_effects_register(ctx) != REDISMODULE_OK) return REDISMODULE_ERR;
    if (rl_evict_register(ctx) != REDISMODULE_OK) return REDISMODULE_ERR;
    rl_wait_init();
    return REDISMODULE_OK;
}
