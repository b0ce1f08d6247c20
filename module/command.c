/* command.c -- the limiter table, generated from the list, and the one generic path every RL.* command runs.
 *
 * As SET, SETEX and SETNX share setGenericCommand in Redis, every RL.* command shares rl_generic_command:
 * a command differs from another only by its row in the list (limiters.h), i.e. its syntax (syntax.c)
 * and its storage's steps (rl_module.h); a read-only form (RL.TOKEN_RO) is its command with DRYRUN set
 * and a key opened for reading. The path: parse, read the clock, prepare (validate, decide), commit unless
 * DRYRUN or nothing changes, release, then reply, or for BLOCK hold the reply until wait_ms has passed.
 *
 * Only a commit touches the key, so only a commit signals it (WATCH, client-side caching) and fires the
 * keyspace event "<command>" in the module class (`d`): the module loads with implicit signalling off,
 * since Redis would otherwise signal every key opened for writing, denied requests included. */
#include "clock.h"
#include "rl_module.h"

static void commit(RedisModuleCtx *ctx, rl_pending *p) {
    p->lim->steps->commit(ctx, p);
    RedisModule_SignalModifiedKey(ctx, p->keyname);
    RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_MODULE, p->lim->syntax->name, p->keyname);
}

static int rl_generic_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, const rl_limiter *lim,
                              const rl_syntax *syntax) {
    int nargs = argc - 2;
    if (nargs < syntax->nparams || nargs > RL_MAX_ARGS) return RedisModule_WrongArity(ctx);

    const char *args[RL_MAX_ARGS];
    size_t lens[RL_MAX_ARGS];
    for (int i = 0; i < nargs; i++) args[i] = RedisModule_StringPtrLen(argv[i + 2], &lens[i]);
    rl_request req;
    char err[RL_ERR_LEN];
    if (rl_parse(syntax, nargs, args, lens, &req, err) != 0) return RedisModule_ReplyWithError(ctx, err);
    if (syntax->excluded & RL_F_DRYRUN) req.flags |= RL_F_DRYRUN; /* a read-only form */
    req.now_us = rl_clock_now_us();

    rl_pending p = {.lim = lim, .req = &req, .keyname = argv[1]};
    const char *failed = lim->steps->prepare(ctx, &p, err);
    if (!failed && p.changes && !(req.flags & RL_F_DRYRUN)) commit(ctx, &p);
    lim->steps->release(ctx, &p);
    if (failed) return RedisModule_ReplyWithError(ctx, failed);

    if ((req.flags & (RL_F_BLOCK | RL_F_DRYRUN)) == RL_F_BLOCK && p.reply.allowed && p.reply.wait_ms > 0 &&
        rl_can_block(ctx))
        return rl_hold_reply(ctx, &p.reply);
    return rl_send_reply(ctx, &p.reply);
}

/* --- the table, generated from the list ---------------------------------------------------------------
 *
 * For each row: its command function, and for a cell limiter the data type callbacks that must know
 * which limiter they serve (Redis gives them no private data). */

