/* integration_commands.c -- what every RL.* command promises as a Redis command, against real redis-servers:
 *
 *   - a call that changes nothing (denied, COST 0, DRYRUN, the read-only forms) does not signal its key,
 *     so a client that WATCHes it keeps its MULTI/EXEC; a call that changes the key does signal it;
 *   - a call that changes a key fires the keyspace event "<command>" (class d) to a real subscriber, and a
 *     call that changes nothing fires none; expiry and DEL keep Redis's own events;
 *   - the read-only forms (RL.TOKEN_RO, ...) answer exactly what DRYRUN answers, refuse DRYRUN and BLOCK,
 *     and run where writes cannot: on a read-only replica, inside EVAL_RO, for a read-only ACL user;
 *   - COMMAND INFO flags and key specs, and COMMAND DOCS (summary, since, group, complexity, arguments);
 *   - INFO ratelimit counts every call, verdict, unit, error, created key and waiting client. */
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "rl_checks.h"
#include "server.h"

static server *srv;
static redisContext *c;

#define T0 1700000000000LL /* a frozen test-clock instant (ms) */

/* Each limiter: its command, arguments that admit 1 of a limit of 2, and a state after which the same
 * call is denied (the limit spent). */
typedef struct limiter {
    const char *command, *args;
} limiter;

static const limiter limiters[] = {
    {"RL.TOKEN", "2 1 60000"},
    {"RL.LEAKY", "2 1 60000"},
    {"RL.WINDOW", "2 60000"},
    {"RL.SLIDINGLOG", "2 60000"},
};
#define NLIMITERS (sizeof limiters / sizeof limiters[0])

static void del(const char *key) { freeReplyObject(cmd(c, "DEL %s", key)); }

/* A command's name as Redis knows it (and errors and events name it): lower case. */
static void lowercase(const char *in, char *out, size_t n) {
    size_t j = 0;
    for (; in[j] && j < n - 1; j++) out[j] = (char)(in[j] >= 'A' && in[j] <= 'Z' ? in[j] | 0x20 : in[j]);
    out[j] = '\0';
}

/* --- WATCH: only a change aborts a transaction ------------------------------------------------------ */


static void test_watch(void) {
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", T0));
    for (size_t i = 0; i < NLIMITERS; i++) {
        const limiter *l = &limiters[i];
        const char *key = "watch:k";
        del(key);
        char line[160];
        snprintf(line, sizeof line, "%s %s %s COST 2", l->command, key, l->args);
        CHECK(!watch_survives(srv, c, key, line)); /* spends the limit: a change */
        snprintf(line, sizeof line, "%s %s %s DRYRUN", l->command, key, l->args);
        CHECK(watch_survives(srv, c, key, line));
        snprintf(line, sizeof line, "%s_RO %s %s", l->command, key, l->args);
        CHECK(watch_survives(srv, c, key, line));
        snprintf(line, sizeof line, "%s %s %s COST 3", l->command, key, l->args); /* above the limit: logs nothing */
        CHECK(watch_survives(srv, c, key, line));
        snprintf(line, sizeof line, "%s %s %s COST 0", l->command, key, l->args);
        CHECK(watch_survives(srv, c, key, line));
        snprintf(line, sizeof line, "%s %s %s", l->command, key, l->args);
        /* Denied: the cell limiters write nothing; the sliding log logs the blocked attempt, a change. */
        int logs_blocked = strcmp(l->command, "RL.SLIDINGLOG") == 0;
        if (!CHECK(watch_survives(srv, c, key, line) == !logs_blocked)) fprintf(stderr, "     %s\n", line);
        snprintf(line, sizeof line, "RL.SETSTATE %s TOKEN 0 0", "watch:set");
        CHECK(!watch_survives(srv, c, "watch:set", line));
        del("watch:set");
    }
    del("watch:side");
}

/* --- keyspace events -------------------------------------------------------------------------------- */



