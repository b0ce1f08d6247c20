/* command.c -- every command of the module, in one table, and the one path of the limiter commands.
 *
 * The table (register_all_commands) holds every command the module registers: a limiter's command and its
 * read-only form for each row of the list (limiters.h), RL.ALL and RL.ALL_RO, RL.RESET, RL.RELEASE, RL.RENEW
 * and RL.LEASES (a concurrency limiter's leases, leases.c), RL.SETSTATE, and the optional RL.CLOCK (module
 * argument test-clock) and CL.THROTTLE (unless no-cl-throttle). Each row gives its name, function, flags, key
 * spec, COMMAND DOCS (generated from the syntax tables by docs.c for the limiters and RL.ALL) and ACL
 * categories (from its flags), and one loop registers them.
 *
 * As SET, SETEX and SETNX share setGenericCommand in Redis, every limiter command shares one path: parse its
 * arguments once into a call (rl_module.h: one clause for RL.TOKEN ... RL.SMOOTH_RO, n for RL.ALL), then run
 * it: through wait.c when it waits or others wait (the one WAIT dispatch), else decided now (call.c) and
 * answered (answer.c: counted, then replied or, with BLOCK, held). A command differs from another only by its
 * row in the list, i.e. its syntax (syntax.c) and its storage's steps; a read-only form (RL.TOKEN_RO) is its
 * command with DRYRUN set and a key opened for reading. */
#include <stdio.h>
#include <string.h>

#include "cl_throttle.h"
#include "clock.h"
#include "compat.h"
#include "docs.h"
#include "answer.h"
#include "rl_module.h"

/* --- the path of every limiter command ------------------------------------------------------------------ */

static int run(RedisModuleCtx *ctx, rl_call *call) {
    if ((call->flags & RL_F_WAIT) || rl_waiters) return rl_wait_run(ctx, call); /* their order decides */
    rl_outcome o;
    rl_call_decide(ctx, call, 0, -1, &o);
    return rl_answer(ctx, call, &o);
}

/* A limiter's command or read-only form: a call of one clause. */
static int limiter_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, const rl_limiter *lim,
                           const rl_syntax *syntax, rl_counters *stats) {
    int nargs = argc - 2;
    if (nargs < syntax->nparams || nargs > RL_MAX_ARGS) return rl_answer_error(ctx, stats, NULL);
    rl_call call;
    rl_request *req = &call.clause[0].req;
    const char *args[RL_MAX_ARGS];
    size_t lens[RL_MAX_ARGS];
    char err[RL_ERR_LEN];
    for (int i = 0; i < nargs; i++) args[i] = RedisModule_StringPtrLen(argv[i + 2], &lens[i]);
    if (rl_parse(syntax, nargs, args, lens, req, err) != 0) return rl_answer_error(ctx, stats, err);
    if (syntax->excluded & RL_F_DRYRUN) req->flags |= RL_F_DRYRUN; /* a read-only form */
    call.n = 1;
    call.all = 0;
    call.policy = NULL;
    call.flags = req->flags;
    call.wait_timeout_ms = req->wait_timeout_ms;
    call.stats = stats;
    call.clause[0].lim = lim;
    call.clause[0].key = argv[1];
    call.clause[0].id = (req->flags & RL_F_ID) ? argv[2 + req->id_arg] : NULL;
    return run(ctx, &call);
}

/* RL.ALL and RL.ALL_RO: a call of one clause per key. */
static int all_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, const rl_syntax *syn,
                       rl_counters *stats) {
    if (RedisModule_IsKeysPositionRequest(ctx)) return rl_all_report_keys(ctx, argv, argc);
    rl_call call;
    char err[RL_ERR_LEN];
    if (rl_all_parse(syn, argv, argc, &call, err) != 0) return rl_answer_error(ctx, stats, err[0] ? err : NULL);
    call.stats = stats;
    return run(ctx, &call);
}

static int command_all(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    return all_command(ctx, argv, argc, &rl_all_syntax, &rl_stats[RL_STAT_ALL]);
}

static int command_all_ro(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    return all_command(ctx, argv, argc, &rl_all_syntax_ro, &rl_stats[RL_STAT_ALL_RO]);
}

/* RL.CHECK and RL.CHECK_RO: a call of one clause per limit of the policy, all on the key (policy.c). */
static int check_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, const rl_syntax *syn,
                         rl_counters *stats) {
    rl_call call;
    char err[RL_ERR_LEN];
    if (rl_check_parse(syn, argv, argc, &call, err) != 0) return rl_answer_error(ctx, stats, err[0] ? err : NULL);
    call.stats = stats;
    return run(ctx, &call);
}

