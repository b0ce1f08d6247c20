/* sliding-accuracy-run.c -- the sliding-accuracy study's run: every client's requests, in time order,
 * through each limiter, each keeping its own state (a denied request is not admitted, so their histories
 * drift apart once they disagree), and every decision counted in the study (sliding-accuracy.h) against
 * the references: the exact log of admitted requests and the attempt log (RL.SLIDINGLOG). The module's
 * own code decides for RL.WINDOW and RL.SLIDINGLOG; the exact log is kept here. Each client's requests
 * are also checked against a binary search over its whole history (the self-checks: fail() aborts). */
#include <stdlib.h>

#include "rl_common.h"
#include "sliding-accuracy.h"
#include "slidinglog.h"
#include "window.h"

/* What the run reuses from client to client: the exact log, the counters' admitted streams, the attempt
 * log (newest first at slog[head .. tail), growing downwards: at most one entry per request, as cost is
 * 1), and each limiter's request (its parameters; now_us set per decision). */
typedef struct scratch {
    tlog exact, s_adm, f_adm, s6_adm, s60_adm;
    rl_slog_entry *slog;
    int64_t cap;
    rl_request sreq, freq, lreq, s6req, s60req;
} scratch;

/* One client's state in every limiter. */
typedef struct client {
    int64_t id;
    rl_cell scell, fcell, s6cell, s60cell;
    int sexists, fexists, s6exists, s60exists;
    int64_t head, tail; /* the attempt log in scratch.slog */
    int hit[7];         /* which comparisons this client has made differ */
} client;

static const int64_t cost = 1;

static void scratch_init(scratch *sc, const study *st) {
    size_t n = (size_t)st->busiest;
    sc->exact = (tlog){xmalloc(sizeof(int64_t) * n), 0, 0};
    sc->s_adm = (tlog){xmalloc(sizeof(int64_t) * n), 0, 0};
    sc->f_adm = (tlog){xmalloc(sizeof(int64_t) * n), 0, 0};
    sc->s6_adm = (tlog){xmalloc(sizeof(int64_t) * n), 0, 0};
    sc->s60_adm = (tlog){xmalloc(sizeof(int64_t) * n), 0, 0};
    sc->slog = xmalloc(sizeof(rl_slog_entry) * (n + 1));
    sc->cap = st->busiest + 1;
    int64_t limit = st->limit, window = st->window;
    sc->sreq = (rl_request){.params = {limit, window, 0}, .cost = cost, .flags = RL_F_SLIDING};
    sc->freq = (rl_request){.params = {limit, window, 0}, .cost = cost, .flags = RL_F_FIXED};
    sc->lreq = (rl_request){.params = {limit, window, 0}, .cost = cost};
    sc->s6req = (rl_request){.params = {limit, window, 6}, .cost = cost, .flags = RL_F_SUBWINDOWS};
    sc->s60req = (rl_request){.params = {limit, window, 60}, .cost = cost, .flags = RL_F_SUBWINDOWS};
}

static void scratch_free(scratch *sc) {
    free(sc->s6_adm.t);
    free(sc->s60_adm.t);
    free(sc->exact.t);
    free(sc->s_adm.t);
    free(sc->f_adm.t);
    free(sc->slog);
}

/* RL.WINDOW's decision for req at now_us on cell (the key deleted when idle): allowed or not. */
static int window_decides(rl_request *req, rl_cell *cell, int *exists, int64_t now_us) {
    rl_reply rep;
    req->now_us = now_us;
    rl_window_algorithm.decide(req, cell, *exists, &rep);
    *exists = rep.reset_after_ms > 0;
    return rep.allowed != 0;
}

/* RL.SLIDINGLOG: decide on the entries in the window (one per request, cost 1: weight 1), keep the
 * newest plan.keep units, add plan.add (0 or 1) at now. Its rule with cost 1 and a forward clock: admitted
 * iff the earlier attempts in (t - W, t] number fewer than L. */
