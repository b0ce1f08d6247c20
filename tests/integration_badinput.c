/* integration_badinput.c -- every RL.* command against bad input, on a real redis-server (RL.SMOOTH, whose
 * numbers are decimals, has its own table: test_smooth; the lease commands other than RL.ACQUIRE, and RL.ALL's
 * CONCURRENCY clause, have theirs: test_leases; RL.QUOTA, whose period is a word, too: test_quota):
 *
 *   - tables of cases per command: arity, non-numbers, signs, zero, leading zeros, 2^63 and beyond, huge
 *     COST, unknown, repeated, conflicting and misplaced options, binary junk (NUL, CR LF, 0xff) in the
 *     key and in arguments, wrong key types. Each case must answer an error (the exact text for every
 *     case here), leave the connection in step (a PING right after answers PONG), and change nothing:
 *     every watched key (own kind, other kinds, plain types, binary names, missing) keeps its DUMP, its
 *     PEXPIRETIME and for sorted sets its ZRANGE WITHSCORES; DBSIZE and the test clock are unchanged;
 *   - valid boundary values (the largest count, period, COST) are accepted;
 *   - FORCE with what it excludes (both orders), where no debt can be held, and in RL.ALL (test_force);
 *   - sorted sets the module did not write, for RL.SLIDINGLOG;
 *   - RL.SETSTATE's lease blobs (tag 'C', the layout of module/lease_type.c): truncated, overlong, counts
 *     that lie, fields out of range, leases out of order are refused and change nothing; the largest valid
 *     values are taken;
 *   - a few thousand random argument vectors (deterministic PRNG) mixing valid and invalid tokens, each
 *     checked against a reference reading of docs/commands.md: the exact error, or a well-formed reply
 *     whose fields agree with the request (RL.ACQUIRE's lease among them); the key unchanged after every
 *     error, every DRYRUN and read-only call, every denied RL.ACQUIRE and every RL.RELEASE or RL.RENEW that
 *     answers 0. Lease blobs, valid and mutated, are judged by a reference reading of their layout;
 *   - policies: RL.POLICY's subcommands and counts of arguments, its names, its structure (LIMIT, limit
 *     names, their count, REFUND, ATMOST and a CONCURRENCY clause's ID), a spec error of every kind (SLIDINGLOG's
 *     and CONCURRENCY's too) at the first, second and last place; RL.CHECK and RL.CHECK_RO's options, unknown
 *     policies, keys of other types and other policies; valid policies at the edges, answered back by GET as
 *     set. snapshot() watches the policies too, and bp's keys, which hold a sliding log and a lease; RL.RELEASE,
 *     RL.RENEW and RL.LEASES on a policy's key answer without changing it;
 *   - a policy-checked key's state (RL.SETSTATE key <'P' blob>): blobs crafted from real states with every
 *     fault of the layout (a sliding log's and the leases' included), each refused with its exact error; every byte of a valid blob changed, the blob
 *     cut and lengthened, each answered as a reference reading allows, RESTORE taking the same body exactly
 *     when RL.SETSTATE does; valid ones taken and read by RL.CHECK_RO; DEBUG RELOAD keeps them equal;
 *   - random RL.POLICY and RL.CHECK vectors against a reference reading of docs/commands.md.
 *
 * The closing line is "integration_badinput: N passed, N failed". */
#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "check.h"
#include "server.h"

#define T0 1700000000000LL
#define MAX_COUNT 1000000000000LL
#define MAX_ARGS 24 /* the most arguments after the key a limiter command takes (every option once, with LOCKOUT's four) */
#define MAX_SLOG 100000LL
#define MAX_LEASE 10000LL                                 /* a concurrency limit's largest limit and COST */
#define MAX_LEASE_END_US ((1LL << 46) * 1000 + MAX_COUNT * 1000) /* the latest end a lease may have */
#define MAX_TIME_MS (1LL << 46)
#define WRONGTYPE "WRONGTYPE Operation against a key holding the wrong kind of value"

static server *srv;
static redisContext *c;
static long long cases_tried, fuzz_tried, fuzz_errors, fuzz_ok;

/* --- argument vectors (binary-safe) -------------------------------------------------------------------- */

typedef struct bin {
    const char *p;
    size_t n;
} bin;
#define B(s) {s, sizeof(s) - 1}
#define BV(s) ((bin){s, sizeof(s) - 1}) /* the same as a value (in a macro's arguments too) */

#define ARGV_MAX 512 /* room for RL.POLICY SET past its most arguments */
typedef struct argv_t {
    int argc;
    const char *v[ARGV_MAX];
    size_t l[ARGV_MAX];
    char buf[16384];
    size_t used;
} argv_t;

static void a_reset(argv_t *a) {
    a->argc = 0;
    a->used = 0;
}

static void a_bin(argv_t *a, const char *p, size_t n) {
    if (a->argc == ARGV_MAX || a->used + n + 1 > sizeof a->buf) abort();
    memcpy(a->buf + a->used, p, n);
    a->buf[a->used + n] = '\0';
    a->v[a->argc] = a->buf + a->used;
    a->l[a->argc++] = n;
    a->used += n + 1;
}

static void a_str(argv_t *a, const char *s) { a_bin(a, s, strlen(s)); }

/* Append the words of a line (split on spaces). */
static void a_words(argv_t *a, const char *line) {
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", line);
    char *save = NULL;
    for (char *t = strtok_r(tmp, " ", &save); t; t = strtok_r(NULL, " ", &save)) a_str(a, t);
}

/* The vector as text for failure messages: unprintable bytes as \xNN, arguments in quotes. */
static const char *describe(const argv_t *a) {
    static char out[2048];
    size_t j = 0;
    for (int i = 0; i < a->argc && j < sizeof out - 16; i++) {
        out[j++] = i ? ' ' : '"';
        if (i) out[j++] = '"';
        for (size_t k = 0; k < a->l[i] && j < sizeof out - 16; k++) {
            unsigned char ch = (unsigned char)a->v[i][k];
            if (ch >= 0x20 && ch < 0x7f && ch != '"')
                out[j++] = (char)ch;
            else
                j += (size_t)snprintf(out + j, 8, "\\x%02x", ch);
        }
        out[j++] = '"';
    }
    out[j] = '\0';
    return out;
}

/* --- talking to the server without dying on a protocol error -------------------------------------------- */

static int connection_lost;

static redisReply *get_reply(void) {
    void *r = NULL;
    if (connection_lost) return NULL;
    if (redisGetReply(c, &r) != REDIS_OK || !r) {
        fprintf(stderr, "     connection error: %s\n", c->errstr);
        connection_lost = 1;
        return NULL;
    }
    return r;
}

static void send_argv(const argv_t *a) { redisAppendCommandArgv(c, a->argc, (const char **)a->v, a->l); }

static void send_line(const char *line) {
    argv_t a;
    a_reset(&a);
    a_words(&a, line);
    send_argv(&a);
}

static redisReply *call_line(const char *line) {
    send_line(line);
    return get_reply();
}

static int printable(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f) return 0;
    return 1;
}

/* The six fields of a reply as text, in reply order, for failure messages. */
static const char *fields(const rl_result *f) {
    static char out[160];
    snprintf(out, sizeof out, "%lld %lld %lld %lld %lld %lld", f->allowed, f->limit, f->remaining, f->retry_after_ms,
             f->reset_after_ms, f->wait_ms);
    return out;
}

/* --- watched keys: the state that no bad input may change ------------------------------------------------ */

typedef struct watched {
    char name[64];
    size_t len;
} watched;

static watched watch[32];
static int nwatch;

static void watch_key(const char *p, size_t n) {
    memcpy(watch[nwatch].name, p, n);
    watch[nwatch++].len = n;
}

static void ser_reply(char **buf, size_t *len, size_t *cap, const redisReply *r) {
    size_t need = 64 + (r->str ? r->len : 0);
    while (*len + need > *cap) {
        *cap = *cap ? *cap * 2 : 4096;
        *buf = realloc(*buf, *cap);
    }
    long long head[3] = {r->type, r->integer, (long long)(r->str ? r->len : r->elements)};
    memcpy(*buf + *len, head, sizeof head);
    *len += sizeof head;
    if (r->str) {
        memcpy(*buf + *len, r->str, r->len);
        *len += r->len;
    }
    if (r->type == REDIS_REPLY_ARRAY)
        for (size_t i = 0; i < r->elements; i++) ser_reply(buf, len, cap, r->element[i]);
}

/* The policies no bad input may change: every name RL.POLICY LIST answers, and what RL.POLICY GET answers for
 * these (the two the program keeps, and the names the bad RL.POLICY SETs use). */
static const char *const watched_policies[] = {"bp", "bp2", "rp", "rq"};
#define NWATCHED_POLICIES ((int)(sizeof watched_policies / sizeof watched_policies[0]))

/* INFO ratelimit's lines of the policies' counters (ratelimit_policy_<name>:calls=..), as a status reply: the
 * rest of INFO counts every call, errors included. */
static void keep_policy_counters(redisReply *info) {
    if (!info || info->type != REDIS_REPLY_STRING) return;
    size_t kept = 0;
    for (char *line = info->str; line && *line;) {
        char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line + 1) : strlen(line);
        if (strncmp(line, "ratelimit_policy_", 17) == 0) {
            memmove(info->str + kept, line, n);
            kept += n;
        }
        line = end ? end + 1 : NULL;
    }
    info->str[kept] = '\0';
    info->len = kept;
}

/* DBSIZE, the test clock, for every watched key: TYPE, DUMP, PEXPIRETIME, ZRANGE WITHSCORES; and the policies:
 * LIST, GET of each watched name, their INFO counters. */
static char *snapshot(size_t *len) {
    redisAppendCommand(c, "DBSIZE");
    redisAppendCommand(c, "RL.CLOCK GET");
    for (int i = 0; i < nwatch; i++) {
        redisAppendCommand(c, "TYPE %b", watch[i].name, watch[i].len);
        redisAppendCommand(c, "DUMP %b", watch[i].name, watch[i].len);
        redisAppendCommand(c, "PEXPIRETIME %b", watch[i].name, watch[i].len);
        redisAppendCommand(c, "ZRANGE %b 0 -1 WITHSCORES", watch[i].name, watch[i].len);
    }
    redisAppendCommand(c, "RL.POLICY LIST");
    for (int i = 0; i < NWATCHED_POLICIES; i++) redisAppendCommand(c, "RL.POLICY GET %s", watched_policies[i]);
    redisAppendCommand(c, "INFO ratelimit");
    int replies = 2 + 4 * nwatch + 1 + NWATCHED_POLICIES + 1;
    char *buf = NULL;
    size_t cap = 0;
    *len = 0;
    for (int i = 0; i < replies; i++) {
        redisReply *r = get_reply();
        if (!r) break;
        if (i == replies - 1) keep_policy_counters(r);
        ser_reply(&buf, len, &cap, r);
        freeReplyObject(r);
    }
    return buf;
}

/* --- the check of one bad input ---------------------------------------------------------------------------
 * The reply is an error equal to `expected` (a trailing '*' makes it a prefix), or to `or_else` when not NULL,
 * printable; a PING right after answers PONG; nothing watched changed. */
static int error_is(const redisReply *r, const char *expected) {
    size_t elen = strlen(expected);
    int prefix = elen > 0 && expected[elen - 1] == '*';
    return prefix ? strncmp(r->str, expected, elen - 1) == 0 : strcmp(r->str, expected) == 0;
}

static void expect_error2_at(const argv_t *a, const char *expected, const char *or_else, const char *file, int line) {
    if (connection_lost) return;
    cases_tried++;
    size_t l0, l1;
    char *before = snapshot(&l0);
    send_argv(a);
    redisAppendCommand(c, "PING");
    redisReply *r = get_reply(), *p = get_reply();
    int ok = r && r->type == REDIS_REPLY_ERROR && printable(r->str, r->len) &&
             (error_is(r, expected) || (or_else && error_is(r, or_else)));
    if (!check_record(ok, file, line, "bad input answers the expected error"))
        fprintf(stderr, "     %s\n     got: %s\n     expected: %s\n", describe(a),
                !r ? "(no reply)" : r->type == REDIS_REPLY_ERROR ? r->str : "(not an error)", expected);
    check_record(reply_is_status(p, "PONG"), file, line,
                 "the connection is in step after bad input (PING answers PONG)");
    char *after = snapshot(&l1);
    if (!check_record(before && after && l0 == l1 && memcmp(before, after, l0) == 0, file, line,
                      "bad input changes nothing (DUMP, PEXPIRETIME, ZRANGE, DBSIZE, clock)"))
        fprintf(stderr, "     %s\n", describe(a));
    if (r) freeReplyObject(r);
    if (p) freeReplyObject(p);
    free(before);
    free(after);
}
static void expect_error_at(const argv_t *a, const char *expected, const char *file, int line) {
    expect_error2_at(a, expected, NULL, file, line);
}
#define expect_error(a, expected) expect_error_at(a, expected, __FILE__, __LINE__)

/* A call that must answer, not fail, and change nothing (as bad input): an integer of value n, or an array of n
 * elements; a PING after it answers PONG. */
static void expect_quiet_reply_at(const argv_t *a, int type, long long n, const char *file, int line) {
    if (connection_lost) return;
    cases_tried++;
    size_t l0, l1;
    char *before = snapshot(&l0);
    send_argv(a);
    redisAppendCommand(c, "PING");
    redisReply *r = get_reply(), *p = get_reply();
    int ok = r && r->type == type &&
             (type == REDIS_REPLY_INTEGER ? r->integer == n : type == REDIS_REPLY_ARRAY ? (long long)r->elements == n : 1);
    if (!check_record(ok, file, line, "the call answers as expected"))
        fprintf(stderr, "     %s\n     got: %s\n", describe(a), r && r->str ? r->str : "(another reply)");
    check_record(reply_is_status(p, "PONG"), file, line, "the connection is in step (PING answers PONG)");
    char *after = snapshot(&l1);
    if (!check_record(before && after && l0 == l1 && memcmp(before, after, l0) == 0, file, line,
                      "the call changes nothing (DUMP, PEXPIRETIME, ZRANGE, DBSIZE, clock)"))
        fprintf(stderr, "     %s\n", describe(a));
    if (r) freeReplyObject(r);
    if (p) freeReplyObject(p);
    free(before);
    free(after);
}
#define expect_quiet_reply(a, type, n) expect_quiet_reply_at(a, type, n, __FILE__, __LINE__)

static int is_acquire(const argv_t *a) {
    return (a->l[0] == 10 && strncasecmp(a->v[0], "RL.ACQUIRE", 10) == 0) ||
           (a->l[0] == 13 && strncasecmp(a->v[0], "RL.ACQUIRE_RO", 13) == 0);
}

/* A limiter's reply to the vector a: six integers, or for RL.ACQUIRE and RL.ACQUIRE_RO seven, the last the
 * lease (a bulk string, or nil; *lease is NULL then). f.ok is 0 when the reply has another shape. */
static rl_result reply_fields(const argv_t *a, const redisReply *r, const redisReply **lease) {
    *lease = NULL;
    rl_result f = {0};
    if (!r || r->type != REDIS_REPLY_ARRAY) return rl_of(r);
    if (r->elements != (is_acquire(a) ? 7u : 6u)) return f; /* (rl_of alone would take a seventh field anywhere) */
    if (!is_acquire(a)) return rl_of(r);
    const redisReply *l = r->element[6];
    if (l->type != REDIS_REPLY_STRING && l->type != REDIS_REPLY_NIL) return f;
    redisReply six = *r; /* the six common fields */
    six.elements = 6;
    f = rl_of(&six);
    if (l->type == REDIS_REPLY_STRING) *lease = l;
    return f;
}

/* A valid call: the six-field reply (seven with the lease for RL.ACQUIRE; the six returned in f). */
static int expect_six_at(const argv_t *a, rl_result *f, const char *file, int line) {
    if (connection_lost) return 0;
    cases_tried++;
    send_argv(a);
    redisReply *r = get_reply();
    const redisReply *lease;
    *f = reply_fields(a, r, &lease);
    int ok = f->ok;
    if (!check_record(ok, file, line, "valid input answers the six-field reply"))
        fprintf(stderr, "     %s\n     got: %s\n", describe(a), r && r->str ? r->str : "(not six integers)");
    if (r) freeReplyObject(r);
    return ok;
}
#define expect_six(a, f) expect_six_at(a, f, __FILE__, __LINE__)

/* --- the commands ---------------------------------------------------------------------------------------- */

/* An option: a flag (takes_value 0), an integer from min to max (1), or bytes, min to max of them (2). */
typedef struct optdef {
    const char *name;
    int takes_value;
    long long min, max;
    const char *conflicts; /* the option it cannot be combined with */
} optdef;

typedef struct cmddef {
    const char *name, *lname; /* as sent, and as errors name it */
    const char *kind;         /* TYPE of its key: rl-tokens, rl-leakyb, rl-window, zset, rl-leases */
    int nparams;
    const char *pname[3];
    long long pmax[3];
    const char *valid; /* valid numbers */
    optdef opts[5];
    int nopts;
    const char *combo_error; /* a combination refused after parsing, or NULL */
    const char *combo_args;
    const char *foreign;     /* options of other commands, not in all_option_names, it does not take */
} cmddef;

static const cmddef cmds[] = {
    {"RL.TOKEN", "rl.token", "rl-tokens", 3, {"capacity", "refill_tokens", "refill_ms"},
     {MAX_COUNT, MAX_COUNT, MAX_COUNT}, "10 1 1000",
     {{"COST", 1, 0, MAX_COUNT, NULL}, {"DRYRUN", 0, 0, 0, NULL}, {"INTERVAL", 0, 0, 0, NULL}}, 3,
     "ERR capacity: capacity / refill_tokens * refill_ms must not exceed 1000000000000 ms (refill from empty to full would "
     "take longer than 31 years)",
     "1001 1 1000000000", NULL},
    {"RL.LEAKY", "rl.leaky", "rl-leakyb", 3, {"capacity", "leak_tokens", "leak_ms"}, {MAX_COUNT, MAX_COUNT, MAX_COUNT},
     "10 1 1000",
     {{"COST", 1, 0, MAX_COUNT, NULL}, {"DRYRUN", 0, 0, 0, NULL}, {"NODELAY", 0, 0, 0, "BLOCK"}, {"BLOCK", 0, 0, 0, "NODELAY"}},
     4,
     "ERR capacity: capacity / leak_tokens * leak_ms must not exceed 1000000000000 ms (draining from full to empty would take "
     "longer than 31 years)",
     "1001 1 1000000000", NULL},
    {"RL.WINDOW", "rl.window", "rl-window", 2, {"limit", "window_ms"}, {MAX_COUNT, MAX_COUNT}, "10 1000",
     {{"COST", 1, 0, MAX_COUNT, NULL},
      {"DRYRUN", 0, 0, 0, NULL},
      {"FIXED", 0, 0, 0, "SLIDING"},
      {"SLIDING", 0, 0, 0, "FIXED"}},
     4, NULL, NULL, NULL},
    {"RL.SLIDINGLOG", "rl.slidinglog", "zset", 2, {"limit", "window_ms"}, {MAX_SLOG, MAX_COUNT}, "10 1000",
     {{"COST", 1, 0, MAX_SLOG, NULL}, {"DRYRUN", 0, 0, 0, NULL}, {"MINGAP", 1, 1, MAX_COUNT, NULL}}, 3, NULL, NULL, NULL},
    /* COST first and DRYRUN second, as above (the tests below find them there). WAIT may hold the reply:
     * the random vectors leave out the ones that parse with it. */
    {"RL.ACQUIRE", "rl.acquire", "rl-leases", 2, {"limit", "lease_ms"}, {MAX_LEASE, MAX_COUNT}, "10 1000",
     {{"COST", 1, 1, MAX_LEASE, NULL},
      {"DRYRUN", 0, 0, 0, NULL},
      {"ID", 2, 1, 64, NULL},
      {"WAIT", 1, 1, MAX_COUNT, NULL}},
     4, NULL, NULL, "REFUND ATMOST SUBWINDOWS WARMUP"},
};
#define NCMDS 5
#define ACQUIRE 4 /* its index in cmds */

/* RL.ACQUIRE_RO: RL.ACQUIRE without DRYRUN and WAIT (test_leases and the random vectors). */
static const cmddef acquire_ro = {"RL.ACQUIRE_RO", "rl.acquire_ro", "rl-leases", 2, {"limit", "lease_ms"},
                                  {MAX_LEASE, MAX_COUNT}, "10 1000",
                                  {{"COST", 1, 1, MAX_LEASE, NULL}, {"ID", 2, 1, 64, NULL}}, 2, NULL, NULL, NULL};

static const char *const all_option_names[] = {"COST", "DRYRUN", "INTERVAL", "NODELAY", "BLOCK",
                                               "FIXED", "SLIDING", "MINGAP", "PXAT", "ID"};

/* Each command's own key (a live limiter with a TTL), and one with a binary name. */
static const char *const own_key[NCMDS] = {"bi:tok", "bi:leak", "bi:win", "bi:log", "bi:lease"};
static const bin bin_key[NCMDS] = {B("bi:\0tok\r\n\xff"), B("bi:\0leak\r\n\xff"), B("bi:\0win\r\n\xff"),
                                   B("bi:\0log\r\n\xff"), B("bi:\0lease\r\n\xff")};
#define MISSING_KEY "bi:none"
#define CHK_BIN_KEY BV("bi:\0chk\r\n\xff") /* a policy's key with a binary name (setup_keys) */

static const bin bad_numbers[] = {
    B(""), B("x"), B("1x"), B("x1"), B(" 1"), B("1 "), B("+1"), B("-1"), B("-0"), B("00"), B("01"), B("1.0"),
    B("1e3"), B("0x10"), B("\xef\xbc\x91"), /* a fullwidth digit one */
    B("1\0"), B("\0"), B("\0" "1"), B("\r\n"), B("1\r\n"), B("\xff"), B("9223372036854775807"),
    B("9223372036854775808"), B("18446744073709551615"), B("18446744073709551616"), B("99999999999999999999"),
    B("-9223372036854775808"), B("-9223372036854775809"), B("123456789012345678901234567890"), B("inf"), B("nan"),
    B("-"), B("1000000000001"), B("1000000000000000")};
#define NBAD ((int)(sizeof bad_numbers / sizeof bad_numbers[0]))

static void range_text(char *out, size_t n, const char *name, long long min, long long max) {
    snprintf(out, n, "ERR %s: must be an integer between %lld and %lld", name, min, max);
}

/* Start a vector: command, key (rotating between the command's own key, its binary-named key and a
 * missing key, so every case also runs against each). */
static void a_begin(argv_t *a, int ci, int rotation) {
    a_reset(a);
    a_str(a, cmds[ci].name);
    switch (rotation % 3) {
    case 0: a_str(a, own_key[ci]); break;
    case 1: a_bin(a, bin_key[ci].p, bin_key[ci].n); break;
    default: a_str(a, MISSING_KEY); break;
    }
}

static void test_arity(int ci) {
    const cmddef *d = &cmds[ci];
    char arity[128];
    snprintf(arity, sizeof arity, "ERR wrong number of arguments for '%s' command", d->lname);
    argv_t a;
    a_reset(&a);
    a_str(&a, d->name);
    expect_error(&a, arity); /* no key */
    for (int n = 0; n < d->nparams; n++) {
        a_begin(&a, ci, n);
        char valid[64];
        snprintf(valid, sizeof valid, "%s", d->valid);
        char *save = NULL, *t = strtok_r(valid, " ", &save);
        for (int k = 0; k < n && t; k++, t = strtok_r(NULL, " ", &save)) a_str(&a, t);
        expect_error(&a, arity); /* too few numbers */
    }
    /* At most MAX_ARGS arguments after the key: one more is an arity error, MAX_ARGS parse (and find DRYRUN
     * repeated). */
    a_begin(&a, ci, 0);
    a_words(&a, d->valid);
    while (a.argc < 2 + MAX_ARGS + 1) a_str(&a, "DRYRUN");
    expect_error(&a, arity);
    a_begin(&a, ci, 1);
    a_words(&a, d->valid);
    while (a.argc < 2 + MAX_ARGS) a_str(&a, "DRYRUN");
    expect_error(&a, "ERR DRYRUN: given more than once");
    a_begin(&a, ci, 2);
    a_words(&a, d->valid);
    while (a.argc < 2 + 60) a_str(&a, "\r\n\xff");
    expect_error(&a, arity);
}

static void test_numbers(int ci) {
    const cmddef *d = &cmds[ci];
    char expected[160];
    int rot = 0;
    for (int p = 0; p < d->nparams; p++) {
        range_text(expected, sizeof expected, d->pname[p], 1, d->pmax[p]);
        for (int b = -2; b < NBAD; b++) {
            argv_t a;
            a_begin(&a, ci, rot++);
            char valid[64];
            snprintf(valid, sizeof valid, "%s", d->valid);
            char *save = NULL;
            int k = 0;
            for (char *t = strtok_r(valid, " ", &save); t; t = strtok_r(NULL, " ", &save), k++) {
                if (k != p) {
                    a_str(&a, t);
                } else if (b == -2) {
                    a_str(&a, "0");
                } else if (b == -1) {
                    char over[32];
                    snprintf(over, sizeof over, "%lld", d->pmax[p] + 1);
                    a_str(&a, over);
                } else {
                    a_bin(&a, bad_numbers[b].p, bad_numbers[b].n);
                }
            }
            expect_error(&a, expected);
        }
    }
    /* The first bad number is the one named, whatever follows. */
    argv_t a;
    a_begin(&a, ci, 0);
    a_words(&a, d->nparams == 3 ? "x -1 0 FOO" : "x -1 FOO");
    range_text(expected, sizeof expected, d->pname[0], 1, d->pmax[0]);
    expect_error(&a, expected);
}

static const optdef *find_opt(const cmddef *d, const char *name) {
    for (int i = 0; i < d->nopts; i++)
        if (strcasecmp(d->opts[i].name, name) == 0) return &d->opts[i];
    return NULL;
}

/* An option whose value is 1 to 64 bytes, any bytes (RL.ACQUIRE's ID): none and too many are refused; a
 * value that looks like an option or a number is the value, not an option. */
static void test_bytes_option(int ci, const optdef *op, int *rot) {
    const cmddef *d = &cmds[ci];
    char expected[200], over[300];
    snprintf(expected, sizeof expected, "ERR %s: must be %lld to %lld bytes", op->name, op->min, op->max);
    memset(over, 'i', sizeof over);
    const bin bad[] = {B(""), {over, (size_t)op->max + 1}, {over, 255}, {over, 256}, {over, sizeof over}};
    argv_t a;
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        a_begin(&a, ci, (*rot)++);
        a_words(&a, d->valid);
        a_str(&a, op->name);
        a_bin(&a, bad[b].p, bad[b].n);
        expect_error(&a, expected);
        /* the same after a valid option, and before one */
        a_begin(&a, ci, (*rot)++);
        a_words(&a, d->valid);
        a_words(&a, "DRYRUN");
        a_str(&a, op->name);
        a_bin(&a, bad[b].p, bad[b].n);
        a_words(&a, "COST 1");
        expect_error(&a, expected);
    }
    /* "ID COST 0": COST is the id, so 0 is read as an option */
    a_begin(&a, ci, (*rot)++);
    a_words(&a, d->valid);
    a_str(&a, op->name);
    a_words(&a, "COST 0");
    snprintf(expected, sizeof expected, "ERR '0': not an option of %s", d->lname);
    expect_error(&a, expected);
    /* binary ids are ids: a bad option after one is still the error */
    a_begin(&a, ci, (*rot)++);
    a_words(&a, d->valid);
    a_str(&a, op->name);
    a_bin(&a, "\0\r\n\xff", 4);
    a_words(&a, "COST 0");
    range_text(expected, sizeof expected, "COST", d->opts[0].min, d->opts[0].max);
    expect_error(&a, expected);
}

static void test_options(int ci) {
    const cmddef *d = &cmds[ci];
    char expected[200];
    int rot = 0;
    argv_t a;
    for (int o = 0; o < d->nopts; o++) {
        const optdef *op = &d->opts[o];
        /* repeated, also in another case */
        a_begin(&a, ci, rot++);
        a_words(&a, d->valid);
        char lower[16];
        for (size_t i = 0; i <= strlen(op->name); i++) lower[i] = (char)tolower((unsigned char)op->name[i]);
        a_str(&a, lower);
        if (op->takes_value) a_str(&a, op->min == 0 ? "0" : "1");
        a_str(&a, op->name);
        if (op->takes_value) a_str(&a, "2");
        snprintf(expected, sizeof expected, "ERR %s: given more than once", op->name);
        expect_error(&a, expected);
        if (!op->takes_value) continue;
        /* no value */
        a_begin(&a, ci, rot++);
        a_words(&a, d->valid);
        a_str(&a, op->name);
        snprintf(expected, sizeof expected, "ERR %s: needs a value", op->name);
        expect_error(&a, expected);
        if (op->takes_value == 2) {
            test_bytes_option(ci, op, &rot);
            continue;
        }
        /* a bad value */
        range_text(expected, sizeof expected, op->name, op->min, op->max);
        for (int b = -2; b < NBAD; b++) {
            char over[32];
            snprintf(over, sizeof over, "%lld", b == -2 ? op->max + 1 : op->min - 1);
            if (b == -1 && op->min == 0) snprintf(over, sizeof over, "-1");
            if (b >= 0 && op->min == 0 && bad_numbers[b].n == 1 && bad_numbers[b].p[0] == '0') continue;
            a_begin(&a, ci, rot++);
            a_words(&a, d->valid);
            a_str(&a, op->name);
            if (b < 0)
                a_str(&a, over);
            else
                a_bin(&a, bad_numbers[b].p, bad_numbers[b].n);
            expect_error(&a, expected);
        }
        /* the value is never taken for an option name */
        a_begin(&a, ci, rot++);
        a_words(&a, d->valid);
        a_str(&a, op->name);
        a_str(&a, "DRYRUN");
        expect_error(&a, expected);
    }
    /* Options of other commands, and made-up ones, are unknown; the name is shown as sent. */
    char foreign[128];
    snprintf(foreign, sizeof foreign, "%s", d->foreign ? d->foreign : "");
    const char *others[32];
    size_t nothers = 0;
    for (size_t i = 0; i < sizeof all_option_names / sizeof all_option_names[0]; i++) others[nothers++] = all_option_names[i];
    char *save = NULL;
    for (char *t = strtok_r(foreign, " ", &save); t && nothers < 32; t = strtok_r(NULL, " ", &save)) others[nothers++] = t;
    for (size_t i = 0; i < nothers; i++) {
        if (find_opt(d, others[i])) continue;
        for (int lc = 0; lc < 2; lc++) {
            char name[16];
            for (size_t k = 0; k <= strlen(others[i]); k++)
                name[k] = lc ? (char)tolower((unsigned char)others[i][k]) : others[i][k];
            a_begin(&a, ci, rot++);
            a_words(&a, d->valid);
            a_str(&a, name);
            snprintf(expected, sizeof expected, "ERR '%s': not an option of %s", name, d->lname);
            expect_error(&a, expected);
        }
    }
    static const struct {
        bin arg;
        const char *shown;
    } junk[] = {
        {B("FOO"), "FOO"},
        {B(""), ""},
        {B("5"), "5"},                       /* an extra number after the parameters */
        {B("-1"), "-1"},
        {B("DRYRUN\0"), "DRYRUN?"},          /* a NUL after a known name */
        {B("\0DRYRUN"), "?DRYRUN"},
        {B("DRY RUN"), "DRY RUN"},
        {B("\r\n\x01'junk"), "????junk"},    /* CR LF, a control byte and a quote are all shown as '?' */
        {B("\xff\xfe"), "??"},
        {B("\r\n*3\r\n$4\r\nPING\r\n"), "??*3??$4??PING??"}, /* an attempt at injecting a command */
        {B("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"), "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}, /* 32: shown whole */
        {B("BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"), "BBBBBBBBBBBBBBBBBBBBBBBBBBBBB..."}, /* 33: cut */
        {B("COSTCOSTCOSTCOSTCOSTCOSTCOSTCOSTCOSTCOSTCOSTCOSTCOSTCOSTCOSTCOSTCOSTCOSTCOSTCOSTCOST"),
         "COSTCOSTCOSTCOSTCOSTCOSTCOSTC..."},
    };
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++) {
        a_begin(&a, ci, rot++);
        a_words(&a, d->valid);
        a_bin(&a, junk[i].arg.p, junk[i].arg.n);
        snprintf(expected, sizeof expected, "ERR '%s': not an option of %s", junk[i].shown, d->lname);
        expect_error(&a, expected);
        /* the same after a valid option: options are read left to right */
        a_begin(&a, ci, rot++);
        a_words(&a, d->valid);
        a_str(&a, "DRYRUN");
        a_bin(&a, junk[i].arg.p, junk[i].arg.n);
        expect_error(&a, expected);
    }
    /* Options before the numbers: the option's name is read as the first number. */
    range_text(expected, sizeof expected, d->pname[0], 1, d->pmax[0]);
    a_begin(&a, ci, rot++);
    a_words(&a, "COST 1");
    a_words(&a, d->valid);
    expect_error(&a, expected);
    a_begin(&a, ci, rot++);
    a_words(&a, "DRYRUN");
    a_words(&a, d->valid);
    expect_error(&a, expected);
    /* The first faulty option is the one reported. */
    a_begin(&a, ci, rot++);
    a_words(&a, d->valid);
    a_words(&a, "COST x FOO");
    range_text(expected, sizeof expected, "COST", d->opts[0].min, d->opts[0].max);
    expect_error(&a, expected);
    a_begin(&a, ci, rot++);
    a_words(&a, d->valid);
    a_words(&a, "FOO COST x");
    snprintf(expected, sizeof expected, "ERR 'FOO': not an option of %s", d->lname);
    expect_error(&a, expected);
    /* FIXED and SLIDING exclude each other, as do NODELAY and BLOCK, in either order and any case. */
    static const char *const pairs[][4][2] = {
        [1] = {{"NODELAY BLOCK", "BLOCK: cannot be combined with NODELAY"},
               {"BLOCK NODELAY", "NODELAY: cannot be combined with BLOCK"},
               {"nodelay DRYRUN Block", "BLOCK: cannot be combined with NODELAY"},
               {"block COST 1 nodelay", "NODELAY: cannot be combined with BLOCK"}},
        [2] = {{"FIXED SLIDING", "SLIDING: cannot be combined with FIXED"},
               {"SLIDING FIXED", "FIXED: cannot be combined with SLIDING"},
               {"fixed DRYRUN Sliding", "SLIDING: cannot be combined with FIXED"},
               {"sliding COST 1 fixed", "FIXED: cannot be combined with SLIDING"}}};
    for (int i = 0; ci < 3 && pairs[ci][0][0] && i < 4; i++) {
        a_begin(&a, ci, rot++);
        a_words(&a, d->valid);
        a_words(&a, pairs[ci][i][0]);
        snprintf(expected, sizeof expected, "ERR %s", pairs[ci][i][1]);
        expect_error(&a, expected);
    }
    /* A combination the per-argument ranges allow but the command refuses; checked before the key's type. */
    if (d->combo_error) {
        const char *combos[] = {d->combo_args, "1000000000000 1 1000000000000", "2 1 1000000000000"};
        for (int i = 0; i < 3; i++) {
            a_begin(&a, ci, rot++);
            a_words(&a, combos[i]);
            expect_error(&a, d->combo_error);
        }
        a_reset(&a);
        a_str(&a, d->name);
        a_str(&a, "bi:str");
        a_words(&a, d->combo_args);
        expect_error(&a, d->combo_error);
    }
}

