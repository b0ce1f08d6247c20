/* alg_checks.h -- one harness for every algorithm plugged into the common interface (rl_algorithm in
 * algorithms/rl_common.h): a stand-in for the module, scripted tables, and the promises of the reply.
 *
 * The idea: what the module does with an algorithm is the same for all of them (validate the request,
 * decide on the key's stored cell, store the new cell unless DRYRUN, drop the key when the reply says
 * idle), and so are the promises every reply makes (docs/commands.md). Both are written here once,
 * against `const rl_algorithm *`; a unit test brings its algorithm's parameters, tables and the checks
 * only that algorithm has (leaky wait_ms, window's naive model, token's interval specifics).
 *
 * The promises, checked around a real call at `now` on the state that call leaves (and, for a denied
 * request, on the state as it was: what a DRYRUN of it leaves):
 *   - retry_after_ms is the first whole ms at which the same request is admitted; -1 when allowed or
 *     never (a cost above the limit is never admitted);
 *   - reset_after_ms / reset_after_us say exactly when the limiter is idle, and from then on it behaves
 *     exactly as a new one (the module drops the key, or its expiry is rounded up: either must do);
 *   - remaining more units are admitted now, one more is not;
 *   - an earlier clock never admits more, call by call and over whole runs;
 *   - DRYRUN returns exactly the reply of the real call, and the real call is what changes state: right
 *     after it the limiter holds what its reply describes;
 *   - every cell a real call writes passes cell_valid (RDB load and RL.SETSTATE apply it);
 *   - granted is the cost when a plain request is allowed, 0 when denied or for a refund.
 * and, for the common options an algorithm takes (promise_plan.options):
 *   - REFUND n is allowed (retry -1, wait 0, granted 0) and gives back room, at most n: remaining after
 *     it is between what a COST 0 call would have said (W) and min(limit, W + n), reset_after never
 *     grows, a refund of 0 changes nothing, two refunds at once are one of their sum, the room it leaves
 *     is never less than without it at any later time, a refund at an earlier clock leaves no more room
 *     now than one now, and a refund of what an admitted request took restores the state (as a COST 0
 *     call would have left it);
 *   - ATMOST COST n (n >= 1) grants g = min(n, W) and is then exactly the request of COST g (COST 1 when
 *     g is 0: denied): same reply, same cell; g is admitted, g + 1 is not (when g < n), nothing is left
 *     when g < n; ATMOST COST 0 is COST 0. Its retry_after_ms is that of the ATMOST request (1 unit);
 *   - FORCE COST n is allowed (retry -1, wait 0, granted n); where the plain request is admitted it is
 *     exactly that request (same reply, same cell); where it is not, the forced one leaves remaining 0, is
 *     no nearer idle than the denial, never leaves more room than the denial at any later time, and the
 *     plain request right after it keeps the retry promise (denied until the debt is repaid, exactly).
 * A probe is a DRYRUN call on the stand-in: decide on a copy of the cell, keep nothing. As DRYRUN answers
 * exactly as the real call would, probing the state a call left asks what the next real call would get.
 *
 * For every algorithm here params[0] is the limit (a bucket's capacity, a window's limit). A test
 * program includes this once, after defining RNG_SEED, as it would check.h and rng.h (static inline, so
 * a program may use only part of it). Only the common flags are named here (RL_F_DRYRUN, RL_F_REFUND,
 * RL_F_ATMOST, RL_F_FORCE): the other flags belong to their algorithms, and no flag's value matters. */
#ifndef RL_ALG_CHECKS_H
#define RL_ALG_CHECKS_H

#include <stddef.h>
#include <string.h>

#include "check.h"
#include "rng.h"
#include "../algorithms/rl_common.h"

/* Where validate writes its message; the tests only look at its verdict. */
static char validate_err[RL_ERR_LEN];

/* --- the module stand-in ---------------------------------------------------------------------------- */

typedef struct limiter {
    const rl_algorithm *alg;
    int64_t params[3];
    rl_cell cell; /* what the key holds; meaningless when !exists */
    int exists;   /* 0: no key, a new limiter */
} limiter;

