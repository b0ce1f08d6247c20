/* policy.c -- policies kept in Redis: RL.POLICY SET|GET|DEL|LIST|FLUSH, and the calls RL.CHECK makes of them.
 *
 * Today's commands carry their limiter's parameters, so changing a limit means changing every client, and
 * old and new clients fight over one key meanwhile. A policy is named limits kept in the server: RL.POLICY SET
 * name [SHADOW] LIMIT limit_name spec ... (each spec an RL.ALL clause: all.c parses it), and RL.CHECK policy
 * key applies every limit to the one key, all or nothing, as RL.ALL would (call.c decides it; the key's value
 * holds every limit's state: store_bundle.c). SET replaces a policy whole and at once; keys move to it at their
 * next call, each limit keeping its state when it keeps its name and kind (store_bundle.c).
 *
 * Policies are kept like Redis's functions: outside the keyspace (FLUSHALL leaves them), in the RDB as module
 * aux data written before the keys (bundle_type.c registers the callbacks), replicated and appended to the AOF
 * as the RL.POLICY commands themselves, and emptied when a load starts (an RDB without them, a replica's full
 * sync, DEBUG RELOAD: the loaded data says which policies there are). A policy is stored as the arguments it was
 * set with and parsed again when loaded, so RL.POLICY GET answers it as it was set.
 *
 * A call that waits (WAIT) keeps its policy by reference; when the policy was replaced meanwhile, it is decided
 * under the new one (rl_policy_refresh), as a call arriving then would be. SHADOW: call.c decides as always,
 * and the answer says allowed (rl_module.h's rl_outcome: shadow_denied). */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "compat.h"
#include "rl_module.h"

#define POLICY_AUX_ENCVER 1

static RedisModuleDict *policies; /* name -> rl_policy*, the current ones */

/* The counters of a name, shared by the policies that had it (a replacement keeps them). */
typedef struct named_counters {
    rl_policy_counters c;
    int refs;
} named_counters;

static int arg_is(const char *s, size_t len, const char *word) {
    return strlen(word) == len && strncasecmp(s, word, len) == 0;
}

/* --- a policy's life --------------------------------------------------------------------------------- */

void rl_policy_hold(rl_policy *policy) { policy->refs++; }

void rl_policy_drop(rl_policy *policy) {
    if (--policy->refs > 0) return;
    named_counters *nc = (named_counters *)policy->stats;
    if (--nc->refs == 0) RedisModule_Free(nc);
    for (int i = 0; i < policy->argc; i++) RedisModule_FreeString(NULL, policy->argv[i]);
    RedisModule_Free(policy->argv);
    RedisModule_Free(policy);
}

static rl_policy *policy_lookup(const char *name, size_t len) {
    if (!policies) return NULL;
    return RedisModule_DictGetC(policies, (void *)name, len, NULL);
}

/* Make policy the registry's under its name (the caller drops the one it replaces). */
static void policy_install(rl_policy *policy) {
    RedisModule_DictReplaceC(policies, policy->name, policy->name_len, policy);
}

/* --- RL.POLICY SET's arguments ------------------------------------------------------------------------ */

/* "ERR LIMIT i: rest" -> "ERR LIMIT i (name): rest", in place. */
static void name_limit(char err[RL_ERR_LEN], int i, const char *name) {
    char head[24], out[RL_ERR_LEN];
    int hl = snprintf(head, sizeof head, "ERR LIMIT %d: ", i + 1);
    const char *rest = strncmp(err, head, (size_t)hl) == 0 ? err + hl : strncmp(err, "ERR ", 4) == 0 ? err + 4 : err;
    snprintf(out, sizeof out, "ERR LIMIT %d (%s): %s", i + 1, name, rest);
    memcpy(err, out, sizeof out);
}

/* 1 when the spec from args[at] to the next LIMIT gives something back (REFUND), which no policy takes. */
static int spec_refunds(int nargs, const char **args, const size_t *lens, int at) {
    for (; at < nargs && !arg_is(args[at], lens[at], "LIMIT"); at++)
        if (arg_is(args[at], lens[at], "REFUND")) return 1;
    return 0;
}

