/* integration_policy.c -- policies kept in Redis (RL.POLICY SET/GET/LIST/DEL/FLUSH, RL.CHECK, RL.CHECK_RO)
 * against real redis-servers, on the frozen test clock.
 *
 * The idea: a policy is RL.ALL with its clauses stored under a name and its n limits' states kept in one key,
 * so RL.ALL is its reference. RL.CHECK policy key must answer, call for call, exactly what RL.ALL answers
 * with the same clauses on n separate keys (the RESP2 replies compared whole), and so must RL.CHECK ...
 * DRYRUN and RL.CHECK_RO against RL.ALL ... DRYRUN and RL.ALL_RO. The groups:
 *
 *   1. generated traces: random policies of 1 to 4 cell limits and random call sequences;
 *   2. live replacement mid-trace, against the documented inheritance: a kept limit is RL.ALL's clause on
 *      the same key with its new parameters (the key expiring, as on a real clock, at the idle instant its
 *      last write computed), a new or changed-kind limit a new key, a removed one is gone;
 *   3. SHADOW: answers admitted while each limit's reply and the state are the enforced twin's; INFO counts
 *      shadow_denied; turning SHADOW off enforces from the next call;
 *   4. errors, each changing nothing (policies and keys as they were);
 *   5. the store: GET/LIST/DEL/FLUSH; FLUSHALL, DEBUG RELOAD, RDB and AOF restarts keep the policies and
 *      the keys' states; a replica gets them by full sync and by later SET/DEL, and answers RL.CHECK_RO
 *      as the primary does at the same test-clock time;
 *   6. DRYRUN and RL.CHECK_RO write nothing; a denied RL.CHECK ... WAIT is admitted when the clock passes
 *      its retry, under the policy as it is then;
 *   7. LOCKOUT inside a limit locks that limit;
 *   8. the key: TYPE rl-checks, OBJECT and MEMORY USAGE, COPY and DUMP/RESTORE keep its state; RESP3's map.
 * WAIT runs last: a server that stops answering there ends the program after every other group has run.
 * The closing line is "integration_policy: N passed, N failed". */
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define RNG_SEED 0x9011c1e5a11c0de5ULL
#include "clients.h"
#include "effect_checks.h"
#include "lock_checks.h"
#include "rl_checks.h"
#include "rng.h"
#include "server.h"
#include "suite.h"

static server *srv;
static redisContext *c;

#define T0 1700000000000LL /* a frozen test-clock instant (ms): Tuesday 2023-11-14 22:13:20 UTC */
#define DAY_MS 86400000LL
#define MAX_LIMITS 16
#define ERR_WRONGTYPE "WRONGTYPE Operation against a key holding the wrong kind of value"

static void clock_set_on(redisContext *ctx, long long ms) { CHECK(cmd_status_is(ctx, "OK", "RL.CLOCK SET %lld", ms)); }
static void clock_set(long long ms) { clock_set_on(c, ms); }
static void clock_advance(long long ms) { CHECK(cmd_status_is(c, "OK", "RL.CLOCK ADVANCE %lld", ms)); }

/* --- long command lines and whole replies ----------------------------------------------------------------- */

/* A command line printf-formatted and split on spaces, as cmdline does, but with room for a policy of 16
 * limits (cmdline stops at 64 words). */
typedef struct long_words {
    char line[8192];
    const char *argv[512];
    size_t lens[512];
    int argc;
} long_words;

static redisReply *vcmd_long(redisContext *ctx, const char *fmt, va_list ap) {
    static long_words w;
    vsnprintf(w.line, sizeof w.line, fmt, ap);
    w.argc = split_words(w.line, w.argv, w.lens, (int)(sizeof w.argv / sizeof w.argv[0]));
    return cmdargv(ctx, w.argc, w.argv, w.lens);
}

static redisReply *cmd_long(redisContext *ctx, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = vcmd_long(ctx, fmt, ap);
    va_end(ap);
    return r;
}

/* 1 if the line (split as cmd_long: a "%s" may hold several words) answers +OK; the error is printed. */
static int cmd_long_ok(redisContext *ctx, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = vcmd_long(ctx, fmt, ap);
    va_end(ap);
    int ok = reply_is_status(r, "OK");
    if (!ok) fprintf(stderr, "     %s\n", r->str ? r->str : "(not OK)");
    freeReplyObject(r);
    return ok;
}

/* 1 if two replies are the same tree: types, integers, strings, arrays element for element. */
static int same_reply(const redisReply *a, const redisReply *b) {
    if (!a || !b || a->type != b->type) return 0;
    switch (a->type) {
    case REDIS_REPLY_INTEGER: return a->integer == b->integer;
    case REDIS_REPLY_NIL: return 1;
    /* A lease id (a concurrency limit's seventh field): made from one counter of the server, so RL.CHECK's and
     * RL.ALL's differ; either both took one or neither did. */
    case REDIS_REPLY_STRING: return (a->len > 0) == (b->len > 0);
    case REDIS_REPLY_ARRAY:
        if (a->elements != b->elements) return 0;
        for (size_t i = 0; i < a->elements; i++)
            if (!same_reply(a->element[i], b->element[i])) return 0;
        return 1;
    default: return a->len == b->len && memcmp(a->str, b->str, a->len) == 0;
    }
}

/* A reply as one line of text for failure messages: integers, [arrays], strings, (nil), -errors. */
static size_t reply_text_at(const redisReply *r, char *out, size_t n, size_t used) {
    if (used >= n) return used;
    switch (r->type) {
    case REDIS_REPLY_INTEGER: return used + (size_t)snprintf(out + used, n - used, "%lld", r->integer);
    case REDIS_REPLY_NIL: return used + (size_t)snprintf(out + used, n - used, "(nil)");
    case REDIS_REPLY_ARRAY:
        used += (size_t)snprintf(out + used, n - used, "[");
        for (size_t i = 0; i < r->elements && used < n; i++) {
            if (i) used += (size_t)snprintf(out + used, n - used, " ");
            used = reply_text_at(r->element[i], out, n, used);
        }
        return used < n ? used + (size_t)snprintf(out + used, n - used, "]") : used;
    case REDIS_REPLY_ERROR: return used + (size_t)snprintf(out + used, n - used, "-%s", r->str);
    default: return used + (size_t)snprintf(out + used, n - used, "%s", r->str);
    }
}

static const char *reply_text(const redisReply *r, char *out, size_t n) {
    out[0] = '\0';
    if (r) reply_text_at(r, out, n, 0);
    return out;
}

/* The reply on w if it arrives within ms, else NULL (w stays usable: nothing is read until it is there). */
static redisReply *reply_within(redisContext *w, int ms) {
    struct pollfd fd = {w->fd, POLLIN, 0};
    if (poll(&fd, 1, ms) <= 0) return NULL;
    redisReply *r = NULL;
    if (redisGetReply(w, (void **)&r) != REDIS_OK) return NULL;
    return r;
}

/* 1 if r is an RL.ALL-shaped reply of nl limits: three integers, then nl arrays of six integers. */
static int is_all_reply(const redisReply *r, int nl) {
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != (size_t)(3 + nl)) return 0;
    for (int i = 0; i < 3; i++)
        if (r->element[i]->type != REDIS_REPLY_INTEGER) return 0;
    for (int i = 0; i < nl; i++) {
        long long f[6];
        if (!rl_fields(r->element[3 + i], f)) return 0;
    }
    return 1;
}

/* Field i (0 allowed, 1 retry_after_ms, 2 reset_after_ms) of an RL.ALL-shaped reply; field f of its limit l. */
static long long top(const redisReply *r, int i) { return r->element[i]->integer; }
static long long lim(const redisReply *r, int l, int f) { return r->element[3 + l]->element[f]->integer; }
enum { F_ALLOWED, F_LIMIT, F_REMAINING, F_RETRY, F_RESET, F_WAIT };

/* One check: the two replies are the same tree, and an RL.ALL reply of nl limits (not an error). */
static long long reply_mismatches;
static int check_same_replies(const redisReply *got, const redisReply *want, int nl, const char *what, const char *line) {
    int ok = is_all_reply(got, nl) && same_reply(got, want);
    if (!CHECK(ok) && reply_mismatches++ < 8) {
        char a[2048], b[2048];
        fprintf(stderr, "     %s: %s\n     got:  %s\n     want: %s\n", what, line, reply_text(got, a, sizeof a),
                reply_text(want, b, sizeof b));
    }
    return ok;
}

/* One check: line answers an error that starts with prefix (the exact text where the interface fixes it,
 * its start where it only says what the error names). */
static int check_error_prefix(redisContext *ctx, const char *prefix, const char *line) {
    redisReply *r = cmd_long(ctx, "%s", line);
    int ok = r->type == REDIS_REPLY_ERROR && strncmp(r->str, prefix, strlen(prefix)) == 0;
    if (!CHECK(ok)) fprintf(stderr, "     %s\n     got: %s\n     want: %s...\n", line, r->str ? r->str : "(not a string)", prefix);
    freeReplyObject(r);
    return ok;
}

/* --- policies as the test models them --------------------------------------------------------------------- */

enum { K_TOKEN, K_LEAKY, K_WINDOW, K_SMOOTH, K_QUOTA, K_SLIDINGLOG, K_CONCURRENCY, KINDS };
static const char *const kind_word[KINDS] = {"TOKEN", "LEAKY", "WINDOW", "SMOOTH", "QUOTA", "SLIDINGLOG", "CONCURRENCY"};

/* A limit: its name, kind, spec (an RL.ALL clause without LIMIT), which reference key holds its twin (a new
 * one whenever the limit starts fresh), and the spec of the twin's last write ("" while it has none), whose
 * idle instant is the key's expiry. */
typedef struct plimit {
    char name[33];
    int kind;
    char spec[160];
    int twin;
    char written[160];
} plimit;

typedef struct policy {
    char name[65];
    int shadow;
    int n;
    plimit l[MAX_LIMITS];
} policy;

static int twins_made; /* reference keys handed out so far: each fresh limit gets the next */

