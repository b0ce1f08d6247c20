/* command.c -- the limiter table, generated from the list, and the one generic path every RL.* command runs.
 *
 * As SET, SETEX and SETNX share setGenericCommand in Redis, every RL.* command shares rl_generic_command:
 * a command differs from another only by its row in the list (limiters.h), i.e. its syntax (syntax.c)
 * and its storage's steps (rl_module.h); a read-only form (RL.TOKEN_RO) is its command with DRYRUN set
 * and a key opened for reading. The path: parse, read the clock, prepare (validate, decide), commit unless
 * DRYRUN or nothing changes, release, then reply, or for BLOCK hold the reply until wait_ms has passed. A
 * call with WAIT, and every call while some client waits, goes through wait.c instead, which decides it
 * with rl_limiter_decide (the same steps, answering an rl_outcome) in its turn.
 *
 * Only a commit touches the key, so only a commit signals it (WATCH, client-side caching) and fires the
 * keyspace event "<command>" in the module class (`d`): the module loads with implicit signalling off,
 * since Redis would otherwise signal every key opened for writing, denied requests included. */
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "compat.h"
#include "rl_module.h"

void rl_count(rl_counters *stats, const rl_pending *p) {
    int real = !(p->req->flags & RL_F_DRYRUN);
    stats->admitted += p->reply.allowed != 0;
    stats->denied += p->reply.allowed == 0;
    if (real) stats->units_admitted += p->reply.granted; /* a refund admits none */
    if (real && p->changes && p->creates) stats->keys_created++;
}

void rl_commit(RedisModuleCtx *ctx, rl_pending *p) {
    p->lim->steps->commit(ctx, p);
    RedisModule_SignalModifiedKey(ctx, p->keyname);
    RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_MODULE, p->lim->syntax->name, p->keyname);
}

/* Decide a parsed request on its key: prepare, commit unless DRYRUN or nothing changes, release. Fills the
 * reply and returns NULL, or returns the error to reply. Counts the call's verdict in stats (NULL: not). */
static const char *decide(RedisModuleCtx *ctx, const rl_limiter *lim, const rl_request *req, RedisModuleString *key,
                          rl_counters *stats, rl_reply *reply, char err[RL_ERR_LEN]) {
    /* Only what prepare does not always set: the effect is filled by prepare (no memset on the hot path). */
    rl_pending p;
    p.lim = lim;
    p.req = req;
    p.keyname = key;
    p.key = NULL;
    p.changes = p.creates = 0;
    const char *failed = lim->steps->prepare(ctx, &p, err);
    if (!failed && p.changes && !(req->flags & RL_F_DRYRUN)) rl_commit(ctx, &p);
    lim->steps->release(ctx, &p);
    if (failed) {
        if (stats) stats->errors++;
        return failed;
    }
    if (stats) rl_count(stats, &p);
    *reply = p.reply;
    return NULL;
}

/* Parse argv (command, key, arguments) with syntax; 0, or -1 with err. */
static int parse_call(const rl_syntax *syntax, RedisModuleString **argv, int argc, rl_request *req,
                      char err[RL_ERR_LEN]) {
    int nargs = argc - 2;
    const char *args[RL_MAX_ARGS];
    size_t lens[RL_MAX_ARGS];
    for (int i = 0; i < nargs; i++) args[i] = RedisModule_StringPtrLen(argv[i + 2], &lens[i]);
    if (rl_parse(syntax, nargs, args, lens, req, err) != 0) return -1;
    if (syntax->excluded & RL_F_DRYRUN) req->flags |= RL_F_DRYRUN; /* a read-only form */
    req->now_us = rl_clock_now_us();
    return 0;
}

void rl_limiter_decide(RedisModuleCtx *ctx, const rl_limiter *lim, RedisModuleString **argv, int argc,
                       uint32_t add_flags, int64_t cost, rl_counters *stats, rl_outcome *o) {
    rl_request req;
    o->all = 0;
    o->n = 1;
    o->error = NULL;
    if (parse_call(lim->syntax, argv, argc, &req, o->errbuf) != 0) { /* it parsed when it came */
        o->error = o->errbuf;
        return;
    }
    req.flags |= add_flags;
    if (cost >= 0) req.cost = cost;
    o->with_granted = (req.flags & RL_F_ATMOST) != 0;
    o->error = decide(ctx, lim, &req, argv[1], stats, &o->replies[0], o->errbuf);
    o->allowed = o->replies[0].allowed;
    o->retry_after_ms = o->replies[0].retry_after_ms;
}