#define CELL_CALLBACKS_cell(id)                                                                 \
    static void *rdb_load_##id(RedisModuleIO *io, int encver) {                                 \
        return rl_cell_rdb_load(io, encver, &rl_limiters[RL_LIM_##id]);                          \
    }                                                                                            \
    static void aof_rewrite_##id(RedisModuleIO *aof, RedisModuleString *key, void *value) {     \
        rl_cell_aof_rewrite(aof, key, value, &rl_limiters[RL_LIM_##id]);                         \
    }
#define CELL_CALLBACKS_log(id)
#define CELL_METHODS_cell(id) rdb_load_##id, aof_rewrite_##id
#define CELL_METHODS_log(id) NULL, NULL

#define LIMITER_FUNCTIONS(id, command, type_name, tag, algorithm, storage)                     \
    static int command_##id(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {          \
        return rl_generic_command(ctx, argv, argc, &rl_limiters[RL_LIM_##id], &rl_syntaxes[RL_LIM_##id]); \
    }                                                                                            \
    static int command_ro_##id(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {       \
        return rl_generic_command(ctx, argv, argc, &rl_limiters[RL_LIM_##id], &rl_syntaxes_ro[RL_LIM_##id]); \
    }                                                                                            \
    CELL_CALLBACKS_##storage(id)
RL_LIMITERS(LIMITER_FUNCTIONS)

#define LIMITER_ROW(id, command, type_name, tag, algorithm, storage)                           \
    [RL_LIM_##id] = {#id, &rl_syntaxes[RL_LIM_##id], &rl_syntaxes_ro[RL_LIM_##id], type_name, tag, algorithm, \
                     &rl_##storage##_steps, command_##id, command_ro_##id, CELL_METHODS_##storage(id), NULL},
rl_limiter rl_limiters[RL_NLIMITERS] = {RL_LIMITERS(LIMITER_ROW)};

/* What the list must get right, checked by the compiler: a module type name has exactly 9 characters
 * (Redis refuses the module at load otherwise), and no two limiters share a tag (a duplicate case label
 * does not compile). */
#define TYPE_NAME_OK_cell(name) (sizeof(name) == 10)
#define TYPE_NAME_OK_log(name) 1
#define CHECK_TYPE_NAME(id, command, type_name, tag, algorithm, storage) \
    _Static_assert(TYPE_NAME_OK_##storage(type_name), #id ": a module data type name has 9 characters");
RL_LIMITERS(CHECK_TYPE_NAME)

#define TAG_CASE(id, command, type_name, tag, algorithm, storage) case tag:
static inline void rl_tags_are_distinct(int tag) {
    switch (tag) {
        RL_LIMITERS(TAG_CASE)
        break;
    }
}

/* --- registration ----------------------------------------------------------------------------------- */

#define RL_SINCE "1.0.0"
#define RL_SINCE_RO "1.1.0"

/* COMMAND DOCS' arguments, from the syntax: the key, the numbers, then every option it takes (optional; a
 * flag is a pure token, an option with a value an integer behind its token). Redis copies them. */
static void describe_args(const rl_syntax *syn, RedisModuleCommandArg *args) {
    int n = 0;
    args[n++] = (RedisModuleCommandArg){.name = "key", .type = REDISMODULE_ARG_TYPE_KEY, .key_spec_index = 0};
    for (int i = 0; i < syn->nparams; i++)
        args[n++] = (RedisModuleCommandArg){
            .name = syn->params[i].name, .type = REDISMODULE_ARG_TYPE_INTEGER, .key_spec_index = -1};
    for (int i = 0; i < syn->noptions; i++) {
        const rl_option_spec *o = &syn->options[i];
        if (o->flag & syn->excluded) continue;
        int value = o->slot != RL_NO_VALUE;
        args[n++] = (RedisModuleCommandArg){.name = o->name,
                                            .type = value ? REDISMODULE_ARG_TYPE_INTEGER : REDISMODULE_ARG_TYPE_PURE_TOKEN,
                                            .key_spec_index = -1,
                                            .token = o->name,
                                            .flags = REDISMODULE_CMD_ARG_OPTIONAL};
    }
    args[n] = (RedisModuleCommandArg){0};
}

/* Register one command with its key spec (the key is argument 1: COMMAND GETKEYS, ACL key patterns and
 * Cluster routing see it), arity and, when it parses, its docs. */
static int register_command(RedisModuleCtx *ctx, const char *name, RedisModuleCmdFunc fn, const char *flags,
                            int arity, uint64_t key_flags, const rl_syntax *syn, const char *since) {
    if (RedisModule_CreateCommand(ctx, name, fn, flags, 1, 1, 1) != REDISMODULE_OK) return REDISMODULE_ERR;
    RedisModuleCommand *cmd = RedisModule_GetCommand(ctx, name);
    RedisModuleCommandKeySpec key_specs[] = {
        {.flags = key_flags,
         .begin_search_type = REDISMODULE_KSPEC_BS_INDEX,
         .bs.index.pos = 1,
         .find_keys_type = REDISMODULE_KSPEC_FK_RANGE,
         .fk.range = {0, 1, 0}},
        {0}};
    RedisModuleCommandArg args[2 + RL_MAX_PARAMS + RL_MAX_ARGS];
    RedisModuleCommandInfo info = {.version = REDISMODULE_COMMAND_INFO_VERSION, .arity = arity, .key_specs = key_specs,
                                   .since = since};
    if (syn) {
        describe_args(syn, args);
        info.summary = syn->summary;
        info.complexity = syn->complexity;
        info.args = args;
    }
    return cmd && RedisModule_SetCommandInfo(cmd, &info) == REDISMODULE_OK ? REDISMODULE_OK : REDISMODULE_ERR;
}

int rl_commands_register(RedisModuleCtx *ctx) {
    const uint64_t update = REDISMODULE_CMD_KEY_RW | REDISMODULE_CMD_KEY_ACCESS | REDISMODULE_CMD_KEY_UPDATE;
    const uint64_t read = REDISMODULE_CMD_KEY_RO | REDISMODULE_CMD_KEY_ACCESS;
    for (int i = 0; i < RL_NLIMITERS; i++) {
        const rl_limiter *lim = &rl_limiters[i];
        int arity = -(2 + lim->syntax->nparams);
        if (register_command(ctx, lim->syntax->name, lim->command, lim->steps->flags, arity, update, lim->syntax,
                             RL_SINCE) != REDISMODULE_OK ||
            register_command(ctx, lim->syntax_ro->name, lim->command_ro, lim->steps->flags_ro, arity, read,
                             lim->syntax_ro, RL_SINCE_RO) != REDISMODULE_OK)
            return REDISMODULE_ERR;
    }
    return register_command(ctx, "rl.setstate", rl_setstate_command, "write deny-oom fast", -3,
                            REDISMODULE_CMD_KEY_OW | REDISMODULE_CMD_KEY_UPDATE, NULL, RL_SINCE);
}
