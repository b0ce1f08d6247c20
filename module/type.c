/* type.c -- how limiters live in the keyspace: one Redis data type per algorithm, and their effects.
 *
 * A limiter's value is its 16-byte cell (algorithms/rl_common.h). Each algorithm has its own module data
 * type, so a key made by RL.TOKEN answers WRONGTYPE to RL.LEAKY, as a list does to SET. All three types
 * share the callbacks below: RDB save/load (encoding version 1: the two words), AOF rewrite, copy,
 * memory usage and digest, so DUMP/RESTORE, COPY, MOVE, DEBUG RELOAD and DEBUG DIGEST-VALUE work.
 *
 * Effects, not commands, are replicated and written to the AOF: after a decision the primary sends
 * RL.SETSTATE key <state> (the kind, the two words and the absolute expiry in 25 bytes), or DEL when the
 * limiter went idle, so a replica or an AOF replayed later ends in exactly the primary's state whatever
 * its own clock says. AOF rewrite emits the readable RL.SETSTATE key KIND w0 w1 (Redis adds the
 * PEXPIREAT). RL.SETSTATE checks its input like any command, since
 * anyone may send it. */
#include <string.h>
#include <strings.h>


#include "../algorithms/leaky.h"
#include "../algorithms/token.h"
#include "../algorithms/window.h"

#include "clock.h"
#include "rl_module.h"

#define RL_ENCODING_VERSION 1

rl_kind rl_kinds[] = {
    [RL_KIND_TOKEN] = {&rl_token_algorithm, "rl-tokens", NULL},
    [RL_KIND_LEAKY] = {&rl_leaky_algorithm, "rl-leakyb", NULL},
    [RL_KIND_WINDOW] = {&rl_window_algorithm, "rl-window", NULL},
};
const int rl_nkinds = sizeof rl_kinds / sizeof rl_kinds[0];

#define RL_KIND_OTHER ((const rl_kind *)-1)

/* The kind stored in an open key: NULL if the key is empty, RL_KIND_OTHER if it holds anything else. */
static const rl_kind *rl_key_kind(RedisModuleKey *key) {
    int type = RedisModule_KeyType(key);
    if (type == REDISMODULE_KEYTYPE_EMPTY) return NULL;
    if (type == REDISMODULE_KEYTYPE_MODULE) {
        RedisModuleType *mt = RedisModule_ModuleTypeGetType(key);
        for (int i = 0; i < rl_nkinds; i++)
            if (rl_kinds[i].type == mt) return &rl_kinds[i];
    }
    return RL_KIND_OTHER;
}

/* The compact form of RL.SETSTATE the primary emits after every decision: one 25-byte argument, kind
 * letter then w0, w1 and the expiry as little-endian 64-bit words. Formatting five numbers and two words
 * into strings on every call cost about a sixth of the command's time; the readable form stays for
 * people and for AOF rewrite. */
#define STATE_BLOB_LEN 25