static int rl_generic_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, const rl_limiter *lim,
                              const rl_syntax *syntax, rl_counters *stats) {
    stats->calls++;
    if (argc - 2 < syntax->nparams || argc - 2 > RL_MAX_ARGS) {
        stats->errors++;
        return RedisModule_WrongArity(ctx);
    }
    rl_request req;
    char err[RL_ERR_LEN];
    if (parse_call(syntax, argv, argc, &req, err) != 0) {
        stats->errors++;
        return RedisModule_ReplyWithError(ctx, err);
    }
    /* WAIT, or waiters on some key: their order decides (wait.c). */
    if ((req.flags & RL_F_WAIT) || rl_waiters)
        return rl_wait_call(ctx, lim, argv, argc,
                            (req.flags & (RL_F_WAIT | RL_F_DRYRUN)) == RL_F_WAIT ? req.wait_timeout_ms : 0,
                            req.flags, &argv[1], 1, stats);

    rl_reply reply;
    const char *failed = decide(ctx, lim, &req, argv[1], stats, &reply, err);
    if (failed) return RedisModule_ReplyWithError(ctx, failed);
    if ((req.flags & (RL_F_BLOCK | RL_F_DRYRUN)) == RL_F_BLOCK && reply.allowed && reply.wait_ms > 0 &&
        rl_can_block(ctx))
        return rl_hold_reply(ctx, lim, argv, argc, &reply);
    return rl_send_reply(ctx, &reply, (req.flags & RL_F_ATMOST) != 0);
}

/* --- the table, generated from the list ---------------------------------------------------------------
 *
 * For each row: its command function and its read-only form's. */

