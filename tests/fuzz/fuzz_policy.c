/* fuzz_policy.c -- libFuzzer target for the Redis-free pieces that RL.POLICY SET, RL.CHECK and a policy-checked
 * key's state ('P', module/bundle_type.c) are read with.
 *
 * The policy's own argument reader (module/policy.c's policy_parse, with module/all.c's rl_all_parse_spec) and
 * the state's decoder (bundle_type.c's decode) use Redis's module API, so they cannot be linked here; what they
 * call can. Two kinds of input:
 *
 *   - text (first byte below 0x80): as in fuzz_parse, the first byte picks the separator (bit 2 clear: ' ', set:
 *     NUL) and, counted from '0' modulo 9, what reads the rest: 0..6 a LIMIT clause of the limiter of that row
 *     (module/limiters.h: 0 TOKEN, 1 LEAKY, 2 WINDOW, 3 SLIDINGLOG, 4 SMOOTH, 5 CONCURRENCY, 6 QUOTA), read as
 *     RL.POLICY SET reads a clause (rl_parse_clause with the read-only form's syntax, then stopping at the next
 *     LIMIT: "0 10 1 1000 COST 2 LIMIT b WINDOW 5 1000"); 7 RL.CHECK's options, 8 RL.CHECK_RO's (rl_parse:
 *     "7 COST 5 DRYRUN"). The rest, less one leading separator, is split on the separator into arguments, each
 *     in a heap block of exactly its length (AddressSanitizer sees a read past one);
 *   - binary (first byte 0x80 or above): an entry of a 'P' state as decode_entry checks it, past its layout:
 *     the next byte picks a cell limiter (TOKEN, LEAKY, WINDOW, SMOOTH, QUOTA), the next its count of words (1
 *     to 64), then the words and a lock record (four little-endian 64-bit numbers each, zeros when short).
 *
 * Invariants (abort() with the values on violation):
 *   - a clause: it uses at least its numbers and at most the arguments there are; where it stops there is
 *     nothing, the word LIMIT (any case), or a word that is no option of the clause's syntax; no option word
 *     it read is LIMIT (the next clause is never eaten), and no read-only form's excluded option (DRYRUN,
 *     BLOCK, WAIT) is set; on success the limiter's validate (and the lockout's, with its options) runs
 *     without undefined behaviour and answers 0 or a well-formed error;
 *   - every error (the parser's, validate's, and the clause's as rl_name_clause numbers it for LIMIT 1 to 16):
 *     "ERR " first, NUL-terminated within RL_ERR_LEN, printable ASCII, not cut short (the numbered message is
 *     "ERR LIMIT i: " and the whole message after its "ERR "), and with room for RL.POLICY SET's longer
 *     "ERR LIMIT 16 (<a 32-character name>): " before it;
 *   - RL.CHECK's options: cost within COST's range (1 without it), the timeout within WAIT's, flags only of
 *     the three options (and not DRYRUN or WAIT for RL.CHECK_RO);
 *   - a state's entry: words() reads the first word alone and answers 1 to 64; cell_valid and rl_lock_valid
 *     run on any words without undefined behaviour. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "require.h"
#include "../../module/parse.h"
#include "../../module/limiters.h"

#define MAX_FUZZ_ARGS 40
#define N_READERS (RL_NLIMITERS + 2)

/* Each limiter's algorithm (NULL for the sliding log and the leases, which decide through their storage). */
#define ALG_ROW(id, command, type_name, tag, algorithm, storage) [RL_LIM_##id] = algorithm,
static const rl_algorithm *const algorithms[RL_NLIMITERS] = {RL_LIMITERS(ALG_ROW)};
#undef ALG_ROW

/* --- failure reporting ------------------------------------------------------------------------------ */

static const char *cur_what;
static int cur_nargs;
static char **cur_args;
static const size_t *cur_lens;

static void dump_context(void) {
    if (!cur_what) return;
    fprintf(stderr, "  %s, %d args:", cur_what, cur_nargs);
    for (int i = 0; i < cur_nargs; i++) {
        fputs(" \"", stderr);
        for (size_t k = 0; k < cur_lens[i]; k++) {
            unsigned char c = (unsigned char)cur_args[i][k];
            if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') fputc(c, stderr);
            else fprintf(stderr, "\\x%02x", c);
        }
        fputc('"', stderr);
    }
    fputc('\n', stderr);
}

/* --- checks ------------------------------------------------------------------------------------------ */

