/* bench-micro.c -- the algorithms alone (the files under algorithms/, no Redis): nanoseconds and instructions per
 * decision. Built by scripts/bench/tools.sh, run by scripts/bench/micro.sh.
 *
 *   bench-micro [--decisions N] [--cells N] [--repeat N] [--only NAME] [--list]
 *
 * Each case runs N decisions through the algorithm's decide, as the module calls it (through the
 * rl_algorithm table), over an array of cells visited in a pseudo-random order, with a clock that moves
 * forward a few µs per decision; a cell whose decision leaves the limiter idle is new again next time, as
 * a deleted key would be. The sliding log is decided over full logs (limit + 1 entries of weight 1 per
 * cell: the most entries a decision can look at). The request stream (cell, time) is made before the clock starts, so the timed
 * loop is just "load a request, decide".
 *
 * Output, one line per case:  NAME ns=<ns per decision, the best of --repeat runs> decisions=N
 *
 * Instructions per decision: run under callgrind, collecting only inside the timed loop (run_loop), one
 * dump per case, and divide each dump's total by the decisions:
 *   valgrind --tool=callgrind --collect-atstart=no --toggle-collect='run_loop*' --dump-after='run_loop*' \
 *            bench-micro --decisions 100000 --repeat 1
 * The loop-only case (a decide that does nothing) shows the harness's own share. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../algorithms/leaky.h"
#include "../../algorithms/rl_common.h"
#include "../../algorithms/slidinglog.h"
#include "../../algorithms/token.h"
#include "../../algorithms/window.h"

typedef struct bench_case {
    const char *name;
    const rl_algorithm *alg;  /* NULL: the sliding log (or the loop only, when slog_limit is 0) */
    int64_t params[3];
    uint32_t flags;
    int64_t slog_limit;       /* sliding log: limit (the log holds limit + 1 entries) */
    int64_t step_us;          /* clock advance per decision */
} bench_case;

static void noop_decide(const rl_request *req, rl_cell *cell, int exists, rl_reply *reply) {
    (void)req, (void)exists;
    cell->w[0]++;
    reply->reset_after_ms = 1;
}
static const rl_algorithm noop_algorithm = {.decide = noop_decide};

