/* compat.c -- what newer servers offer, used when the running server has it.
 *
 * The module is built once, against the 7.0 module API header, and loads on Redis 7.0, Redis 7.2+/8 and
 * Valkey 8. The functions a newer server adds are not in that header, so they are looked up by name at load
 * (RedisModule_GetApi, as RedisModule_Init looks up every other one), with their signatures declared here,
 * and stay NULL on a server that lacks them:
 *   - RedisModule_AddACLCategory (7.4+, Valkey 8) and RedisModule_SetCommandACLCategories (7.2+): every
 *     RL.* command in @ratelimit, and in @read/@write and @fast where true, so `+@ratelimit` grants them
 *     (7.0 puts module commands in no category: they are granted by name);
 *   - REDISMODULE_OPEN_KEY_NOEFFECTS (7.2+, checked through RedisModule_GetOpenKeyModesAll): DRYRUN and
 *     the read-only forms read their key without touching its LRU/LFU or the keyspace hit/miss stats;
 *   - RedisModule_CachedMicroseconds (7.2+): the time the server cached for the current command, instead
 *     of a clock call per command. */
#include "compat.h"

#include <stdint.h>

#define OPEN_KEY_NOEFFECTS (1 << 20) /* REDISMODULE_OPEN_KEY_NOEFFECTS of the 7.2+ header */

static int (*add_acl_category)(RedisModuleCtx *ctx, const char *name);
static int (*set_command_acl_categories)(RedisModuleCommand *command, const char *categories);
static int (*get_open_key_modes_all)(void);
static long long (*cached_microseconds)(void);

static int read_mode = REDISMODULE_READ;
static int acl_category;

/* Look a function up by its RedisModule_ name, or Valkey's own. */
static void lookup(const char *name, void *fn) {
    char valkey[96];
    if (RedisModule_GetApi(name, fn) == REDISMODULE_OK) return;
    snprintf(valkey, sizeof valkey, "ValkeyModule_%s", name + sizeof "RedisModule_" - 1);
    if (RedisModule_GetApi(valkey, fn) != REDISMODULE_OK) *(void **)fn = NULL;
}

int rl_compat_init(RedisModuleCtx *ctx) {
    lookup("RedisModule_AddACLCategory", &add_acl_category);
    lookup("RedisModule_SetCommandACLCategories", &set_command_acl_categories);
    lookup("RedisModule_GetOpenKeyModesAll", &get_open_key_modes_all);
    lookup("RedisModule_CachedMicroseconds", &cached_microseconds);
    if (get_open_key_modes_all && (get_open_key_modes_all() & OPEN_KEY_NOEFFECTS)) read_mode |= OPEN_KEY_NOEFFECTS;
    /* The category must exist before any command names it; AddACLCategory works only during load. (7.2 and
     * 7.3 have the categories of commands but no module category: @read, @write and @fast only.) */
    if (add_acl_category && set_command_acl_categories) {
        if (add_acl_category(ctx, "ratelimit") != REDISMODULE_OK) return REDISMODULE_ERR;
        acl_category = 1;
    }
    return REDISMODULE_OK;
}

int rl_compat_set_acl(RedisModuleCommand *cmd, int readonly, int fast) {
    if (!set_command_acl_categories || !cmd) return REDISMODULE_OK;
    char categories[48];
    snprintf(categories, sizeof categories, "%s%s%s", acl_category ? "ratelimit " : "", readonly ? "read" : "write",
             fast ? " fast" : "");
    return set_command_acl_categories(cmd, categories);
}

int rl_compat_read_mode(void) { return read_mode; }

int64_t rl_compat_cached_now_us(void) { return cached_microseconds ? (int64_t)cached_microseconds() : -1; }
