/* fuzz_parse.c -- libFuzzer target for the argument parser (module/parse.c).
 *
 * Input: the first byte picks the separator (bit 2 clear: ' ', set: NUL) and, the rest of it modulo the
 * number of limiters, the command from the module's own list (module/limiters.h: 0 RL.TOKEN, 1 RL.LEAKY,
 * 2 RL.WINDOW, 3 RL.SLIDINGLOG, 4 RL.SMOOTH, 5 RL.ACQUIRE, 6 RL.QUOTA, counted from '0': with a space, ';' is
 * RL.SMOOTH, 'C' RL.ACQUIRE and 'K' RL.QUOTA; with a NUL, '?', 'G' and 'O');
 * the rest, less one leading separator, is split on the separator into the arguments after the key
 * (empty arguments included, at most MAX_FUZZ_ARGS). Each argument is copied into its own heap block of exactly its length, not
 * NUL-terminated, so AddressSanitizer catches any read past it. The seed files under
 * tests/fuzz/corpus/fuzz_parse/ are plain text: "0 10 1 1000 COST 5" is RL.TOKEN 10 1 1000 COST 5, "; 0.5
 * WARMUP 4000" RL.SMOOTH 0.5 WARMUP 4000, "C 3 1000 ID job" RL.ACQUIRE 3 1000 ID job, "K 100 day OFFSET -60"
 * RL.QUOTA 100 DAY OFFSET -60.
 *
 * Invariants (abort() with the values on violation):
 *   - success: every positional number within its spec range and written canonically (what the parser
 *     accepted prints back to the same bytes), every positional choice one of its tokens in some case; cost within COST's range when COST was given, else 1;
 *     mingap_ms within MINGAP's range when given, else 0; now_us 0; unused params 0; flags only from the
 *     syntax's options, and no two conflicting ones;
 *   - error: the message starts with "ERR ", is NUL-terminated within RL_ERR_LEN (and not cut short by
 *     the buffer), holds only printable ASCII (no CR/LF), and an unknown-option message quotes exactly
 *     one string (an argument cannot inject a quote);
 *   - rl_parse agrees with an independent reference parser (same success, same request), and names the
 *     arity error exactly when there are too few arguments;
 *   - rl_parse_int64 and rl_parse_decimal agree with references on every argument; rl_sanitize always yields a
 *     NUL-terminated, printable, quote-free string of at most min(dstlen - 1, 32) characters. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "require.h"
#include "../../algorithms/slidinglog.h"
#include "../../module/parse.h"
#include "../../module/limiters.h"

#define MAX_FUZZ_ARGS 40

/* --- failure reporting ------------------------------------------------------------------------------ */

static const rl_syntax *cur_syn;
static int cur_nargs;
static const char *const *cur_args;
static const size_t *cur_lens;

static void dump_bytes(const char *s, size_t len) {
    fputc('"', stderr);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
            fputc(c, stderr);
        else
            fprintf(stderr, "\\x%02x", c);
    }
    fputc('"', stderr);
}

static void dump_context(void) {
    if (!cur_syn) return;
    fprintf(stderr, "  command %s, %d args:", cur_syn->name, cur_nargs);
    for (int i = 0; i < cur_nargs; i++) {
        fputc(' ', stderr);
        dump_bytes(cur_args[i], cur_lens[i]);
    }
    fputc('\n', stderr);
}

/* --- reference implementations ---------------------------------------------------------------------- */

/* A strict decimal int64: accepted iff it is exactly what printf("%lld") prints for its value (so no
 * '+', no spaces, no leading zeros, no "-0"). Computed differently from rl_parse_int64. */
static int ref_int64(const char *s, size_t len, int64_t *out) {
    if (len == 0 || len > 20) return -1;
    size_t i = s[0] == '-' ? 1 : 0;
    if (i == len) return -1;
    __int128 v = 0;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    if (s[0] == '-') v = -v;
    if (v > INT64_MAX || v < INT64_MIN) return -1;
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%lld", (long long)v);
    if (n < 0 || (size_t)n != len || memcmp(buf, s, len) != 0) return -1;
    *out = (int64_t)v;
    return 0;
}