/* A random spec of kind: small budgets and periods of a few seconds, so traces deny as often as they admit;
 * sometimes its own COST, a LOCKOUT or FORCE. */
static void random_spec(int kind, char *out, size_t n) {
    size_t used = (size_t)snprintf(out, n, "%s", kind_word[kind]);
#define ADD(...) (used += (size_t)snprintf(out + used, n - used, __VA_ARGS__))
    switch (kind) {
    case K_TOKEN:
        ADD(" %lld %lld %lld", (long long)rng_range(1, 10), (long long)rng_range(1, 3), (long long)rng_range(100, 3000));
        if (rng() % 4 == 0) ADD(" INTERVAL");
        break;
    case K_LEAKY:
        ADD(" %lld %lld %lld", (long long)rng_range(1, 8), (long long)rng_range(1, 2), (long long)rng_range(100, 2000));
        if (rng() % 4) ADD(" NODELAY");
        break;
    case K_WINDOW:
        switch (rng() % 3) {
        case 0: ADD(" %lld %lld FIXED", (long long)rng_range(1, 10), (long long)rng_range(500, 5000)); break;
        case 1: ADD(" %lld %lld SLIDING", (long long)rng_range(1, 10), (long long)rng_range(500, 5000)); break;
        default: {
            long long cells = rng_range(2, 6);
            ADD(" %lld %lld SUBWINDOWS %lld", (long long)rng_range(1, 10), cells * rng_range(100, 1000), cells);
        }
        }
        break;
    case K_SMOOTH:
        ADD(" %lld%s", (long long)rng_range(1, 10), rng() % 2 ? ".5" : "");
        if (rng() % 3 == 0) ADD(" WARMUP %lld", (long long)rng_range(1000, 5000));
        else if (rng() % 2) ADD(" MAXBURST %lld", (long long)rng_range(0, 2000));
        if (rng() % 2) ADD(" MAXWAIT %lld", (long long)rng_range(0, 1000)); /* else it never denies */
        break;
    case K_CONCURRENCY: /* (COST from 1, and neither LOCKOUT nor FORCE: RL.ACQUIRE's options) */
        ADD(" %lld %lld", (long long)rng_range(1, 5), (long long)rng_range(200, 3000));
        if (rng() % 4 == 0) ADD(" COST %lld", (long long)rng_range(1, 2));
        return;
    case K_SLIDINGLOG:
        ADD(" %lld %lld", (long long)rng_range(1, 8), (long long)rng_range(300, 4000));
        if (rng() % 4 == 0) ADD(" MINGAP %lld", (long long)rng_range(1, 300));
        break;
    default:
        ADD(" %lld %s", (long long)rng_range(3, 40), (const char *[]){"DAY", "WEEK", "MONTH"}[rng() % 3]);
        if (rng() % 3 == 0) ADD(" OFFSET %lld", (long long)rng_range(-600, 600));
        break;
    }
    if (rng() % 4 == 0) ADD(" COST %lld", (long long)rng_range(kind == K_SMOOTH, 3)); /* SMOOTH's COST is 1 or more */
    if (rng() % 10 == 0) ADD(" LOCKOUT %lld", (long long)rng_range(500, 3000));
    else if (rng() % 20 == 0 && kind != K_SMOOTH && (kind != K_LEAKY || strstr(out, "NODELAY"))) ADD(" FORCE");
#undef ADD
}

static void fresh_limit(plimit *l, const char *name, int kind) {
    snprintf(l->name, sizeof l->name, "%s", name);
    l->kind = kind;
    random_spec(kind, l->spec, sizeof l->spec);
    l->twin = twins_made++;
    l->written[0] = '\0';
}

static void random_policy(policy *p, const char *name, int nl) {
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name);
    p->n = nl;
    for (int i = 0; i < nl; i++) {
        char lname[16];
        snprintf(lname, sizeof lname, "l%d", i);
        fresh_limit(&p->l[i], lname, (int)(rng() % KINDS));
    }
}

/* RL.POLICY SET for p: one check (+OK). */
static void policy_set_on(redisContext *ctx, const policy *p) {
    char line[4096];
    size_t used = (size_t)snprintf(line, sizeof line, "RL.POLICY SET %s%s", p->name, p->shadow ? " SHADOW" : "");
    for (int i = 0; i < p->n; i++)
        used += (size_t)snprintf(line + used, sizeof line - used, " LIMIT %s %s", p->l[i].name, p->l[i].spec);
    redisReply *r = cmd_long(ctx, "%s", line);
    if (!CHECK(reply_is_status(r, "OK"))) fprintf(stderr, "     %s\n     -> %s\n", line, r->str ? r->str : "(not OK)");
    freeReplyObject(r);
}
static void policy_set(const policy *p) { policy_set_on(c, p); }

/* The reference call: command (RL.ALL, RL.ALL_RO) with p's clauses on the twin keys "{tag}ref:<twin>",
 * COST cost (< 0: none given), then extra (" DRYRUN" or ""). */
static void reference_line(char *out, size_t n, const char *command, const policy *p, const char *tag, long long cost,
                           const char *extra) {
    size_t used = (size_t)snprintf(out, n, "%s %d", command, p->n);
    for (int i = 0; i < p->n; i++) used += (size_t)snprintf(out + used, n - used, " {%s}ref:%d", tag, p->l[i].twin);
    if (cost >= 0) used += (size_t)snprintf(out + used, n - used, " COST %lld", cost);
    used += (size_t)snprintf(out + used, n - used, "%s", extra);
    for (int i = 0; i < p->n; i++) used += (size_t)snprintf(out + used, n - used, " LIMIT %s", p->l[i].spec);
}

/* The policy's call: command (RL.CHECK, RL.CHECK_RO) on key, COST cost (< 0: none), then extra. */
static void check_line(char *out, size_t n, const char *command, const policy *p, const char *key, long long cost,
                       const char *extra) {
    size_t used = (size_t)snprintf(out, n, "%s %s %s", command, p->name, key);
    if (cost >= 0) used += (size_t)snprintf(out + used, n - used, " COST %lld", cost);
    snprintf(out + used, n - used, "%s", extra);
}

/* One comparison: the policy's call and the reference's, made in that order at the same clock instant;
 * one check. Returns the policy's reply (the caller frees it). */
static redisReply *compared_reply(const char *check_cmd, const char *all_cmd, const char *extra, const policy *p,
                                  const char *key, const char *tag, long long cost, const char *what) {
    char mine[512], ref[4096];
    check_line(mine, sizeof mine, check_cmd, p, key, cost, extra);
    reference_line(ref, sizeof ref, all_cmd, p, tag, cost, extra);
    redisReply *got = cmd_long(c, "%s", mine), *want = cmd_long(c, "%s", ref);
    check_same_replies(got, want, p->n, what, mine);
    freeReplyObject(want);
    return got;
}

/* The same, returning the verdict (allowed), -1 when the policy's reply was not an RL.ALL reply. */
static int compare_call(const char *check_cmd, const char *all_cmd, const char *extra, const policy *p,
                        const char *key, const char *tag, long long cost, const char *what) {
    redisReply *got = compared_reply(check_cmd, all_cmd, extra, p, key, tag, cost, what);
    int verdict = is_all_reply(got, p->n) ? (int)top(got, 0) : -1;
    freeReplyObject(got);
    return verdict;
}

/* A random cost: none (the default, 1) one time in five, else 0 to 3. */
static long long random_cost(void) { return rng() % 5 == 0 ? -1 : rng_range(0, 3); }

/* A random step of the clock: mostly a few hundred ms, sometimes seconds, rarely days (quotas renew). */
static long long random_step(void) {
    uint64_t r = rng() % 40;
    if (r == 0) return rng_range(1, 3) * DAY_MS + rng_range(0, 1000);
    if (r < 10) return rng_range(0, 5000);
    return rng_range(0, 300);
}

static long long trace_admitted, trace_denied;

