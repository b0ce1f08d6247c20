/* cl_throttle.c -- CL.THROTTLE key max_burst count_per_period period [quantity]: redis-cell's command,
 * answered identically on redis-cell's own keys, so a running system can swap modules with live limits.
 *
 * It is not an RL.* limiter (limiters.h) on purpose: its reply is redis-cell's five integers in whole
 * seconds, and its key is redis-cell's, a plain string holding the theoretical arrival time (TAT) in Unix
 * nanoseconds with a TTL, not a module type. The decision is algorithms/gcra_ns.c; this file parses,
 * reads the key, writes it back and replies.
 *
 * Time. The module's clock is in µs (clock.c; RL.CLOCK moves it in tests), so `now` is a whole number of
 * µs in ns (now_us * 1000) where redis-cell reads the wall clock to the ns. The TAT itself keeps full ns
 * precision: it is now plus whole emission intervals, which are any number of ns. Given the same now and
 * the same stored TAT, every reply field and the stored TAT are redis-cell's exactly; on the wall clock,
 * our now is at most 999 ns behind the instant redis-cell would have read.
 *
 * Writes. Only an allowed request of quantity > 0 writes: the new TAT as a decimal string, expiring at the
 * TAT rounded up to the ms (rl_clock_expire_at_ms, so the frozen test clock keeps keys as for RL.*).
 * A denied request or a peek (quantity 0) writes nothing. The string is written in place (StringTruncate
 * then DMA), so a key keeps one raw string object instead of a new one per call. A write is replicated as
 * its effect, SET key <tat> PXAT <ms>, never as the command: replicas and AOF replays store the primary's
 * TAT whatever their clocks. It signals the key (WATCH) and fires the keyspace event "cl.throttle" in the
 * module class (d), as every RL.* command fires its name: the event names the command, whatever the
 * value's type (redis-cell fires none).
 *
 * INFO ratelimit counts its calls as every command's: admitted (allowed, a peek included) or denied by the
 * answer, the quantity of the allowed requests that wrote, errors, and the keys it created. */
#include "cl_throttle.h"
#include "compat.h"

#include <stdio.h>
#include <string.h>

#include "../algorithms/gcra_ns.h"
#include "clock.h"
#include "parse.h"
#include "rl_module.h"
#include "evict.h"

#define CL_NAME RL_CL_THROTTLE_NAME

static const char *const arg_names[] = {"max_burst", "count_per_period", "period", "quantity"};

/* The four numbers (quantity 1 when absent), each as redis-cell reads it. */
static int parse_args(RedisModuleString **argv, int argc, rl_gcra_ns_args *a, char err[RL_ERR_LEN]) {
    int64_t v[4] = {0, 0, 0, 1};
    for (int i = 0; i < argc - 2; i++) {
        size_t len;
        const char *s = RedisModule_StringPtrLen(argv[i + 2], &len);
        if (rl_gcra_ns_parse_i64(s, len, &v[i]) != 0) {
            char shown[40];
            rl_sanitize(shown, sizeof shown, s, len);
            snprintf(err, RL_ERR_LEN, "ERR %s: couldn't parse as integer: '%s'", arg_names[i], shown);
            return -1;
        }
    }
    *a = (rl_gcra_ns_args){.max_burst = v[0], .count = v[1], .period_s = v[2], .quantity = v[3]};
    return 0;
}

/* The stored TAT of an open key: *has 0 for no key. Returns NULL or the error to reply: WRONGTYPE, or a
 * value that is not a TAT (redis-cell panics there, taking the server down). */
static const char *read_tat(RedisModuleKey *key, int *has, uint64_t *tat) {
    *has = 0;
    int type = RedisModule_KeyType(key);
    if (type == REDISMODULE_KEYTYPE_EMPTY) return NULL;
    if (type != REDISMODULE_KEYTYPE_STRING) return REDISMODULE_ERRORMSG_WRONGTYPE;
    size_t len;
    const char *s = RedisModule_StringDMA(key, &len, REDISMODULE_READ);
    if (!s || rl_gcra_ns_parse_u64(s, len, tat) != 0)
        return "ERR the key's value is not a CL.THROTTLE state (a TAT: whole nanoseconds since 1970, 0 to 2^64-1)";
    *has = 1;
    return NULL;
}

/* v in decimal, into buf (at least 20 bytes); returns the length. */
static size_t u64_decimal(uint64_t v, char *buf) {
    char tmp[20];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++) buf[i] = tmp[n - 1 - i];
    return n;
}

/* Store the TAT in place, expire the key at the TAT (rounded up to the ms), replicate that, and tell
 * watchers and subscribers. */