/* A decimal number as millionths: "<whole>[.<1 to 6 digits>]", the whole part "0" or up to 12 digits not
 * starting with 0. Read by splitting at the point and padding the fraction to six digits, unlike
 * rl_parse_decimal. */
static int ref_decimal(const char *s, size_t len, int64_t *out) {
    const char *point = memchr(s, '.', len);
    size_t wlen = point ? (size_t)(point - s) : len, flen = point ? len - wlen - 1 : 0;
    if (wlen < 1 || wlen > 12 || (point && (flen < 1 || flen > 6))) return -1;
    if (s[0] == '0' && wlen > 1) return -1;
    char digits[19];
    memcpy(digits, s, wlen);
    memset(digits + wlen, '0', 6);
    if (point) memcpy(digits + wlen, point + 1, flen);
    int64_t v = 0;
    for (size_t i = 0; i < wlen + 6; i++) {
        if (digits[i] < '0' || digits[i] > '9') return -1;
        v = v * 10 + (digits[i] - '0');
    }
    *out = v;
    return 0;
}

static int ascii_upper(int c) { return c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c; }

static const rl_option_spec *ref_option(const rl_syntax *syn, const char *s, size_t len) {
    for (int i = 0; i < syn->noptions; i++) {
        const char *name = syn->options[i].name;
        if (strlen(name) != len) continue;
        size_t j = 0;
        while (j < len && ascii_upper((unsigned char)s[j]) == name[j]) j++;
        if (j == len) return &syn->options[i];
    }
    return NULL;
}

/* A positional choice: the argument upper-cased (when it is short enough to be a token) compared with each
 * token, unlike the parser's strncasecmp. */
static int ref_choice(const rl_param_spec *p, const char *s, size_t len, int64_t *out) {
    char upper[16];
    if (len >= sizeof upper) return -1;
    for (size_t j = 0; j < len; j++) upper[j] = (char)ascii_upper((unsigned char)s[j]);
    upper[len] = '\0';
    for (int64_t k = p->min; k <= p->max; k++)
        if (strlen(upper) == len && strcmp(upper, p->choices[k]) == 0) {
            *out = k;
            return 0;
        }
    return -1;
}

/* FORCE (a flag, rl_common.h) never goes with REFUND, ATMOST, WAIT or BLOCK: known here by name, not from the
 * tables' conflicts, so that a table that lists the pair one way only (the parser would then accept one order)
 * disagrees with the reference. */
static int ref_forced_with_excluded(const rl_syntax *syn, uint32_t flags) {
    static const char *const excluded[] = {"REFUND", "ATMOST", "WAIT", "BLOCK"};
    const rl_option_spec *force = ref_option(syn, "FORCE", 5);
    if (!force || !(flags & force->flag)) return 0;
    for (size_t i = 0; i < sizeof excluded / sizeof excluded[0]; i++) {
        const rl_option_spec *o = ref_option(syn, excluded[i], strlen(excluded[i]));
        if (o && (flags & o->flag)) return 1;
    }
    return 0;
}