/* A complete error reply: "ERR ...", NUL-terminated in the buffer, printable, not filling it (cut). */
static size_t check_error(const char *err, const char *what) {
    const char *nul = memchr(err, '\0', RL_ERR_LEN);
    REQUIRE(nul != NULL, "%s: not NUL-terminated within RL_ERR_LEN", what);
    size_t len = (size_t)(nul - err);
    REQUIRE(len >= 5 && memcmp(err, "ERR ", 4) == 0, "%s: does not start with \"ERR \": \"%s\"", what, err);
    REQUIRE(len < RL_ERR_LEN - 1, "%s: fills the buffer (%zu chars), probably cut: \"%s\"", what, len, err);
    for (size_t i = 0; i < len; i++)
        REQUIRE((unsigned char)err[i] >= 0x20 && (unsigned char)err[i] < 0x7f, "%s: byte 0x%02x at %zu: \"%s\"", what,
                (unsigned char)err[i], i, err);
    return len;
}

/* The clause's error as RL.POLICY SET names it for limit i (0-based) of a name of up to 32 characters
 * (module/policy.c: "ERR LIMIT i+1 (name): " and the rest): there must be room for it whole. */
static void check_room_for_name(const char *err, int i) {
    char head[64];
    int hl = snprintf(head, sizeof head, "ERR LIMIT %d (%s): ", i + 1, "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn");
    size_t rest = strlen(err) - 4;
    REQUIRE((size_t)hl + rest < RL_ERR_LEN, "\"%s\" after a limit's number and longest name takes %zu characters, "
            "more than an error holds (%d)", err, (size_t)hl + rest, RL_ERR_LEN - 1);
}

/* The clause's error as RL.POLICY SET numbers it for limit i (0-based): "ERR LIMIT i+1: " and the rest whole. */
static void check_numbered(const char *err, int i) {
    check_room_for_name(err, i);
    char numbered[RL_ERR_LEN], head[24];
    memcpy(numbered, err, RL_ERR_LEN);
    rl_name_clause(numbered, i);
    check_error(numbered, "a clause's numbered error");
    int hl = snprintf(head, sizeof head, "ERR LIMIT %d: ", i + 1);
    REQUIRE(strncmp(numbered, head, (size_t)hl) == 0 && strcmp(numbered + hl, err + 4) == 0,
            "rl_name_clause(%d) gave \"%s\" for \"%s\"", i, numbered, err);
}

static int is_limit(const char *s, size_t len) { return len == 5 && strncasecmp(s, "LIMIT", 5) == 0; }

/* The option of syn named s (any case), excluded ones included; NULL if none. */
static const rl_option_spec *option_of(const rl_syntax *syn, const char *s, size_t len) {
    for (int i = 0; i < syn->noptions; i++)
        if (strlen(syn->options[i].name) == len && strncasecmp(syn->options[i].name, s, len) == 0) return &syn->options[i];
    return NULL;
}

static void fuzz_clause(int row, int nargs, const char *const *args, const size_t *lens) {
    const rl_syntax *syn = &rl_syntaxes_ro[row];
    rl_request req;
    memset(&req, 0x5a, sizeof req);
    char err[RL_ERR_LEN];
    memset(err, 0xA5, sizeof err);
    int used = rl_parse_clause(syn, nargs, args, lens, &req, err);
    if (used < 0) {
        REQUIRE(used == -1, "rl_parse_clause returned %d", used);
        check_error(err, "a clause's error");
        for (int i = 0; i < 16; i++) check_numbered(err, i);
        return;
    }
    REQUIRE(used >= syn->nparams && used <= nargs, "used %d of %d args (%d numbers)", used, nargs, syn->nparams);
    if (used < nargs) {
        const rl_option_spec *o = option_of(syn, args[used], lens[used]);
        REQUIRE(is_limit(args[used], lens[used]) || !o || (o->flag & syn->excluded),
                "stopped at an option it takes (arg %d of %d)", used, nargs);
    }
    for (int i = syn->nparams; i < used; i++) { /* option words and their values, left to right */
        REQUIRE(!is_limit(args[i], lens[i]), "read LIMIT (arg %d) as an option", i);
        const rl_option_spec *o = option_of(syn, args[i], lens[i]);
        REQUIRE(o && !(o->flag & syn->excluded), "arg %d read as an option it is not", i);
        if (o->slot != RL_NO_VALUE) i++;
    }
    REQUIRE((req.flags & syn->excluded) == 0, "flags 0x%x hold an excluded option", req.flags);
    const rl_algorithm *alg = algorithms[row];
    if (!alg) return; /* (the log's and the leases' checks are their storage's, and need Redis) */
    memset(err, 0xA5, sizeof err);
    int bad = alg->validate(&req, err);
    if (!bad && (req.flags & RL_LOCK_FLAGS)) bad = rl_lockout_validate(&req, err);
    REQUIRE(bad == 0 || bad == -1, "validate returned %d", bad);
    if (bad) {
        check_error(err, "validate's error");
        for (int i = 0; i < 16; i++) check_numbered(err, i);
    }
}

