/* setstate.c -- RL.SETSTATE: the effect of a cell limiter's write, as replicas and the AOF receive it.
 *
 * Effects, not commands, are replicated: after a decision that changes a cell the primary sends
 * RL.SETSTATE key <state>: the limiter's tag (limiters.h), then the state's n words and the absolute expiry
 * as little-endian 64-bit words, 9 + 8n bytes (25 for the two-word states, the only size before RL.SMOOTH
 * and sub-windows); or DEL when the limiter went idle. A replica, or an AOF replayed later, then ends in
 * exactly the primary's state whatever its own clock says. Formatting the numbers into strings on every
 * call cost about a sixth of the command's time; the readable form RL.SETSTATE key KIND w0 [w1 ...]
 * [PXAT unix_ms] stays for people and for AOF rewrite. Anyone may send RL.SETSTATE, so it checks its input
 * like any command: the kind, the numbers, their count, and that the state is one the algorithm could have
 * written. A concurrency limit's leases travel the same way, in a blob of their own (lease_type.c). */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "rl_module.h"

/* The tag and the expiry around the words; a key's lock record (rl_lock_rec, rl_module.h) is four words more,
 * after the state's: until_us, forgive_us, strikes, the state's own expiry. */
#define STATE_BLOB_FIXED 9
#define LOCK_REC_WORDS 4
#define STATE_BLOB_MAX (STATE_BLOB_FIXED + 8 * (RL_CELL_MAX_WORDS + LOCK_REC_WORDS))

static void replicate_cell(RedisModuleCtx *ctx, RedisModuleString *keyname, const rl_limiter *lim, const rl_cell *cell,
                           unsigned n, const rl_lock_rec *rec, int64_t expire_at_ms) {
    if (!rl_effects_on(ctx)) return;
    unsigned char blob[STATE_BLOB_MAX];
    blob[0] = lim->tag;
    for (unsigned i = 0; i < n; i++) rl_put_le(blob + 1 + 8 * i, cell->w[i], 8);
    unsigned words = n;
    if (rec) {
        uint64_t v[LOCK_REC_WORDS] = {(uint64_t)rec->lock.until_us, (uint64_t)rec->lock.forgive_us,
                                      (uint64_t)rec->lock.strikes, (uint64_t)rec->state_expire_ms};
        for (unsigned i = 0; i < LOCK_REC_WORDS; i++) rl_put_le(blob + 1 + 8 * words++, v[i], 8);
    }
    rl_put_le(blob + 1 + 8 * words, (uint64_t)expire_at_ms, 8);
    RedisModule_Replicate(ctx, "RL.SETSTATE", "sb", keyname, (const char *)blob, (size_t)(STATE_BLOB_FIXED + 8 * words));
}

void rl_replicate_cell(RedisModuleCtx *ctx, RedisModuleString *keyname, const rl_limiter *lim, const rl_cell *cell,
                       unsigned n, int64_t expire_at_ms) {
    replicate_cell(ctx, keyname, lim, cell, n, NULL, expire_at_ms);
}

void rl_replicate_cell_locked(RedisModuleCtx *ctx, RedisModuleString *keyname, const rl_limiter *lim,
                              const rl_cell *cell, unsigned n, const rl_lock_rec *rec, int64_t expire_at_ms) {
    replicate_cell(ctx, keyname, lim, cell, n, rec, expire_at_ms);
}

