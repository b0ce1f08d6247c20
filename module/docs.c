/* docs.c -- COMMAND DOCS' arguments, generated from the syntax tables (syntax.c), so that COMMAND DOCS and
 * redis-cli's hints read as docs/commands.md's syntax lines: `key capacity refill_tokens refill_ms
 * [COST n|REFUND n] [ATMOST] ...`. command.c registers what these describe.
 *
 * A number is an integer (a double for a decimal) named as the table names it, a positional choice (RL.QUOTA's
 * DAY|WEEK|MONTH) a oneof of pure tokens; an option is optional, its
 * token the option's name, its name the value's ("n", "timeout_ms") or, for a flag (a pure token), the
 * option's in lower case. Options that exclude each other are one optional choice (a oneof, as SET's
 * [NX | XX]): the first option not yet placed, with every later one that excludes each of the choice's
 * members. Redis copies what it is given, so the arguments live in an rl_docs_arena only while a command is
 * registered. */
#include <stdio.h>
#include <string.h>

#include "docs.h"

/* n zeroed arguments (the last one ends a list), or NULL when the arena is full. */
static RedisModuleCommandArg *docs_take(rl_docs_arena *d, int n) {
    if (d->nargs + n > RL_DOCS_ARGS) {
        d->full = 1;
        return NULL;
    }
    RedisModuleCommandArg *a = &d->args[d->nargs];
    memset(a, 0, (size_t)n * sizeof *a);
    d->nargs += n;
    return a;
}

/* The lower-case names of options[0..n), joined by "_or_" ("cost_or_refund"), kept in the arena. */
static const char *docs_name(rl_docs_arena *d, const rl_option_spec *const *options, int n) {
    if (d->nnames == RL_DOCS_NAMES) {
        d->full = 1;
        return "?";
    }
    char *out = d->names[d->nnames++];
    size_t used = 0;
    for (int i = 0; i < n; i++)
        for (const char *c = i ? "_or_" : "", *name = options[i]->name; *c || *name;) {
            char ch = *c ? *c++ : *name++;
            if (used + 1 < RL_DOCS_NAME_LEN) out[used++] = (char)(ch >= 'A' && ch <= 'Z' ? ch | 0x20 : ch);
        }
    out[used] = '\0';
    return out;
}

static RedisModuleCommandArg docs_option(rl_docs_arena *d, const rl_option_spec *o, int flags) {
    RedisModuleCommandArgType type = o->slot == RL_NO_VALUE        ? REDISMODULE_ARG_TYPE_PURE_TOKEN
                                     : RL_SLOT_IS_DECIMAL(o->slot) ? REDISMODULE_ARG_TYPE_DOUBLE
                                     : RL_SLOT_IS_STRING(o->slot)  ? REDISMODULE_ARG_TYPE_STRING
                                                                   : REDISMODULE_ARG_TYPE_INTEGER;
    const char *name = o->slot == RL_NO_VALUE ? docs_name(d, &o, 1) : o->value;
    return (RedisModuleCommandArg){.name = name, .type = type, .key_spec_index = -1, .token = o->name, .flags = flags};
}

static int exclusive(const rl_option_spec *a, const rl_option_spec *b) {
    return (a->conflicts & b->flag) && (b->conflicts & a->flag);
}

/* A positional choice: a oneof of pure tokens, each named as the token in lower case (as SET's NX | XX). */
static RedisModuleCommandArg docs_choice(rl_docs_arena *d, const rl_param_spec *p) {
    int n = (int)p->max + 1;
    RedisModuleCommandArg *tokens = docs_take(d, n + 1);
    for (int k = 0; tokens && k < n; k++) {
        const rl_option_spec as_flag = {.name = p->choices[k], .slot = RL_NO_VALUE}, *one = &as_flag;
        tokens[k] = (RedisModuleCommandArg){.name = docs_name(d, &one, 1), .type = REDISMODULE_ARG_TYPE_PURE_TOKEN,
                                            .key_spec_index = -1, .token = p->choices[k]};
    }
    return (RedisModuleCommandArg){
        .name = p->name, .type = REDISMODULE_ARG_TYPE_ONEOF, .key_spec_index = -1, .subargs = tokens};
}