/* --- wrong key types --------------------------------------------------------------------------------------- */

static const char *const typed_keys[] = {"bi:str", "bi:list", "bi:hash", "bi:set", "bi:zset", "bi:tok", "bi:leak",
                                         "bi:win", "bi:log", "bi:smooth", "bi:lease", "bi:quota", "bi:chk"};
static const char *const typed_kinds[] = {"string", "list", "hash", "set", "zset", "rl-tokens", "rl-leakyb",
                                          "rl-window", "zset", "rl-smooth", "rl-leases", "rl-quotas", "rl-checks"};
#define NTYPED ((int)(sizeof typed_keys / sizeof typed_keys[0]))

static void test_wrong_types(void) {
    static const char *const variants[NCMDS][5] = {
        {"", "DRYRUN", "COST 0", "INTERVAL", "COST 1000000000000"},
        {"", "DRYRUN", "COST 0", "BLOCK", "NODELAY COST 5"},
        {"", "DRYRUN", "COST 0", "FIXED", "SLIDING COST 3"},
        {"", "DRYRUN", "COST 0", "MINGAP 5", "COST 100000"},
        {"", "DRYRUN", "COST 10000", "ID held", "COST 2 ID x WAIT 5"}, /* WRONGTYPE at once, not after the wait */
    };
    for (int ci = 0; ci < NCMDS; ci++)
        for (size_t k = 0; k < sizeof typed_keys / sizeof typed_keys[0]; k++) {
            if (strcmp(typed_kinds[k], cmds[ci].kind) == 0) continue;
            for (int v = 0; v < 5; v++) {
                argv_t a;
                a_reset(&a);
                a_str(&a, cmds[ci].name);
                a_str(&a, typed_keys[k]);
                a_words(&a, cmds[ci].valid);
                a_words(&a, variants[ci][v]);
                expect_error(&a, WRONGTYPE);
            }
        }
    /* The binary-named keys too: a token key is the wrong type for the others. */
    for (int ci = 1; ci < NCMDS; ci++) {
        argv_t a;
        a_reset(&a);
        a_str(&a, cmds[ci].name);
        a_bin(&a, bin_key[0].p, bin_key[0].n);
        a_words(&a, cmds[ci].valid);
        expect_error(&a, WRONGTYPE);
    }
}

/* --- valid boundaries -------------------------------------------------------------------------------------- */

static void test_boundaries(void) {
    static const struct {
        const char *line;
        long long allowed, limit, retry; /* retry -2: not checked */
    } ok[] = {
        {"RL.TOKEN bd:1 1000000000000 1000000000000 1000", 1, MAX_COUNT, -1},
        {"RL.TOKEN bd:2 1 1 1000000000000", 1, 1, -1},            /* refill takes exactly 10^12 ms */
        {"RL.TOKEN bd:3 1000 1 1000000000", 1, 1000, -1},         /* exactly 10^12 ms */
        {"RL.TOKEN bd:4 10 1000000000000 1", 1, 10, -1},
        {"RL.TOKEN bd:5 10 1 1000 COST 1000000000000", 0, 10, -1}, /* above capacity: denied, never */
        {"RL.TOKEN bd:5 10 1 1000 COST 0", 1, 10, -1},
        {"RL.TOKEN bd:6 1000000000000 1 1 COST 1000000000000 INTERVAL", 1, MAX_COUNT, -1},
        {"rl.token bd:7 5 1 1000 cost 2 dryrun interval", 1, 5, -1}, /* names in any case */
        {"RL.LEAKY bd:8 1000000000000 1000000000000 1000 COST 1000000000000 NODELAY", 1, MAX_COUNT, -1},
        {"RL.LEAKY bd:9 1 1 1000000000000 BLOCK", 1, 1, -1},      /* admitted at once: wait 0, no block */
        {"RL.LEAKY bd:9 1 1 1000000000000 COST 2", 0, 1, -1},
        {"RL.WINDOW bd:10 1000000000000 1000000000000 COST 1000000000000 FIXED", 1, MAX_COUNT, -1},
        {"RL.WINDOW bd:11 1 1 COST 1000000000000", 0, 1, -1},
        {"RL.WINDOW bd:11 1 1 SLIDING DRYRUN COST 0", 1, 1, -1},
        {"RL.SLIDINGLOG bd:12 100000 1000000000000 MINGAP 1000000000000", 1, MAX_SLOG, -1},
        {"RL.SLIDINGLOG bd:13 10 1000 COST 100000", 0, 10, -1},  /* above the limit: blocked, never */
        {"RL.SLIDINGLOG bd:14 1 1 COST 0 MINGAP 1", 1, 1, -1},
        {"RL.ACQUIRE bd:15 10000 1000000000000 COST 10000", 1, MAX_LEASE, -1}, /* the whole limit, 10^12 ms */
        {"RL.ACQUIRE bd:15 10000 1 COST 1", 0, MAX_LEASE, MAX_COUNT},           /* full until that lease ends */
        {"RL.ACQUIRE bd:16 1 1 COST 10000", 0, 1, -1},                          /* above the limit: never */
        {"rl.acquire bd:16 1 1 cost 1 id x dryrun", 1, 1, -1},
        {"RL.ACQUIRE_RO bd:16 1 1 COST 1 ID x", 1, 1, -1},
        {"RL.ACQUIRE bd:16 1 1 WAIT 1000000000000", 1, 1, -1},                  /* admitted at once: no wait */
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        argv_t a;
        a_reset(&a);
        a_words(&a, ok[i].line);
        rl_result f;
        if (expect_six(&a, &f)) {
            int good = f.allowed == ok[i].allowed && f.limit == ok[i].limit && f.retry_after_ms == ok[i].retry;
            if (!CHECK(good)) fprintf(stderr, "     %s: %s\n", ok[i].line, fields(&f));
        }
    }
    /* COST 100000 on a log of limit 10 is never admitted, and logs nothing (it used to write limit + 1
     * entries, and lock the key for a window). */
    CHECK_EQ(cmd_int(c, "EXISTS bd:13"), 0);
    /* A lease id is any 1 to 64 bytes: the longest, and one of NUL, CR LF and 0xff, name their leases, and
     * RL.RELEASE finds each by exactly those bytes. */
    static const bin ids[] = {B("\0\r\n\xff"), B("iiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiii")};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        argv_t acq;
        a_reset(&acq);
        a_words(&acq, "RL.ACQUIRE bd:17 2 60000 ID");
        a_bin(&acq, ids[i].p, ids[i].n);
        rl_result g;
        if (expect_six(&acq, &g)) CHECK(g.allowed == 1 && g.remaining == 1 - (long long)i);
    }
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        redisReply *near = cmd(c, "RL.RELEASE bd:17 %b", ids[i].p, ids[i].n - 1); /* one byte short: another id */
        CHECK(near->type == REDIS_REPLY_INTEGER && near->integer == 0);
        freeReplyObject(near);
        redisReply *rel = cmd(c, "RL.RELEASE bd:17 %b", ids[i].p, ids[i].n);
        CHECK(rel->type == REDIS_REPLY_INTEGER && rel->integer == 1);
        freeReplyObject(rel);
    }
    CHECK_EQ(cmd_int(c, "EXISTS bd:17"), 0); /* the last release deletes the key */
    /* A binary key works like any other, under exactly its name. */
    argv_t a;
    a_reset(&a);
    a_str(&a, "RL.TOKEN");
    a_bin(&a, "bd:\0\r\n\xff", 7);
    a_words(&a, "5 1 1000 COST 2");
    rl_result f;
    if (expect_six(&a, &f)) CHECK(f.allowed == 1 && f.remaining == 3);
    redisReply *r = redisCommand(c, "EXISTS %b", "bd:\0\r\n\xff", (size_t)7);
    CHECK(r && r->type == REDIS_REPLY_INTEGER && r->integer == 1);
    if (r) freeReplyObject(r);
    CHECK_EQ(cmd_int(c, "EXISTS bd:"), 0);
}

/* --- RL.SETSTATE ------------------------------------------------------------------------------------------- */

static void setstate_case(const char *key, const bin *args, int nargs, const char *expected) {
    argv_t a;
    a_reset(&a);
    a_str(&a, "RL.SETSTATE");
    if (key) a_str(&a, key);
    for (int i = 0; i < nargs; i++) a_bin(&a, args[i].p, args[i].n);
    expect_error(&a, expected);
}

/* --- lease blobs: a concurrency limit's replicated state ------------------------------------------------------
 * The layout module/lease_type.c writes: the tag 'C', the lease count (4 bytes),
 * each lease (its end and acquisition in µs, 8 bytes each; its units, 4; its id's length, 1; the id), then
 * the key's absolute expiry in ms (8; 0 for none); every number little-endian. */

typedef struct lblob {
    unsigned char b[4096];
    size_t n;
} lblob;

static void lb_le(lblob *x, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; i++) x->b[x->n++] = (unsigned char)(v >> (8 * i));
}

static void lb_head(lblob *x, uint64_t count) {
    x->n = 0;
    x->b[x->n++] = 'C';
    lb_le(x, count, 4);
}

/* A lease; its id is id_len bytes of id, or of 'i' when id is NULL. */
static void lb_lease(lblob *x, uint64_t end_us, uint64_t acquired_us, uint64_t units, int id_len, const char *id) {
    lb_le(x, end_us, 8);
    lb_le(x, acquired_us, 8);
    lb_le(x, units, 4);
    x->b[x->n++] = (unsigned char)id_len;
    for (int i = 0; i < id_len; i++) x->b[x->n++] = id ? (unsigned char)id[i] : 'i';
}

static uint64_t lb_get(const unsigned char *p, int bytes) {
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

/* 1 if b is a lease state the module could have written: read from the layout, as docs/commands.md and
 * concurrency.h state the ranges (1 to 10,000 leases: a key without leases is no key; sorted by end; each
 * ending after the epoch and at
 * most 10^12 ms past the clock's last instant, acquired from the epoch up to its end, of 1 to 10,000
 * units, with an id of 1 to 64 bytes), nothing before the expiry left over. */
static int lease_blob_valid(const unsigned char *b, size_t len) {
    if (len < 1 + 4 + 8 || b[0] != 'C') return 0;
    uint64_t count = lb_get(b + 1, 4);
    if (count < 1 || count > MAX_LEASE) return 0;
    size_t at = 5, end = len - 8;
    int64_t previous_end = 0;
    for (uint64_t i = 0; i < count; i++) {
        if (end - at < 21 || end - at - 21 < b[at + 20]) return 0; /* truncated */
        int64_t end_us = (int64_t)lb_get(b + at, 8), acquired_us = (int64_t)lb_get(b + at + 8, 8);
        uint64_t units = lb_get(b + at + 16, 4), id_len = b[at + 20];
        if (end_us < 1 || end_us > MAX_LEASE_END_US || acquired_us < 0 || acquired_us > end_us) return 0;
        if (units < 1 || units > MAX_LEASE || id_len < 1 || id_len > 64 || end_us < previous_end) return 0;
        previous_end = end_us;
        at += 21 + id_len;
    }
    return at == end;
}

#define LEASE_INVALID "ERR state: not a valid state of this kind"

/* A crafted lease blob must be refused, on its own key, on a missing key, and on a key of another type (the
 * state is checked before the key). */
static void lease_blob_refused(const lblob *x, const char *what) {
    if (!CHECK(!lease_blob_valid(x->b, x->n))) fprintf(stderr, "     the reference reads \"%s\" as valid\n", what);
    static const char *const keys[] = {"bi:lease", MISSING_KEY, "bi:str", "bi:tok"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        bin blob = {(const char *)x->b, x->n};
        setstate_case(keys[k], &blob, 1, LEASE_INVALID);
    }
}

static void test_lease_blobs(void) {
    const uint64_t now = (uint64_t)T0 * 1000, exp = (uint64_t)T0 + 3600000;
    lblob x;
    /* shorter than the fixed parts */
    static const size_t short_lengths[] = {1, 2, 5, 9, 12};
    for (size_t i = 0; i < sizeof short_lengths / sizeof short_lengths[0]; i++) {
        lb_head(&x, 0);
        lb_le(&x, exp, 8);
        x.n = short_lengths[i];
        lease_blob_refused(&x, "short");
    }
    /* no lease at all: the primary sends DEL for that, never a state */
    static const uint64_t no_lease_expiries[] = {0, 4102444800000ULL};
    for (size_t i = 0; i < 2; i++) {
        lb_head(&x, 0);
        lb_le(&x, no_lease_expiries[i], 8);
        lease_blob_refused(&x, "no lease");
    }
    /* counts that lie: more leases than there are, fewer, more than any key holds */
    static const struct {
        uint64_t said;
        int held;
    } counts[] = {{1, 0}, {2, 3}, {3, 2}, {0, 1}, {10001, 1}, {0xffffffffULL, 1}};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        lb_head(&x, counts[i].said);
        for (int k = 0; k < counts[i].held; k++) lb_lease(&x, now + 1000 * (uint64_t)(k + 1), now, 1, 2, "ab");
        lb_le(&x, exp, 8);
        lease_blob_refused(&x, "count");
    }
    /* truncated: cut anywhere inside a lease (the expiry's 8 bytes then read from the lease) */
    for (size_t cut = 1; cut <= 21 + 3; cut++) {
        lb_head(&x, 1);
        lb_lease(&x, now + 1000, now, 2, 3, "job");
        x.n -= cut;
        lb_le(&x, exp, 8);
        lease_blob_refused(&x, "truncated");
    }
    /* overlong: bytes after the last lease, before the expiry (or after it) */
    for (int extra = 1; extra <= 9; extra += 4) {
        lb_head(&x, 1);
        lb_lease(&x, now + 1000, now, 2, 3, "job");
        for (int i = 0; i < extra; i++) x.b[x.n++] = 0;
        lb_le(&x, exp, 8);
        lease_blob_refused(&x, "overlong");
        lb_head(&x, 0);
        for (int i = 0; i < extra; i++) x.b[x.n++] = 'x';
        lb_le(&x, exp, 8);
        lease_blob_refused(&x, "overlong, no lease");
    }
    /* an id's length that runs past the end */
    lb_head(&x, 1);
    lb_lease(&x, now + 1000, now, 1, 5, "abcde");
    x.b[x.n - 6] = 200;
    lb_le(&x, exp, 8);
    lease_blob_refused(&x, "id past the end");
    /* fields out of range, one lease each */
    static const struct {
        uint64_t end, acquired, units;
        int id_len;
    } bad[] = {
        {0, 0, 1, 3},                                   /* ends at the epoch */
        {(uint64_t)-1, 0, 1, 3},                        /* a negative end */
        {(uint64_t)MAX_LEASE_END_US + 1, 0, 1, 3},      /* past the latest end */
        {(uint64_t)INT64_MAX, 0, 1, 3},
        {1000, 1001, 1, 3},                             /* acquired after its end */
        {1000, (uint64_t)-1, 1, 3},                     /* acquired before the epoch */
        {1000, 0, 0, 3},                                /* no units */
        {1000, 0, 10001, 3},                            /* more than any limit */
        {1000, 0, 0xffffffffULL, 3},                    /* -1 as 4 bytes */
        {1000, 0, 0x80000000ULL, 3},
        {1000, 0, 1, 0},                                /* an empty id */
        {1000, 0, 1, 65},                               /* ids are at most 64 bytes */
        {1000, 0, 1, 255},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        lb_head(&x, 1);
        lb_lease(&x, bad[i].end, bad[i].acquired, bad[i].units, bad[i].id_len, NULL);
        lb_le(&x, exp, 8);
        lease_blob_refused(&x, "out of range");
        /* the same as the second of two leases */
        lb_head(&x, 2);
        lb_lease(&x, 1, 0, 1, 1, "a");
        lb_lease(&x, bad[i].end, bad[i].acquired, bad[i].units, bad[i].id_len, NULL);
        lb_le(&x, exp, 8);
        lease_blob_refused(&x, "out of range, second");
    }
    /* leases out of order: sorted by end, soonest first */
    lb_head(&x, 3);
    lb_lease(&x, now + 1000, now, 1, 1, "a");
    lb_lease(&x, now + 3000, now, 1, 1, "b");
    lb_lease(&x, now + 2000, now, 1, 1, "c");
    lb_le(&x, exp, 8);
    lease_blob_refused(&x, "unsorted");
    /* a cell blob's length with the lease tag: read as a lease blob, and refused */
    lb_head(&x, 1);
    lb_le(&x, 0, 8);
    lb_le(&x, 0, 4);
    lb_le(&x, exp, 8);
    CHECK_EQ(x.n, 25);
    lease_blob_refused(&x, "25 bytes");
    /* The readable form has no lease kind. */
    static const bin kinds[] = {B("CONCURRENCY"), B("C"), B("LEASES"), B("rl-leases")};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        bin args[] = {kinds[i], B("0"), B("0")};
        setstate_case("bi:lease", args, 3, "ERR kind: must be one of TOKEN, LEAKY, WINDOW, SMOOTH, QUOTA");
    }
    /* A valid lease state on another type's key, and another kind's state on a lease key: WRONGTYPE. */
    lb_head(&x, 2);
    lb_lease(&x, now + 1000, now, 3, 1, "a");
    lb_lease(&x, now + 1000, now - 5, 2, 64, NULL);
    lb_le(&x, exp, 8);
    CHECK(lease_blob_valid(x.b, x.n));
    for (int k = 0; k < NTYPED; k++) {
        if (strcmp(typed_kinds[k], "rl-leases") == 0) continue;
        bin blob = {(const char *)x.b, x.n};
        setstate_case(typed_keys[k], &blob, 1, WRONGTYPE);
    }
    bin token_state = {"T\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\xff\xff\xff\xff\xff\x0f\0\0", 25};
    setstate_case("bi:lease", &token_state, 1, WRONGTYPE);
    bin token_words[] = {B("TOKEN"), B("0"), B("0"), B("PXAT"), B("99999999999999")};
    setstate_case("bi:lease", token_words, 5, WRONGTYPE);
    argv_t a;
    a_reset(&a);
    a_str(&a, "RL.SETSTATE");
    a_bin(&a, bin_key[0].p, bin_key[0].n);
    a_bin(&a, (const char *)x.b, x.n);
    expect_error(&a, WRONGTYPE);

    /* Valid ones are taken (on keys nothing watches): the largest values, duplicate ids, no expiry. */
    lb_head(&x, 3);
    lb_lease(&x, 1, 0, 1, 1, "d");
    lb_lease(&x, (uint64_t)MAX_LEASE_END_US, (uint64_t)MAX_LEASE_END_US, MAX_LEASE, 64, NULL);
    lb_lease(&x, (uint64_t)MAX_LEASE_END_US, 0, 1, 1, "d");
    lb_le(&x, 0, 8);
    CHECK(lease_blob_valid(x.b, x.n));
    redisReply *r = cmd(c, "RL.SETSTATE bl:ok %b", (const char *)x.b, x.n);
    CHECK(reply_is_status(r, "OK"));
    freeReplyObject(r);
    CHECK_EQ(cmd_int(c, "PTTL bl:ok"), -1);
    r = cmd(c, "RL.LEASES bl:ok"); /* the one that ended in 1970 is not listed */
    CHECK(r->type == REDIS_REPLY_ARRAY && r->elements == 2);
    freeReplyObject(r);
    CHECK_EQ(cmd_int(c, "RL.RELEASE bl:ok d"), 1);
    CHECK_EQ(cmd_int(c, "DEL bl:ok"), 1);
    cases_tried += 2;
}

static void test_setstate(void) {
    const char *arity = "ERR wrong number of arguments for 'rl.setstate' command";
    setstate_case(NULL, NULL, 0, arity);
    setstate_case("bi:tok", NULL, 0, arity);
    bin a1[] = {B("TOKEN"), B("0"), B("0"), B("PXAT"), B("1"), B("X"), B("Y")};
    for (int n = 2; n <= 7; n++)
        if (n != 3 && n != 5 && n != 4) setstate_case("bi:tok", a1, n, arity);
    setstate_case("bi:tok", a1, 4, "ERR PXAT: needs a value");
    bin a2[] = {B("TOKEN"), B("0"), B("0"), B("PX")};
    setstate_case("bi:tok", a2, 4, "ERR PXAT: expected PXAT unix_ms after w1");

    /* The compact form the primary replicates: one 25-byte state (kind letter, w0, w1, expiry; LE). */
    const char *blob_len = "ERR state: must be 9 + 8n bytes, n from 1 to 68 (or use RL.SETSTATE key kind w0 [w1 ...] [PXAT unix_ms])";
    setstate_case("bi:tok", a1, 1, blob_len);
    static const bin bad_blobs[] = {B(""), B("T"), B("T0000000000000000000000000000"), B("\r\n")};
    for (size_t i = 0; i < sizeof bad_blobs / sizeof bad_blobs[0]; i++) setstate_case("bi:tok", &bad_blobs[i], 1, blob_len);
    bin unknown_kind = {"X\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\1\0\0\0\0\0\0\0", 25};
    setstate_case("bi:tok", &unknown_kind, 1, "ERR state: unknown kind");
    bin no_expiry = {"T\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 25};
    setstate_case("bi:tok", &no_expiry, 1, "ERR state: no valid expiry");
    bin bad_cell = {"W\0\0\0\0\0\0\0\0\xff\xff\xff\xff\xff\xff\xff\xff\1\0\0\0\0\0\0\0", 25};
    setstate_case("bi:win", &bad_cell, 1, "ERR state: not a valid state of this kind");

    static const bin bad_kinds[] = {B("FOO"), B(""), B("TOKENS"), B("TOK"), B("SLIDINGLOG"), B("ZSET"), B("CONCURRENCY"),
                                    B("\0TOKEN"), B("TOKEN\0"), B("\xff"), B("TOKEN ")};
    for (size_t i = 0; i < sizeof bad_kinds / sizeof bad_kinds[0]; i++) {
        bin args[] = {bad_kinds[i], B("x"), B("y")}; /* the kind is checked first */
        setstate_case("bi:tok", args, 3, "ERR kind: must be one of TOKEN, LEAKY, WINDOW, SMOOTH, QUOTA");
    }
    static const bin bad_words[] = {B("x"), B(""), B("1.5"), B("+1"), B("-0"), B("01"), B("9223372036854775808"),
                                    B("-9223372036854775809"), B("\0"), B("1\0"), B("\r\n"), B("0x1")};
    for (size_t i = 0; i < sizeof bad_words / sizeof bad_words[0]; i++) {
        bin w0[] = {B("token"), bad_words[i], B("y")};
        setstate_case("bi:tok", w0, 3, "ERR w0: must be an integer");
        bin w1[] = {B("LEAKY"), B("0"), bad_words[i]};
        setstate_case("bi:leak", w1, 3, "ERR w1: must be an integer");
        bin w1p[] = {B("WINDOW"), B("0"), bad_words[i], B("PXAT"), B("1")};
        setstate_case("bi:win", w1p, 5, "ERR w1: must be an integer");
        bin px[] = {B("TOKEN"), B("0"), B("0"), B("PXAT"), bad_words[i]};
        setstate_case("bi:tok", px, 5, "ERR PXAT: must be a positive integer");
    }
    static const bin bad_px[] = {B("0"), B("-1"), B("-9223372036854775808")};
    for (size_t i = 0; i < sizeof bad_px / sizeof bad_px[0]; i++) {
        bin px[] = {B("TOKEN"), B("0"), B("0"), B("PXAT"), bad_px[i]};
        setstate_case("bi:tok", px, 5, "ERR PXAT: must be a positive integer");
    }
    static const bin bad_opts[] = {B("PX"), B("EXAT"), B("PXATT"), B("\0PXAT"), B(""), B("KEEPTTL")};
    for (size_t i = 0; i < sizeof bad_opts / sizeof bad_opts[0]; i++) {
        bin px[] = {B("TOKEN"), B("0"), B("0"), bad_opts[i], B("5")};
        setstate_case("bi:tok", px, 5, "ERR PXAT: expected PXAT unix_ms after w1");
    }
    /* Words no algorithm could have written. */
    static const struct {
        const char *key;
        bin kind, w0, w1;
    } invalid[] = {
        {"bi:tok", B("TOKEN"), B("9223372036854775807"), B("0")},          /* an empty instant past any clock */
        {"bi:tok", B("TOKEN"), B("-9223372036854775808"), B("0")},
        {"bi:tok", B("TOKEN"), B("0"), B("4611687018427387905")},          /* INTERVAL with 10^12 + 1 tokens */
        {"bi:tok", B("TOKEN"), B("0"), B("-1")},
        {"bi:leak", B("LEAKY"), B("0"), B("1000000000000")},               /* remainder not below any rate */
        {"bi:leak", B("LEAKY"), B("-1"), B("0")},
        {"bi:leak", B("LEAKY"), B("9223372036854775807"), B("0")},
        {"bi:win", B("WINDOW"), B("-1"), B("0")},                           /* the unused top bit */
        {"bi:win", B("WINDOW"), B("0"), B("-1")},
        {"bi:win", B("WINDOW"), B("0"), B("1000000000001")},               /* a count above 10^12 */
        {"bi:str", B("WINDOW"), B("0"), B("1000000000001")},               /* checked before the type */
    };
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
        bin args[] = {invalid[i].kind, invalid[i].w0, invalid[i].w1};
        setstate_case(invalid[i].key, args, 3, "ERR state: not a valid state of this kind");
        bin argsp[] = {invalid[i].kind, invalid[i].w0, invalid[i].w1, B("PXAT"), B("99999999999999")};
        setstate_case(invalid[i].key, argsp, 5, "ERR state: not a valid state of this kind");
    }
    /* A valid state on a key of another type. */
    static const struct {
        const char *key, *kind;
    } wrong[] = {{"bi:str", "TOKEN"}, {"bi:list", "LEAKY"}, {"bi:hash", "WINDOW"}, {"bi:set", "TOKEN"},
                 {"bi:zset", "TOKEN"}, {"bi:log", "WINDOW"}, {"bi:leak", "TOKEN"}, {"bi:win", "LEAKY"},
                 {"bi:tok", "WINDOW"}, {"bi:lease", "LEAKY"}};
    for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++) {
        bin args[] = {{wrong[i].kind, strlen(wrong[i].kind)}, B("0"), B("0"), B("PXAT"), B("99999999999999")};
        setstate_case(wrong[i].key, args, 5, WRONGTYPE);
    }
}

/* --- RL.CLOCK ---------------------------------------------------------------------------------------------- */

static void clock_case(const bin *args, int nargs, const char *expected) {
    argv_t a;
    a_reset(&a);
    a_str(&a, "RL.CLOCK");
    for (int i = 0; i < nargs; i++) a_bin(&a, args[i].p, args[i].n);
    expect_error(&a, expected);
}

static void test_clock(void) {
    const char *syntax = "ERR subcommand: must be SET <unix_ms>, ADVANCE <ms>, GET or REAL";
    clock_case(NULL, 0, "ERR wrong number of arguments for 'rl.clock' command");
    static const bin subs[][3] = {{B("FOO")},        {B("GET"), B("1")},      {B("REAL"), B("1")}, {B("SET")},
                                  {B("SET"), B("1"), B("2")}, {B("ADVANCE")}, {B("ADVANCE"), B("1"), B("2")},
                                  {B("")},           {B("GETX")},             {B("\0GET")},        {B("GET\0")},
                                  {B("SE"), B("1")}, {B("\xff"), B("1")}};
    static const int nsub[] = {1, 2, 2, 1, 3, 1, 3, 1, 1, 1, 1, 2, 2};
    for (size_t i = 0; i < sizeof nsub / sizeof nsub[0]; i++) clock_case(subs[i], nsub[i], syntax);
    static const bin bad_ms[] = {B("-1"), B("x"), B(""), B("70368744177664"), B("9223372036854775808"),
                                 B("01"), B("1.5"), B("\0"), B("+5"), B("-0")};
    for (size_t i = 0; i < sizeof bad_ms / sizeof bad_ms[0]; i++) {
        bin set[] = {B("set"), bad_ms[i]};
        clock_case(set, 2, "ERR unix_ms: must be an integer between 0 and 70368744177663");
        bin adv[] = {B("ADVANCE"), bad_ms[i]};
        clock_case(adv, 2, "ERR ms: must be an integer between 0 and 70368744177663 and keep the clock below it");
    }
    /* A step that would carry the clock past its end. */
    bin far[] = {B("ADVANCE"), B("70368744177663")};
    clock_case(far, 2, "ERR ms: must be an integer between 0 and 70368744177663 and keep the clock below it");
    char rest[32];
    snprintf(rest, sizeof rest, "%lld", MAX_TIME_MS - T0);
    bin edge[] = {B("ADVANCE"), {rest, strlen(rest)}};
    clock_case(edge, 2, "ERR ms: must be an integer between 0 and 70368744177663 and keep the clock below it");
    /* ADVANCE on the real clock (not comparable by snapshot: the real clock moves). */
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK REAL"));
    CHECK(cmd_status_is(c, "ERR ADVANCE: needs a frozen clock (RL.CLOCK SET)", "RL.CLOCK ADVANCE 1"));
    CHECK(cmd_status_is(c, "ERR ADVANCE: needs a frozen clock (RL.CLOCK SET)", "RL.CLOCK ADVANCE x"));
    CHECK(cmd_status_is(c, "PONG", "PING"));
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", T0));
    CHECK_EQ(cmd_int(c, "RL.CLOCK GET"), T0);
    cases_tried += 2;
}

/* --- sorted sets the module did not write ------------------------------------------------------------------ */

/* --- RL.SMOOTH: decimal numbers, its own options and combinations ---------------------------------------- */

static void test_smooth(void) {
    static const char *const rate_err = "ERR permits_per_second: must be a decimal number between 0.000001 and 1000000000";
    static const char *const cold_err = "ERR COLDFACTOR: must be a decimal number between 1 and 1000";
    static const struct {
        const char *args, *error;
    } cases[] = {
        {"", "ERR wrong number of arguments for 'rl.smooth' command"},
        {"0", NULL}, {"-1", NULL}, {"0.0000001", NULL}, {"1000000000.000001", NULL}, {"1000000001", NULL},
        {".5", NULL}, {"5.", NULL}, {"05", NULL}, {"00.5", NULL}, {"1e2", NULL}, {"inf", NULL}, {"nan", NULL},
        {"0x10", NULL}, {"+5", NULL}, {"5,5", NULL}, {"1.2.3", NULL}, {"1234567890123", NULL},
        {"5 WARMUP", "ERR WARMUP: needs a value"},
        {"5 WARMUP 0", "ERR WARMUP: must be an integer between 1 and 1000000000000"},
        {"5 WARMUP 1.5", "ERR WARMUP: must be an integer between 1 and 1000000000000"},
        {"5 WARMUP 1000 COLDFACTOR 0.5", "C"}, {"5 WARMUP 1000 COLDFACTOR 1000.000001", "C"},
        {"5 WARMUP 1000 COLDFACTOR x", "C"}, {"5 WARMUP 1000 COLDFACTOR -3", "C"},
        {"5 WARMUP 1000 COLDFACTOR", "ERR COLDFACTOR: needs a value"},
        {"5 COLDFACTOR 2", "ERR COLDFACTOR: applies to the warm-up form only (needs WARMUP)"},
        {"5 WARMUP 10 MAXBURST 3", "ERR MAXBURST: cannot be combined with WARMUP"},
        {"5 MAXBURST 3 WARMUP 10", "ERR WARMUP: cannot be combined with MAXBURST"},
        {"5 MAXBURST -1", "ERR MAXBURST: must be an integer between 0 and 1000000000000"},
        {"5 MAXWAIT -1", "ERR MAXWAIT: must be an integer between 0 and 1000000000000"},
        {"5 COST 0", "ERR COST: must be an integer between 1 and 1000000000000"},
        {"5 COST 1000000000001", "ERR COST: must be an integer between 1 and 1000000000000"},
        {"0.001 COST 1000000000", "ERR COST: COST / permits_per_second must not exceed 1000000000000 ms"},
        {"0.001 WARMUP 10 COLDFACTOR 1000 COST 1000000",
         "ERR COST: COST * COLDFACTOR / permits_per_second must not exceed 1000000000000 ms"},
        {"5 FOO", "ERR 'FOO': not an option of rl.smooth"},
        {"5 REFUND 1", "ERR 'REFUND': not an option of rl.smooth"},
        {"5 ATMOST", "ERR 'ATMOST': not an option of rl.smooth"},
        {"5 NODELAY", "ERR 'NODELAY': not an option of rl.smooth"},
        {"5 COST 1 COST 2", "ERR COST: given more than once"},
        {"5 DRYRUN DRYRUN", "ERR DRYRUN: given more than once"},
    };
    static const char *const keys[] = {"bi:smooth", MISSING_KEY};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int k = 0; k < 2; k++) {
            argv_t a;
            a_reset(&a);
            a_str(&a, "RL.SMOOTH");
            a_str(&a, keys[k]);
            a_words(&a, cases[i].args);
            const char *want = !cases[i].error ? rate_err : strcmp(cases[i].error, "C") == 0 ? cold_err : cases[i].error;
            expect_error(&a, want);
        }
    /* Binary junk in the number. */
    static const bin junk[] = {B("5\0"), B("\0" "5"), B("5\r\n"), B("\xff"), B("0.5\0" "1")};
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++) {
        argv_t a;
        a_reset(&a);
        a_str(&a, "RL.SMOOTH");
        a_str(&a, "bi:smooth");
        a_bin(&a, junk[i].p, junk[i].n);
        expect_error(&a, rate_err);
    }
    /* Every other kind of key is the wrong type, whatever the options. */
    static const char *const variants[] = {"5", "5 DRYRUN", "2.5 WARMUP 4000 COST 3", "0.5 MAXBURST 0 MAXWAIT 10 BLOCK"};
    for (size_t k = 0; k < sizeof typed_keys / sizeof typed_keys[0]; k++) {
        if (strcmp(typed_kinds[k], "rl-smooth") == 0) continue;
        for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
            argv_t a;
            a_reset(&a);
            a_str(&a, "RL.SMOOTH");
            a_str(&a, typed_keys[k]);
            a_words(&a, variants[v]);
            expect_error(&a, WRONGTYPE);
        }
    }
    /* States RL.SETSTATE must refuse: an unknown mode, rates, periods and cold factors out of range,
     * negative or far too many stored permits, a ticket beyond any clock. */
    static const char *const bad_states[] = {
        "0 1000000 1000 0 0 0",        "3 1000000 1000 0 0 0",           "1 0 1000 0 0 0",
        "1 1000000000000001 1000 0 0 0", "1 1000000 -1 0 0 0",           "1 1000000 1000 3000000 0 0",
        "2 1000000 0 3000000 0 0",     "2 1000000 1000 999999 0 0",      "2 1000000 1000 1000000001 0 0",
        "1 1000000 1000 0 -4616189618054758400 0", /* -1.0 stored */
        "1 1000000 1000 0 4636737291354636288 0",  /* 100.0 stored, max 1 */
        "1 1000000 1000 0 0 9223372036854775807"};
    for (size_t i = 0; i < sizeof bad_states / sizeof bad_states[0]; i++) {
        argv_t a;
        a_reset(&a);
        a_str(&a, "RL.SETSTATE");
        a_str(&a, "bi:smooth");
        a_str(&a, "SMOOTH");
        a_words(&a, bad_states[i]);
        expect_error(&a, "ERR state: not a valid state of this kind");
    }
}

