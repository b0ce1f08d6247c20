/* integration_commands.c -- what every RL.* command promises as a Redis command, against real redis-servers:
 *
 *   - a call that changes nothing (denied, COST 0, DRYRUN, the read-only forms) does not signal its key,
 *     so a client that WATCHes it keeps its MULTI/EXEC; a call that changes the key does signal it;
 *   - a call that changes a key fires the keyspace event "<command>" (class d) to a real subscriber, and a
 *     call that changes nothing fires none; expiry and DEL keep Redis's own events;
 *   - the read-only forms (RL.TOKEN_RO, ..., RL.ALL_RO) answer exactly what DRYRUN answers, refuse DRYRUN
 *     and BLOCK, and run where writes cannot: on a read-only replica, inside EVAL_RO, for a read-only ACL
 *     user granted them by the very ACL line docs/commands.md gives;
 *   - COMMAND INFO flags and key specs, and COMMAND DOCS (summary, since, group, complexity), argument for
 *     argument against the syntax lines of docs/commands.md (names, tokens, optional and repeated
 *     arguments, oneof choices, types);
 *   - INFO ratelimit counts every call, verdict, unit, error, created key and waiting client (CL.THROTTLE's
 *     and RL.RESET's too), and shows exactly the fields docs/commands.md lists; the data types are the
 *     ones it lists. */
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "effect_checks.h"
#include "rl_checks.h"
#include "server.h"
#include "suite.h"

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
    {"RL.QUOTA", "2 DAY"},
};
#define NLIMITERS (sizeof limiters / sizeof limiters[0])

static void del(const char *key) { freeReplyObject(cmd(c, "DEL %s", key)); }

/* A command's name as Redis knows it (and errors and events name it): lower case. */
static void lowercase(const char *in, char *out, size_t n) {
    size_t j = 0;
    for (; in[j] && j < n - 1; j++) out[j] = (char)(in[j] >= 'A' && in[j] <= 'Z' ? in[j] | 0x20 : in[j]);
    out[j] = '\0';
}

/* --- the reference ---------------------------------------------------------------------------------- */

/* docs/commands.md, read once (make test runs from the repository's root). */
static char *reference;

static void read_reference(void) {
    FILE *f = fopen("docs/commands.md", "rb");
    if (!f) {
        fprintf(stderr, "integration_commands: docs/commands.md not found (run from the repository's root)\n");
        exit(1);
    }
    size_t cap = 1 << 20, n = 0;
    reference = malloc(cap);
    n = fread(reference, 1, cap - 1, f);
    fclose(f);
    reference[n] = '\0';
}

/* A syntax line as compared: single spaces, and a choice written without spaces around `|` (as redis-cli
 * writes it): "key capacity refill_tokens refill_ms [COST n|REFUND n] [ATMOST]". */
