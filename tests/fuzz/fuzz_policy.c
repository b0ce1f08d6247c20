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
 *     the next byte picks the entry's kind, any of the seven a policy holds (the row, as above). A cell
 *     limiter's: the next byte its count of words (1 to 64), then the words and a lock record (four
 *     little-endian 64-bit numbers each, zeros when short). A sliding log's ('S'): a request (limit, window,
 *     cost in RL.CHECK's range, FORCE, MINGAP, now), then log entries made from the bytes (mostly newest first
 *     and in range, some not); leases ('C'): a request (limit, lease_ms, cost, now), then leases laid out as
 *     module/lease_type.c reads them (mostly in order and in range, some fields raw).
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
 *   - a state's entry: the seven kinds' tags are distinct (one tag, one kind); words() reads the first word
 *     alone and answers 1 to 64; cell_valid and rl_lock_valid run on any words without undefined behaviour;
 *   - a sliding log the decoder takes (a reference reading of the layout's rules, bundle_type.c's log_valid:
 *     newest first, each weight 1 to RL_SLOG_MAX_LIMIT + 1, each time in [0, RL_MAX_TIME_US), at most
 *     RL_SLOG_MAX_LIMIT + 1 units) is decided without undefined behaviour: a well-formed reply; a plan that
 *     logs at now, drops nothing (a policy never refunds), keeps and adds at most limit + 1 units, adds at
 *     most the cost; and the log the plan leaves (applied as store_bundle.c documents it: the future counts
 *     as now, nothing at or before the window's edge) is one the decoder takes again;
 *   - leases: the reference reading of their rules (end 1 to the latest, acquired 0 to the end, units 1 to
 *     RL_LEASE_MAX_LIMIT, an id of 1 to 64 bytes, sorted by end, at most RL_LEASE_MAX_LIMIT) agrees with
 *     rl_lease_valid; valid ones are decided without an ID (a policy names none): a well-formed reply, a plan
 *     that keeps or adds (never renews), adds the cost only when admitted and within the limit; and the leases
 *     the plan leaves (tests/lease_store.h) are valid again. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "require.h"
#include "../../module/parse.h"
#include "../../module/limiters.h"
#include "../lease_store.h"

#define MAX_FUZZ_ARGS 40
#define N_READERS (RL_NLIMITERS + 2)

/* Each limiter's algorithm (NULL for the sliding log and the leases, which decide through their storage). */
#define ALG_ROW(id, command, type_name, tag, algorithm, storage) [RL_LIM_##id] = algorithm,
static const rl_algorithm *const algorithms[RL_NLIMITERS] = {RL_LIMITERS(ALG_ROW)};
#undef ALG_ROW
/* Each limiter's tag: a 'P' entry's first byte (module/bundle_type.c takes every kind's). */
#define TAG_ROW(id, command, type_name, tag, algorithm, storage) [RL_LIM_##id] = tag,
static const unsigned char tags[RL_NLIMITERS] = {RL_LIMITERS(TAG_ROW)};
#undef TAG_ROW

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

/* The bytes left to read: numbers of n bytes (little-endian, zeros past the end). */
typedef struct reader {
    const uint8_t *p;
    size_t left;
} reader;

static uint64_t take(reader *r, int n) {
    uint64_t v = 0;
    for (int i = 0; i < n && r->left > 0; i++, r->p++, r->left--) v |= (uint64_t)r->p[0] << (8 * i);
    return v;
}

static void fuzz_cell_entry(int row, const uint8_t *data, size_t size) {
    if (size < 1) return;
    const rl_algorithm *alg = algorithms[row];
    unsigned words = 1 + data[0] % RL_CELL_MAX_WORDS;
    const uint8_t *p = data + 1;
    size_t left = size - 1;
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

/* A sliding log the decoder takes: the layout's rules, read from the docs of bundle_type.c. */
static int log_taken(const rl_slog_entry *log, int n) {
    int64_t units = 0;
    for (int i = 0; i < n; i++) {
        if (log[i].weight < 1 || log[i].weight > RL_SLOG_MAX_LIMIT + 1) return 0;
        if (log[i].at_us < 0 || log[i].at_us >= RL_MAX_TIME_US) return 0;
        if (i > 0 && log[i - 1].at_us < log[i].at_us) return 0;
        units += log[i].weight;
    }
    return units <= RL_SLOG_MAX_LIMIT + 1;
}

#define LOG_MAX 256

static void check_reply(const rl_reply *reply, int64_t limit) {
    REQUIRE(reply->allowed == 0 || reply->allowed == 1, "allowed %lld", (long long)reply->allowed);
    REQUIRE(reply->limit == limit && reply->remaining >= 0 && reply->remaining <= limit, "limit %lld remaining %lld of %lld",
            (long long)reply->limit, (long long)reply->remaining, (long long)limit);
    REQUIRE(reply->wait_ms == 0 && reply->retry_after_ms >= -1 && reply->reset_after_ms >= 0,
            "wait %lld retry %lld reset %lld", (long long)reply->wait_ms, (long long)reply->retry_after_ms,
            (long long)reply->reset_after_ms);
}

static void fuzz_log_entry(const uint8_t *data, size_t size) {
    reader r = {data, size};
    rl_request req;
    memset(&req, 0, sizeof req);
    req.params[0] = 1 + (int64_t)(take(&r, 4) % RL_SLOG_MAX_LIMIT);
    req.params[1] = 1 + (int64_t)(take(&r, 5) % RL_MAX_PERIOD_MS);
    unsigned mode = (unsigned)take(&r, 1);
    req.cost = mode & 1 ? (int64_t)(take(&r, 8) % (RL_MAX_COUNT + 1)) : (int64_t)(take(&r, 1) % 8);
    if (mode & 2) req.flags |= RL_F_FORCE;
    if (mode & 4) {
        req.flags |= RL_F_MINGAP;
        req.mingap_ms = 1 + (int64_t)(take(&r, 5) % RL_MAX_PERIOD_MS);
    }
    req.now_us = (int64_t)(take(&r, 8) % RL_MAX_TIME_US);
    /* the log: from near now (or anywhere, the future too) back in steps; a few entries raw */
    static rl_slog_entry log[LOG_MAX], left[LOG_MAX + 1];
    int n = 0;
    int64_t at = mode & 8 ? (int64_t)(take(&r, 8) % RL_MAX_TIME_US) : req.now_us + 1000 - (int64_t)take(&r, 2);
    int64_t step = mode & 16 ? 1000000 : 1;
    while (r.left > 0 && n < LOG_MAX) {
        unsigned how = (unsigned)take(&r, 1);
        at -= (int64_t)take(&r, 1) * step;
        int64_t weight = how & 1 ? 1 + (int64_t)(take(&r, 3) % (RL_SLOG_MAX_LIMIT + 1)) : 1 + (int64_t)(take(&r, 1) % 4);
        log[n] = (rl_slog_entry){at < 0 ? 0 : at, weight};
        if ((how & 0xf0) == 0xf0) log[n].at_us = (int64_t)take(&r, 8);
        if ((how & 0xf0) == 0xe0) log[n].weight = (int64_t)take(&r, 8);
        n++;
    }
    if (!log_taken(log, n)) return; /* refused when read: no decision sees it */
    rl_slog_plan plan;
    rl_reply reply;
    rl_slog_decide(&req, log, (size_t)n, &plan, &reply);
    const int64_t limit = req.params[0];
    check_reply(&reply, limit);
    REQUIRE(plan.drop == 0 && plan.at_us == req.now_us, "drop %lld at %lld (now %lld)", (long long)plan.drop,
            (long long)plan.at_us, (long long)req.now_us);
    REQUIRE(plan.add >= 0 && plan.add <= req.cost && plan.keep >= 0 && plan.keep + plan.add <= limit + 1,
            "add %lld keep %lld (cost %lld, limit %lld)", (long long)plan.add, (long long)plan.keep, (long long)req.cost,
            (long long)limit);
    /* The log the plan leaves: the new units at now, then the newest `keep` units inside the window (a time
     * after now read as now), instants merged. */
    int m = 0;
    if (plan.add > 0) left[m++] = (rl_slog_entry){plan.at_us, plan.add};
    int64_t budget = plan.keep, edge = req.now_us - req.params[1] * 1000;
    for (int i = 0; i < n && budget > 0; i++) {
        int64_t t = log[i].at_us < req.now_us ? log[i].at_us : req.now_us;
        if (t <= edge) break;
        int64_t w = log[i].weight < budget ? log[i].weight : budget;
        budget -= w;
        if (m > 0 && left[m - 1].at_us == t) left[m - 1].weight += w;
        else left[m++] = (rl_slog_entry){t, w};
    }
    REQUIRE(log_taken(left, m), "the log a plan leaves (%d entries) is one the decoder refuses", m);
}

/* Leases the decoder takes: the rules rl_lease_valid states, read again. */
static int leases_taken(const rl_lease *v, int n) {
    const int64_t latest = RL_MAX_TIME_US + RL_MAX_PERIOD_MS * 1000;
    if (n > RL_LEASE_MAX_LIMIT) return 0;
    for (int i = 0; i < n; i++) {
        if (v[i].end_us < 1 || v[i].end_us > latest || v[i].acquired_us < 0 || v[i].acquired_us > v[i].end_us) return 0;
        if (v[i].units < 1 || v[i].units > RL_LEASE_MAX_LIMIT || v[i].id_len < 1 || v[i].id_len > RL_LEASE_ID_MAX) return 0;
        if (i > 0 && v[i].end_us < v[i - 1].end_us) return 0;
    }
    return 1;
}

static lease_store leases;

static void fuzz_lease_entry(const uint8_t *data, size_t size) {
    reader r = {data, size};
    rl_request req;
    memset(&req, 0, sizeof req);
    req.params[0] = 1 + (int64_t)(take(&r, 2) % RL_LEASE_MAX_LIMIT);
    req.params[1] = 1 + (int64_t)(take(&r, 5) % RL_MAX_PERIOD_MS);
    unsigned mode = (unsigned)take(&r, 1);
    req.cost = mode & 1 ? (int64_t)(take(&r, 8) % (RL_MAX_COUNT + 1)) : (int64_t)(take(&r, 1) % 8);
    req.now_us = (int64_t)(take(&r, 8) % RL_MAX_TIME_US);
    uint64_t next_id = take(&r, 8);
    lease_store_clear(&leases);
    int64_t end = mode & 2 ? (int64_t)(take(&r, 8) % RL_MAX_TIME_US) : req.now_us - 1000;
    while (r.left > 0 && leases.n < 64) {
        unsigned how = (unsigned)take(&r, 1);
        end += (int64_t)take(&r, 2) * (how & 1 ? 1 : 1000);
        rl_lease l = {.end_us = end, .acquired_us = end - (int64_t)take(&r, 3), .units = 1 + (int32_t)(take(&r, 1) % 4)};
        if (l.acquired_us < 0) l.acquired_us = 0;
        if (how & 2) l.acquired_us = (int64_t)take(&r, 8);
        if (how & 4) l.units = (int32_t)take(&r, 4);
        if (how & 8) l.end_us = (int64_t)take(&r, 8);
        unsigned id_len = how & 16 ? (unsigned)take(&r, 1) : 1 + (unsigned)(take(&r, 1) % 16);
        char id[256];
        for (unsigned k = 0; k < id_len; k++) id[k] = (char)take(&r, 1);
        lease_store_id_set(&l, id, id_len > RL_LEASE_ID_MAX ? 0 : id_len); /* (as lease_type.c: 0, refused) */
        leases.v[leases.n++] = l;
    }
    int ours = leases_taken(leases.v, leases.n), theirs = rl_lease_valid(leases.v, leases.n);
    REQUIRE(ours == theirs, "%d leases: the layout's rules say %d, rl_lease_valid %d", leases.n, ours, theirs);
    if (!ours) return;
    rl_lease_plan plan;
    rl_reply reply;
    rl_lease_decide(&req, leases.v, leases.n, NULL, 0, next_id, &plan, &reply);
    const int64_t limit = req.params[0];
    check_reply(&reply, limit);
    REQUIRE(plan.action == RL_LEASE_KEEP || plan.action == RL_LEASE_ADD, "action %d without an ID", (int)plan.action);
    REQUIRE(plan.expired >= 0 && plan.expired <= leases.n, "expired %d of %d", plan.expired, leases.n);
    if (plan.action == RL_LEASE_ADD)
        REQUIRE(reply.allowed && plan.units == req.cost && req.cost >= 1 && req.cost <= limit && plan.made &&
                    plan.id_len >= 1,
                "added %lld units (cost %lld, limit %lld, allowed %lld)", (long long)plan.units, (long long)req.cost,
                (long long)limit, (long long)reply.allowed);
    lease_store_apply(&leases, &plan, req.now_us);
    REQUIRE(rl_lease_valid(leases.v, leases.n), "the leases a plan leaves (%d) are not valid", leases.n);
}

static void fuzz_entry(const uint8_t *data, size_t size) {
    for (int i = 0; i < RL_NLIMITERS; i++)
        for (int j = 0; j < i; j++) REQUIRE(tags[i] != tags[j], "rows %d and %d share the tag '%c'", j, i, tags[i]);
    if (size < 2) return;
    int row = data[1] % RL_NLIMITERS;
    if (algorithms[row]) fuzz_cell_entry(row, data + 2, size - 2);
    else if (row == RL_LIM_SLIDINGLOG) fuzz_log_entry(data + 2, size - 2);
    else fuzz_lease_entry(data + 2, size - 2);
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
    char *args[MAX_FUZZ_ARGS];
    size_t lens[MAX_FUZZ_ARGS];
    int nargs = fuzz_split_args(data + 1, size - 1, sep, args, lens, MAX_FUZZ_ARGS);
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
    fuzz_free_args(args, nargs);
    cur_what = NULL;
    return 0;
}