static int ref_parse(const rl_syntax *syn, int nargs, const char *const *args, const size_t *lens,
                     rl_request *out) {
    rl_request r;
    memset(&r, 0, sizeof r);
    r.cost = 1;
    if (nargs < syn->nparams) return -1;
    for (int i = 0; i < syn->nparams; i++) {
        int64_t v;
        int kind = syn->params[i].kind;
        int bad = kind == RL_DECIMAL  ? ref_decimal(args[i], lens[i], &v)
                  : kind == RL_CHOICE ? ref_choice(&syn->params[i], args[i], lens[i], &v)
                                      : ref_int64(args[i], lens[i], &v);
        if (bad || v < syn->params[i].min || v > syn->params[i].max) return -1;
        r.params[i] = v;
    }
    for (int i = syn->nparams; i < nargs; i++) {
        const rl_option_spec *o = ref_option(syn, args[i], lens[i]);
        if (!o || (r.flags & o->flag) || (r.flags & o->conflicts)) return -1;
        r.flags |= o->flag;
        if (o->slot == RL_NO_VALUE) continue;
        if (++i == nargs) return -1;
        if (strcmp(o->name, "ID") == 0) { /* RL.ACQUIRE's: any bytes, 1 to 64 of them; the request gets its place */
            if ((int64_t)lens[i] < o->min || (int64_t)lens[i] > o->max) return -1;
            r.id_arg = i;
            continue;
        }
        int64_t v;
        int decimal = strcmp(o->name, "COLDFACTOR") == 0; /* the one decimal option */
        if ((decimal ? ref_decimal(args[i], lens[i], &v) : ref_int64(args[i], lens[i], &v)) != 0 || v < o->min ||
            v > o->max)
            return -1;
        /* The reference knows the options with values by name, not by the table's slot. */
        if (strcmp(o->name, "COST") == 0 || strcmp(o->name, "REFUND") == 0) /* a refund's n takes the cost's place */
            r.cost = v;
        else if (strcmp(o->name, "MINGAP") == 0)
            r.mingap_ms = v;
        else if (strcmp(o->name, "WARMUP") == 0 || strcmp(o->name, "MAXBURST") == 0) /* RL.SMOOTH (smooth.h) */
            r.params[1] = v;
        else if (strcmp(o->name, "COLDFACTOR") == 0)
            r.params[2] = v;
        else if (strcmp(o->name, "MAXWAIT") == 0) /* RL.SMOOTH's */
            r.maxwait_ms = v;
        else if (strcmp(o->name, "WAIT") == 0) /* the module's (module/wait.c) */
            r.wait_timeout_ms = v;
        else if (strcmp(o->name, "SUBWINDOWS") == 0) /* RL.WINDOW's n (window.h) */
            r.params[2] = v;
        else if (strcmp(o->name, "OFFSET") == 0) /* RL.QUOTA's minutes (quota.h) */
            r.params[2] = v;
        else if (strcmp(o->name, "LOCKOUT") == 0) /* the lockout's four (algorithms/lockout.h) */
            r.lockout_ms = v;
        else if (strcmp(o->name, "BACKOFF") == 0)
            r.lock_backoff = v;
        else if (strcmp(o->name, "MAXLOCK") == 0)
            r.lock_max_ms = v;
        else if (strcmp(o->name, "FORGIVE") == 0)
            r.lock_forgive_ms = v;
        else
            REQUIRE(0, "the reference parser does not know option %s: teach it", o->name);
    }
    if (ref_forced_with_excluded(syn, r.flags)) return -1;
    *out = r;
    return 0;
}

/* --- checks ----------------------------------------------------------------------------------------- */

static void check_printable(const char *s, size_t len, const char *what) {
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        REQUIRE(c >= 0x20 && c < 0x7f, "%s: byte 0x%02x at offset %zu is not printable ASCII: \"%s\"", what, c, i,
                s);
    }
}

static void check_decimal(const char *s, size_t len) {
    int64_t got = 0x5a5a5a5a, want = 0;
    int rc = rl_parse_decimal(s, len, &got), ref = ref_decimal(s, len, &want);
    REQUIRE(rc == ref, "rl_parse_decimal returned %d, the reference %d", rc, ref);
    if (rc == 0) REQUIRE(got == want, "rl_parse_decimal gave %lld, expected %lld", (long long)got, (long long)want);
}

static void check_int64(const char *s, size_t len) {
    int64_t got = 0x5a5a5a5a, want = 0;
    int rc = rl_parse_int64(s, len, &got), ref = ref_int64(s, len, &want);
    REQUIRE(rc == ref, "rl_parse_int64 returned %d, the reference %d (reference value %lld)", rc, ref,
            (long long)want);
    if (rc == 0) REQUIRE(got == want, "rl_parse_int64 gave %lld, expected %lld", (long long)got, (long long)want);
}