/* --- RL.QUOTA, whose period is a word: its own table ------------------------------------------------------ */

static void test_quota(void) {
    static const char *const limit_err = "ERR limit: must be an integer between 1 and 1000000000000";
    static const char *const period_err = "ERR period: must be DAY, WEEK or MONTH";
    static const char *const offset_err = "ERR OFFSET: must be an integer between -840 and 840";
    static const struct {
        const char *args, *error;
    } cases[] = {
        {"", "ERR wrong number of arguments for 'rl.quota' command"},
        {"10", "ERR wrong number of arguments for 'rl.quota' command"},
        {"0 DAY", "L"}, {"-1 DAY", "L"}, {"1000000000001 DAY", "L"}, {"x DAY", "L"}, {"01 DAY", "L"},
        {"DAY 10", "L"}, {"10 YEAR", "P"}, {"10 DAYS", "P"}, {"10 D", "P"}, {"10 0", "P"}, {"10 2", "P"},
        {"10 MONTHLY", "P"}, {"10 WEEK-END", "P"}, {"10 OFFSET", "P"},
        {"10 DAY OFFSET", "ERR OFFSET: needs a value"},
        {"10 DAY OFFSET 841", "O"}, {"10 DAY OFFSET -841", "O"}, {"10 DAY OFFSET +60", "O"},
        {"10 DAY OFFSET 60.5", "O"}, {"10 DAY OFFSET x", "O"}, {"10 DAY OFFSET -0", "O"}, {"10 DAY OFFSET 060", "O"},
        {"10 DAY OFFSET 1 OFFSET 2", "ERR OFFSET: given more than once"},
        {"10 DAY COST -1", "ERR COST: must be an integer between 0 and 1000000000000"},
        {"10 DAY COST 1000000000001", "ERR COST: must be an integer between 0 and 1000000000000"},
        {"10 DAY REFUND -1", "ERR REFUND: must be an integer between 0 and 1000000000000"},
        {"10 DAY COST 1 REFUND 1", "ERR REFUND: cannot be combined with COST"},
        {"10 DAY FORCE REFUND 1", "ERR REFUND: cannot be combined with FORCE"},
        {"10 DAY REFUND 1 FORCE", "ERR FORCE: cannot be combined with REFUND"},
        {"10 DAY FORCE FORCE", "ERR FORCE: given more than once"},
        {"10 DAY ATMOST", "ERR 'ATMOST': not an option of rl.quota"},
        {"10 DAY WAIT 5", "ERR 'WAIT': not an option of rl.quota"},
        {"10 DAY BLOCK", "ERR 'BLOCK': not an option of rl.quota"},
        {"10 DAY FIXED", "ERR 'FIXED': not an option of rl.quota"},
        {"10 DAY WEEK", "ERR 'WEEK': not an option of rl.quota"},
        {"10 DAY 60", "ERR '60': not an option of rl.quota"},
    };
    static const char *const keys[] = {"bi:quota", MISSING_KEY};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int k = 0; k < 2; k++) {
            argv_t a;
            a_reset(&a);
            a_str(&a, k == 0 && i % 2 ? "rl.quota" : "RL.QUOTA");
            a_str(&a, keys[k]);
            a_words(&a, cases[i].args);
            const char *e = cases[i].error;
            expect_error(&a, strcmp(e, "L") == 0 ? limit_err : strcmp(e, "P") == 0 ? period_err
                                                    : strcmp(e, "O") == 0 ? offset_err : e);
        }
    /* The read-only form: the same words, and DRYRUN is not one of its options. */
    static const char *const ro[][2] = {{"10 YEAR", "ERR period: must be DAY, WEEK or MONTH"},
                                        {"10 DAY DRYRUN", "ERR 'DRYRUN': not an option of rl.quota_ro"},
                                        {"10 DAY OFFSET 900", "ERR OFFSET: must be an integer between -840 and 840"}};
    for (size_t i = 0; i < sizeof ro / sizeof ro[0]; i++) {
        argv_t a;
        a_reset(&a);
        a_str(&a, "RL.QUOTA_RO");
        a_str(&a, "bi:quota");
        a_words(&a, ro[i][0]);
        expect_error(&a, ro[i][1]);
    }
    /* Binary junk in the period and in OFFSET's value. */
    static const bin junk[] = {B("DAY\0"), B("\0DAY"), B("DAY\r\n"), B("\xff"), B("")};
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++) {
        argv_t a;
        a_reset(&a);
        a_str(&a, "RL.QUOTA");
        a_str(&a, "bi:quota");
        a_str(&a, "10");
        a_bin(&a, junk[i].p, junk[i].n);
        expect_error(&a, period_err);
        a_reset(&a);
        a_str(&a, "RL.QUOTA");
        a_str(&a, "bi:quota");
        a_words(&a, "10 WEEK OFFSET");
        a_bin(&a, junk[i].p, junk[i].n);
        expect_error(&a, offset_err);
    }
    /* Every other kind of key is the wrong type, whatever the options. */
    static const char *const variants[] = {"10 DAY", "10 WEEK DRYRUN", "1 MONTH OFFSET -840 COST 0", "5 DAY COST 9 FORCE",
                                           "5 DAY REFUND 1"};
    for (size_t k = 0; k < sizeof typed_keys / sizeof typed_keys[0]; k++) {
        if (strcmp(typed_kinds[k], "rl-quotas") == 0) continue;
        for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
            argv_t a;
            a_reset(&a);
            a_str(&a, v % 2 ? "RL.QUOTA" : "RL.QUOTA_RO");
            a_str(&a, typed_keys[k]);
            a_words(&a, variants[v]);
            expect_error(&a, WRONGTYPE);
        }
    }
    /* States RL.SETSTATE must refuse: a window ending at or before the epoch, or beyond any clock's month; a
     * count beyond the most debt. */
    static const char *const bad_states[] = {"0 1", "-1 1", "70371422577665 1", "1767225600000 2000000000001",
                                             "1767225600000 -1"};
    for (size_t i = 0; i < sizeof bad_states / sizeof bad_states[0]; i++) {
        argv_t a;
        a_reset(&a);
        a_str(&a, "RL.SETSTATE");
        a_str(&a, "bi:quota");
        a_str(&a, "QUOTA");
        a_words(&a, bad_states[i]);
        expect_error(&a, "ERR state: not a valid state of this kind");
    }
}

/* --- the lease commands other than RL.ACQUIRE (whose tables are cmds[ACQUIRE]'s), and RL.ALL's CONCURRENCY -- */

/* A vector of words, with `arg` (bytes) put in place of the word "@". */
static void a_words_with(argv_t *a, const char *line, bin arg) {
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", line);
    char *save = NULL;
    a_reset(a);
    for (char *t = strtok_r(tmp, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        if (strcmp(t, "@") == 0) a_bin(a, arg.p, arg.n);
        else a_str(a, t);
    }
}

static void test_leases(void) {
    char over[65], expected[256];
    memset(over, 'x', sizeof over);
    const bin bad_ids[] = {B(""), {over, 65}};
    /* the arguments are checked first: on a lease key, none, another type, a policy's key */
    static const char *const keys[] = {"bi:lease", MISSING_KEY, "bi:str", "bi:chk"};
    argv_t a;

    /* RL.ACQUIRE_RO: RL.ACQUIRE's arguments less DRYRUN and WAIT. */
    static const struct {
        const char *args, *error;
    } ro[] = {
        {"", "ERR wrong number of arguments for 'rl.acquire_ro' command"},
        {"10", "ERR wrong number of arguments for 'rl.acquire_ro' command"},
        {"0 1000", "ERR limit: must be an integer between 1 and 10000"},
        {"10001 1000", "ERR limit: must be an integer between 1 and 10000"},
        {"10 0", "ERR lease_ms: must be an integer between 1 and 1000000000000"},
        {"10 1000000000001", "ERR lease_ms: must be an integer between 1 and 1000000000000"},
        {"10 1000 COST 0", "ERR COST: must be an integer between 1 and 10000"},
        {"10 1000 COST 10001", "ERR COST: must be an integer between 1 and 10000"},
        {"10 1000 COST", "ERR COST: needs a value"},
        {"10 1000 ID", "ERR ID: needs a value"},
        {"10 1000 ID a id b", "ERR ID: given more than once"},
        {"10 1000 COST 1 cost 1", "ERR COST: given more than once"},
        {"10 1000 DRYRUN", "ERR 'DRYRUN': not an option of rl.acquire_ro"},
        {"10 1000 WAIT 5", "ERR 'WAIT': not an option of rl.acquire_ro"},
        {"10 1000 ID x WAIT 5", "ERR 'WAIT': not an option of rl.acquire_ro"},
        {"10 1000 REFUND 1", "ERR 'REFUND': not an option of rl.acquire_ro"},
        {"10 1000 ATMOST", "ERR 'ATMOST': not an option of rl.acquire_ro"},
        {"10 1000 BLOCK", "ERR 'BLOCK': not an option of rl.acquire_ro"},
        {"10 1000 1", "ERR '1': not an option of rl.acquire_ro"},
        {"10 1000 ID DRYRUN DRYRUN", "ERR 'DRYRUN': not an option of rl.acquire_ro"},
    };
    for (size_t i = 0; i < sizeof ro / sizeof ro[0]; i++)
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            a_reset(&a);
            a_str(&a, "RL.ACQUIRE_RO");
            a_str(&a, keys[k]);
            a_words(&a, ro[i].args);
            expect_error(&a, ro[i].error);
        }
    for (int b = 0; b < NBAD; b++)
        for (int p = 0; p < 2; p++) {
            a_words_with(&a, p == 0 ? "RL.ACQUIRE_RO bi:lease @ 1000" : "RL.ACQUIRE_RO bi:lease 10 @", bad_numbers[b]);
            range_text(expected, sizeof expected, acquire_ro.pname[p], 1, acquire_ro.pmax[p]);
            expect_error(&a, expected);
        }
    for (size_t i = 0; i < sizeof bad_ids / sizeof bad_ids[0]; i++) {
        a_words_with(&a, "RL.ACQUIRE_RO bi:lease 10 1000 ID @", bad_ids[i]);
        expect_error(&a, "ERR ID: must be 1 to 64 bytes");
    }

    /* RL.RELEASE key lease_id, RL.RENEW key lease_id lease_ms, RL.LEASES key: the count of arguments, then the
     * id, then lease_ms, then the key's type. */
    static const struct {
        const char *line, *error;
    } rows[] = {
        {"RL.RELEASE", "ERR wrong number of arguments for 'rl.release' command"},
        {"RL.RELEASE @", "ERR wrong number of arguments for 'rl.release' command"},
        {"RL.RELEASE @ a b", "ERR wrong number of arguments for 'rl.release' command"},
        {"RL.RELEASE @ held held", "ERR wrong number of arguments for 'rl.release' command"},
        {"RL.RENEW", "ERR wrong number of arguments for 'rl.renew' command"},
        {"RL.RENEW @", "ERR wrong number of arguments for 'rl.renew' command"},
        {"RL.RENEW @ held", "ERR wrong number of arguments for 'rl.renew' command"},
        {"RL.RENEW @ held 1000 1000", "ERR wrong number of arguments for 'rl.renew' command"},
        {"RL.RENEW @ held 1000 DRYRUN", "ERR wrong number of arguments for 'rl.renew' command"},
        {"RL.LEASES", "ERR wrong number of arguments for 'rl.leases' command"},
        {"RL.LEASES @ held", "ERR wrong number of arguments for 'rl.leases' command"},
        {"RL.LEASES @ 0 10", "ERR wrong number of arguments for 'rl.leases' command"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            bin key = {keys[k], strlen(keys[k])};
            a_words_with(&a, rows[i].line, key);
            expect_error(&a, rows[i].error);
        }
    for (size_t i = 0; i < sizeof bad_ids / sizeof bad_ids[0]; i++)
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            a_reset(&a);
            a_words(&a, "RL.RELEASE");
            a_str(&a, keys[k]);
            a_bin(&a, bad_ids[i].p, bad_ids[i].n);
            expect_error(&a, "ERR lease_id: must be 1 to 64 bytes");
            a_reset(&a);
            a_words(&a, "RL.RENEW");
            a_str(&a, keys[k]);
            a_bin(&a, bad_ids[i].p, bad_ids[i].n);
            a_str(&a, k == 0 ? "1000" : "x"); /* the id is named before lease_ms */
            expect_error(&a, "ERR lease_id: must be 1 to 64 bytes");
        }
    range_text(expected, sizeof expected, "lease_ms", 1, MAX_COUNT);
    for (int b = -2; b < NBAD; b++)
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            a_reset(&a);
            a_words(&a, "RL.RENEW");
            a_str(&a, keys[k]);
            a_str(&a, "held");
            if (b < 0) a_str(&a, b == -2 ? "0" : "1000000000001");
            else a_bin(&a, bad_numbers[b].p, bad_numbers[b].n);
            expect_error(&a, expected);
        }
    /* every other type of key, binary-named ones too; a policy's key (bp's, with a lease of a made id) is
     * one the first three take (docs/commands.md#rlrelease): no lease "held" there, so 0 and 0 and nothing
     * written, its one lease listed */
    for (int k = 0; k < NTYPED + 2; k++) {
        bin key = k < NTYPED ? (bin){typed_keys[k], strlen(typed_keys[k])} : k == NTYPED ? bin_key[0] : CHK_BIN_KEY;
        if (k < NTYPED && strcmp(typed_kinds[k], "rl-leases") == 0) continue;
        int policy_key = k > NTYPED || (k < NTYPED && strcmp(typed_kinds[k], "rl-checks") == 0);
        static const char *const lines[] = {"RL.RELEASE @ held", "RL.RENEW @ held 1000", "RL.LEASES @",
                                            "RL.ACQUIRE_RO @ 10 1000", "RL.ACQUIRE_RO @ 10000 1 COST 10000 ID held"};
        for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
            a_words_with(&a, lines[i], key);
            if (policy_key && i < 3) expect_quiet_reply(&a, i < 2 ? REDIS_REPLY_INTEGER : REDIS_REPLY_ARRAY, i < 2 ? 0 : 1);
            else expect_error(&a, WRONGTYPE);
        }
    }

    /* RL.ALL's CONCURRENCY clause: each error names its clause, alone or after another limit; a wrong type
     * on either key changes neither. */
    static const struct {
        const char *spec, *error; /* error after "ERR LIMIT n: " */
    } clauses[] = {
        {"CONCURRENCY 10", "CONCURRENCY needs 2 numbers"},
        {"CONCURRENCY 0 1000", "limit: must be an integer between 1 and 10000"},
        {"CONCURRENCY 10001 1000", "limit: must be an integer between 1 and 10000"},
        {"CONCURRENCY -1 1000", "limit: must be an integer between 1 and 10000"},
        {"CONCURRENCY x 1000", "limit: must be an integer between 1 and 10000"},
        {"CONCURRENCY 10 0", "lease_ms: must be an integer between 1 and 1000000000000"},
        {"CONCURRENCY 10 1000000000001", "lease_ms: must be an integer between 1 and 1000000000000"},
        {"CONCURRENCY 10 01", "lease_ms: must be an integer between 1 and 1000000000000"},
        {"CONCURRENCY 10 1000 COST 0", "COST: must be an integer between 1 and 10000"},
        {"CONCURRENCY 10 1000 COST 10001", "COST: must be an integer between 1 and 10000"},
        {"CONCURRENCY 10 1000 COST", "COST: needs a value"},
        {"CONCURRENCY 10 1000 ID", "ID: needs a value"},
        {"CONCURRENCY 10 1000 ID @", "ID: must be 1 to 64 bytes"},
        {"CONCURRENCY 10 1000 ID a ID b", "ID: given more than once"},
        {"CONCURRENCY 10 1000 cost 1 COST 2", "COST: given more than once"},
        {"CONCURRENCY 10 1000 DRYRUN", "'DRYRUN' is not an option of CONCURRENCY"},
        {"CONCURRENCY 10 1000 WAIT 5", "'WAIT' is not an option of CONCURRENCY"},
        {"CONCURRENCY 10 1000 REFUND 1", "'REFUND' is not an option of CONCURRENCY"},
        {"CONCURRENCY 10 1000 ATMOST", "'ATMOST' is not an option of CONCURRENCY"},
        {"CONCURRENCY 10 1000 INTERVAL", "'INTERVAL' is not an option of CONCURRENCY"},
        {"CONCURRENCY 10 1000 FOO", "'FOO' is not an option of CONCURRENCY"},
        {"CONCURRENCY 10 1000 ID COST 0", "'0' is not an option of CONCURRENCY"},
        {"concurrency 10 1000 5", "'5' is not an option of CONCURRENCY"},
        {"CONCURRENC 10 1000", "kind must be TOKEN, LEAKY, WINDOW, SLIDINGLOG, SMOOTH, CONCURRENCY or QUOTA"},
        {"LEASES 10 1000", "kind must be TOKEN, LEAKY, WINDOW, SLIDINGLOG, SMOOTH, CONCURRENCY or QUOTA"},
    };
    for (size_t i = 0; i < sizeof clauses / sizeof clauses[0]; i++)
        for (int second = 0; second < 2; second++)
            for (size_t b = 0; b < sizeof bad_ids / sizeof bad_ids[0]; b++) {
                if (b > 0 && !strstr(clauses[i].spec, "@")) continue;
                char line[256];
                snprintf(line, sizeof line, second ? "RL.ALL 2 bi:tok bi:lease LIMIT TOKEN 10 1 1000 LIMIT %s"
                                                   : "RL.ALL 1 bi:lease LIMIT %s",
                         clauses[i].spec);
                a_words_with(&a, line, bad_ids[b]);
                snprintf(expected, sizeof expected, "ERR LIMIT %d: %s", second + 1, clauses[i].error);
                expect_error(&a, expected);
            }
    static const struct {
        const char *line, *error;
    } calls[] = {
        {"RL.ALL 1 bi:lease REFUND 1 LIMIT CONCURRENCY 10 1000",
         "ERR LIMIT 1: REFUND: CONCURRENCY gives nothing back (rl.acquire has no REFUND)"},
        {"RL.ALL 2 bi:tok bi:lease REFUND 1 LIMIT TOKEN 10 1 1000 LIMIT CONCURRENCY 10 1000",
         "ERR LIMIT 2: REFUND: CONCURRENCY gives nothing back (rl.acquire has no REFUND)"},
        {"RL.ALL 1 bi:lease ATMOST LIMIT CONCURRENCY 10 1000",
         "ERR ATMOST: not an option of RL.ALL, which takes each limit's whole COST or none"},
        {"RL.ALL 1 bi:lease ID x LIMIT CONCURRENCY 10 1000",
         "ERR 'ID': not an option of rl.all (before the first LIMIT: COST, REFUND, DRYRUN, FORCE, WAIT or LIMIT)"},
        {"RL.ALL_RO 1 bi:lease DRYRUN LIMIT CONCURRENCY 10 1000",
         "ERR 'DRYRUN': not an option of rl.all_ro (before the first LIMIT: COST, REFUND, FORCE or LIMIT)"},
        {"RL.ALL_RO 1 bi:lease WAIT 5 LIMIT CONCURRENCY 10 1000",
         "ERR 'WAIT': not an option of rl.all_ro (before the first LIMIT: COST, REFUND, FORCE or LIMIT)"},
        {"RL.ALL 2 bi:lease bi:lease LIMIT CONCURRENCY 10 1000 LIMIT CONCURRENCY 10 1000",
         "ERR key 2: the same key as key 1 (one limit per key)"},
        /* the wrong type, on the clause's key or the other's */
        {"RL.ALL 1 bi:tok LIMIT CONCURRENCY 10 1000", WRONGTYPE},
        {"RL.ALL 1 bi:str LIMIT CONCURRENCY 10 1000 ID held", WRONGTYPE},
        {"RL.ALL 2 bi:tok bi:lease LIMIT TOKEN 10 1 1000 LIMIT TOKEN 10 1 1000", WRONGTYPE},
        {"RL.ALL 2 bi:lease bi:tok LIMIT CONCURRENCY 10 1000 LIMIT WINDOW 10 1000", WRONGTYPE},
        {"RL.ALL 2 bi:tok bi:leak LIMIT TOKEN 10 1 1000 LIMIT CONCURRENCY 10 1000 COST 2", WRONGTYPE},
        {"RL.ALL 2 bi:lease bi:zset LIMIT CONCURRENCY 10 1000 LIMIT CONCURRENCY 10 1000", WRONGTYPE},
        {"RL.ALL_RO 2 bi:lease bi:win LIMIT CONCURRENCY 10 1000 LIMIT CONCURRENCY 10 1000", WRONGTYPE},
        {"RL.ALL 2 bi:lease bi:smooth WAIT 5 LIMIT CONCURRENCY 10 1000 LIMIT CONCURRENCY 10 1000", WRONGTYPE},
    };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        a_reset(&a);
        a_words(&a, calls[i].line);
        expect_error(&a, calls[i].error);
    }
}

static void test_foreign_logs(void) {
    /* Odd scores and members: a well-formed reply, the log within limit + 1, the connection in step. */
    static const char *const sets[] = {
        "ZADD fl:1 +inf a -inf b 1e300 c -5 d 0 e",
        "ZADD fl:2 1700000000000000 1700000000000000-x 1700000000000000 1700000000000000- 1700000000000000 -1",
        "ZADD fl:3 1699999999999999 1700000000000000-99999999999999999999 1700000000000001 future",
        "ZADD fl:4 1700000000000000.5 half 1700000000000000 1700000000000000-0000000000000000007",
    };
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
        redisReply *r = call_line(sets[i]);
        CHECK(r && r->type == REDIS_REPLY_INTEGER);
        if (r) freeReplyObject(r);
        char key[8];
        snprintf(key, sizeof key, "fl:%zu", i + 1);
        for (int k = 0; k < 3; k++) {
            argv_t a;
            a_reset(&a);
            a_str(&a, "RL.SLIDINGLOG");
            a_str(&a, key);
            a_words(&a, k == 0 ? "3 1000" : k == 1 ? "3 1000 COST 3 MINGAP 10" : "1 1 COST 0");
            rl_result f;
            if (expect_six(&a, &f)) CHECK(f.allowed >= 0 && f.allowed <= 1 && f.remaining >= 0 && f.reset_after_ms >= 0);
            long long card = cmd_int(c, "ZCARD %s", key);
            CHECK(card <= (k == 2 ? 2 : 4));
            CHECK(cmd_status_is(c, "PONG", "PING"));
        }
    }

    /* "A sorted set with members the module did not write (your own ZADD) is read by the same rule", and
     * "a name the set already holds, even at another score, is skipped": a member named like the module's
     * next one, 1 ms earlier (in the window), is not moved; the attempt adds its own entry. */
    redisReply *r = call_line("ZADD fl:5 1699999999999000 1700000000000000-0");
    if (r) freeReplyObject(r);
    rl_result res = rl(c, "RL.SLIDINGLOG fl:5 10 1000");
    CHECK(res.ok && res.allowed == 1);
    long long card = cmd_int(c, "ZCARD fl:5");
    if (!CHECK(card == 2 && res.remaining == 10 - card))
        fprintf(stderr, "     log holds %lld entries, the reply says %lld remaining of 10\n", card, res.remaining);

    /* BUG (module/slidinglog.c note_member): the seq of a member at score now is read into an int64 with no
     * overflow check, and next_seq = seq + 1: a member "<now>-9223372036854775807" (a user's ZADD) makes
     * seq + 1 overflow (undefined behaviour in C; UBSan reports "signed integer overflow: 9223372036854775807
     * + 1" at slidinglog.c:61, and "999999999999999999 * 10" at :59 for a 19-digit seq above INT64_MAX).
     * Built as it is, next_seq wraps to INT64_MIN and the attempt is logged as "<now>--9223372036854775808",
     * not a "<time_us>-<seq>..." member as docs/commands.md describes. Reading the seq as unsigned, and
     * ignoring seqs that do not fit, would fix both. (Fixed; the module now names its members
     * "<time_us>-<seq>:<weight>:<x>:<floor>" and never reads a user's seq.) */
    r = call_line("ZADD fl:6 1700000000000000 1700000000000000-9223372036854775807");
    if (r) freeReplyObject(r);
    res = rl(c, "RL.SLIDINGLOG fl:6 10 1000");
    CHECK(res.ok && res.allowed == 1);
    card = cmd_int(c, "ZCARD fl:6");
    CHECK(card == 2 && res.remaining == 10 - card);
    r = cmd(c, "ZRANGE fl:6 0 -1");
    int names_ok = r->type == REDIS_REPLY_ARRAY && r->elements == 2;
    for (size_t i = 0; names_ok && i < r->elements; i++) {
        const char *m = r->element[i]->str;
        names_ok = strncmp(m, "1700000000000000-", 17) == 0 && m[17] >= '0' && m[17] <= '9';
        for (size_t k = 17; names_ok && m[k]; k++) names_ok = (m[k] >= '0' && m[k] <= '9') || m[k] == ':';
        if (!names_ok) fprintf(stderr, "     RL.SLIDINGLOG logged the member \"%s\"\n", m);
    }
    CHECK(names_ok);
    freeReplyObject(r);
    cases_tried += 2;
}

/* --- random vectors against a reference reading of the docs ------------------------------------------------- */

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t rnd(rng *r) {
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
#define PICK(r, arr) (arr)[rnd(r) % (sizeof(arr) / sizeof((arr)[0]))]

/* Strict decimal as the docs require: optional '-', digits, no leading zeros, no "-0", within int64. */
static int strict_ll(const char *s, size_t n, long long *out) {
    size_t i = 0;
    int neg = 0;
    if (n > 0 && s[0] == '-') neg = 1, i = 1;
    if (i == n) return 0;
    if (s[i] == '0' && n - i > 1) return 0;
    unsigned __int128 v = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        v = v * 10 + (unsigned)(s[i] - '0');
        if (v > ((unsigned __int128)1 << 64)) return 0;
    }
    if (neg) {
        if (v == 0 || v > (unsigned __int128)INT64_MAX + 1) return 0;
        *out = (long long)(-(__int128)v);
    } else {
        if (v > INT64_MAX) return 0;
        *out = (long long)v;
    }
    return 1;
}

static int eq_ci(const char *s, size_t n, const char *word) { return strlen(word) == n && strncasecmp(s, word, n) == 0; }

/* What the docs say a vector must answer. */
enum { P_SIX, P_OK, P_INT, P_ERR, P_SETSTATE_VALID_OR_INVALID, P_ZERO_ONE, P_LEASES };
typedef struct prediction {
    int kind;
    char error[256];
    int ci;              /* limiter command index, or -1 */
    long long params[3], cost;
    unsigned flags;      /* bit per option index */
    int dry;             /* DRYRUN, or a read-only form: the key stays as it is */
    int holds;           /* BLOCK or WAIT: the reply may be held */
    int id_at;           /* RL.ACQUIRE: the argument that is ID's value, or 0 */
    long long clock_after;
} prediction;

static void predict_limiter(const cmddef *d, int ci, const argv_t *a, const char *keytype, prediction *p) {
    p->ci = ci;
    p->cost = 1;
    p->dry = d == &acquire_ro;
    int nargs = a->argc - 2;
    if (a->argc < 2 + d->nparams || nargs > MAX_ARGS) {
        p->kind = P_ERR;
        snprintf(p->error, sizeof p->error, "ERR wrong number of arguments for '%s' command", d->lname);
        return;
    }
    for (int i = 0; i < d->nparams; i++) {
        long long v;
        if (!strict_ll(a->v[2 + i], a->l[2 + i], &v) || v < 1 || v > d->pmax[i]) {
            p->kind = P_ERR;
            range_text(p->error, sizeof p->error, d->pname[i], 1, d->pmax[i]);
            return;
        }
        p->params[i] = v;
    }
    for (int i = 2 + d->nparams; i < a->argc; i++) {
        int o = -1;
        for (int k = 0; k < d->nopts; k++)
            if (eq_ci(a->v[i], a->l[i], d->opts[k].name)) o = k;
        if (o < 0) {
            char shown[40];
            size_t j = 0, n = a->l[i];
            for (size_t k = 0; k < n && j < 32; k++) {
                unsigned char ch = (unsigned char)a->v[i][k];
                shown[j++] = (ch >= 0x20 && ch < 0x7f && ch != '\'') ? (char)ch : '?';
            }
            if (n > 32) shown[29] = shown[30] = shown[31] = '.';
            shown[j] = '\0';
            p->kind = P_ERR;
            snprintf(p->error, sizeof p->error, "ERR '%s': not an option of %s", shown, d->lname);
            return;
        }
        const optdef *op = &d->opts[o];
        if (p->flags & (1u << o)) {
            p->kind = P_ERR;
            snprintf(p->error, sizeof p->error, "ERR %s: given more than once", op->name);
            return;
        }
        if (op->conflicts) {
            const optdef *other = find_opt(d, op->conflicts);
            if (p->flags & (1u << (other - d->opts))) {
                p->kind = P_ERR;
                snprintf(p->error, sizeof p->error, "ERR %s: cannot be combined with %s", op->name, other->name);
                return;
            }
        }
        p->flags |= 1u << o;
        if (strcmp(op->name, "DRYRUN") == 0) p->dry = 1;
        if (strcmp(op->name, "BLOCK") == 0 || strcmp(op->name, "WAIT") == 0) p->holds = 1;
        if (!op->takes_value) continue;
        if (++i == a->argc) {
            p->kind = P_ERR;
            snprintf(p->error, sizeof p->error, "ERR %s: needs a value", op->name);
            return;
        }
        if (op->takes_value == 2) { /* bytes */
            if ((long long)a->l[i] < op->min || (long long)a->l[i] > op->max) {
                p->kind = P_ERR;
                snprintf(p->error, sizeof p->error, "ERR %s: must be %lld to %lld bytes", op->name, op->min, op->max);
                return;
            }
            p->id_at = i;
            continue;
        }
        long long v;
        if (!strict_ll(a->v[i], a->l[i], &v) || v < op->min || v > op->max) {
            p->kind = P_ERR;
            range_text(p->error, sizeof p->error, op->name, op->min, op->max);
            return;
        }
        if (o == 0) p->cost = v;
    }
    /* capacity * period / rate must not exceed 10^12 ms */
    if (d->combo_error && (__int128)p->params[0] * p->params[2] > (__int128)MAX_COUNT * p->params[1]) {
        p->kind = P_ERR;
        snprintf(p->error, sizeof p->error, "%s", d->combo_error);
        return;
    }
    if (strcmp(keytype, "none") != 0 && strcmp(keytype, d->kind) != 0) {
        p->kind = P_ERR;
        snprintf(p->error, sizeof p->error, "%s", WRONGTYPE);
        return;
    }
    p->kind = P_SIX;
}