static int command_check(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    return check_command(ctx, argv, argc, &rl_check_syntax, &rl_stats[RL_STAT_CHECK]);
}

static int command_check_ro(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    return check_command(ctx, argv, argc, &rl_check_syntax_ro, &rl_stats[RL_STAT_CHECK_RO]);
}

/* --- the list's commands, generated -----------------------------------------------------------------------
 *
 * For each row of the list: its command function and its read-only form's. */

#define LIMITER_FUNCTIONS(id, command, type_name, tag, algorithm, storage)                                      \
    static int command_##id(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {                           \
        return limiter_command(ctx, argv, argc, &rl_limiters[RL_LIM_##id], &rl_syntaxes[RL_LIM_##id],           \
                               &rl_stats[2 * RL_LIM_##id]);                                                      \
    }                                                                                                             \
    static int command_ro_##id(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {                        \
        return limiter_command(ctx, argv, argc, &rl_limiters[RL_LIM_##id], &rl_syntaxes_ro[RL_LIM_##id],        \
                               &rl_stats[2 * RL_LIM_##id + 1]);                                                  \
    }
RL_LIMITERS(LIMITER_FUNCTIONS)

/* The two functions of each row, by its index. */
#define LIMITER_FNS(id, command, type_name, tag, algorithm, storage) [RL_LIM_##id] = {command_##id, command_ro_##id},
static const RedisModuleCmdFunc limiter_fns[RL_NLIMITERS][2] = {RL_LIMITERS(LIMITER_FNS)};

/* --- the table ------------------------------------------------------------------------------------------ */

#define RL_SINCE "1.0.0"
#define RL_SINCE_RO "1.1.0"

/* Where a command's keys are: one at argument 1, every argument from 1 on, numkeys at 1 and the keys after
 * it, or none (RL.CLOCK). Key specs make COMMAND GETKEYS, ACL key patterns and Cluster routing (CROSSSLOT) see them. */
typedef enum { KEY_AT_1, KEY_AT_2, KEYS_FROM_1, KEYS_COUNTED, NO_KEYS } key_layout;

static RedisModuleCommandKeySpec key_spec(key_layout layout, uint64_t flags) {
    RedisModuleCommandKeySpec spec = {.flags = flags, .begin_search_type = REDISMODULE_KSPEC_BS_INDEX,
                                      .bs.index.pos = layout == KEY_AT_2 ? 2 : 1};
    if (layout == KEYS_COUNTED) {
        spec.find_keys_type = REDISMODULE_KSPEC_FK_KEYNUM;
        spec.fk.keynum.keynumidx = 0;
        spec.fk.keynum.firstkey = 1;
        spec.fk.keynum.keystep = 1;
    } else {
        spec.find_keys_type = REDISMODULE_KSPEC_FK_RANGE;
        spec.fk.range.lastkey = layout == KEY_AT_1 || layout == KEY_AT_2 ? 0 : -1;
        spec.fk.range.keystep = 1;
    }
    return spec;
}

/* Which commands load only with a module argument. */
typedef enum { ALWAYS, WITH_TEST_CLOCK, WITH_CL_THROTTLE } load_when;

/* What COMMAND DOCS says of a command's arguments: generated from a limiter's syntax or RL.ALL's, or given. */
typedef enum { DOCS_NONE, DOCS_LIMITER, DOCS_ALL, DOCS_CHECK, DOCS_GIVEN } docs_kind;

typedef struct command_def {
    const char *name;
    RedisModuleCmdFunc fn;
    const char *flags;
    int arity;
    key_layout keys;
    uint64_t key_flags;
    const char *since, *summary, *complexity;
    docs_kind docs;
    const rl_syntax *syntax;            /* DOCS_LIMITER, DOCS_ALL */
    const RedisModuleCommandArg *given; /* DOCS_GIVEN */
    int acl;                            /* 1: @ratelimit, @read or @write, @fast as its flags say */
    load_when when;
} command_def;

/* The legacy first/last/step key positions; a counted layout has none (its key spec says), nor a command
 * without keys. */
static void legacy_keys(const command_def *def, int *first, int *last) {
    *first = def->keys == KEYS_COUNTED || def->keys == NO_KEYS ? 0 : def->keys == KEY_AT_2 ? 2 : 1;
    *last = def->keys == KEY_AT_1 ? 1 : def->keys == KEY_AT_2 ? 2 : def->keys == KEYS_FROM_1 ? -1 : 0;
}

static int describe(RedisModuleCommand *cmd, const command_def *def) {
    rl_docs_arena docs = {0};
    RedisModuleCommandArg *args = NULL;
    if (def->docs == DOCS_LIMITER) args = rl_docs_limiter(&docs, def->syntax);
    else if (def->docs == DOCS_ALL) args = rl_docs_all(&docs, def->syntax);
    else if (def->docs == DOCS_CHECK) args = rl_docs_check(&docs, def->syntax);
    else if (def->docs == DOCS_GIVEN) args = (RedisModuleCommandArg *)def->given; /* Redis copies it */
    if (def->docs != DOCS_NONE && (!args || docs.full)) return REDISMODULE_ERR;
    RedisModuleCommandKeySpec key_specs[] = {key_spec(def->keys, def->key_flags), {0}};
    RedisModuleCommandInfo info = {.version = REDISMODULE_COMMAND_INFO_VERSION,
                                   .arity = def->arity,
                                   .key_specs = def->keys == NO_KEYS ? NULL : key_specs,
                                   .since = def->since,
                                   .summary = def->summary,
                                   .complexity = def->complexity,
                                   .args = args};
    return RedisModule_SetCommandInfo(cmd, &info);
}

/* Register one row. A name already taken is an error, but CL.THROTTLE's: redis-cell, loaded first, has it,
 * and both cannot serve it; the module then loads without its own, with a warning. */
static int register_command(RedisModuleCtx *ctx, const command_def *def) {
    int first, last;
    legacy_keys(def, &first, &last);
    if (RedisModule_CreateCommand(ctx, def->name, def->fn, def->flags, first, last, first) != REDISMODULE_OK) {
        if (def->when != WITH_CL_THROTTLE) return REDISMODULE_ERR;
        RedisModule_Log(ctx, "warning", "ratelimit: CL.THROTTLE is already a command (redis-cell loaded?): loading without ours");
        return REDISMODULE_OK;
    }
    if (def->when == WITH_CL_THROTTLE) rl_cl_throttle_on = 1;
    RedisModuleCommand *cmd = RedisModule_GetCommand(ctx, def->name);
    if (!cmd) return REDISMODULE_ERR;
    if (def->acl && rl_compat_set_acl(cmd, strstr(def->flags, "readonly") != NULL, strstr(def->flags, "fast") != NULL) !=
                        REDISMODULE_OK)
        return REDISMODULE_ERR;
    return describe(cmd, def);
}

static const RedisModuleCommandArg reset_args[] = {
    {.name = "key", .type = REDISMODULE_ARG_TYPE_KEY, .key_spec_index = 0, .flags = REDISMODULE_CMD_ARG_MULTIPLE},
    {0}};

static const RedisModuleCommandArg release_args[] = {
    {.name = "key", .type = REDISMODULE_ARG_TYPE_KEY, .key_spec_index = 0},
    {.name = "lease_id", .type = REDISMODULE_ARG_TYPE_STRING, .key_spec_index = -1},
    {0}};
static const RedisModuleCommandArg renew_args[] = {
    {.name = "key", .type = REDISMODULE_ARG_TYPE_KEY, .key_spec_index = 0},
    {.name = "lease_id", .type = REDISMODULE_ARG_TYPE_STRING, .key_spec_index = -1},
    {.name = "lease_ms", .type = REDISMODULE_ARG_TYPE_INTEGER, .key_spec_index = -1},
    {0}};
static const RedisModuleCommandArg leases_args[] = {
    {.name = "key", .type = REDISMODULE_ARG_TYPE_KEY, .key_spec_index = 0}, {0}};

/* RL.UNBLOCK key: its lock ends (lock.c), and the clients waiting on the key are served, since requests that
 * the lock denied may fit now. */
static int command_unblock(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    int held;
    const char *failed = rl_unblock(ctx, argv[1], &held);
    if (failed) return RedisModule_ReplyWithError(ctx, failed);
    if (held) rl_wait_serve_keys(ctx, argv + 1, 1);
    return RedisModule_ReplyWithLongLong(ctx, held);
}

static const RedisModuleCommandArg block_args[] = {
    {.name = "key", .type = REDISMODULE_ARG_TYPE_KEY, .key_spec_index = 0},
    {.name = "ms", .type = REDISMODULE_ARG_TYPE_INTEGER, .key_spec_index = -1},
    {0}};
/* RL.UNBLOCK and RL.LOCKINFO take the key alone, as RL.LEASES. */

static const RedisModuleCommandArg clock_set[] = {
    {.name = "unix_ms", .type = REDISMODULE_ARG_TYPE_INTEGER, .key_spec_index = -1}, {0}};
static const RedisModuleCommandArg clock_advance[] = {
    {.name = "ms", .type = REDISMODULE_ARG_TYPE_INTEGER, .key_spec_index = -1}, {0}};
static const RedisModuleCommandArg clock_args[] = {
    {.name = "subcommand",
     .type = REDISMODULE_ARG_TYPE_ONEOF,
     .key_spec_index = -1,
     .subargs = (RedisModuleCommandArg[]){
         {.name = "set", .type = REDISMODULE_ARG_TYPE_BLOCK, .key_spec_index = -1, .token = "SET",
          .subargs = (RedisModuleCommandArg *)clock_set},
         {.name = "advance", .type = REDISMODULE_ARG_TYPE_BLOCK, .key_spec_index = -1, .token = "ADVANCE",
          .subargs = (RedisModuleCommandArg *)clock_advance},
         {.name = "get", .type = REDISMODULE_ARG_TYPE_PURE_TOKEN, .key_spec_index = -1, .token = "GET"},
         {.name = "real", .type = REDISMODULE_ARG_TYPE_PURE_TOKEN, .key_spec_index = -1, .token = "REAL"},
         {0}}},
    {0}};

#define MAX_COMMANDS (2 * RL_NLIMITERS + 14)
#define RL_SINCE_LOCKS "1.4.0"
#define RL_SINCE_LEASES "1.3.0"

int rl_commands_register(RedisModuleCtx *ctx, int test_clock, int cl_throttle) {
    const uint64_t update = REDISMODULE_CMD_KEY_RW | REDISMODULE_CMD_KEY_ACCESS | REDISMODULE_CMD_KEY_UPDATE;
    const uint64_t read = REDISMODULE_CMD_KEY_RO | REDISMODULE_CMD_KEY_ACCESS;
    command_def table[MAX_COMMANDS];
    int n = 0;
    for (int i = 0; i < RL_NLIMITERS; i++) {
        const rl_limiter *lim = &rl_limiters[i];
        const rl_syntax *syn = lim->syntax, *ro = lim->syntax_ro;
        table[n++] = (command_def){syn->name, limiter_fns[i][0], lim->steps->flags, -(2 + syn->nparams), KEY_AT_1, update,
                                   syn->since, syn->summary, syn->complexity, DOCS_LIMITER, syn, NULL, 1, ALWAYS};
        table[n++] = (command_def){ro->name, limiter_fns[i][1], lim->steps->flags_ro, -(2 + ro->nparams), KEY_AT_1, read,
                                   ro->since, ro->summary, ro->complexity, DOCS_LIMITER, ro, NULL, 1, ALWAYS};
    }
    /* No limiter command, RL.ALL, RL.CHECK or CL.THROTTLE takes deny-oom: past maxmemory the call path
     * answers what writes nothing (a denial, DRYRUN, COST 0) and refuses, with Redis's OOM error, a call that
     * would write (rl_write_refused, call.c). RL.BLOCK, RL.SETSTATE and RL.POLICY SET keep it: they always
     * write, and may grow a key. RL.ALL may hold a sliding log, hence not fast; RL.RESET may delete one. */
    const rl_syntax *all = &rl_all_syntax, *all_ro = &rl_all_syntax_ro;
    table[n++] = (command_def){all->name, command_all, "write getkeys-api", -6, KEYS_COUNTED, update,
                               all->since, all->summary, all->complexity, DOCS_ALL, all, NULL, 1, ALWAYS};
    table[n++] = (command_def){all_ro->name, command_all_ro, "readonly getkeys-api", -6, KEYS_COUNTED, read,
                               all_ro->since, all_ro->summary, all_ro->complexity, DOCS_ALL, all_ro, NULL, 1, ALWAYS};
    /* RL.CHECK writes one key's value of up to 16 states whole: not fast. */
    const rl_syntax *check = &rl_check_syntax, *check_ro = &rl_check_syntax_ro;
    table[n++] = (command_def){check->name, command_check, "write", -3, KEY_AT_2, update, check->since,
                               check->summary, check->complexity, DOCS_CHECK, check, NULL, 1, ALWAYS};
    table[n++] = (command_def){check_ro->name, command_check_ro, "readonly", -3, KEY_AT_2, read, check_ro->since,
                               check_ro->summary, check_ro->complexity, DOCS_CHECK, check_ro, NULL, 1, ALWAYS};
    table[n++] = (command_def){"rl.reset", rl_reset_command, "write", -2, KEYS_FROM_1,
                               REDISMODULE_CMD_KEY_RM | REDISMODULE_CMD_KEY_DELETE, RL_SINCE_RO,
                               "Deletes limiter keys, answering how many held a limiter.",
                               "O(N) in the keys, plus O(M) for a sliding log of M entries", DOCS_GIVEN, NULL,
                               reset_args, 1, ALWAYS};
    /* A release and a renewal never grow a key (they take no deny-oom: under maxmemory a client must still be
     * able to give its slot back); each write stores and replicates the key's leases whole, hence not fast. */
    const uint64_t rw = REDISMODULE_CMD_KEY_RW | REDISMODULE_CMD_KEY_UPDATE;
    table[n++] = (command_def){"rl.release", rl_release_command, "write", 3, KEY_AT_1, rw, RL_SINCE_LEASES,
                               "Ends a lease taken by RL.ACQUIRE now, answering 1, or 0 when there is no such lease.",
                               "O(N) in the leases of the key", DOCS_GIVEN, NULL, release_args, 1, ALWAYS};
    table[n++] = (command_def){"rl.renew", rl_renew_command, "write", 4, KEY_AT_1, rw, RL_SINCE_LEASES,
                               "Makes a lease end lease_ms from now, answering 1, or 0 when there is no such lease.",
                               "O(N) in the leases of the key", DOCS_GIVEN, NULL, renew_args, 1, ALWAYS};
    table[n++] = (command_def){"rl.leases", rl_leases_command, "readonly", 2, KEY_AT_1, read, RL_SINCE_LEASES,
                               "Lists the leases a concurrency limit holds now, oldest first: id, units, ms to expiry.",
                               "O(N log N) in the leases of the key", DOCS_GIVEN, NULL, leases_args, 1, ALWAYS};
    /* A lock is a key's few words: set and ended like a cell limiter's state (RL.UNBLOCK only ever shrinks a
     * key, so it takes no deny-oom). */
    table[n++] = (command_def){"rl.block", rl_block_command, "write deny-oom fast", 3, KEY_AT_1, rw, RL_SINCE_LOCKS,
                               "Locks a limiter key for ms: every limiter command is denied on it until then.", "O(1)",
                               DOCS_GIVEN, NULL, block_args, 1, ALWAYS};
    table[n++] = (command_def){"rl.unblock", command_unblock, "write fast", 2, KEY_AT_1, rw, RL_SINCE_LOCKS,
                               "Ends a key's lock and forgives its strikes, answering 1 if a lock held, else 0.", "O(1)",
                               DOCS_GIVEN, NULL, leases_args, 1, ALWAYS};
    table[n++] = (command_def){"rl.lockinfo", rl_lockinfo_command, "readonly fast", 2, KEY_AT_1, read, RL_SINCE_LOCKS,
                               "Answers the ms left on a key's lock (0 when none holds) and its strikes.", "O(1)",
                               DOCS_GIVEN, NULL, leases_args, 1, ALWAYS};
    table[n++] = (command_def){"rl.setstate", rl_setstate_command, "write deny-oom fast", -3, KEY_AT_1,
                               REDISMODULE_CMD_KEY_OW | REDISMODULE_CMD_KEY_UPDATE, RL_SINCE, NULL, NULL, DOCS_NONE,
                               NULL, NULL, 1, ALWAYS};
    /* The test clock is in no ACL category: it is no limiter command, and no user should reach it. */
    table[n++] = (command_def){"rl.clock", rl_clock_command, "fast allow-loading allow-stale", -2, NO_KEYS, 0, RL_SINCE,
                               "Freezes, moves, reads or releases the module's test clock.", "O(1), and O(N) in the "
                               "clients waiting when the clock moves", DOCS_GIVEN, NULL, clock_args, 0, WITH_TEST_CLOCK};
    table[n++] = (command_def){RL_CL_THROTTLE_NAME, rl_cl_throttle_command, "write fast", -5, KEY_AT_1, update,
                               RL_SINCE_RO, RL_CL_THROTTLE_SUMMARY, "O(1)", DOCS_GIVEN, NULL, rl_cl_throttle_args, 1,
                               WITH_CL_THROTTLE};
    for (int i = 0; i < n; i++) {
        const command_def *def = &table[i];
        if ((def->when == WITH_TEST_CLOCK && !test_clock) || (def->when == WITH_CL_THROTTLE && !cl_throttle)) continue;
        if (register_command(ctx, def) != REDISMODULE_OK) return REDISMODULE_ERR;
    }
    return REDISMODULE_OK;
}
