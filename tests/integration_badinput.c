/* integration_badinput.c -- every RL.* command against bad input, on a real redis-server (RL.SMOOTH, whose
 * numbers are decimals, has its own table: test_smooth):
 *
 *   - tables of cases per command: arity, non-numbers, signs, zero, leading zeros, 2^63 and beyond, huge
 *     COST, unknown, repeated, conflicting and misplaced options, binary junk (NUL, CR LF, 0xff) in the
 *     key and in arguments, wrong key types. Each case must answer an error (the exact text for every
 *     case here), leave the connection in step (a PING right after answers PONG), and change nothing:
 *     every watched key (own kind, other kinds, plain types, binary names, missing) keeps its DUMP, its
 *     PEXPIRETIME and for sorted sets its ZRANGE WITHSCORES; DBSIZE and the test clock are unchanged;
 *   - valid boundary values (the largest count, period, COST) are accepted;
 *   - sorted sets the module did not write, for RL.SLIDINGLOG;
 *   - a few thousand random argument vectors (deterministic PRNG) mixing valid and invalid tokens, each
 *     checked against a reference reading of docs/commands.md: the exact error, or a well-formed reply
 *     whose fields agree with the request; the key unchanged after every error and every DRYRUN.
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
#define MAX_SLOG 100000LL
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

/* A valid call: a six-field reply (returned in f). */
static int expect_six_at(const argv_t *a, rl_result *f, const char *file, int line) {
    if (connection_lost) return 0;
    cases_tried++;
    send_argv(a);
    redisReply *r = get_reply();
    *f = rl_of(r);
    int ok = f->ok;
    if (!check_record(ok, file, line, "valid input answers the six-field reply"))
        fprintf(stderr, "     %s\n     got: %s\n", describe(a), r && r->str ? r->str : "(not six integers)");
    if (r) freeReplyObject(r);
    return ok;
}
#define expect_six(a, f) expect_six_at(a, f, __FILE__, __LINE__)

/* --- the commands ---------------------------------------------------------------------------------------- */

typedef struct optdef {
    const char *name;
    int takes_value;
    long long min, max;
    const char *conflicts; /* the option it cannot be combined with */
} optdef;

typedef struct cmddef {
    const char *name, *lname; /* as sent, and as errors name it */
    const char *kind;         /* TYPE of its key: rl-tokens, rl-leakyb, rl-window, zset */
    int nparams;
    const char *pname[3];
    long long pmax[3];
    const char *valid; /* valid numbers */
    optdef opts[5];
    int nopts;
    const char *combo_error; /* a combination refused after parsing, or NULL */
    const char *combo_args;
} cmddef;

static const cmddef cmds[] = {
    {"RL.TOKEN", "rl.token", "rl-tokens", 3, {"capacity", "refill_tokens", "refill_ms"},
     {MAX_COUNT, MAX_COUNT, MAX_COUNT}, "10 1 1000",
     {{"COST", 1, 0, MAX_COUNT, NULL}, {"DRYRUN", 0, 0, 0, NULL}, {"INTERVAL", 0, 0, 0, NULL}}, 3,
     "ERR capacity: capacity / refill_tokens * refill_ms must not exceed 1000000000000 ms (refill from empty to full would "
     "take longer than 31 years)",
     "1001 1 1000000000"},
    {"RL.LEAKY", "rl.leaky", "rl-leakyb", 3, {"capacity", "leak_tokens", "leak_ms"}, {MAX_COUNT, MAX_COUNT, MAX_COUNT},
     "10 1 1000",
     {{"COST", 1, 0, MAX_COUNT, NULL}, {"DRYRUN", 0, 0, 0, NULL}, {"NODELAY", 0, 0, 0, "BLOCK"}, {"BLOCK", 0, 0, 0, "NODELAY"}},
     4,
     "ERR capacity: capacity / leak_tokens * leak_ms must not exceed 1000000000000 ms (draining from full to empty would take "
     "longer than 31 years)",
     "1001 1 1000000000"},
    {"RL.WINDOW", "rl.window", "rl-window", 2, {"limit", "window_ms"}, {MAX_COUNT, MAX_COUNT}, "10 1000",
     {{"COST", 1, 0, MAX_COUNT, NULL},
      {"DRYRUN", 0, 0, 0, NULL},
      {"FIXED", 0, 0, 0, "SLIDING"},
      {"SLIDING", 0, 0, 0, "FIXED"}},
     4, NULL, NULL},
    {"RL.SLIDINGLOG", "rl.slidinglog", "zset", 2, {"limit", "window_ms"}, {MAX_SLOG, MAX_COUNT}, "10 1000",
     {{"COST", 1, 0, MAX_SLOG, NULL}, {"DRYRUN", 0, 0, 0, NULL}, {"MINGAP", 1, 1, MAX_COUNT, NULL}}, 3, NULL, NULL},
};
#define NCMDS 4