/* spec less its own "COST n". */
static void spec_without_cost(const char *spec, char *out, size_t n) {
    char words[160];
    snprintf(words, sizeof words, "%s", spec);
    size_t used = 0;
    out[0] = '\0';
    char *save = NULL;
    for (char *w = strtok_r(words, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        if (strcmp(w, "COST") == 0) {
            strtok_r(NULL, " ", &save);
            continue;
        }
        used += (size_t)snprintf(out + used, n - used, "%s%s", used ? " " : "", w);
    }
}

/* The reference's keys expire as a real server's would. A key expires at the idle instant its last write
 * computed, under the parameters of that write; RL.CHECK drops a limit's entry then too, so a kept limit
 * whose state was idle under its old parameters starts fresh under the new ones. Under the frozen test clock
 * the twin key does not expire (expiry runs on real time), and RL.ALL would read its state under the new
 * parameters (a larger capacity sees it short of full): the reference deletes it at that instant, as real
 * time would have. Only a limit whose spec changed since its twin's last write can differ; for the others,
 * idle under the spec that wrote it is idle now. */
static long long twins_expired;
static void expire_twins(policy *p, const char *tag) {
    for (int i = 0; i < p->n; i++) {
        plimit *l = &p->l[i];
        if (!l->written[0] || strcmp(l->written, l->spec) == 0) continue;
        char clause[160];
        spec_without_cost(l->written, clause, sizeof clause);
        redisReply *r = cmd_long(c, "RL.ALL_RO 1 {%s}ref:%d COST 0 LIMIT %s", tag, l->twin, clause);
        if (CHECK(is_all_reply(r, 1)) && lim(r, 0, F_RESET) == 0) {
            freeReplyObject(cmd_long(c, "DEL {%s}ref:%d", tag, l->twin));
            l->written[0] = '\0';
            twins_expired++;
        }
        freeReplyObject(r);
    }
}

/* After an admitted call every twin was written under its spec. */
static void twins_written(policy *p) {
    for (int i = 0; i < p->n; i++) snprintf(p->l[i].written, sizeof p->l[i].written, "%s", p->l[i].spec);
}

/* One step of a trace at now: RL.CHECK_RO and RL.CHECK ... DRYRUN against their references (one step in
 * four), then RL.CHECK against RL.ALL. */
static void trace_step(policy *p, const char *key, const char *tag, long long now) {
    long long cost = random_cost();
    clock_set(now);
    expire_twins(p, tag);
    if (rng() % 4 == 0) {
        compare_call("RL.CHECK_RO", "RL.ALL_RO", "", p, key, tag, cost, "RL.CHECK_RO differs from RL.ALL_RO");
        compare_call("RL.CHECK", "RL.ALL", " DRYRUN", p, key, tag, cost, "RL.CHECK DRYRUN differs from RL.ALL DRYRUN");
    }
    int verdict = compare_call("RL.CHECK", "RL.ALL", "", p, key, tag, cost, "RL.CHECK differs from RL.ALL");
    if (verdict == 1) twins_written(p);
    trace_admitted += verdict == 1;
    trace_denied += verdict == 0;
}

/* --- 1. generated traces ---------------------------------------------------------------------------------- */

static void test_traces(void) {
    trace_admitted = trace_denied = 0;
    long long calls = 0;
    for (int trace = 0; trace < 50; trace++) {
        policy p;
        char name[32], key[32], tag[16];
        snprintf(name, sizeof name, "trace-%d", trace);
        snprintf(tag, sizeof tag, "t%d", trace);
        snprintf(key, sizeof key, "{t%d}key", trace);
        random_policy(&p, name, (int)rng_range(1, 4));
        policy_set(&p);
        long long now = T0 + trace * 30 * DAY_MS;
        for (int s = 0; s < 60; s++, calls++) {
            trace_step(&p, key, tag, now);
            now += random_step();
        }
    }
    printf("traces: %lld RL.CHECK calls, %lld admitted, %lld denied\n", calls, trace_admitted, trace_denied);
    CHECK(trace_admitted > 600 && trace_denied > 600); /* both verdicts, well exercised */
}

/* --- 2. live replacement ----------------------------------------------------------------------------------- */

static int named_limits; /* names handed to added limits: never reused, so an added limit is always new */

/* Replace p by a changed copy, as its author would: one limit's parameters changed (same kind), one removed,
 * one added, or one of the same name changing kind. The twins follow the documented inheritance: a kept limit
 * keeps its twin key (RL.ALL reads the state under the new parameters), a new or changed-kind one gets a new
 * key, a removed one leaves the call. Returns what changed, for the counts. */
enum { CHANGED_PARAMS, REMOVED, ADDED, CHANGED_KIND, CHANGES };
static int mutate(policy *p) {
    int what = (int)(rng() % CHANGES), i = (int)(rng() % (uint64_t)p->n);
    if (what == REMOVED && p->n == 1) what = ADDED;
    if (what == ADDED && p->n == 6) what = REMOVED;
    switch (what) {
    case CHANGED_PARAMS: random_spec(p->l[i].kind, p->l[i].spec, sizeof p->l[i].spec); break;
    case REMOVED:
        memmove(&p->l[i], &p->l[i + 1], (size_t)(p->n - i - 1) * sizeof p->l[0]);
        p->n--;
        break;
    case ADDED: {
        char lname[16];
        snprintf(lname, sizeof lname, "new%d", named_limits++);
        memmove(&p->l[i + 1], &p->l[i], (size_t)(p->n - i) * sizeof p->l[0]); /* anywhere in the order */
        fresh_limit(&p->l[i], lname, (int)(rng() % KINDS));
        p->n++;
        break;
    }
    default: {
        char lname[33];
        snprintf(lname, sizeof lname, "%s", p->l[i].name);
        fresh_limit(&p->l[i], lname, (p->l[i].kind + 1 + (int)(rng() % (KINDS - 1))) % KINDS);
    }
    }
    return what;
}

/* The documented inheritance, worked by hand on known numbers. */
static void inheritance_examples(void) {
    clock_set(T0);
    freeReplyObject(cmd(c, "DEL inh:k inh:k2"));
    CHECK(cmd_status_is(c, "OK", "RL.POLICY SET inh LIMIT burst TOKEN 10 1 1000 LIMIT hour WINDOW 100 3600000 FIXED"));
    redisReply *r = cmd(c, "RL.CHECK inh inh:k COST 8");
    CHECK(is_all_reply(r, 2) && top(r, 0) == 1 && lim(r, 0, F_REMAINING) == 2 && lim(r, 1, F_REMAINING) == 92);
    freeReplyObject(r);
    /* A smaller capacity: 2 tokens stay 2 (capped, never refilled); the window keeps its count. */
    CHECK(cmd_status_is(c, "OK", "RL.POLICY SET inh LIMIT burst TOKEN 5 1 1000 LIMIT hour WINDOW 100 3600000 FIXED"));
    r = cmd(c, "RL.CHECK_RO inh inh:k COST 0");
    CHECK(is_all_reply(r, 2) && lim(r, 0, F_LIMIT) == 5 && lim(r, 0, F_REMAINING) == 2 && lim(r, 1, F_REMAINING) == 92);
    freeReplyObject(r);
    /* A key with 8 tokens read at capacity 5: 5, not more. */
    CHECK(cmd_status_is(c, "OK", "RL.POLICY SET inh LIMIT burst TOKEN 10 1 1000 LIMIT hour WINDOW 100 3600000 FIXED"));
    r = cmd(c, "RL.CHECK inh inh:k2 COST 2");
    CHECK(is_all_reply(r, 2) && lim(r, 0, F_REMAINING) == 8);
    freeReplyObject(r);
    CHECK(cmd_status_is(c, "OK", "RL.POLICY SET inh LIMIT burst TOKEN 5 1 1000 LIMIT hour WINDOW 100 3600000 FIXED"));
    r = cmd(c, "RL.CHECK inh inh:k2 COST 0");
    CHECK(is_all_reply(r, 2) && lim(r, 0, F_REMAINING) == 5 && lim(r, 1, F_REMAINING) == 98);
    freeReplyObject(r);
    /* The kind changes (burst becomes a window): it starts fresh; a new limit starts full. */
    CHECK(cmd_status_is(c, "OK", "RL.POLICY SET inh LIMIT burst WINDOW 3 1000 FIXED LIMIT hour WINDOW 100 3600000 "
                                 "FIXED LIMIT day QUOTA 1000 DAY"));
    r = cmd(c, "RL.CHECK inh inh:k COST 0");
    CHECK(is_all_reply(r, 3) && lim(r, 0, F_LIMIT) == 3 && lim(r, 0, F_REMAINING) == 3 && lim(r, 1, F_REMAINING) == 92 &&
          lim(r, 2, F_REMAINING) == 1000);
    freeReplyObject(r);
    /* A removed limit is gone: burst removed, a write, then a burst of the old kind again starts full. */
    CHECK(cmd_status_is(c, "OK", "RL.POLICY SET inh LIMIT hour WINDOW 100 3600000 FIXED"));
    r = cmd(c, "RL.CHECK inh inh:k2 COST 1");
    CHECK(is_all_reply(r, 1) && top(r, 0) == 1 && lim(r, 0, F_REMAINING) == 97);
    freeReplyObject(r);
    CHECK(cmd_status_is(c, "OK", "RL.POLICY SET inh LIMIT burst TOKEN 10 1 1000 LIMIT hour WINDOW 100 3600000 FIXED"));
    r = cmd(c, "RL.CHECK_RO inh inh:k2 COST 0");
    CHECK(is_all_reply(r, 2) && lim(r, 0, F_REMAINING) == 10 && lim(r, 1, F_REMAINING) == 97);
    freeReplyObject(r);
    CHECK_EQ(cmd_int(c, "RL.POLICY DEL inh"), 1);
    freeReplyObject(cmd(c, "DEL inh:k inh:k2"));
}

static void test_live_replacement(void) {
    inheritance_examples();
    trace_admitted = trace_denied = 0;
    long long changes[CHANGES] = {0};
    for (int trace = 0; trace < 40; trace++) {
        policy p;
        char name[32], key[32], tag[16];
        snprintf(name, sizeof name, "live-%d", trace);
        snprintf(tag, sizeof tag, "v%d", trace);
        snprintf(key, sizeof key, "{v%d}key", trace);
        random_policy(&p, name, (int)rng_range(1, 4));
        policy_set(&p);
        long long now = T0 + trace * 30 * DAY_MS;
        for (int s = 0; s < 60; s++) {
            if (s > 0 && rng() % 6 == 0) { /* mid-trace, at the instant of the next call */
                changes[mutate(&p)]++;
                policy_set(&p);
            }
            trace_step(&p, key, tag, now);
            now += random_step();
        }
    }
    printf("live replacement: %lld admitted, %lld denied; %lld changed parameters, %lld removed, %lld added, "
           "%lld changed kind; %lld kept limits idle under their old parameters\n", trace_admitted, trace_denied,
           changes[CHANGED_PARAMS], changes[REMOVED], changes[ADDED], changes[CHANGED_KIND], twins_expired);
    CHECK(changes[CHANGED_PARAMS] > 50 && changes[REMOVED] > 50 && changes[ADDED] > 50 && changes[CHANGED_KIND] > 50);
}

/* --- 3. SHADOW ---------------------------------------------------------------------------------------------- */

/* The counters of INFO ratelimit's line for policy name, in its documented form (one field, several values:
 * "ratelimit_policy_<name>:calls=..,admitted=..,denied=..,shadow_denied=.."). When the line is not there in
 * that form, documented = 0 and the counters are read from fields of their own
 * ("ratelimit_policy_<name>_calls:..."), if any, so that what they count is still checked. */
typedef struct policy_counts {
    int documented;
    long long calls, admitted, denied, shadow_denied;
} policy_counts;

static long long counter_in(const char *line, const char *field) {
    char pat[64];
    snprintf(pat, sizeof pat, "%s=", field);
    for (const char *p = strstr(line, pat); p; p = strstr(p + 1, pat))
        if (p == line || p[-1] == ',' || p[-1] == ':') return atoll(p + strlen(pat));
    return -1;
}

static policy_counts policy_info(const char *name) {
    static const char *const fields[4] = {"calls", "admitted", "denied", "shadow_denied"};
    policy_counts pc = {0, -1, -1, -1, -1};
    long long *values[4] = {&pc.calls, &pc.admitted, &pc.denied, &pc.shadow_denied};
    redisReply *r = cmd(c, "INFO ratelimit");
    char pat[128];
    snprintf(pat, sizeof pat, "\nratelimit_policy_%s:", name);
    const char *at = r->type == REDIS_REPLY_STRING ? strstr(r->str, pat) : NULL;
    if (at) {
        char line[512];
        size_t len = strcspn(at + 1, "\r\n");
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line - 1 ? len : sizeof line - 1), at + 1);
        pc.documented = strstr(line, ":calls=") != NULL;
        for (int i = 0; i < 4; i++) *values[i] = counter_in(strchr(line, ':') + 1, fields[i]);
    }
    freeReplyObject(r);
    if (!pc.documented)
        for (int i = 0; i < 4; i++) {
            snprintf(pat, sizeof pat, "ratelimit_policy_%s_%s", name, fields[i]);
            *values[i] = info_field(c, "ratelimit", pat);
        }
    return pc;
}