static void test_events(void) {
    CHECK(cmd_status_is(c, "OK", "CONFIG SET notify-keyspace-events Edgx"));
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", T0));
    redisContext *sub = event_subscriber(srv);
    char ev[256];
    for (size_t i = 0; i < NLIMITERS; i++) {
        const limiter *l = &limiters[i];
        del("ev:k");
        char want[128], lower[32];
        lowercase(l->command, lower, sizeof lower);
        snprintf(want, sizeof want, "__keyevent@0__:%s ev:k", lower);
        freeReplyObject(cmdline(c, "%s ev:k %s COST 2", l->command, l->args));
        next_event(sub, ev, sizeof ev);
        CHECK_STR(ev, want);
        /* Nothing changes: no event. The marker write on another key must be the next event. A denied
         * request changes a cell limiter not at all; the sliding log logs it (a change). */
        freeReplyObject(cmdline(c, "%s ev:k %s DRYRUN", l->command, l->args));
        freeReplyObject(cmdline(c, "%s_RO ev:k %s", l->command, l->args));
        freeReplyObject(cmdline(c, "%s ev:k %s COST 0", l->command, l->args));
        if (strcmp(lower, "rl.slidinglog") != 0) freeReplyObject(cmdline(c, "%s ev:k %s", l->command, l->args));
        freeReplyObject(cmd(c, "RL.TOKEN ev:marker 5 1 1000"));
        next_event(sub, ev, sizeof ev);
        CHECK_STR(ev, "__keyevent@0__:rl.token ev:marker");
        freeReplyObject(cmd(c, "DEL ev:k"));
        next_event(sub, ev, sizeof ev);
        CHECK_STR(ev, "__keyevent@0__:del ev:k");
        del("ev:marker");
        next_event(sub, ev, sizeof ev);
        CHECK_STR(ev, "__keyevent@0__:del ev:marker");
    }
    /* A key that expires on the real clock: Redis's own "expired" event. */
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK REAL"));
    freeReplyObject(cmd(c, "RL.WINDOW ev:exp 5 50 FIXED"));
    next_event(sub, ev, sizeof ev);
    CHECK_STR(ev, "__keyevent@0__:rl.window ev:exp");
    for (int tries = 0; tries < 100 && cmd_int(c, "EXISTS ev:exp") == 1; tries++) sleep_ms(50);
    next_event(sub, ev, sizeof ev);
    CHECK_STR(ev, "__keyevent@0__:expired ev:exp");
    redisFree(sub);
    CHECK(cmd_status_is(c, "OK", "CONFIG SET notify-keyspace-events %s", ""));
}

/* --- read-only forms -------------------------------------------------------------------------------- */

/* On a few states of each limiter, _RO answers exactly what DRYRUN answers, and leaves the key alone. */
static void test_ro_equals_dryrun(void) {
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", T0));
    static const char *const costs[] = {"", " COST 0", " COST 1", " COST 2", " COST 3"};
    for (size_t i = 0; i < NLIMITERS; i++) {
        const limiter *l = &limiters[i];
        del("ro:k");
        for (int step = 0; step < 4; step++) {
            for (size_t k = 0; k < sizeof costs / sizeof costs[0]; k++) {
                char *before = dump_key(c, "ro:k", &(size_t){0});
                rl_result dry = rl(c, "%s ro:k %s%s DRYRUN", l->command, l->args, costs[k]);
                rl_result ro = rl(c, "%s_RO ro:k %s%s", l->command, l->args, costs[k]);
                CHECK(dry.ok && ro.ok);
                CHECK(memcmp(&dry, &ro, sizeof dry) == 0);
                char *after = dump_key(c, "ro:k", &(size_t){0});
                CHECK((before == NULL) == (after == NULL));
                free(before);
                free(after);
            }
            freeReplyObject(cmdline(c, "%s ro:k %s", l->command, l->args));
            CHECK(cmd_status_is(c, "OK", "RL.CLOCK ADVANCE 20000"));
        }
        char want[128], lower[32];
        lowercase(l->command, lower, sizeof lower);
        snprintf(want, sizeof want, "ERR 'DRYRUN': not an option of %s_ro", lower);
        rl_result bad = rl(c, "%s_RO ro:k %s DRYRUN", l->command, l->args);
        CHECK(!bad.ok);
        CHECK_STR(bad.error, want);
    }
    rl_result block = rl(c, "RL.LEAKY_RO ro:k 2 1 60000 BLOCK");
    CHECK_STR(block.error, "ERR 'BLOCK': not an option of rl.leaky_ro");
    del("ro:k");
}