static void fuzz_check_options(const rl_syntax *syn, int nargs, const char *const *args, const size_t *lens) {
    rl_request req;
    memset(&req, 0x5a, sizeof req);
    char err[RL_ERR_LEN];
    memset(err, 0xA5, sizeof err);
    if (rl_parse(syn, nargs, args, lens, &req, err) != 0) {
        check_error(err, "RL.CHECK's error");
        return;
    }
    const rl_option_spec *cost = option_of(syn, "COST", 4), *wait = option_of(syn, "WAIT", 4),
                         *dry = option_of(syn, "DRYRUN", 6);
    REQUIRE(cost && wait && dry, "RL.CHECK's table lacks COST, WAIT or DRYRUN");
    REQUIRE((req.flags & ~(cost->flag | wait->flag | dry->flag)) == 0, "flags 0x%x", req.flags);
    REQUIRE((req.flags & syn->excluded) == 0, "%s took an excluded option (flags 0x%x)", syn->name, req.flags);
    if (req.flags & cost->flag)
        REQUIRE(req.cost >= cost->min && req.cost <= cost->max, "cost %lld", (long long)req.cost);
    else
        REQUIRE(req.cost == 1, "cost %lld without COST", (long long)req.cost);
    if (req.flags & wait->flag)
        REQUIRE(req.wait_timeout_ms >= wait->min && req.wait_timeout_ms <= wait->max, "timeout %lld",
                (long long)req.wait_timeout_ms);
}

/* --- a state's entry ---------------------------------------------------------------------------------- */

static uint64_t le64(const uint8_t *p, size_t left) {
    uint64_t v = 0;
    for (size_t i = 0; i < 8 && i < left; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static void fuzz_entry(const uint8_t *data, size_t size) {
    static const int cells[] = {RL_LIM_TOKEN, RL_LIM_LEAKY, RL_LIM_WINDOW, RL_LIM_SMOOTH, RL_LIM_QUOTA};
    if (size < 3) return;
    const rl_algorithm *alg = algorithms[cells[data[1] % 5]];
    unsigned words = 1 + data[2] % RL_CELL_MAX_WORDS;
    const uint8_t *p = data + 3;
    size_t left = size - 3;
    rl_cell cell, other;
    for (unsigned k = 0; k < RL_CELL_MAX_WORDS; k++) {
        cell.w[k] = k < words ? le64(p + 8 * k, left > 8 * k ? left - 8 * k : 0) : 0;
        other.w[k] = k == 0 ? cell.w[0] : ~cell.w[k]; /* the same first word, every other one different */
    }
    unsigned n = alg->words(&cell);
    REQUIRE(n >= 1 && n <= RL_CELL_MAX_WORDS, "words() = %u", n);
    REQUIRE(alg->words(&other) == n, "words() read past the first word");
    if (n == words) (void)alg->cell_valid(&cell); /* (as decode_entry calls it: only on a matching count) */
    size_t at = 8 * (size_t)words;
    rl_lock lock = {(int64_t)le64(p + at, left > at ? left - at : 0), (int64_t)le64(p + at + 8, left > at + 8 ? left - at - 8 : 0),
                    (int64_t)le64(p + at + 16, left > at + 16 ? left - at - 16 : 0)};
    (void)rl_lock_valid(&lock);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    if (data[0] >= 0x80) {
        cur_what = "a state's entry";
        cur_nargs = 0;
        fuzz_entry(data, size);
        cur_what = NULL;
        return 0;
    }
    int reader = (uint8_t)((data[0] & ~4u) - '0') % N_READERS;
    const uint8_t sep = (data[0] & 4) ? '\0' : ' ';
    const uint8_t *rest = data + 1;
    size_t rest_len = size - 1;
    if (rest_len > 0 && rest[0] == sep) {
        rest++;
        rest_len--;
    }
    char *args[MAX_FUZZ_ARGS];
    size_t lens[MAX_FUZZ_ARGS];
    int nargs = 0;
    if (rest_len > 0) {
        size_t start = 0;
        for (size_t i = 0; i <= rest_len && nargs < MAX_FUZZ_ARGS; i++) {
            if (i < rest_len && rest[i] != sep) continue;
            size_t len = i - start;
            args[nargs] = malloc(len ? len : 1); /* exactly len bytes: no terminator to lean on */
            if (len) memcpy(args[nargs], rest + start, len);
            lens[nargs++] = len;
            start = i + 1;
        }
    }
    const char *const *cargs = (const char *const *)args;
    cur_nargs = nargs;
    cur_args = args;
    cur_lens = lens;
    if (reader < RL_NLIMITERS) {
        cur_what = rl_syntaxes_ro[reader].name;
        fuzz_clause(reader, nargs, cargs, lens);
    } else {
        const rl_syntax *syn = reader == RL_NLIMITERS ? &rl_check_syntax : &rl_check_syntax_ro;
        cur_what = syn->name;
        fuzz_check_options(syn, nargs, cargs, lens);
    }
    for (int i = 0; i < nargs; i++) free(args[i]);
    cur_what = NULL;
    return 0;
}