static void test_shadow(void) {
    clock_set(T0);
    freeReplyObject(cmd(c, "DEL sh:k en:k"));
    const char *limits = "LIMIT burst TOKEN 3 1 1000 LIMIT minute WINDOW 8 10000 FIXED LIMIT pace LEAKY 4 1 400 NODELAY";
    CHECK(cmd_long_ok(c, "RL.POLICY SET shadowed SHADOW %s", limits));
    CHECK(cmd_long_ok(c, "RL.POLICY SET enforced %s", limits));
    redisReply *g = cmd(c, "RL.POLICY GET shadowed");
    char *words = reply_words(g);
    CHECK_STR(words, "SHADOW LIMIT burst TOKEN 3 1 1000 LIMIT minute WINDOW 8 10000 FIXED LIMIT pace LEAKY 4 1 400 NODELAY ");
    free(words);
    freeReplyObject(g);

    long long now = T0, denied = 0, limit_denials = 0, bad = 0;
    const int calls = 300;
    for (int i = 0; i < calls; i++) {
        long long cost = rng_range(0, 2);
        clock_set(now);
        redisReply *s = cmd(c, "RL.CHECK shadowed sh:k COST %lld", cost), *e = cmd(c, "RL.CHECK enforced en:k COST %lld", cost);
        int ok = is_all_reply(s, 3) && is_all_reply(e, 3) && top(s, 0) == 1 && top(s, 1) == -1 && top(s, 2) == top(e, 2);
        for (int l = 0; ok && l < 3; l++) ok = same_reply(s->element[3 + l], e->element[3 + l]);
        if (!ok && bad++ < 5) {
            char a[1024], b[1024];
            fprintf(stderr, "     shadow step %d: shadowed %s\n     enforced %s\n", i, reply_text(s, a, sizeof a), reply_text(e, b, sizeof b));
        }
        if (is_all_reply(e, 3)) {
            denied += top(e, 0) == 0;
            for (int l = 0; l < 3; l++) limit_denials += lim(e, l, F_ALLOWED) == 0;
        }
        freeReplyObject(s);
        freeReplyObject(e);
        now += rng() % 3 ? rng_range(0, 200) : rng_range(0, 3000);
    }
    CHECK_EQ(bad, 0);
    CHECK(denied > 50 && limit_denials > 50); /* the shadow said yes where the limits said no, often */
    policy_counts sc = policy_info("shadowed"), ec = policy_info("enforced");
    if (!CHECK(sc.documented && ec.documented))
        fprintf(stderr, "     INFO ratelimit has no line ratelimit_policy_shadowed:calls=...,shadow_denied=...\n");
    CHECK_EQ(sc.calls, calls);
    CHECK_EQ(sc.shadow_denied, denied);
    CHECK_EQ(sc.denied, 0); /* a would-be denial counts as shadow_denied, not denied, */
    CHECK_EQ(sc.admitted, calls - denied); /* nor admitted: calls = admitted + denied + shadow_denied */
    CHECK_EQ(ec.calls, calls);
    CHECK_EQ(ec.denied, denied);
    CHECK_EQ(ec.admitted, calls - denied);
    CHECK_EQ(ec.shadow_denied, 0);
    printf("shadow: %d calls, %lld would have been denied\n", calls, denied);

    /* The shadow's state is the enforced twin's: the same look at every instant from now on. */
    for (int i = 0; i < 5; i++) {
        clock_set(now + i * 700);
        redisReply *s = cmd(c, "RL.CHECK_RO shadowed sh:k COST 0"), *e = cmd(c, "RL.CHECK_RO enforced en:k COST 0");
        CHECK(is_all_reply(s, 3) && is_all_reply(e, 3) && same_reply(s->element[3], e->element[3]) &&
              same_reply(s->element[4], e->element[4]) && same_reply(s->element[5], e->element[5]));
        freeReplyObject(s);
        freeReplyObject(e);
    }
    /* SHADOW off: enforced from the next call, with the state already right: the two keys answer alike. */
    CHECK(cmd_long_ok(c, "RL.POLICY SET shadowed %s", limits));
    long long shadow_denied_before = policy_info("shadowed").shadow_denied;
    long long enforced_denials = 0;
    for (int i = 0; i < 40; i++) {
        clock_set(now);
        redisReply *s = cmd(c, "RL.CHECK shadowed sh:k COST 2"), *e = cmd(c, "RL.CHECK enforced en:k COST 2");
        check_same_replies(s, e, 3, "the policy out of SHADOW differs from its enforced twin", "RL.CHECK shadowed sh:k COST 2");
        if (is_all_reply(s, 3)) enforced_denials += top(s, 0) == 0;
        freeReplyObject(s);
        freeReplyObject(e);
        now += rng_range(0, 300);
    }
    CHECK(enforced_denials > 5);
    CHECK_EQ(policy_info("shadowed").shadow_denied, shadow_denied_before); /* no more shadow denials */
    CHECK_EQ(cmd_int(c, "RL.POLICY DEL shadowed"), 1);
    CHECK_EQ(cmd_int(c, "RL.POLICY DEL enforced"), 1);
}

/* --- 4. errors change nothing --------------------------------------------------------------------------------- */

/* Every policy as "name: its GET words; ..." (malloc'd), to compare the store before and after. */
static char *policies_text(redisContext *ctx) {
    redisReply *list = cmd(ctx, "RL.POLICY LIST");
    size_t size = 1, used = 0;
    char *text = calloc(1, size);
    for (size_t i = 0; list->type == REDIS_REPLY_ARRAY && i < list->elements; i++) {
        redisReply *g = cmd(ctx, "RL.POLICY GET %b", list->element[i]->str, list->element[i]->len);
        char *words = reply_words(g);
        size += list->element[i]->len + strlen(words) + 4;
        text = realloc(text, size);
        used += (size_t)sprintf(text + used, "%s: %s; ", list->element[i]->str, words);
        free(words);
        freeReplyObject(g);
    }
    freeReplyObject(list);
    return text;
}

/* An RL.POLICY SET line with n limits "x0".."x<n-1>", each TOKEN 5 1 1000. */
static void many_limits_line(char *out, size_t size, const char *name, int n) {
    size_t used = (size_t)snprintf(out, size, "RL.POLICY SET %s", name);
    for (int i = 0; i < n; i++) used += (size_t)snprintf(out + used, size - used, " LIMIT x%d TOKEN 5 1 1000", i);
}