static void predict_setstate(const argv_t *a, const char *keytype, prediction *p) {
    p->kind = P_ERR;
    long long v;
    const char *kind = a->argc < 3 ? "" : eq_ci(a->v[2], a->l[2], "TOKEN") ? "rl-tokens" : eq_ci(a->v[2], a->l[2], "LEAKY") ? "rl-leakyb"
                                          : eq_ci(a->v[2], a->l[2], "WINDOW") ? "rl-window"
                                          : eq_ci(a->v[2], a->l[2], "SMOOTH") ? "rl-smooth"
                                          : eq_ci(a->v[2], a->l[2], "QUOTA") ? "rl-quotas" : NULL;
    if (a->argc == 3 && a->l[2] > 0 && a->v[2][0] == 'C') { /* a lease blob: judged by its layout */
        if (!lease_blob_valid((const unsigned char *)a->v[2], a->l[2])) {
            snprintf(p->error, sizeof p->error, "%s", LEASE_INVALID);
        } else if (strcmp(keytype, "none") == 0 || strcmp(keytype, "rl-leases") == 0) {
            p->kind = P_OK;
        } else {
            snprintf(p->error, sizeof p->error, "%s", WRONGTYPE);
        }
        return;
    }
    if (a->argc == 3) {
        /* The compact form: a kind letter, n words, an expiry (LE), 9 + 8n bytes; then the module's call. */
        const unsigned char *b = (const unsigned char *)a->v[2];
        size_t len = a->l[2];
        long long expiry = 0;
        int well_formed = len >= 17 && len <= 9 + 8 * 68 && (len - 9) % 8 == 0;
        for (int i = 7; well_formed && i >= 0; i--) expiry = (long long)(((unsigned long long)expiry << 8) | b[len - 8 + i]);
        if (!well_formed) {
            snprintf(p->error, sizeof p->error, "ERR state: must be 9 + 8n bytes, n from 1 to 68 (or use RL.SETSTATE key kind w0 [w1 ...] [PXAT unix_ms])");
        } else if (b[0] != 'T' && b[0] != 'L' && b[0] != 'W' && b[0] != 'G' && b[0] != 'Q') {
            snprintf(p->error, sizeof p->error, "ERR state: unknown kind");
        } else if (expiry < 1) {
            snprintf(p->error, sizeof p->error, "ERR state: no valid expiry");
        } else {
            const char *want = b[0] == 'T'   ? "rl-tokens"
                               : b[0] == 'L' ? "rl-leakyb"
                               : b[0] == 'W' ? "rl-window"
                               : b[0] == 'Q' ? "rl-quotas"
                                             : "rl-smooth";
            p->kind = P_SETSTATE_VALID_OR_INVALID;
            snprintf(p->error, sizeof p->error, "%s",
                     strcmp(keytype, "none") == 0 || strcmp(keytype, want) == 0 ? "OK" : WRONGTYPE);
        }
        return;
    }
    /* The readable form: kind, then as many words as the state w0 begins has (two for every state the
     * structured vectors write), then PXAT unix_ms. */
    int end = 5;
    if (a->argc < 5) {
        snprintf(p->error, sizeof p->error, "ERR wrong number of arguments for 'rl.setstate' command");
    } else if (!kind) {
        snprintf(p->error, sizeof p->error, "ERR kind: must be one of TOKEN, LEAKY, WINDOW, SMOOTH, QUOTA");
    } else if (!strict_ll(a->v[3], a->l[3], &v)) {
        snprintf(p->error, sizeof p->error, "ERR w0: must be an integer");
    } else if (a->argc > end + 2) {
        snprintf(p->error, sizeof p->error, "ERR wrong number of arguments for 'rl.setstate' command");
    } else if (!strict_ll(a->v[4], a->l[4], &v)) {
        snprintf(p->error, sizeof p->error, "ERR w1: must be an integer");
    } else if (a->argc > end && !eq_ci(a->v[end], a->l[end], "PXAT")) {
        snprintf(p->error, sizeof p->error, "ERR PXAT: expected PXAT unix_ms after w1");
    } else if (a->argc == end + 1) {
        snprintf(p->error, sizeof p->error, "ERR PXAT: needs a value");
    } else if (a->argc == end + 2 && (!strict_ll(a->v[end + 1], a->l[end + 1], &v) || v < 1)) {
        snprintf(p->error, sizeof p->error, "ERR PXAT: must be a positive integer");
    } else {
        /* Whether the words are a valid state is the module's call; if they are, the key's type decides. */
        p->kind = P_SETSTATE_VALID_OR_INVALID;
        snprintf(p->error, sizeof p->error, "%s", strcmp(keytype, "none") == 0 || strcmp(keytype, kind) == 0 ? "OK" : WRONGTYPE);
    }
}

/* RL.RELEASE key lease_id, RL.RENEW key lease_id lease_ms, RL.LEASES key: the count of arguments, the id,
 * lease_ms, the key's type; then 1 or 0, or the list. */
static void predict_lease_command(const argv_t *a, const char *keytype, prediction *p) {
    p->kind = P_ERR;
    const char *name = eq_ci(a->v[0], a->l[0], "RL.RELEASE") ? "rl.release" : eq_ci(a->v[0], a->l[0], "RL.RENEW") ? "rl.renew" : "rl.leases";
    int want = strcmp(name, "rl.release") == 0 ? 3 : strcmp(name, "rl.renew") == 0 ? 4 : 2; /* arguments */
    long long v;
    if (a->argc != want) {
        snprintf(p->error, sizeof p->error, "ERR wrong number of arguments for '%s' command", name);
    } else if (want >= 3 && (a->l[2] < 1 || a->l[2] > 64)) {
        snprintf(p->error, sizeof p->error, "ERR lease_id: must be 1 to 64 bytes");
    } else if (want == 4 && (!strict_ll(a->v[3], a->l[3], &v) || v < 1 || v > MAX_COUNT)) {
        range_text(p->error, sizeof p->error, "lease_ms", 1, MAX_COUNT);
    } else if (strcmp(keytype, "none") != 0 && strcmp(keytype, "rl-leases") != 0) {
        snprintf(p->error, sizeof p->error, "%s", WRONGTYPE);
    } else {
        p->kind = want == 2 ? P_LEASES : P_ZERO_ONE;
        p->dry = 1; /* RL.LEASES reads; the others change the key only when they answer 1 */
    }
}

/* RL.LEASES's answer: [id (1 to 64 bytes), units (1 to 10000), ms until it ends (at least 1)] each. */
static int leases_well_formed(const redisReply *x) {
    if (x->type != REDIS_REPLY_ARRAY) return 0;
    for (size_t i = 0; i < x->elements; i++) {
        const redisReply *e = x->element[i];
        if (e->type != REDIS_REPLY_ARRAY || e->elements != 3 || e->element[0]->type != REDIS_REPLY_STRING ||
            e->element[1]->type != REDIS_REPLY_INTEGER || e->element[2]->type != REDIS_REPLY_INTEGER)
            return 0;
        if (e->element[0]->len < 1 || e->element[0]->len > 64 || e->element[1]->integer < 1 ||
            e->element[1]->integer > MAX_LEASE || e->element[2]->integer < 1)
            return 0;
    }
    return 1;
}

static void predict_clock(const argv_t *a, long long clock, prediction *p) {
    p->kind = P_ERR;
    p->clock_after = clock;
    long long v;
    if (a->argc < 2) {
        snprintf(p->error, sizeof p->error, "ERR wrong number of arguments for 'rl.clock' command");
    } else if (eq_ci(a->v[1], a->l[1], "GET") && a->argc == 2) {
        p->kind = P_INT;
    } else if (eq_ci(a->v[1], a->l[1], "SET") && a->argc == 3) {
        if (strict_ll(a->v[2], a->l[2], &v) && v >= 0 && v < MAX_TIME_MS) {
            p->kind = P_OK;
            p->clock_after = v;
        } else {
            snprintf(p->error, sizeof p->error, "ERR unix_ms: must be an integer between 0 and 70368744177663");
        }
    } else if (eq_ci(a->v[1], a->l[1], "ADVANCE") && a->argc == 3) {
        if (strict_ll(a->v[2], a->l[2], &v) && v >= 0 && v < MAX_TIME_MS && clock + v < MAX_TIME_MS) {
            p->kind = P_OK;
            p->clock_after = clock + v;
        } else {
            snprintf(p->error, sizeof p->error,
                     "ERR ms: must be an integer between 0 and 70368744177663 and keep the clock below it");
        }
    } else {
        snprintf(p->error, sizeof p->error, "ERR subcommand: must be SET <unix_ms>, ADVANCE <ms>, GET or REAL");
    }
}

static const char *const fz_keys[] = {"fz:0", "fz:1", "fz:2", "fz:3", "fz:4", "fz:5", "fz:str", "fz:list", "fz:zset"};
static const char *const small_numbers[] = {"1", "2", "3", "5", "10", "100", "1000", "60000", "7"};
static const bin edge_tokens[] = {
    B("0"), B("1000000000000"), B("1000000000001"), B("100000"), B("100001"), B("9223372036854775807"),
    B("9223372036854775808"), B("-1"), B("-0"), B("01"), B(""), B("18446744073709551616"), B("1e3"), B("\0"),
    B("\r\n"), B("\xff"), B("1700000000000"), B("70368744177663"), B("70368744177664"), B("4611686018427387909"),
    B("1700000000000000"), B("-9223372036854775808")};
static const char *const option_words[] = {"COST", "DRYRUN", "INTERVAL", "NODELAY", "FIXED", "SLIDING", "MINGAP",
                                           "PXAT", "TOKEN", "LEAKY", "WINDOW", "FOO", "GET", "SET", "ADVANCE", "BLOCK",
                                           "ID"}; /* not WAIT: RL.TOKEN and RL.WINDOW take it, their tables do not */

/* The commands the random vectors call: V_TOKEN .. V_SLIDINGLOG are cmds[0..3]; V_ACQUIRE is cmds[ACQUIRE]. */
enum { V_TOKEN, V_LEAKY, V_WINDOW, V_SLIDINGLOG, V_SETSTATE, V_CLOCK, V_ACQUIRE, V_ACQUIRE_RO, V_RELEASE, V_RENEW,
       V_LEASES, V_N };
static const char *const vector_names[V_N] = {"RL.TOKEN", "RL.LEAKY", "RL.WINDOW", "RL.SLIDINGLOG", "RL.SETSTATE",
                                              "RL.CLOCK", "RL.ACQUIRE", "RL.ACQUIRE_RO", "RL.RELEASE", "RL.RENEW",
                                              "RL.LEASES"};

/* Lease ids the vectors use: some valid, some not (empty, 65 bytes), and the ids the module made most
 * recently (test_fuzz keeps them), so that releases and renewals find leases. */
#define I64 "iiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiii"
static const bin lease_ids[] = {B("a"), B("b"), B("job-7"), B("\0\r\n\xff"), B("DRYRUN"), B("COST"), B(I64), B(I64 "i"), B("")};
static char made_ids[8][64];
static size_t made_len[8];
static unsigned made_next;

static void random_id(rng *r, argv_t *a) {
    if (rnd(r) % 3 == 0) {
        unsigned i = (unsigned)(rnd(r) % 8);
        if (made_len[i]) {
            a_bin(a, made_ids[i], made_len[i]);
            return;
        }
    }
    bin b = PICK(r, lease_ids);
    a_bin(a, b.p, b.n);
}

/* A lease blob for RL.SETSTATE: up to four leases around the clock, most of them well formed, then (half
 * the time) damaged: cut, lengthened, one byte changed, or the count changed. */
static void random_lease_blob(rng *r, argv_t *a, long long clock_ms) {
    lblob x;
    int n = (int)(rnd(r) % 5);
    lb_head(&x, (uint64_t)n);
    int64_t end = clock_ms * 1000 - 2000000 + (int64_t)(rnd(r) % 3000000);
    for (int i = 0; i < n; i++) {
        end += (int64_t)(rnd(r) % 4) * 1000000;
        int64_t acquired = end - (int64_t)(rnd(r) % 5000000);
        bin id = lease_ids[rnd(r) % 7];
        lb_lease(&x, (uint64_t)end, (uint64_t)acquired, 1 + rnd(r) % 3, (int)id.n, id.p);
    }
    static const uint64_t expiries[] = {0, 99999999999999ULL, 1};
    lb_le(&x, PICK(r, expiries), 8);
    switch (rnd(r) % 8) {
    case 0: x.n -= rnd(r) % x.n; break;
    case 1:
        for (int k = (int)(1 + rnd(r) % 9); k > 0; k--) x.b[x.n++] = (unsigned char)rnd(r);
        break;
    case 2: x.b[1 + rnd(r) % (x.n - 1)] = (unsigned char)rnd(r); break;
    case 3: x.b[9] = (unsigned char)(rnd(r) % 6); break;
    default: break;
    }
    a_bin(a, (const char *)x.b, x.n);
}

static void random_case_word(rng *r, argv_t *a, const char *w) {
    char tmp[32];
    size_t n = strlen(w);
    for (size_t i = 0; i <= n; i++) tmp[i] = (rnd(r) % 3 == 0) ? (char)tolower((unsigned char)w[i]) : w[i];
    a_str(a, tmp);
}

static void random_token(rng *r, argv_t *a) {
    uint64_t k = rnd(r) % 10;
    if (k < 3) {
        a_str(a, PICK(r, small_numbers));
    } else if (k < 6) {
        bin b = PICK(r, edge_tokens);
        a_bin(a, b.p, b.n);
    } else if (k < 9) {
        random_case_word(r, a, PICK(r, option_words));
    } else {
        char junk[8];
        size_t n = rnd(r) % 8;
        for (size_t i = 0; i < n; i++) junk[i] = (char)(rnd(r) & 0xff);
        a_bin(a, junk, n);
    }
}

/* A mostly well-formed vector for one of the V_* commands, or noise. */
static void random_vector(rng *r, argv_t *a, long long clock_ms) {
    static const int pick[30] = {V_TOKEN,      V_LEAKY,      V_WINDOW,     V_SLIDINGLOG, V_ACQUIRE,    V_TOKEN,
                                 V_LEAKY,      V_WINDOW,     V_SLIDINGLOG, V_ACQUIRE,    V_TOKEN,      V_LEAKY,
                                 V_WINDOW,     V_SLIDINGLOG, V_ACQUIRE,    V_TOKEN,      V_LEAKY,      V_WINDOW,
                                 V_SLIDINGLOG, V_ACQUIRE,    V_ACQUIRE_RO, V_ACQUIRE_RO, V_SETSTATE,   V_SETSTATE,
                                 V_SETSTATE,   V_CLOCK,      V_RELEASE,    V_RELEASE,    V_RENEW,      V_LEASES};
    int ci = pick[rnd(r) % 30];
    a_reset(a);
    random_case_word(r, a, vector_names[ci]);
    int structured = rnd(r) % 10 < 7;
    if (ci == V_CLOCK) {
        static const char *const subs[] = {"GET", "SET", "ADVANCE"};
        if (structured) {
            random_case_word(r, a, PICK(r, subs));
            if (rnd(r) % 4) {
                if (rnd(r) % 2) {
                    a_str(a, PICK(r, small_numbers));
                } else {
                    bin b = PICK(r, edge_tokens);
                    a_bin(a, b.p, b.n);
                }
            }
        } else {
            for (int n = (int)(rnd(r) % 4); n > 0; n--) random_token(r, a);
        }
        return;
    }
    int lease_state = ci == V_SETSTATE && structured && rnd(r) % 3 == 0;
    if (rnd(r) % 30 == 0) {
        a_bin(a, "fz:\0\r\n\xff", 7);
    } else if (rnd(r) % 10 < 7) { /* mostly a key of the command's own family, so most calls can succeed */
        static const char *const fam[V_N] = {"tok", "leak", "win", "log", "tok", "", "lease", "lease", "lease", "lease", "lease"};
        char key[32];
        snprintf(key, sizeof key, "fz:%s:%d", lease_state ? "lease" : fam[ci], (int)(rnd(r) % 4));
        a_str(a, key);
    } else {
        a_str(a, PICK(r, fz_keys));
    }
    if (!structured) {
        for (int n = (int)(rnd(r) % 19); n > 0; n--) random_token(r, a);
        return;
    }
    if (lease_state) {
        random_lease_blob(r, a, clock_ms);
        return;
    }
    if (ci == V_SETSTATE) {
        static const char *const kinds[] = {"TOKEN", "LEAKY", "WINDOW", "token", "FOO"};
        static const char *const words[] = {"0", "1", "1700000000000000", "1700000000123456", "4611686018427387909",
                                            "-1", "999", "1099511627775", "1000000000000", "70368744177664000",
                                            "123456789", "9223372036854775807", "1700000000000"};
        a_str(a, PICK(r, kinds));
        a_str(a, PICK(r, words));
        a_str(a, PICK(r, words));
        if (rnd(r) % 2) {
            a_str(a, rnd(r) % 8 ? "PXAT" : "PX");
            static const char *const pxat[] = {"99999999999999", "1", "0", "1700000000000", "-5", "70368744177663"};
            a_str(a, PICK(r, pxat));
        }
        return;
    }
    if (ci == V_RELEASE || ci == V_RENEW || ci == V_LEASES) {
        if (ci != V_LEASES) random_id(r, a);
        if (ci == V_RENEW) {
            if (rnd(r) % 6) a_str(a, PICK(r, small_numbers));
            else random_token(r, a);
        }
        if (rnd(r) % 20 == 0) random_token(r, a); /* one too many */
        return;
    }
    const cmddef *d = ci == V_ACQUIRE ? &cmds[ACQUIRE] : ci == V_ACQUIRE_RO ? &acquire_ro : &cmds[ci];
    for (int i = 0; i < d->nparams; i++) {
        if (rnd(r) % 8) {
            a_str(a, PICK(r, small_numbers));
        } else {
            bin b = PICK(r, edge_tokens);
            a_bin(a, b.p, b.n);
        }
    }
    for (int n = (int)(rnd(r) % 4); n > 0; n--) {
        if (rnd(r) % 8) {
            const optdef *op = &d->opts[rnd(r) % (uint64_t)d->nopts];
            random_case_word(r, a, op->name);
            if (op->takes_value == 2 && rnd(r) % 10) {
                random_id(r, a);
            } else if (op->takes_value && rnd(r) % 10) {
                if (rnd(r) % 4)
                    a_str(a, PICK(r, small_numbers));
                else
                    random_token(r, a);
            }
        } else {
            random_token(r, a);
        }
    }
}

#define FUZZ_VECTORS 20000
#define FUZZ_BATCH 50

static int cmd_index(const argv_t *a) {
    for (int i = 0; i < V_N; i++)
        if (eq_ci(a->v[0], a->l[0], vector_names[i])) return i;
    return -1;
}

/* What the docs say of the vector a, on a key of keytype, with the clock at clock. */
static void predict(const argv_t *a, const char *keytype, long long clock, prediction *p) {
    int ci = cmd_index(a);
    p->ci = -1;
    if (ci >= V_TOKEN && ci <= V_SLIDINGLOG) predict_limiter(&cmds[ci], ci, a, keytype, p);
    else if (ci == V_ACQUIRE) predict_limiter(&cmds[ACQUIRE], ACQUIRE, a, keytype, p);
    else if (ci == V_ACQUIRE_RO) predict_limiter(&acquire_ro, ACQUIRE, a, keytype, p);
    else if (ci == V_SETSTATE) predict_setstate(a, keytype, p);
    else if (ci == V_RELEASE || ci == V_RENEW || ci == V_LEASES) predict_lease_command(a, keytype, p);
    else predict_clock(a, clock, p);
}

/* RL.ACQUIRE's lease: none under DRYRUN or the read-only form, else one iff admitted; the ID when one was
 * given, else "<µs>-<n>". A made id is kept for the vectors to come. */
static int lease_agrees(const argv_t *a, const prediction *p, const rl_result *f, const redisReply *lease) {
    if (p->dry || f->allowed == 0) return lease == NULL;
    if (!lease) return 0;
    if (p->id_at) return lease->len == a->l[p->id_at] && memcmp(lease->str, a->v[p->id_at], lease->len) == 0;
    for (size_t i = 0; i < lease->len; i++) { /* a made id: the module's count in hex, no leading zero */
        char ch = lease->str[i];
        if (!(ch >= '0' && ch <= '9') && !(ch >= 'a' && ch <= 'f')) return 0;
    }
    if (lease->len < 1 || lease->len > 16 || (lease->len > 1 && lease->str[0] == '0')) return 0;
    unsigned slot = made_next++ % 8;
    memcpy(made_ids[slot], lease->str, lease->len);
    made_len[slot] = lease->len;
    return 1;
}

/* Check a six-field reply against the request it answers. */
static int six_agrees(const prediction *p, const rl_result *f) {
    long long limit = p->params[0];
    int nodelay = p->ci == 1 && (p->flags & (1u << 2));
    if (f->allowed != 0 && f->allowed != 1) return 0;
    if (f->limit != limit) return 0;
    if (f->remaining < 0 || f->remaining > limit) return 0;
    if (f->allowed == 1 && f->retry_after_ms != -1) return 0;
    if (f->allowed == 0 && f->retry_after_ms != -1 && f->retry_after_ms < 1) return 0;
    /* above capacity: denied, never (but an ID that names a held lease renews it, whatever the COST) */
    if (p->cost > limit && (f->allowed != 0 || f->retry_after_ms != -1) && !(p->id_at && f->allowed == 1)) return 0;
    if (f->reset_after_ms < 0 || f->wait_ms < 0) return 0;
    if (f->wait_ms != 0 && (p->ci != 1 || nodelay || f->allowed == 0)) return 0;
    return 1;
}

static void test_fuzz(void) {
    rng r = {20240601};
    long long clock = T0;
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", T0));
    /* Fixed key types for the vectors to meet. */
    freeReplyObject(cmd(c, "SET fz:str hello"));
    freeReplyObject(cmd(c, "RPUSH fz:list a b"));
    freeReplyObject(cmd(c, "ZADD fz:zset 1700000000000000 x"));
    long long mismatches = 0, unchanged_bad = 0, pings_bad = 0, agree_bad = 0, leases_made = 0, released = 0;
    long long lease_states = 0;
    static argv_t batch[FUZZ_BATCH];
    for (int done = 0; done < FUZZ_VECTORS && !connection_lost; done += FUZZ_BATCH) {
        for (int i = 0; i < FUZZ_BATCH; i++) {
            argv_t *a = &batch[i];
            for (;;) {
                random_vector(&r, a, clock);
                /* An admitted BLOCK would hold the reply (up to wait_ms, possibly hours), a denied WAIT until its
                 * timeout: leave out the vectors that parse with either. */
                prediction p = {0};
                predict(a, "none", clock, &p);
                if (!(p.kind == P_SIX && p.holds)) break;
            }
            const char *key = a->argc > 1 ? a->v[1] : "";
            size_t klen = a->argc > 1 ? a->l[1] : 0;
            if (cmd_index(a) == V_CLOCK) key = "fz:0", klen = 4;
            redisAppendCommand(c, "TYPE %b", key, klen);
            redisAppendCommand(c, "DUMP %b", key, klen);
            redisAppendCommand(c, "PEXPIRETIME %b", key, klen);
            send_argv(a);
            redisAppendCommand(c, "DUMP %b", key, klen);
            redisAppendCommand(c, "PEXPIRETIME %b", key, klen);
            redisAppendCommand(c, "PING");
        }
        for (int i = 0; i < FUZZ_BATCH && !connection_lost; i++) {
            argv_t *a = &batch[i];
            redisReply *rep[7];
            for (int k = 0; k < 7; k++) rep[k] = get_reply();
            if (connection_lost) {
                CHECK(!"the connection survives every random vector");
                fprintf(stderr, "     last vectors in the batch include: %s\n", describe(a));
                break;
            }
            fuzz_tried++;
            const char *keytype = rep[0]->type == REDIS_REPLY_STATUS ? rep[0]->str : "?";
            int ci = cmd_index(a);
            prediction p = {0};
            predict(a, keytype, clock, &p);
            redisReply *x = rep[3];
            int ok, unchanged = x->type == REDIS_REPLY_ERROR;
            rl_result f;
            const redisReply *lease;
            switch (p.kind) {
            case P_SIX:
                f = reply_fields(a, x, &lease);
                ok = f.ok;
                if (ok && (!six_agrees(&p, &f) || (ci == V_ACQUIRE || ci == V_ACQUIRE_RO ? !lease_agrees(a, &p, &f, lease) : 0)) &&
                    agree_bad++ < 5)
                    fprintf(stderr, "     %s -> %s, lease %s\n", describe(a), fields(&f), lease ? lease->str : "(nil)");
                unchanged |= p.dry || (ci == V_ACQUIRE && f.allowed == 0); /* a denial writes nothing */
                leases_made += lease != NULL;
                break;
            case P_OK:
                ok = reply_is_status(x, "OK");
                lease_states += ok && ci == V_SETSTATE;
                break;
            case P_INT: ok = x->type == REDIS_REPLY_INTEGER && x->integer == clock; break;
            case P_ZERO_ONE:
                ok = x->type == REDIS_REPLY_INTEGER && (x->integer == 0 || x->integer == 1);
                unchanged |= ok && x->integer == 0; /* no such lease: nothing written */
                released += ok && x->integer == 1;
                break;
            case P_LEASES:
                ok = leases_well_formed(x);
                unchanged = 1;
                break;
            case P_SETSTATE_VALID_OR_INVALID:
                ok = (x->type == REDIS_REPLY_ERROR && strcmp(x->str, "ERR state: not a valid state of this kind") == 0) ||
                     ((x->type == REDIS_REPLY_STATUS || x->type == REDIS_REPLY_ERROR) && strcmp(x->str, p.error) == 0);
                break;
            default:
                ok = x->type == REDIS_REPLY_ERROR && strcmp(x->str, p.error) == 0 && printable(x->str, x->len);
                break;
            }
            if (x->type == REDIS_REPLY_ERROR) fuzz_errors++;
            else fuzz_ok++;
            if (!ok && mismatches++ < 10)
                fprintf(stderr, "     %s (key type %s)\n     got: %s\n     expected: %s\n", describe(a), keytype,
                        x->type == REDIS_REPLY_ERROR || x->type == REDIS_REPLY_STATUS ? x->str
                        : x->type == REDIS_REPLY_ARRAY                                ? "(array)"
                        : x->type == REDIS_REPLY_INTEGER                              ? "(integer)"
                                                                                      : "(other)",
                        p.kind == P_SIX ? "(six-field reply)" : p.kind == P_INT ? "(the clock)"
                        : p.kind == P_ZERO_ONE ? "(0 or 1)" : p.kind == P_LEASES ? "(the leases)" : p.error);
            if (ci == V_CLOCK && ok) clock = p.clock_after;
            /* An error, a DRYRUN, a read-only call, a denied RL.ACQUIRE, or a release or renewal that found
             * nothing changes nothing of the key. */
            if (unchanged && ci != V_CLOCK) {
                int same = rep[1]->type == rep[4]->type && rep[1]->len == rep[4]->len &&
                           (rep[1]->len == 0 || memcmp(rep[1]->str, rep[4]->str, rep[1]->len) == 0) &&
                           rep[2]->integer == rep[5]->integer;
                if (!same && unchanged_bad++ < 5) fprintf(stderr, "     changed the key: %s\n", describe(a));
            }
            if (!reply_is_status(rep[6], "PONG")) pings_bad++;
            for (int k = 0; k < 7; k++) freeReplyObject(rep[k]);
        }
    }
    CHECK_EQ(mismatches, 0);
    CHECK_EQ(agree_bad, 0);
    CHECK_EQ(unchanged_bad, 0);
    CHECK_EQ(pings_bad, 0);
    CHECK(fuzz_errors > 3000 && fuzz_ok > 3000);
    /* the lease paths were taken, not only their errors */
    CHECK(leases_made > 100 && released > 20 && lease_states > 20);
    printf("  random lease vectors: %lld leases taken, %lld released or renewed, %lld lease states set\n", leases_made,
           released, lease_states);
}

/* --- policies: RL.POLICY, RL.CHECK and RL.CHECK_RO -----------------------------------------------------------
 * Two policies stand through the whole program, bp (five limits, a sliding log and a concurrency limit among
 * them) and bp2 (SHADOW, one limit), with bi:chk and a binary-named key checked under bp (setup_keys): each holds
 * a log and a lease, which no bad input may change. snapshot() watches the policies too (LIST, GET, INFO's
 * counters), so a bad RL.POLICY SET that added or replaced a policy, or a bad RL.CHECK that counted a call,
 * is a change. The bad RL.POLICY SETs use bp's name, so one that went through would replace it. */

#define POLICY_NAME_ERR "ERR name: must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -"
#define LIMIT_NAME_ERR "limit_name: must be 1 to 32 characters of A-Z, a-z, 0-9, _ and -"
#define LIMIT_COUNT_ERR "ERR LIMIT: a policy needs 1 to 16 limits"
#define KIND_ERR "kind must be TOKEN, LEAKY, WINDOW, SLIDINGLOG, SMOOTH, CONCURRENCY or QUOTA"
#define ID_ERR "ID: not in a policy (each lease RL.CHECK takes gets an id of its own, in the reply)"
#define REFUND_ERR "REFUND: not in a policy (RL.CHECK takes; give back with the limiter's own command)"
#define ATMOST_ERR "ATMOST: not an option of RL.ALL, which takes each limit's whole COST or none"
#define MAX_POLICY_LIMITS 16
#define BP_LIMITS 5
#define BP_LEASES (1u << 4) /* its limits whose reply has a lease: the CONCURRENCY one */
#define BP_SPEC                                                                                               \
    "LIMIT sec TOKEN 10 1 1000 LIMIT min WINDOW 5 60000 LIMIT pol LEAKY 10 1 1000 NODELAY LIMIT log SLIDINGLOG 5 " \
    "60000 LIMIT jobs CONCURRENCY 3 100000000"
#define BP2_SPEC "SHADOW LIMIT day QUOTA 100 DAY"

/* Valid clauses of every kind, as RL.POLICY GET answers them. */
static const char *const good_specs[] = {
    "TOKEN 10 1 1000",
    "WINDOW 5 60000 FIXED",
    "LEAKY 10 1 1000 NODELAY",
    "SMOOTH 2.5 WARMUP 1000",
    "QUOTA 100 DAY OFFSET 60",
    "TOKEN 5 1 1000 LOCKOUT 1000 BACKOFF 2 MAXLOCK 10000 FORGIVE 60000",
    "WINDOW 10 1000 SUBWINDOWS 4 COST 2",
    "LEAKY 3 1 100 FORCE NODELAY",
    "TOKEN 1000000000000 1000000000000 1000 COST 0 FORCE INTERVAL",
    "SLIDINGLOG 5 1000 MINGAP 10 COST 2",
    "CONCURRENCY 3 10000 COST 2",
};
#define NGOOD ((int)(sizeof good_specs / sizeof good_specs[0]))

/* "RL.POLICY SET name" */
static void a_policy_set(argv_t *a, const char *name) {
    a_reset(a);
    a_words(a, "RL.POLICY SET");
    a_str(a, name);
}

/* Limits from..to-1 of a valid policy: "LIMIT l<k> <a good spec>". */
static void a_good_limits(argv_t *a, int from, int to) {
    for (int k = from; k < to; k++) {
        char name[16];
        snprintf(name, sizeof name, "l%d", k);
        a_str(a, "LIMIT");
        a_str(a, name);
        a_words(a, good_specs[k % NGOOD]);
    }
}

static void expect_line_error_at(const char *line, const char *expected, const char *file, int at) {
    argv_t a;
    a_reset(&a);
    a_words(&a, line);
    expect_error_at(&a, expected, file, at);
}
#define expect_line_error(line, expected) expect_line_error_at(line, expected, __FILE__, __LINE__)

/* The names RL.POLICY refuses (for a policy, and as a limit's name), and the ones it takes at the edges. */
static const bin bad_policy_names[] = {
    B(""), B("a.b"), B("a b"), B("a:b"), B("a\0b"), B("\xff"), B("\r\n"), B("bp "), B(" bp"), B("\xc3\xa9"),
    B("a/b"), B("*"), B("'"), B("pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp"), /* 65 */
};
static const bin bad_limit_names[] = {
    B(""), B("a.b"), B("a b"), B("\0"), B("\xff"), B("x:y"), B("'"), B("\r\n"),
    B("lllllllllllllllllllllllllllllllll"), /* 33 */
};

/* Subcommands and their counts of arguments: RL.POLICY is a container, Redis answers for it. */
static void test_policy_arity(void) {
    static const struct {
        const char *line, *error;
    } cases[] = {
        {"RL.POLICY", "ERR wrong number of arguments for 'rl.policy' command"},
        {"RL.POLICY SET", "ERR wrong number of arguments for 'rl.policy|set' command"},
        {"rl.policy sEt", "ERR wrong number of arguments for 'rl.policy|set' command"},
        {"RL.POLICY GET", "ERR wrong number of arguments for 'rl.policy|get' command"},
        {"RL.POLICY GET bp bp2", "ERR wrong number of arguments for 'rl.policy|get' command"},
        {"RL.POLICY DEL", "ERR wrong number of arguments for 'rl.policy|del' command"},
        {"RL.POLICY DEL bp bp2", "ERR wrong number of arguments for 'rl.policy|del' command"},
        {"RL.POLICY DEL bp LIMIT a TOKEN 1 1 1", "ERR wrong number of arguments for 'rl.policy|del' command"},
        {"RL.POLICY LIST bp", "ERR wrong number of arguments for 'rl.policy|list' command"},
        {"RL.POLICY FLUSH bp", "ERR wrong number of arguments for 'rl.policy|flush' command"},
        {"RL.POLICY FLUSH ASYNC", "ERR wrong number of arguments for 'rl.policy|flush' command"},
        {"RL.POLICY FOO", "ERR unknown subcommand 'FOO'. Try RL.POLICY HELP."},
        {"RL.POLICY SETX bp LIMIT a TOKEN 1 1 1", "ERR unknown subcommand 'SETX'. Try RL.POLICY HELP."},
        {"RL.POLICY bp SET LIMIT a TOKEN 1 1 1", "ERR unknown subcommand 'bp'. Try RL.POLICY HELP."},
        {"RL.POLICY LIMIT", "ERR unknown subcommand 'LIMIT'. Try RL.POLICY HELP."},
        {"RL.POLICY SET bp", LIMIT_COUNT_ERR},
        {"RL.POLICY SET bp SHADOW", LIMIT_COUNT_ERR},
        {"RL.POLICY SET bp shadow", LIMIT_COUNT_ERR},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) expect_line_error(cases[i].line, cases[i].error);
    argv_t a;
    a_reset(&a);
    a_words(&a, "RL.POLICY");
    a_bin(&a, "", 0);
    expect_error(&a, "ERR unknown subcommand ''. Try RL.POLICY HELP.");
}

/* The policy's name is read first: a bad one is the error whatever follows. */
static void test_policy_names(void) {
    for (size_t i = 0; i < sizeof bad_policy_names / sizeof bad_policy_names[0]; i++) {
        static const char *const rests[] = {"LIMIT a TOKEN 10 1 1000", "FOO", "", "SHADOW LIMIT a BUCKET", "LIMIT"};
        for (size_t k = 0; k < sizeof rests / sizeof rests[0]; k++) {
            argv_t a;
            a_reset(&a);
            a_words(&a, "RL.POLICY SET");
            a_bin(&a, bad_policy_names[i].p, bad_policy_names[i].n);
            a_words(&a, rests[k]);
            expect_error(&a, POLICY_NAME_ERR);
        }
    }
}

