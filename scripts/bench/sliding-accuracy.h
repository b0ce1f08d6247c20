/* sliding-accuracy.h -- what the parts of the sliding-accuracy study share (see sliding-accuracy.c for
 * what it measures and prints):
 *   sliding-accuracy.c         the command line, and the order of the work;
 *   sliding-accuracy-trace.c   the synthetic trace: its shape, its deterministic generator, its file;
 *   sliding-accuracy-judge.c   the bookkeeping of a comparison: decisions that differ from a reference,
 *                              a counter judged on its own history, the exact log's deque;
 *   sliding-accuracy-run.c     every request of the trace through every limiter, counted in a study;
 *   sliding-accuracy-report.c  the study printed: the report, the markdown rows and the plot's data. */
#ifndef SLIDING_ACCURACY_H
#define SLIDING_ACCURACY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* --- the trace (sliding-accuracy-trace.c) ----------------------------------------------------------- */

typedef struct trace {
    int64_t requests, clients;
    int64_t *t_ms;  /* all requests, client by client, each client's in time order */
    int64_t *first; /* client i's requests are t_ms[first[i] .. first[i + 1]) */
} trace;

void *xmalloc(size_t n);
void trace_generate(trace *tr, uint64_t seed);
int trace_write(const trace *tr, const char *path); /* as client,t_ms lines; 0, or 2 if it cannot */

/* --- comparing decisions (sliding-accuracy-judge.c) ------------------------------------------------- */

typedef struct cmp {
    int64_t differ, false_allow, false_deny; /* false allow: this one allowed, the reference denied */
    int64_t clients_hit;                     /* clients with at least one difference */
} cmp;

/* A log of admitted times (non-decreasing) with a head: the deque of an exact sliding window. */
typedef struct tlog {
    int64_t *t;
    int64_t lo, n;
} tlog;

/* A counter judged on its own history: at each request, what the exact rule would decide given the
 * requests this counter itself admitted. A false allow admits one into a W window that already holds L
 * of its admits (so it then holds more than L); a false deny refuses one that would still fit. Unlike the
 * comparison with the exact limiter, one mistake here does not cause the next ones. */
typedef struct own {
    int64_t false_allow, false_deny, max_in_window;
} own;

void cmp_add(cmp *c, int allowed, int ref_allowed, int *hit);
int64_t tlog_in_window(tlog *l, int64_t now, int64_t window);
int64_t count_above(const int64_t *t, int64_t n, int64_t x);
void own_add(own *o, tlog *l, int allowed, int64_t t, int64_t cost, int64_t limit, int64_t window);
void fail(const char *what, int64_t client, int64_t t);

/* --- the study (sliding-accuracy-run.c, sliding-accuracy-report.c) ---------------------------------- */

typedef struct study {
    uint64_t seed;
    int64_t limit, window, requests, clients; /* the settings (cost is always 1) */
    int has6, has60;                          /* SUBWINDOWS 6 and 60 run: W is a multiple of n */
    int64_t busiest, t_min, t_max;            /* the trace: most requests of one client, first and last */
    cmp s_ex, f_ex, s_at, f_at, ex_at, s6_ex, s60_ex; /* X vs Y: SLIDING, FIXED, exact, attempt log, SUB n */
    own s_own, f_own, s6_own, s60_own;
    int64_t clients_limited, limited_requests; /* clients the exact log denied at least once, their requests */
    int64_t exact_denied, attempts_denied, sliding_denied, fixed_denied;
} study;

int study_run(study *st, const trace *tr); /* 0, or -1 if RL.WINDOW refuses the settings */
void study_print(const study *st);

#endif
