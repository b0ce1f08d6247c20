/* evict.c -- eviction is never silent: count the limiter keys the server evicts (INFO ratelimit's
 * evicted_keys), log a warning when it happens (at most one line a minute), and warn at load and on CONFIG
 * SET when maxmemory and maxmemory-policy let the server evict limiter keys at all.
 *
 * An evicted limiter is a reset limit: its next call finds no key and starts over with a full budget. The
 * server tells a module of an eviction through the keyspace notification "evicted", but on Redis 7.0 it
 * fires after the key is gone, so the key's type cannot be read there any more. What does know the type is
 * the data type's unlink callback: the server calls it, with the key's name, just before (and on every
 * server the project supports, with the very same key object as) the "evicted" notification of that key.
 * So unlink notes the name of the limiter key it is unlinking (a copy: unlink runs for every deletion, DEL
 * and expiry too), and the notification counts the eviction only when it names the key unlink just noted.
 * A plain key the server evicts matches nothing and is not counted. Nothing of this runs in a command's
 * own path: unlink runs when a key leaves the keyspace (or is overwritten as a whole), the notification
 * only on eviction.
 *
 * The sliding log is a plain sorted set: no unlink callback is ever called for it, and on Redis 7.0 nothing
 * tells a module of a key's type before its eviction, so its evictions are not counted (docs/operations.md).
 *
 * The warning about the policy needs no hook in a command either: the server event for CONFIG SET
 * (RedisModuleEvent_Config, Redis 7.0 and later) re-checks the context's flags, which say whether
 * maxmemory is set with a policy that may evict (every policy but noeviction may evict a limiter key:
 * volatile-* ones too, since limiter keys always carry a TTL). The same check notes how a write tests for
 * OOM: not at all without a maxmemory (refresh_write_flags, rl_nothing_to_evict); and whether a
 * write marks its key with the LFU hint: only with a maxmemory under an LFU policy (rl_module.h,
 * rl_lfu_keep; docs/eviction-protection.md has the measurements: the one policy the API lets the module
 * help). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rl_module.h"
#include "evict.h"

#define EVICT_LOG_EVERY_MS 60000 /* at most one eviction line a minute */

static long long evicted_keys;  /* limiter keys evicted since load (INFO) */
static long long evicted_unlogged; /* of which not yet in a log line */
static long long last_line_ms = -1; /* when the last eviction line was logged; -1: never */
static int line_timer_armed;       /* a timer will log what the minute collected */

/* The limiter key unlink noted last: its key object (compared first, cheaply) and a copy of its name
 * (so a key object freed and reused since cannot match a name it does not carry). */
static const void *unlinked_key;
static char *unlinked_name;
static size_t unlinked_len, unlinked_cap;

static int evictable_now; /* the last check found maxmemory set with a policy that may evict */
int rl_oom_check;         /* RL_OOM_*: how the call path tests for OOM (evict.h, rl_write_refused) */
int rl_lfu_hint;          /* maxmemory set, an LFU policy: every write marks its key (rl_module.h, rl_lfu_keep) */

void rl_evict_unlink(RedisModuleString *key, const void *value) {
    (void)value;
    size_t len;
    const char *name = RedisModule_StringPtrLen(key, &len);
    if (len > unlinked_cap) {
        unlinked_name = RedisModule_Realloc(unlinked_name, len);
        unlinked_cap = len;
    }
    if (len) memcpy(unlinked_name, name, len);
    unlinked_len = len;
    unlinked_key = key;
}

long long rl_evicted_keys(void) { return evicted_keys; }

static void log_evictions(RedisModuleCtx *ctx) {
    RedisModule_Log(ctx, "warning",
                    "ratelimit: %lld limiter key(s) evicted since the last such line (%lld since load): each "
                    "starts over with a full budget; run limiters on a server with maxmemory-policy "
                    "noeviction (docs/operations.md, Memory and eviction)",
                    evicted_unlogged, evicted_keys);
    evicted_unlogged = 0;
    last_line_ms = (long long)RedisModule_Milliseconds();
}

/* The minute after a line is over: log what it collected, if anything. */
static void line_timer(RedisModuleCtx *ctx, void *data) {
    (void)data;
    line_timer_armed = 0;
    if (evicted_unlogged > 0) log_evictions(ctx);
}

static int on_evicted(RedisModuleCtx *ctx, int type, const char *event, RedisModuleString *key) {
    (void)type;
    (void)event;
    if (key != unlinked_key) return REDISMODULE_OK;
    size_t len;
    const char *name = RedisModule_StringPtrLen(key, &len);
    unlinked_key = NULL;
    if (len != unlinked_len || (len && memcmp(name, unlinked_name, len) != 0)) return REDISMODULE_OK;
    evicted_keys++;
    evicted_unlogged++;
    long long now = (long long)RedisModule_Milliseconds();
    if (last_line_ms < 0 || now - last_line_ms >= EVICT_LOG_EVERY_MS) {
        log_evictions(ctx);
    } else if (!line_timer_armed) {
        line_timer_armed = 1;
        RedisModule_CreateTimer(ctx, last_line_ms + EVICT_LOG_EVERY_MS - now, line_timer, NULL);
    }
    return REDISMODULE_OK;
}

