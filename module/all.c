/* all.c -- RL.ALL numkeys key [key ...] [COST n | REFUND n] [DRYRUN] [FORCE | WAIT timeout_ms] LIMIT spec
 * [LIMIT spec ...]: several limits in one atomic call; and RL.ALL_RO, its read-only form.
 *
 * This file parses them into a call of one clause per key (rl_module.h); call.c decides it as it decides
 * every command, all or nothing. Each LIMIT clause names a limiter of the list (TOKEN, LEAKY, WINDOW,
 * SLIDINGLOG, SMOOTH, CONCURRENCY, QUOTA) and takes its command's arguments after the key, with its own COST or else
 * the call's; the i-th clause applies to the i-th key (a CONCURRENCY clause's ID lease_id is kept beside its
 * request). The request is admitted iff every limit admits it, and then every limit is written, else none
 * (call.c says how a denied call describes its limits). Redis wraps the effects one call replicates in
 * MULTI/EXEC, so a replica or the AOF never sees half of them.
 *
 * REFUND n before the first LIMIT makes the call give back instead of take: every limit gets its command's
 * own REFUND (n, or the clause's REFUND m), which always admits, so every limit is committed or, on an
 * error, none. A call either takes from every limit or gives back to every one: a clause's REFUND in a call
 * that takes, or its COST in a call that gives back, is refused. ATMOST has no place here: all or nothing
 * takes each limit's whole COST or none.
 *
 * FORCE before the first LIMIT forces every limit (each takes its units even past its limit, into debt:
 * rl_common.h), so the call is admitted and every limit written; every clause's kind must take FORCE (RL.LEAKY
 * with NODELAY). A clause's own FORCE forces that limit only: the call is then admitted iff the other limits
 * admit it. A forced clause in a call that gives back (REFUND) or waits (WAIT) is refused, as FORCE with
 * REFUND or WAIT is.
 *
 * RL.ALL_RO is RL.ALL with DRYRUN set, flagged readonly: it takes the same arguments but DRYRUN and WAIT.
 * It never waits and writes nothing. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "rl_module.h"

static int arg_is(const char *s, size_t len, const char *word) {
    return strlen(word) == len && strncasecmp(s, word, len) == 0;
}

/* The limiter a clause names: one with the list's id. */
static const rl_limiter *limiter_named(const char *s, size_t len) {
    for (int i = 0; i < RL_NLIMITERS; i++)
        if (arg_is(s, len, rl_limiters[i].kind)) return &rl_limiters[i];
    return NULL;
}

/* 1 if syn takes the option of flag. */
static int takes(const rl_syntax *syn, uint32_t flag) {
    for (int i = 0; i < syn->noptions; i++)
        if (syn->options[i].flag == flag) return !(flag & syn->excluded);
    return 0;
}

#define NO_ATMOST "ATMOST: not an option of RL.ALL, which takes each limit's whole COST or none"

/* How clause i's request takes FORCE from the whole call's, and its own FORCE with the call's options: a call's
 * FORCE forces every limit, so each must take it; a forced clause neither gives back nor waits. 0, or -1 with
 * err. */
static inline __attribute__((always_inline)) int clause_force(rl_request *req, const rl_request *whole, const rl_limiter *lim, int i, char err[RL_ERR_LEN]) {
    if (whole->flags & RL_F_FORCE) {
        if (!takes(lim->syntax_ro, RL_F_FORCE)) {
            snprintf(err, RL_ERR_LEN, "ERR LIMIT %d: FORCE: %s cannot be forced (%s has no FORCE)", i + 1, lim->kind,
                     lim->syntax->name);
            return -1;
        }
        req->flags |= RL_F_FORCE;
        return 0;
    }
    if (!(req->flags & RL_F_FORCE)) return 0;
    if (whole->flags & (RL_F_REFUND | RL_F_WAIT)) {
        snprintf(err, RL_ERR_LEN, "ERR LIMIT %d: FORCE: cannot be combined with the call's %s (a forced limit %s)",
                 i + 1, (whole->flags & RL_F_REFUND) ? "REFUND" : "WAIT",
                 (whole->flags & RL_F_REFUND) ? "takes, it gives nothing back" : "never waits");
        return -1;
    }
    return 0;
}