#define LIMITER_FUNCTIONS(id, command, type_name, tag, algorithm, storage)                     \
    static int command_##id(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {          \
        return rl_generic_command(ctx, argv, argc, &rl_limiters[RL_LIM_##id], &rl_syntaxes[RL_LIM_##id],      \
                                  &rl_stats[2 * RL_LIM_##id]);                                                 \
    }                                                                                            \
    static int command_ro_##id(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {       \
        return rl_generic_command(ctx, argv, argc, &rl_limiters[RL_LIM_##id], &rl_syntaxes_ro[RL_LIM_##id],   \
                                  &rl_stats[2 * RL_LIM_##id + 1]);                                             \
    }
RL_LIMITERS(LIMITER_FUNCTIONS)

#define LIMITER_ROW(id, command, type_name, tag, algorithm, storage)                           \
    [RL_LIM_##id] = {#id, &rl_syntaxes[RL_LIM_##id], &rl_syntaxes_ro[RL_LIM_##id], type_name, tag, algorithm, \
                     &rl_##storage##_steps, command_##id, command_ro_##id, NULL},
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

/* COMMAND DOCS' arguments, generated from the syntax tables, so that COMMAND DOCS and redis-cli's hints read
 * as docs/commands.md's syntax lines: `key capacity refill_tokens refill_ms [COST n|REFUND n] [ATMOST] ...`.
 * A number is an integer (a double for a decimal) named as the table names it; an option is optional, its
 * token the option's name, its name the value's ("n", "timeout_ms") or, for a flag (a pure token), the
 * option's in lower case. Options that exclude each other are one optional choice (a oneof, as SET's
 * [NX | XX]): the first option not yet placed, with every later one that excludes each of the choice's
 * members. Redis copies what it is given, so the arguments live in a docs_arena only while a command is
 * registered. */
#define DOCS_ARGS 64
#define DOCS_NAMES 64
#define DOCS_NAME_LEN 48

typedef struct docs_arena {
    RedisModuleCommandArg args[DOCS_ARGS];
    char names[DOCS_NAMES][DOCS_NAME_LEN];
    char summary[192]; /* RL.ALL's spec */
    int nargs, nnames;
    int full; /* a table outgrew the arena: registration fails, at load */
} docs_arena;

/* n zeroed arguments (the last one ends a list), or NULL when the arena is full. */
static RedisModuleCommandArg *docs_take(docs_arena *d, int n) {
    if (d->nargs + n > DOCS_ARGS) {
        d->full = 1;
        return NULL;
    }
    RedisModuleCommandArg *a = &d->args[d->nargs];
    memset(a, 0, (size_t)n * sizeof *a);
    d->nargs += n;
    return a;
}

/* The lower-case names of options[0..n), joined by "_or_" ("cost_or_refund"), kept in the arena. */
static const char *docs_name(docs_arena *d, const rl_option_spec *const *options, int n) {
    if (d->nnames == DOCS_NAMES) {
        d->full = 1;
        return "?";
    }
    char *out = d->names[d->nnames++];
    size_t used = 0;
    for (int i = 0; i < n; i++)
        for (const char *c = i ? "_or_" : "", *name = options[i]->name; *c || *name;) {
            char ch = *c ? *c++ : *name++;
            if (used + 1 < DOCS_NAME_LEN) out[used++] = (char)(ch >= 'A' && ch <= 'Z' ? ch | 0x20 : ch);
        }
    out[used] = '\0';
    return out;
}

static RedisModuleCommandArg docs_option(docs_arena *d, const rl_option_spec *o, int flags) {
    RedisModuleCommandArgType type = o->slot == RL_NO_VALUE        ? REDISMODULE_ARG_TYPE_PURE_TOKEN
                                     : RL_SLOT_IS_DECIMAL(o->slot) ? REDISMODULE_ARG_TYPE_DOUBLE
                                                                   : REDISMODULE_ARG_TYPE_INTEGER;
    const char *name = o->slot == RL_NO_VALUE ? docs_name(d, &o, 1) : o->value;
    return (RedisModuleCommandArg){.name = name, .type = type, .key_spec_index = -1, .token = o->name, .flags = flags};
}

static int exclusive(const rl_option_spec *a, const rl_option_spec *b) {
    return (a->conflicts & b->flag) && (b->conflicts & a->flag);
}

/* The numbers of syn at out. Returns how many. */
static int docs_params(const rl_syntax *syn, RedisModuleCommandArg *out) {
    for (int i = 0; i < syn->nparams; i++)
        out[i] = (RedisModuleCommandArg){
            .name = syn->params[i].name,
            .type = syn->params[i].kind == RL_DECIMAL ? REDISMODULE_ARG_TYPE_DOUBLE : REDISMODULE_ARG_TYPE_INTEGER,
            .key_spec_index = -1};
    return syn->nparams;
}

/* The options syn takes, but those of `skip`, at out (room for one per option): single options and choices.
 * Returns how many arguments. */
static int docs_options(docs_arena *d, const rl_syntax *syn, uint32_t skip, RedisModuleCommandArg *out) {
    uint32_t placed = skip | syn->excluded;
    int n = 0;
    for (int i = 0; i < syn->noptions; i++) {
        if (syn->options[i].flag & placed) continue;
        const rl_option_spec *members[RL_MAX_ARGS];
        int m = 0;
        for (int j = i; j < syn->noptions && m < RL_MAX_ARGS; j++) {
            const rl_option_spec *o = &syn->options[j];
            int excludes_all = !(o->flag & placed);
            for (int k = 0; k < m && excludes_all; k++) excludes_all = exclusive(members[k], o);
            if (!excludes_all) continue;
            members[m++] = o;
            placed |= o->flag;
        }
        if (m == 1) {
            out[n++] = docs_option(d, members[0], REDISMODULE_CMD_ARG_OPTIONAL);
            continue;
        }
        RedisModuleCommandArg *choice = docs_take(d, m + 1);
        if (!choice) return n;
        for (int k = 0; k < m; k++) choice[k] = docs_option(d, members[k], 0);
        out[n++] = (RedisModuleCommandArg){.name = docs_name(d, members, m), .type = REDISMODULE_ARG_TYPE_ONEOF,
                                           .key_spec_index = -1, .flags = REDISMODULE_CMD_ARG_OPTIONAL,
                                           .subargs = choice};
    }
    return n;
}

/* A limiter's command or read-only form: key, numbers, options. */
static RedisModuleCommandArg *docs_limiter(docs_arena *d, const rl_syntax *syn) {
    RedisModuleCommandArg *args = docs_take(d, 2 + syn->nparams + syn->noptions);
    if (!args) return NULL;
    args[0] = (RedisModuleCommandArg){.name = "key", .type = REDISMODULE_ARG_TYPE_KEY, .key_spec_index = 0};
    int n = 1 + docs_params(syn, args + 1);
    docs_options(d, syn, 0, args + n);
    return args;
}

/* RL.ALL or RL.ALL_RO: numkeys, the keys, the call's options, then LIMIT spec, once or more. A spec is a
 * string whose summary names the kinds: a clause is the read-only form of its kind's command less the key and
 * ATMOST, whose COMMAND DOCS say it (a block per kind, with its choices, would nest deeper than the 7 levels
 * of aggregates older hiredis readers accept, and make a hint wider than a terminal). */
static RedisModuleCommandArg *docs_all(docs_arena *d, const rl_syntax *syn) {
    RedisModuleCommandArg *args = docs_take(d, 4 + syn->noptions);
    if (!args) return NULL;
    args[0] = (RedisModuleCommandArg){.name = "numkeys", .type = REDISMODULE_ARG_TYPE_INTEGER, .key_spec_index = -1};
    args[1] = (RedisModuleCommandArg){
        .name = "key", .type = REDISMODULE_ARG_TYPE_KEY, .key_spec_index = 0, .flags = REDISMODULE_CMD_ARG_MULTIPLE};
    int n = 2 + docs_options(d, syn, 0, args + 2);
    size_t used = 0;
    for (int i = 0; i < RL_NLIMITERS && used < sizeof d->summary; i++) {
        const char *before = i == 0 ? "" : i == RL_NLIMITERS - 1 ? " or " : ", ";
        used += (size_t)snprintf(d->summary + used, sizeof d->summary - used, "%s%s", before, rl_limiters[i].kind);
    }
    if (used < sizeof d->summary)
        snprintf(d->summary + used, sizeof d->summary - used,
                 ", then the arguments of that command's read-only form after the key, but ATMOST; one per key");
    args[n] = (RedisModuleCommandArg){.name = "spec", .type = REDISMODULE_ARG_TYPE_STRING, .key_spec_index = -1,
                                      .token = "LIMIT", .summary = d->summary,
                                      .flags = REDISMODULE_CMD_ARG_MULTIPLE | REDISMODULE_CMD_ARG_MULTIPLE_TOKEN};
    return args;
}

/* Where a command's keys are: one at argument 1, every argument from 1 on, or numkeys at 1 and the keys
 * after it. Key specs make COMMAND GETKEYS, ACL key patterns and Cluster routing (CROSSSLOT) see them. */
typedef enum { KEY_AT_1, KEYS_FROM_1, KEYS_COUNTED } key_layout;

static RedisModuleCommandKeySpec key_spec(key_layout layout, uint64_t flags) {
    RedisModuleCommandKeySpec spec = {.flags = flags, .begin_search_type = REDISMODULE_KSPEC_BS_INDEX, .bs.index.pos = 1};
    if (layout == KEYS_COUNTED) {
        spec.find_keys_type = REDISMODULE_KSPEC_FK_KEYNUM;
        spec.fk.keynum.keynumidx = 0;
        spec.fk.keynum.firstkey = 1;
        spec.fk.keynum.keystep = 1;
    } else {
        spec.find_keys_type = REDISMODULE_KSPEC_FK_RANGE;
        spec.fk.range.lastkey = layout == KEY_AT_1 ? 0 : -1;
        spec.fk.range.keystep = 1;
    }
    return spec;
}

typedef struct command_def {
    const char *name;
    RedisModuleCmdFunc fn;
    const char *flags;
    int arity;
    key_layout keys;
    uint64_t key_flags;
    const char *since, *summary, *complexity;
    RedisModuleCommandArg *args; /* NULL: none described */
} command_def;

static int register_command(RedisModuleCtx *ctx, const command_def *def) {
    /* The legacy first/last/step key positions; a counted layout has none (its key spec says). */
    int first = def->keys == KEYS_COUNTED ? 0 : 1, last = def->keys == KEY_AT_1 ? 1 : def->keys == KEYS_FROM_1 ? -1 : 0;
    if (RedisModule_CreateCommand(ctx, def->name, def->fn, def->flags, first, last, first) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    RedisModuleCommand *cmd = RedisModule_GetCommand(ctx, def->name);
    /* ACL categories follow the flags: @read or @write, @fast, and @ratelimit. */
    if (rl_compat_set_acl(cmd, strstr(def->flags, "readonly") != NULL, strstr(def->flags, "fast") != NULL) !=
        REDISMODULE_OK)
        return REDISMODULE_ERR;
    RedisModuleCommandKeySpec key_specs[] = {key_spec(def->keys, def->key_flags), {0}};
    RedisModuleCommandInfo info = {.version = REDISMODULE_COMMAND_INFO_VERSION,
                                   .arity = def->arity,
                                   .key_specs = key_specs,
                                   .since = def->since,
                                   .summary = def->summary,
                                   .complexity = def->complexity,
                                   .args = def->args};
    return cmd && RedisModule_SetCommandInfo(cmd, &info) == REDISMODULE_OK ? REDISMODULE_OK : REDISMODULE_ERR;
}

/* A limiter's command or read-only form, described from its syntax. */
static int register_limiter_command(RedisModuleCtx *ctx, const rl_syntax *syn, RedisModuleCmdFunc fn,
                                    const char *flags, uint64_t key_flags) {
    docs_arena docs = {0};
    RedisModuleCommandArg *args = docs_limiter(&docs, syn);
    if (!args || docs.full) return REDISMODULE_ERR;
    command_def def = {syn->name, fn, flags, -(2 + syn->nparams), KEY_AT_1, key_flags, syn->since, syn->summary,
                       syn->complexity, args};
    return register_command(ctx, &def);
}

/* RL.ALL or RL.ALL_RO, described from its syntax and its clauses'. RL.ALL may hold a sliding log, hence not
 * fast. */
static int register_all(RedisModuleCtx *ctx, const rl_syntax *syn, RedisModuleCmdFunc fn, const char *flags,
                        uint64_t key_flags) {
    docs_arena docs = {0};
    RedisModuleCommandArg *args = docs_all(&docs, syn);
    if (!args || docs.full) return REDISMODULE_ERR;
    command_def def = {syn->name, fn, flags, -6, KEYS_COUNTED, key_flags, syn->since, syn->summary, syn->complexity,
                       args};
    return register_command(ctx, &def);
}

static RedisModuleCommandArg reset_args[] = {
    {.name = "key", .type = REDISMODULE_ARG_TYPE_KEY, .key_spec_index = 0, .flags = REDISMODULE_CMD_ARG_MULTIPLE},
    {0}};

int rl_commands_register(RedisModuleCtx *ctx) {
    const uint64_t update = REDISMODULE_CMD_KEY_RW | REDISMODULE_CMD_KEY_ACCESS | REDISMODULE_CMD_KEY_UPDATE;
    const uint64_t read = REDISMODULE_CMD_KEY_RO | REDISMODULE_CMD_KEY_ACCESS;
    for (int i = 0; i < RL_NLIMITERS; i++) {
        const rl_limiter *lim = &rl_limiters[i];
        if (register_limiter_command(ctx, lim->syntax, lim->command, lim->steps->flags, update) != REDISMODULE_OK ||
            register_limiter_command(ctx, lim->syntax_ro, lim->command_ro, lim->steps->flags_ro, read) != REDISMODULE_OK)
            return REDISMODULE_ERR;
    }
    if (register_all(ctx, &rl_all_syntax, rl_all_command, "write deny-oom getkeys-api", update) != REDISMODULE_OK ||
        register_all(ctx, &rl_all_syntax_ro, rl_all_ro_command, "readonly getkeys-api", read) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    /* RL.RESET may delete a sliding log. */
    const command_def others[] = {
        {"rl.reset", rl_reset_command, "write", -2, KEYS_FROM_1, REDISMODULE_CMD_KEY_RM | REDISMODULE_CMD_KEY_DELETE,
         RL_SINCE_RO, "Deletes limiter keys, answering how many held a limiter.",
         "O(N) in the keys, plus O(M) for a sliding log of M entries", reset_args},
        {"rl.setstate", rl_setstate_command, "write deny-oom fast", -3, KEY_AT_1,
         REDISMODULE_CMD_KEY_OW | REDISMODULE_CMD_KEY_UPDATE, RL_SINCE, NULL, NULL, NULL},
    };
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
        if (register_command(ctx, &others[i]) != REDISMODULE_OK) return REDISMODULE_ERR;
    return REDISMODULE_OK;
}