static inline limiter limiter_new(const rl_algorithm *alg, int64_t p0, int64_t p1, int64_t p2) {
    limiter l = {alg, {p0, p1, p2}, {{0, 0}}, 0};
    return l;
}

static inline int64_t limit_of(const limiter *l) { return l->params[0]; }

/* The flags without REFUND, ATMOST and FORCE: the plain request of the same mode. */
static inline uint32_t plain_flags(uint32_t flags) {
    return flags & ~(uint32_t)(RL_F_REFUND | RL_F_ATMOST | RL_F_FORCE);
}

static inline rl_request request_of(const limiter *l, int64_t now_us, int64_t cost, uint32_t flags) {
    rl_request req = {.params = {l->params[0], l->params[1], l->params[2]},
                      .cost = cost, .flags = flags, .now_us = now_us};
    return req;
}

/* One decision on a copy of the stored cell; *cell receives what the module would store. The reply
 * starts as garbage, so a field the algorithm forgets shows up instead of passing as a plausible 0. */
static inline rl_reply decide_copy(const limiter *l, int64_t now_us, int64_t cost, uint32_t flags,
                                   rl_cell *cell) {
    rl_request req = request_of(l, now_us, cost, flags);
    rl_reply reply;
    memset(&reply, 0xa5, sizeof reply);
    *cell = l->cell;
    l->alg->decide(&req, cell, l->exists, &reply);
    return reply;
}

/* A DRYRUN call: the limiter is left as it was. */
static inline rl_reply probe(const limiter *l, int64_t now_us, int64_t cost, uint32_t flags) {
    rl_cell cell;
    return decide_copy(l, now_us, cost, flags | RL_F_DRYRUN, &cell);
}

static inline int same_reply(const rl_reply *a, const rl_reply *b) {
    return a->allowed == b->allowed && a->limit == b->limit && a->remaining == b->remaining &&
           a->retry_after_ms == b->retry_after_ms && a->reset_after_ms == b->reset_after_ms &&
           a->wait_ms == b->wait_ms && a->granted == b->granted && a->reset_after_us == b->reset_after_us;
}

static inline void print_reply(const char *label, const rl_reply *r) {
    fprintf(stderr, "     %s: allowed %lld limit %lld remaining %lld retry %lld reset %lld (%lld us) "
            "wait %lld granted %lld\n", label, (long long)r->allowed, (long long)r->limit,
            (long long)r->remaining, (long long)r->retry_after_ms, (long long)r->reset_after_ms,
            (long long)r->reset_after_us, (long long)r->wait_ms, (long long)r->granted);
}

/* One check: every field of two replies, both printed when they differ. */
static inline void check_same_reply(const char *what, const rl_reply *got, const rl_reply *want) {
    if (check_record(same_reply(got, want), __FILE__, __LINE__, what)) return;
    print_reply("got     ", got);
    print_reply("expected", want);
}

/* The same stored state: as many words, the same words. */
static inline int same_cell_of(const rl_algorithm *alg, const rl_cell *a, const rl_cell *b) {
    unsigned n = alg->words(a);
    return n == alg->words(b) && memcmp(a->w, b->w, n * sizeof a->w[0]) == 0;
}

/* A call as the module makes it: validate, decide, store unless DRYRUN, drop the key when idle. Its twin
 * (the same request with DRYRUN toggled) must answer the same, and every cell a real call writes must
 * be valid, even one the module then drops (stricter than needed, and as cheap). */
static inline rl_reply call(limiter *l, int64_t now_us, int64_t cost, uint32_t flags) {
    rl_request req = request_of(l, now_us, cost, flags);
    CHECK(l->alg->validate(&req, validate_err) == 0);
    rl_cell cell, twin_cell;
    rl_reply reply = decide_copy(l, now_us, cost, flags, &cell);
    rl_reply twin = decide_copy(l, now_us, cost, flags ^ RL_F_DRYRUN, &twin_cell);
    check_same_reply("DRYRUN answers exactly as the real call", &twin, &reply);
    if (!(flags & RL_F_DRYRUN)) {
        CHECK(l->alg->cell_valid(&cell));
        l->exists = reply.reset_after_ms > 0;
        l->cell = cell;
    }
    return reply;
}