static void policy_set_errors(void) {
    CHECK(cmd_status_is(c, "OK", "RL.POLICY SET er LIMIT burst TOKEN 10 1 1000 LIMIT hour WINDOW 100 3600000"));
    char *before = policies_text(c);
    static const bad_case exact[] = {
        {"RL.POLICY SET er LIMIT a TOKEN 10 1 1000 LIMIT burst TOKEN 0 1 1000",
         "ERR LIMIT 2 (burst): capacity: must be an integer between 1 and 1000000000000"},
        {"RL.POLICY SET er LIMIT a TOKEN 10 1 1000 LIMIT a WINDOW 5 1000", "ERR LIMIT 2 (a): limit name used twice (LIMIT 1 has it)"},
        {"RL.POLICY SET er LIMIT a TOKEN 10 1 1000 DRYRUN", "ERR LIMIT 1 (a): 'DRYRUN' is not an option of TOKEN"},
        {"RL.POLICY SET er LIMIT a LEAKY 10 1 1000 BLOCK", "ERR LIMIT 1 (a): 'BLOCK' is not an option of LEAKY"},
        {"RL.POLICY SET er LIMIT a WINDOW 5 1000 FIXED SLIDING", "ERR LIMIT 1 (a): SLIDING: cannot be combined with FIXED"},
        {"RL.POLICY SET er LIMIT a QUOTA 5 YEAR", "ERR LIMIT 1 (a): period: must be DAY, WEEK or MONTH"},
        {"RL.POLICY SET er LIMIT a TOKEN 5 1 1000 COST -1", "ERR LIMIT 1 (a): COST: must be an integer between 0 and 1000000000000"},
        {"RL.POLICY SET er LIMIT a TOKEN 5 1 1000 LOCKOUT 100 MAXLOCK 10", "ERR LIMIT 1 (a): MAXLOCK: must be at least LOCKOUT's ms"},
        {"RL.POLICY SET er", "ERR LIMIT: a policy needs 1 to 16 limits"},
        {"RL.POLICY SET er SHADOW", "ERR LIMIT: a policy needs 1 to 16 limits"},
    };
    check_errors(c, exact, sizeof exact / sizeof exact[0]);
    char line[2048];
    many_limits_line(line, sizeof line, "er", 17);
    check_error_prefix(c, "ERR LIMIT: a policy needs 1 to 16 limits", line);
    /* What the interface only says the error names: the argument, or the limit. */
    static const bad_case named[] = {
        {"RL.POLICY SET er LIMIT a TOKEN 10 1", "ERR LIMIT 1 (a): "},
        {"RL.POLICY SET er LIMIT a TOKEN 10 1 1000 LIMIT lease CONCURRENCY 3 10000 ID x", "ERR LIMIT 2 (lease): ID: "},
        {"RL.POLICY SET er LIMIT a BUCKET 5 1 1000", "ERR LIMIT 1 (a): "},
        {"RL.POLICY SET er LIMIT a TOKEN 10 1 1000 REFUND 1", "ERR LIMIT 1 (a): "},
        {"RL.POLICY SET er LIMIT a TOKEN 10 1 1000 ATMOST", "ERR LIMIT 1 (a): "},
        {"RL.POLICY SET er LIMIT a TOKEN 10 1 1000 WAIT 100", "ERR LIMIT 1 (a): "},
        {"RL.POLICY SET er LIMIT a TOKEN 10 1 1000 LIMIT b", "ERR LIMIT 2"},
        {"RL.POLICY SET er LIMIT", "ERR LIMIT"},
        {"RL.POLICY SET er FOO LIMIT a TOKEN 10 1 1000", "ERR "},
        {"RL.POLICY SET a.b LIMIT a TOKEN 10 1 1000", "ERR name: "},
        {"RL.POLICY SET a:b LIMIT a TOKEN 10 1 1000", "ERR name: "},
        {"RL.POLICY SET er LIMIT a.b TOKEN 10 1 1000", "ERR LIMIT 1"},
        {"RL.POLICY SET er LIMIT 123456789012345678901234567890123 TOKEN 10 1 1000", "ERR LIMIT 1"},
        {"RL.POLICY FOO", "ERR "},
    };
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++) check_error_prefix(c, named[i].error, named[i].args);
    /* A name of 65 bytes, and an empty one; a limit name of 32 bytes is fine, and one of 64 bytes a policy name. */
    char long_name[80];
    memset(long_name, 'n', 65);
    long_name[65] = '\0';
    snprintf(line, sizeof line, "RL.POLICY SET %s LIMIT a TOKEN 10 1 1000", long_name);
    check_error_prefix(c, "ERR name: ", line);
    const char *empty[] = {"RL.POLICY", "SET", "", "LIMIT", "a", "TOKEN", "10", "1", "1000"};
    size_t empty_lens[] = {9, 3, 0, 5, 1, 5, 2, 1, 4};
    redisReply *r = cmdargv(c, 9, empty, empty_lens);
    CHECK(r->type == REDIS_REPLY_ERROR && strncmp(r->str, "ERR name: ", 10) == 0);
    freeReplyObject(r);
    const char *empty_limit[] = {"RL.POLICY", "SET", "er", "LIMIT", "", "TOKEN", "10", "1", "1000"};
    size_t empty_limit_lens[] = {9, 3, 2, 5, 0, 5, 2, 1, 4};
    r = cmdargv(c, 9, empty_limit, empty_limit_lens);
    CHECK(r->type == REDIS_REPLY_ERROR && strncmp(r->str, "ERR LIMIT 1", 11) == 0);
    freeReplyObject(r);
    char *after = policies_text(c);
    CHECK_STR(after, before); /* nothing changed, by any of them */
    free(before);
    free(after);

    /* The edges that are fine: 16 limits, a name of 64 bytes, a limit name of 32. */
    many_limits_line(line, sizeof line, "er16", 16);
    redisReply *ok = cmd_long(c, "%s", line);
    CHECK(reply_is_status(ok, "OK"));
    freeReplyObject(ok);
    long_name[64] = '\0';
    CHECK(cmd_status_is(c, "OK", "RL.POLICY SET %s LIMIT 12345678901234567890123456789012 TOKEN 10 1 1000", long_name));
    CHECK(cmd_status_is(c, "OK", "RL.POLICY SET Aa0_-z LIMIT b_-9Z TOKEN 10 1 1000"));
    clock_set(T0);
    redisReply *sixteen = cmd(c, "RL.CHECK er16 er16:k");
    CHECK(is_all_reply(sixteen, 16) && top(sixteen, 0) == 1);
    freeReplyObject(sixteen);
    CHECK_EQ(cmd_int(c, "RL.POLICY DEL er16"), 1);
    CHECK_EQ(cmd_int(c, "RL.POLICY DEL %s", long_name), 1);
    CHECK_EQ(cmd_int(c, "RL.POLICY DEL Aa0_-z"), 1);
    freeReplyObject(cmd(c, "DEL er16:k"));
}

static void policy_check_errors(void) {
    clock_set(T0);
    freeReplyObject(cmd(c, "DEL ek:a ek:str ek:tok ek:new"));
    CHECK(cmd_status_is(c, "OK", "RL.POLICY SET pa LIMIT burst TOKEN 10 1 1000"));
    CHECK(cmd_status_is(c, "OK", "RL.POLICY SET pb LIMIT burst TOKEN 10 1 1000"));
    redisReply *r = cmd(c, "RL.CHECK pa ek:a COST 3");
    CHECK(is_all_reply(r, 1) && top(r, 0) == 1);
    freeReplyObject(r);
    freeReplyObject(cmd(c, "SET ek:str v"));
    freeReplyObject(cmd(c, "RL.TOKEN ek:tok 5 1 1000"));
    size_t la, ls, lt;
    char *dump_a = dump_key(c, "ek:a", &la), *dump_s = dump_key(c, "ek:str", &ls), *dump_t = dump_key(c, "ek:tok", &lt);
    CHECK(dump_a && dump_s && dump_t);

    static const bad_case exact[] = {
        {"RL.CHECK nosuch ek:a", "ERR policy 'nosuch': no such policy"},
        {"RL.CHECK nosuch ek:new", "ERR policy 'nosuch': no such policy"},
        {"RL.CHECK_RO nosuch ek:a", "ERR policy 'nosuch': no such policy"},
        {"RL.CHECK pa ek:str", ERR_WRONGTYPE},
        {"RL.CHECK pa ek:tok", ERR_WRONGTYPE},
        {"RL.CHECK_RO pa ek:str", ERR_WRONGTYPE},
        {"RL.CHECK pb ek:a", "ERR key was checked under policy 'pa', not 'pb'"},
        {"RL.CHECK_RO pb ek:a", "ERR key was checked under policy 'pa', not 'pb'"},
        {"RL.CHECK pb ek:a DRYRUN", "ERR key was checked under policy 'pa', not 'pb'"},
        {"RL.CHECK pa ek:a COST -1", "ERR COST: must be an integer between 0 and 1000000000000"},
        {"RL.CHECK pa ek:a COST 1000000000001", "ERR COST: must be an integer between 0 and 1000000000000"},
        {"RL.CHECK pa ek:a COST x", "ERR COST: must be an integer between 0 and 1000000000000"},
        {"RL.CHECK pa ek:a COST 01", "ERR COST: must be an integer between 0 and 1000000000000"},
        {"RL.CHECK pa ek:a COST", "ERR COST: needs a value"},
        {"RL.CHECK_RO pa ek:a COST -1", "ERR COST: must be an integer between 0 and 1000000000000"},
        {"RL.CHECK pa ek:a COST 1 COST 2", "ERR COST: given more than once"},
        {"RL.CHECK pa ek:a WAIT 0", "ERR WAIT: must be an integer between 1 and 1000000000000"},
        {"RL.TOKEN ek:a 5 1 1000", ERR_WRONGTYPE}, /* the key's own type, to the single commands */
        {"RL.ALL 1 ek:a LIMIT TOKEN 10 1 1000", ERR_WRONGTYPE},
    };
    check_errors(c, exact, sizeof exact / sizeof exact[0]);
    static const bad_case named[] = {
        {"RL.CHECK_RO pa ek:a DRYRUN", "ERR 'DRYRUN': not an option of rl.check_ro"},
        {"RL.CHECK_RO pa ek:a WAIT 100", "ERR 'WAIT': not an option of rl.check_ro"},
        {"RL.CHECK pa ek:a FOO", "ERR 'FOO': not an option of rl.check"},
        {"RL.CHECK pa ek:a REFUND 1", "ERR 'REFUND': not an option of rl.check"},
        {"RL.CHECK pa ek:a BLOCK", "ERR 'BLOCK': not an option of rl.check"},
    };
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++) check_error_prefix(c, named[i].error, named[i].args);
    /* Nothing changed: the keys byte for byte, no key made. */
    size_t la2, ls2, lt2;
    char *a2 = dump_key(c, "ek:a", &la2), *s2 = dump_key(c, "ek:str", &ls2), *t2 = dump_key(c, "ek:tok", &lt2);
    CHECK(a2 && la2 == la && memcmp(a2, dump_a, la) == 0);
    CHECK(s2 && ls2 == ls && memcmp(s2, dump_s, ls) == 0);
    CHECK(t2 && lt2 == lt && memcmp(t2, dump_t, lt) == 0);
    CHECK_EQ(cmd_int(c, "EXISTS ek:new"), 0);
    free(a2), free(s2), free(t2);

    /* A deleted policy: its keys stay, RL.CHECK errors, another policy still may not take the key, and the
     * same name set again continues the state. */
    redisReply *look = cmd(c, "RL.CHECK_RO pa ek:a COST 0");
    CHECK_EQ(cmd_int(c, "RL.POLICY DEL pa"), 1);
    check_error(c, "ERR policy 'pa': no such policy", "RL.CHECK pa ek:a");
    check_error(c, "ERR key was checked under policy 'pa', not 'pb'", "RL.CHECK pb ek:a");
    size_t la3;
    char *a3 = dump_key(c, "ek:a", &la3);
    CHECK(a3 && la3 == la && memcmp(a3, dump_a, la) == 0);
    free(a3);
    CHECK(cmd_status_is(c, "OK", "RL.POLICY SET pa LIMIT burst TOKEN 10 1 1000"));
    redisReply *again = cmd(c, "RL.CHECK_RO pa ek:a COST 0");
    CHECK(is_all_reply(again, 1) && same_reply(again, look) && lim(again, 0, F_REMAINING) == 7);
    freeReplyObject(look);
    freeReplyObject(again);
    free(dump_a), free(dump_s), free(dump_t);
    CHECK_EQ(cmd_int(c, "RL.POLICY DEL pa"), 1);
    CHECK_EQ(cmd_int(c, "RL.POLICY DEL pb"), 1);
    CHECK_EQ(cmd_int(c, "RL.POLICY DEL er"), 1);
    freeReplyObject(cmd(c, "DEL ek:a ek:str ek:tok"));
}