static int attempt_log_decides(const study *st, scratch *sc, client *c, const int64_t *ts, int64_t j) {
    int64_t t = ts[j], now_us = t * 1000, W_us = st->window * 1000;
    rl_reply rep;
    rl_slog_plan plan;
    sc->lreq.now_us = now_us;
    while (c->tail > c->head && sc->slog[c->tail - 1].at_us <= now_us - W_us) c->tail--;
    rl_slog_decide(&sc->lreq, sc->slog + c->head, (size_t)(c->tail - c->head), &plan, &rep);
    int a_ok = rep.allowed != 0;
    c->tail = c->head + plan.keep;
    for (int64_t a = 0; a < plan.add; a++) sc->slog[--c->head] = (rl_slog_entry){now_us, 1};
    if (rep.reset_after_ms == 0 && c->head != c->tail) fail("attempt log idle but not empty", c->id, t);
    if (a_ok != (count_above(ts, j, t - st->window) + cost <= st->limit)) fail("attempt log", c->id, t);
    return a_ok;
}

/* The exact sliding log of admitted requests: the reference. */
static int exact_log_decides(const study *st, tlog *exact, int64_t client_id, int64_t t) {
    int64_t in_win = tlog_in_window(exact, t, st->window);
    int e_ok = in_win + cost <= st->limit;
    if (e_ok != (count_above(exact->t, exact->n, t - st->window) + cost <= st->limit)) fail("exact log", client_id, t);
    if (e_ok) exact->t[exact->n++] = t;
    return e_ok;
}

/* Request j of client c (its times ts), through every limiter, counted. */
static void decide_one(study *st, scratch *sc, client *c, const int64_t *ts, int64_t j) {
    int64_t t = ts[j], now_us = t * 1000, limit = st->limit, window = st->window;
    int s_ok = window_decides(&sc->sreq, &c->scell, &c->sexists, now_us);
    int f_ok = window_decides(&sc->freq, &c->fcell, &c->fexists, now_us);
    int s6_ok = st->has6 ? window_decides(&sc->s6req, &c->s6cell, &c->s6exists, now_us) : 0;
    int s60_ok = st->has60 ? window_decides(&sc->s60req, &c->s60cell, &c->s60exists, now_us) : 0;
    int e_ok = exact_log_decides(st, &sc->exact, c->id, t);
    int a_ok = attempt_log_decides(st, sc, c, ts, j);

    own_add(&st->s_own, &sc->s_adm, s_ok, t, cost, limit, window);
    own_add(&st->f_own, &sc->f_adm, f_ok, t, cost, limit, window);
    if (st->has6) {
        own_add(&st->s6_own, &sc->s6_adm, s6_ok, t, cost, limit, window);
        cmp_add(&st->s6_ex, s6_ok, e_ok, &c->hit[5]);
    }
    if (st->has60) {
        own_add(&st->s60_own, &sc->s60_adm, s60_ok, t, cost, limit, window);
        cmp_add(&st->s60_ex, s60_ok, e_ok, &c->hit[6]);
    }
    st->exact_denied += !e_ok;
    st->attempts_denied += !a_ok;
    st->sliding_denied += !s_ok;
    st->fixed_denied += !f_ok;
    cmp_add(&st->s_ex, s_ok, e_ok, &c->hit[0]);
    cmp_add(&st->f_ex, f_ok, e_ok, &c->hit[1]);
    cmp_add(&st->s_at, s_ok, a_ok, &c->hit[2]);
    cmp_add(&st->f_at, f_ok, a_ok, &c->hit[3]);
    cmp_add(&st->ex_at, e_ok, a_ok, &c->hit[4]);
}

int study_run(study *st, const trace *tr) {
    st->has6 = st->window % 6 == 0;
    st->has60 = st->window % 60 == 0;
    scratch sc;
    scratch_init(&sc, st);
    char err[RL_ERR_LEN];
    if (rl_window_algorithm.validate(&sc.sreq, err)) return -1;
    for (int64_t i = 0; i < tr->clients; i++) {
        client c = {.id = i, .head = sc.cap, .tail = sc.cap};
        sc.exact.lo = sc.exact.n = sc.s_adm.lo = sc.s_adm.n = sc.f_adm.lo = sc.f_adm.n = 0;
        sc.s6_adm.lo = sc.s6_adm.n = sc.s60_adm.lo = sc.s60_adm.n = 0;
        int64_t denied_before = st->exact_denied;
        const int64_t *ts = tr->t_ms + tr->first[i];
        int64_t n = tr->first[i + 1] - tr->first[i];
        for (int64_t j = 0; j < n; j++) decide_one(st, &sc, &c, ts, j);
        if (st->exact_denied > denied_before) {
            st->clients_limited++;
            st->limited_requests += n;
        }
    }
    scratch_free(&sc);
    return 0;
}