/* A real call without the checks of call(): decide, store unless DRYRUN, drop the key when idle. For
 * side paths (what another sequence of calls would have left). */
static inline rl_reply apply(limiter *l, int64_t now_us, int64_t cost, uint32_t flags) {
    rl_cell cell;
    rl_reply reply = decide_copy(l, now_us, cost, flags, &cell);
    if (!(flags & RL_F_DRYRUN)) {
        l->exists = reply.reset_after_ms > 0;
        l->cell = cell;
    }
    return reply;
}

/* --- scripted tables -------------------------------------------------------------------------------- */

/* One call and its whole expected reply (limit is the limiter's params[0]); granted is what a plain
 * request gets (cost when allowed, else 0; 0 for a refund). An ATMOST request needs a row_g. */
typedef struct row {
    int64_t at_us; /* fake clock, from the table's base */
    int64_t cost;
    uint32_t flags;
    int64_t allowed, remaining, retry_ms, reset_ms, wait_ms;
} row;

/* A row with the seventh field spelled out. */
typedef struct row_g {
    int64_t at_us, cost;
    uint32_t flags;
    int64_t allowed, remaining, retry_ms, reset_ms, wait_ms, granted;
} row_g;

static inline void expect_field(const char *table, size_t i, const char *field, int64_t got, int64_t want) {
    char what[160];
    snprintf(what, sizeof what, "%s, row %zu: %s", table, i + 1, field);
    if (!check_record(got == want, __FILE__, __LINE__, what))
        fprintf(stderr, "     got %lld, expected %lld\n", (long long)got, (long long)want);
}

static inline void run_row(const char *table, size_t i, limiter *l, int64_t base_us, const row_g *w) {
    rl_reply r = call(l, base_us + w->at_us, w->cost, w->flags);
    expect_field(table, i, "allowed", r.allowed, w->allowed);
    expect_field(table, i, "limit", r.limit, limit_of(l));
    expect_field(table, i, "remaining", r.remaining, w->remaining);
    expect_field(table, i, "retry_after_ms", r.retry_after_ms, w->retry_ms);
    expect_field(table, i, "reset_after_ms", r.reset_after_ms, w->reset_ms);
    expect_field(table, i, "wait_ms", r.wait_ms, w->wait_ms);
    expect_field(table, i, "granted", r.granted, w->granted);
}

static inline void run_table(const char *table, limiter *l, int64_t base_us, const row *rows, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const row *w = &rows[i];
        CHECK(!(w->flags & RL_F_ATMOST)); /* its granted is not implied: use a row_g */
        int64_t granted = w->allowed && !(w->flags & RL_F_REFUND) ? w->cost : 0;
        row_g g = {w->at_us, w->cost, w->flags, w->allowed, w->remaining, w->retry_ms, w->reset_ms, w->wait_ms,
                   granted};
        run_row(table, i, l, base_us, &g);
    }
}

static inline void run_table_g(const char *table, limiter *l, int64_t base_us, const row_g *rows, size_t n) {
    for (size_t i = 0; i < n; i++) run_row(table, i, l, base_us, &rows[i]);
}

#define RUN_TABLE(l, base, rows) run_table(#rows, (l), (base), (rows), sizeof(rows) / sizeof((rows)[0]))
#define RUN_TABLE_G(l, base, rows) run_table_g(#rows, (l), (base), (rows), sizeof(rows) / sizeof((rows)[0]))
/* The same on a limiter of its own, new (made: a limiter value, e.g. new_token(1, 3, 1000)): for a table
 * that starts from nothing and whose limiter no later table goes on with. */
#define RUN_TABLE_NEW(made, base, rows)                                                           \
    do {                                                                                          \
        limiter new_ = (made);                                                                    \
        RUN_TABLE(&new_, base, rows);                                                             \
    } while (0)