/* How clause i's request takes its COST, or REFUND, from the whole call's. 0, or -1 with err. */
static inline __attribute__((always_inline)) int clause_cost(rl_request *req, const rl_request *whole, const rl_limiter *lim, int i, char err[RL_ERR_LEN]) {
    if (req->flags & RL_F_ATMOST) {
        snprintf(err, RL_ERR_LEN, "ERR LIMIT %d: " NO_ATMOST, i + 1);
        return -1;
    }
    if (clause_force(req, whole, lim, i, err) != 0) return -1;
    if (!(whole->flags & RL_F_REFUND)) {
        if (req->flags & RL_F_REFUND) {
            snprintf(err, RL_ERR_LEN,
                     "ERR LIMIT %d: REFUND: needs REFUND n before the first LIMIT (a call gives back to every limit "
                     "or takes from every one)",
                     i + 1);
            return -1;
        }
        if (!(req->flags & RL_F_COST)) req->cost = whole->cost;
        return 0;
    }
    if (!takes(lim->syntax_ro, RL_F_REFUND)) {
        snprintf(err, RL_ERR_LEN, "ERR LIMIT %d: REFUND: %s gives nothing back (%s has no REFUND)", i + 1, lim->kind,
                 lim->syntax->name);
        return -1;
    }
    if (req->flags & RL_F_COST) {
        snprintf(err, RL_ERR_LEN,
                 "ERR LIMIT %d: COST: cannot be combined with the call's REFUND (a clause gives back its own REFUND n)",
                 i + 1);
        return -1;
    }
    if (!(req->flags & RL_F_REFUND)) req->cost = whole->cost;
    req->flags |= RL_F_REFUND;
    return 0;
}

/* (Inline into RL.ALL's parser, as every RL.ALL call runs it; RL.POLICY SET has its own copy below.) */
static inline __attribute__((always_inline)) int parse_spec(rl_call *call, int i, int nargs, const char **args,
                                                            const size_t *lens, int *at, const rl_request *whole,
                                                            char err[RL_ERR_LEN]) {
    const rl_limiter *lim = *at < nargs ? limiter_named(args[*at], lens[*at]) : NULL;
    if (!lim) {
        char kinds[96];
        rl_kind_names(kinds, sizeof kinds, NULL, " or ");
        snprintf(err, RL_ERR_LEN, "ERR LIMIT %d: kind must be %s", i + 1, kinds);
        return -1;
    }
    *at += 1;
    /* A clause takes its command's arguments but DRYRUN, BLOCK and WAIT: the read-only form's syntax. */
    const rl_syntax *syn = lim->syntax_ro;
    if (nargs - *at < syn->nparams) {
        int choices = 0; /* RL.QUOTA's period is a word, not a number */
        for (int p = 0; p < syn->nparams; p++) choices += syn->params[p].kind == RL_CHOICE;
        snprintf(err, RL_ERR_LEN, "ERR LIMIT %d: %s needs %d %s", i + 1, lim->kind, syn->nparams,
                 choices ? "arguments" : "numbers");
        return -1;
    }
    rl_request *req = &call->clause[i].req;
    int used = rl_parse_clause(syn, nargs - *at, args + *at, lens + *at, req, err);
    if (used < 0) {
        rl_name_clause(err, i);
        return -1;
    }
    req->id_arg += *at; /* ID's value: from its place in the clause to its place among the call's args */
    *at += used;
    if (*at < nargs && !arg_is(args[*at], lens[*at], "LIMIT")) {
        char shown[40];
        rl_sanitize(shown, sizeof shown, args[*at], lens[*at]);
        snprintf(err, RL_ERR_LEN, "ERR LIMIT %d: '%s' is not an option of %s", i + 1, shown, lim->kind);
        return -1;
    }
    if (clause_cost(req, whole, lim, i, err) != 0) return -1;
    req->flags |= whole->flags & RL_F_DRYRUN;
    call->clause[i].lim = lim;
    return 0;
}

int rl_all_parse_spec(rl_call *call, int i, int nargs, const char **args, const size_t *lens, int *at,
                      const rl_request *whole, char err[RL_ERR_LEN]) {
    return parse_spec(call, i, nargs, args, lens, at, whole, err);
}

/* Parse clause i at args[*at]: LIMIT kind numbers [options]. Returns 0 or -1 with err. */
static int parse_clause(rl_call *call, int i, int nargs, const char **args, const size_t *lens, int *at,
                        const rl_request *whole, char err[RL_ERR_LEN]) {
    if (*at >= nargs || !arg_is(args[*at], lens[*at], "LIMIT")) {
        snprintf(err, RL_ERR_LEN, "ERR LIMIT %d: expected LIMIT kind ... for key %d (one LIMIT per key)", i + 1, i + 1);
        return -1;
    }
    *at += 1;
    return parse_spec(call, i, nargs, args, lens, at, whole, err);
}