static void check_sanitize(const char *s, size_t len) {
    static const size_t sizes[] = {1, 2, 3, 4, 5, 8, 33, 34, 40, 64};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t dstlen = sizes[k];
        char dst[72];
        memset(dst, 0xA5, sizeof dst);
        rl_sanitize(dst, dstlen, s, len);
        for (size_t i = dstlen; i < sizeof dst; i++)
            REQUIRE((unsigned char)dst[i] == 0xA5, "rl_sanitize(dstlen %zu) wrote byte %zu", dstlen, i);
        const char *nul = memchr(dst, '\0', dstlen);
        REQUIRE(nul != NULL, "rl_sanitize(dstlen %zu) left no NUL", dstlen);
        size_t n = (size_t)(nul - dst), max = dstlen - 1 < 32 ? dstlen - 1 : 32;
        REQUIRE(n <= max, "rl_sanitize(dstlen %zu) wrote %zu characters, max %zu", dstlen, n, max);
        REQUIRE(n == (len < max ? len : max), "rl_sanitize(dstlen %zu) of %zu bytes gave %zu characters", dstlen, len,
                n);
        check_printable(dst, n, "rl_sanitize output");
        REQUIRE(memchr(dst, '\'', n) == NULL, "rl_sanitize output holds a quote: \"%s\"", dst);
    }
}

static uint32_t allowed_flags(const rl_syntax *syn) {
    uint32_t all = 0;
    for (int i = 0; i < syn->noptions; i++) all |= syn->options[i].flag;
    return all;
}

static const rl_option_spec *option_named(const rl_syntax *syn, const char *name) {
    for (int i = 0; i < syn->noptions; i++)
        if (strcmp(syn->options[i].name, name) == 0) return &syn->options[i];
    return NULL;
}