/* A read-only replica runs the _RO forms (on the state replicated to it) and refuses the writing ones. */
static void test_ro_on_replica(void) {
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", T0));
    for (size_t i = 0; i < NLIMITERS; i++) freeReplyObject(cmdline(c, "%s rep:%zu %s", limiters[i].command, i, limiters[i].args));
    server *rep = replica_start(srv);
    redisContext *r = server_connect(rep);
    CHECK(cmd_status_is(r, "OK", "RL.CLOCK SET %lld", T0));
    for (size_t i = 0; i < NLIMITERS; i++) {
        const limiter *l = &limiters[i];
        rl_result on_primary = rl(c, "%s rep:%zu %s DRYRUN", l->command, i, l->args);
        rl_result on_replica = rl(r, "%s_RO rep:%zu %s", l->command, i, l->args);
        CHECK(on_primary.ok && on_replica.ok);
        CHECK(memcmp(&on_primary, &on_replica, sizeof on_primary) == 0);
        CHECK_EQ(on_replica.remaining, 0); /* the replica holds the primary's state (a new key: 1) */
        rl_result write = rl(r, "%s rep:%zu %s", l->command, i, l->args);
        CHECK(!write.ok && strncmp(write.error, "READONLY", 8) == 0);
    }
    redisFree(r);
    server_stop(rep);
    for (size_t i = 0; i < NLIMITERS; i++) freeReplyObject(cmd(c, "DEL rep:%d", (int)i));
}

/* Inside EVAL_RO, and for a user granted only @read: the _RO forms run, the writing ones are refused. */
static void test_ro_in_scripts_and_acl(void) {
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", T0));
    redisReply *x = cmd(c, "EVAL_RO %s 1 es:k", "return redis.call('RL.TOKEN_RO', KEYS[1], 10, 1, 1000, 'COST', 3)");
    rl_result r = rl_of(x);
    freeReplyObject(x);
    CHECK_RL(r, 1, 10, 7, -1, 3000, 0);
    x = cmd(c, "EVAL_RO %s 1 es:k", "return redis.call('RL.TOKEN', KEYS[1], 10, 1, 1000)");
    CHECK(x->type == REDIS_REPLY_ERROR);
    freeReplyObject(x);
    CHECK_EQ(cmd_int(c, "EXISTS es:k"), 0);

    /* Redis 7.0 gives module commands no ACL category: a read-only user is granted the _RO forms by name. */
    CHECK(cmd_status_is(c, "OK",
                        "ACL SETUSER reader on >pw ~* +@read +rl.token_ro +rl.leaky_ro +rl.window_ro +rl.slidinglog_ro"));
    redisContext *u = server_connect(srv);
    CHECK(cmd_status_is(u, "OK", "AUTH reader pw"));
    for (size_t i = 0; i < NLIMITERS; i++) {
        const limiter *l = &limiters[i];
        CHECK(rl(u, "%s_RO acl:k %s", l->command, l->args).ok);
        rl_result w = rl(u, "%s acl:k %s", l->command, l->args);
        CHECK(!w.ok && strncmp(w.error, "NOPERM", 6) == 0);
    }
    redisFree(u);
    CHECK_EQ(cmd_int(c, "ACL DELUSER reader"), 1);
}

/* The server's version as major * 100 + minor, from redis_version; Valkey (which reports 7.2 there for
 * compatibility) as 800 + its own. */
static int server_version(int *valkey) {
    redisReply *x = cmd(c, "INFO server");
    int major = 0, minor = 0;
    const char *v = x->type == REDIS_REPLY_STRING ? strstr(x->str, "valkey_version:") : NULL;
    *valkey = v != NULL;
    if (v) sscanf(v, "valkey_version:%d.%d", &major, &minor);
    else if (x->type == REDIS_REPLY_STRING && (v = strstr(x->str, "redis_version:"))) sscanf(v, "redis_version:%d.%d", &major, &minor);
    freeReplyObject(x);
    return major * 100 + minor;
}

/* Where the server has module ACL categories (Redis 7.4+, Valkey 8), +@ratelimit grants every RL.* command
 * and nothing else, and +@read the read-only forms; on 7.0 the category does not exist (grant by name). */