/* Limit i at args[*at] (past LIMIT): its name, then its spec. 0, or -1 with err naming it. */
static int parse_limit(rl_policy *policy, rl_call *scratch, int nargs, const char **args, const size_t *lens, int *at,
                       char err[RL_ERR_LEN]) {
    int i = policy->n;
    if (*at >= nargs || !rl_policy_name_ok(args[*at], lens[*at], RL_POLICY_LIMIT_NAME_MAX)) {
        snprintf(err, RL_ERR_LEN, "ERR LIMIT %d: limit_name: must be 1 to %d characters of A-Z, a-z, 0-9, _ and -",
                 i + 1, RL_POLICY_LIMIT_NAME_MAX);
        return -1;
    }
    rl_policy_limit *pl = &policy->limit[i];
    pl->name_len = lens[*at];
    memcpy(pl->name, args[*at], pl->name_len);
    pl->name[pl->name_len] = '\0';
    *at += 1;
    for (int j = 0; j < i; j++)
        if (policy->limit[j].name_len == pl->name_len && memcmp(policy->limit[j].name, pl->name, pl->name_len) == 0) {
            snprintf(err, RL_ERR_LEN, "ERR LIMIT %d (%s): limit name used twice (LIMIT %d has it)", i + 1, pl->name, j + 1);
            return -1;
        }
    if (spec_refunds(nargs, args, lens, *at)) {
        snprintf(err, RL_ERR_LEN, "ERR LIMIT %d (%s): REFUND: not in a policy (RL.CHECK takes; give back with the "
                 "limiter's own command)", i + 1, pl->name);
        return -1;
    }
    rl_request whole;
    memset(&whole, 0, sizeof whole);
    whole.cost = 1;
    if (rl_all_parse_spec(scratch, i, nargs, args, lens, at, &whole, err) != 0) {
        name_limit(err, i, pl->name);
        return -1;
    }
    const rl_limiter *row = scratch->clause[i].lim;
    rl_request *req = &scratch->clause[i].req;
    if (req->flags & RL_F_ID) {
        snprintf(err, RL_ERR_LEN, "ERR LIMIT %d (%s): ID: not in a policy (each lease RL.CHECK takes gets an id of its "
                 "own, in the reply)", i + 1, pl->name);
        return -1;
    }
    if ((row->alg && row->alg->validate(req, err) != 0) || ((req->flags & RL_LOCK_FLAGS) && rl_lockout_validate(req, err) != 0)) {
        name_limit(err, i, pl->name);
        return -1;
    }
    pl->lim = *row;
    pl->lim.steps = &rl_bundle_steps;
    pl->row = row;
    pl->policy = policy;
    pl->index = i;
    pl->req = *req;
    policy->n++;
    return 0;
}

/* A policy from its name and the arguments after it: NULL with err, or a new policy (refs 1, no counters). */
static rl_policy *policy_parse(const char *name, size_t name_len, int nargs, const char **args, const size_t *lens,
                               char err[RL_ERR_LEN]) {
    if (!rl_policy_name_ok(name, name_len, RL_POLICY_NAME_MAX)) {
        snprintf(err, RL_ERR_LEN, "ERR name: must be 1 to %d characters of A-Z, a-z, 0-9, _ and -", RL_POLICY_NAME_MAX);
        return NULL;
    }
    rl_policy *policy = RedisModule_Calloc(1, sizeof *policy);
    policy->name_len = name_len;
    memcpy(policy->name, name, name_len);
    policy->refs = 1;
    int at = 0;
    if (at < nargs && arg_is(args[at], lens[at], "SHADOW")) {
        policy->shadow = 1;
        at++;
    }
    rl_call *scratch = RedisModule_Alloc(sizeof *scratch); /* (large: a clause array of RL.ALL's size) */
    int failed = 0;
    while (!failed && at < nargs) {
        if (policy->n == RL_ALL_MAX_LIMITS) {
            snprintf(err, RL_ERR_LEN, "ERR LIMIT: a policy needs 1 to %d limits", RL_ALL_MAX_LIMITS);
            failed = 1;
        } else if (!arg_is(args[at], lens[at], "LIMIT")) {
            char shown[40];
            rl_sanitize(shown, sizeof shown, args[at], lens[at]);
            snprintf(err, RL_ERR_LEN, "ERR '%s': expected %sLIMIT limit_name kind ...", shown,
                     policy->n == 0 && at == 0 ? "SHADOW or " : "");
            failed = 1;
        } else {
            at++;
            failed = parse_limit(policy, scratch, nargs, args, lens, &at, err) != 0;
        }
    }
    RedisModule_Free(scratch);
    if (!failed && policy->n == 0) {
        snprintf(err, RL_ERR_LEN, "ERR LIMIT: a policy needs 1 to %d limits", RL_ALL_MAX_LIMITS);
        failed = 1;
    }
    if (failed) {
        RedisModule_Free(policy);
        return NULL;
    }
    return policy;
}