#define RUN_TABLE_G_NEW(made, base, rows)                                                         \
    do {                                                                                          \
        limiter new_ = (made);                                                                    \
        RUN_TABLE_G(&new_, base, rows);                                                           \
    } while (0)

/* --- the promises of one reply ---------------------------------------------------------------------- */

static inline int64_t ms_before(int64_t now_us, int64_t ms) { return now_us + (ms - 1) * 1000; }
static inline int64_t ms_at(int64_t now_us, int64_t ms) { return now_us + ms * 1000; }

/* retry_after_ms is the first whole ms at which the same request is admitted. A plain cost above the
 * limit is never admitted; ATMOST takes what there is, and a refund is always admitted. */
static inline void check_retry(const limiter *l, int64_t now, int64_t cost, uint32_t flags,
                               const rl_reply *r) {
    int never = cost > limit_of(l) && flags == plain_flags(flags);
    if (never) CHECK_EQ(r->allowed, 0);
    if (r->allowed || never) {
        CHECK_EQ(r->retry_after_ms, -1);
        return;
    }
    if (!CHECK(r->retry_after_ms >= 1)) return;
    CHECK_EQ(probe(l, ms_before(now, r->retry_after_ms), cost, flags).allowed, 0);
    CHECK_EQ(probe(l, ms_at(now, r->retry_after_ms), cost, flags).allowed, 1);
}

/* At `at` (idle) the limiter answers a request exactly as a new one would, and stores the same cell:
 * nothing it held may linger. A cell the module drops (reset 0) is not compared. */
static inline void check_as_new(const limiter *l, int64_t at, int64_t cost, uint32_t flags) {
    limiter fresh = *l;
    fresh.exists = 0;
    rl_cell kept_cell, new_cell;
    rl_reply kept = decide_copy(l, at, cost, flags, &kept_cell);
    rl_reply anew = decide_copy(&fresh, at, cost, flags, &new_cell);
    check_same_reply("an idle limiter answers as a new one", &kept, &anew);
    if (anew.reset_after_ms > 0) CHECK(same_cell_of(l->alg, &kept_cell, &new_cell));
}

/* reset_after_ms / _us say exactly when the limiter is idle; from then on it is a new one, whether the
 * key is gone or its expiry (rounded up to the ms, or held longer by a frozen clock) has not come yet.
 * `later_us` >= 0 is how long after idle to look again. */
static inline void check_reset(const limiter *l, int64_t now, int64_t cost, uint32_t flags,
                               const rl_reply *r, int64_t later_us) {
    CHECK_EQ(r->reset_after_ms, (r->reset_after_us + 999) / 1000);
    if (r->reset_after_ms == 0) return; /* the key is gone: new by construction */
    CHECK(probe(l, ms_before(now, r->reset_after_ms), 0, flags).reset_after_ms > 0);
    CHECK_EQ(probe(l, ms_at(now, r->reset_after_ms), 0, flags).reset_after_ms, 0);
    CHECK(probe(l, now + r->reset_after_us - 1, 0, flags).reset_after_us > 0);
    int64_t idle_at = now + r->reset_after_us;
    rl_reply idle = probe(l, idle_at, 0, flags);
    CHECK_EQ(idle.reset_after_us, 0);
    CHECK_EQ(idle.remaining, limit_of(l));

    const int64_t at[] = {idle_at, ms_at(now, r->reset_after_ms), idle_at + later_us};
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        check_as_new(l, at[i], 0, flags);
        check_as_new(l, at[i], cost, flags);
        check_as_new(l, at[i], limit_of(l), flags);
    }
}

/* remaining more units are admitted now, one more is not (plain requests of the same mode). */
static inline void check_remaining(const limiter *l, int64_t now, uint32_t flags, const rl_reply *r) {
    flags = plain_flags(flags);
    CHECK(r->remaining >= 0 && r->remaining <= limit_of(l));
    if (r->remaining > 0) CHECK_EQ(probe(l, now, r->remaining, flags).allowed, 1);
    CHECK_EQ(probe(l, now, r->remaining + 1, flags).allowed, 0);
}

