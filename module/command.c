/* command.c -- the command table and the one generic path every RL.* command runs.
 *
 * As SET, SETEX and SETNX share setGenericCommand in Redis, every RL.* command shares rl_generic_command:
 * a command differs from another only by its row in rl_commands, i.e. its syntax (numbers and options,
 * in syntax.c) and how it executes a decision against its key (a 16-byte cell for RL.TOKEN, RL.LEAKY and
 * RL.WINDOW, a sorted set for RL.SLIDINGLOG). The path: parse, read the clock, execute (check the parameters'
 * combination, decide, store the effect and replicate it unless DRYRUN), reply, or for BLOCK hold the
 * reply until wait_ms has passed. */
#include <stdio.h>

#include "clock.h"
#include "rl_module.h"
#include "syntax.h"

typedef struct rl_command_def {
    const rl_syntax *syntax;
    rl_execute_fn execute;
    const void *target; /* what execute works on: the rl_kind of a cell command */
} rl_command_def;

#define NOPTS(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define CELL_COMMAND(kind) rl_cell_execute, &rl_kinds[kind]

static const rl_command_def rl_commands[] = {
    {&rl_syntaxes[RL_SYNTAX_TOKEN], CELL_COMMAND(RL_KIND_TOKEN)},
    {&rl_syntaxes[RL_SYNTAX_LEAKY], CELL_COMMAND(RL_KIND_LEAKY)},
    {&rl_syntaxes[RL_SYNTAX_WINDOW], CELL_COMMAND(RL_KIND_WINDOW)},
    {&rl_syntaxes[RL_SYNTAX_SLIDINGLOG], rl_slog_execute, NULL},
};

static int rl_generic_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, const rl_command_def *def) {
    int nargs = argc - 2;
    if (nargs < def->syntax->nparams || nargs > RL_MAX_ARGS) return RedisModule_WrongArity(ctx);

    const char *args[RL_MAX_ARGS];
    size_t lens[RL_MAX_ARGS];
    for (int i = 0; i < nargs; i++) args[i] = RedisModule_StringPtrLen(argv[i + 2], &lens[i]);
    rl_request req;
    char err[RL_ERR_LEN];
    if (rl_parse(def->syntax, nargs, args, lens, &req, err) != 0) return RedisModule_ReplyWithError(ctx, err);
    req.now_us = rl_clock_now_us();

    rl_reply reply;
    const char *failed = def->execute(ctx, argv[1], &req, def->target, &reply);
    if (failed) return RedisModule_ReplyWithError(ctx, failed);
    if ((req.flags & (RL_F_BLOCK | RL_F_DRYRUN)) == RL_F_BLOCK && reply.allowed && reply.wait_ms > 0 &&
        rl_can_block(ctx))
        return rl_hold_reply(ctx, &reply);
    return rl_send_reply(ctx, &reply);
}

#define RL_COMMAND_FN(i)                                                                      \
    static int rl_command_##i(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {      \
        return rl_generic_command(ctx, argv, argc, &rl_commands[i]);                           \
    }
RL_COMMAND_FN(0)
RL_COMMAND_FN(1)
RL_COMMAND_FN(2)
RL_COMMAND_FN(3)
static RedisModuleCmdFunc rl_command_fns[] = {rl_command_0, rl_command_1, rl_command_2, rl_command_3};

/* Key specs: the key is argument 1, read and written. They make COMMAND GETKEYS, ACL key patterns and
 * Cluster routing see it. */
static int register_command(RedisModuleCtx *ctx, const char *name, RedisModuleCmdFunc fn, const char *flags,
                            int arity, uint64_t key_flags) {
    if (RedisModule_CreateCommand(ctx, name, fn, flags, 1, 1, 1) != REDISMODULE_OK) return REDISMODULE_ERR;
    RedisModuleCommand *cmd = RedisModule_GetCommand(ctx, name);
    RedisModuleCommandKeySpec key_specs[] = {
        {.flags = key_flags,
         .begin_search_type = REDISMODULE_KSPEC_BS_INDEX,
         .bs.index.pos = 1,
         .find_keys_type = REDISMODULE_KSPEC_FK_RANGE,
         .fk.range = {0, 1, 0}},
        {0}};
    RedisModuleCommandInfo info = {.version = REDISMODULE_COMMAND_INFO_VERSION, .arity = arity, .key_specs = key_specs};
    return cmd && RedisModule_SetCommandInfo(cmd, &info) == REDISMODULE_OK ? REDISMODULE_OK : REDISMODULE_ERR;
}

int rl_commands_register(RedisModuleCtx *ctx) {
    if (NOPTS(rl_command_fns) != NOPTS(rl_commands)) return REDISMODULE_ERR;
    const uint64_t update = REDISMODULE_CMD_KEY_RW | REDISMODULE_CMD_KEY_ACCESS | REDISMODULE_CMD_KEY_UPDATE;
    for (int i = 0; i < NOPTS(rl_commands); i++)
        if (register_command(ctx, rl_commands[i].syntax->name, rl_command_fns[i], "write deny-oom fast",
                             -(2 + rl_commands[i].syntax->nparams), update) != REDISMODULE_OK)
            return REDISMODULE_ERR;
    return register_command(ctx, "rl.setstate", rl_setstate_command, "write deny-oom fast", -3,
                            REDISMODULE_CMD_KEY_OW | REDISMODULE_CMD_KEY_UPDATE);
}