/* What may stand where a LIMIT is expected, limits' names, their count. */
static void test_policy_structure(void) {
    static const struct {
        const char *line, *error;
    } cases[] = {
        {"RL.POLICY SET bp FOO", "ERR 'FOO': expected SHADOW or LIMIT limit_name kind ..."},
        {"RL.POLICY SET bp TOKEN 10 1 1000", "ERR 'TOKEN': expected SHADOW or LIMIT limit_name kind ..."},
        {"RL.POLICY SET bp a TOKEN 10 1 1000", "ERR 'a': expected SHADOW or LIMIT limit_name kind ..."},
        {"RL.POLICY SET bp SHADOW SHADOW LIMIT a TOKEN 10 1 1000", "ERR 'SHADOW': expected LIMIT limit_name kind ..."},
        {"RL.POLICY SET bp SHADOW FOO", "ERR 'FOO': expected LIMIT limit_name kind ..."},
        {"RL.POLICY SET bp LIMITS a TOKEN 10 1 1000", "ERR 'LIMITS': expected SHADOW or LIMIT limit_name kind ..."},
        {"RL.POLICY SET bp LIMIT a TOKEN 10 1 1000 SHADOW", "ERR LIMIT 1 (a): 'SHADOW' is not an option of TOKEN"},
        {"RL.POLICY SET bp LIMIT a TOKEN 10 1 1000 FOO", "ERR LIMIT 1 (a): 'FOO' is not an option of TOKEN"},
        {"RL.POLICY SET bp LIMIT a TOKEN 10 1 1000 10", "ERR LIMIT 1 (a): '10' is not an option of TOKEN"},
        {"RL.POLICY SET bp LIMIT a TOKEN 10 1 1000 a TOKEN 1 1 1", "ERR LIMIT 1 (a): 'a' is not an option of TOKEN"},
        {"RL.POLICY SET bp LIMIT", "ERR LIMIT 1: " LIMIT_NAME_ERR},
        {"RL.POLICY SET bp SHADOW LIMIT", "ERR LIMIT 1: " LIMIT_NAME_ERR},
        {"RL.POLICY SET bp LIMIT a TOKEN 10 1 1000 LIMIT", "ERR LIMIT 2: " LIMIT_NAME_ERR},
        {"RL.POLICY SET bp LIMIT a", "ERR LIMIT 1 (a): " KIND_ERR},
        {"RL.POLICY SET bp LIMIT a LIMIT", "ERR LIMIT 1 (a): " KIND_ERR},
        {"RL.POLICY SET bp LIMIT a LIMIT b TOKEN 10 1 1000", "ERR LIMIT 1 (a): " KIND_ERR},
        {"RL.POLICY SET bp LIMIT a BUCKET 10 1 1000", "ERR LIMIT 1 (a): " KIND_ERR},
        {"RL.POLICY SET bp LIMIT a 10 1 1000", "ERR LIMIT 1 (a): " KIND_ERR},
        {"RL.POLICY SET bp LIMIT a TOKENS 10 1 1000", "ERR LIMIT 1 (a): " KIND_ERR},
        {"RL.POLICY SET bp LIMIT a ALL 10 1 1000", "ERR LIMIT 1 (a): " KIND_ERR},
        {"RL.POLICY SET bp LIMIT a TOKEN 10 1 1000 LIMIT b", "ERR LIMIT 2 (b): " KIND_ERR},
        {"RL.POLICY SET bp LIMIT a TOKEN 10 1 1000 LIMIT a WINDOW 5 1000",
         "ERR LIMIT 2 (a): limit name used twice (LIMIT 1 has it)"},
        {"RL.POLICY SET bp LIMIT a TOKEN 10 1 1000 LIMIT b TOKEN 10 1 1000 LIMIT b BUCKET",
         "ERR LIMIT 3 (b): limit name used twice (LIMIT 2 has it)"},
        {"RL.POLICY SET bp LIMIT a TOKEN 10 1 1000 LIMIT b TOKEN 10 1 1000 LIMIT a",
         "ERR LIMIT 3 (a): limit name used twice (LIMIT 1 has it)"},
        /* REFUND anywhere in a clause, whatever else is wrong there */
        {"RL.POLICY SET bp LIMIT a TOKEN 10 1 1000 REFUND 1", "ERR LIMIT 1 (a): " REFUND_ERR},
        {"RL.POLICY SET bp LIMIT a TOKEN 10 1 1000 refund", "ERR LIMIT 1 (a): " REFUND_ERR},
        {"RL.POLICY SET bp LIMIT a TOKEN x 1 1000 FOO REFUND 1", "ERR LIMIT 1 (a): " REFUND_ERR},
        {"RL.POLICY SET bp LIMIT a WINDOW 5 1000 LIMIT b TOKEN 10 1 1000 COST REFUND", "ERR LIMIT 2 (b): " REFUND_ERR},
        {"RL.POLICY SET bp LIMIT a BUCKET REFUND", "ERR LIMIT 1 (a): " REFUND_ERR},
        {"RL.POLICY SET bp LIMIT a TOKEN 10 1 1000 ATMOST", "ERR LIMIT 1 (a): " ATMOST_ERR},
        {"RL.POLICY SET bp LIMIT a WINDOW 5 1000 COST 2 ATMOST", "ERR LIMIT 1 (a): " ATMOST_ERR},
        /* a CONCURRENCY clause's ID: refused once the clause reads well (its own errors first), REFUND before it */
        {"RL.POLICY SET bp LIMIT a TOKEN 10 1 1000 LIMIT jobs CONCURRENCY 3 10000 ID x", "ERR LIMIT 2 (jobs): " ID_ERR},
        {"RL.POLICY SET bp LIMIT jobs CONCURRENCY 3 10000 id job-7 COST 2", "ERR LIMIT 1 (jobs): " ID_ERR},
        {"RL.POLICY SET bp LIMIT jobs CONCURRENCY 3 10000 COST 2 ID LIMIT LIMIT b TOKEN 1 1 1", "ERR LIMIT 1 (jobs): " ID_ERR},
        {"RL.POLICY SET bp SHADOW LIMIT jobs CONCURRENCY 10000 1000000000000 ID 1 LIMIT log SLIDINGLOG 5 1000",
         "ERR LIMIT 1 (jobs): " ID_ERR},
        {"RL.POLICY SET bp LIMIT jobs CONCURRENCY 0 10000 ID x", "ERR LIMIT 1 (jobs): limit: must be an integer between 1 and 10000"},
        {"RL.POLICY SET bp LIMIT jobs CONCURRENCY 3 10000 ID x COST 0", "ERR LIMIT 1 (jobs): COST: must be an integer between 1 and 10000"},
        {"RL.POLICY SET bp LIMIT jobs CONCURRENCY 3 10000 ID x FOO", "ERR LIMIT 1 (jobs): 'FOO' is not an option of CONCURRENCY"},
        {"RL.POLICY SET bp LIMIT jobs CONCURRENCY 3 10000 ID x ID x", "ERR LIMIT 1 (jobs): ID: given more than once"},
        {"RL.POLICY SET bp LIMIT jobs CONCURRENCY 3 10000 ID", "ERR LIMIT 1 (jobs): ID: needs a value"},
        {"RL.POLICY SET bp LIMIT jobs CONCURRENCY 3 10000 ID x REFUND 1", "ERR LIMIT 1 (jobs): " REFUND_ERR},
        {"RL.POLICY SET bp LIMIT jobs CONCURRENCY 3 10000 ID x WAIT 5", "ERR LIMIT 1 (jobs): 'WAIT' is not an option of CONCURRENCY"},
        {"RL.POLICY SET bp LIMIT a TOKEN 10 1 1000 ID x", "ERR LIMIT 1 (a): 'ID' is not an option of TOKEN"},
        {"RL.POLICY SET bp LIMIT log SLIDINGLOG 5 1000 ID x", "ERR LIMIT 1 (log): 'ID' is not an option of SLIDINGLOG"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) expect_line_error(cases[i].line, cases[i].error);
    /* Binary junk where LIMIT is expected, and after a clause: shown as RL.ALL shows it. */
    static const struct {
        bin arg;
        const char *shown;
    } junk[] = {{B("\r\n\x01'junk"), "????junk"}, {B("\xff\xfe"), "??"}, {B(""), ""}, {B("LIMIT\0"), "LIMIT?"},
                {B("BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"), "BBBBBBBBBBBBBBBBBBBBBBBBBBBBB..."}};
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++) {
        char expected[200];
        argv_t a;
        a_policy_set(&a, "bp");
        a_bin(&a, junk[i].arg.p, junk[i].arg.n);
        snprintf(expected, sizeof expected, "ERR '%s': expected SHADOW or LIMIT limit_name kind ...", junk[i].shown);
        expect_error(&a, expected);
        a_policy_set(&a, "bp");
        a_good_limits(&a, 0, 2);
        a_bin(&a, junk[i].arg.p, junk[i].arg.n);
        snprintf(expected, sizeof expected, "ERR LIMIT 2 (l1): '%s' is not an option of WINDOW", junk[i].shown);
        expect_error(&a, expected);
    }
    /* Bad limit names at the first, second and last place. */
    static const int places[] = {1, 2, MAX_POLICY_LIMITS};
    for (size_t i = 0; i < sizeof bad_limit_names / sizeof bad_limit_names[0]; i++)
        for (size_t p = 0; p < sizeof places / sizeof places[0]; p++) {
            argv_t a;
            a_policy_set(&a, "bp");
            a_good_limits(&a, 0, places[p] - 1);
            a_str(&a, "LIMIT");
            a_bin(&a, bad_limit_names[i].p, bad_limit_names[i].n);
            a_words(&a, "TOKEN 10 1 1000");
            char expected[160];
            snprintf(expected, sizeof expected, "ERR LIMIT %d: %s", places[p], LIMIT_NAME_ERR);
            expect_error(&a, expected);
        }
    /* The count: 17 limits, valid or not (the count is checked before the 17th is read), and one twice. */
    argv_t a;
    a_policy_set(&a, "bp");
    a_good_limits(&a, 0, MAX_POLICY_LIMITS + 1);
    expect_error(&a, LIMIT_COUNT_ERR);
    a_policy_set(&a, "bp");
    a_good_limits(&a, 0, MAX_POLICY_LIMITS);
    a_words(&a, "LIMIT l0 BUCKET");
    expect_error(&a, LIMIT_COUNT_ERR);
    a_policy_set(&a, "bp");
    a_good_limits(&a, 0, MAX_POLICY_LIMITS - 1);
    a_words(&a, "LIMIT l3 TOKEN 1 1 1");
    expect_error(&a, "ERR LIMIT 16 (l3): limit name used twice (LIMIT 4 has it)");
    /* More words than any policy of 16 limits has: refused before they are read. */
    a_policy_set(&a, "bp");
    a_good_limits(&a, 0, 1);
    while (a.argc < 3 + 460) a_str(&a, "x");
    expect_error(&a, "ERR LIMIT*");
}

/* One bad clause, at the first, second or last place (rot chooses), with a valid limit after it unless the
 * clause must end the command (an option missing its value, too few numbers): "ERR LIMIT i (bad): rest". */
static void policy_spec_case_at(const bin *spec, int nspec, const char *rest, int last, int *rot, const char *file,
                                int line) {
    static const int places[] = {1, 2, MAX_POLICY_LIMITS};
    int place = places[(*rot)++ % 3];
    argv_t a;
    a_policy_set(&a, "bp");
    a_good_limits(&a, 0, place - 1);
    a_words(&a, "LIMIT bad");
    for (int i = 0; i < nspec; i++) a_bin(&a, spec[i].p, spec[i].n);
    if (!last && place < MAX_POLICY_LIMITS) a_good_limits(&a, place, place + 1);
    char expected[320];
    snprintf(expected, sizeof expected, "ERR LIMIT %d (bad): %s", place, rest);
    expect_error_at(&a, expected, file, line);
}
#define policy_spec_case(spec, nspec, rest, last, rot) policy_spec_case_at(spec, nspec, rest, last, rot, __FILE__, __LINE__)

/* A clause's spec as words, with one word replaced (at, by with). */
static int spec_words(bin *out, const char *words, int at, bin with) {
    static char tmp[8][256];
    static int next;
    char *buf = tmp[next++ % 8];
    snprintf(buf, 256, "%s", words);
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save), n++)
        out[n] = n == at ? with : (bin){t, strlen(t)};
    return n;
}

/* 1 if a clause never takes the option its command takes (the read-only form's syntax, and no WAIT). */
static int clause_refuses(const char *option) {
    return strcasecmp(option, "DRYRUN") == 0 || strcasecmp(option, "BLOCK") == 0 || strcasecmp(option, "WAIT") == 0;
}

/* Every number and option of the TOKEN, LEAKY, WINDOW, SLIDINGLOG and CONCURRENCY clauses (their commands' tables:
 * cmds[]) bad, at each place; then the other kinds' and the clause-wide errors. */
static void test_policy_specs(void) {
    int rot = 0;
    char rest[200], words[128];
    bin spec[40];
    static const char *const kinds[NCMDS] = {"TOKEN", "LEAKY", "WINDOW", "SLIDINGLOG", "CONCURRENCY"};
    for (int ci = 0; ci < NCMDS; ci++) {
        const cmddef *d = &cmds[ci];
        const char *kind = kinds[ci];
        snprintf(words, sizeof words, "%s %s", kind, d->valid);
        for (int p = 0; p < d->nparams; p++) {
            range_text(rest, sizeof rest, d->pname[p], 1, d->pmax[p]);
            for (int b = -2; b < NBAD; b++) {
                char over[32];
                snprintf(over, sizeof over, "%lld", d->pmax[p] + 1);
                bin bad = b == -2 ? (bin)B("0") : b == -1 ? (bin){over, strlen(over)} : bad_numbers[b];
                int n = spec_words(spec, words, 1 + p, bad);
                policy_spec_case(spec, n, rest + 4, 0, &rot);
            }
            /* too few numbers (the kind and p of them), at the end */
            spec_words(spec, words, -1, (bin){0});
            snprintf(rest, sizeof rest, "%s needs %d numbers", kind, d->nparams);
            policy_spec_case(spec, 1 + p, rest, 1, &rot);
        }
        /* too few before another LIMIT: that word is read as the last number */
        spec_words(spec, words, d->nparams, (bin)B("LIMIT"));
        spec[d->nparams + 1] = (bin)B("next");
        range_text(rest, sizeof rest, d->pname[d->nparams - 1], 1, d->pmax[d->nparams - 1]);
        policy_spec_case(spec, d->nparams + 2, rest + 4, 1, &rot);
        int n = spec_words(spec, words, -1, (bin){0});
        /* COST: its range in a clause (its command's: 0 .. 10^12, 0 .. 10^5 for a log, 1 .. 10^4 for leases), its
         * value missing, given twice */
        const optdef *cost = find_opt(d, "COST");
        char over[32];
        snprintf(over, sizeof over, "%lld", cost->max + 1);
        range_text(rest, sizeof rest, "COST", cost->min, cost->max);
        for (int b = -2; b < NBAD; b++) {
            if (b == -2 && cost->min == 0) continue;
            spec[n] = (bin)B("COST");
            spec[n + 1] = b == -2 ? (bin)B("0") : b == -1 ? (bin){over, strlen(over)} : bad_numbers[b];
            policy_spec_case(spec, n + 2, rest + 4, 0, &rot);
        }
        spec[n] = (bin)B("COST");
        spec[n + 1] = (bin)B("LIMIT"); /* the value is never read as the next clause */
        policy_spec_case(spec, n + 2, rest + 4, 1, &rot);
        policy_spec_case(spec, n + 1, "COST: needs a value", 1, &rot);
        spec[n + 1] = (bin)B("1");
        spec[n + 2] = (bin)B("cost");
        spec[n + 3] = (bin)B("2");
        policy_spec_case(spec, n + 4, "COST: given more than once", 0, &rot);
        /* Options no clause takes (the read-only form's syntax: no DRYRUN, BLOCK, WAIT), others' options, junk. */
        static const char *const foreign[] = {"DRYRUN", "BLOCK", "WAIT", "ID", "MINGAP", "PXAT", "SHADOW", "WARMUP",
                                              "OFFSET", "TOKEN", "FOO", "dryrun"};
        for (size_t f = 0; f < sizeof foreign / sizeof foreign[0]; f++) {
            if (find_opt(d, foreign[f]) && !clause_refuses(foreign[f])) continue;
            spec[n] = (bin){foreign[f], strlen(foreign[f])};
            spec[n + 1] = (bin)B("100");
            snprintf(rest, sizeof rest, "'%s' is not an option of %s", foreign[f], kind);
            policy_spec_case(spec, n + 2, rest, 0, &rot);
        }
        /* the kind's own options with a number (MINGAP): out of range, missing, given twice; ID's bytes (refused
         * in a policy whatever they are, once they read as an id) */
        for (int o = 0; o < d->nopts; o++) {
            const optdef *op = &d->opts[o];
            if (strcmp(op->name, "COST") == 0 || clause_refuses(op->name) || !op->takes_value) continue;
            spec[n] = (bin){op->name, strlen(op->name)};
            if (op->takes_value == 2) {
                static char id65[65];
                memset(id65, 'i', sizeof id65);
                const bin bad_ids[] = {B(""), {id65, 65}}, good_ids[] = {B("\0\r\n\xff"), {id65, 64}, B("LIMIT")};
                snprintf(rest, sizeof rest, "%s: must be 1 to %lld bytes", op->name, op->max);
                for (size_t k = 0; k < 2; k++) {
                    spec[n + 1] = bad_ids[k];
                    policy_spec_case(spec, n + 2, rest, 0, &rot);
                }
                for (size_t k = 0; k < 3; k++) {
                    spec[n + 1] = good_ids[k];
                    policy_spec_case(spec, n + 2, ID_ERR, 0, &rot);
                }
            } else {
                snprintf(over, sizeof over, "%lld", op->max + 1);
                range_text(rest, sizeof rest, op->name, op->min, op->max);
                for (int b = -2; b < NBAD; b++) {
                    spec[n + 1] = b == -2 ? (bin)B("0") : b == -1 ? (bin){over, strlen(over)} : bad_numbers[b];
                    policy_spec_case(spec, n + 2, rest + 4, 0, &rot);
                }
            }
            snprintf(rest, sizeof rest, "%s: needs a value", op->name);
            policy_spec_case(spec, n + 1, rest, 1, &rot);
            spec[n + 1] = (bin)B("1");
            spec[n + 2] = spec[n];
            spec[n + 3] = (bin)B("2");
            snprintf(rest, sizeof rest, "%s: given more than once", op->name);
            policy_spec_case(spec, n + 4, rest, 0, &rot);
        }
    }
    /* Conflicts, the limiters' own checks, the other kinds. */
    static const struct {
        const char *words, *rest;
        int last;
    } cases[] = {
        {"WINDOW 5 1000 FIXED SLIDING", "SLIDING: cannot be combined with FIXED", 0},
        {"WINDOW 5 1000 sliding COST 1 fixed", "FIXED: cannot be combined with SLIDING", 0},
        {"WINDOW 5 1000 FIXED SUBWINDOWS 5", "SUBWINDOWS: cannot be combined with FIXED", 0},
        {"WINDOW 5 1000 SUBWINDOWS 1", "SUBWINDOWS: must be an integer between 2 and 60", 0},
        {"WINDOW 5 1000 SUBWINDOWS 61", "SUBWINDOWS: must be an integer between 2 and 60", 0},
        {"WINDOW 5 1000 SUBWINDOWS 7", "SUBWINDOWS: window_ms must be a multiple of n (1000 is not a multiple of 7)", 0},
        {"WINDOW 5 1000 SUBWINDOWS", "SUBWINDOWS: needs a value", 1},
        {"TOKEN 5 1 1000 INTERVAL INTERVAL", "INTERVAL: given more than once", 0},
        {"TOKEN 5 1 1000 FORCE ATMOST", "ATMOST: cannot be combined with FORCE", 0},
        {"TOKEN 5 1 1000 ATMOST FORCE", "FORCE: cannot be combined with ATMOST", 0},
        {"TOKEN 5 1 1000 FORCE FORCE", "FORCE: given more than once", 0},
        {"LEAKY 5 1 1000 FORCE", "FORCE: needs NODELAY (a shaping bucket queues requests: it has no debt, a policing one does)", 0},
        {"LEAKY 5 1 1000 NODELAY BLOCK", "'BLOCK' is not an option of LEAKY", 0},
        {"LEAKY 5 1 1000 ATMOST", "'ATMOST' is not an option of LEAKY", 0},
        {"TOKEN 5 1 1000 LOCKOUT 100 MAXLOCK 10", "MAXLOCK: must be at least LOCKOUT's ms", 0},
        {"TOKEN 5 1 1000 BACKOFF 2", "BACKOFF: needs LOCKOUT ms", 0},
        {"TOKEN 5 1 1000 LOCKOUT 0", "LOCKOUT: must be an integer between 1 and 1000000000000", 0},
        {"TOKEN 5 1 1000 LOCKOUT", "LOCKOUT: needs a value", 1},
        {"SMOOTH 0", "permits_per_second: must be a decimal number between 0.000001 and 1000000000", 0},
        {"SMOOTH 1.0000001", "permits_per_second: must be a decimal number between 0.000001 and 1000000000", 0},
        {"SMOOTH", "SMOOTH needs 1 numbers", 1},
        {"SMOOTH 1 COLDFACTOR 3", "COLDFACTOR: applies to the warm-up form only (needs WARMUP)", 0},
        {"SMOOTH 1 FORCE", "'FORCE' is not an option of SMOOTH", 0},
        {"SMOOTH 1 BLOCK", "'BLOCK' is not an option of SMOOTH", 0},
        {"SMOOTH 1 COST 0", "COST: must be an integer between 1 and 1000000000000", 0},
        {"SMOOTH 1 MAXWAIT -1", "MAXWAIT: must be an integer between 0 and 1000000000000", 0},
        {"SMOOTH 1 WARMUP 10 MAXBURST 10", "MAXBURST: cannot be combined with WARMUP", 0},
        {"QUOTA 5 YEAR", "period: must be DAY, WEEK or MONTH", 0},
        {"QUOTA 5 1", "period: must be DAY, WEEK or MONTH", 0},
        {"QUOTA 5", "QUOTA needs 2 arguments", 1},
        {"QUOTA 0 DAY", "limit: must be an integer between 1 and 1000000000000", 0},
        {"QUOTA 5 DAY OFFSET 841", "OFFSET: must be an integer between -840 and 840", 0},
        {"QUOTA 5 DAY OFFSET -841", "OFFSET: must be an integer between -840 and 840", 0},
        {"QUOTA 5 DAY ATMOST", "'ATMOST' is not an option of QUOTA", 0},
        {"SLIDINGLOG 0 1000", "limit: must be an integer between 1 and 100000", 0},
        {"SLIDINGLOG 5 1000 FOO", "'FOO' is not an option of SLIDINGLOG", 0},
        {"SLIDINGLOG 5 1000 ATMOST", "'ATMOST' is not an option of SLIDINGLOG", 0},
        {"SLIDINGLOG 5 1000 FORCE FORCE", "FORCE: given more than once", 0},
        {"SLIDINGLOG 5 1000 MINGAP 10 LOCKOUT 100 MAXLOCK 10", "MAXLOCK: must be at least LOCKOUT's ms", 0},
        {"SLIDINGLOG 5 1000 FORGIVE 10", "FORGIVE: needs LOCKOUT ms", 0},
        {"SLIDINGLOG 5 1000 MINGAP LIMIT", "MINGAP: must be an integer between 1 and 1000000000000", 1},
        {"CONCURRENCY 3 1000 FORCE", "'FORCE' is not an option of CONCURRENCY", 0},
        {"CONCURRENCY 3 1000 ATMOST", "'ATMOST' is not an option of CONCURRENCY", 0},
        {"CONCURRENCY 3 1000 LOCKOUT 100", "'LOCKOUT' is not an option of CONCURRENCY", 0},
        {"CONCURRENCY 3 1000 ID a LOCKOUT 100", "'LOCKOUT' is not an option of CONCURRENCY", 0},
        {"CONCURRENCY 3 1000 COST 2 ID a", ID_ERR, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int n = spec_words(spec, cases[i].words, -1, (bin){0});
        policy_spec_case(spec, n, cases[i].rest, cases[i].last, &rot);
    }
}

/* Valid policies at the edges are taken, and RL.POLICY GET answers them as they were set; GET and DEL of names
 * no policy can have answer nil and 0, and change nothing. */
static void test_policy_valid(void) {
    static const char *const lines[] = {
        "RL.POLICY SET pv-1 LIMIT a TOKEN 10 1 1000",
        "rl.policy set pv-2 shadow limit a token 10 1 1000 Limit A window 5 1000",           /* names are case-sensitive */
        "RL.POLICY SET pv-3 LIMIT LIMIT TOKEN 10 1 1000 LIMIT SHADOW WINDOW 5 1000",         /* words as limits' names */
        "RL.POLICY SET SHADOW LIMIT TOKEN TOKEN 10 1 1000",
        "RL.POLICY SET AZaz09_- LIMIT AZaz09_- QUOTA 1000000000000 MONTH OFFSET -840 COST 1000000000000 FORCE",
        "RL.POLICY SET pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp "
        "LIMIT llllllllllllllllllllllllllllllll SMOOTH 1000000000 WARMUP 1000000000000 COLDFACTOR 10",
        "RL.POLICY SET pv-4 LIMIT w WINDOW 1000000000000 1000000000000 SUBWINDOWS 2 COST 0",
        "RL.POLICY SET pv-5 LIMIT t TOKEN 1000 1 1000000000", /* refill takes exactly 10^12 ms */
        "RL.POLICY SET pv-6 LIMIT log SLIDINGLOG 100000 1000000000000 MINGAP 1000000000000 COST 100000 FORCE LOCKOUT "
        "1000000000000 BACKOFF 2 MAXLOCK 1000000000000 FORGIVE 1000000000000",
        "RL.POLICY SET pv-7 LIMIT jobs CONCURRENCY 10000 1000000000000 COST 10000 LIMIT one concurrency 1 1 "
        "LIMIT log slidinglog 1 1 cost 0",
        "RL.POLICY SET pv-8 SHADOW LIMIT big CONCURRENCY 3 1000 COST 4 LIMIT Id SLIDINGLOG 5 1000 COST 6", /* never admit */
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        argv_t a;
        a_reset(&a);
        a_words(&a, lines[i]);
        redisReply *r = redisCommandArgv(c, a.argc, a.v, a.l);
        if (!CHECK(reply_is_status(r, "OK"))) fprintf(stderr, "     %s: %s\n", lines[i], r && r->str ? r->str : "?");
        if (r) freeReplyObject(r);
        /* GET: the words after the name, as sent */
        r = redisCommand(c, "RL.POLICY GET %b", a.v[2], a.l[2]);
        int same = r && r->type == REDIS_REPLY_ARRAY && (int)r->elements == a.argc - 3;
        for (int k = 0; same && k < a.argc - 3; k++)
            same = r->element[k]->len == a.l[3 + k] && memcmp(r->element[k]->str, a.v[3 + k], a.l[3 + k]) == 0;
        if (!CHECK(same)) fprintf(stderr, "     RL.POLICY GET after %s\n", lines[i]);
        if (r) freeReplyObject(r);
        cases_tried++;
    }
    /* 16 limits of 32-character names: taken, and checked (RL.CHECK_RO: sixteen replies) */
    argv_t a;
    a_policy_set(&a, "pv-16");
    for (int k = 0; k < MAX_POLICY_LIMITS; k++) {
        char name[40];
        snprintf(name, sizeof name, "limit-%02d-xxxxxxxxxxxxxxxxxxxxxxx", k); /* 32 */
        a_str(&a, "LIMIT");
        a_str(&a, name);
        a_words(&a, good_specs[k % NGOOD]);
    }
    redisReply *r = redisCommandArgv(c, a.argc, a.v, a.l);
    CHECK(reply_is_status(r, "OK"));
    freeReplyObject(r);
    r = cmd(c, "RL.CHECK_RO pv-16 pv:k COST 0");
    CHECK(r->type == REDIS_REPLY_ARRAY && r->elements == 3 + MAX_POLICY_LIMITS);
    freeReplyObject(r);
    static const char *const names[] = {"pv-1", "pv-2", "pv-3", "SHADOW", "AZaz09_-", "pv-4", "pv-5", "pv-6", "pv-7", "pv-8", "pv-16",
                                        "pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        CHECK_EQ(cmd_int(c, "RL.POLICY DEL %s", names[i]), 1);
        CHECK_EQ(cmd_int(c, "RL.POLICY DEL %s", names[i]), 0);
    }
    /* GET and DEL of any name answer, even one no policy can have; nothing changes. */
    for (size_t i = 0; i < sizeof bad_policy_names / sizeof bad_policy_names[0] + 2; i++) {
        bin name = i < sizeof bad_policy_names / sizeof bad_policy_names[0] ? bad_policy_names[i]
                   : i % 2                                                 ? (bin)B("nosuch")
                                                                           : (bin)B("BP");
        size_t l0, l1;
        char *before = snapshot(&l0);
        redisAppendCommand(c, "RL.POLICY GET %b", name.p, name.n);
        redisAppendCommand(c, "RL.POLICY DEL %b", name.p, name.n);
        redisReply *g = get_reply(), *d = get_reply();
        CHECK(g && g->type == REDIS_REPLY_NIL);
        CHECK(d && d->type == REDIS_REPLY_INTEGER && d->integer == 0);
        char *after = snapshot(&l1);
        CHECK(before && after && l0 == l1 && memcmp(before, after, l0) == 0);
        if (g) freeReplyObject(g);
        if (d) freeReplyObject(d);
        free(before);
        free(after);
        cases_tried++;
    }
}

/* RL.CHECK policy key [COST n] [DRYRUN] [WAIT timeout_ms], RL.CHECK_RO policy key [COST n]: the count of
 * arguments, the options (read before the policy is looked up), the policy, then the key. */
static void check_case_at(const char *cmdname, bin policy, bin key, const char *rest, bin extra, const char *expected,
                          const char *file, int line) {
    argv_t a;
    a_reset(&a);
    a_str(&a, cmdname);
    a_bin(&a, policy.p, policy.n);
    a_bin(&a, key.p, key.n);
    a_words(&a, rest);
    if (extra.p) a_bin(&a, extra.p, extra.n);
    expect_error_at(&a, expected, file, line);
}
#define check_case(cmdname, policy, key, rest, extra, expected) \
    check_case_at(cmdname, policy, key, rest, extra, expected, __FILE__, __LINE__)

static void test_check_errors(void) {
    static const char *const forms[] = {"RL.CHECK", "RL.CHECK_RO"};
    const bin none = {NULL, 0}, bp = B("bp"), chk = B("bi:chk"), missing = B(MISSING_KEY);
    for (int ro = 0; ro < 2; ro++) {
        const char *form = forms[ro], *lname = ro ? "rl.check_ro" : "rl.check";
        char arity[100], expected[200];
        snprintf(arity, sizeof arity, "ERR wrong number of arguments for '%s' command", lname);
        argv_t a;
        a_reset(&a);
        a_str(&a, form);
        expect_error(&a, arity);
        a_str(&a, "bp");
        expect_error(&a, arity);
        /* at most 24 words after the key: 24 are read (and COST found twice), 25 are too many */
        a_reset(&a);
        a_str(&a, form);
        a_words(&a, "bp bi:chk");
        while (a.argc < 3 + MAX_ARGS) a_words(&a, "COST 1");
        expect_error(&a, "ERR COST: given more than once");
        a_str(&a, "COST");
        expect_error(&a, arity);
        /* COST, WAIT: their ranges, values, repeats */
        range_text(expected, sizeof expected, "COST", 0, MAX_COUNT);
        for (int b = -1; b < NBAD; b++) {
            if (b >= 0 && bad_numbers[b].n == 1 && bad_numbers[b].p[0] == '0') continue;
            bin v = b < 0 ? (bin)B("1000000000001") : bad_numbers[b];
            check_case(form, bp, chk, "COST", v, expected);
            check_case(form, BV("nosuch"), missing, "COST", v, expected); /* before the policy is looked up */
        }
        check_case(form, bp, chk, "COST", none, "ERR COST: needs a value");
        check_case(form, bp, chk, "COST 1 cost 2", none, "ERR COST: given more than once");
        check_case(form, bp, chk, "COST DRYRUN", none, expected);
        if (!ro) {
            range_text(expected, sizeof expected, "WAIT", 1, MAX_COUNT);
            for (int b = -2; b < NBAD; b++) {
                bin v = b == -2 ? (bin)B("0") : b == -1 ? (bin)B("1000000000001") : bad_numbers[b];
                check_case(form, bp, chk, "WAIT", v, expected);
            }
            check_case(form, bp, chk, "WAIT", none, "ERR WAIT: needs a value");
            check_case(form, bp, chk, "DRYRUN WAIT 5 DRYRUN", none, "ERR DRYRUN: given more than once");
            check_case(form, bp, chk, "WAIT 5 WAIT 5", none, "ERR WAIT: given more than once");
        }
        /* options RL.CHECK does not take, and junk; shown as sent */
        static const char *const foreign[] = {"REFUND", "ATMOST", "FORCE", "BLOCK", "INTERVAL", "NODELAY", "FIXED",
                                              "LIMIT", "SHADOW", "ID", "PXAT", "LOCKOUT", "FOO", "cost1", "DRYRUN",
                                              "WAIT", "wait"};
        for (size_t f = 0; f < sizeof foreign / sizeof foreign[0]; f++) {
            int takes = !ro && (strcasecmp(foreign[f], "DRYRUN") == 0 || strcasecmp(foreign[f], "WAIT") == 0);
            if (takes) continue;
            snprintf(expected, sizeof expected, "ERR '%s': not an option of %s", foreign[f], lname);
            char rest[64];
            snprintf(rest, sizeof rest, "COST 1 %s 5", foreign[f]);
            check_case(form, bp, chk, rest, none, expected);
            check_case(form, BV("nosuch"), missing, rest + 7, none, expected);
        }
        check_case(form, bp, chk, "COST 1", BV("\r\n\x01'junk"), ro ? "ERR '????junk': not an option of rl.check_ro"
                                                                   : "ERR '????junk': not an option of rl.check");
        /* no such policy: its name shown as RL.ALL shows an argument (printable, at most 32 characters) */
        static const struct {
            bin name;
            const char *shown;
        } unknown[] = {{B("nosuch"), "nosuch"}, {B(""), ""}, {B("BP"), "BP"}, {B("bp "), "bp "},
                       {B("b\0p"), "b?p"}, {B("'\r\n"), "???"},
                       {B("pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp"),
                        "ppppppppppppppppppppppppppppp..."}};
        for (size_t u = 0; u < sizeof unknown / sizeof unknown[0]; u++) {
            snprintf(expected, sizeof expected, "ERR policy '%s': no such policy", unknown[u].shown);
            check_case(form, unknown[u].name, chk, "", none, expected);
            check_case(form, unknown[u].name, missing, "COST 0", none, expected);
            check_case(form, unknown[u].name, BV("bi:str"), "", none, expected); /* before the key's type */
        }
        /* the key: another type, another policy's */
        for (int k = 0; k < NTYPED; k++) {
            if (strcmp(typed_kinds[k], "rl-checks") == 0) continue;
            bin key = {typed_keys[k], strlen(typed_keys[k])};
            check_case(form, bp, key, "", none, WRONGTYPE);
            check_case(form, bp, key, "COST 1000000000000", none, WRONGTYPE);
            if (!ro) check_case(form, bp, key, "DRYRUN", none, WRONGTYPE);
            if (!ro) check_case(form, bp, key, "WAIT 100", none, WRONGTYPE); /* at once, not after the wait */
        }
        check_case(form, BV("bp2"), chk, "", none, "ERR key was checked under policy 'bp', not 'bp2'");
        check_case(form, BV("bp2"), CHK_BIN_KEY, "COST 0", none, "ERR key was checked under policy 'bp', not 'bp2'");
        if (!ro) check_case(form, BV("bp2"), chk, "WAIT 100", none, "ERR key was checked under policy 'bp', not 'bp2'");
    }
}

/* --- a policy-checked key's state: RL.SETSTATE key <'P' blob>, RESTORE, the RDB -------------------------------
 * The layout (module/bundle_type.c, docs/design.md): 'P' | policy_len (1) | policy | n (1) | n entries |
 * expire_at_ms (8, RL.SETSTATE only); an entry: tag (1) | name_len (1) | name | words (1) | has_rec (1) |
 * expire_ms (8) | [the lock record: 4 x 8] | words x 8 | a sliding log's (tag 'S', no words): nlog (4), then
 * nlog x (at_us 8, weight 8), newest first | a concurrency limit's leases (tag 'C', no words), as
 * module/lease_type.c writes them: the count (4), then each lease (end_us 8, acquired_us 8, units 4, id_len 1,
 * id); numbers little-endian. Valid blobs come from real keys (harvest: DUMP without compression holds the
 * RDB's encoding, the same bytes), then are crafted (richer logs and leases too) and mutated. A reference
 * reading of the layout (judge_blob) says, for any blob, which answers are right: the exact error for every
 * fault of the layout, a sliding log's and the leases' included, and "the module's call" (valid, or not a
 * valid state or lock) where only the limiter's algorithm can say. The same body in a DUMP payload (RESTORE)
 * must be taken exactly when RL.SETSTATE takes it: both read it with the one decoder. */

#define PB_MAX 4096
typedef struct pblob {
    unsigned char b[PB_MAX];
    size_t n;
} pblob;

typedef struct pentry {
    unsigned char tag;
    unsigned name_len, words, has_rec;
    char name[256];
    int64_t expire_ms, rec[4];
    uint64_t w[256];
    size_t tail_len;            /* 'S', 'C': the log's or the leases' bytes, as the layout has them */
    unsigned char tail[PB_MAX];
} pentry;

static void pb_byte(pblob *x, unsigned v) {
    if (x->n < PB_MAX) x->b[x->n++] = (unsigned char)v;
}
static void pb_le(pblob *x, uint64_t v) {
    for (int i = 0; i < 8; i++) pb_byte(x, (unsigned)(v >> (8 * i)) & 0xff);
}
static void pb_bytes(pblob *x, const void *p, size_t n) {
    for (size_t i = 0; i < n; i++) pb_byte(x, ((const unsigned char *)p)[i]);
}
static uint64_t pb_get(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static void pb_head(pblob *x, const char *policy, size_t len, unsigned n) {
    x->n = 0;
    pb_byte(x, 'P');
    pb_byte(x, (unsigned)len);
    pb_bytes(x, policy, len);
    pb_byte(x, n);
}

static void pb_entry(pblob *x, const pentry *e) {
    pb_byte(x, e->tag);
    pb_byte(x, e->name_len);
    pb_bytes(x, e->name, e->name_len);
    pb_byte(x, e->words);
    pb_byte(x, e->has_rec);
    pb_le(x, (uint64_t)e->expire_ms);
    if (e->has_rec)
        for (int k = 0; k < 4; k++) pb_le(x, (uint64_t)e->rec[k]);
    for (unsigned k = 0; k < e->words; k++) pb_le(x, e->w[k]);
    pb_bytes(x, e->tail, e->tail_len);
}

/* An entry's tail, crafted: numbers of `bytes` bytes (little-endian), bytes. */
static void pe_num(pentry *e, uint64_t v, int bytes) {
    for (int i = 0; i < bytes && e->tail_len < PB_MAX; i++) e->tail[e->tail_len++] = (unsigned char)(v >> (8 * i));
}
static void pe_bytes(pentry *e, const void *p, size_t n) {
    for (size_t i = 0; i < n && e->tail_len < PB_MAX; i++) e->tail[e->tail_len++] = ((const unsigned char *)p)[i];
}

/* A sliding log of n entries {at_us, weight}, newest first as given. */
static void pe_log(pentry *e, uint64_t nlog, int n, const int64_t (*log)[2]) {
    e->tail_len = 0;
    pe_num(e, nlog, 4);
    for (int i = 0; i < n; i++) {
        pe_num(e, (uint64_t)log[i][0], 8);
        pe_num(e, (uint64_t)log[i][1], 8);
    }
}

/* One lease after the count (pe_num(e, count, 4) first): its end, acquisition, units, id's length, id. */
typedef struct plead {
    int64_t end_us, acquired_us;
    uint64_t units; /* 4 bytes */
    unsigned id_len;
    const char *id; /* id_len bytes (they may run past the body: a lease cut short) */
} plead;
static void pe_leases(pentry *e, uint64_t count, int n, const plead *l) {
    e->tail_len = 0;
    pe_num(e, count, 4);
    for (int i = 0; i < n; i++) {
        pe_num(e, (uint64_t)l[i].end_us, 8);
        pe_num(e, (uint64_t)l[i].acquired_us, 8);
        pe_num(e, l[i].units, 4);
        pe_num(e, l[i].id_len, 1);
        pe_bytes(e, l[i].id, strlen(l[i].id) < l[i].id_len ? strlen(l[i].id) : l[i].id_len);
    }
}

/* The answers a reference reading allows. */
enum {
    PR_OK = 1 << 0,
    PR_SHORT = 1 << 1,    /* too short for a policy's state: RL.SETSTATE's cell form answers */
    PR_UNKNOWN = 1 << 2,  /* ... its length is a cell state's: the tag is unknown */
    PR_NOEXPIRY = 1 << 3,
    PR_POLICY = 1 << 4,
    PR_ENTRIES = 1 << 5,
    PR_TRUNC = 1 << 6,
    PR_KIND = 1 << 7,
    PR_NAME = 1 << 8,
    PR_EXPIRY = 1 << 9,
    PR_LOCK = 1 << 10,
    PR_NOTHING = 1 << 11,
    PR_STATE = 1 << 12,
    PR_TWICE = 1 << 13,
    PR_AFTER = 1 << 14,
    PR_NOWORDS = 1 << 15, /* a sliding log's or leases' entry with words */
    PR_SLOG = 1 << 16,
    PR_LEASES = 1 << 17,
    PR_NBITS = 18,
    PR_OTHER = 1 << 18 /* another form's: any error of it */
};

static const char *pr_text(int bit) {
    static const char *const text[PR_NBITS] = {
        "OK",
        "ERR state: must be 9 + 8n bytes, n from 1 to 68 (or use RL.SETSTATE key kind w0 [w1 ...] [PXAT unix_ms])",
        "ERR state: unknown kind",
        "ERR state: no valid expiry",
        "ERR state: not a valid policy state (bad policy name)",
        "ERR state: not a valid policy state (1 to 16 entries)",
        "ERR state: not a valid policy state (truncated)",
        "ERR state: not a valid policy state (unknown kind)",
        "ERR state: not a valid policy state (bad limit name)",
        "ERR state: not a valid policy state (bad expiry)",
        "ERR state: not a valid policy state (not a valid lock)",
        "ERR state: not a valid policy state (an entry with nothing)",
        "ERR state: not a valid policy state (not a valid state of its kind)",
        "ERR state: not a valid policy state (a limit name twice)",
        "ERR state: not a valid policy state (bytes after the entries)",
        "ERR state: not a valid policy state (a sliding log or leases have no words)",
        "ERR state: not a valid policy state (not a valid sliding log)",
        "ERR state: not a valid policy state (not valid leases)",
    };
    return text[bit];
}

/* Which of the answers the reply is (-1: none of them). */
static int pr_of(const redisReply *r) {
    if (!r || (r->type != REDIS_REPLY_STATUS && r->type != REDIS_REPLY_ERROR)) return -1;
    for (int bit = 0; bit < PR_NBITS; bit++)
        if (strcmp(r->str, pr_text(bit)) == 0 && (bit == 0) == (r->type == REDIS_REPLY_STATUS)) return bit;
    return -1;
}

static int name_ok(const unsigned char *s, size_t len, size_t max) {
    if (len < 1 || len > max) return 0;
    for (size_t i = 0; i < len; i++)
        if (!isalnum(s[i]) || s[i] > 0x7f) {
            if (s[i] != '_' && s[i] != '-') return 0;
        }
    return 1;
}

#define MAX_ENTRY_EXPIRE_MS (MAX_TIME_MS * 4)
#define MAX_TIME_US (MAX_TIME_MS * 1000)

static uint64_t le_get(const unsigned char *p, int bytes) {
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

/* A sliding log as the layout allows it: newest first (equal times allowed), each weight 1 to MAX_SLOG + 1,
 * each time in [0, MAX_TIME_US), at most MAX_SLOG + 1 units in all. */
static int log_ok(const unsigned char *q, int64_t n) {
    int64_t units = 0, newer = 0;
    for (int64_t i = 0; i < n; i++, q += 16) {
        int64_t at = (int64_t)le_get(q, 8), weight = (int64_t)le_get(q + 8, 8);
        if (weight < 1 || weight > MAX_SLOG + 1 || at < 0 || at >= MAX_TIME_US || (i > 0 && at > newer)) return 0;
        newer = at;
        units += weight;
    }
    return units <= MAX_SLOG + 1;
}

/* Leases as module/lease_type.c reads them from left bytes at q: the count (at most MAX_LEASE), then each lease
 * whole (a lease cut short is a fault), each valid (an end from 1 to MAX_LEASE_END_US, acquired from 0 to its
 * end, units 1 to MAX_LEASE as a signed 32-bit number, an id of 1 to 64 bytes), sorted by end. 1 with *used
 * and *count, else 0. */
static int leases_ok(const unsigned char *q, size_t left, size_t *used, int64_t *count) {
    if (left < 4) return 0;
    uint64_t n = le_get(q, 4);
    if (n > MAX_LEASE) return 0;
    size_t at = 4;
    int64_t before = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (left - at < 21 || left - at < 21 + (size_t)q[at + 20]) return 0;
        int64_t end = (int64_t)le_get(q + at, 8), acquired = (int64_t)le_get(q + at + 8, 8);
        int32_t units = (int32_t)le_get(q + at + 16, 4);
        unsigned id_len = q[at + 20];
        if (end < 1 || end > MAX_LEASE_END_US || acquired < 0 || acquired > end || units < 1 || units > MAX_LEASE ||
            id_len < 1 || id_len > 64 || (i > 0 && before > end))
            return 0;
        before = end;
        at += 21 + id_len;
    }
    *used = at;
    *count = (int64_t)n;
    return 1;
}

/* The answers allowed for a body of len bytes (the blob without its expiry), read as the layout says and in
 * module/bundle_type.c's order, and in *final the answer where the reading stops (PR_OK, or the fault of the
 * layout met first); the entries read are left in e[]. An entry's name is read only once the body holds it
 * and the entry's fixed part after it ("truncated" before "bad limit name"). */
static unsigned judge_body(const unsigned char *p, size_t len, pentry *e, int *n_out, unsigned *final) {
    unsigned allowed = 0;
#define STOP(bit)               \
    do {                        \
        *final = (bit);         \
        return allowed | (bit); \
    } while (0)
    *n_out = 0;
    if (len < 3 || p[0] != 'P') STOP(PR_POLICY); /* (never: the blobs here all start with 'P') */
    size_t plen = p[1];
    if (len < 3 + plen || !name_ok(p + 2, plen, 64)) STOP(PR_POLICY);
    unsigned n = p[2 + plen];
    if (n < 1 || n > 16) STOP(PR_ENTRIES);
    size_t at = 3 + plen, left = len - at;
    for (unsigned i = 0; i < n; i++) {
        if (left < 2) STOP(PR_TRUNC);
        unsigned char tag = p[at];
        unsigned nl = p[at + 1];
        if (tag == 0 || !strchr("TLWSGCQ", tag)) STOP(PR_KIND);
        int log = tag == 'S', leases = tag == 'C';
        if (left < 12 + (size_t)nl) STOP(PR_TRUNC);
        if (!name_ok(p + at + 2, nl, 32)) STOP(PR_NAME);
        const unsigned char *q = p + at + 2 + nl;
        unsigned words = q[0], has_rec = q[1];
        int64_t expire = (int64_t)pb_get(q + 2);
        size_t need = 12 + nl + (has_rec ? 32 : 0) + 8 * (size_t)words;
        if (has_rec > 1 || words > 64 || left < need) STOP(PR_TRUNC);
        if ((log || leases) && words) STOP(PR_NOWORDS);
        if (expire < 0 || expire > MAX_ENTRY_EXPIRE_MS) STOP(PR_EXPIRY);
        pentry *x = &e[i];
        x->tag = tag;
        x->name_len = nl;
        memcpy(x->name, p + at + 2, nl);
        x->words = words;
        x->has_rec = has_rec;
        x->expire_ms = expire;
        x->tail_len = 0;
        q += 10;
        if (has_rec) {
            for (int k = 0; k < 4; k++, q += 8) x->rec[k] = (int64_t)pb_get(q);
            allowed |= PR_LOCK; /* the lock's validity is the module's call */
        }
        for (unsigned k = 0; k < words; k++, q += 8) x->w[k] = pb_get(q);
        if (words) allowed |= PR_STATE; /* so is the state's */
        at += need;
        left -= need;
        int64_t units = 0; /* the log's entries, or the leases */
        size_t tail = 0;
        if (log) {
            if (left < 4) STOP(PR_TRUNC);
            units = (int64_t)le_get(q, 4);
            if (units > MAX_SLOG + 1 || left - 4 < 16 * (size_t)units) STOP(PR_TRUNC);
            tail = 4 + 16 * (size_t)units;
            if (!log_ok(q + 4, units)) STOP(PR_SLOG);
        }
        if (leases && !leases_ok(q, left, &tail, &units)) STOP(PR_LEASES);
        if (!has_rec && words == 0 && units == 0) STOP(PR_NOTHING);
        memcpy(x->tail, q, tail);
        x->tail_len = tail;
        at += tail;
        left -= tail;
        *n_out = (int)i + 1;
        for (unsigned j = 0; j < i; j++)
            if (e[j].name_len == nl && memcmp(e[j].name, x->name, nl) == 0) STOP(PR_TWICE);
    }
    if (left != 0) STOP(PR_AFTER);
    STOP(PR_OK);
#undef STOP
}

/* The answers allowed for RL.SETSTATE key <blob> (len bytes, its expiry included), on an empty key or one of
 * its type; *final as judge_body's. */
static unsigned judge_blob(const unsigned char *b, size_t len, unsigned *final) {
    if (len < 25 || b[0] != 'P') { /* shorter than the least a policy's state holds, or another tag: the cell
                                    * form reads it (the lease and lock tags have forms of their own) */
        if (b[0] == 'C' || b[0] == 'K') return *final = PR_OTHER;
        int cell_length = len >= 17 && len <= 9 + 8 * 68 && (len - 9) % 8 == 0;
        if (!cell_length) return *final = PR_SHORT;
        return *final = b[0] == 'P' ? PR_UNKNOWN : PR_OTHER;
    }
    if ((int64_t)pb_get(b + len - 8) < 0) return *final = PR_NOEXPIRY; /* (0: none, as an AOF rewrite writes it) */
    pentry e[16];
    int n;
    return judge_body(b, len - 8, e, &n, final);
}

/* --- DUMP payloads: a body in the RDB's module-value encoding, with its CRC, for RESTORE ---------------------- */

/* CRC-64 as Redis computes a DUMP payload's (Jones polynomial, reflected), bit by bit. */
static uint64_t crc64_jones(const unsigned char *p, size_t n) {
    uint64_t crc = 0;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++) crc = (crc & 1) ? (crc >> 1) ^ 0x95AC9329AC4BC9B5ULL : crc >> 1;
    }
    return crc;
}