/* Set a policy from RL.POLICY SET's (or the RDB's) strings: argv[0] its name, then its arguments. */
static const char *policy_set(RedisModuleString **argv, int argc, char err[RL_ERR_LEN]) {
    enum { MAX_ARGS = 1 + RL_ALL_MAX_LIMITS * (RL_MAX_ARGS + 4) + 2 };
    if (argc - 1 > MAX_ARGS) {
        snprintf(err, RL_ERR_LEN, "ERR LIMIT: a policy needs 1 to %d limits", RL_ALL_MAX_LIMITS);
        return err;
    }
    const char *args[MAX_ARGS];
    size_t lens[MAX_ARGS], name_len;
    const char *name = RedisModule_StringPtrLen(argv[0], &name_len);
    for (int i = 1; i < argc; i++) args[i - 1] = RedisModule_StringPtrLen(argv[i], &lens[i - 1]);
    rl_policy *policy = policy_parse(name, name_len, argc - 1, args, lens, err);
    if (!policy) return err;
    policy->argc = argc - 1;
    policy->argv = RedisModule_Alloc(sizeof(RedisModuleString *) * (size_t)(argc > 1 ? argc - 1 : 1));
    for (int i = 1; i < argc; i++) policy->argv[i - 1] = RedisModule_CreateStringFromString(NULL, argv[i]);
    rl_policy *old = policy_lookup(name, name_len);
    named_counters *nc;
    if (old) {
        nc = (named_counters *)old->stats;
        nc->refs++;
        old->current = 0;
    } else {
        nc = RedisModule_Calloc(1, sizeof *nc);
        nc->refs = 1;
    }
    policy->stats = &nc->c;
    policy->current = 1;
    policy_install(policy);
    if (old) rl_policy_drop(old);
    return NULL;
}

static void policy_remove(rl_policy *policy) {
    RedisModule_DictDelC(policies, policy->name, policy->name_len, NULL);
    policy->current = 0;
    rl_policy_drop(policy);
}

/* Every policy goes: the registry starts empty, and each policy is dropped (a waiter's call may still hold one). */
static void policies_flush(void) {
    if (!policies) return;
    RedisModuleDict *old = policies;
    policies = RedisModule_CreateDict(NULL);
    RedisModuleDictIter *it = RedisModule_DictIteratorStartC(old, "^", NULL, 0);
    rl_policy *policy;
    while (RedisModule_DictNextC(it, NULL, (void **)&policy)) {
        policy->current = 0;
        rl_policy_drop(policy);
    }
    RedisModule_DictIteratorStop(it);
    RedisModule_FreeDict(NULL, old);
}

/* --- RL.POLICY ------------------------------------------------------------------------------------------ */

static int policy_set_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc < 3) return RedisModule_WrongArity(ctx);
    char err[RL_ERR_LEN];
    if (policy_set(argv + 2, argc - 2, err) != NULL) return RedisModule_ReplyWithError(ctx, err);
    RedisModule_ReplicateVerbatim(ctx);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

static int policy_get_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 3) return RedisModule_WrongArity(ctx);
    size_t len;
    const char *name = RedisModule_StringPtrLen(argv[2], &len);
    const rl_policy *policy = policy_lookup(name, len);
    if (!policy) return RedisModule_ReplyWithNull(ctx);
    RedisModule_ReplyWithArray(ctx, policy->argc);
    for (int i = 0; i < policy->argc; i++) RedisModule_ReplyWithString(ctx, policy->argv[i]);
    return REDISMODULE_OK;
}

static int policy_del_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 3) return RedisModule_WrongArity(ctx);
    size_t len;
    const char *name = RedisModule_StringPtrLen(argv[2], &len);
    rl_policy *policy = policy_lookup(name, len);
    if (policy) policy_remove(policy);
    RedisModule_ReplicateVerbatim(ctx);
    return RedisModule_ReplyWithLongLong(ctx, policy != NULL);
}