/* The positional arguments of syn at out: numbers and choices. Returns how many. */
static int docs_params(rl_docs_arena *d, const rl_syntax *syn, RedisModuleCommandArg *out) {
    for (int i = 0; i < syn->nparams; i++) {
        const rl_param_spec *p = &syn->params[i];
        if (p->kind == RL_CHOICE) {
            out[i] = docs_choice(d, p);
            continue;
        }
        out[i] = (RedisModuleCommandArg){
            .name = p->name,
            .type = p->kind == RL_DECIMAL ? REDISMODULE_ARG_TYPE_DOUBLE : REDISMODULE_ARG_TYPE_INTEGER,
            .key_spec_index = -1};
    }
    return syn->nparams;
}

/* The options syn takes, but those of `skip`, at out (room for one per option): single options and choices.
 * Returns how many arguments. */
static int docs_options(rl_docs_arena *d, const rl_syntax *syn, uint32_t skip, RedisModuleCommandArg *out) {
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
RedisModuleCommandArg *rl_docs_limiter(rl_docs_arena *d, const rl_syntax *syn) {
    RedisModuleCommandArg *args = docs_take(d, 2 + syn->nparams + syn->noptions);
    if (!args) return NULL;
    args[0] = (RedisModuleCommandArg){.name = "key", .type = REDISMODULE_ARG_TYPE_KEY, .key_spec_index = 0};
    int n = 1 + docs_params(d, syn, args + 1);
    docs_options(d, syn, 0, args + n);
    return args;
}

/* RL.ALL or RL.ALL_RO: numkeys, the keys, the call's options, then LIMIT spec, once or more. A spec is a
 * string whose summary names the kinds: a clause is the read-only form of its kind's command less the key and
 * ATMOST, whose COMMAND DOCS say it (a block per kind, with its choices, would nest deeper than the 7 levels
 * of aggregates older hiredis readers accept, and make a hint wider than a terminal). */
RedisModuleCommandArg *rl_docs_check(rl_docs_arena *d, const rl_syntax *syn) {
    RedisModuleCommandArg *args = docs_take(d, 3 + syn->noptions);
    if (!args) return NULL;
    args[0] = (RedisModuleCommandArg){.name = "policy", .type = REDISMODULE_ARG_TYPE_STRING, .key_spec_index = -1};
    args[1] = (RedisModuleCommandArg){.name = "key", .type = REDISMODULE_ARG_TYPE_KEY, .key_spec_index = 0};
    docs_options(d, syn, 0, args + 2);
    return args;
}

RedisModuleCommandArg *rl_docs_all(rl_docs_arena *d, const rl_syntax *syn) {
    RedisModuleCommandArg *args = docs_take(d, 4 + syn->noptions);
    if (!args) return NULL;
    args[0] = (RedisModuleCommandArg){.name = "numkeys", .type = REDISMODULE_ARG_TYPE_INTEGER, .key_spec_index = -1};
    args[1] = (RedisModuleCommandArg){
        .name = "key", .type = REDISMODULE_ARG_TYPE_KEY, .key_spec_index = 0, .flags = REDISMODULE_CMD_ARG_MULTIPLE};
    int n = 2 + docs_options(d, syn, 0, args + 2);
    rl_kind_names(d->summary, sizeof d->summary, NULL, " or ");
    size_t used = strlen(d->summary);
    if (used < sizeof d->summary)
        snprintf(d->summary + used, sizeof d->summary - used,
                 ", then the arguments of that command's read-only form after the key, but ATMOST; one per key");
    args[n] = (RedisModuleCommandArg){.name = "spec", .type = REDISMODULE_ARG_TYPE_STRING, .key_spec_index = -1,
                                      .token = "LIMIT", .summary = d->summary,
                                      .flags = REDISMODULE_CMD_ARG_MULTIPLE | REDISMODULE_CMD_ARG_MULTIPLE_TOKEN};
    return args;
}