static const char *const all_option_names[] = {"COST", "DRYRUN", "INTERVAL", "NODELAY", "BLOCK",
                                               "FIXED", "SLIDING", "MINGAP", "PXAT"};

/* Each command's own key (a live limiter with a TTL), and one with a binary name. */
static const char *const own_key[NCMDS] = {"bi:tok", "bi:leak", "bi:win", "bi:log"};
static const bin bin_key[NCMDS] = {B("bi:\0tok\r\n\xff"), B("bi:\0leak\r\n\xff"), B("bi:\0win\r\n\xff"),
                                   B("bi:\0log\r\n\xff")};
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
    /* At most 16 arguments after the key: 17 is an arity error, 16 parses (and finds DRYRUN repeated). */
    a_begin(&a, ci, 0);
    a_words(&a, d->valid);
    while (a.argc < 2 + 17) a_str(&a, "DRYRUN");
    expect_error(&a, arity);
    a_begin(&a, ci, 1);
    a_words(&a, d->valid);
    while (a.argc < 2 + 16) a_str(&a, "DRYRUN");
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
    for (size_t i = 0; i < sizeof all_option_names / sizeof all_option_names[0]; i++) {
        if (find_opt(d, all_option_names[i])) continue;
        for (int lc = 0; lc < 2; lc++) {
            char name[16];
            for (size_t k = 0; k <= strlen(all_option_names[i]); k++)
                name[k] = lc ? (char)tolower((unsigned char)all_option_names[i][k]) : all_option_names[i][k];
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
    range_text(expected, sizeof expected, "COST", 0, d->opts[0].max);
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
                                         "bi:win", "bi:log", "bi:smooth"};
static const char *const typed_kinds[] = {"string", "list", "hash", "set", "zset", "rl-tokens", "rl-leakyb",
                                          "rl-window", "zset", "rl-smooth"};

static void test_wrong_types(void) {
    static const char *const variants[NCMDS][5] = {
        {"", "DRYRUN", "COST 0", "INTERVAL", "COST 1000000000000"},
        {"", "DRYRUN", "COST 0", "BLOCK", "NODELAY COST 5"},
        {"", "DRYRUN", "COST 0", "FIXED", "SLIDING COST 3"},
        {"", "DRYRUN", "COST 0", "MINGAP 5", "COST 100000"},
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
    /* The binary-named keys too: a token key is the wrong type for the other three. */
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
    const char *blob_len = "ERR state: must be 9 + 8n bytes, n from 1 to 64 (or use RL.SETSTATE key kind w0 [w1 ...] [PXAT unix_ms])";
    setstate_case("bi:tok", a1, 1, blob_len);
    static const bin bad_blobs[] = {B(""), B("T"), B("T0000000000000000000000000000"), B("\r\n")};
    for (size_t i = 0; i < sizeof bad_blobs / sizeof bad_blobs[0]; i++) setstate_case("bi:tok", &bad_blobs[i], 1, blob_len);
    bin unknown_kind = {"X\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\1\0\0\0\0\0\0\0", 25};
    setstate_case("bi:tok", &unknown_kind, 1, "ERR state: unknown kind");
    bin no_expiry = {"T\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 25};
    setstate_case("bi:tok", &no_expiry, 1, "ERR state: no valid expiry");
    bin bad_cell = {"W\0\0\0\0\0\0\0\0\xff\xff\xff\xff\xff\xff\xff\xff\1\0\0\0\0\0\0\0", 25};
    setstate_case("bi:win", &bad_cell, 1, "ERR state: not a valid state of this kind");

    static const bin bad_kinds[] = {B("FOO"), B(""), B("TOKENS"), B("TOK"), B("SLIDINGLOG"), B("ZSET"),
                                    B("\0TOKEN"), B("TOKEN\0"), B("\xff"), B("TOKEN ")};
    for (size_t i = 0; i < sizeof bad_kinds / sizeof bad_kinds[0]; i++) {
        bin args[] = {bad_kinds[i], B("x"), B("y")}; /* the kind is checked first */
        setstate_case("bi:tok", args, 3, "ERR kind: must be one of TOKEN, LEAKY, WINDOW, SMOOTH");
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
                 {"bi:tok", "WINDOW"}};
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
enum { P_SIX, P_OK, P_INT, P_ERR, P_SETSTATE_VALID_OR_INVALID };
typedef struct prediction {
    int kind;
    char error[256];
    int ci;              /* limiter command index, or -1 */
    long long params[3], cost;
    unsigned flags;      /* bit per option index */
    long long clock_after;
} prediction;

static void predict_limiter(const cmddef *d, int ci, const argv_t *a, const char *keytype, prediction *p) {
    p->ci = ci;
    p->cost = 1;
    int nargs = a->argc - 2;
    if (a->argc < 2 + d->nparams || nargs > 16) {
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
        if (!op->takes_value) continue;
        if (++i == a->argc) {
            p->kind = P_ERR;
            snprintf(p->error, sizeof p->error, "ERR %s: needs a value", op->name);
            return;
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
                                          : eq_ci(a->v[2], a->l[2], "SMOOTH") ? "rl-smooth" : NULL;
    if (a->argc == 3) {
        /* The compact form: a kind letter, n words, an expiry (LE), 9 + 8n bytes; then the module's call. */
        const unsigned char *b = (const unsigned char *)a->v[2];
        size_t len = a->l[2];
        long long expiry = 0;
        int well_formed = len >= 17 && len <= 521 && (len - 9) % 8 == 0;
        for (int i = 7; well_formed && i >= 0; i--) expiry = (long long)(((unsigned long long)expiry << 8) | b[len - 8 + i]);
        if (!well_formed) {
            snprintf(p->error, sizeof p->error, "ERR state: must be 9 + 8n bytes, n from 1 to 64 (or use RL.SETSTATE key kind w0 [w1 ...] [PXAT unix_ms])");
        } else if (b[0] != 'T' && b[0] != 'L' && b[0] != 'W' && b[0] != 'G') {
            snprintf(p->error, sizeof p->error, "ERR state: unknown kind");
        } else if (expiry < 1) {
            snprintf(p->error, sizeof p->error, "ERR state: no valid expiry");
        } else {
            const char *want = b[0] == 'T' ? "rl-tokens" : b[0] == 'L' ? "rl-leakyb" : b[0] == 'W' ? "rl-window" : "rl-smooth";
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
        snprintf(p->error, sizeof p->error, "ERR kind: must be one of TOKEN, LEAKY, WINDOW, SMOOTH");
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
                                           "PXAT", "TOKEN", "LEAKY", "WINDOW", "FOO", "GET", "SET", "ADVANCE", "BLOCK"};

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

/* A mostly well-formed vector for command ci (0..3 limiters, 4 RL.SETSTATE, 5 RL.CLOCK), or noise. */
static void random_vector(rng *r, argv_t *a) {
    static const char *const names[] = {"RL.TOKEN", "RL.LEAKY", "RL.WINDOW", "RL.SLIDINGLOG", "RL.SETSTATE", "RL.CLOCK"};
    int ci = (int)(rnd(r) % 20);
    ci = ci < 16 ? ci % 4 : ci < 19 ? 4 : 5;
    a_reset(a);
    random_case_word(r, a, names[ci]);
    int structured = rnd(r) % 10 < 7;
    if (ci == 5) {
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
    if (rnd(r) % 30 == 0) {
        a_bin(a, "fz:\0\r\n\xff", 7);
    } else if (rnd(r) % 10 < 7) { /* mostly a key of the command's own family, so most calls can succeed */
        static const char *const fam[] = {"tok", "leak", "win", "log", "tok"};
        char key[32];
        snprintf(key, sizeof key, "fz:%s:%d", fam[ci], (int)(rnd(r) % 4));
        a_str(a, key);
    } else {
        a_str(a, PICK(r, fz_keys));
    }
    if (!structured) {
        for (int n = (int)(rnd(r) % 19); n > 0; n--) random_token(r, a);
        return;
    }
    if (ci == 4) {
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
    const cmddef *d = &cmds[ci];
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
            if (op->takes_value && rnd(r) % 10) {
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
    static const char *const names[] = {"RL.TOKEN", "RL.LEAKY", "RL.WINDOW", "RL.SLIDINGLOG", "RL.SETSTATE", "RL.CLOCK"};
    for (int i = 0; i < 6; i++)
        if (eq_ci(a->v[0], a->l[0], names[i])) return i;
    return -1;
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
    if (p->cost > limit && (f->allowed != 0 || f->retry_after_ms != -1)) return 0; /* above capacity: denied, never */
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
    long long mismatches = 0, unchanged_bad = 0, pings_bad = 0, agree_bad = 0;
    static argv_t batch[FUZZ_BATCH];
    for (int done = 0; done < FUZZ_VECTORS && !connection_lost; done += FUZZ_BATCH) {
        for (int i = 0; i < FUZZ_BATCH; i++) {
            argv_t *a = &batch[i];
            for (;;) {
                random_vector(&r, a);
                /* An admitted BLOCK would hold the reply (up to wait_ms, possibly hours): leave out
                 * vectors that parse with BLOCK. */
                prediction p = {0};
                if (cmd_index(a) == 1) predict_limiter(&cmds[1], 1, a, "none", &p);
                if (!(cmd_index(a) == 1 && p.kind == P_SIX && (p.flags & (1u << 3)))) break;
            }
            const char *key = a->argc > 1 ? a->v[1] : "";
            size_t klen = a->argc > 1 ? a->l[1] : 0;
            if (cmd_index(a) == 5) key = "fz:0", klen = 4;
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
            p.ci = -1;
            if (ci >= 0 && ci < 4)
                predict_limiter(&cmds[ci], ci, a, keytype, &p);
            else if (ci == 4)
                predict_setstate(a, keytype, &p);
            else
                predict_clock(a, clock, &p);
            redisReply *x = rep[3];
            int ok;
            rl_result f;
            switch (p.kind) {
            case P_SIX:
                f = rl_of(x);
                ok = f.ok;
                if (ok && !six_agrees(&p, &f) && agree_bad++ < 5) fprintf(stderr, "     %s -> %s\n", describe(a), fields(&f));
                break;
            case P_OK: ok = reply_is_status(x, "OK"); break;
            case P_INT: ok = x->type == REDIS_REPLY_INTEGER && x->integer == clock; break;
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
                                                                                      : "(other)",
                        p.kind == P_SIX ? "(six-field reply)" : p.kind == P_INT ? "(the clock)" : p.error);
            if (ci == 5 && ok) clock = p.clock_after;
            /* An error, or a DRYRUN, changes nothing of the key. */
            int dry = p.kind == P_SIX && (p.flags & (1u << 1));
            if ((x->type == REDIS_REPLY_ERROR || dry) && ci != 5) {
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
}

/* --- setup ------------------------------------------------------------------------------------------------ */

static void setup_keys(void) {
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", T0));
    static const char *const lines[] = {
        "RL.TOKEN bi:tok 10 1 1000 COST 3",         "RL.LEAKY bi:leak 10 1 1000 COST 3",
        "RL.WINDOW bi:win 10 1000 COST 3",          "RL.SLIDINGLOG bi:log 10 1000 COST 3",
        "RL.SMOOTH bi:smooth 2.5 WARMUP 4000 COST 3",
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
    test_clock();
    test_boundaries();
    test_smooth();
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