/* The real call is what changes state: right after it, the limiter reads as its reply said (a new one
 * when the key was dropped). */
static inline void check_state_described(const limiter *after, int64_t now, uint32_t flags,
                                         const rl_reply *r) {
    rl_reply look = probe(after, now, 0, plain_flags(flags));
    CHECK(look.remaining == r->remaining && look.reset_after_us == r->reset_after_us);
}

/* The same request again at once: a denied one changed nothing, so it gets the same reply; after an
 * admitted one, the next keeps the retry promise too. */
static inline void check_repeat(const limiter *after, int64_t now, int64_t cost, uint32_t flags,
                                const rl_reply *r) {
    rl_reply again = probe(after, now, cost, flags);
    if (!r->allowed) check_same_reply("a denied request changes nothing", &again, r);
    check_retry(after, now, cost, flags, &again);
}

/* At an earlier time (back_us before now) the same request is never admitted when it is not now, and
 * there is never more room. */
static inline void check_earlier(const limiter *before, int64_t now, int64_t back_us, int64_t cost,
                                 uint32_t flags) {
    CHECK(probe(before, now - back_us, cost, flags).allowed <= probe(before, now, cost, flags).allowed);
    CHECK(probe(before, now - back_us, 0, flags).remaining <= probe(before, now, 0, flags).remaining);
}

/* --- REFUND and ATMOST ------------------------------------------------------------------------------ */

/* After REFUND n at now: `before` is the limiter as it was, `after` as the refund left it. later_us >= 0
 * is how long after now to compare it with a limiter that had no refund; an earlier refund is tried only
 * when the refund keeps the key's mode (same_mode: a mode switch rewrites the state at the time it is
 * made, by design). */
static inline void check_refund(const limiter *before, const limiter *after, int64_t now, int64_t n,
                                uint32_t flags, const rl_reply *r, int64_t later_us, int same_mode) {
    uint32_t plain = plain_flags(flags);
    CHECK_EQ(r->allowed, 1);
    CHECK_EQ(r->retry_after_ms, -1);
    CHECK_EQ(r->wait_ms, 0);
    CHECK_EQ(r->granted, 0);

    /* Room given back: at least none, at most n, never beyond the limit; never further from idle. */
    limiter without = *before; /* what a COST 0 call reads and leaves instead */
    rl_reply was = apply(&without, now, 0, plain);
    rl_i128 most = (rl_i128)was.remaining + n;
    if (most > limit_of(before)) most = limit_of(before);
    CHECK(r->remaining >= was.remaining);
    CHECK(r->remaining <= most);
    CHECK(r->reset_after_us <= was.reset_after_us);
    if (n == 0) { /* changes nothing */
        CHECK(r->remaining == was.remaining && r->reset_after_us == was.reset_after_us);
        CHECK_EQ(after->exists, without.exists);
        if (after->exists && without.exists) CHECK(same_cell_of(before->alg, &after->cell, &without.cell));
    }

    /* Two refunds at once are one of their sum: the same state. */
    int64_t part = (int64_t)(rng() % (uint64_t)(n + 1));
    limiter twice = *before;
    apply(&twice, now, part, flags);
    apply(&twice, now, n - part, flags);
    rl_reply one = probe(after, now, 0, plain), two = probe(&twice, now, 0, plain);
    check_same_reply("two refunds at once are one refund of their sum", &two, &one);
    CHECK_EQ(twice.exists, after->exists);
    if (twice.exists && after->exists) CHECK(same_cell_of(before->alg, &twice.cell, &after->cell));

    /* Later, never less room than without the refund. */
    int64_t at = now + later_us;
    CHECK(probe(after, at, 0, plain).remaining >= probe(&without, at, 0, plain).remaining);

    /* The same refund at an earlier clock leaves no more room now than the refund now. */
    if (same_mode) {
        int64_t back = (int64_t)(rng() % (uint64_t)(later_us + 2));
        limiter early = *before;
        apply(&early, now - (back < now ? back : now), n, flags);
        CHECK(probe(&early, now, 0, plain).remaining <= r->remaining);
    }
}