static void put_le64(unsigned char *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static void replicate_cell(RedisModuleCtx *ctx, RedisModuleString *keyname, const rl_kind *kind,
                           const rl_cell *cell, int64_t expire_at_ms) {
    unsigned char blob[STATE_BLOB_LEN];
    blob[0] = (unsigned char)kind->alg->name[0];
    put_le64(blob + 1, cell->w[0]);
    put_le64(blob + 9, cell->w[1]);
    put_le64(blob + 17, (uint64_t)expire_at_ms);
    RedisModule_Replicate(ctx, "RL.SETSTATE", "sb", keyname, (const char *)blob, (size_t)STATE_BLOB_LEN);
}

/* Store (or delete, when the limiter is idle) a cell and replicate the effect. */
static void rl_store_cell(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *keyname,
                          const rl_kind *kind, rl_cell *stored, const rl_cell *cell, int64_t now_us,
                          const rl_reply *reply) {
    if (reply->reset_after_ms == 0) {
        /* Idle is the same as new: hold no key for it. */
        if (stored) {
            RedisModule_DeleteKey(key);
            RedisModule_Replicate(ctx, "DEL", "s", keyname);
        }
        return;
    }
    int64_t expire_at_ms = rl_clock_expire_at_ms(now_us, reply->reset_after_us);
    if (stored) {
        /* A request that changed nothing (a denied one, typically, as a flood of them is) has no effect
         * to store or replicate: the idle instant, hence the expiry, is absolute. */
        if (memcmp(stored, cell, sizeof *cell) == 0 && RedisModule_GetAbsExpire(key) == expire_at_ms) return;
        *stored = *cell;
    } else {
        rl_cell *fresh = RedisModule_Alloc(sizeof *fresh);
        *fresh = *cell;
        RedisModule_ModuleTypeSetValue(key, kind->type, fresh);
    }
    RedisModule_SetAbsExpire(key, expire_at_ms);
    replicate_cell(ctx, keyname, kind, cell, expire_at_ms);
}

const char *rl_cell_execute(RedisModuleCtx *ctx, RedisModuleString *keyname, const rl_request *req,
                            const void *target, rl_reply *reply) {
    const rl_kind *kind = target;
    const char *invalid = kind->alg->validate(req);
    if (invalid) return invalid;
    int dryrun = (req->flags & RL_F_DRYRUN) != 0;
    RedisModuleKey *key = RedisModule_OpenKey(ctx, keyname, REDISMODULE_READ | (dryrun ? 0 : REDISMODULE_WRITE));
    const rl_kind *found = rl_key_kind(key);
    if (found != NULL && found != kind) {
        RedisModule_CloseKey(key);
        return REDISMODULE_ERRORMSG_WRONGTYPE;
    }
    rl_cell *stored = found ? RedisModule_ModuleTypeGetValue(key) : NULL;
    rl_cell cell = stored ? *stored : (rl_cell){{0, 0}};
    kind->alg->decide(req, &cell, stored != NULL, reply);
    if (!dryrun) rl_store_cell(ctx, key, keyname, kind, stored, &cell, req->now_us, reply);
    RedisModule_CloseKey(key);
    return NULL;
}

/* --- data type callbacks ---------------------------------------------------------------------------- */

static void *cell_load(RedisModuleIO *io, int encver, const rl_kind *kind) {
    if (encver != RL_ENCODING_VERSION) return NULL;
    rl_cell cell;
    cell.w[0] = RedisModule_LoadUnsigned(io);
    cell.w[1] = RedisModule_LoadUnsigned(io);
    if (RedisModule_IsIOError(io) || !kind->alg->cell_valid(&cell)) return NULL;
    rl_cell *value = RedisModule_Alloc(sizeof *value);
    *value = cell;
    return value;
}

static void cell_save(RedisModuleIO *io, void *value) {
    const rl_cell *cell = value;
    RedisModule_SaveUnsigned(io, cell->w[0]);
    RedisModule_SaveUnsigned(io, cell->w[1]);
}

static void cell_aof(RedisModuleIO *aof, RedisModuleString *keyname, void *value, const rl_kind *kind) {
    const rl_cell *cell = value;
    RedisModule_EmitAOF(aof, "RL.SETSTATE", "scll", keyname, kind->alg->name, (long long)cell->w[0],
                        (long long)cell->w[1]);
}

static void cell_free(void *value) { RedisModule_Free(value); }

static size_t cell_mem_usage(const void *value) {
    (void)value;
    return sizeof(rl_cell);
}

static void cell_digest(RedisModuleDigest *md, void *value) {
    const rl_cell *cell = value;
    RedisModule_DigestAddLongLong(md, (long long)cell->w[0]);
    RedisModule_DigestAddLongLong(md, (long long)cell->w[1]);
    RedisModule_DigestEndSequence(md);
}

static void *cell_copy(RedisModuleString *fromkey, RedisModuleString *tokey, const void *value) {
    (void)fromkey;
    (void)tokey;
    rl_cell *copy = RedisModule_Alloc(sizeof *copy);
    memcpy(copy, value, sizeof *copy);
    return copy;
}

/* RDB load and AOF rewrite need to know the kind; the other callbacks are the same for all. */
#define RL_KIND_CALLBACKS(i)                                                                    \
    static void *cell_load_##i(RedisModuleIO *io, int encver) {                                 \
        return cell_load(io, encver, &rl_kinds[i]);                                              \
    }                                                                                            \
    static void cell_aof_##i(RedisModuleIO *aof, RedisModuleString *key, void *value) {         \
        cell_aof(aof, key, value, &rl_kinds[i]);                                                 \
    }
RL_KIND_CALLBACKS(0)
RL_KIND_CALLBACKS(1)
RL_KIND_CALLBACKS(2)

static RedisModuleTypeLoadFunc kind_load[] = {cell_load_0, cell_load_1, cell_load_2};
static RedisModuleTypeRewriteFunc kind_aof[] = {cell_aof_0, cell_aof_1, cell_aof_2};

int rl_types_register(RedisModuleCtx *ctx) {
    if (rl_nkinds != (int)(sizeof kind_load / sizeof kind_load[0])) return REDISMODULE_ERR;
    for (int i = 0; i < rl_nkinds; i++) {
        RedisModuleTypeMethods methods = {
            .version = REDISMODULE_TYPE_METHOD_VERSION,
            .rdb_load = kind_load[i],
            .rdb_save = cell_save,
            .aof_rewrite = kind_aof[i],
            .mem_usage = cell_mem_usage,
            .digest = cell_digest,
            .free = cell_free,
            .copy = cell_copy,
        };
        rl_kinds[i].type = RedisModule_CreateDataType(ctx, rl_kinds[i].type_name, RL_ENCODING_VERSION, &methods);
        if (!rl_kinds[i].type) return REDISMODULE_ERR;
    }
    return REDISMODULE_OK;
}