/* 100 per 60000 ms everywhere (token and leaky: capacity 100, 100 per minute; windows: 100 per minute). */
static const bench_case cases[] = {
    {"loop-only", &noop_algorithm, {0, 0, 0}, 0, 0, 3},
    {"token", &rl_token_algorithm, {100, 100, 60000}, 0, 0, 3},
    {"token-interval", &rl_token_algorithm, {100, 100, 60000}, RL_F_INTERVAL, 0, 3},
    {"leaky", &rl_leaky_algorithm, {100, 100, 60000}, 0, 0, 3},
    {"leaky-nodelay", &rl_leaky_algorithm, {100, 100, 60000}, RL_F_NODELAY, 0, 3},
    {"window-fixed", &rl_window_algorithm, {100, 60000, 0}, RL_F_FIXED, 0, 3},
    {"window-sliding", &rl_window_algorithm, {100, 60000, 0}, RL_F_SLIDING, 0, 3},
    {"slidinglog-10", NULL, {10, 60000, 0}, 0, 10, 3},
    {"slidinglog-100", NULL, {100, 60000, 0}, 0, 100, 3},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

typedef struct request_stream {
    uint32_t *cell;  /* which cell each decision is about */
    int64_t *now_us; /* its time */
} request_stream;

/* A cell as a key's value keeps it: its words only (every case here has two-word states), copied to and
 * from a whole rl_cell around each decision as the module's cell storage does. */
typedef struct stored_cell {
    uint64_t w[2];
} stored_cell;

typedef struct bench_state {
    stored_cell *cells;
    uint8_t *exists;
    rl_slog_entry *logs; /* sliding log: (limit + 1) entries per cell, newest first */
    size_t ncells;
    uint64_t sink;
} bench_state;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The timed loop: n decisions of one case. Kept out of line so that callgrind can collect inside it
 * alone. */
__attribute__((noinline, noclone)) void run_loop(const bench_case *bc, bench_state *st, const request_stream *rs,
                                                 long n) {
    rl_request req;
    memset(&req, 0, sizeof req);
    memcpy(req.params, bc->params, sizeof bc->params); /* a request has room for more */
    req.flags = bc->flags;
    req.cost = 1;
    rl_reply reply;
    uint64_t sink = 0;
    if (bc->alg) {
        const rl_algorithm *alg = bc->alg;
        for (long i = 0; i < n; i++) {
            uint32_t c = rs->cell[i];
            req.now_us = rs->now_us[i];
            rl_cell cell;
            cell.w[0] = st->cells[c].w[0];
            cell.w[1] = st->cells[c].w[1];
            alg->decide(&req, &cell, st->exists[c], &reply);
            st->cells[c].w[0] = cell.w[0];
            st->cells[c].w[1] = cell.w[1];
            st->exists[c] = reply.reset_after_ms > 0;
            sink += (uint64_t)reply.allowed;
        }
    } else {
        size_t len = (size_t)bc->slog_limit + 1;
        for (long i = 0; i < n; i++) {
            uint32_t c = rs->cell[i];
            req.now_us = rs->now_us[i];
            rl_slog_plan plan;
            rl_slog_decide(&req, &st->logs[c * len], len, &plan, &reply);
            sink += (uint64_t)reply.allowed + (uint64_t)plan.keep;
        }
    }
    st->sink += sink;
}

static void *xcalloc(size_t n, size_t size) {
    void *p = calloc(n, size);
    if (!p) {
        fprintf(stderr, "bench-micro: out of memory\n");
        exit(1);
    }
    return p;
}

/* Fresh state for a case: new cells, or full logs whose newest entry is just before the first request. */
static void reset_state(const bench_case *bc, bench_state *st, int64_t t0) {
    memset(st->cells, 0, st->ncells * sizeof *st->cells);
    memset(st->exists, 0, st->ncells);
    if (!bc->alg) {
        size_t len = (size_t)bc->slog_limit + 1;
        int64_t window_us = bc->params[1] * 1000;
        for (size_t c = 0; c < st->ncells; c++)
            for (size_t k = 0; k < len; k++) /* spread over the window, newest first */
                st->logs[c * len + k] = (rl_slog_entry){t0 - 1 - (int64_t)k * (window_us / 2 / (int64_t)len), 1};
    }
}

int main(int argc, char **argv) {
    long decisions = 10000000;
    size_t ncells = 65536;
    int repeat = 3;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--decisions") == 0 && i + 1 < argc) decisions = atol(argv[++i]);
        else if (strcmp(argv[i], "--cells") == 0 && i + 1 < argc) ncells = (size_t)atol(argv[++i]);
        else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) repeat = atoi(argv[++i]);
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
        else if (strcmp(argv[i], "--list") == 0) {
            for (int k = 0; k < NCASES; k++) printf("%s\n", cases[k].name);
            return 0;
        } else {
            fprintf(stderr, "usage: bench-micro [--decisions N] [--cells N] [--repeat N] [--only NAME] [--list]\n");
            return 2;
        }
    }
    if (decisions < 1 || ncells < 1 || ncells > UINT32_MAX || repeat < 1) {
        fprintf(stderr, "bench-micro: bad arguments\n");
        return 2;
    }

    bench_state st = {0};
    st.ncells = ncells;
    st.cells = xcalloc(ncells, sizeof *st.cells);
    st.exists = xcalloc(ncells, 1);
    st.logs = xcalloc(ncells * 101, sizeof *st.logs);
    request_stream rs = {xcalloc((size_t)decisions, sizeof *rs.cell), xcalloc((size_t)decisions, sizeof *rs.now_us)};

    const int64_t t0 = 1767225600000000LL; /* 2026-01-01, in µs */
    uint64_t x = 88172645463325252ull;
    for (int k = 0; k < NCASES; k++) {
        const bench_case *bc = &cases[k];
        if (only && strcmp(only, bc->name) != 0) continue;
        for (long i = 0; i < decisions; i++) { /* xorshift64 */
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            rs.cell[i] = (uint32_t)(x % ncells);
            rs.now_us[i] = t0 + i * bc->step_us;
        }
        uint64_t best = UINT64_MAX;
        for (int r = 0; r < repeat; r++) {
            reset_state(bc, &st, t0);
            uint64_t start = now_ns();
            run_loop(bc, &st, &rs, decisions);
            uint64_t ns = now_ns() - start;
            if (ns < best) best = ns;
        }
        printf("%s ns=%.2f decisions=%ld\n", bc->name, (double)best / (double)decisions, decisions);
        fflush(stdout);
    }
    if (st.sink == 42) printf("\n"); /* keep the results alive */
    free(st.cells);
    free(st.exists);
    free(st.logs);
    free(rs.cell);
    free(rs.now_us);
    return 0;
}