/* What surrounds the body in a DUMP of an rl-checks key: the type and module id, the string opcode (before),
 * the EOF opcode and the RDB version (after); learned from a real DUMP by read_dump. */
static unsigned char dump_head[11], dump_tail[3];
static int dump_known;

/* The body a DUMP (rdbcompression no) holds, into x; 1 if the DUMP reads as expected (and its CRC is ours). */
static int read_dump(const redisReply *d, pblob *x) {
    if (!d || d->type != REDIS_REPLY_STRING || d->len < 11 + 1 + 3 + 8) return 0;
    const unsigned char *p = (const unsigned char *)d->str;
    if (crc64_jones(p, d->len - 8) != pb_get(p + d->len - 8)) return 0;
    size_t at = 11, len;
    if ((p[at] >> 6) == 0) len = p[at++] & 0x3f;
    else if ((p[at] >> 6) == 1) len = ((size_t)(p[at] & 0x3f) << 8) | p[at + 1], at += 2;
    else return 0;
    if (at + len + 3 + 8 != d->len || len > PB_MAX) return 0;
    memcpy(dump_head, p, 11);
    memcpy(dump_tail, p + at + len, 3);
    dump_known = 1;
    x->n = 0;
    pb_bytes(x, p + at, len);
    return 1;
}

/* A DUMP payload of body (any bytes: RESTORE hands them to the module's loader). */
static size_t dump_payload(const unsigned char *body, size_t len, unsigned char *out) {
    size_t n = 0;
    memcpy(out, dump_head, 11);
    n = 11;
    if (len < 64) {
        out[n++] = (unsigned char)len;
    } else {
        out[n++] = (unsigned char)(0x40 | (len >> 8));
        out[n++] = (unsigned char)(len & 0xff);
    }
    memcpy(out + n, body, len);
    n += len;
    memcpy(out + n, dump_tail, 3);
    n += 3;
    uint64_t crc = crc64_jones(out, n);
    for (int i = 0; i < 8; i++) out[n++] = (unsigned char)(crc >> (8 * i));
    return n;
}

/* --- the harvest: real states of every kind, with a lock record ---------------------------------------------- */

#define HV_SPEC                                                                                                  \
    "LIMIT t TOKEN 10 1 1000 LIMIT w WINDOW 5 60000 LIMIT lk TOKEN 1 1 1000 LOCKOUT 1000 LIMIT lq LEAKY 10 1 1000 " \
    "NODELAY LIMIT g SMOOTH 2.5 LIMIT q QUOTA 100 DAY LIMIT s WINDOW 10 1000 SUBWINDOWS 5 "                        \
    "LIMIT sl SLIDINGLOG 5 60000 MINGAP 10 LIMIT cc CONCURRENCY 3 100000000"
#define NHV 9  /* hv's limits, and the harvest's entries */
#define HV_LOG 7 /* the sliding log's entry, and the leases' */
#define HV_LEASES 8
#define T0_US (T0 * 1000)
static pentry harvest[16];
static int nharvest;
static pblob harvest_body; /* the key's encoding, as the RDB holds it */

/* The harvested log and leases, made richer: three entries of the log (two at one instant), three leases (ends
 * in order, one id of 40 bytes, binary ones too), as the storage could have written them. */
static void enrich_harvest(void) {
    const pentry *sl = &harvest[HV_LOG];
    int64_t newest = (int64_t)le_get(sl->tail + 4, 8);
    const int64_t log[3][2] = {{newest, 1}, {newest - 1000, 2}, {newest - 1000, 1}};
    pe_log(&harvest[HV_LOG], 3, 3, log);
    pentry *cc = &harvest[HV_LEASES];
    const unsigned char *made = cc->tail + 4; /* the lease RL.CHECK took, kept as written */
    int64_t end = (int64_t)le_get(made, 8);
    static char made_id[64];
    memcpy(made_id, made + 21, made[20]);
    const plead leases[3] = {{T0_US + 5000000, T0_US - 1000, 1, 5, "job-7"},
                             {end, (int64_t)le_get(made + 8, 8), (uint32_t)le_get(made + 16, 4), made[20], made_id},
                             {end + 1, T0_US, 1, 40, "\r\n\xff-forty-bytes-of-lease-id-xxxxxxxxxxxxxx"}};
    pe_leases(cc, 3, 3, leases);
    cc->tail[4 + 21 + 5 + 21 + made[20] + 21 + 3] = 0; /* a NUL in the long id */
}

static int harvest_states(void) {
    freeReplyObject(cmd(c, "CONFIG SET rdbcompression no"));
    CHECK(cmd_status_is(c, "OK", "RL.POLICY SET hv " HV_SPEC));
    freeReplyObject(cmd(c, "RL.CHECK hv pb:h"));
    freeReplyObject(cmd(c, "RL.CHECK hv pb:h")); /* denied by lk: its lock starts */
    redisReply *d = cmd(c, "DUMP pb:h");
    int ok = CHECK(read_dump(d, &harvest_body));
    freeReplyObject(d);
    if (!ok) return 0;
    unsigned final;
    ok = CHECK(judge_body(harvest_body.b, harvest_body.n, harvest, &nharvest, &final) == (PR_OK | PR_LOCK | PR_STATE));
    int locked = 0;
    for (int i = 0; i < nharvest; i++) locked += harvest[i].has_rec;
    ok = ok && CHECK(nharvest == NHV && locked == 1);
    /* the log and the lease RL.CHECK wrote: one entry of weight 1, one lease of 1 unit */
    ok = ok && CHECK(harvest[HV_LOG].tag == 'S' && harvest[HV_LOG].tail_len == 4 + 16 && harvest[HV_LEASES].tag == 'C' &&
                     le_get(harvest[HV_LEASES].tail, 4) == 1);
    if (!ok) nharvest = 0;
    else enrich_harvest();
    return ok;
}

/* A blob of the harvested entries (idx[], k of them) under policy, with expiry expire_at_ms. */
static void pb_of(pblob *x, const char *policy, const int *idx, int k, uint64_t expire_at_ms) {
    pb_head(x, policy, strlen(policy), (unsigned)k);
    for (int i = 0; i < k; i++) pb_entry(x, &harvest[idx[i]]);
    pb_le(x, expire_at_ms);
}

#define FAR_EXPIRY 99999999999999ULL

/* RL.SETSTATE key <blob> is refused with the error where the reference's reading stops (the entries before it
 * are harvested ones: valid), and changes nothing. */
static void blob_refused_at(const char *key, const pblob *x, const char *file, int line) {
    unsigned final, allowed = judge_blob(x->b, x->n, &final);
    if (final == PR_OK) {
        check_record(0, file, line, "a crafted blob is refused by the reference");
        return;
    }
    (void)allowed;
    argv_t a;
    a_reset(&a);
    a_words(&a, "RL.SETSTATE");
    a_str(&a, key);
    a_bin(&a, (const char *)x->b, x->n);
    expect_error_at(&a, pr_text(__builtin_ctz(final)), file, line);
}
#define blob_refused(key, x) blob_refused_at(key, x, __FILE__, __LINE__)

static void test_policy_blobs(void) {
    if (!harvest_states()) return;
    pblob x;
    const int all[] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
    pentry e;
    /* the lengths around the least a policy's state holds (25 bytes) */
    for (size_t len = 1; len <= 24; len++) {
        pb_of(&x, "hv", all, 1, FAR_EXPIRY);
        x.n = len;
        blob_refused("bi:chk", &x);
    }
    /* an expiry before 0; 0 is none (an AOF rewrite's, which Redis follows with PEXPIREAT): the key then has none */
    pb_of(&x, "hv", all, NHV, (uint64_t)-1);
    blob_refused("bi:chk", &x);
    pb_of(&x, "hv", all, NHV, (uint64_t)INT64_MIN);
    blob_refused("bi:chk", &x);
    pb_of(&x, "hv", all, NHV, 0);
    CHECK(cmd_status_is(c, "OK", "RL.SETSTATE pb:noexp %b", (const char *)x.b, x.n));
    CHECK_EQ(cmd_int(c, "PEXPIRETIME pb:noexp"), -1);
    CHECK_EQ(cmd_int(c, "DEL pb:noexp"), 1);
    /* the policy's name: empty, too long, past the end, bad characters */
    static const struct {
        const char *name;
        size_t len;
    } bad_policies[] = {{"", 0}, {"a.b", 3}, {"\xff", 1}, {"hv\0", 3}, {"a b", 3},
                        {"ppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp", 65}};
    for (size_t i = 0; i < sizeof bad_policies / sizeof bad_policies[0]; i++) {
        pb_head(&x, bad_policies[i].name, bad_policies[i].len, 1);
        pb_entry(&x, &harvest[0]);
        pb_le(&x, FAR_EXPIRY);
        blob_refused("bi:chk", &x);
    }
    for (unsigned len = 200; len <= 255; len += 55) { /* a name longer than the blob */
        pb_of(&x, "hv", all, 1, FAR_EXPIRY);
        x.b[1] = (unsigned char)len;
        blob_refused("bi:chk", &x);
    }
    /* counts: none, 17, 255, more than there are, fewer */
    static const unsigned counts[] = {0, 17, 255, NHV + 1, 2, NHV - 1};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        pb_of(&x, "hv", all, NHV, FAR_EXPIRY);
        x.b[4] = (unsigned char)counts[i];
        blob_refused(MISSING_KEY, &x);
    }
    /* an entry's kind: none of a policy's limiters (a lock's, a policy's, none, others), or a sliding log's or
     * leases' holding a cell's words */
    static const unsigned char bad_tags[] = {'S', 'C', 'K', 'P', 'X', 0, 't', 's', 'c', 0xff};
    for (size_t i = 0; i < sizeof bad_tags / sizeof bad_tags[0]; i++) {
        e = harvest[0];
        e.tag = bad_tags[i];
        pb_head(&x, "hv", 2, 2);
        pb_entry(&x, &harvest[1]);
        pb_entry(&x, &e);
        pb_le(&x, FAR_EXPIRY);
        blob_refused("bi:chk", &x);
    }
    /* an entry's name: empty, 33 characters, bad characters, twice (same kind or not), a wrong length */
    static const struct {
        const char *name;
        unsigned len;
    } bad_names[] = {{"", 0}, {"lllllllllllllllllllllllllllllllll", 33}, {"a.b", 3}, {"\0", 1}, {"w", 1}, {"t", 1}};
    for (size_t i = 0; i < sizeof bad_names / sizeof bad_names[0]; i++) {
        e = harvest[0];
        memcpy(e.name, bad_names[i].name, bad_names[i].len);
        e.name_len = bad_names[i].len;
        const int two[] = {0, 1};
        pb_head(&x, "hv", 2, 3);
        pb_entry(&x, &harvest[two[0]]);
        pb_entry(&x, &harvest[two[1]]);
        pb_entry(&x, &e);
        pb_le(&x, FAR_EXPIRY);
        blob_refused("bi:chk", &x);
    }
    for (int delta = -1; delta <= 1; delta += 2) { /* the name's length one off: the rest read out of step */
        pb_of(&x, "hv", all + 1, 1, FAR_EXPIRY);
        x.b[6] = (unsigned char)(x.b[6] + delta);
        blob_refused("bi:chk", &x);
    }
    /* a name that runs past the body, into the expiry's bytes (not valid characters, then valid ones) */
    for (int k = 0; k < 2; k++) {
        pb_head(&x, "hv", 2, 1);
        pb_byte(&x, 'T');
        pb_byte(&x, 8);
        pb_le(&x, k ? 0x6161616161616161ULL : 0x0101010101010101ULL);
        blob_refused("bi:chk", &x);
    }
    /* words: more than any state (65, 255), a count its state does not have, none and no record */
    static const unsigned bad_words[] = {65, 255, 3, 1, 0};
    for (size_t i = 0; i < sizeof bad_words / sizeof bad_words[0]; i++) {
        e = harvest[0];
        e.words = bad_words[i];
        for (unsigned k = 2; k < e.words; k++) e.w[k] = 0;
        pb_head(&x, "hv", 2, 1);
        pb_entry(&x, &e);
        pb_le(&x, FAR_EXPIRY);
        if (bad_words[i] == 3 || bad_words[i] == 1) { /* well formed, not a state: the module's call, refused */
            argv_t a;
            a_reset(&a);
            a_words(&a, "RL.SETSTATE bi:chk");
            a_bin(&a, (const char *)x.b, x.n);
            expect_error(&a, pr_text(__builtin_ctz(PR_STATE)));
        } else {
            blob_refused("bi:chk", &x);
        }
    }
    /* has_rec other than 0 and 1; an entry's expiry below 0 or past the last instant */
    e = harvest[0];
    e.has_rec = 2;
    pb_head(&x, "hv", 2, 1);
    pb_entry(&x, &e);
    pb_le(&x, FAR_EXPIRY);
    blob_refused("bi:chk", &x);
    static const int64_t bad_expiries[] = {-1, INT64_MIN, MAX_ENTRY_EXPIRE_MS + 1, INT64_MAX};
    for (size_t i = 0; i < sizeof bad_expiries / sizeof bad_expiries[0]; i++) {
        e = harvest[1];
        e.expire_ms = bad_expiries[i];
        pb_head(&x, "hv", 2, 1);
        pb_entry(&x, &e);
        pb_le(&x, FAR_EXPIRY);
        blob_refused("bi:chk", &x);
    }
    /* bytes after the last entry, or before the expiry */
    for (int extra = 1; extra <= 9; extra += 4) {
        pb_of(&x, "hv", all, NHV, FAR_EXPIRY);
        x.n -= 8;
        for (int i = 0; i < extra; i++) pb_byte(&x, 0);
        pb_le(&x, FAR_EXPIRY);
        blob_refused("bi:chk", &x);
    }
    /* cut anywhere: every length from the whole body down to the tag, with a valid expiry after it */
    pb_of(&x, "hv", all, NHV, FAR_EXPIRY);
    size_t body = x.n - 8;
    for (size_t cut = 1; cut + 17 <= body; cut++) {
        pblob y;
        y.n = 0;
        pb_bytes(&y, x.b, body - cut);
        pb_le(&y, FAR_EXPIRY);
        blob_refused("bi:chk", &y);
    }
    /* a valid state on a key of another type: WRONGTYPE, after the blob is read */
    pb_of(&x, "hv", all, NHV, FAR_EXPIRY);
    for (int k = 0; k < NTYPED; k++) {
        if (strcmp(typed_kinds[k], "rl-checks") == 0) continue;
        bin blob = {(const char *)x.b, x.n};
        setstate_case(typed_keys[k], &blob, 1, WRONGTYPE);
    }
    /* other counts of arguments: the readable form reads them */
    bin blob = {(const char *)x.b, x.n};
    bin more[] = {blob, B("PXAT")};
    setstate_case("bi:chk", more, 2, "ERR wrong number of arguments for 'rl.setstate' command");
    bin words[] = {blob, B("0"), B("0")};
    setstate_case("bi:chk", words, 3, "ERR kind: must be one of TOKEN, LEAKY, WINDOW, SMOOTH, QUOTA");

    /* Valid ones are taken, replace the key's value whole, and RL.CHECK_RO reads them: every entry, one, 16
     * of 32-character names under a 64-character policy, a lock record alone, entries of limits the policy
     * does not have. */
    static const char *const p64 = "hvhvhvhvhvhvhvhvhvhvhvhvhvhvhvhvhvhvhvhvhvhvhvhvhvhvhvhvhvhvhvhv";
    CHECK(cmd_status_is(c, "OK", "RL.POLICY SET %s " HV_SPEC, p64));
    struct {
        const char *policy;
        int k;
    } valid[] = {{"hv", NHV}, {"hv", 1}, {p64, 16}, {"hv", -1}, {"hv", 0}};
    for (size_t v = 0; v < sizeof valid / sizeof valid[0]; v++) {
        int k = valid[v].k;
        if (k == 16) {
            pb_head(&x, p64, 64, 16);
            for (int i = 0; i < 16; i++) {
                e = harvest[i % nharvest];
                snprintf(e.name, sizeof e.name, "%-31d%c", i, 'x');
                for (int j = 0; j < 31; j++)
                    if (e.name[j] == ' ') e.name[j] = '-';
                e.name_len = 32;
                pb_entry(&x, &e);
            }
            pb_le(&x, FAR_EXPIRY);
        } else if (k == -1) { /* the locked entry's record alone */
            for (int i = 0; i < nharvest; i++)
                if (harvest[i].has_rec) e = harvest[i];
            e.words = 0;
            pb_head(&x, "hv", 2, 1);
            pb_entry(&x, &e);
            pb_le(&x, FAR_EXPIRY);
        } else if (k == 0) { /* a name the policy does not have: read as a new limit, kept until written */
            e = harvest[0];
            memcpy(e.name, "gone", 4);
            e.name_len = 4;
            pb_head(&x, "hv", 2, 2);
            pb_entry(&x, &harvest[1]);
            pb_entry(&x, &e);
            pb_le(&x, FAR_EXPIRY);
        } else {
            pb_of(&x, "hv", all, k, FAR_EXPIRY);
        }
        unsigned final;
        judge_blob(x.b, x.n, &final);
        CHECK_EQ(final, PR_OK);
        for (int key = 0; key < 2; key++) {
            const char *name = key ? "pb:new" : "pb:h"; /* a missing key, and the harvested key */
            redisReply *r = cmd(c, "RL.SETSTATE %s %b", name, (const char *)x.b, x.n);
            if (!CHECK(reply_is_status(r, "OK"))) fprintf(stderr, "     valid blob %zu: %s\n", v, r->str ? r->str : "?");
            freeReplyObject(r);
            CHECK_EQ(cmd_int(c, "PEXPIRETIME %s", name), (long long)FAR_EXPIRY);
            redisReply *d = cmd(c, "DUMP %s", name);
            pblob back;
            CHECK(read_dump(d, &back) && back.n == x.n - 8 && memcmp(back.b, x.b, back.n) == 0);
            freeReplyObject(d);
            r = cmd(c, "RL.CHECK_RO %s %s", valid[v].policy, name);
            CHECK(r->type == REDIS_REPLY_ARRAY && r->elements == 3 + NHV);
            freeReplyObject(r);
            cases_tried++;
        }
        CHECK_EQ(cmd_int(c, "DEL pb:new"), 1);
    }
    CHECK_EQ(cmd_int(c, "RL.POLICY DEL %s", p64), 1);
}