static void test_errors(void) {
    policy_set_errors();
    policy_check_errors();
}

/* --- 5. the store: GET/LIST/DEL/FLUSH, FLUSHALL, reloads, restarts, AOF, replicas ------------------------- */

/* The list as one line "a b c " (reply_words). */
static char *list_text(redisContext *ctx) {
    redisReply *r = cmd(ctx, "RL.POLICY LIST");
    char *text = r->type == REDIS_REPLY_ARRAY ? reply_words(r) : strdup("(not an array)");
    freeReplyObject(r);
    return text;
}

#define CHECK_LIST_ON(ctx, want)        \
    do {                                \
        char *got_ = list_text(ctx);    \
        CHECK_STR(got_, want);          \
        free(got_);                     \
    } while (0)

static void test_get_list_del_flush(void) {
    CHECK(cmd_status_is(c, "OK", "RL.POLICY FLUSH"));
    CHECK_LIST_ON(c, "");
    const char *names[] = {"b", "B", "a-1", "a_1", "Z9", "a"};
    for (int i = 0; i < 6; i++) CHECK(cmd_status_is(c, "OK", "RL.POLICY SET %s LIMIT s TOKEN 10 10 1000", names[i]));
    CHECK_LIST_ON(c, "B Z9 a a-1 a_1 b "); /* bytewise */
    CHECK(cmd_status_is(c, "OK", "RL.POLICY SET a SHADOW LIMIT s TOKEN 10 10 1000 COST 2 LIMIT d QUOTA 1000 DAY OFFSET 60"));
    redisReply *g = cmd(c, "RL.POLICY GET a");
    CHECK(g->type == REDIS_REPLY_ARRAY && g->elements == 16 && g->element[0]->type == REDIS_REPLY_STRING);
    char *words = reply_words(g);
    CHECK_STR(words, "SHADOW LIMIT s TOKEN 10 10 1000 COST 2 LIMIT d QUOTA 1000 DAY OFFSET 60 ");
    free(words);
    freeReplyObject(g);
    g = cmd(c, "RL.POLICY GET nosuch");
    CHECK(g->type == REDIS_REPLY_NIL);
    freeReplyObject(g);
    CHECK_EQ(cmd_int(c, "RL.POLICY DEL a"), 1);
    CHECK_EQ(cmd_int(c, "RL.POLICY DEL a"), 0);
    CHECK_EQ(cmd_int(c, "RL.POLICY DEL nosuch"), 0);
    CHECK_LIST_ON(c, "B Z9 a-1 a_1 b ");
    CHECK(cmd_status_is(c, "OK", "RL.POLICY FLUSH"));
    CHECK_LIST_ON(c, "");
    CHECK(cmd_status_is(c, "OK", "RL.POLICY FLUSH")); /* nothing to flush: still OK */
}

/* The store's state made for the persistence checks: two policies, keys checked under them. */
#define KEEP_A "LIMIT burst TOKEN 10 1 1000 LIMIT minute WINDOW 30 60000 SUBWINDOWS 6"
#define KEEP_B "LIMIT day QUOTA 100 DAY OFFSET -300 LIMIT pace LEAKY 5 1 500 NODELAY LIMIT smooth SMOOTH 2.5 MAXWAIT 300"

static void keep_setup(redisContext *ctx) {
    CHECK(cmd_status_is(ctx, "OK", "RL.POLICY FLUSH"));
    CHECK(cmd_status_is(ctx, "OK", "RL.POLICY SET keep-a " KEEP_A));
    CHECK(cmd_status_is(ctx, "OK", "RL.POLICY SET keep-b SHADOW " KEEP_B));
    for (int i = 0; i < 6; i++) {
        clock_set_on(ctx, T0 + i * 130);
        freeReplyObject(cmd(ctx, "RL.CHECK keep-a ka:1 COST 2"));
        freeReplyObject(cmd(ctx, "RL.CHECK keep-a ka:2"));
        freeReplyObject(cmd(ctx, "RL.CHECK keep-b kb:1 COST 3"));
    }
}

/* What a client can see of the store at T0 + at: the policies, and RL.CHECK_RO of each key a few times
 * later. The caller frees it. */
static char *keep_look(redisContext *ctx, long long at) {
    char *text = policies_text(ctx);
    size_t used = strlen(text);
    static const char *const probes[] = {"keep-a ka:1", "keep-a ka:2", "keep-b kb:1", "keep-a ka:none"};
    for (int t = 0; t < 3; t++) {
        clock_set_on(ctx, T0 + at + t * 450);
        for (int i = 0; i < 4; i++) {
            redisReply *r = cmdline(ctx, "RL.CHECK_RO %s COST 1", probes[i]);
            char one[1024];
            reply_text(r, one, sizeof one);
            text = realloc(text, used + strlen(one) + 3);
            used += (size_t)sprintf(text + used, "%s; ", one);
            freeReplyObject(r);
        }
    }
    return text;
}

static void test_reload_and_restart(void) {
    keep_setup(c);
    char *before = keep_look(c, 1000);
    CHECK(strstr(before, "ERR") == NULL); /* every look answered */
    CHECK(cmd_status_is(c, "OK", "DEBUG RELOAD"));
    char *reloaded = keep_look(c, 1000);
    CHECK_STR(reloaded, before);
    free(reloaded);
    CHECK(cmd_status_is(c, "OK", "SAVE"));
    c = server_shutdown_restart(srv, c);
    char *restarted = keep_look(c, 1000);
    CHECK_STR(restarted, before);
    free(restarted);
    /* FLUSHALL: the keys go, the policies stay. */
    char *policies = policies_text(c);
    CHECK(cmd_status_is(c, "OK", "FLUSHALL"));
    CHECK_EQ(cmd_int(c, "DBSIZE"), 0);
    char *kept = policies_text(c);
    CHECK_STR(kept, policies);
    CHECK(strstr(kept, "keep-a: LIMIT burst TOKEN 10 1 1000 LIMIT minute WINDOW 30 60000 SUBWINDOWS 6 ;") != NULL);
    free(kept);
    free(policies);
    free(before);
}

static void test_aof(void) {
    server *s = server_start(server_aof_always); /* appendonly yes, the default RDB preamble */
    redisContext *a = server_connect(s);
    keep_setup(a);
    CHECK(cmd_status_is(a, "OK", "RL.POLICY SET gone LIMIT x TOKEN 1 1 1000"));
    CHECK_EQ(cmd_int(a, "RL.POLICY DEL gone"), 1);
    char *before = keep_look(a, 2000);
    for (int round = 0; round < 2; round++) { /* the AOF as written, then rewritten */
        a = aof_replay_round(s, a, round);
        char *after = keep_look(a, 2000);
        if (!CHECK(strcmp(after, before) == 0)) fprintf(stderr, "     AOF round %d:\n     %s\n     want %s\n", round, after, before);
        free(after);
    }
    /* A flush in the AOF replays too. */
    CHECK(cmd_status_is(a, "OK", "RL.POLICY FLUSH"));
    a = aof_replay_round(s, a, 0);
    CHECK_LIST_ON(a, "");
    free(before);
    redisFree(a);
    server_stop(s);
}

/* Replicas: a full sync brings the primary's policies (and replaces the replica's own), later SET, DEL and
 * FLUSH follow, and RL.CHECK_RO on the replica answers what it answers on the primary at the same instant. */
static void same_look_on_replica(redisContext *primary, redisContext *replica, const char *const *probes, int n) {
    for (int t = 0; t < 4; t++) {
        long long at = T0 + 5000 + t * 333;
        clock_set_on(primary, at);
        clock_set_on(replica, at);
        for (int i = 0; i < n; i++) {
            redisReply *p = cmdline(primary, "RL.CHECK_RO %s", probes[i]), *r = cmdline(replica, "RL.CHECK_RO %s", probes[i]);
            char a[1024], b[1024];
            if (!CHECK(p->type == REDIS_REPLY_ARRAY && same_reply(p, r)))
                fprintf(stderr, "     RL.CHECK_RO %s: primary %s, replica %s\n", probes[i], reply_text(p, a, sizeof a),
                        reply_text(r, b, sizeof b));
            freeReplyObject(p);
            freeReplyObject(r);
        }
    }
}

static void test_replica(void) {
    keep_setup(c);
    /* The replica-to-be has a policy of its own, which the full sync replaces. */
    server *rep = server_start(NULL);
    redisContext *r = server_connect(rep);
    CHECK(cmd_status_is(r, "OK", "RL.POLICY SET only-here LIMIT x TOKEN 1 1 1000"));
    CHECK(cmd_status_is(r, "OK", "REPLICAOF 127.0.0.1 %d", srv->port));
    CHECK(replica_wait_synced(r));
    char *want = policies_text(c), *got = policies_text(r);
    CHECK_STR(got, want);
    free(want), free(got);
    static const char *const probes[] = {"keep-a ka:1", "keep-a ka:2", "keep-b kb:1"};
    same_look_on_replica(c, r, probes, 3);

    /* Later changes follow, and so do the keys' states. */
    CHECK(cmd_status_is(c, "OK", "RL.POLICY SET later LIMIT w WINDOW 4 2000 SLIDING LIMIT t TOKEN 6 2 1000"));
    CHECK(cmd_status_is(c, "OK", "RL.POLICY SET keep-a LIMIT burst TOKEN 4 1 1000 LIMIT extra LEAKY 3 1 700 NODELAY"));
    CHECK_EQ(cmd_int(c, "RL.POLICY DEL keep-b"), 1);
    CHECK(cmd_status_is(c, "OK", "RL.POLICY SET keep-b " KEEP_B));
    for (int i = 0; i < 12; i++) {
        clock_set(T0 + 2000 + i * 90);
        freeReplyObject(cmd(c, "RL.CHECK later kl:1 COST %d", i % 3));
        freeReplyObject(cmd(c, "RL.CHECK keep-a ka:1"));
        freeReplyObject(cmd(c, "RL.CHECK keep-b kb:1 COST 2"));
    }
    check_replica_caught_up(c);
    want = policies_text(c), got = policies_text(r);
    CHECK_STR(got, want);
    free(want), free(got);
    static const char *const later_probes[] = {"keep-a ka:1", "keep-a ka:2", "keep-b kb:1", "later kl:1"};
    same_look_on_replica(c, r, later_probes, 4);
    /* The replica's own RL.CHECK (a write) is refused, and its RL.CHECK_RO knows the policy's errors. */
    redisReply *w = cmd(r, "RL.CHECK later kl:1");
    CHECK(w->type == REDIS_REPLY_ERROR && strncmp(w->str, "READONLY", 8) == 0);
    freeReplyObject(w);
    check_error(r, "ERR key was checked under policy 'later', not 'keep-a'", "RL.CHECK_RO keep-a kl:1");

    /* DEL, FLUSHALL (policies stay) and FLUSH (they go). */
    CHECK_EQ(cmd_int(c, "RL.POLICY DEL later"), 1);
    CHECK(cmd_status_is(c, "OK", "FLUSHALL"));
    check_replica_caught_up(c);
    CHECK_LIST_ON(r, "keep-a keep-b ");
    CHECK_EQ(cmd_int(r, "DBSIZE"), 0);
    CHECK(cmd_status_is(c, "OK", "RL.POLICY FLUSH"));
    check_replica_caught_up(c);
    CHECK_LIST_ON(r, "");
    redisFree(r);
    server_stop(rep);
}