static void check_success(const rl_syntax *syn, int nargs, const char *const *args, const size_t *lens,
                          const rl_request *req) {
    REQUIRE(nargs >= syn->nparams, "success with %d args, %d params needed", nargs, syn->nparams);
    for (int i = 0; i < syn->nparams; i++) {
        const rl_param_spec *p = &syn->params[i];
        REQUIRE(req->params[i] >= p->min && req->params[i] <= p->max, "param %s = %lld outside [%lld, %lld]",
                p->name, (long long)req->params[i], (long long)p->min, (long long)p->max);
        if (p->kind == RL_DECIMAL) continue; /* "2.50" is a decimal as good as "2.5": the reference checks it */
        if (p->kind == RL_CHOICE) { /* the token it names, in some case */
            const char *token = p->choices[req->params[i]];
            REQUIRE(strlen(token) == lens[i], "choice %s = %s was accepted from \"%.*s\"", p->name, token,
                    (int)lens[i], args[i]);
            for (size_t j = 0; j < lens[i]; j++)
                REQUIRE(ascii_upper((unsigned char)args[i][j]) == token[j], "choice %s = %s was accepted from other text",
                        p->name, token);
            continue;
        }
        char buf[32];
        int n = snprintf(buf, sizeof buf, "%lld", (long long)req->params[i]);
        REQUIRE((size_t)n == lens[i] && memcmp(buf, args[i], lens[i]) == 0,
                "param %s = %lld was accepted from non-canonical text", p->name, (long long)req->params[i]);
    }
    uint32_t filled = 0; /* params an option given may fill */
    for (int i = 0; i < syn->noptions; i++)
        if ((req->flags & syn->options[i].flag) && syn->options[i].slot != RL_NO_VALUE)
            for (int j = 0; j < RL_MAX_PARAMS; j++)
                if (RL_SLOT_OFFSET(syn->options[i].slot) == RL_SLOT(params[j])) filled |= 1u << j;
    for (int i = syn->nparams; i < RL_MAX_PARAMS; i++)
        if (!(filled & (1u << i))) REQUIRE(req->params[i] == 0, "unused param %d = %lld", i, (long long)req->params[i]);
    /* A named field holds a value only when its option was given: 0 otherwise, but the lockout's four, which the
     * parser leaves as they were (the caller filled them with 0x5a bytes), as they are read only with their
     * flags. */
    static const struct { int slot; const char *name; int untouched; } named[] = {
        {RL_SLOT(maxwait_ms), "maxwait_ms", 0},    {RL_SLOT(wait_timeout_ms), "wait_timeout_ms", 0},
        {RL_SLOT(id_arg), "id_arg", 0},            {RL_SLOT(lockout_ms), "lockout_ms", 1},
        {RL_SLOT(lock_backoff), "lock_backoff", 1}, {RL_SLOT(lock_max_ms), "lock_max_ms", 1},
        {RL_SLOT(lock_forgive_ms), "lock_forgive_ms", 1}};
    for (size_t f = 0; f < sizeof named / sizeof named[0]; f++) {
        int given = 0;
        for (int i = 0; i < syn->noptions; i++)
            given |= (req->flags & syn->options[i].flag) && syn->options[i].slot != RL_NO_VALUE &&
                     RL_SLOT_OFFSET(syn->options[i].slot) == named[f].slot;
        int64_t v;
        memcpy(&v, (const char *)req + named[f].slot, sizeof v);
        int64_t unset = named[f].untouched ? 0x5a5a5a5a5a5a5a5aLL : 0;
        if (!given) REQUIRE(v == unset, "%s = %lld without its option", named[f].name, (long long)v);
    }
    REQUIRE(req->now_us == 0, "now_us = %lld", (long long)req->now_us);
    if (req->flags & RL_F_ID) /* the place of ID's value: after ID, its length within the option's range */
        REQUIRE(req->id_arg > syn->nparams && req->id_arg < nargs && lens[req->id_arg] >= 1 &&
                    lens[req->id_arg] <= RL_LEASE_ID_MAX,
                "ID's value at %lld of %d args", (long long)req->id_arg, nargs);

    uint32_t all = allowed_flags(syn);
    REQUIRE((req->flags & ~all) == 0, "flags 0x%x outside the options' 0x%x", req->flags, all);
    /* FORCE: only the limiters that can hold a debt take it (RL.SMOOTH and RL.ACQUIRE do not). */
    if (req->flags & RL_F_FORCE)
        REQUIRE(strstr(syn->name, "rl.token") == syn->name || strstr(syn->name, "rl.leaky") == syn->name ||
                    strstr(syn->name, "rl.window") == syn->name || strstr(syn->name, "rl.slidinglog") == syn->name ||
                    strstr(syn->name, "rl.quota") == syn->name,
                "%s took FORCE", syn->name);
    for (int i = 0; i < syn->noptions; i++) {
        const rl_option_spec *o = &syn->options[i];
        if (req->flags & o->flag)
            REQUIRE((req->flags & o->conflicts) == 0, "flags 0x%x: %s combined with a conflicting option",
                    req->flags, o->name);
    }

    const rl_option_spec *cost = option_named(syn, "COST"), *refund = option_named(syn, "REFUND");
    if (refund && (req->flags & refund->flag)) cost = refund;
    if (cost && (req->flags & cost->flag))
        REQUIRE(req->cost >= cost->min && req->cost <= cost->max, "cost %lld outside [%lld, %lld]",
                (long long)req->cost, (long long)cost->min, (long long)cost->max);
    else
        REQUIRE(req->cost == 1, "cost %lld without COST", (long long)req->cost);
    const rl_option_spec *gap = option_named(syn, "MINGAP");
    if (gap && (req->flags & gap->flag))
        REQUIRE(req->mingap_ms >= gap->min && req->mingap_ms <= gap->max, "mingap %lld outside [%lld, %lld]",
                (long long)req->mingap_ms, (long long)gap->min, (long long)gap->max);
    else
        REQUIRE(req->mingap_ms == 0, "mingap %lld without MINGAP", (long long)req->mingap_ms);
}