static void canonical(const char *in, size_t len, char *out, size_t n) {
    size_t j = 0;
    for (size_t i = 0; i < len && j + 1 < n; i++) {
        char ch = in[i] == '\n' ? ' ' : in[i];
        if (ch == ' ' && (j == 0 || out[j - 1] == ' ' || out[j - 1] == '|')) continue;
        if (ch == '|' && j > 0 && out[j - 1] == ' ') j--;
        out[j++] = ch;
    }
    while (j > 0 && out[j - 1] == ' ') j--;
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
        char event[128], lower[32], change[256], quiet_lines[4][256];
        lowercase(l->command, lower, sizeof lower);
        snprintf(event, sizeof event, "%s ev:k", lower);
        snprintf(change, sizeof change, "%s ev:k %s COST 2", l->command, l->args);
        /* Nothing changes: no event. The marker write on another key must be the next event. A denied
         * request changes a cell limiter not at all; the sliding log logs it (a change). */
        snprintf(quiet_lines[0], sizeof quiet_lines[0], "%s ev:k %s DRYRUN", l->command, l->args);
        snprintf(quiet_lines[1], sizeof quiet_lines[1], "%s_RO ev:k %s", l->command, l->args);
        snprintf(quiet_lines[2], sizeof quiet_lines[2], "%s ev:k %s COST 0", l->command, l->args);
        snprintf(quiet_lines[3], sizeof quiet_lines[3], "%s ev:k %s", l->command, l->args);
        const char *quiet[] = {quiet_lines[0], quiet_lines[1], quiet_lines[2],
                               strcmp(lower, "rl.slidinglog") != 0 ? quiet_lines[3] : NULL, NULL};
        check_events_on(c, sub, change, event, quiet, "RL.TOKEN ev:marker 5 1 1000", "rl.token ev:marker");
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
    /* RL.ALL_RO: the same reply as RL.ALL DRYRUN (costs, refunds, denials), nothing written. */
    del("{ro}a");
    del("{ro}b");
    freeReplyObject(cmd(c, "RL.ALL 2 {ro}a {ro}b COST 2 LIMIT TOKEN 3 1 60000 LIMIT WINDOW 5 60000"));
    static const char *const middles[] = {"", "COST 2", "REFUND 1", "COST 0", "COST 9"};
    for (size_t k = 0; k < sizeof middles / sizeof middles[0]; k++) {
        const char *limits = "LIMIT TOKEN 3 1 60000 LIMIT WINDOW 5 60000";
        redisReply *dry = cmdline(c, "RL.ALL 2 {ro}a {ro}b %s DRYRUN %s", middles[k], limits);
        redisReply *ro = cmdline(c, "RL.ALL_RO 2 {ro}a {ro}b %s %s", middles[k], limits);
        int same = dry->type == REDIS_REPLY_ARRAY && ro->type == REDIS_REPLY_ARRAY && dry->elements == 5 &&
                   ro->elements == 5;
        for (size_t i = 0; same && i < 3; i++) same = dry->element[i]->integer == ro->element[i]->integer;
        for (size_t i = 3; same && i < 5; i++) {
            rl_result a = rl_of(dry->element[i]), b = rl_of(ro->element[i]);
            same = memcmp(&a, &b, sizeof a) == 0;
        }
        if (!CHECK(same)) fprintf(stderr, "     RL.ALL_RO with \"%s\"\n", middles[k]);
        freeReplyObject(dry);
        freeReplyObject(ro);
    }
    CHECK_EQ(rl(c, "RL.TOKEN_RO {ro}a 3 1 60000 COST 0").remaining, 1); /* as the one real call left it */
    del("{ro}a");
    del("{ro}b");
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
    /* RL.ALL_RO there: the replicated state (rep:0 spent, rep:2 not), where RL.ALL answers READONLY. */
    redisReply *all = cmd(r, "RL.ALL_RO 2 rep:0 rep:2 LIMIT TOKEN 2 1 60000 LIMIT WINDOW 2 60000");
    CHECK(all->type == REDIS_REPLY_ARRAY && all->elements == 5 && all->element[0]->integer == 1 &&
          rl_of(all->element[3]).remaining == 0 && rl_of(all->element[4]).remaining == 0);
    freeReplyObject(all);
    all = cmd(r, "RL.ALL 2 rep:0 rep:2 LIMIT TOKEN 2 1 60000 LIMIT WINDOW 2 60000");
    CHECK(all->type == REDIS_REPLY_ERROR && strncmp(all->str, "READONLY", 8) == 0);
    freeReplyObject(all);
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
    x = cmd(c, "EVAL_RO %s 2 {es}a {es}b",
            "return redis.call('RL.ALL_RO', 2, KEYS[1], KEYS[2], 'COST', 3, 'LIMIT', 'TOKEN', 10, 1, 1000, 'LIMIT', 'WINDOW', 5, 1000)");
    CHECK(x->type == REDIS_REPLY_ARRAY && x->elements == 5 && x->element[0]->integer == 1 &&
          rl_of(x->element[3]).remaining == 7 && rl_of(x->element[4]).remaining == 2);
    freeReplyObject(x);
    x = cmd(c, "EVAL_RO %s 1 {es}a", "return redis.call('RL.ALL', 1, KEYS[1], 'LIMIT', 'TOKEN', 10, 1, 1000)");
    CHECK(x->type == REDIS_REPLY_ERROR);
    freeReplyObject(x);
    CHECK_EQ(cmd_int(c, "EXISTS es:k {es}a {es}b"), 0);

    /* Redis 7.0 gives module commands no ACL category: a read-only user is granted the _RO forms by name,
     * with the line docs/commands.md gives, as it gives it. */
    const char *at = strstr(reference, "`ACL SETUSER app on ");
    char line[512] = "";
    if (CHECK(at != NULL)) canonical(at + 1, strcspn(at + 1, "`"), line, sizeof line);
    x = cmdline(c, "%s", line);
    if (!CHECK(x->type == REDIS_REPLY_STATUS && strcmp(x->str, "OK") == 0)) fprintf(stderr, "     %s\n", line);
    freeReplyObject(x);
    redisContext *u = server_connect(srv);
    CHECK(cmd_status_is(u, "OK", "AUTH app pw"));
    for (size_t i = 0; i < NLIMITERS; i++) {
        const limiter *l = &limiters[i];
        CHECK(rl(u, "%s_RO rl:acl %s", l->command, l->args).ok);
        rl_result w = rl(u, "%s rl:acl %s", l->command, l->args);
        CHECK(!w.ok && strncmp(w.error, "NOPERM", 6) == 0);
    }
    CHECK(rl(u, "RL.SMOOTH_RO rl:acl:s 5").ok);
    x = cmd(u, "RL.ALL_RO 2 rl:acl:a rl:acl:b LIMIT TOKEN 5 1 1000 LIMIT SMOOTH 5");
    CHECK(x->type == REDIS_REPLY_ARRAY && x->elements == 5);
    freeReplyObject(x);
    x = cmd(u, "RL.ALL 2 rl:acl:a rl:acl:b LIMIT TOKEN 5 1 1000 LIMIT SMOOTH 5");
    CHECK(x->type == REDIS_REPLY_ERROR && strncmp(x->str, "NOPERM", 6) == 0);
    freeReplyObject(x);
    redisFree(u);
    CHECK_EQ(cmd_int(c, "ACL DELUSER app"), 1);
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
    /* The limiters above, RL.SMOOTH (which never denies without MAXWAIT, so it is not among them) and RL.ACQUIRE,
     * each with its _RO form, + RL.ALL and RL.ALL_RO, RL.RESET, RL.SETSTATE, CL.THROTTLE, RL.RELEASE, RL.RENEW,
     * RL.LEASES, RL.BLOCK, RL.UNBLOCK, RL.LOCKINFO, RL.CHECK and RL.CHECK_RO, and RL.POLICY's five subcommands */
    CHECK((x->type == REDIS_REPLY_ARRAY && x->elements == 2 * (NLIMITERS + 2) + 11 + 2 + 5) == has_category);
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
    redisReply *all = cmd(reader, "RL.ALL_RO 1 rl:acl0 LIMIT TOKEN 2 1 60000");
    CHECK(all->type == REDIS_REPLY_ARRAY && all->elements == 4);
    freeReplyObject(all);
    all = cmd(reader, "RL.ALL 1 rl:acl0 LIMIT TOKEN 2 1 60000");
    CHECK(all->type == REDIS_REPLY_ERROR && strncmp(all->str, "NOPERM", 6) == 0);
    freeReplyObject(all);
    /* The lock commands: RL.LOCKINFO reads (@read), RL.BLOCK and RL.UNBLOCK write. */
    CHECK(cmd_status_is(app, "OK", "RL.BLOCK rl:acl0 60000"));
    redisReply *info = cmd(reader, "RL.LOCKINFO rl:acl0");
    CHECK(info->type == REDIS_REPLY_ARRAY && info->elements == 2 && info->element[0]->integer > 0 &&
          info->element[0]->integer <= 60000);
    freeReplyObject(info);
    info = cmd(reader, "RL.UNBLOCK rl:acl0");
    CHECK(info->type == REDIS_REPLY_ERROR && strncmp(info->str, "NOPERM", 6) == 0);
    freeReplyObject(info);
    CHECK_EQ(cmd_int(app, "RL.UNBLOCK rl:acl0"), 1);
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
        {"RL.TOKEN", -5, "write fast"},            {"RL.TOKEN_RO", -5, "readonly fast"},
        {"RL.LEAKY", -5, "write fast"},            {"RL.LEAKY_RO", -5, "readonly fast"},
        {"RL.WINDOW", -4, "write fast"},           {"RL.WINDOW_RO", -4, "readonly fast"},
        {"RL.SLIDINGLOG", -4, "write"},            {"RL.SLIDINGLOG_RO", -4, "readonly"},
        {"RL.SMOOTH", -3, "write fast"},           {"RL.SMOOTH_RO", -3, "readonly fast"},
        {"RL.ALL", -6, "write movablekeys"},        {"RL.ALL_RO", -6, "readonly movablekeys"},
        {"RL.SETSTATE", -3, "write denyoom fast"},
        {"RL.BLOCK", 3, "write denyoom fast"},      {"RL.UNBLOCK", 2, "write fast"},
        {"RL.LOCKINFO", 2, "readonly fast"},
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
    x = cmd(c, "COMMAND GETKEYSANDFLAGS RL.ALL_RO 2 k1 k2 LIMIT TOKEN 1 1 1 LIMIT WINDOW 1 1");
    CHECK(x->type == REDIS_REPLY_ARRAY && x->elements == 2 && strcmp(x->element[1]->element[0]->str, "k2") == 0 &&
          strcmp(x->element[1]->element[1]->element[0]->str, "RO") == 0);
    freeReplyObject(x);
}