/* --- 6. DRYRUN, RL.CHECK_RO and WAIT -------------------------------------------------------------------------- */

static void test_read_only(void) {
    clock_set(T0);
    freeReplyObject(cmd(c, "DEL ro:k ro:none w:k"));
    CHECK(cmd_status_is(c, "OK", "RL.POLICY SET ro LIMIT burst TOKEN 3 1 1000 LOCKOUT 5000 LIMIT min WINDOW 10 60000 FIXED"));
    redisReply *r = cmd(c, "RL.CHECK ro ro:k COST 3");
    CHECK(is_all_reply(r, 2) && top(r, 0) == 1);
    freeReplyObject(r);
    size_t l0;
    char *d0 = dump_key(c, "ro:k", &l0);
    long long expire0 = cmd_int(c, "PEXPIRETIME ro:k");
    /* Looks that admit, deny, and would start a lock: none writes. */
    const char *looks[] = {"RL.CHECK ro ro:k DRYRUN", "RL.CHECK ro ro:k COST 0 DRYRUN", "RL.CHECK_RO ro ro:k",
                           "RL.CHECK_RO ro ro:k COST 2", "RL.CHECK ro ro:none DRYRUN", "RL.CHECK_RO ro ro:none COST 2"};
    for (int i = 0; i < 6; i++) {
        redisReply *x = cmdline(c, "%s", looks[i]);
        CHECK(is_all_reply(x, 2));
        freeReplyObject(x);
        size_t l1;
        char *d1 = dump_key(c, "ro:k", &l1);
        if (!CHECK(d1 && l1 == l0 && memcmp(d1, d0, l0) == 0)) fprintf(stderr, "     ro:k changed by %s\n", looks[i]);
        free(d1);
    }
    CHECK_EQ(cmd_int(c, "PEXPIRETIME ro:k"), expire0);
    CHECK_EQ(cmd_int(c, "EXISTS ro:none"), 0);
    redisReply *dry = cmd(c, "RL.CHECK ro ro:k DRYRUN");
    CHECK(is_all_reply(dry, 2) && top(dry, 0) == 0 && top(dry, 1) == 5000); /* it would lock */
    freeReplyObject(dry);
    r = cmd(c, "RL.CHECK ro ro:k COST 0");
    CHECK(is_all_reply(r, 2) && top(r, 0) == 1 && lim(r, 0, F_REMAINING) == 0); /* and did not: not locked */
    freeReplyObject(r);
    free(d0);
    CHECK(watch_survives(srv, c, "ro:k", "RL.CHECK_RO ro ro:k"));

    CHECK_EQ(cmd_int(c, "RL.POLICY DEL ro"), 1);
    freeReplyObject(cmd(c, "DEL ro:k"));
}

/* WAIT under the policy name of nl limits (limits; the first a bucket of 1 token per 1000 ms, the second, if
 * any, a minute's window of 10; faster: the same with 1 token per 100 ms): a denied call waits, is admitted
 * when the clock passes its retry and not 1 ms before, and a waiter is decided under the policy as it is
 * then, so a faster refill set while it waits admits it at the new retry. */
static void wait_under(const char *name, const char *limits, const char *faster, int nl) {
    char key[32], line[96];
    snprintf(key, sizeof key, "%s:k", name);
    snprintf(line, sizeof line, "RL.CHECK %s %s WAIT 60000", name, key);
    clock_set(T0); /* 20 s into a minute: the window's minute lasts the whole test */
    freeReplyObject(cmd(c, "DEL %s", key));
    CHECK(cmd_long_ok(c, "RL.POLICY SET %s %s", name, limits));
    redisReply *r = cmd(c, "RL.CHECK %s %s", name, key);
    CHECK(is_all_reply(r, nl) && top(r, 0) == 1);
    freeReplyObject(r);

    redisContext *w = send_alone(srv, line);
    CHECK(wait_for_waiting(c, 1));
    clock_advance(999);
    redisReply *x = reply_within(w, 100);
    CHECK(x == NULL && clients_waiting(c) == 1); /* 1 ms short of its retry: still waiting */
    clock_advance(1);
    if (!x) x = reply_within(w, 5000);
    /* Admitted, as a fresh call at that instant. */
    CHECK(is_all_reply(x, nl) && top(x, 0) == 1 && top(x, 1) == -1 && lim(x, 0, F_REMAINING) == 0 &&
          (nl == 1 || lim(x, 1, F_REMAINING) == 8));
    if (x) freeReplyObject(x);
    redisFree(w);

    w = send_alone(srv, line);
    CHECK(wait_for_waiting(c, 1));
    CHECK(cmd_long_ok(c, "RL.POLICY SET %s %s", name, faster));
    clock_advance(100);
    x = reply_within(w, 5000);
    CHECK(is_all_reply(x, nl) && top(x, 0) == 1 && (nl == 1 || lim(x, 1, F_REMAINING) == 7));
    if (x) freeReplyObject(x);
    redisFree(w);
    CHECK_EQ(clients_waiting(c), 0);
    CHECK_EQ(cmd_int(c, "RL.POLICY DEL %s", name), 1);
    freeReplyObject(cmd(c, "DEL %s", key));
}

/* (Last of the suite: a server that stops answering here ends the program, after every other group ran.) */
static void test_wait(void) {
    wait_under("wait1", "LIMIT one TOKEN 1 1 1000", "LIMIT one TOKEN 1 1 100", 1);
    wait_under("wait2", "LIMIT one TOKEN 1 1 1000 LIMIT min WINDOW 10 60000 FIXED",
               "LIMIT one TOKEN 1 1 100 LIMIT min WINDOW 10 60000 FIXED", 2);
}

/* --- 6b. A concurrency limit's leases -------------------------------------------------------------------------- */

/* The lease id a reply's limit l carries (its seventh field), into out; "" when none. */
static void lease_of_reply(const redisReply *r, int l, char *out, size_t n) {
    out[0] = '\0';
    const redisReply *lr = r && r->type == REDIS_REPLY_ARRAY && (size_t)(3 + l) < r->elements ? r->element[3 + l] : NULL;
    if (lr && lr->type == REDIS_REPLY_ARRAY && lr->elements == 7 && lr->element[6]->type == REDIS_REPLY_STRING)
        snprintf(out, n, "%.*s", (int)lr->element[6]->len, lr->element[6]->str);
}

/* RL.CHECK under a policy with a CONCURRENCY limit takes leases whose ids its reply carries; RL.LEASES lists them,
 * RL.RELEASE ends one (the slot is free at once), RL.RENEW moves its end; a waiter is admitted by a release;
 * RL.RESET forgets every limit. */
static void test_leases(void) {
    clock_set(T0);
    freeReplyObject(cmd(c, "DEL ls:k"));
    CHECK(cmd_long_ok(c, "RL.POLICY SET ls LIMIT jobs CONCURRENCY 2 10000 LIMIT rate TOKEN 100 1 1000"));
    char id1[80], id2[80], none[80];
    redisReply *r = cmd(c, "RL.CHECK ls ls:k");
    CHECK(is_all_reply(r, 2) && top(r, 0) == 1 && lim(r, 0, F_REMAINING) == 1);
    lease_of_reply(r, 0, id1, sizeof id1);
    freeReplyObject(r);
    r = cmd(c, "RL.CHECK ls ls:k");
    lease_of_reply(r, 0, id2, sizeof id2);
    freeReplyObject(r);
    r = cmd(c, "RL.CHECK ls ls:k");
    CHECK(is_all_reply(r, 2) && top(r, 0) == 0 && lim(r, 0, F_REMAINING) == 0 && lim(r, 1, F_REMAINING) == 98);
    lease_of_reply(r, 0, none, sizeof none);
    freeReplyObject(r);
    CHECK(id1[0] && id2[0] && strcmp(id1, id2) != 0 && none[0] == '\0'); /* a denial takes no lease */
    redisReply *ls = cmd(c, "RL.LEASES ls:k");
    CHECK(ls && ls->type == REDIS_REPLY_ARRAY && ls->elements == 2 && ls->element[0]->elements == 3 &&
          strcmp(ls->element[0]->element[0]->str, id1) == 0 && ls->element[0]->element[2]->integer == 10000);
    freeReplyObject(ls);

    /* A waiter, admitted by a release. */
    redisContext *w = send_alone(srv, "RL.CHECK ls ls:k WAIT 60000");
    CHECK(wait_for_waiting(c, 1));
    CHECK_EQ(cmd_int(c, "RL.RELEASE ls:k %s", id1), 1);
    redisReply *x = reply_within(w, 5000);
    CHECK(is_all_reply(x, 2) && top(x, 0) == 1);
    if (x) freeReplyObject(x);
    redisFree(w);
    CHECK_EQ(cmd_int(c, "RL.RELEASE ls:k %s", id1), 0); /* released already */

    clock_advance(4000);
    CHECK_EQ(cmd_int(c, "RL.RENEW ls:k %s 60000", id2), 1);
    ls = cmd(c, "RL.LEASES ls:k");
    int found = 0;
    for (size_t i = 0; ls && ls->type == REDIS_REPLY_ARRAY && i < ls->elements; i++)
        if (strcmp(ls->element[i]->element[0]->str, id2) == 0) found = ls->element[i]->element[2]->integer == 60000;
    CHECK(found);
    freeReplyObject(ls);
    clock_advance(10000); /* the waiter's lease has ended; id2's holds */
    r = cmd(c, "RL.CHECK ls ls:k COST 0");
    CHECK(is_all_reply(r, 2) && lim(r, 0, F_REMAINING) == 1);
    freeReplyObject(r);
    CHECK_EQ(cmd_int(c, "RL.RESET ls:k"), 1);
    CHECK_EQ(cmd_int(c, "EXISTS ls:k"), 0);
    CHECK_EQ(cmd_int(c, "RL.POLICY DEL ls"), 1);
}

