/* setstate.c -- RL.SETSTATE: the effect of a cell limiter's write, as replicas and the AOF receive it.
 *
 * Effects, not commands, are replicated: after a decision that changes a cell the primary sends
 * RL.SETSTATE key <state>, 25 bytes: the limiter's tag (limiters.h), then w0, w1 and the absolute expiry as
 * little-endian 64-bit words; or DEL when the limiter went idle. A replica, or an AOF replayed later, then
 * ends in exactly the primary's state whatever its own clock says. Formatting five numbers into strings
 * on every call cost about a sixth of the command's time; the readable form RL.SETSTATE key KIND w0 w1
 * [PXAT unix_ms] stays for people and for AOF rewrite. Anyone may send RL.SETSTATE, so it checks its input
 * like any command: the kind, the numbers, and that the cell is one the algorithm could have written. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "rl_module.h"

#define STATE_BLOB_LEN 25

static void put_le64(unsigned char *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

void rl_replicate_cell(RedisModuleCtx *ctx, RedisModuleString *keyname, const rl_limiter *lim, const rl_cell *cell,
                       int64_t expire_at_ms) {
    if (!rl_effects_on(ctx)) return;
    unsigned char blob[STATE_BLOB_LEN];
    blob[0] = lim->tag;
    put_le64(blob + 1, cell->w[0]);
    put_le64(blob + 9, cell->w[1]);
    put_le64(blob + 17, (uint64_t)expire_at_ms);
    RedisModule_Replicate(ctx, "RL.SETSTATE", "sb", keyname, (const char *)blob, (size_t)STATE_BLOB_LEN);
}

/* A state to set: its limiter, its cell, its absolute expiry (-1: none). */
typedef struct state_args {
    const rl_limiter *lim;
    rl_cell cell;
    int64_t expire_at_ms;
} state_args;

static const rl_limiter *cell_limiter_tagged(unsigned char tag) {
    for (int i = 0; i < RL_NLIMITERS; i++)
        if (rl_limiters[i].steps == &rl_cell_steps && rl_limiters[i].tag == tag) return &rl_limiters[i];
    return NULL;
}

static const rl_limiter *cell_limiter_named(RedisModuleString *arg) {
    size_t len;
    const char *s = RedisModule_StringPtrLen(arg, &len);
    for (int i = 0; i < RL_NLIMITERS; i++) {
        const rl_limiter *lim = &rl_limiters[i];
        if (lim->steps == &rl_cell_steps && strlen(lim->kind) == len && strncasecmp(lim->kind, s, len) == 0)
            return lim;
    }
    return NULL;
}

/* "TOKEN, LEAKY, WINDOW": the kinds a message lists. */
static void kind_names(char *dst, size_t dstlen) {
    size_t used = 0;
    dst[0] = '\0';
    for (int i = 0; i < RL_NLIMITERS && used < dstlen; i++)
        if (rl_limiters[i].steps == &rl_cell_steps)
            used += (size_t)snprintf(dst + used, dstlen - used, "%s%s", used ? ", " : "", rl_limiters[i].kind);
}

static int arg_int64(RedisModuleString *arg, int64_t *out) {
    size_t len;
    const char *s = RedisModule_StringPtrLen(arg, &len);
    return rl_parse_int64(s, len, out);
}

/* RL.SETSTATE key <25-byte state>. Returns NULL or the error. */
static const char *parse_blob(RedisModuleString *arg, state_args *out) {
    size_t len;
    const unsigned char *p = (const unsigned char *)RedisModule_StringPtrLen(arg, &len);
    if (len != STATE_BLOB_LEN) return "ERR state: must be 25 bytes (or use RL.SETSTATE key kind w0 w1 [PXAT unix_ms])";
    out->lim = cell_limiter_tagged(p[0]);
    if (!out->lim) return "ERR state: unknown kind";
    out->cell.w[0] = get_le64(p + 1);
    out->cell.w[1] = get_le64(p + 9);
    out->expire_at_ms = (int64_t)get_le64(p + 17);
    if (out->expire_at_ms < 1) return "ERR state: no valid expiry";
    return NULL;
}

/* RL.SETSTATE key kind w0 w1 [PXAT unix_ms]. Returns NULL or the error (in err or a constant). */
static const char *parse_words(RedisModuleString **argv, int argc, state_args *out, char err[RL_ERR_LEN]) {
    out->lim = cell_limiter_named(argv[2]);
    if (!out->lim) {
        char kinds[64];
        kind_names(kinds, sizeof kinds);
        snprintf(err, RL_ERR_LEN, "ERR kind: must be one of %s", kinds);
        return err;
    }
    int64_t w0, w1;
    if (arg_int64(argv[3], &w0) != 0) return "ERR w0: must be an integer";
    if (arg_int64(argv[4], &w1) != 0) return "ERR w1: must be an integer";
    out->cell = (rl_cell){{(uint64_t)w0, (uint64_t)w1}};
    out->expire_at_ms = -1;
    if (argc >= 6) {
        size_t len;
        const char *opt = RedisModule_StringPtrLen(argv[5], &len);
        if (len != 4 || strncasecmp(opt, "PXAT", 4) != 0) return "ERR PXAT: expected PXAT unix_ms after w1";
        if (argc == 6) return "ERR PXAT: needs a value";
        if (arg_int64(argv[6], &out->expire_at_ms) != 0 || out->expire_at_ms < 1)
            return "ERR PXAT: must be a positive integer";
    }
    return NULL;
}

int rl_setstate_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 3 && (argc < 5 || argc > 7)) return RedisModule_WrongArity(ctx);
    state_args st;
    char err[RL_ERR_LEN];
    const char *failed = argc == 3 ? parse_blob(argv[2], &st) : parse_words(argv, argc, &st, err);
    if (failed) return RedisModule_ReplyWithError(ctx, failed);
    if (!st.lim->alg->cell_valid(&st.cell)) return RedisModule_ReplyWithError(ctx, "ERR w0 w1: not a valid state of this kind");

    RedisModuleKey *key = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
    const rl_limiter *current = rl_cell_limiter_of(key);
    if (current != NULL && current != st.lim) {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
    }
    rl_cell_put(key, st.lim, current ? RedisModule_ModuleTypeGetValue(key) : NULL, &st.cell);
    if (st.expire_at_ms > 0)
        RedisModule_SetAbsExpire(key, st.expire_at_ms);
    else
        RedisModule_SetExpire(key, REDISMODULE_NO_EXPIRE);
    RedisModule_CloseKey(key);
    RedisModule_SignalModifiedKey(ctx, argv[1]);
    RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_MODULE, "rl.setstate", argv[1]);
    RedisModule_ReplicateVerbatim(ctx);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}