static void test_acl_category(void) {
    int valkey, version = server_version(&valkey);
    int has_category = valkey || version >= 704;
    redisReply *x = cmd(c, "ACL CAT ratelimit");
    /* The limiters above and RL.SMOOTH (which never denies without MAXWAIT, so it is not among them), each with
     * its _RO form, + RL.ALL, RL.RESET, RL.SETSTATE, CL.THROTTLE */
    CHECK((x->type == REDIS_REPLY_ARRAY && x->elements == 2 * (NLIMITERS + 1) + 4) == has_category);
    freeReplyObject(x);
    if (!has_category) {
        CHECK(!cmd_status_is(c, "OK", "ACL SETUSER app on >pw ~rl:* +@ratelimit"));
        return;
    }
    CHECK(cmd_status_is(c, "OK", "ACL SETUSER app on >pw ~rl:* +@ratelimit"));
    CHECK(cmd_status_is(c, "OK", "ACL SETUSER reader on >pw ~rl:* +@read"));
    redisContext *app = server_connect(srv), *reader = server_connect(srv);
    CHECK(cmd_status_is(app, "OK", "AUTH app pw"));
    CHECK(cmd_status_is(reader, "OK", "AUTH reader pw"));
    for (size_t i = 0; i < NLIMITERS; i++) {
        const limiter *l = &limiters[i];
        CHECK(rl(app, "%s rl:acl%d %s", l->command, (int)i, l->args).ok);
        CHECK(rl(app, "%s_RO rl:acl%d %s", l->command, (int)i, l->args).ok);
        CHECK(rl(reader, "%s_RO rl:acl%d %s", l->command, (int)i, l->args).ok);
        rl_result w = rl(reader, "%s rl:acl%d %s", l->command, (int)i, l->args);
        CHECK(!w.ok && strncmp(w.error, "NOPERM", 6) == 0);
    }
    redisReply *get = cmd(app, "GET rl:acl0");
    CHECK(get->type == REDIS_REPLY_ERROR && strncmp(get->str, "NOPERM", 6) == 0); /* nothing but @ratelimit */
    freeReplyObject(get);
    redisFree(app);
    redisFree(reader);
    CHECK_EQ(cmd_int(c, "ACL DELUSER app reader"), 2);
    for (size_t i = 0; i < NLIMITERS; i++) freeReplyObject(cmd(c, "DEL rl:acl%d", (int)i));
}

/* --- COMMAND INFO and COMMAND DOCS ------------------------------------------------------------------ */