static void write_tat(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *keyname, int64_t now_us,
                      uint64_t tat_ns) {
    char digits[20];
    size_t len = u64_decimal(tat_ns, digits);
    RedisModule_StringTruncate(key, len);
    size_t cap;
    char *buf = RedisModule_StringDMA(key, &cap, REDISMODULE_WRITE);
    memcpy(buf, digits, len);

    /* now_us * 1000 is now in ns exactly, so this is the TAT's µs rounded up, minus now's. */
    rl_i128 reset_us = rl_ceil_div((rl_i128)tat_ns, 1000) - now_us;
    int64_t expire_at_ms = rl_clock_expire_at_ms(now_us, (int64_t)reset_us);
    RedisModule_SetAbsExpire(key, expire_at_ms);
    if (rl_effects_on(ctx)) RedisModule_Replicate(ctx, "SET", "sbcl", keyname, digits, len, "PXAT", (long long)expire_at_ms);
    RedisModule_SignalModifiedKey(ctx, keyname);
    RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_MODULE, CL_NAME, keyname);
}

static int send_reply(RedisModuleCtx *ctx, const rl_gcra_ns_result *r) {
    RedisModule_ReplyWithArray(ctx, 5);
    RedisModule_ReplyWithLongLong(ctx, r->limited);
    RedisModule_ReplyWithLongLong(ctx, r->limit);
    RedisModule_ReplyWithLongLong(ctx, r->remaining);
    RedisModule_ReplyWithLongLong(ctx, r->retry_after_s);
    return RedisModule_ReplyWithLongLong(ctx, r->reset_after_s);
}

/* Count an answered call: an error (res NULL), or its verdict, and what an allowed write took and made. */
static void count(const rl_gcra_ns_result *res, int64_t quantity, int created) {
    rl_tally t = {RL_TALLY_ERROR, 0, 0, 0, 0, 0};
    if (res) t = (rl_tally){RL_TALLY_DECIDED, !res->limited, res->store ? quantity : 0, res->store && created, 0, 0};
    rl_stats_count(&rl_stats[RL_STAT_CL_THROTTLE], &t);
}

/* An error (NULL: the wrong number of arguments), counted. */
static int fail(RedisModuleCtx *ctx, const char *err) {
    count(NULL, 0, 0);
    return err ? RedisModule_ReplyWithError(ctx, err) : RedisModule_WrongArity(ctx);
}

int rl_cl_throttle_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc > 6) return fail(ctx, NULL); /* Redis checks the minimum (arity -5) */
    rl_gcra_ns_args args;
    rl_gcra_ns_rate rate;
    char err[RL_ERR_LEN];
    if (parse_args(argv, argc, &args, err) != 0 || rl_gcra_ns_rate_of(&args, &rate, err) != 0) return fail(ctx, err);

    RedisModuleKey *key = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
    int has;
    uint64_t stored = 0;
    const char *failed = read_tat(key, &has, &stored);
    rl_gcra_ns_result res;
    int64_t now_us = rl_clock_now_us();
    if (!failed && rl_gcra_ns_decide(&rate, args.quantity, (rl_i128)now_us * 1000, has, stored, &res) != 0)
        failed = "ERR the clock is past the last TAT 64 bits of nanoseconds can hold (the year 2554)";
    int created = RedisModule_KeyType(key) == REDISMODULE_KEYTYPE_EMPTY;
    if (!failed && res.store && rl_write_refused(ctx)) failed = RL_OOM_ERROR; /* past maxmemory: a denial answers */
    if (!failed && res.store) {
        write_tat(ctx, key, argv[1], now_us, res.tat_ns);
        rl_lfu_keep(key);
    }
    RedisModule_CloseKey(key);
    if (failed) return fail(ctx, failed);
    count(&res, args.quantity, created);
    return send_reply(ctx, &res);
}

/* --- COMMAND DOCS (the command is registered by command.c's table) ---------------------------------------- */

const RedisModuleCommandArg rl_cl_throttle_args[] = {
    {.name = "key", .type = REDISMODULE_ARG_TYPE_KEY, .key_spec_index = 0},
    {.name = "max_burst", .type = REDISMODULE_ARG_TYPE_INTEGER, .key_spec_index = -1},
    {.name = "count_per_period", .type = REDISMODULE_ARG_TYPE_INTEGER, .key_spec_index = -1},
    {.name = "period", .type = REDISMODULE_ARG_TYPE_INTEGER, .key_spec_index = -1},
    {.name = "quantity", .type = REDISMODULE_ARG_TYPE_INTEGER, .key_spec_index = -1, .flags = REDISMODULE_CMD_ARG_OPTIONAL},
    {0}};