static int policy_list_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv;
    if (argc != 2) return RedisModule_WrongArity(ctx);
    RedisModule_ReplyWithArray(ctx, REDISMODULE_POSTPONED_LEN);
    long n = 0;
    RedisModuleDictIter *it = RedisModule_DictIteratorStartC(policies, "^", NULL, 0);
    rl_policy *policy;
    while (RedisModule_DictNextC(it, NULL, (void **)&policy)) {
        RedisModule_ReplyWithStringBuffer(ctx, policy->name, policy->name_len);
        n++;
    }
    RedisModule_DictIteratorStop(it);
    RedisModule_ReplySetArrayLength(ctx, n);
    return REDISMODULE_OK;
}

static int policy_flush_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv;
    if (argc != 2) return RedisModule_WrongArity(ctx);
    policies_flush();
    RedisModule_ReplicateVerbatim(ctx);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

/* --- RL.CHECK's calls ------------------------------------------------------------------------------------ */

/* call's clauses: its policy's limits on its key, each with the call's COST unless its spec fixes one. */
static void fill_call(rl_call *call, RedisModuleString *key) {
    const rl_policy *policy = call->policy;
    call->n = policy->n;
    call->all = 1;
    for (int i = 0; i < policy->n; i++) {
        rl_clause *c = &call->clause[i];
        c->lim = &policy->limit[i].lim;
        c->key = key;
        c->id = NULL;
        c->req = policy->limit[i].req;
        if (!(c->req.flags & RL_F_COST)) c->req.cost = call->cost;
        c->req.flags |= call->flags & RL_F_DRYRUN;
    }
}

int rl_check_parse(const rl_syntax *syn, RedisModuleString **argv, int argc, rl_call *call, char err[RL_ERR_LEN]) {
    err[0] = '\0';
    if (argc < 3 || argc - 3 > RL_MAX_ARGS) return -1;
    const char *args[RL_MAX_ARGS];
    size_t lens[RL_MAX_ARGS];
    for (int i = 3; i < argc; i++) args[i - 3] = RedisModule_StringPtrLen(argv[i], &lens[i - 3]);
    rl_request whole;
    if (rl_parse(syn, argc - 3, args, lens, &whole, err) != 0) return -1;
    if (syn->excluded & RL_F_DRYRUN) whole.flags |= RL_F_DRYRUN; /* the read-only form */
    size_t len;
    const char *name = RedisModule_StringPtrLen(argv[1], &len);
    rl_policy *policy = policy_lookup(name, len);
    if (!policy) {
        char shown[72];
        rl_sanitize(shown, sizeof shown, name, len);
        snprintf(err, RL_ERR_LEN, "ERR policy '%s': no such policy", shown);
        return -1;
    }
    call->policy = policy;
    call->cost = whole.cost;
    call->flags = whole.flags & ~RL_F_COST;
    call->wait_timeout_ms = whole.wait_timeout_ms;
    fill_call(call, argv[2]);
    return 0;
}

const char *rl_policy_refresh(rl_call *call, char err[RL_ERR_LEN]) {
    rl_policy *old = call->policy;
    rl_policy *now = policy_lookup(old->name, old->name_len);
    if (!now) {
        snprintf(err, RL_ERR_LEN, "ERR policy '%s': no such policy (deleted while the call waited)", old->name);
        return err;
    }
    /* A kept call (rl_call_keep: room for every clause a policy can have) holds its key once per clause. */
    RedisModuleString *key = call->clause[0].key;
    for (int i = call->n; i < now->n; i++) RedisModule_RetainString(NULL, key);
    for (int i = now->n; i < call->n; i++) RedisModule_FreeString(NULL, key);
    rl_policy_hold(now);
    call->policy = now;
    fill_call(call, key);
    rl_policy_drop(old);
    return NULL;
}

void rl_policy_count(const rl_policy *policy, const rl_outcome *o) {
    rl_policy_counters *c = policy->stats;
    if (o->error) return; /* (the command's own counters count errors) */
    c->calls++;
    c->admitted += o->allowed && !o->shadow_denied;
    c->denied += !o->allowed;
    c->shadow_denied += o->shadow_denied;
}

void rl_policy_name_replies(const rl_policy *policy, rl_outcome *o) {
    o->named = 1;
    o->shadow_denied = 0;
    for (int i = 0; i < policy->n; i++) {
        o->name_len[i] = (uint8_t)policy->limit[i].name_len;
        memcpy(o->names[i], policy->limit[i].name, policy->limit[i].name_len);
    }
    if (!o->allowed && policy->shadow) { /* evaluated as enforced, answered allowed */
        o->shadow_denied = 1;
        o->allowed = 1;
        o->retry_after_ms = o->wait_retry_ms = -1;
    }
}