/* A state to set: its limiter, its cell, its lock record (has_rec), its absolute expiry (-1: none). */
typedef struct state_args {
    const rl_limiter *lim;
    unsigned nwords;
    rl_cell cell;
    int has_rec;
    rl_lock_rec rec;
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

static int arg_int64(RedisModuleString *arg, int64_t *out) {
    size_t len;
    const char *s = RedisModule_StringPtrLen(arg, &len);
    return rl_parse_int64(s, len, out);
}

/* RL.SETSTATE key <state>. Returns NULL or the error. */
static const char *parse_blob(RedisModuleString *arg, state_args *out) {
    size_t len;
    const unsigned char *p = (const unsigned char *)RedisModule_StringPtrLen(arg, &len);
    if (len < STATE_BLOB_FIXED + 8 || len > STATE_BLOB_MAX || (len - STATE_BLOB_FIXED) % 8 != 0)
        return "ERR state: must be 9 + 8n bytes, n from 1 to 68 (or use RL.SETSTATE key kind w0 [w1 ...] [PXAT unix_ms])";
    out->lim = cell_limiter_tagged(p[0]);
    if (!out->lim) return "ERR state: unknown kind";
    unsigned all = (unsigned)((len - STATE_BLOB_FIXED) / 8);
    out->cell.w[0] = rl_get_le(p + 1, 8);
    out->nwords = out->lim->alg->words(&out->cell);
    out->has_rec = all == out->nwords + LOCK_REC_WORDS;
    if (!out->has_rec) out->nwords = all; /* checked against words() by the caller */
    if (out->nwords > RL_CELL_MAX_WORDS) return "ERR state: not a valid state of this kind";
    for (unsigned i = 0; i < out->nwords; i++) out->cell.w[i] = rl_get_le(p + 1 + 8 * i, 8);
    if (out->has_rec) {
        const unsigned char *r = p + 1 + 8 * out->nwords;
        out->rec.lock = (rl_lock){(int64_t)rl_get_le(r, 8), (int64_t)rl_get_le(r + 8, 8), (int64_t)rl_get_le(r + 16, 8)};
        out->rec.state_expire_ms = (int64_t)rl_get_le(r + 24, 8);
    }
    out->expire_at_ms = (int64_t)rl_get_le(p + 1 + 8 * all, 8);
    if (out->expire_at_ms < 1) return "ERR state: no valid expiry";
    return NULL;
}

static int is_pxat(RedisModuleString *arg) {
    size_t len;
    const char *s = RedisModule_StringPtrLen(arg, &len);
    return len == 4 && strncasecmp(s, "PXAT", 4) == 0;
}

static int is_word(RedisModuleString *arg, const char *word) {
    size_t len;
    const char *s = RedisModule_StringPtrLen(arg, &len);
    return len == strlen(word) && strncasecmp(s, word, len) == 0;
}

/* RL.SETSTATE key kind w0 [w1 ...] [LOCK until_us forgive_us strikes state_expire_ms] [PXAT unix_ms]: as many
 * words as the state w0 begins holds. Returns NULL or the error (in err or a constant); *arity is set when the
 * count of arguments is what is wrong. */
static const char *parse_words(RedisModuleString **argv, int argc, state_args *out, char err[RL_ERR_LEN], int *arity) {
    out->lim = cell_limiter_named(argv[2]);
    if (!out->lim) {
        char kinds[64];
        rl_kind_names(kinds, sizeof kinds, &rl_cell_steps, ", ");
        snprintf(err, RL_ERR_LEN, "ERR kind: must be one of %s", kinds);
        return err;
    }
    int64_t w;
    if (arg_int64(argv[3], &w) != 0) return "ERR w0: must be an integer";
    out->cell.w[0] = (uint64_t)w;
    out->nwords = out->lim->alg->words(&out->cell);
    int end = 3 + (int)out->nwords; /* where the words end */
    out->has_rec = argc > end && is_word(argv[end], "LOCK");
    int rest = out->has_rec ? end + 1 + LOCK_REC_WORDS : end; /* where PXAT may be */
    if (argc < rest || argc > rest + 2) {
        *arity = 1;
        return NULL;
    }
    for (unsigned i = 1; i < out->nwords; i++) {
        if (arg_int64(argv[3 + i], &w) != 0) {
            snprintf(err, RL_ERR_LEN, "ERR w%u: must be an integer", i);
            return err;
        }
        out->cell.w[i] = (uint64_t)w;
    }
    if (out->has_rec) {
        int64_t v[LOCK_REC_WORDS];
        static const char *const names[LOCK_REC_WORDS] = {"until_us", "forgive_us", "strikes", "state_expire_ms"};
        for (int i = 0; i < LOCK_REC_WORDS; i++) {
            if (arg_int64(argv[end + 1 + i], &v[i]) != 0) {
                snprintf(err, RL_ERR_LEN, "ERR %s: must be an integer", names[i]);
                return err;
            }
        }
        out->rec = (rl_lock_rec){{v[0], v[1], v[2]}, v[3]};
    }
    out->expire_at_ms = -1;
    if (argc > rest) {
        if (!is_pxat(argv[rest])) {
            if (out->has_rec) snprintf(err, RL_ERR_LEN, "ERR PXAT: expected PXAT unix_ms after the lock");
            else snprintf(err, RL_ERR_LEN, "ERR PXAT: expected PXAT unix_ms after w%u", out->nwords - 1);
            return err;
        }
        if (argc == rest + 1) return "ERR PXAT: needs a value";
        if (arg_int64(argv[rest + 1], &out->expire_at_ms) != 0 || out->expire_at_ms < 1)
            return "ERR PXAT: must be a positive integer";
    }
    return NULL;
}

int rl_setstate_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    /* The compact form has one argument after the key; the readable one at least a kind and two words. */
    if (argc != 3 && argc < 5) return RedisModule_WrongArity(ctx);
    if (rl_lock_setstate(ctx, argv, argc)) return REDISMODULE_OK; /* a lock alone (lock_type.c) */
    if (rl_bundle_setstate(ctx, argv, argc)) return REDISMODULE_OK; /* a policy-checked key (bundle_type.c) */
    state_args st;
    char err[RL_ERR_LEN];
    int arity = 0;
    const char *failed = argc == 3 ? parse_blob(argv[2], &st) : parse_words(argv, argc, &st, err, &arity);
    if (argc == 3) { /* a concurrency limit's leases have a blob of their own (lease_type.c) */
        size_t len;
        const char *blob = RedisModule_StringPtrLen(argv[2], &len);
        const rl_limiter *lease = len ? rl_lease_limiter_tagged((unsigned char)blob[0]) : NULL;
        if (lease) return rl_lease_setstate(ctx, lease, argv);
    }
    if (arity) return RedisModule_WrongArity(ctx);
    if (failed) return RedisModule_ReplyWithError(ctx, failed);
    if (st.lim->alg->words(&st.cell) != st.nwords) /* the compact form's length, read from w0 */
        return RedisModule_ReplyWithError(ctx, "ERR state: not a valid state of this kind");
    if (!st.lim->alg->cell_valid(&st.cell)) return RedisModule_ReplyWithError(ctx, "ERR state: not a valid state of this kind");
    if (st.has_rec && !rl_lock_rec_valid(&st.rec)) return RedisModule_ReplyWithError(ctx, "ERR state: not a valid lock");

    RedisModuleKey *key = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
    const rl_limiter *current = rl_cell_limiter_of(key);
    rl_lock alone;
    if (current == RL_CELL_OTHER && rl_lock_only_read(key, &alone)) current = NULL; /* a lock alone: replaced */
    if (current != NULL && current != st.lim) {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
    }
    void *stored = current ? RedisModule_ModuleTypeGetValue(key) : NULL;
    rl_cell old;
    unsigned stored_words = stored ? rl_value_read(st.lim, stored, &old) : 0;
    if (st.has_rec) rl_cell_put_locked(key, st.lim, stored, stored_words, &st.cell, st.nwords, &st.rec);
    else rl_cell_put(key, st.lim, stored, stored_words, &st.cell, st.nwords);
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