/* A word before the first LIMIT that is not one of the call's options: named, with the options there are. */
static int not_an_option(const rl_syntax *syn, const char *s, size_t len, char err[RL_ERR_LEN]) {
    if (arg_is(s, len, "ATMOST")) {
        snprintf(err, RL_ERR_LEN, "ERR " NO_ATMOST);
        return -1;
    }
    char shown[40], known[64] = "";
    rl_sanitize(shown, sizeof shown, s, len);
    size_t used = 0;
    for (int i = 0; i < syn->noptions && used < sizeof known; i++)
        if (!(syn->options[i].flag & syn->excluded))
            used += (size_t)snprintf(known + used, sizeof known - used, "%s%s", used ? ", " : "", syn->options[i].name);
    snprintf(err, RL_ERR_LEN, "ERR '%s': not an option of %s (before the first LIMIT: %s or LIMIT)", shown, syn->name,
             known);
    return -1;
}

/* Parse the arguments after numkeys and the keys with syn (RL.ALL's or RL.ALL_RO's) into call and the call's
 * own request (whole). Returns 0 or -1 with err. */
static int parse_all(const rl_syntax *syn, rl_call *call, int nargs, const char **args, const size_t *lens,
                     char err[RL_ERR_LEN]) {
    rl_request whole;
    int at = rl_parse_clause(syn, nargs, args, lens, &whole, err);
    if (at < 0) return -1;
    if (at < nargs && !arg_is(args[at], lens[at], "LIMIT")) return not_an_option(syn, args[at], lens[at], err);
    if (syn->excluded & RL_F_DRYRUN) whole.flags |= RL_F_DRYRUN; /* the read-only form */
    call->flags = whole.flags;
    call->wait_timeout_ms = whole.wait_timeout_ms;
    for (int i = 0; i < call->n; i++)
        if (parse_clause(call, i, nargs, args, lens, &at, &whole, err) != 0) return -1;
    if (at < nargs) {
        snprintf(err, RL_ERR_LEN, "ERR LIMIT: more LIMIT clauses than keys (numkeys is %d)", call->n);
        return -1;
    }
    return 0;
}

/* Two clauses on one key would each decide on the state before the other's write. */
static int same_keys(RedisModuleString **keys, int n, char err[RL_ERR_LEN]) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (RedisModule_StringCompare(keys[i], keys[j]) == 0) {
                snprintf(err, RL_ERR_LEN, "ERR key %d: the same key as key %d (one limit per key)", i + 1, j + 1);
                return 1;
            }
    return 0;
}

/* Where the keys are, for Redis: Redis 7.0 routes a module command in a cluster (MOVED, CROSSSLOT) by its
 * legacy key range or this answer, not by its key spec, and a counted list has no legacy range. */
int rl_all_report_keys(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    long long n;
    if (argc < 2 || RedisModule_StringToLongLong(argv[1], &n) != REDISMODULE_OK) return REDISMODULE_OK;
    for (long long i = 0; i < n && 2 + i < argc; i++) RedisModule_KeyAtPos(ctx, (int)(2 + i));
    return REDISMODULE_OK;
}

#define ALL_MAX_ARGS (RL_ALL_MAX_LIMITS * (RL_MAX_ARGS + 2) + 5)

/* numkeys, the arguments, distinct keys. */
int rl_all_parse(const rl_syntax *syn, RedisModuleString **argv, int argc, rl_call *call, char err[RL_ERR_LEN]) {
    long long n;
    err[0] = '\0';
    if (argc < 6) return -1;
    if (RedisModule_StringToLongLong(argv[1], &n) != REDISMODULE_OK || n < 1 || n > RL_ALL_MAX_LIMITS)
        return rl_range_error(err, "numkeys", 1, RL_ALL_MAX_LIMITS);
    int nargs = argc - 2 - (int)n;
    if (nargs < 0 || nargs > ALL_MAX_ARGS) return -1;
    call->n = (int)n;
    call->all = 1;
    call->policy = NULL;
    for (int i = 0; i < call->n; i++) call->clause[i].key = argv[2 + i];
    const char *args[ALL_MAX_ARGS];
    size_t lens[ALL_MAX_ARGS];
    for (int i = 0; i < nargs; i++) args[i] = RedisModule_StringPtrLen(argv[2 + n + i], &lens[i]);
    if (parse_all(syn, call, nargs, args, lens, err) != 0 || same_keys(argv + 2, call->n, err)) return -1;
    for (int i = 0; i < call->n; i++) { /* args[j] is argv[2 + n + j] */
        const rl_request *req = &call->clause[i].req;
        call->clause[i].id = (req->flags & RL_F_ID) ? argv[2 + n + req->id_arg] : NULL;
    }
    return 0;
}