/* --- persistence: the RDB's aux data ---------------------------------------------------------------------- */

void rl_policy_aux_save(RedisModuleIO *io, int when) {
    (void)when;
    uint64_t n = policies ? RedisModule_DictSize(policies) : 0;
    RedisModule_SaveUnsigned(io, n);
    if (!n) return;
    RedisModuleDictIter *it = RedisModule_DictIteratorStartC(policies, "^", NULL, 0);
    rl_policy *policy;
    while (RedisModule_DictNextC(it, NULL, (void **)&policy)) {
        RedisModule_SaveStringBuffer(io, policy->name, policy->name_len);
        RedisModule_SaveUnsigned(io, (uint64_t)policy->argc);
        for (int i = 0; i < policy->argc; i++) RedisModule_SaveString(io, policy->argv[i]);
    }
    RedisModule_DictIteratorStop(it);
}

int rl_policy_aux_load(RedisModuleIO *io, int encver, int when) {
    (void)when;
    if (encver != 1) return REDISMODULE_ERR;
    policies_flush();
    uint64_t n = RedisModule_LoadUnsigned(io);
    for (uint64_t k = 0; k < n && !RedisModule_IsIOError(io); k++) {
        RedisModuleString *name = RedisModule_LoadString(io);
        uint64_t argc = RedisModule_LoadUnsigned(io);
        if (RedisModule_IsIOError(io) || argc > 1024) {
            if (name) RedisModule_FreeString(NULL, name);
            return REDISMODULE_ERR;
        }
        RedisModuleString **argv = RedisModule_Alloc(sizeof *argv * (size_t)(argc + 1));
        argv[0] = name;
        for (uint64_t i = 0; i < argc; i++) argv[i + 1] = RedisModule_LoadString(io);
        char err[RL_ERR_LEN];
        const char *failed = RedisModule_IsIOError(io) ? "truncated" : policy_set(argv, (int)argc + 1, err);
        if (failed) RedisModule_LogIOError(io, "warning", "ratelimit: a policy in the RDB: %s", failed);
        for (uint64_t i = 0; i <= argc; i++)
            if (argv[i]) RedisModule_FreeString(NULL, argv[i]);
        RedisModule_Free(argv);
        if (failed) return REDISMODULE_ERR;
    }
    return RedisModule_IsIOError(io) ? REDISMODULE_ERR : REDISMODULE_OK;
}

/* A load starts (an RDB at startup or DEBUG RELOAD, an AOF, a replica's full sync): what it loads says which
 * policies there are. */
static void on_loading(RedisModuleCtx *ctx, RedisModuleEvent e, uint64_t sub, void *data) {
    (void)ctx;
    (void)e;
    (void)data;
    if (sub == REDISMODULE_SUBEVENT_LOADING_RDB_START || sub == REDISMODULE_SUBEVENT_LOADING_AOF_START ||
        sub == REDISMODULE_SUBEVENT_LOADING_REPL_START)
        policies_flush();
}

/* --- INFO ------------------------------------------------------------------------------------------------ */

void rl_policy_info(RedisModuleInfoCtx *ctx) {
    if (!policies) return;
    RedisModuleDictIter *it = RedisModule_DictIteratorStartC(policies, "^", NULL, 0);
    rl_policy *policy;
    while (RedisModule_DictNextC(it, NULL, (void **)&policy)) {
        /* One field, several values, as INFO keyspace's lines: ratelimit_policy_<name>:calls=..,admitted=.. */
        const rl_policy_counters *c = policy->stats;
        char field[RL_POLICY_NAME_MAX + 8];
        snprintf(field, sizeof field, "policy_%s", policy->name);
        RedisModule_InfoBeginDictField(ctx, field);
        RedisModule_InfoAddFieldLongLong(ctx, "calls", c->calls);
        RedisModule_InfoAddFieldLongLong(ctx, "admitted", c->admitted);
        RedisModule_InfoAddFieldLongLong(ctx, "denied", c->denied);
        RedisModule_InfoAddFieldLongLong(ctx, "shadow_denied", c->shadow_denied);
        RedisModule_InfoEndDictField(ctx);
    }
    RedisModule_DictIteratorStop(it);
}

/* --- registration ---------------------------------------------------------------------------------------- */