/* The server's maxmemory-policy, into out ("?" if CONFIG GET does not answer as expected). */
static void policy_name(RedisModuleCtx *ctx, char *out, size_t n) {
    snprintf(out, n, "?");
    RedisModuleCallReply *r = RedisModule_Call(ctx, "CONFIG", "cc", "GET", "maxmemory-policy");
    if (!r) return;
    if (RedisModule_CallReplyType(r) == REDISMODULE_REPLY_ARRAY && RedisModule_CallReplyLength(r) == 2) {
        size_t len;
        const char *v = RedisModule_CallReplyStringPtr(RedisModule_CallReplyArrayElement(r, 1), &len);
        if (v) snprintf(out, n, "%.*s", (int)len, v);
    }
    RedisModule_FreeCallReply(r);
}

/* The server's maxmemory in bytes (0 if CONFIG GET does not answer as expected: no limit). */
static long long maxmemory_bytes(RedisModuleCtx *ctx) {
    long long bytes = 0;
    RedisModuleCallReply *r = RedisModule_Call(ctx, "CONFIG", "cc", "GET", "maxmemory");
    if (!r) return 0;
    if (RedisModule_CallReplyType(r) == REDISMODULE_REPLY_ARRAY && RedisModule_CallReplyLength(r) == 2) {
        size_t len;
        const char *v = RedisModule_CallReplyStringPtr(RedisModule_CallReplyArrayElement(r, 1), &len);
        char digits[32];
        if (v && len < sizeof digits) {
            memcpy(digits, v, len);
            digits[len] = '\0';
            bytes = strtoll(digits, NULL, 10);
        }
    }
    RedisModule_FreeCallReply(r);
    return bytes;
}

/* How a write is tested past maxmemory (evict.h, rl_write_refused): not at all without a maxmemory; under
 * noeviction, the context's OOM flag; under a policy that evicts, the flag and then what is left to evict.
 * The policy from the configuration, not from the context's flags, which a replica that ignores maxmemory
 * reports without it and which no event refreshes when it is promoted. */
static void refresh_write_flags(RedisModuleCtx *ctx, const char *policy) {
    long long maxmemory = maxmemory_bytes(ctx);
    if (maxmemory <= 0)
        rl_oom_check = RL_OOM_OFF;
    else if (strcmp(policy, "noeviction") == 0)
        rl_oom_check = RL_OOM_NOEVICTION;
    else
        rl_oom_check = strncmp(policy, "volatile-", 9) == 0 ? RL_OOM_VOLATILE : RL_OOM_ALLKEYS;
    rl_lfu_hint = maxmemory > 0 && (strcmp(policy, "allkeys-lfu") == 0 || strcmp(policy, "volatile-lfu") == 0);
}

/* Past maxmemory under a policy that evicts: whether the policy has nothing left to take, so that Redis
 * refuses deny-oom commands now (its eviction found nothing to free). From INFO keyspace: the keys of every
 * database (allkeys-*), or those with a TTL (volatile-*). A server that still has something to evict frees
 * it before the next command (or is doing so, lazily or in time-limited steps): Redis lets commands in then,
 * and so does the module. Asked only when the OOM flag is set, so a server within its memory never pays the
 * INFO call. */
int rl_nothing_to_evict(RedisModuleCtx *ctx, int volatile_only) {
    RedisModuleCallReply *r = RedisModule_Call(ctx, "INFO", "c", "keyspace");
    if (!r) return 0;
    size_t len;
    const char *text = RedisModule_CallReplyStringPtr(r, &len);
    const char *field = volatile_only ? "expires=" : "keys=";
    size_t field_len = strlen(field);
    long long evictable = 0;
    for (size_t i = 0; text && i + field_len <= len; i++) {
        /* "db0:keys=3,expires=1,avg_ttl=0": a field starts the line's values or follows a comma */
        if ((i == 0 || text[i - 1] == ':' || text[i - 1] == ',') && memcmp(text + i, field, field_len) == 0)
            evictable += strtoll(text + i + field_len, NULL, 10);
    }
    RedisModule_FreeCallReply(r);
    return evictable == 0;
}

/* Warn when the server may evict limiter keys and did not before (or at load), and note whether the call
 * path must test for OOM. */
static void check_policy(RedisModuleCtx *ctx) {
    int flags = RedisModule_GetContextFlags(ctx);
    int evictable = (flags & REDISMODULE_CTX_FLAGS_EVICT) != 0;
    char policy[64];
    policy_name(ctx, policy, sizeof policy);
    refresh_write_flags(ctx, policy);
    if (evictable && !evictable_now) {
        RedisModule_Log(ctx, "warning",
                        "ratelimit: maxmemory-policy %s with maxmemory set lets the server evict limiter keys "
                        "(volatile-* policies too: limiter keys carry a TTL), and an evicted limiter starts over "
                        "with a full budget; run limiters on a server with maxmemory-policy noeviction "
                        "(docs/operations.md, Memory and eviction)",
                        policy);
    }
    evictable_now = evictable;
}

static void on_config(RedisModuleCtx *ctx, RedisModuleEvent e, uint64_t sub, void *data) {
    (void)e;
    if (sub != REDISMODULE_SUBEVENT_CONFIG_CHANGE) return;
    const RedisModuleConfigChange *change = data;
    for (uint32_t i = 0; i < change->num_changes; i++) {
        const char *name = change->config_names[i];
        if (strcmp(name, "maxmemory") == 0 || strcmp(name, "maxmemory-policy") == 0) {
            check_policy(ctx);
            return;
        }
    }
}

int rl_evict_register(RedisModuleCtx *ctx) {
    if (RedisModule_SubscribeToKeyspaceEvents(ctx, REDISMODULE_NOTIFY_EVICTED, on_evicted) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    if (RedisModule_SubscribeToServerEvent(ctx, RedisModuleEvent_Config, on_config) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    check_policy(ctx);
    return REDISMODULE_OK;
}