/* --- 7. LOCKOUT ---------------------------------------------------------------------------------------------- */

static void test_lockout(void) {
    clock_set(T0);
    freeReplyObject(cmd(c, "DEL lk:k {lk}ref:1 {lk}ref:2"));
    policy p = {.name = "lk", .n = 2};
    p.l[0] = (plimit){.name = "burst", .kind = K_TOKEN, .spec = "TOKEN 2 1 1000 LOCKOUT 5000", .twin = 1};
    p.l[1] = (plimit){.name = "hour", .kind = K_WINDOW, .spec = "WINDOW 100 3600000 FIXED", .twin = 2};
    policy_set(&p); /* its twins: the keys {lk}ref:1 and {lk}ref:2 */
    long long now = T0;
    for (int i = 0; i < 2; i++) CHECK_EQ(compare_call("RL.CHECK", "RL.ALL", "", &p, "lk:k", "lk", -1, "admitted"), 1);
    /* The third: the bucket denies, and its lock starts: retry is the lock's 5000 ms, not the refill's 1000. */
    redisReply *r = compared_reply("RL.CHECK", "RL.ALL", "", &p, "lk:k", "lk", -1, "the denial that locks");
    CHECK(is_all_reply(r, 2) && top(r, 0) == 0 && top(r, 1) == 5000 && lim(r, 0, F_ALLOWED) == 0 &&
          lim(r, 0, F_RETRY) == 5000 && lim(r, 1, F_ALLOWED) == 1 && lim(r, 1, F_REMAINING) == 98);
    freeReplyObject(r);
    /* While the lock holds, every call is denied with what is left of it, though the tokens come back; the
     * other limit is not locked (it admits, and counts nothing). */
    for (long long step = 1000; step <= 4000; step += 1000) {
        clock_set(now + step);
        compare_call("RL.CHECK", "RL.ALL", "", &p, "lk:k", "lk", 0, "a look during the lock");
        r = compared_reply("RL.CHECK", "RL.ALL", "", &p, "lk:k", "lk", -1, "a call during the lock");
        CHECK(is_all_reply(r, 2) && top(r, 0) == 0 && top(r, 1) == 5000 - step && lim(r, 0, F_REMAINING) == 0 &&
              lim(r, 0, F_RETRY) == 5000 - step && lim(r, 1, F_ALLOWED) == 1 && lim(r, 1, F_REMAINING) == 98);
        freeReplyObject(r);
    }
    clock_set(now + 5000);
    r = compared_reply("RL.CHECK", "RL.ALL", "", &p, "lk:k", "lk", -1, "the first call after the lock");
    CHECK(is_all_reply(r, 2) && top(r, 0) == 1 && lim(r, 0, F_REMAINING) == 1 && lim(r, 1, F_REMAINING) == 97);
    freeReplyObject(r);
    /* From here on, a trace of random calls against RL.ALL, locks included. */
    for (int i = 0; i < 200; i++) {
        now += rng() % 4 ? rng_range(0, 400) : rng_range(0, 6000);
        clock_set(now);
        compare_call("RL.CHECK", "RL.ALL", "", &p, "lk:k", "lk", rng_range(0, 2), "RL.CHECK with a lock differs from RL.ALL");
    }
    CHECK_EQ(cmd_int(c, "RL.POLICY DEL lk"), 1);
    freeReplyObject(cmd(c, "DEL lk:k {lk}ref:1 {lk}ref:2"));
}

/* --- 8. the key: its type, OBJECT and MEMORY, COPY, DUMP/RESTORE; RESP3 --------------------------------------- */

static void test_key_type(void) {
    clock_set(T0);
    freeReplyObject(cmd(c, "DEL ky:k ky:copy ky:restored"));
    CHECK(cmd_status_is(c, "OK", "RL.POLICY SET ky LIMIT burst TOKEN 10 1 1000 LIMIT win WINDOW 20 6000 SUBWINDOWS 6 "
                                 "LIMIT q QUOTA 50 WEEK"));
    redisReply *r = cmd(c, "RL.CHECK ky ky:k COST 4");
    CHECK(is_all_reply(r, 3) && top(r, 0) == 1);
    freeReplyObject(r);
    CHECK(cmd_status_is(c, "rl-checks", "TYPE ky:k"));
    CHECK(cmd_int(c, "OBJECT IDLETIME ky:k") >= 0);
    CHECK(cmd_int(c, "OBJECT REFCOUNT ky:k") >= 1);
    CHECK(cmd_int(c, "MEMORY USAGE ky:k") > 0);
    CHECK(cmd_int(c, "PEXPIRETIME ky:k") > 0); /* it expires when every limit is idle */
    CHECK_EQ(cmd_int(c, "COPY ky:k ky:copy"), 1);
    redisReply *d = cmd(c, "DUMP ky:k");
    CHECK(d->type == REDIS_REPLY_STRING);
    CHECK(cmd_status_is(c, "OK", "RESTORE ky:restored 0 %b", d->str, d->len));
    freeReplyObject(d);
    CHECK(cmd_status_is(c, "rl-checks", "TYPE ky:copy"));
    /* The three answer alike at every step from here: the same state. */
    long long now = T0, bad = 0;
    for (int i = 0; i < 30; i++) {
        now += rng_range(0, 700);
        clock_set(now);
        long long cost = rng_range(0, 3);
        redisReply *a = cmd(c, "RL.CHECK ky ky:k COST %lld", cost), *b = cmd(c, "RL.CHECK ky ky:copy COST %lld", cost),
                   *x = cmd(c, "RL.CHECK ky ky:restored COST %lld", cost);
        if (!(is_all_reply(a, 3) && same_reply(a, b) && same_reply(a, x)) && bad++ < 3) {
            char t1[1024], t2[1024], t3[1024];
            fprintf(stderr, "     step %d: original %s\n     copy %s\n     restored %s\n", i, reply_text(a, t1, sizeof t1),
                    reply_text(b, t2, sizeof t2), reply_text(x, t3, sizeof t3));
        }
        freeReplyObject(a), freeReplyObject(b), freeReplyObject(x);
    }
    CHECK_EQ(bad, 0);
    /* A copy keeps its policy: another policy may not take it. */
    CHECK(cmd_status_is(c, "OK", "RL.POLICY SET ky2 LIMIT burst TOKEN 10 1 1000"));
    check_error(c, "ERR key was checked under policy 'ky', not 'ky2'", "RL.CHECK ky2 ky:copy");

    /* RESP3: a map of allowed, retry_after_ms, reset_after_ms and limits, a map from each limit's name to its
     * reply's map, in the policy's order. */
    freeReplyObject(cmd(c, "DEL ky:3"));
    clock_set(T0);
    CHECK(cmd_status_is(c, "OK", "RL.POLICY SET ky3 LIMIT zeta TOKEN 5 1 1000 LIMIT alpha WINDOW 3 1000 FIXED"));
    const char *head = "%4\r\n+allowed\r\n:1\r\n+retry_after_ms\r\n:-1\r\n+reset_after_ms\r\n:1000\r\n+limits\r\n%2\r\n";
    const char *zeta = "%6\r\n+allowed\r\n:1\r\n+limit\r\n:5\r\n+remaining\r\n:4\r\n+retry_after_ms\r\n:-1\r\n"
                       "+reset_after_ms\r\n:1000\r\n+wait_ms\r\n:0\r\n";
    const char *alpha = "%6\r\n+allowed\r\n:1\r\n+limit\r\n:3\r\n+remaining\r\n:2\r\n+retry_after_ms\r\n:-1\r\n"
                        "+reset_after_ms\r\n:1000\r\n+wait_ms\r\n:0\r\n";
    char *got = raw_exchange(srv->port, "HELLO 3\r\nRL.CHECK ky3 ky:3\r\n", alpha);
    const char *h = strstr(got, head), *z = h ? strstr(h, "zeta\r\n") : NULL, *zm = z ? strstr(z, zeta) : NULL;
    const char *a = zm ? strstr(zm + 1, "alpha\r\n") : NULL, *am = a ? strstr(a, alpha) : NULL;
    if (!CHECK(h && z == zm - 6 && am == a + 7)) fprintf(stderr, "     got: %s\n", got);
    free(got);
    CHECK_EQ(cmd_int(c, "RL.POLICY DEL ky"), 1);
    CHECK_EQ(cmd_int(c, "RL.POLICY DEL ky2"), 1);
    CHECK_EQ(cmd_int(c, "RL.POLICY DEL ky3"), 1);
    freeReplyObject(cmd(c, "DEL ky:k ky:copy ky:restored ky:3"));
}

int main(void) {
    static const suite_test tests[] = {test_traces, test_live_replacement, test_shadow, test_errors,
        test_get_list_del_flush, test_reload_and_restart, test_aof, test_replica, test_read_only, test_lockout,
        test_key_type, test_leases, test_wait, NULL};
    return server_suite("integration_policy", &srv, &c, tests);
}