static const RedisModuleCommandArg name_arg[] = {
    {.name = "name", .type = REDISMODULE_ARG_TYPE_STRING, .key_spec_index = -1}, {0}};
static const RedisModuleCommandArg set_args[] = {
    {.name = "name", .type = REDISMODULE_ARG_TYPE_STRING, .key_spec_index = -1},
    {.name = "shadow", .type = REDISMODULE_ARG_TYPE_PURE_TOKEN, .key_spec_index = -1, .token = "SHADOW",
     .flags = REDISMODULE_CMD_ARG_OPTIONAL},
    {.name = "limit",
     .type = REDISMODULE_ARG_TYPE_BLOCK,
     .key_spec_index = -1,
     .token = "LIMIT",
     .flags = REDISMODULE_CMD_ARG_MULTIPLE,
     .subargs = (RedisModuleCommandArg[]){
         {.name = "limit_name", .type = REDISMODULE_ARG_TYPE_STRING, .key_spec_index = -1},
         {.name = "kind", .type = REDISMODULE_ARG_TYPE_STRING, .key_spec_index = -1},
         {.name = "arg", .type = REDISMODULE_ARG_TYPE_STRING, .key_spec_index = -1, .flags = REDISMODULE_CMD_ARG_MULTIPLE},
         {0}}},
    {0}};

typedef struct subcommand {
    const char *name;
    RedisModuleCmdFunc fn;
    const char *flags;
    int arity;
    const char *summary;
    const RedisModuleCommandArg *args;
} subcommand;

static const subcommand subcommands[] = {
    {"set", policy_set_command, "write deny-oom", -3,
     "Sets a policy: named limits that RL.CHECK applies to a key together, replacing one of that name.", set_args},
    {"get", policy_get_command, "readonly", 3, "Answers the arguments a policy was set with, or nil.", name_arg},
    {"del", policy_del_command, "write", 3, "Deletes a policy, answering 1 if it existed, else 0.", name_arg},
    {"list", policy_list_command, "readonly", 2, "Lists the policies' names.", NULL},
    {"flush", policy_flush_command, "write", 2, "Deletes every policy.", NULL},
};

int rl_policy_register(RedisModuleCtx *ctx) {
    policies = RedisModule_CreateDict(NULL);
    if (RedisModule_SubscribeToServerEvent(ctx, RedisModuleEvent_Loading, on_loading) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    if (RedisModule_CreateCommand(ctx, "rl.policy", NULL, "", 0, 0, 0) != REDISMODULE_OK) return REDISMODULE_ERR;
    RedisModuleCommand *parent = RedisModule_GetCommand(ctx, "rl.policy");
    if (!parent) return REDISMODULE_ERR;
    RedisModuleCommandInfo parent_info = {.version = REDISMODULE_COMMAND_INFO_VERSION, .since = "1.5.0",
                                          .summary = "Keeps named policies of limits in the server.",
                                          .complexity = "Depends on the subcommand."};
    if (RedisModule_SetCommandInfo(parent, &parent_info) != REDISMODULE_OK) return REDISMODULE_ERR;
    for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++) {
        const subcommand *s = &subcommands[i];
        if (RedisModule_CreateSubcommand(parent, s->name, s->fn, s->flags, 0, 0, 0) != REDISMODULE_OK)
            return REDISMODULE_ERR;
        char full[32];
        snprintf(full, sizeof full, "rl.policy|%s", s->name);
        RedisModuleCommand *cmd = RedisModule_GetCommand(ctx, full);
        if (!cmd) return REDISMODULE_ERR;
        /* In @ratelimit as every command of the module, @read or @write as its flags say (docs/operations.md
         * grants RL.POLICY's writes to operators, not to applications). */
        if (rl_compat_set_acl(cmd, strstr(s->flags, "readonly") != NULL, 0) != REDISMODULE_OK) return REDISMODULE_ERR;
        RedisModuleCommandInfo info = {.version = REDISMODULE_COMMAND_INFO_VERSION, .arity = s->arity,
                                       .since = "1.5.0", .summary = s->summary,
                                       .complexity = "O(N) in the policies (LIST, FLUSH), else O(1)",
                                       .args = (RedisModuleCommandArg *)s->args};
        if (RedisModule_SetCommandInfo(cmd, &info) != REDISMODULE_OK) return REDISMODULE_ERR;
    }
    return REDISMODULE_OK;
}