static void test_command_info(void) {
    static const struct {
        const char *name;
        long long arity;
        const char *flags;
    } rows[] = {
        {"RL.TOKEN", -5, "write denyoom fast"},     {"RL.TOKEN_RO", -5, "readonly fast"},
        {"RL.LEAKY", -5, "write denyoom fast"},     {"RL.LEAKY_RO", -5, "readonly fast"},
        {"RL.WINDOW", -4, "write denyoom fast"},    {"RL.WINDOW_RO", -4, "readonly fast"},
        {"RL.SLIDINGLOG", -4, "write denyoom"},     {"RL.SLIDINGLOG_RO", -4, "readonly"},
        {"RL.SMOOTH", -3, "write denyoom fast"},    {"RL.SMOOTH_RO", -3, "readonly fast"},
        {"RL.SETSTATE", -3, "write denyoom fast"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        CHECK(command_info_is(c, rows[i].name, rows[i].arity, rows[i].flags));
    /* The key spec of a read-only form says RO. */
    redisReply *x = cmd(c, "COMMAND GETKEYSANDFLAGS RL.TOKEN_RO the:key 1 1 1");
    CHECK(x->type == REDIS_REPLY_ARRAY && x->elements == 1 && x->element[0]->elements == 2 &&
          strcmp(x->element[0]->element[0]->str, "the:key") == 0 &&
          strcmp(x->element[0]->element[1]->element[0]->str, "RO") == 0);
    freeReplyObject(x);
    x = cmd(c, "COMMAND GETKEYSANDFLAGS RL.TOKEN the:key 1 1 1");
    CHECK(x->type == REDIS_REPLY_ARRAY && x->elements == 1 &&
          strcmp(x->element[0]->element[1]->element[0]->str, "RW") == 0);
    freeReplyObject(x);
}

/* The value under `field` in a RESP2 flat map (name, value, name, value...), or NULL. */
static const redisReply *map_get(const redisReply *map, const char *field) {
    if (!map || map->type != REDIS_REPLY_ARRAY) return NULL;
    for (size_t i = 0; i + 1 < map->elements; i += 2)
        if (map->element[i]->type == REDIS_REPLY_STRING && strcmp(map->element[i]->str, field) == 0)
            return map->element[i + 1];
    return NULL;
}

static int str_is(const redisReply *r, const char *want) {
    return r && (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS) && strcmp(r->str, want) == 0;
}

/* COMMAND DOCS name: its summary starts with summary_start; its arguments are, in order, `args` (names),
 * of the given types, the options optional. */
static void check_docs(const char *name, const char *since, const char *complexity, const char *const *args,
                       const char *const *types, size_t nargs) {
    redisReply *x = cmd(c, "COMMAND DOCS %s", name);
    const redisReply *doc = x->type == REDIS_REPLY_ARRAY && x->elements == 2 ? x->element[1] : NULL;
    if (!CHECK(doc != NULL)) {
        freeReplyObject(x);
        return;
    }
    const redisReply *summary = map_get(doc, "summary");
    CHECK(summary && summary->type == REDIS_REPLY_STRING && strlen(summary->str) > 20);
    CHECK(str_is(map_get(doc, "since"), since));
    CHECK(str_is(map_get(doc, "group"), "module"));
    CHECK(str_is(map_get(doc, "complexity"), complexity));
    const redisReply *list = map_get(doc, "arguments");
    if (CHECK(list && list->type == REDIS_REPLY_ARRAY && list->elements == nargs)) {
        for (size_t i = 0; i < nargs; i++) {
            const redisReply *a = list->element[i];
            if (!CHECK(str_is(map_get(a, "name"), args[i]))) fprintf(stderr, "     %s argument %zu\n", name, i);
            CHECK(str_is(map_get(a, "type"), types[i]));
            const redisReply *flags = map_get(a, "flags");
            int optional = flags && flags->type == REDIS_REPLY_ARRAY && flags->elements == 1 &&
                           str_is(flags->element[0], "optional");
            CHECK(optional == (i > 0 && strcmp(types[i], "pure-token") == 0) ||
                  (optional && map_get(a, "token") != NULL));
        }
    }
    freeReplyObject(x);
}

static void test_command_docs(void) {
    static const char *const token_args[] = {"key", "capacity", "refill_tokens", "refill_ms", "COST", "DRYRUN",
                                             "INTERVAL", "REFUND", "ATMOST", "WAIT"};
    static const char *const token_types[] = {"key", "integer", "integer", "integer", "integer", "pure-token",
                                              "pure-token", "integer", "pure-token", "integer"};
    check_docs("rl.token", "1.0.0", "O(1)", token_args, token_types, 10);
    static const char *const ro_args[] = {"key", "capacity", "refill_tokens", "refill_ms", "COST", "INTERVAL", "REFUND",
                                          "ATMOST"};
    static const char *const ro_types[] = {"key", "integer", "integer", "integer", "integer", "pure-token", "integer",
                                           "pure-token"};
    check_docs("rl.token_ro", "1.1.0", "O(1)", ro_args, ro_types, 8);
    static const char *const log_args[] = {"key", "limit", "window_ms", "COST", "DRYRUN", "MINGAP", "REFUND"};
    static const char *const log_types[] = {"key", "integer", "integer", "integer", "pure-token", "integer", "integer"};
    redisReply *x = cmd(c, "COMMAND DOCS rl.slidinglog");
    const redisReply *doc = x->type == REDIS_REPLY_ARRAY && x->elements == 2 ? x->element[1] : NULL;
    const redisReply *cx = map_get(doc, "complexity");
    CHECK(cx && strncmp(cx->str, "O(log(N))", 9) == 0);
    check_docs("rl.slidinglog", "1.0.0", cx ? cx->str : "?", log_args, log_types, 7);
    freeReplyObject(x);
    static const char *const leaky_args[] = {"key", "capacity", "leak_tokens", "leak_ms", "COST", "DRYRUN",
                                             "NODELAY", "BLOCK", "REFUND"};
    static const char *const leaky_types[] = {"key", "integer", "integer", "integer", "integer", "pure-token",
                                              "pure-token", "pure-token", "integer"};
    check_docs("rl.leaky", "1.0.0", "O(1)", leaky_args, leaky_types, 9);
    static const char *const smooth_args[] = {"key", "permits_per_second", "WARMUP", "COLDFACTOR", "MAXBURST", "COST",
                                              "MAXWAIT", "DRYRUN", "BLOCK"};
    static const char *const smooth_types[] = {"key", "double", "integer", "double", "integer", "integer",
                                               "integer", "pure-token", "pure-token"};
    check_docs("rl.smooth", "1.2.0", "O(1)", smooth_args, smooth_types, 9);
    check_docs("rl.smooth_ro", "1.2.0", "O(1)", smooth_args, smooth_types, 7);
}

/* --- INFO ratelimit ---------------------------------------------------------------------------------- */

static long long stat(const char *field) { return info_field(c, "ratelimit", field); }

static void test_info(void) {
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", T0));
    static const char *const fields[] = {"calls", "admitted", "denied", "units_admitted", "errors", "keys_created"};
    long long before[6], after[6];
    char name[64];
    for (int i = 0; i < 6; i++) {
        snprintf(name, sizeof name, "ratelimit_window_%s", fields[i]);
        before[i] = stat(name);
    }
    del("info:w");
    freeReplyObject(cmd(c, "RL.WINDOW info:w 5 60000 COST 3"));        /* admitted, 3 units, a new key */
    freeReplyObject(cmd(c, "RL.WINDOW info:w 5 60000 COST 2"));        /* admitted, 2 units */
    freeReplyObject(cmd(c, "RL.WINDOW info:w 5 60000"));               /* denied */
    freeReplyObject(cmd(c, "RL.WINDOW info:w 5 60000 COST 1 DRYRUN")); /* denied, no unit */
    freeReplyObject(cmd(c, "RL.WINDOW info:w 0 60000"));               /* an error */
    freeReplyObject(cmd(c, "RL.WINDOW info:w 5 60000 FOO"));           /* an error */
    static const long long delta[6] = {6, 2, 2, 5, 2, 1};
    for (int i = 0; i < 6; i++) {
        snprintf(name, sizeof name, "ratelimit_window_%s", fields[i]);
        after[i] = stat(name);
        if (!CHECK(after[i] - before[i] == delta[i]))
            fprintf(stderr, "     %s: %lld more, expected %lld\n", name, after[i] - before[i], delta[i]);
    }
    CHECK_EQ(stat("ratelimit_window_ro_calls"), stat("ratelimit_window_ro_admitted") + stat("ratelimit_window_ro_denied") +
                                                     stat("ratelimit_window_ro_errors"));
    long long all_calls = stat("ratelimit_all_calls");
    freeReplyObject(cmd(c, "RL.ALL 1 info:a LIMIT TOKEN 5 1 1000 COST 4"));
    CHECK_EQ(stat("ratelimit_all_calls"), all_calls + 1);
    CHECK(stat("ratelimit_all_units_admitted") >= 4);
    /* A client held by BLOCK is waiting until its reply goes, or it goes. */
    del("info:l");
    freeReplyObject(cmd(c, "RL.LEAKY info:l 5 1 60000 COST 2"));
    CHECK_EQ(stat("ratelimit_clients_waiting"), 0);
    redisContext *held = server_connect(srv);
    redisAppendCommand(held, "RL.LEAKY info:l 5 1 60000 BLOCK");
    int done = 0;
    redisBufferWrite(held, &done);
    for (int tries = 0; tries < 500 && stat("ratelimit_clients_waiting") != 1; tries++) sleep_ms(10);
    CHECK_EQ(stat("ratelimit_clients_waiting"), 1);
    redisFree(held);
    for (int tries = 0; tries < 500 && stat("ratelimit_clients_waiting") != 0; tries++) sleep_ms(10);
    CHECK_EQ(stat("ratelimit_clients_waiting"), 0); /* a client that left waits no more */
    redisReply *x = cmd(c, "INFO everything");
    CHECK(x->type == REDIS_REPLY_STRING && strstr(x->str, "ratelimit_token_calls:") != NULL);
    freeReplyObject(x);
}

int main(void) {
    srv = server_start(NULL);
    c = server_connect(srv);
    test_watch();
    test_events();
    test_ro_equals_dryrun();
    test_ro_on_replica();
    test_ro_in_scripts_and_acl();
    test_acl_category();
    test_command_info();
    test_command_docs();
    test_info();
    redisFree(c);
    server_stop(srv);
    return check_summary("integration_commands");
}