static int str_is(const redisReply *r, const char *want) {
    return r && (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS) && strcmp(r->str, want) == 0;
}

static const char *str_of(const redisReply *r) {
    return r && (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS) ? r->str : NULL;
}

/* The first syntax line of command in the reference (a code line "    <command> ...", with its indented
 * continuation lines, which open with '['), after the command's name; NULL if there is none. */
static int reference_syntax(const char *command, char *out, size_t n) {
    char head[64];
    snprintf(head, sizeof head, "\n    %s ", command);
    const char *at = strstr(reference, head);
    if (!at) return 0;
    const char *start = at + strlen(head), *end = strchr(start, '\n');
    while (end && strncmp(end, "\n     ", 6) == 0) { /* a continuation: deeper indented, and a '[' first */
        const char *p = end + 1;
        while (*p == ' ') p++;
        if (*p != '[') break;
        end = strchr(p, '\n');
    }
    canonical(start, end ? (size_t)(end - start) : strlen(start), out, n);
    return 1;
}

typedef struct text {
    char s[4096];
    size_t n;
} text;

static void put(text *t, const char *s) {
    size_t len = strlen(s);
    if (t->n + len < sizeof t->s) {
        memcpy(t->s + t->n, s, len + 1);
        t->n += len;
    }
}

static int has_flag(const redisReply *arg, const char *flag) {
    const redisReply *flags = map_get(arg, "flags");
    for (size_t i = 0; flags && flags->type == REDIS_REPLY_ARRAY && i < flags->elements; i++)
        if (str_is(flags->element[i], flag)) return 1;
    return 0;
}