static void check_error(const rl_syntax *syn, int nargs, const char *err) {
    const char *nul = memchr(err, '\0', RL_ERR_LEN);
    REQUIRE(nul != NULL, "error message not NUL-terminated within RL_ERR_LEN (%d)", RL_ERR_LEN);
    size_t len = (size_t)(nul - err);
    REQUIRE(len >= 5 && memcmp(err, "ERR ", 4) == 0, "error message does not start with \"ERR \": \"%s\"", err);
    REQUIRE(len < RL_ERR_LEN - 1, "error message fills the buffer (%zu chars), probably cut: \"%s\"", len, err);
    check_printable(err, len, "error message");
    if (strstr(err, "': not an option of ")) {
        int quotes = 0;
        for (size_t i = 0; i < len; i++) quotes += err[i] == '\'';
        REQUIRE(strncmp(err, "ERR '", 5) == 0 && quotes == 2, "unknown-option message with %d quotes: \"%s\"",
                quotes, err);
    }
    static const char arity[] = "ERR wrong number of arguments";
    int is_arity = strncmp(err, arity, sizeof arity - 1) == 0;
    REQUIRE(is_arity == (nargs < syn->nparams), "arity error %d with %d args for %d params: \"%s\"", is_arity, nargs,
            syn->nparams, err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    /* Counted from '0', so a seed's digit names the same command whatever the number of limiters. */
    const rl_syntax *syn = &rl_syntaxes[(uint8_t)((data[0] & ~4u) - '0') % RL_NLIMITERS];
    const uint8_t sep = (data[0] & 4) ? '\0' : ' ';
    /* ("2 10 60000" reads as RL.WINDOW 10 60000) */
    char *args[MAX_FUZZ_ARGS];
    size_t lens[MAX_FUZZ_ARGS];
    int nargs = fuzz_split_args(data + 1, size - 1, sep, args, lens, MAX_FUZZ_ARGS);
    const char *const *cargs = (const char *const *)args;
    cur_syn = syn;
    cur_nargs = nargs;
    cur_args = cargs;
    cur_lens = lens;

    for (int i = 0; i < nargs; i++) {
        check_int64(args[i], lens[i]);
        check_decimal(args[i], lens[i]);
        check_sanitize(args[i], lens[i]);
    }

    rl_request req, ref;
    memset(&req, 0x5a, sizeof req);
    char err[RL_ERR_LEN];
    memset(err, 0xA5, sizeof err);
    int rc = rl_parse(syn, nargs, cargs, lens, &req, err);
    int ref_rc = ref_parse(syn, nargs, cargs, lens, &ref);
    REQUIRE(rc == 0 || rc == -1, "rl_parse returned %d", rc);
    if (rc == 0) {
        check_success(syn, nargs, cargs, lens, &req);
    } else {
        check_error(syn, nargs, err);
    }
    REQUIRE(rc == ref_rc, "rl_parse returned %d, the reference parser %d%s%s", rc, ref_rc, rc ? ": " : "",
            rc ? err : "");
    if (rc == 0) {
        REQUIRE(req.params[0] == ref.params[0] && req.params[1] == ref.params[1] && req.params[2] == ref.params[2] &&
                    req.maxwait_ms == ref.maxwait_ms && req.wait_timeout_ms == ref.wait_timeout_ms &&
                    req.cost == ref.cost && req.mingap_ms == ref.mingap_ms && req.flags == ref.flags &&
                    req.now_us == ref.now_us && (!(req.flags & RL_F_ID) || req.id_arg == ref.id_arg) &&
                    (!(req.flags & RL_F_LOCKOUT) || req.lockout_ms == ref.lockout_ms) &&
                    (!(req.flags & RL_F_BACKOFF) || req.lock_backoff == ref.lock_backoff) &&
                    (!(req.flags & RL_F_MAXLOCK) || req.lock_max_ms == ref.lock_max_ms) &&
                    (!(req.flags & RL_F_FORGIVE) || req.lock_forgive_ms == ref.lock_forgive_ms),
                "request differs from the reference: params %lld %lld %lld cost %lld mingap %lld flags 0x%x "
                "lockout %lld %lld %lld %lld, expected %lld %lld %lld cost %lld mingap %lld flags 0x%x "
                "lockout %lld %lld %lld %lld",
                (long long)req.params[0], (long long)req.params[1], (long long)req.params[2], (long long)req.cost,
                (long long)req.mingap_ms, req.flags, (long long)req.lockout_ms, (long long)req.lock_backoff,
                (long long)req.lock_max_ms, (long long)req.lock_forgive_ms, (long long)ref.params[0],
                (long long)ref.params[1], (long long)ref.params[2], (long long)ref.cost, (long long)ref.mingap_ms,
                ref.flags, (long long)ref.lockout_ms, (long long)ref.lock_backoff, (long long)ref.lock_max_ms,
                (long long)ref.lock_forgive_ms);
    }

    fuzz_free_args(args, nargs);
    cur_syn = NULL;
    return 0;
}