/* Where the room is counted in whole units that a refund gives back one for one (a bucket, a fixed
 * window), REFUND n leaves exactly min(limit, W + n), W being what a COST 0 call would have said, as long
 * as the limiter was not over its limit (that COST 0 call allowed). */
static inline void check_refund_exact(const limiter *before, int64_t now, int64_t n, uint32_t flags,
                                      const rl_reply *r) {
    if (!(flags & RL_F_REFUND)) return;
    rl_reply was = probe(before, now, 0, plain_flags(flags));
    if (!was.allowed) return;
    rl_i128 want = (rl_i128)was.remaining + n;
    CHECK_EQ(r->remaining, want < limit_of(before) ? want : limit_of(before));
}

/* After ATMOST COST n at now, on the limiter as it was. */
static inline void check_atmost(const limiter *before, int64_t now, int64_t n, uint32_t flags,
                                const rl_reply *r) {
    uint32_t plain = plain_flags(flags);
    rl_cell atmost_cell, plain_cell;
    decide_copy(before, now, n, flags, &atmost_cell);
    if (n == 0) {
        rl_reply p = decide_copy(before, now, 0, plain, &plain_cell);
        check_same_reply("ATMOST COST 0 is COST 0", r, &p);
        if (r->reset_after_ms > 0) CHECK(same_cell_of(before->alg, &atmost_cell, &plain_cell));
        return;
    }
    /* What is available: the remaining of a COST 0 call. */
    int64_t available = probe(before, now, 0, plain).remaining;
    int64_t g = n < available ? n : available;
    CHECK_EQ(r->granted, g);
    CHECK_EQ(r->allowed, g >= 1);
    rl_reply p = decide_copy(before, now, g >= 1 ? g : 1, plain, &plain_cell);
    check_same_reply("ATMOST is the plain request of what it grants (of 1 when nothing)", r, &p);
    if (r->reset_after_ms > 0) CHECK(same_cell_of(before->alg, &atmost_cell, &plain_cell));
    if (g >= 1) CHECK_EQ(probe(before, now, g, plain).allowed, 1);
    if (g < n) {
        CHECK_EQ(probe(before, now, g + 1, plain).allowed, 0);
        CHECK_EQ(r->remaining, 0);
    }
}

/* After FORCE COST n at now, on the limiter as it was (`after` as the forced call left it). */
static inline void check_force(const limiter *before, const limiter *after, int64_t now, int64_t n, uint32_t flags,
                               const rl_reply *r, int64_t later_us) {
    uint32_t plain = plain_flags(flags);
    CHECK_EQ(r->allowed, 1);
    CHECK_EQ(r->retry_after_ms, -1);
    CHECK_EQ(r->wait_ms, 0);
    CHECK_EQ(r->granted, n);
    limiter denied = *before;
    rl_reply p = apply(&denied, now, n, plain);
    if (p.allowed) { /* it fits: FORCE changes nothing */
        check_same_reply("FORCE of what fits is the plain request", r, &p);
        CHECK_EQ(after->exists, denied.exists);
        if (after->exists && denied.exists) CHECK(same_cell_of(before->alg, &after->cell, &denied.cell));
        return;
    }
    CHECK_EQ(r->remaining, 0);
    CHECK(r->reset_after_us >= p.reset_after_us);
    CHECK(probe(after, now + later_us, 0, plain).remaining <= probe(&denied, now + later_us, 0, plain).remaining);
    /* The same plain request at once: denied, and admitted exactly at its retry (never, above the limit). */
    rl_reply next = probe(after, now, n, plain);
    CHECK_EQ(next.allowed, 0);
    check_retry(after, now, n, plain, &next);
    if (n <= limit_of(before)) CHECK(next.retry_after_ms >= p.retry_after_ms);
}

/* A refund of what a request took, right after it, restores the state as it was: as a COST 0 call
 * would have left it, now and later_us later. Not after a FORCE: its debt may have saturated, and a refund
 * of forced usage is no undo (nothing was admitted that a refund would take back). */