/* One crafted entry e under hv, alone or after a harvested one: refused with the fault `want` (the reference
 * must read it there: a crafted case that misses its fault is the test's own error), changing nothing; or, want
 * PR_OK, taken, given back by DUMP as sent, and read by RL.CHECK_RO. */
static void entry_case_at(const pentry *e, unsigned want, const char *file, int line) {
    for (int after = 0; after < 2; after++) {
        pblob x;
        pb_head(&x, "hv", 2, 1 + (unsigned)after);
        if (after) pb_entry(&x, &harvest[1]);
        pb_entry(&x, e);
        pb_le(&x, FAR_EXPIRY);
        unsigned final;
        judge_blob(x.b, x.n, &final);
        if (!check_record(final == want, file, line, "the reference reads the crafted entry's fault"))
            fprintf(stderr, "     the reference: %s, crafted for: %s\n", pr_text(__builtin_ctz(final)),
                    pr_text(__builtin_ctz(want)));
        if (want != PR_OK) {
            blob_refused_at("bi:chk", &x, file, line);
            continue;
        }
        cases_tried++;
        redisReply *r = cmd(c, "RL.SETSTATE pb:lc %b", (const char *)x.b, x.n);
        if (!check_record(reply_is_status(r, "OK"), file, line, "a valid crafted entry is taken"))
            fprintf(stderr, "     got: %s\n", r->str ? r->str : "?");
        freeReplyObject(r);
        redisReply *d = cmd(c, "DUMP pb:lc");
        pblob back;
        check_record(read_dump(d, &back) && back.n == x.n - 8 && memcmp(back.b, x.b, back.n) == 0, file, line,
                     "DUMP gives the taken entry back as sent");
        freeReplyObject(d);
        r = cmd(c, "RL.CHECK_RO hv pb:lc");
        if (!check_record(r->type == REDIS_REPLY_ARRAY && r->elements == 3 + NHV, file, line,
                          "RL.CHECK_RO reads a taken entry"))
            fprintf(stderr, "     got: %s\n", r->str ? r->str : "(another reply)");
        freeReplyObject(r);
        freeReplyObject(cmd(c, "DEL pb:lc"));
    }
}
#define entry_case(e, want) entry_case_at(e, want, __FILE__, __LINE__)

/* A sliding log's entry ('S') and a concurrency limit's ('C'): every fault of their tails, and the values at
 * the edges that are valid. */
static void test_policy_log_lease_blobs(void) {
    if (!nharvest) return;
    static pentry e;
    const pentry *sl = &harvest[HV_LOG], *cc = &harvest[HV_LEASES], *locked = &harvest[2];
    /* words, which neither has; no room for the tail's count; a record and nothing else */
    for (int k = 0; k < 2; k++) {
        e = k ? *cc : *sl;
        e.words = 2;
        e.w[0] = e.w[1] = 0;
        entry_case(&e, PR_NOWORDS);
        e.words = 65;
        entry_case(&e, PR_TRUNC);
        e = k ? *cc : *sl;
        e.tail_len = 0;
        entry_case(&e, k ? PR_LEASES : PR_TRUNC); /* (lease_type.c's reader says "not valid leases") */
        e.tail_len = 3;
        entry_case(&e, k ? PR_LEASES : PR_TRUNC);
        e = k ? *cc : *sl;
        e.tail_len = 0;
        pe_num(&e, 0, 4);
        entry_case(&e, PR_NOTHING);
        e.has_rec = 1;
        memcpy(e.rec, locked->rec, sizeof e.rec);
        entry_case(&e, PR_OK);
        e = k ? *cc : *sl;
        e.expire_ms = -1;
        entry_case(&e, PR_EXPIRY);
    }

    /* the log: its count lying, out of range; weights, times, order */
    const int64_t now = T0_US;
    static const struct {
        uint64_t nlog;
        unsigned want;
    } counts[] = {{4, PR_TRUNC}, {2, PR_AFTER}, {100002, PR_TRUNC}, {0xffffffffULL, PR_TRUNC}, {0x80000000ULL, PR_TRUNC}};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        e = *sl;
        e.tail[0] = (unsigned char)counts[i].nlog, e.tail[1] = (unsigned char)(counts[i].nlog >> 8);
        e.tail[2] = (unsigned char)(counts[i].nlog >> 16), e.tail[3] = (unsigned char)(counts[i].nlog >> 24);
        entry_case(&e, counts[i].want);
    }
    static const struct {
        int n;
        int64_t log[3][2];
        unsigned want;
    } logs[] = {
        {1, {{0, 0}}, PR_SLOG},
        {1, {{0, -1}}, PR_SLOG},
        {1, {{0, MAX_SLOG + 2}}, PR_SLOG},
        {1, {{0, MAX_SLOG + 1}}, PR_OK},
        {2, {{0, 50001}, {0, 50001}}, PR_SLOG},
        {2, {{0, 50001}, {0, 50000}}, PR_OK},
        {1, {{-1, 1}}, PR_SLOG},
        {1, {{INT64_MIN, 1}}, PR_SLOG},
        {1, {{-2, 1}}, PR_SLOG}, /* -2: MAX_TIME_US, below */
        {1, {{-3, 1}}, PR_OK},   /* -3: MAX_TIME_US - 1 */
        {2, {{1, 1}, {0, 1}}, PR_SLOG}, /* (a number from 0 up: that many µs before now) */
        {3, {{4, 1}, {5, 1}, {5, 1}}, PR_OK},
        {3, {{4, 1}, {5, 1}, {4, 1}}, PR_SLOG},
        {3, {{-3, 1}, {0, 1}, {-4, 1}}, PR_OK}, /* -4: 0 */
    };
    for (size_t i = 0; i < sizeof logs / sizeof logs[0]; i++) {
        int64_t log[3][2];
        for (int k = 0; k < logs[i].n; k++) {
            int64_t at = logs[i].log[k][0];
            log[k][0] = at == -2 ? MAX_TIME_US : at == -3 ? MAX_TIME_US - 1 : at == -4 ? 0 : at < 0 ? at : now - at;
            log[k][1] = logs[i].log[k][1];
        }
        e = *sl;
        pe_log(&e, (uint64_t)logs[i].n, logs[i].n, (const int64_t(*)[2])log);
        entry_case(&e, logs[i].want);
    }

    /* the leases: the count lying, out of range; each field out of its range and at its edge; the order */
    static const struct {
        uint64_t count;
        unsigned want;
    } lcounts[] = {{4, PR_LEASES}, {2, PR_AFTER}, {MAX_LEASE + 1, PR_LEASES}, {0xffffffffULL, PR_LEASES}};
    for (size_t i = 0; i < sizeof lcounts / sizeof lcounts[0]; i++) {
        e = *cc;
        e.tail[0] = (unsigned char)lcounts[i].count, e.tail[1] = (unsigned char)(lcounts[i].count >> 8);
        e.tail[2] = (unsigned char)(lcounts[i].count >> 16), e.tail[3] = (unsigned char)(lcounts[i].count >> 24);
        entry_case(&e, lcounts[i].want);
    }
    static const char id64[] = "6464646464646464646464646464646464646464646464646464646464646464",
                      id65[] = "65656565656565656565656565656565656565656565656565656565656565656";
    static const struct {
        plead lease;
        unsigned want;
    } fields[] = {
        {{0, 0, 1, 1, "a"}, PR_LEASES},
        {{-1, 0, 1, 1, "a"}, PR_LEASES},
        {{1, 0, 1, 1, "a"}, PR_OK},
        {{MAX_LEASE_END_US, 0, 1, 1, "a"}, PR_OK},
        {{MAX_LEASE_END_US + 1, 0, 1, 1, "a"}, PR_LEASES},
        {{1000, -1, 1, 1, "a"}, PR_LEASES},
        {{1000, 1001, 1, 1, "a"}, PR_LEASES},
        {{1000, 1000, 1, 1, "a"}, PR_OK},
        {{1000, 0, 0, 1, "a"}, PR_LEASES},
        {{1000, 0, MAX_LEASE, 1, "a"}, PR_OK},
        {{1000, 0, MAX_LEASE + 1, 1, "a"}, PR_LEASES},
        {{1000, 0, 0x80000000ULL, 1, "a"}, PR_LEASES},
        {{1000, 0, 0xffffffffULL, 1, "a"}, PR_LEASES},
        {{1000, 0, 1, 0, ""}, PR_LEASES},
        {{1000, 0, 1, 64, id64}, PR_OK},
        {{1000, 0, 1, 65, id65}, PR_LEASES},
        {{1000, 0, 1, 200, "short"}, PR_LEASES}, /* its id runs past the body */
        {{1000, 0, 1, 255, id65}, PR_LEASES},
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        e = *cc;
        plead l = fields[i].lease;
        if (l.end_us > 1 && l.end_us < MAX_LEASE_END_US) l.end_us += now, l.acquired_us += l.acquired_us >= 0 ? now : 0;
        pe_leases(&e, 1, 1, &l);
        entry_case(&e, fields[i].want);
    }
    static const struct {
        int64_t end[3];
        unsigned want;
    } orders[] = {{{1, 2, 3}, PR_OK}, {{2, 2, 2}, PR_OK}, {{2, 1, 3}, PR_LEASES}, {{1, 3, 2}, PR_LEASES}};
    for (size_t i = 0; i < sizeof orders / sizeof orders[0]; i++) {
        plead l[3];
        for (int k = 0; k < 3; k++) l[k] = (plead){now + 1000 * orders[i].end[k], now, 1, 2, k == 0 ? "o0" : k == 1 ? "o1" : "o2"};
        e = *cc;
        pe_leases(&e, 3, 3, l);
        entry_case(&e, orders[i].want);
    }
}

/* Every byte of a valid blob changed (each of a few ways), the blob cut at every length, one byte put in:
 * each answer one the reference allows; a refused one changes nothing (a valid value in the key, or no key);
 * a taken one is read by RL.CHECK_RO (a reply, or the key's policy is another); RESTORE of the same body takes
 * it exactly when RL.SETSTATE does. */
#define MUT_BATCH 40
static void test_blob_mutations(void) {
    if (!nharvest || !dump_known) return;
    pblob orig;
    const int all[] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
    pb_of(&orig, "hv", all, NHV, FAR_EXPIRY);
    static pblob muts[MUT_BATCH];
    static const int ways = 7;
    size_t positions = orig.n - 8; /* the body: the expiry's faults are test_policy_blobs' */
    long long total = 2 * positions * ways + positions, bad_answer = 0, changed = 0, unread = 0, disagree = 0,
              taken = 0;
    static unsigned char payload[PB_MAX + 64];
    for (long long done = 0; done < total && !connection_lost; done += MUT_BATCH) {
        int nb = 0;
        for (long long m = done; m < total && nb < MUT_BATCH; m++, nb++) {
            pblob *x = &muts[nb];
            size_t at = (size_t)(m / ways) % positions;
            int way = (int)(m % ways);
            x->n = 0;
            if (m < (long long)positions * ways * 2) {
                pb_bytes(x, orig.b, orig.n);
                unsigned char v = x->b[at];
                static const int deltas[] = {1, -1};
                x->b[at] = way == 0   ? v ^ 0x01
                           : way == 1 ? v ^ 0x80
                           : way == 2 ? 0
                           : way == 3 ? 0xff
                           : way == 4 ? (unsigned char)(v + deltas[m / (positions * ways)])
                           : way == 5 ? (unsigned char)(v + 32)
                                      : (unsigned char)'a';
                if (m >= (long long)positions * ways) { /* the second pass: a byte put in at 'at' as well */
                    memmove(x->b + at + 1, x->b + at, x->n - at);
                    x->b[at] = (unsigned char)(way * 37);
                    x->n++;
                }
            } else { /* cut at every length, the expiry kept */
                size_t keep = (size_t)(m - positions * ways * 2);
                pb_bytes(x, orig.b, keep);
                pb_le(x, FAR_EXPIRY);
            }
            const char *key = m % 2 ? "pb:m" : "pb:none";
            redisAppendCommand(c, "RL.SETSTATE pb:m %b", (const char *)orig.b, orig.n);
            redisAppendCommand(c, "DUMP %s", key);
            redisAppendCommand(c, "PEXPIRETIME %s", key);
            redisAppendCommand(c, "RL.SETSTATE %s %b", key, (const char *)x->b, x->n);
            redisAppendCommand(c, "DUMP %s", key);
            redisAppendCommand(c, "PEXPIRETIME %s", key);
            redisAppendCommand(c, "RL.CHECK_RO hv %s", key);
            size_t plen = dump_payload(x->b, x->n - 8, payload);
            redisAppendCommand(c, "RESTORE pb:r 0 %b REPLACE", (const char *)payload, plen);
            redisAppendCommand(c, "DEL pb:none pb:r");
            redisAppendCommand(c, "PING");
        }
        for (int i = 0; i < nb && !connection_lost; i++) {
            redisReply *rep[10];
            for (int k = 0; k < 10; k++) rep[k] = get_reply();
            if (connection_lost) {
                CHECK(!"the server survives every mutated blob");
                break;
            }
            const pblob *x = &muts[i];
            unsigned final, allowed = judge_blob(x->b, x->n, &final);
            int bit = pr_of(rep[3]);
            int ok = bit >= 0 && (allowed & (1u << bit));
            if (final == PR_OTHER) { /* another tag's form: an error, or a state of that form */
                ok = rep[3]->type == REDIS_REPLY_ERROR && printable(rep[3]->str, rep[3]->len);
                bit = -1;
            }
            if (!ok && bad_answer++ < 10) {
                fprintf(stderr, "     mutated blob (%zu bytes):", x->n);
                for (size_t k = 0; k < x->n; k++) fprintf(stderr, "%02x", x->b[k]);
                fprintf(stderr, "\n     got: %s, allowed 0x%x\n", rep[3]->str ? rep[3]->str : "?", allowed);
            }
            if (bit != 0) { /* refused: the key as it was */
                int same = rep[1]->type == rep[4]->type && rep[1]->len == rep[4]->len &&
                           (rep[1]->len == 0 || memcmp(rep[1]->str, rep[4]->str, rep[1]->len) == 0) &&
                           rep[2]->integer == rep[5]->integer;
                changed += !same;
            } else {
                taken++;
                const redisReply *r = rep[6];
                int read = (r->type == REDIS_REPLY_ARRAY && r->elements == 3 + NHV) ||
                           (r->type == REDIS_REPLY_ERROR && strncmp(r->str, "ERR key was checked under policy '", 34) == 0);
                if (!read && unread++ < 5) fprintf(stderr, "     RL.CHECK_RO of a taken blob: %s\n", r->str ? r->str : "(array)");
            }
            /* RESTORE: the same decoder; only the body's own faults count (its expiry is valid) */
            int restored = reply_is_status(rep[7], "OK");
            int restore_refused = rep[7]->type == REDIS_REPLY_ERROR && strcmp(rep[7]->str, "ERR Bad data format") == 0;
            int setstate_took = bit == 0;
            int short_blob = x->n < 25; /* RL.SETSTATE's cell form answers; the loader refuses it */
            if (!(restored || restore_refused) || (restored != setstate_took && !short_blob) || (short_blob && restored)) {
                if (disagree++ < 5)
                    fprintf(stderr, "     RESTORE %s, RL.SETSTATE %s (%zu bytes)\n", rep[7]->str ? rep[7]->str : "OK",
                            rep[3]->str ? rep[3]->str : "?", x->n);
            }
            for (int k = 0; k < 10; k++) freeReplyObject(rep[k]);
        }
    }
    fuzz_tried += total;
    CHECK_EQ(bad_answer, 0);
    CHECK_EQ(changed, 0);
    CHECK_EQ(unread, 0);
    CHECK_EQ(disagree, 0);
    CHECK(taken > 20); /* the words' bytes: many changes leave a valid state */
    printf("  mutated policy states: %lld, %lld of them taken\n", total, taken);
}

/* The server's last log lines (why a load failed), to stderr. */
static void print_log_tail(int lines) {
    char path[300], buf[512], tail[16][512];
    snprintf(path, sizeof path, "%s/redis.log", srv->dir);
    FILE *f = fopen(path, "r");
    if (!f) return;
    int n = 0;
    while (fgets(buf, sizeof buf, f)) snprintf(tail[n++ % 16], sizeof tail[0], "%s", buf);
    fclose(f);
    for (int i = n > lines ? n - lines : 0; i < n; i++) fprintf(stderr, "     log: %s", tail[i % 16]);
}

/* RL.POLICY LIST, and GET of every name it lists, serialized. */
static char *policies_state(size_t *len) {
    redisReply *list = cmd(c, "RL.POLICY LIST");
    char *buf = NULL;
    size_t cap = 0;
    *len = 0;
    ser_reply(&buf, len, &cap, list);
    for (size_t i = 0; list->type == REDIS_REPLY_ARRAY && i < list->elements; i++) {
        redisReply *g = cmd(c, "RL.POLICY GET %b", list->element[i]->str, list->element[i]->len);
        ser_reply(&buf, len, &cap, g);
        freeReplyObject(g);
    }
    freeReplyObject(list);
    return buf;
}

/* RDB: keys holding valid states (harvested, crafted), saved and loaded back by DEBUG RELOAD, are equal (DUMP,
 * PEXPIRETIME, RL.CHECK_RO's answer), and the policies are the same (LIST, GET). */
static void test_policy_rdb(void) {
    if (!nharvest) return;
    pblob x;
    const int some[] = {2, 0, 5};
    pb_of(&x, "hv", some, 3, FAR_EXPIRY);
    redisReply *r = cmd(c, "RL.SETSTATE pb:rdb1 %b", (const char *)x.b, x.n);
    CHECK(reply_is_status(r, "OK"));
    freeReplyObject(r);
    static const char *const keys[] = {"pb:h", "pb:rdb1", "bi:chk", "pb:m"};
    static const char *const policies[] = {"hv", "hv", "bp", "hv"};
    enum { NK = 4 };
    char *before[NK * 3], *after[NK * 3];
    size_t lb[NK * 3], la[NK * 3];
    for (int pass = 0; pass < 2; pass++) {
        char **out = pass ? after : before;
        size_t *len = pass ? la : lb;
        for (int k = 0; k < NK; k++) {
            redisAppendCommand(c, "DUMP %s", keys[k]);
            redisAppendCommand(c, "PEXPIRETIME %s", keys[k]);
            redisAppendCommand(c, "RL.CHECK_RO %s %s", policies[k], keys[k]);
            for (int j = 0; j < 3; j++) {
                redisReply *x2 = get_reply();
                size_t cap = 0;
                out[k * 3 + j] = NULL;
                len[k * 3 + j] = 0;
                if (!x2) continue;
                if (j == 0) CHECK(x2->type == REDIS_REPLY_STRING); /* the key is there */
                ser_reply(&out[k * 3 + j], &len[k * 3 + j], &cap, x2);
                freeReplyObject(x2);
            }
        }
        if (!pass) {
            size_t l0, l1;
            char *policies_before = policies_state(&l0);
            if (!CHECK(cmd_status_is(c, "OK", "DEBUG RELOAD"))) print_log_tail(12);
            char *policies_after = policies_state(&l1);
            CHECK(policies_before && policies_after && l0 == l1 && memcmp(policies_before, policies_after, l0) == 0);
            free(policies_before);
            free(policies_after);
        }
    }
    for (int i = 0; i < NK * 3; i++) {
        if (!CHECK(before[i] && after[i] && lb[i] == la[i] && memcmp(before[i], after[i], lb[i]) == 0))
            fprintf(stderr, "     %s: %s differs after DEBUG RELOAD\n", keys[i / 3],
                    i % 3 == 0 ? "DUMP" : i % 3 == 1 ? "PEXPIRETIME" : "RL.CHECK_RO");
        free(before[i]);
        free(after[i]);
    }
    r = cmd(c, "RL.POLICY GET hv");
    CHECK(r->type == REDIS_REPLY_ARRAY && r->elements > 0);
    freeReplyObject(r);
}

/* Errors a policy makes long are answered whole: a limiter's longest message after a limit's number and name
 * (a 6-character name at LIMIT 1, the longest at LIMIT 16), and the other-policy error between two names of
 * 64 characters. */