static long long type_mismatches;

/* The type a named value must have: a key, RL.SMOOTH's decimals, a string, or an integer. */
static const char *value_type(const char *name) {
    if (strcmp(name, "key") == 0) return "key";
    if (strcmp(name, "permits_per_second") == 0 || strcmp(name, "f") == 0) return "double";
    if (strcmp(name, "spec") == 0 || strcmp(name, "lease_id") == 0) return "string"; /* RL.ALL's clauses, ids */
    static const char *const words[] = {"policy", "name", "limit_name", "kind", "arg"}; /* RL.CHECK, RL.POLICY */
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strcmp(name, words[i]) == 0) return "string";
    return "integer";
}

static void render_arg(text *t, const redisReply *arg);

static void render_list(text *t, const redisReply *list, const char *separator) {
    for (size_t i = 0; list && list->type == REDIS_REPLY_ARRAY && i < list->elements; i++) {
        if (i) put(t, separator);
        render_arg(t, list->element[i]);
    }
}

/* One occurrence of arg: its token, then its value, its choice (a repeated one, RL.ALL's spec, by its name)
 * or its block. Checks the types of values and pure tokens on the way. */
static void render_once(text *t, const redisReply *arg) {
    const char *token = str_of(map_get(arg, "token")), *type = str_of(map_get(arg, "type"));
    const char *name = str_of(map_get(arg, "name"));
    if (!type || !name) {
        type_mismatches++;
        return;
    }
    int pure = strcmp(type, "pure-token") == 0;
    if (token) {
        put(t, token);
        if (!pure) put(t, " ");
    }
    if (strcmp(type, "oneof") == 0 && has_flag(arg, "multiple")) {
        put(t, name);
    } else if (strcmp(type, "oneof") == 0) {
        render_list(t, map_get(arg, "arguments"), "|");
    } else if (strcmp(type, "block") == 0) {
        render_list(t, map_get(arg, "arguments"), " ");
    } else if (pure) {
        char lower[32];
        lowercase(token ? token : "", lower, sizeof lower);
        if (!token || strcmp(name, lower) != 0) type_mismatches++;
    } else {
        put(t, name);
        if (strcmp(type, value_type(name)) != 0) {
            type_mismatches++;
            fprintf(stderr, "     %s: %s, where %s was expected\n", name, type, value_type(name));
        }
    }
}