static inline void check_undo(const limiter *before, const limiter *after, int64_t now, uint32_t flags,
                              const rl_reply *r, int64_t later_us) {
    if (r->granted <= 0 || (flags & RL_F_FORCE)) return;
    uint32_t plain = plain_flags(flags);
    limiter undone = *after, without = *before;
    apply(&undone, now, r->granted, plain | RL_F_REFUND);
    apply(&without, now, 0, plain);
    rl_reply got = probe(&undone, now, 0, plain), want = probe(&without, now, 0, plain);
    check_same_reply("a refund of what was taken restores the state", &got, &want);
    got = probe(&undone, now + later_us, 0, plain);
    want = probe(&without, now + later_us, 0, plain);
    check_same_reply("a refund of what was taken restores the state, later too", &got, &want);
    CHECK_EQ(undone.exists, without.exists);
    if (undone.exists && without.exists) CHECK(same_cell_of(before->alg, &undone.cell, &without.cell));
}

/* granted, and the promises of the common options the algorithm takes (`options`, RL_F_REFUND, RL_F_ATMOST
 * and RL_F_FORCE), around a call that took `before` to `after`. */
static inline void check_options(const limiter *before, const limiter *after, int64_t now, int64_t cost,
                                 uint32_t flags, const rl_reply *r, int64_t later_us, int same_mode,
                                 uint32_t options) {
    if (flags & RL_F_REFUND)
        check_refund(before, after, now, cost, flags, r, later_us, same_mode);
    else if (flags & RL_F_ATMOST)
        check_atmost(before, now, cost, flags, r);
    else if (flags & RL_F_FORCE)
        check_force(before, after, now, cost, flags, r, later_us);
    else
        CHECK_EQ(r->granted, r->allowed ? cost : 0);
    if ((options & RL_F_REFUND) && !(flags & RL_F_REFUND)) check_undo(before, after, now, flags, r, later_us);
}

/* --- pseudo-random runs ----------------------------------------------------------------------------- */

/* Each parameter in [1, max[i]] over all magnitudes (0 where max[i] is 0), drawn until valid. */
static inline limiter random_limiter(const rl_algorithm *alg, const int64_t max[3]) {
    for (;;) {
        int64_t p[3];
        for (int i = 0; i < 3; i++) p[i] = max[i] > 0 ? rng_magnitude(max[i]) : 0;
        limiter l = limiter_new(alg, p[0], p[1], p[2]);
        rl_request req = request_of(&l, 0, 1, 0);
        if (alg->validate(&req, validate_err) == 0) return l;
    }
}

/* A cost: mostly small against the limit, sometimes 0, the whole limit, or more. */
static inline int64_t random_cost(int64_t limit) {
    switch (rng() % 8) {
    case 0: return 0;
    case 1: return limit;
    case 2: return limit + 1;
    case 3: return 1;
    default: return 1 + (int64_t)(rng() % (uint64_t)limit);
    }
}

/* What a test brings to the runs: its limiters, the time scale of its gaps, its flags (never DRYRUN:
 * every call is probed with DRYRUN anyway), which of them choose the mode the cell is read in, the
 * common options the algorithm takes (RL_F_REFUND, RL_F_ATMOST, RL_F_FORCE: a call in eight is a refund,
 * one in eight ATMOST, about one in eight of the rest forced where the mode takes it), and its own checks
 * of each reply (may be NULL). */
typedef struct promise_plan {
    int sets, steps;
    int64_t base_us;
    uint32_t mode_flags, options;
    limiter (*new_limiter)(void);
    int64_t (*gap)(const limiter *l);
    uint32_t (*flags)(int set, int step);
    void (*extra)(const limiter *before, int64_t now, int64_t cost, uint32_t flags, const rl_reply *r);
} promise_plan;