static void test_policy_long_errors(void) {
    static const char *const name32 = "limit-name-of-thirty-two-chars-x";
    argv_t a;
    a_policy_set(&a, "bp");
    a_words(&a, "LIMIT second TOKEN 1001 1 1000000000");
    char expected[400];
    snprintf(expected, sizeof expected, "ERR LIMIT 1 (second): %s", cmds[0].combo_error + 4);
    expect_error(&a, expected);
    a_policy_set(&a, "bp");
    a_good_limits(&a, 0, MAX_POLICY_LIMITS - 1);
    a_str(&a, "LIMIT");
    a_str(&a, name32);
    a_words(&a, "LEAKY 1001 1 1000000000");
    snprintf(expected, sizeof expected, "ERR LIMIT 16 (%s): %s", name32, cmds[1].combo_error + 4);
    expect_error(&a, expected);
    a_policy_set(&a, "bp");
    a_good_limits(&a, 0, MAX_POLICY_LIMITS - 1);
    a_str(&a, "LIMIT");
    a_str(&a, name32);
    a_words(&a, "CONCURRENCY 3 10000 ID job-of-sixty-four-bytes-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
    snprintf(expected, sizeof expected, "ERR LIMIT 16 (%s): " ID_ERR, name32);
    expect_error(&a, expected);
    static const char *const pa = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                             *pz = "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz";
    CHECK(cmd_status_is(c, "OK", "RL.POLICY SET %s LIMIT a TOKEN 10 1 1000", pa));
    CHECK(cmd_status_is(c, "OK", "RL.POLICY SET %s LIMIT a TOKEN 10 1 1000", pz));
    freeReplyObject(cmd(c, "RL.CHECK %s pl:long", pa));
    a_reset(&a);
    a_str(&a, "RL.CHECK");
    a_str(&a, pz);
    a_str(&a, "pl:long");
    snprintf(expected, sizeof expected, "ERR key was checked under policy '%s', not '%s'", pa, pz);
    expect_error(&a, expected);
    CHECK_EQ(cmd_int(c, "DEL pl:long"), 1);
    CHECK_EQ(cmd_int(c, "RL.POLICY DEL %s", pa), 1);
    CHECK_EQ(cmd_int(c, "RL.POLICY DEL %s", pz), 1);
}

/* Every key a command wrote loads back: each key's DUMP is taken by RESTORE (the RDB's loader), and DEBUG
 * RELOAD succeeds. First a lease renewed after the clock went back (its end before its acquisition). */
static void test_every_key_loads(void) {
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", T0));
    freeReplyObject(cmd(c, "RL.ACQUIRE lr:back 10 1000000 ID x"));
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", T0 - 500000));
    CHECK_EQ(cmd_int(c, "RL.RENEW lr:back x 1000"), 1);
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", T0));
    redisReply *keys = cmd(c, "KEYS *");
    long long refused = 0;
    for (size_t i = 0; keys->type == REDIS_REPLY_ARRAY && i < keys->elements; i++) {
        const redisReply *k = keys->element[i];
        redisReply *d = cmd(c, "DUMP %b", k->str, k->len);
        if (d->type == REDIS_REPLY_STRING) {
            redisReply *r = cmd(c, "RESTORE rl:reload-copy 0 %b REPLACE", d->str, d->len);
            if (!reply_is_status(r, "OK") && refused++ < 5) {
                redisReply *t = cmd(c, "TYPE %b", k->str, k->len);
                fprintf(stderr, "     %.*s (%s): its DUMP is refused: %s\n", (int)k->len, k->str, t->str, r->str);
                freeReplyObject(t);
            }
            freeReplyObject(r);
        }
        freeReplyObject(d);
    }
    freeReplyObject(keys);
    freeReplyObject(cmd(c, "DEL rl:reload-copy"));
    CHECK_EQ(refused, 0);
    if (!CHECK(cmd_status_is(c, "OK", "DEBUG RELOAD"))) print_log_tail(4);
}

/* --- random RL.POLICY and RL.CHECK vectors against a reference reading of docs/commands.md -------------------
 * RL.POLICY SET vectors of 0 to 17 limits of TOKEN, LEAKY, WINDOW, SLIDINGLOG and CONCURRENCY clauses (numbers
 * at the edges, options repeated, conflicting, missing their values, others' options, a CONCURRENCY clause's
 * ID, junk, unknown kinds, bad and repeated names),
 * RL.CHECK and RL.CHECK_RO vectors on keys of every sort under known and unknown policies, and GET, DEL, LIST
 * and unknown subcommands. The reference keeps its own record of the policies (which exist, their count of
 * limits, which of them answer a lease, SHADOW) and of which policy each key belongs to. Each answer is the predicted error exactly, or a
 * reply of the predicted shape; an error changes no policy and no key; a taken SET is answered back by GET as
 * sent. */

typedef struct copt {
    const char *name;
    int value; /* 0: none, 1: an integer from min to max, 2: min to max bytes */
    long long min, max;
    const char *conflicts[3];
} copt;

typedef struct ckind {
    const char *kind;
    int nparams;
    const char *pname[3];
    long long pmax[3];
    int rate; /* 1: capacity * period / rate bounded (TOKEN, LEAKY) */
    copt opts[7];
    int nopts;
} ckind;

/* A clause's options as the read-only form's table lists them (module/syntax.c's order: the first conflicting
 * option in it is the one an error names). */
#define PMAX3 {MAX_COUNT, MAX_COUNT, MAX_COUNT}
static const ckind ckinds[] = {
    {"TOKEN", 3, {"capacity", "refill_tokens", "refill_ms"}, PMAX3, 1,
     {{"COST", 1, 0, MAX_COUNT, {"REFUND"}}, {"REFUND", 1, 0, MAX_COUNT, {"COST", "ATMOST", "FORCE"}},
      {"INTERVAL", 0, 0, 0, {NULL}}, {"ATMOST", 0, 0, 0, {"REFUND", "FORCE"}}, {"FORCE", 0, 0, 0, {"REFUND", "ATMOST"}}},
     5},
    {"LEAKY", 3, {"capacity", "leak_tokens", "leak_ms"}, PMAX3, 1,
     {{"COST", 1, 0, MAX_COUNT, {"REFUND"}}, {"REFUND", 1, 0, MAX_COUNT, {"COST", "FORCE"}},
      {"NODELAY", 0, 0, 0, {NULL}}, {"FORCE", 0, 0, 0, {"REFUND"}}},
     4},
    {"WINDOW", 2, {"limit", "window_ms"}, PMAX3, 0,
     {{"COST", 1, 0, MAX_COUNT, {"REFUND"}}, {"REFUND", 1, 0, MAX_COUNT, {"COST", "ATMOST", "FORCE"}},
      {"FIXED", 0, 0, 0, {"SLIDING", "SUBWINDOWS"}}, {"SLIDING", 0, 0, 0, {"FIXED", "SUBWINDOWS"}},
      {"SUBWINDOWS", 1, 2, 60, {"FIXED", "SLIDING"}}, {"ATMOST", 0, 0, 0, {"REFUND", "FORCE"}},
      {"FORCE", 0, 0, 0, {"REFUND", "ATMOST"}}},
     7},
    {"SLIDINGLOG", 2, {"limit", "window_ms"}, {MAX_SLOG, MAX_COUNT}, 0,
     {{"MINGAP", 1, 1, MAX_COUNT, {NULL}}, {"COST", 1, 0, MAX_SLOG, {"REFUND"}},
      {"REFUND", 1, 0, MAX_SLOG, {"COST", "FORCE"}}, {"FORCE", 0, 0, 0, {"REFUND"}}},
     4},
    {"CONCURRENCY", 2, {"limit", "lease_ms"}, {MAX_LEASE, MAX_COUNT}, 0,
     {{"COST", 1, 1, MAX_LEASE, {NULL}}, {"ID", 2, 1, 64, {NULL}}}, 2},
};
#define NCKINDS ((int)(sizeof ckinds / sizeof ckinds[0]))

/* The policies the vectors name, and the reference's record of them. */
typedef struct pmodel {
    const char *name;
    size_t len;
    int exists, n, shadow;
    unsigned leases; /* bit i: limit i is a CONCURRENCY one (its reply has a seventh field, the lease) */
} pmodel;
#define P64 "PPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPP"
static pmodel pmodels[] = {{"bp", 2, 1, BP_LIMITS, 0, BP_LEASES}, {"bp2", 3, 1, 1, 1, 0}, {"rp", 2, 0, 0, 0, 0},
                           {"rq", 2, 0, 0, 0, 0},         {"Rp-_9", 5, 0, 0, 0, 0}, {P64, 64, 0, 0, 0, 0}};
#define NPMODELS ((int)(sizeof pmodels / sizeof pmodels[0]))
static const bin set_names[] = {B("rp"), B("rq"), B("Rp-_9"), B(P64), B(P64 "P"), B(""), B("a.b"), B("\xff"), B("r p")};
static const bin check_names[] = {B("bp"), B("bp2"), B("rp"), B("rq"), B(P64), B("nosuch"), B(""), B("b\0p"), B(P64 "P")};
static const bin limit_names[] = {B("a"), B("b"), B("sec"), B("A"), B("l-_"), B(""), B("x.y"), B("\r\n"),
                                  B("lllllllllllllllllllllllllllllllll"), B("llllllllllllllllllllllllllllllll")};
#define NKEYS_P 6
static const bin pkeys[NKEYS_P] = {B("fp:0"), B("fp:1"), B("fp:2"), B("fp:\0\r\n"), B("fp:str"), B("fp:tok")};
static char key_owner[NKEYS_P][80]; /* the policy a key of type rl-checks was created under */

static pmodel *pmodel_of(const char *s, size_t n) {
    for (int i = 0; i < NPMODELS; i++)
        if (pmodels[i].len == n && memcmp(pmodels[i].name, s, n) == 0) return &pmodels[i];
    return NULL;
}

/* An argument as errors show it: printable, no quote, at most 32 characters (the last three "..." when cut). */
static void shown_as(char out[40], const char *s, size_t n) {
    size_t j = 0;
    for (size_t k = 0; k < n && j < 32; k++) {
        unsigned char ch = (unsigned char)s[k];
        out[j++] = (ch >= 0x20 && ch < 0x7f && ch != '\'') ? (char)ch : '?';
    }
    if (n > 32) out[29] = out[30] = out[31] = '.';
    out[j] = '\0';
}

static int valid_name(const char *s, size_t n, size_t max) { return name_ok((const unsigned char *)s, n, max); }

/* What the reference says of a vector. */
typedef struct pverdict {
    int kind;            /* P_ERR, P_OK (SET, FLUSH), P_SIX (a check's reply), P_INT (DEL), P_LEASES (GET, LIST) */
    char error[400];
    int n, shadow;       /* SET: the policy's; a check: its policy's */
    unsigned leases;     /* the same: its limits that answer a lease (pmodel's) */
    unsigned logs;       /* SET: its SLIDINGLOG limits */
    int dry, waits, unmodeled;
    pmodel *policy;      /* SET, DEL, a check: the policy named (NULL: none of the record's) */
    int key;             /* a check: its key's index */
} pverdict;

static int pv_error(pverdict *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int pv_error(pverdict *v, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->error, sizeof v->error, fmt, ap);
    va_end(ap);
    v->kind = P_ERR;
    return -1;
}

static const copt *copt_named(const ckind *k, const char *s, size_t n) {
    for (int i = 0; i < k->nopts; i++)
        if (eq_ci(s, n, k->opts[i].name)) return &k->opts[i];
    return NULL;
}

/* Clause i (1-based) of a SET at args[*at] (the kind), named nm: 0, or -1 with v's error. */
static int predict_clause(const argv_t *a, int *at, int i, const char *nm, pverdict *v) {
    int nargs = a->argc;
    const ckind *k = NULL;
    static const char *const others[] = {"SMOOTH", "QUOTA"};
    for (size_t o = 0; o < sizeof others / sizeof others[0]; o++)
        if (*at < nargs && eq_ci(a->v[*at], a->l[*at], others[o])) v->unmodeled = 1;
    for (int j = 0; j < NCKINDS; j++)
        if (*at < nargs && eq_ci(a->v[*at], a->l[*at], ckinds[j].kind)) k = &ckinds[j];
    if (!k) return pv_error(v, "ERR LIMIT %d (%s): " KIND_ERR, i, nm);
    *at += 1;
    if (nargs - *at < k->nparams) return pv_error(v, "ERR LIMIT %d (%s): %s needs %d numbers", i, nm, k->kind, k->nparams);
    long long p[3];
    for (int j = 0; j < k->nparams; j++, *at += 1)
        if (!strict_ll(a->v[*at], a->l[*at], &p[j]) || p[j] < 1 || p[j] > k->pmax[j])
            return pv_error(v, "ERR LIMIT %d (%s): %s: must be an integer between 1 and %lld", i, nm, k->pname[j], k->pmax[j]);
    unsigned given = 0;
    long long subwindows = 0;
    for (; *at < nargs; *at += 1) {
        if (eq_ci(a->v[*at], a->l[*at], "LIMIT")) break;
        const copt *o = copt_named(k, a->v[*at], a->l[*at]);
        if (!o) break;
        int oi = (int)(o - k->opts);
        if (given & (1u << oi)) return pv_error(v, "ERR LIMIT %d (%s): %s: given more than once", i, nm, o->name);
        for (int j = 0; j < k->nopts; j++) /* the first in the table's order */
            for (int c2 = 0; c2 < 3 && o->conflicts[c2]; c2++)
                if ((given & (1u << j)) && strcmp(k->opts[j].name, o->conflicts[c2]) == 0)
                    return pv_error(v, "ERR LIMIT %d (%s): %s: cannot be combined with %s", i, nm, o->name, k->opts[j].name);
        given |= 1u << oi;
        if (!o->value) continue;
        if (++*at == nargs) return pv_error(v, "ERR LIMIT %d (%s): %s: needs a value", i, nm, o->name);
        if (o->value == 2) { /* bytes: any, the word LIMIT too */
            if ((long long)a->l[*at] < o->min || (long long)a->l[*at] > o->max)
                return pv_error(v, "ERR LIMIT %d (%s): %s: must be 1 to %lld bytes", i, nm, o->name, o->max);
            continue;
        }
        long long val;
        if (!strict_ll(a->v[*at], a->l[*at], &val) || val < o->min || val > o->max)
            return pv_error(v, "ERR LIMIT %d (%s): %s: must be an integer between %lld and %lld", i, nm, o->name, o->min,
                            o->max);
        if (strcmp(o->name, "SUBWINDOWS") == 0) subwindows = val;
    }
    if (*at < nargs && !eq_ci(a->v[*at], a->l[*at], "LIMIT")) {
        char shown[40];
        shown_as(shown, a->v[*at], a->l[*at]);
        return pv_error(v, "ERR LIMIT %d (%s): '%s' is not an option of %s", i, nm, shown, k->kind);
    }
    const copt *atmost = copt_named(k, "ATMOST", 6), *force = copt_named(k, "FORCE", 5), *nodelay = copt_named(k, "NODELAY", 7);
    if (atmost && (given & (1u << (atmost - k->opts)))) return pv_error(v, "ERR LIMIT %d (%s): " ATMOST_ERR, i, nm);
    const copt *id = copt_named(k, "ID", 2);
    if (id && (given & (1u << (id - k->opts)))) return pv_error(v, "ERR LIMIT %d (%s): " ID_ERR, i, nm);
    if (strcmp(k->kind, "CONCURRENCY") == 0) v->leases |= 1u << (i - 1);
    if (strcmp(k->kind, "SLIDINGLOG") == 0) v->logs |= 1u << (i - 1);
    if (k->rate && (__int128)p[0] * p[2] > (__int128)MAX_COUNT * p[1]) {
        const cmddef *d = &cmds[strcmp(k->kind, "TOKEN") == 0 ? 0 : 1];
        return pv_error(v, "ERR LIMIT %d (%s): %s", i, nm, d->combo_error + 4);
    }
    if (nodelay && (given & (1u << (force - k->opts))) && !(given & (1u << (nodelay - k->opts))))
        return pv_error(v, "ERR LIMIT %d (%s): FORCE: needs NODELAY (a shaping bucket queues requests: it has no debt, a "
                           "policing one does)", i, nm);
    if (subwindows && p[1] % subwindows != 0)
        return pv_error(v, "ERR LIMIT %d (%s): SUBWINDOWS: window_ms must be a multiple of n (%lld is not a multiple of %lld)",
                        i, nm, p[1], subwindows);
    return 0;
}

/* RL.POLICY SET name [SHADOW] LIMIT limit_name spec ... (docs/commands.md#rlpolicy). */
static void predict_policy_set(const argv_t *a, pverdict *v) {
    v->policy = a->argc > 2 ? pmodel_of(a->v[2], a->l[2]) : NULL;
    if (a->argc < 3) {
        pv_error(v, "ERR wrong number of arguments for 'rl.policy|set' command");
        return;
    }
    if (!valid_name(a->v[2], a->l[2], 64)) {
        pv_error(v, POLICY_NAME_ERR);
        return;
    }
    int at = 3, n = 0;
    v->shadow = at < a->argc && eq_ci(a->v[at], a->l[at], "SHADOW");
    at += v->shadow;
    const char *names[17];
    size_t lens[17];
    while (at < a->argc) {
        if (n == MAX_POLICY_LIMITS) {
            pv_error(v, LIMIT_COUNT_ERR);
            return;
        }
        if (!eq_ci(a->v[at], a->l[at], "LIMIT")) {
            char shown[40];
            shown_as(shown, a->v[at], a->l[at]);
            pv_error(v, "ERR '%s': expected %sLIMIT limit_name kind ...", shown, n == 0 && at == 3 ? "SHADOW or " : "");
            return;
        }
        at++;
        if (at >= a->argc || !valid_name(a->v[at], a->l[at], 32)) {
            pv_error(v, "ERR LIMIT %d: " LIMIT_NAME_ERR, n + 1);
            return;
        }
        char nm[40];
        snprintf(nm, sizeof nm, "%.*s", (int)a->l[at], a->v[at]);
        names[n] = a->v[at];
        lens[n] = a->l[at];
        at++;
        for (int j = 0; j < n; j++)
            if (lens[j] == lens[n] && memcmp(names[j], names[n], lens[n]) == 0) {
                pv_error(v, "ERR LIMIT %d (%s): limit name used twice (LIMIT %d has it)", n + 1, nm, j + 1);
                return;
            }
        for (int j = at; j < a->argc && !eq_ci(a->v[j], a->l[j], "LIMIT"); j++)
            if (eq_ci(a->v[j], a->l[j], "REFUND")) {
                pv_error(v, "ERR LIMIT %d (%s): " REFUND_ERR, n + 1, nm);
                return;
            }
        if (predict_clause(a, &at, n + 1, nm, v) != 0) return;
        n++;
    }
    if (n == 0) {
        pv_error(v, LIMIT_COUNT_ERR);
        return;
    }
    v->kind = P_OK;
    v->n = n;
}


/* RL.CHECK / RL.CHECK_RO policy key [options] (docs/commands.md#rlcheck), the key of type keytype. */
static void predict_check(const argv_t *a, int ro, const char *keytype, pverdict *v) {
    const char *lname = ro ? "rl.check_ro" : "rl.check";
    if (a->argc < 3 || a->argc - 3 > MAX_ARGS) {
        pv_error(v, "ERR wrong number of arguments for '%s' command", lname);
        return;
    }
    unsigned given = 0;
    static const char *const opts[] = {"COST", "DRYRUN", "WAIT"};
    for (int i = 3; i < a->argc; i++) {
        int o = -1;
        for (int k = 0; k < 3; k++)
            if (eq_ci(a->v[i], a->l[i], opts[k]) && !(ro && k > 0)) o = k;
        if (o < 0) {
            char shown[40];
            shown_as(shown, a->v[i], a->l[i]);
            pv_error(v, "ERR '%s': not an option of %s", shown, lname);
            return;
        }
        if (given & (1u << o)) {
            pv_error(v, "ERR %s: given more than once", opts[o]);
            return;
        }
        given |= 1u << o;
        if (o == 1) continue;
        if (++i == a->argc) {
            pv_error(v, "ERR %s: needs a value", opts[o]);
            return;
        }
        long long val;
        long long min = o == 0 ? 0 : 1;
        if (!strict_ll(a->v[i], a->l[i], &val) || val < min || val > MAX_COUNT) {
            pv_error(v, "ERR %s: must be an integer between %lld and %lld", opts[o], min, MAX_COUNT);
            return;
        }
    }
    v->dry = ro || (given & 2);
    v->waits = (given & 4) != 0;
    pmodel *m = pmodel_of(a->v[1], a->l[1]);
    v->policy = m;
    if (!m || !m->exists) {
        char shown[40];
        shown_as(shown, a->v[1], a->l[1]);
        pv_error(v, "ERR policy '%s': no such policy", shown);
        return;
    }
    if (strcmp(keytype, "none") != 0 && strcmp(keytype, "rl-checks") != 0) {
        pv_error(v, WRONGTYPE);
        return;
    }
    if (strcmp(keytype, "rl-checks") == 0 && strcmp(key_owner[v->key], m->name) != 0) {
        pv_error(v, "ERR key was checked under policy '%s', not '%s'", key_owner[v->key], m->name);
        return;
    }
    v->kind = P_SIX;
    v->n = m->n;
    v->shadow = m->shadow;
    v->leases = m->leases;
}

static void predict_policy(const argv_t *a, const char *keytype, pverdict *v) {
    memset(v, 0, sizeof *v);
    v->key = -1;
    if (eq_ci(a->v[0], a->l[0], "RL.CHECK") || eq_ci(a->v[0], a->l[0], "RL.CHECK_RO")) {
        for (int k = 0; a->argc > 2 && k < NKEYS_P; k++)
            if (a->l[2] == pkeys[k].n && memcmp(a->v[2], pkeys[k].p, pkeys[k].n) == 0) v->key = k;
        predict_check(a, a->l[0] == 11, keytype, v);
        return;
    }
    if (a->argc < 2) {
        pv_error(v, "ERR wrong number of arguments for 'rl.policy' command");
        return;
    }
    static const char *const subs[] = {"SET", "GET", "DEL", "LIST", "FLUSH"};
    static const int arity[] = {-3, 3, 3, 2, 2};
    int s = -1;
    for (int k = 0; k < 5; k++)
        if (eq_ci(a->v[1], a->l[1], subs[k])) s = k;
    if (s < 0) {
        pv_error(v, "ERR unknown subcommand '%.*s'. Try RL.POLICY HELP.", (int)a->l[1], a->v[1]);
        return;
    }
    char lower[8];
    size_t k = 0;
    for (; subs[s][k]; k++) lower[k] = (char)tolower((unsigned char)subs[s][k]);
    lower[k] = '\0';
    if (arity[s] > 0 ? a->argc != arity[s] : a->argc < -arity[s]) {
        pv_error(v, "ERR wrong number of arguments for 'rl.policy|%s' command", lower);
        return;
    }
    if (s == 0) {
        predict_policy_set(a, v);
        return;
    }
    v->policy = a->argc > 2 ? pmodel_of(a->v[2], a->l[2]) : NULL;
    v->kind = s == 2 ? P_INT : s == 4 ? P_OK : P_LEASES;
}

/* A clause for a random SET: mostly well formed, sometimes not. */
static void random_clause(rng *r, argv_t *a) {
    static const char *const other_kinds[] = {"BUCKET", "LIMIT", "ALL", ""};
    const ckind *k = &ckinds[rnd(r) % NCKINDS];
    if (rnd(r) % 12 == 0) random_case_word(r, a, PICK(r, other_kinds));
    else random_case_word(r, a, k->kind);
    int nparams = k->nparams - (rnd(r) % 15 == 0);
    for (int i = 0; i < nparams; i++) {
        if (rnd(r) % 20) {
            a_str(a, PICK(r, small_numbers));
        } else {
            bin b = PICK(r, edge_tokens);
            a_bin(a, b.p, b.n);
        }
    }
    static const char *const foreign[] = {"DRYRUN", "BLOCK", "WAIT", "REFUND", "SHADOW", "FOO", "ID"};
    for (int n = (int)(rnd(r) % 3); n > 0; n--) {
        uint64_t pick = rnd(r) % 16;
        if (pick < 13) {
            const copt *o = &k->opts[rnd(r) % (uint64_t)k->nopts];
            if (strcmp(o->name, "REFUND") == 0 && rnd(r) % 4) continue; /* (it ends every clause it is in) */
            random_case_word(r, a, o->name);
            if (o->value && rnd(r) % 10) {
                if (rnd(r) % 6) a_str(a, PICK(r, small_numbers));
                else random_token(r, a); /* (an ID's too: empty, long, binary) */
            }
        } else if (pick < 15) {
            random_case_word(r, a, PICK(r, foreign));
        } else {
            random_token(r, a);
        }
    }
}

static void random_policy_vector(rng *r, argv_t *a) {
    a_reset(a);
    uint64_t what = rnd(r) % 20;
    if (what < 9) { /* RL.POLICY SET */
        random_case_word(r, a, "RL.POLICY");
        random_case_word(r, a, "SET");
        bin name = PICK(r, set_names);
        a_bin(a, name.p, name.n);
        if (rnd(r) % 4 == 0) random_case_word(r, a, "SHADOW");
        static const int counts[] = {1, 1, 1, 2, 2, 3, 4, 0, 16, 17};
        int n = PICK(r, counts);
        for (int i = 0; i < n; i++) {
            if (rnd(r) % 40 == 0) random_token(r, a);
            else random_case_word(r, a, "LIMIT");
            bin nm = rnd(r) % 6 ? limit_names[i % 5] : PICK(r, limit_names);
            if (n >= 16 && rnd(r) % 3) { /* many limits: distinct names, mostly */
                char many[16];
                snprintf(many, sizeof many, "m%d", i);
                a_str(a, many);
            } else {
                a_bin(a, nm.p, nm.n);
            }
            random_clause(r, a);
        }
        if (rnd(r) % 10 == 0) random_token(r, a);
        return;
    }
    if (what < 17) { /* RL.CHECK, RL.CHECK_RO */
        int ro = rnd(r) % 3 == 0;
        random_case_word(r, a, ro ? "RL.CHECK_RO" : "RL.CHECK");
        bin name = rnd(r) % 4 ? check_names[rnd(r) % (rnd(r) % 2 ? 2 : 5)] : PICK(r, check_names);
        a_bin(a, name.p, name.n);
        bin key = pkeys[rnd(r) % (rnd(r) % 4 ? 4 : NKEYS_P)];
        a_bin(a, key.p, key.n);
        static const char *const words[] = {"COST", "COST", "DRYRUN", "WAIT", "FORCE", "REFUND"};
        for (int n = (int)(rnd(r) % 3); n > 0; n--) {
            if (rnd(r) % 6) {
                const char *w = PICK(r, words);
                random_case_word(r, a, w);
                if ((strcmp(w, "COST") == 0 || strcmp(w, "WAIT") == 0) && rnd(r) % 8) {
                    if (rnd(r) % 3) a_str(a, PICK(r, small_numbers));
                    else random_token(r, a);
                }
            } else {
                random_token(r, a);
            }
        }
        if (rnd(r) % 40 == 0)
            while (a->argc < 3 + MAX_ARGS + 1) a_words(a, "DRYRUN"); /* too many */
        return;
    }
    /* GET, DEL, LIST, FLUSH with too many arguments, unknown subcommands */
    static const char *const subs[] = {"GET", "DEL", "LIST", "FLUSH", "FOO", "HELP", "SETS"};
    random_case_word(r, a, "RL.POLICY");
    const char *sub = PICK(r, subs);
    random_case_word(r, a, sub);
    int extra = (int)(rnd(r) % 3);
    if (strcmp(sub, "FLUSH") == 0 && extra == 0) extra = 1; /* (the record's policies stay) */
    for (int i = 0; i < extra; i++) {
        bin name = PICK(r, set_names);
        a_bin(a, name.p, name.n);
    }
}

/* RL.CHECK's reply: allowed, retry_after_ms, reset_after_ms, then n six-field replies, seven for a limit of
 * `leases` (its lease: a bulk string, or nil when the call took none: always so for a denied or a dry call);
 * the verdict 1 iff every limit admits (always 1 under SHADOW). *denied: a limit denied. */
static int check_reply_ok(const redisReply *x, int n, unsigned leases, int shadow, int dry, int *denied, int *took) {
    *denied = *took = 0;
    if (x->type != REDIS_REPLY_ARRAY || (int)x->elements != 3 + n) return 0;
    for (int i = 0; i < 3; i++)
        if (x->element[i]->type != REDIS_REPLY_INTEGER) return 0;
    int lease_taken = 0;
    for (int i = 0; i < n; i++) {
        const redisReply *l = x->element[3 + i];
        size_t fields = (leases >> i) & 1 ? 7 : 6;
        if (l->type != REDIS_REPLY_ARRAY || l->elements != fields) return 0;
        for (int k = 0; k < 6; k++)
            if (l->element[k]->type != REDIS_REPLY_INTEGER) return 0;
        if (l->element[0]->integer != 0 && l->element[0]->integer != 1) return 0;
        *denied |= l->element[0]->integer == 0;
        if (fields == 7) {
            const redisReply *lease = l->element[6];
            if (lease->type != REDIS_REPLY_NIL && (lease->type != REDIS_REPLY_STRING || lease->len < 1 || lease->len > 64))
                return 0;
            lease_taken |= lease->type == REDIS_REPLY_STRING;
        }
    }
    if (lease_taken && (*denied || dry)) return 0;
    *took = lease_taken;
    long long allowed = x->element[0]->integer;
    return shadow ? allowed == 1 : allowed == !*denied;
}

static int same_reply(const redisReply *a, const redisReply *b) {
    char *x = NULL, *y = NULL;
    size_t lx = 0, ly = 0, cx = 0, cy = 0;
    ser_reply(&x, &lx, &cx, a);
    ser_reply(&y, &ly, &cy, b);
    int same = lx == ly && memcmp(x, y, lx) == 0;
    free(x);
    free(y);
    return same;
}

#define POLICY_VECTORS 6000

static void test_policy_fuzz(void) {
    rng r = {0x9011c7f022ULL};
    freeReplyObject(cmd(c, "SET fp:str x"));
    freeReplyObject(cmd(c, "RL.TOKEN fp:tok 10 1 1000"));
    long long mismatches = 0, changed = 0, pings_bad = 0, sets_taken = 0, checks_ok = 0, skipped = 0, sets_logs = 0,
              sets_leases = 0, leases_taken = 0, lease_checks = 0;
    static argv_t batch[FUZZ_BATCH];
    for (int done = 0; done < POLICY_VECTORS && !connection_lost; done += FUZZ_BATCH) {
        for (int i = 0; i < FUZZ_BATCH; i++) {
            argv_t *a = &batch[i];
            for (;;) { /* leave out what would wait (a denied WAIT), and words the reference does not read */
                random_policy_vector(&r, a);
                pverdict v;
                predict_policy(a, "none", &v);
                if (!(v.kind == P_SIX && v.waits) && !v.unmodeled) break;
                skipped++;
            }
            int is_check = a->l[0] >= 8 && strncasecmp(a->v[0], "RL.CHECK", 8) == 0;
            bin target = a->argc > (is_check ? 1 : 2) ? (bin){a->v[is_check ? 1 : 2], a->l[is_check ? 1 : 2]} : (bin)B("rp");
            bin key = is_check && a->argc > 2 ? (bin){a->v[2], a->l[2]} : (bin)B("fp:none");
            redisAppendCommand(c, "RL.POLICY LIST");
            redisAppendCommand(c, "RL.POLICY GET %b", target.p, target.n);
            redisAppendCommand(c, "TYPE %b", key.p, key.n);
            redisAppendCommand(c, "DUMP %b", key.p, key.n);
            redisAppendCommand(c, "PEXPIRETIME %b", key.p, key.n);
            send_argv(a);
            redisAppendCommand(c, "RL.POLICY LIST");
            redisAppendCommand(c, "RL.POLICY GET %b", target.p, target.n);
            redisAppendCommand(c, "DUMP %b", key.p, key.n);
            redisAppendCommand(c, "PEXPIRETIME %b", key.p, key.n);
            redisAppendCommand(c, "PING");
        }
        for (int i = 0; i < FUZZ_BATCH && !connection_lost; i++) {
            argv_t *a = &batch[i];
            redisReply *rep[11];
            for (int k = 0; k < 11; k++) rep[k] = get_reply();
            if (connection_lost) {
                CHECK(!"the connection survives every random policy vector");
                fprintf(stderr, "     last vectors in the batch include: %s\n", describe(a));
                break;
            }
            fuzz_tried++;
            const char *keytype = rep[2]->type == REDIS_REPLY_STATUS ? rep[2]->str : "?";
            pverdict v;
            predict_policy(a, keytype, &v);
            redisReply *x = rep[5];
            int ok = 0, unchanged = 1, denied = 0, took = 0;
            switch (v.kind) {
            case P_ERR: ok = x->type == REDIS_REPLY_ERROR && strcmp(x->str, v.error) == 0 && printable(x->str, x->len); break;
            case P_OK:
                ok = reply_is_status(x, "OK");
                if (ok && v.n) { /* a SET: GET answers the words after the name, as sent */
                    const redisReply *g = rep[7];
                    ok = g->type == REDIS_REPLY_ARRAY && (int)g->elements == a->argc - 3;
                    for (int k = 0; ok && k < a->argc - 3; k++)
                        ok = g->element[k]->len == a->l[3 + k] && memcmp(g->element[k]->str, a->v[3 + k], a->l[3 + k]) == 0;
                    if (ok && v.policy) {
                        v.policy->exists = 1;
                        v.policy->n = v.n;
                        v.policy->shadow = v.shadow;
                        v.policy->leases = v.leases;
                    }
                    sets_taken += ok;
                    sets_logs += ok && v.logs;
                    sets_leases += ok && v.leases;
                    unchanged = 0;
                }
                break;
            case P_SIX:
                ok = check_reply_ok(x, v.n, v.leases, v.shadow, v.dry, &denied, &took);
                checks_ok += ok;
                leases_taken += ok && took;
                lease_checks += ok && v.leases;
                unchanged = v.dry || denied;
                if (ok && !unchanged) { /* a key this call created belongs to its policy */
                    if (rep[3]->type == REDIS_REPLY_NIL && rep[8]->type == REDIS_REPLY_STRING && v.key >= 0)
                        snprintf(key_owner[v.key], sizeof key_owner[v.key], "%s", v.policy->name);
                }
                break;
            case P_INT: /* DEL */
                ok = x->type == REDIS_REPLY_INTEGER && x->integer == (v.policy && v.policy->exists);
                if (ok && v.policy && v.policy->exists) {
                    v.policy->exists = 0;
                    unchanged = 0;
                }
                break;
            default: /* GET, LIST */
                ok = x->type == REDIS_REPLY_ARRAY ||
                     (x->type == REDIS_REPLY_NIL && eq_ci(a->v[1], a->l[1], "GET") && !(v.policy && v.policy->exists));
                break;
            }
            if (!ok && mismatches++ < 10)
                fprintf(stderr, "     %s (key type %s)\n     got: %s\n     expected: %s\n", describe(a), keytype,
                        x->type == REDIS_REPLY_ERROR || x->type == REDIS_REPLY_STATUS ? x->str
                        : x->type == REDIS_REPLY_ARRAY                                ? "(array)"
                                                                                      : "(other)",
                        v.kind == P_ERR ? v.error : v.kind == P_SIX ? "(RL.CHECK's reply)" : "(a reply)");
            /* Nothing the call was not to change changed: the policies always but for a taken SET or DEL, the key
             * after an error, a DRYRUN, a read-only or a denied check. */
            int same_policies = same_reply(rep[0], rep[6]) && same_reply(rep[1], rep[7]);
            int same_key = same_reply(rep[3], rep[8]) && same_reply(rep[4], rep[9]);
            if (unchanged && (!same_policies || !same_key) && changed++ < 5)
                fprintf(stderr, "     changed %s: %s\n", same_policies ? "the key" : "a policy", describe(a));
            if (!unchanged && v.kind == P_SIX && !same_policies && changed++ < 5)
                fprintf(stderr, "     a check changed a policy: %s\n", describe(a));
            if (!reply_is_status(rep[10], "PONG")) pings_bad++;
            if (x->type == REDIS_REPLY_ERROR) fuzz_errors++;
            else fuzz_ok++;
            for (int k = 0; k < 11; k++) freeReplyObject(rep[k]);
        }
    }
    CHECK_EQ(mismatches, 0);
    CHECK_EQ(changed, 0);
    CHECK_EQ(pings_bad, 0);
    /* the valid paths were taken, not only the errors */
    CHECK(sets_taken > 100 && checks_ok > 200);
    /* sliding logs and leases among them (a key's leases last: few checks admitted take one) */
    CHECK(sets_logs > 10 && sets_leases > 10 && lease_checks > 30 && leases_taken > 0);
    printf("  random policy vectors: %d (%lld policies set, %lld with a sliding log, %lld with leases; %lld checks "
           "answered, %lld of them with leases, %lld leases taken; %lld left out)\n",
           POLICY_VECTORS, sets_taken, sets_logs, sets_leases, checks_ok, lease_checks, leases_taken, skipped);
}

/* --- setup ------------------------------------------------------------------------------------------------ */

static void setup_keys(void) {
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", T0));
    static const char *const lines[] = {
        "RL.TOKEN bi:tok 10 1 1000 COST 3",         "RL.LEAKY bi:leak 10 1 1000 COST 3",
        "RL.WINDOW bi:win 10 1000 COST 3",          "RL.SLIDINGLOG bi:log 10 1000 COST 3",
        "RL.SMOOTH bi:smooth 2.5 WARMUP 4000 COST 3", "RL.ACQUIRE bi:lease 10 100000 COST 3 ID held",
        "RL.ACQUIRE bi:lease 10 50000",             "RL.QUOTA bi:quota 10 MONTH OFFSET 60 COST 3",
        "RL.POLICY SET bp " BP_SPEC,                "RL.POLICY SET bp2 " BP2_SPEC,
        "RL.CHECK bp bi:chk COST 2",                "SET bi:str hello",
        "RPUSH bi:list a b c",
        "HSET bi:hash f v",                         "SADD bi:set a b",
        "ZADD bi:zset 1 a 2 b",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        redisReply *r = call_line(lines[i]);
        CHECK(r && r->type != REDIS_REPLY_ERROR);
        if (r) freeReplyObject(r);
    }
    static const char *const expire[] = {"bi:str", "bi:list", "bi:hash", "bi:set", "bi:zset"};
    for (size_t i = 0; i < sizeof expire / sizeof expire[0]; i++) CHECK_EQ(cmd_int(c, "PEXPIRE %s 100000000", expire[i]), 1);
    for (int i = 0; i < NCMDS; i++) {
        argv_t a;
        a_reset(&a);
        a_str(&a, cmds[i].name);
        a_bin(&a, bin_key[i].p, bin_key[i].n);
        a_words(&a, cmds[i].valid);
        a_words(&a, "COST 2");
        rl_result f;
        CHECK(expect_six(&a, &f));
    }
    for (size_t i = 0; i < sizeof typed_keys / sizeof typed_keys[0]; i++) {
        watch_key(typed_keys[i], strlen(typed_keys[i]));
        redisReply *t = cmd(c, "TYPE %s", typed_keys[i]);
        CHECK(reply_is_status(t, typed_kinds[i]));
        freeReplyObject(t);
    }
    for (int i = 0; i < NCMDS; i++) watch_key(bin_key[i].p, bin_key[i].n);
    watch_key(MISSING_KEY, strlen(MISSING_KEY));
    const bin chk = CHK_BIN_KEY; /* a binary-named key checked under bp */
    redisReply *r = cmd(c, "RL.CHECK bp %b", chk.p, chk.n);
    CHECK(r->type == REDIS_REPLY_ARRAY && r->elements == 3 + BP_LIMITS);
    freeReplyObject(r);
    watch_key(chk.p, chk.n);
}

/* FORCE (debt): refused with what it excludes (REFUND, ATMOST, WAIT, BLOCK), in either order; on the
 * commands that cannot hold a debt (RL.SMOOTH, RL.ACQUIRE), on RL.LEAKY without NODELAY, and in RL.ALL where a
 * clause cannot take it; each error names FORCE or the option, and changes nothing. */
static void test_force(void) {
    static const struct {
        const char *line, *error;
    } calls[] = {
        {"RL.TOKEN bi:tok 10 1 1000 FORCE REFUND 1", "ERR REFUND: cannot be combined with FORCE"},
        {"RL.TOKEN bi:tok 10 1 1000 REFUND 1 FORCE", "ERR FORCE: cannot be combined with REFUND"},
        {"RL.TOKEN bi:tok 10 1 1000 COST 5 ATMOST FORCE", "ERR FORCE: cannot be combined with ATMOST"},
        {"RL.TOKEN bi:tok 10 1 1000 FORCE ATMOST", "ERR ATMOST: cannot be combined with FORCE"},
        {"RL.TOKEN bi:tok 10 1 1000 FORCE WAIT 100", "ERR WAIT: cannot be combined with FORCE"},
        {"RL.TOKEN bi:tok 10 1 1000 WAIT 100 FORCE", "ERR FORCE: cannot be combined with WAIT"},
        {"RL.TOKEN bi:tok 10 1 1000 FORCE FORCE", "ERR FORCE: given more than once"},
        {"RL.TOKEN_RO bi:tok 10 1 1000 force REFUND 1", "ERR REFUND: cannot be combined with FORCE"},
        {"RL.TOKEN bi:tok 10 1 1000 FORCE 5", "ERR '5': not an option of rl.token"},
        {"RL.WINDOW bi:win 10 1000 FORCE REFUND 2", "ERR REFUND: cannot be combined with FORCE"},
        {"RL.WINDOW bi:win 10 1000 ATMOST FORCE", "ERR FORCE: cannot be combined with ATMOST"},
        {"RL.WINDOW bi:win 10 1000 SUBWINDOWS 5 FORCE WAIT 10", "ERR WAIT: cannot be combined with FORCE"},
        {"RL.SLIDINGLOG bi:log 10 1000 FORCE REFUND 1", "ERR REFUND: cannot be combined with FORCE"},
        {"RL.SLIDINGLOG bi:log 10 1000 FORCE COST 100001", "ERR COST: must be an integer between 0 and 100000"},
        {"RL.LEAKY bi:leak 10 1 1000 FORCE",
         "ERR FORCE: needs NODELAY (a shaping bucket queues requests: it has no debt, a policing one does)"},
        {"RL.LEAKY_RO bi:leak 10 1 1000 COST 50 FORCE",
         "ERR FORCE: needs NODELAY (a shaping bucket queues requests: it has no debt, a policing one does)"},
        {"RL.LEAKY bi:leak 10 1 1000 BLOCK FORCE", "ERR FORCE: cannot be combined with BLOCK"},
        {"RL.LEAKY bi:leak 10 1 1000 FORCE BLOCK", "ERR BLOCK: cannot be combined with FORCE"},
        {"RL.LEAKY bi:leak 10 1 1000 NODELAY FORCE REFUND 1", "ERR REFUND: cannot be combined with FORCE"},
        {"RL.SMOOTH bi:smooth 5 FORCE", "ERR 'FORCE': not an option of rl.smooth"},
        {"RL.SMOOTH_RO bi:smooth 5 COST 2 FORCE", "ERR 'FORCE': not an option of rl.smooth_ro"},
        {"RL.ACQUIRE bi:lease 10 1000 FORCE", "ERR 'FORCE': not an option of rl.acquire"},
        {"RL.ACQUIRE_RO bi:lease 10 1000 FORCE", "ERR 'FORCE': not an option of rl.acquire_ro"},
        /* wrong type: checked after the options, as every call */
        {"RL.TOKEN bi:win 10 1 1000 COST 50 FORCE", WRONGTYPE},
        {"RL.ALL 1 bi:tok FORCE REFUND 1 LIMIT TOKEN 10 1 1000", "ERR REFUND: cannot be combined with FORCE"},
        {"RL.ALL 1 bi:tok FORCE WAIT 10 LIMIT TOKEN 10 1 1000", "ERR WAIT: cannot be combined with FORCE"},
        {"RL.ALL 1 bi:tok LIMIT TOKEN 10 1 1000 FORCE ATMOST", "ERR LIMIT 1: ATMOST: cannot be combined with FORCE"},
        {"RL.ALL 2 bi:tok bi:smooth FORCE COST 50 LIMIT TOKEN 10 1 1000 LIMIT SMOOTH 5",
         "ERR LIMIT 2: FORCE: SMOOTH cannot be forced (rl.smooth has no FORCE)"},
        {"RL.ALL 2 bi:tok bi:lease FORCE LIMIT TOKEN 10 1 1000 LIMIT CONCURRENCY 10 1000",
         "ERR LIMIT 2: FORCE: CONCURRENCY cannot be forced (rl.acquire has no FORCE)"},
        {"RL.ALL 2 bi:tok bi:leak FORCE COST 50 LIMIT TOKEN 10 1 1000 LIMIT LEAKY 10 1 1000",
         "ERR LIMIT 2: FORCE: needs NODELAY (a shaping bucket queues requests: it has no debt, a policing one does)"},
        {"RL.ALL 2 bi:tok bi:win REFUND 1 LIMIT TOKEN 10 1 1000 LIMIT WINDOW 10 1000 FORCE",
         "ERR LIMIT 2: FORCE: cannot be combined with the call's REFUND (a forced limit takes, it gives nothing back)"},
        {"RL.ALL 2 bi:tok bi:win WAIT 10 LIMIT TOKEN 10 1 1000 FORCE COST 50 LIMIT WINDOW 10 1000",
         "ERR LIMIT 1: FORCE: cannot be combined with the call's WAIT (a forced limit never waits)"},
        {"RL.ALL 1 bi:lease LIMIT CONCURRENCY 10 1000 FORCE", "ERR LIMIT 1: 'FORCE' is not an option of CONCURRENCY"},
        {"RL.ALL 1 bi:smooth LIMIT SMOOTH 5 FORCE", "ERR LIMIT 1: 'FORCE' is not an option of SMOOTH"},
        {"RL.ALL_RO 2 bi:tok bi:win FORCE COST 50 LIMIT TOKEN 10 1 1000 LIMIT WINDOW 10 1000 WAIT 5",
         "ERR LIMIT 2: 'WAIT' is not an option of WINDOW"},
        {"RL.ALL 2 bi:tok bi:zset FORCE COST 50 LIMIT TOKEN 10 1 1000 LIMIT WINDOW 10 1000", WRONGTYPE},
    };
    argv_t a;
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        a_reset(&a);
        a_words(&a, calls[i].line);
        expect_error(&a, calls[i].error);
    }
}

int main(void) {
    srv = server_start(NULL);
    c = server_connect(srv);
    setup_keys();
    for (int ci = 0; ci < NCMDS; ci++) {
        test_arity(ci);
        test_numbers(ci);
        test_options(ci);
    }
    test_wrong_types();
    test_setstate();
    test_lease_blobs();
    test_clock();
    test_boundaries();
    test_smooth();
    test_quota();
    test_leases();
    test_force();
    test_foreign_logs();
    test_policy_arity();
    test_policy_names();
    test_policy_structure();
    test_policy_specs();
    test_policy_valid();
    test_check_errors();
    test_policy_blobs();
    test_policy_log_lease_blobs();
    test_blob_mutations();
    test_policy_fuzz();
    test_policy_rdb();
    test_policy_long_errors();
    test_fuzz();
    test_every_key_loads();
    if (!connection_lost) CHECK(cmd_status_is(c, "PONG", "PING"));
    printf("  %lld table cases, %lld random vectors (%lld errors, %lld replies)\n", cases_tried, fuzz_tried, fuzz_errors,
           fuzz_ok);
    redisFree(c);
    if (connection_lost) server_kill9(srv); /* the server may be gone: do not try to talk to it */
    server_stop(srv);
    return check_summary("integration_badinput");
}