static void render_arg(text *t, const redisReply *arg) {
    int optional = has_flag(arg, "optional"), multiple = has_flag(arg, "multiple");
    if (optional) put(t, "[");
    render_once(t, arg);
    if (multiple) {
        put(t, " [");
        if (!has_flag(arg, "multiple_token")) { /* the token once, then only values */
            const redisReply *token = map_get(arg, "token");
            if (token) type_mismatches++; /* none of ours is written so */
        }
        render_once(t, arg);
        put(t, " ...]");
    }
    if (optional) put(t, "]");
}

/* The COMMAND DOCS entry of command (RESP2), or NULL; *x to free. */
static const redisReply *docs_of(const char *command, redisReply **x) {
    *x = cmd(c, "COMMAND DOCS %s", command);
    return (*x)->type == REDIS_REPLY_ARRAY && (*x)->elements == 2 ? (*x)->element[1] : NULL;
}

/* The alternatives of RL.ALL's `spec`, from the reference ("spec:  TOKEN ... | LEAKY ..."), canonical. */
static int reference_specs(char out[][512], int max) {
    const char *at = strstr(reference, "\n    spec:");
    int n = 0;
    for (const char *line = at ? at + 10 : NULL; line && n < max;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        const char *p = line;
        while (p < line + len && (*p == ' ' || *p == '|')) p++;
        canonical(p, len - (size_t)(p - line), out[n++], sizeof out[0]);
        if (!end || strncmp(end + 1, "         |", 10) != 0) break;
        line = end + 1;
    }
    return n;
}

/* Every command's COMMAND DOCS, argument for argument, against the syntax lines of docs/commands.md: names,
 * tokens, optional and repeated arguments, choices (oneof) and blocks, in order; and the types. */