/* One real call with every promise checked around it; *before receives the limiter as it was.
 *
 * A denied request admits nothing, so a DRYRUN of it, which leaves the state as it was, must keep the
 * reply's promises on that unchanged state too ("if nothing else happened"). Not when the request
 * changes the key's mode (same_mode 0: the cell was last written in another mode): a mode switch
 * rewrites the state by design, denied or not (token: the whole tokens are kept, the fraction and the
 * anchor are not; window: idle follows the mode of the last write), and the reply describes the
 * rewritten state. */
static inline rl_reply call_with_promises(limiter *l, int64_t now, int64_t cost, uint32_t flags,
                                          int64_t span_us, int same_mode, uint32_t options, limiter *before) {
    *before = *l;
    check_earlier(before, now, (int64_t)(rng() % (uint64_t)(span_us + 2)), cost, flags);
    int64_t later_us = (int64_t)(rng() % (uint64_t)(span_us + 1));
    rl_reply r = call(l, now, cost, flags);
    check_repeat(l, now, cost, flags, &r);
    const limiter *kept[2] = {l, before};
    for (int i = 0; i < (!r.allowed && same_mode ? 2 : 1); i++) {
        check_retry(kept[i], now, cost, flags, &r);
        check_reset(kept[i], now, cost, flags, &r, later_us);
        check_remaining(kept[i], now, flags, &r);
        check_state_described(kept[i], now, flags, &r);
    }
    check_options(before, l, now, cost, flags, &r, later_us, same_mode, options);
    return r;
}

/* sets limiters, each taking `steps` calls at pseudo-random gaps and costs, every reply checked. */
static inline void check_promises(const promise_plan *plan) {
    for (int set = 0; set < plan->sets; set++) {
        limiter l = plan->new_limiter();
        int64_t now = plan->base_us + (int64_t)(rng() % (uint64_t)(1000 * 1000000LL));
        uint32_t last_flags = 0;
        for (int step = 0; step < plan->steps; step++) {
            now += plan->gap(&l);
            int64_t cost = random_cost(limit_of(&l));
            uint32_t flags = plan->flags(set, step);
            uint32_t option = rng() % 8 == 0 ? RL_F_REFUND : rng() % 7 == 0 ? RL_F_ATMOST : 0;
            if (!option && (plan->options & RL_F_FORCE) && rng() % 6 == 0) option = RL_F_FORCE;
            flags |= option & plan->options;
            if (flags & RL_F_FORCE) { /* only where the mode takes it (RL.LEAKY: NODELAY) */
                rl_request req = request_of(&l, now, cost, flags);
                if (l.alg->validate(&req, validate_err) != 0) flags &= ~(uint32_t)RL_F_FORCE;
            }
            int64_t span = plan->gap(&l); /* drawn apart: argument order is unspecified */
            int same_mode = !l.exists || ((flags ^ last_flags) & plan->mode_flags) == 0;
            limiter before;
            rl_reply r = call_with_promises(&l, now, cost, flags, span, same_mode, plan->options, &before);
            if (plan->extra) plan->extra(&before, now, cost, flags, &r);
            last_flags = flags;
        }
    }
}

/* A run of unit requests whose clock sometimes steps back is admitted no more often than the same run
 * on a clock that holds still instead. step_gap is how far the clock moves forward, back_span bounds a
 * step back. */
static inline void check_clock_back_run(limiter jittery, uint32_t flags, int steps, int64_t base_us,
                                        int64_t (*step_gap)(const limiter *),
                                        int64_t (*back_span)(const limiter *)) {
    limiter steady = jittery;
    int64_t now = base_us, latest = INT64_MIN, admitted_jittery = 0, admitted_steady = 0;
    for (int step = 0; step < steps; step++) {
        int64_t span = back_span(&jittery) + 1;
        if (rng() % 4 == 0)
            now -= (int64_t)(rng() % (uint64_t)span);
        else
            now += step_gap(&jittery);
        if (now > latest) latest = now;
        admitted_jittery += call(&jittery, now, 1, flags).allowed;
        admitted_steady += call(&steady, latest, 1, flags).allowed;
    }
    CHECK(admitted_jittery <= admitted_steady);
}

#endif
