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
 *     answers 0. Lease blobs, valid and mutated, are judged by a reference reading of their layout.
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

typedef struct argv_t {
    int argc;
    const char *v[96];
    size_t l[96];
    char buf[16384];
    size_t used;
} argv_t;

static void a_reset(argv_t *a) {
    a->argc = 0;
    a->used = 0;
}

static void a_bin(argv_t *a, const char *p, size_t n) {
    if (a->argc == 96 || a->used + n + 1 > sizeof a->buf) abort();
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

/* DBSIZE, the test clock, and for every watched key: TYPE, DUMP, PEXPIRETIME, ZRANGE WITHSCORES. */
static char *snapshot(size_t *len) {
    redisAppendCommand(c, "DBSIZE");
    redisAppendCommand(c, "RL.CLOCK GET");
    for (int i = 0; i < nwatch; i++) {
        redisAppendCommand(c, "TYPE %b", watch[i].name, watch[i].len);
        redisAppendCommand(c, "DUMP %b", watch[i].name, watch[i].len);
        redisAppendCommand(c, "PEXPIRETIME %b", watch[i].name, watch[i].len);
        redisAppendCommand(c, "ZRANGE %b 0 -1 WITHSCORES", watch[i].name, watch[i].len);
    }
    char *buf = NULL;
    size_t cap = 0;
    *len = 0;
    for (int i = 0; i < 2 + 4 * nwatch; i++) {
        redisReply *r = get_reply();
        if (!r) break;
        ser_reply(&buf, len, &cap, r);
        freeReplyObject(r);
    }
    return buf;
}

/* --- the check of one bad input ---------------------------------------------------------------------------
 * The reply is an error equal to `expected` (a trailing '*' makes it a prefix), printable; a PING right
 * after answers PONG; nothing watched changed. */
static void expect_error_at(const argv_t *a, const char *expected, const char *file, int line) {
    if (connection_lost) return;
    cases_tried++;
    size_t l0, l1;
    char *before = snapshot(&l0);
    send_argv(a);
    redisAppendCommand(c, "PING");
    redisReply *r = get_reply(), *p = get_reply();
    size_t elen = strlen(expected);
    int prefix = elen > 0 && expected[elen - 1] == '*';
    int ok = r && r->type == REDIS_REPLY_ERROR && printable(r->str, r->len) &&
             (prefix ? strncmp(r->str, expected, elen - 1) == 0 : strcmp(r->str, expected) == 0);
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
#define expect_error(a, expected) expect_error_at(a, expected, __FILE__, __LINE__)

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
                                         "bi:win", "bi:log", "bi:smooth", "bi:lease", "bi:quota"};
static const char *const typed_kinds[] = {"string", "list", "hash", "set", "zset", "rl-tokens", "rl-leakyb",
                                          "rl-window", "zset", "rl-smooth", "rl-leases", "rl-quotas"};
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
    static const char *const keys[] = {"bi:lease", MISSING_KEY, "bi:str"}; /* the arguments are checked first */
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
    /* every other type of key, binary-named ones too */
    for (int k = 0; k < NTYPED + 1; k++) {
        bin key = k < NTYPED ? (bin){typed_keys[k], strlen(typed_keys[k])} : bin_key[0];
        if (k < NTYPED && strcmp(typed_kinds[k], "rl-leases") == 0) continue;
        static const char *const lines[] = {"RL.RELEASE @ held", "RL.RENEW @ held 1000", "RL.LEASES @",
                                            "RL.ACQUIRE_RO @ 10 1000", "RL.ACQUIRE_RO @ 10000 1 COST 10000 ID held"};
        for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
            a_words_with(&a, lines[i], key);
            expect_error(&a, WRONGTYPE);
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

/* --- setup ------------------------------------------------------------------------------------------------ */

static void setup_keys(void) {
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", T0));
    static const char *const lines[] = {
        "RL.TOKEN bi:tok 10 1 1000 COST 3",         "RL.LEAKY bi:leak 10 1 1000 COST 3",
        "RL.WINDOW bi:win 10 1000 COST 3",          "RL.SLIDINGLOG bi:log 10 1000 COST 3",
        "RL.SMOOTH bi:smooth 2.5 WARMUP 4000 COST 3", "RL.ACQUIRE bi:lease 10 100000 COST 3 ID held",
        "RL.ACQUIRE bi:lease 10 50000",             "RL.QUOTA bi:quota 10 MONTH OFFSET 60 COST 3",
        "SET bi:str hello",                         "RPUSH bi:list a b c",
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
    test_fuzz();
    if (!connection_lost) CHECK(cmd_status_is(c, "PONG", "PING"));
    printf("  %lld table cases, %lld random vectors (%lld errors, %lld replies)\n", cases_tried, fuzz_tried, fuzz_errors,
           fuzz_ok);
    redisFree(c);
    if (connection_lost) server_kill9(srv); /* the server may be gone: do not try to talk to it */
    server_stop(srv);
    return check_summary("integration_badinput");
}