static void test_command_docs(void) {
    static const struct {
        const char *command, *since;
    } rows[] = {
        {"RL.TOKEN", "1.0.0"},      {"RL.TOKEN_RO", "1.1.0"},      {"RL.LEAKY", "1.0.0"},
        {"RL.LEAKY_RO", "1.1.0"},   {"RL.WINDOW", "1.0.0"},        {"RL.WINDOW_RO", "1.1.0"},
        {"RL.SLIDINGLOG", "1.0.0"}, {"RL.SLIDINGLOG_RO", "1.1.0"}, {"RL.SMOOTH", "1.2.0"},
        {"RL.SMOOTH_RO", "1.2.0"},  {"RL.ACQUIRE", "1.3.0"},       {"RL.ACQUIRE_RO", "1.3.0"},
        {"RL.RELEASE", "1.3.0"},    {"RL.RENEW", "1.3.0"},         {"RL.LEASES", "1.3.0"},
        {"RL.QUOTA", "1.4.0"},      {"RL.QUOTA_RO", "1.4.0"},
        {"RL.ALL", "1.1.0"},        {"RL.ALL_RO", "1.2.0"},        {"RL.RESET", "1.1.0"},
        {"CL.THROTTLE", "1.1.0"},   {"RL.BLOCK", "1.4.0"},         {"RL.UNBLOCK", "1.4.0"},
        {"RL.LOCKINFO", "1.4.0"},   {"RL.CHECK", "1.5.0"},         {"RL.CHECK_RO", "1.5.0"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char want[1024], lower[32];
        if (!CHECK(reference_syntax(rows[i].command, want, sizeof want))) {
            fprintf(stderr, "     no syntax line for %s in docs/commands.md\n", rows[i].command);
            continue;
        }
        lowercase(rows[i].command, lower, sizeof lower);
        redisReply *x;
        const redisReply *doc = docs_of(lower, &x);
        if (CHECK(doc != NULL)) {
            const redisReply *summary = map_get(doc, "summary");
            CHECK(summary && summary->type == REDIS_REPLY_STRING && strlen(summary->str) > 20);
            CHECK(str_is(map_get(doc, "since"), rows[i].since));
            CHECK(str_is(map_get(doc, "group"), "module"));
            CHECK(str_of(map_get(doc, "complexity")) && strncmp(str_of(map_get(doc, "complexity")), "O(", 2) == 0);
            text got = {.n = 0};
            got.s[0] = '\0';
            render_list(&got, map_get(doc, "arguments"), " ");
            if (!CHECK(strcmp(got.s, want) == 0))
                fprintf(stderr, "     COMMAND DOCS %s:\n       %s\n     docs/commands.md:\n       %s\n", lower, got.s, want);
        }
        freeReplyObject(x);
    }
    /* RL.ALL's clauses, as its `spec:` lines: each kind's read-only form, without the key and ATMOST (FORCE
     * stays: [ATMOST|FORCE] is [FORCE] there). */
    static const char *const kinds[] = {"TOKEN", "LEAKY", "WINDOW", "SLIDINGLOG", "SMOOTH", "CONCURRENCY", "QUOTA"};
    static const char *const commands[] = {"token", "leaky", "window", "slidinglog", "smooth", "acquire", "quota"};
    char want[8][512];
    CHECK_EQ(reference_specs(want, 8), 7);
    for (int k = 0; k < 7; k++) {
        char ro[32];
        snprintf(ro, sizeof ro, "rl.%s_ro", commands[k]);
        lowercase(ro, ro, sizeof ro);
        redisReply *x;
        text args = {.n = 0}, got = {.n = 0};
        args.s[0] = got.s[0] = '\0';
        render_list(&args, map_get(docs_of(ro, &x), "arguments"), " ");
        freeReplyObject(x);
        char *atmost = strstr(args.s, " [ATMOST]"), *choice = strstr(args.s, "[ATMOST|"); /* [ATMOST|FORCE] */
        if (atmost) memmove(atmost, atmost + 9, strlen(atmost + 9) + 1);
        if (choice) memmove(choice + 1, choice + 8, strlen(choice + 8) + 1);
        put(&got, kinds[k]);
        put(&got, strncmp(args.s, "key", 3) == 0 ? args.s + 3 : " ?");
        if (!CHECK(strcmp(got.s, want[k]) == 0))
            fprintf(stderr, "     RL.ALL's %s clause, from COMMAND DOCS %s:\n       %s\n     docs/commands.md:\n       %s\n",
                    kinds[k], ro, got.s, want[k]);
    }
    redisReply *x;
    const redisReply *args = map_get(docs_of("rl.all", &x), "arguments");
    const redisReply *spec = args && args->type == REDIS_REPLY_ARRAY ? args->element[args->elements - 1] : NULL;
    const char *summary = str_of(map_get(spec, "summary"));
    CHECK(summary && strstr(summary, "TOKEN, LEAKY, WINDOW, SLIDINGLOG, SMOOTH, CONCURRENCY or QUOTA") != NULL);
    freeReplyObject(x);
    CHECK_EQ(type_mismatches, 0);
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
    long long ro_calls = stat("ratelimit_all_ro_calls"), ro_denied = stat("ratelimit_all_ro_denied");
    freeReplyObject(cmd(c, "RL.ALL_RO 1 info:a LIMIT TOKEN 5 1 1000 COST 4")); /* denied: 1 left */
    freeReplyObject(cmd(c, "RL.ALL_RO 1 info:a DRYRUN LIMIT TOKEN 5 1 1000")); /* an error */
    CHECK_EQ(stat("ratelimit_all_ro_calls"), ro_calls + 2);
    CHECK_EQ(stat("ratelimit_all_ro_denied"), ro_denied + 1);
    CHECK_EQ(stat("ratelimit_all_ro_units_admitted"), 0);

    /* CL.THROTTLE: allowed (a key created, 2 units), denied, a peek (allowed, nothing written), an error. */
    static const char *const cl_fields[] = {"calls", "admitted", "denied", "units_admitted", "errors", "keys_created"};
    long long cl_before[6];
    for (int i = 0; i < 6; i++) {
        snprintf(name, sizeof name, "ratelimit_cl_throttle_%s", cl_fields[i]);
        cl_before[i] = stat(name);
    }
    del("info:cl");
    freeReplyObject(cmd(c, "CL.THROTTLE info:cl 1 1 60 2"));
    freeReplyObject(cmd(c, "CL.THROTTLE info:cl 1 1 60 1"));
    freeReplyObject(cmd(c, "CL.THROTTLE info:cl 1 1 60 0"));
    freeReplyObject(cmd(c, "CL.THROTTLE info:cl x 1 60"));
    static const long long cl_delta[6] = {4, 2, 1, 2, 1, 1};
    for (int i = 0; i < 6; i++) {
        snprintf(name, sizeof name, "ratelimit_cl_throttle_%s", cl_fields[i]);
        if (!CHECK(stat(name) - cl_before[i] == cl_delta[i]))
            fprintf(stderr, "     %s: %lld more, expected %lld\n", name, stat(name) - cl_before[i], cl_delta[i]);
    }
    /* RL.RESET: two keys deleted of three named, then WRONGTYPE. */
    long long reset_calls = stat("ratelimit_reset_calls"), reset_errors = stat("ratelimit_reset_errors");
    long long deleted = stat("ratelimit_reset_keys_deleted");
    freeReplyObject(cmd(c, "SET info:str x"));
    CHECK_EQ(cmd_int(c, "RL.RESET info:a info:w info:none"), 2);
    freeReplyObject(cmd(c, "RL.RESET info:str"));
    CHECK_EQ(stat("ratelimit_reset_calls"), reset_calls + 2);
    CHECK_EQ(stat("ratelimit_reset_errors"), reset_errors + 1);
    CHECK_EQ(stat("ratelimit_reset_keys_deleted"), deleted + 2);
    del("info:str");
    del("info:cl");
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

/* The backquoted words of s[0..len) ("`a`, `b`") into words[] (each at most 31 characters); returns how
 * many. */
static int quoted_words(const char *s, size_t len, char words[][32], int max) {
    int n = 0;
    for (const char *p = s, *end = s + len; p < end && n < max; p++) {
        if (*p != '`') continue;
        const char *close = memchr(p + 1, '`', (size_t)(end - p - 1));
        if (!close) break;
        snprintf(words[n++], 32, "%.*s", (int)(close - p - 1), p + 1);
        p = close;
    }
    return n;
}

/* The fields of INFO ratelimit that the table of docs/commands.md's INFO section lists, as " name name ... "
 * in out: for each row, every command times every counter ("ratelimit_<command>_<counter>"), or, in the
 * row of "(the module)", every counter ("ratelimit_<counter>"). */
static void reference_info_fields(char *out, size_t n) {
    const char *section = strstr(reference, "\n## INFO ratelimit"), *end = section ? strstr(section + 4, "\n## ") : NULL;
    size_t used = (size_t)snprintf(out, n, " ");
    for (const char *line = section; line && line < end; line = strchr(line + 1, '\n')) {
        const char *bar = strstr(line, " | "), *eol = strchr(line + 1, '\n');
        if (strncmp(line, "\n| ", 3) != 0 || !bar || !eol || bar > eol) continue;
        char commands[32][32], counters[16][32];
        int module = strncmp(line, "\n| (the module) |", 17) == 0;
        int ncommands = module ? 1 : quoted_words(line, (size_t)(bar - line), commands, 32);
        int ncounters = quoted_words(bar, (size_t)(eol - bar), counters, 16);
        for (int i = 0; i < ncommands; i++)
            for (int k = 0; k < ncounters && used < n; k++)
                used += (size_t)snprintf(out + used, n - used, "ratelimit_%s%s%s ", module ? "" : commands[i],
                                         module ? "" : "_", counters[k]);
    }
}

/* INFO ratelimit's fields as the table of docs/commands.md lists them, no more and no fewer; and the
 * limiters' data types as its list of them ("a module data type per algorithm (`rl-tokens`, ...; ...)"). */
static void test_reference_lists(void) {
    static char listed[16384];
    reference_info_fields(listed, sizeof listed);
    redisReply *x = cmd(c, "INFO ratelimit");
    int fields = 0;
    if (CHECK(x->type == REDIS_REPLY_STRING))
        for (const char *line = x->str; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
            if (strncmp(line, "ratelimit_", 10) != 0) continue;
            char name[96];
            snprintf(name, sizeof name, " %.*s ", (int)strcspn(line, ":"), line);
            fields++;
            if (!CHECK(strstr(listed, name) != NULL)) fprintf(stderr, "     INFO has%s, docs/commands.md does not\n", name);
        }
    freeReplyObject(x);
    int documented = 0;
    for (const char *p = listed; (p = strstr(p, " ratelimit_")) != NULL; p++) documented++;
    if (!CHECK(fields == documented)) fprintf(stderr, "     INFO: %d fields, docs/commands.md:%s\n", fields, listed);
    CHECK(fields == 3 + 19 * 7 + 3 + 2 * 4); /* the module's, 19 commands of seven counters, RL.RESET's, and
                                                RL.RELEASE's and RL.RENEW's four (no policy is set here) */

    const char *at = strstr(reference, "module data type per algorithm");
    char types[9][32];
    int ntypes = at ? quoted_words(at, strcspn(at, ";"), types, 9) : 0;
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", T0));
    CHECK(cmd_status_is(c, "OK", "RL.POLICY SET dt LIMIT a TOKEN 5 1 1000"));
    static const struct {
        const char *key, *line;
    } keys[] = {{"dt:t", "RL.TOKEN dt:t 5 1 1000"}, {"dt:l", "RL.LEAKY dt:l 5 1 1000"}, {"dt:w", "RL.WINDOW dt:w 5 1000"},
                {"dt:s", "RL.SMOOTH dt:s 5"},       {"dt:g", "RL.SLIDINGLOG dt:g 5 1000"},
                {"dt:c", "RL.ACQUIRE dt:c 5 1000"}, {"dt:q", "RL.QUOTA dt:q 5 MONTH"},
                {"dt:k", "RL.BLOCK dt:k 1000"},     {"dt:p", "RL.CHECK dt dt:p"}};
    int module_types = 0;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        freeReplyObject(cmdline(c, "%s", keys[i].line));
        redisReply *t = cmd(c, "TYPE %s", keys[i].key);
        if (t->type == REDIS_REPLY_STATUS && strcmp(t->str, "zset") != 0) {
            module_types++;
            int found = 0;
            for (int k = 0; k < ntypes; k++) found |= strcmp(types[k], t->str) == 0;
            if (!CHECK(found)) fprintf(stderr, "     TYPE %s is not in docs/commands.md's list of data types\n", t->str);
        }
        freeReplyObject(t);
    }
    CHECK_EQ(module_types, 8); /* the six limiters', rl-locked (a lock alone) and rl-checks (a policy's limits) */
    CHECK_EQ(ntypes, module_types);
    freeReplyObject(cmd(c, "DEL dt:t dt:l dt:w dt:s dt:g dt:c dt:q dt:k dt:p"));
    freeReplyObject(cmd(c, "RL.POLICY FLUSH"));
}

int main(void) {
    read_reference();
    static const suite_test tests[] = {test_watch, test_events, test_ro_equals_dryrun, test_ro_on_replica,
        test_ro_in_scripts_and_acl, test_acl_category, test_command_info, test_command_docs, test_info,
        test_reference_lists, NULL};
    return server_suite("integration_commands", &srv, &c, tests);
}