/* --- RL.SETSTATE key KIND w0 w1 [PXAT unix_ms] ------------------------------------------------------ */

static const rl_kind *kind_named(RedisModuleString *arg) {
    size_t len;
    const char *s = RedisModule_StringPtrLen(arg, &len);
    for (int i = 0; i < rl_nkinds; i++)
        if (strlen(rl_kinds[i].alg->name) == len && strncasecmp(rl_kinds[i].alg->name, s, len) == 0)
            return &rl_kinds[i];
    return NULL;
}

static int arg_int64(RedisModuleString *arg, int64_t *out) {
    size_t len;
    const char *s = RedisModule_StringPtrLen(arg, &len);
    return rl_parse_int64(s, len, out);
}

/* A state to set: its kind, its cell, its absolute expiry (-1: none). */
typedef struct state_args {
    const rl_kind *kind;
    rl_cell cell;
    int64_t expire_at_ms;
} state_args;

/* RL.SETSTATE key <25-byte blob>. Returns NULL or the error. */
static const char *parse_blob(RedisModuleString *arg, state_args *out) {
    size_t len;
    const unsigned char *p = (const unsigned char *)RedisModule_StringPtrLen(arg, &len);
    if (len != STATE_BLOB_LEN) return "ERR state must be 25 bytes (or use: RL.SETSTATE key kind w0 w1 [PXAT unix_ms])";
    out->kind = NULL;
    for (int i = 0; i < rl_nkinds; i++)
        if (p[0] == (unsigned char)rl_kinds[i].alg->name[0]) out->kind = &rl_kinds[i];
    if (!out->kind) return "ERR state has an unknown kind";
    out->cell.w[0] = get_le64(p + 1);
    out->cell.w[1] = get_le64(p + 9);
    out->expire_at_ms = (int64_t)get_le64(p + 17);
    if (out->expire_at_ms < 1) return "ERR state has no valid expiry";
    return NULL;
}

/* RL.SETSTATE key kind w0 w1 [PXAT unix_ms]. Returns NULL or the error. */
static const char *parse_words(RedisModuleString **argv, int argc, state_args *out) {
    out->kind = kind_named(argv[2]);
    if (!out->kind) return "ERR kind must be one of TOKEN, LEAKY, WINDOW";
    int64_t w0, w1;
    if (arg_int64(argv[3], &w0) != 0) return "ERR w0 must be an integer";
    if (arg_int64(argv[4], &w1) != 0) return "ERR w1 must be an integer";
    out->cell = (rl_cell){{(uint64_t)w0, (uint64_t)w1}};
    out->expire_at_ms = -1;
    if (argc == 7) {
        size_t len;
        const char *opt = RedisModule_StringPtrLen(argv[5], &len);
        if (len != 4 || strncasecmp(opt, "PXAT", 4) != 0) return "ERR syntax: RL.SETSTATE key kind w0 w1 [PXAT unix_ms]";
        if (arg_int64(argv[6], &out->expire_at_ms) != 0 || out->expire_at_ms < 1) return "ERR PXAT must be a positive integer";
    }
    return NULL;
}

int rl_setstate_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 3 && argc != 5 && argc != 7) return RedisModule_WrongArity(ctx);
    state_args st;
    const char *err = argc == 3 ? parse_blob(argv[2], &st) : parse_words(argv, argc, &st);
    if (err) return RedisModule_ReplyWithError(ctx, err);
    if (!st.kind->alg->cell_valid(&st.cell))
        return RedisModule_ReplyWithError(ctx, "ERR w0 w1 is not a valid state of this kind");

    RedisModuleKey *key = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
    const rl_kind *current = rl_key_kind(key);
    if (current != NULL && current != st.kind) {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
    }
    if (current) {
        *(rl_cell *)RedisModule_ModuleTypeGetValue(key) = st.cell;
    } else {
        rl_cell *fresh = RedisModule_Alloc(sizeof *fresh);
        *fresh = st.cell;
        RedisModule_ModuleTypeSetValue(key, st.kind->type, fresh);
    }
    if (st.expire_at_ms > 0)
        RedisModule_SetAbsExpire(key, st.expire_at_ms);
    else
        RedisModule_SetExpire(key, REDISMODULE_NO_EXPIRE);
    RedisModule_CloseKey(key);
    RedisModule_ReplicateVerbatim(ctx);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}
