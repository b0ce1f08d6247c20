/* sliding-accuracy-report.c -- the sliding-accuracy study printed: a human-readable report, then the
 * lines scripts/bench/sliding-accuracy.sh reads: "md-exact:", "md-attempts:", "md-own:" and "md-sub:"
 * hold markdown table rows, "dat:" the plot's data. Floats appear only here, for percentages and ratios;
 * every count is an integer of the study. */
#include <inttypes.h>
#include <stdio.h>

#include "sliding-accuracy.h"

static double pct(int64_t a, int64_t b) { return b ? 100.0 * (double)a / (double)b : 0.0; }

static void print_summary(const study *st) {
    int64_t N = st->requests;
    printf("sliding-accuracy: seed %" PRIu64 ", %" PRId64 " requests from %" PRId64 " clients, limit %" PRId64
           " per %" PRId64 " ms, cost 1\n",
           st->seed, N, st->clients, st->limit, st->window);
    printf("trace: %.1f h from first to last request, busiest client %" PRId64 " requests; %" PRId64
           " clients denied at least once by the exact log, sending %" PRId64 " requests (%.2f%%)\n",
           (double)(st->t_max - st->t_min) / 3600000.0, st->busiest, st->clients_limited, st->limited_requests,
           pct(st->limited_requests, N));
    printf("denied: exact log %" PRId64 " (%.3f%%), attempt log %" PRId64 " (%.3f%%), SLIDING %" PRId64
           " (%.3f%%), FIXED %" PRId64 " (%.3f%%)\n",
           st->exact_denied, pct(st->exact_denied, N), st->attempts_denied, pct(st->attempts_denied, N),
           st->sliding_denied, pct(st->sliding_denied, N), st->fixed_denied, pct(st->fixed_denied, N));
}

static void print_differences(const study *st) {
    int64_t N = st->requests;
    printf("%-30s %10s %9s %10s %10s %8s\n", "decisions differ", "differ", "%", "false-allow", "false-deny",
           "clients");
    struct {
        const char *name;
        const cmp *c;
    } rows[] = {{"SLIDING vs exact log", &st->s_ex},
                {"FIXED   vs exact log", &st->f_ex},
                {"SLIDING vs attempt log", &st->s_at},
                {"FIXED   vs attempt log", &st->f_at},
                {"exact log vs attempt log", &st->ex_at},
                {"SUBWINDOWS 6 vs exact log", &st->s6_ex},
                {"SUBWINDOWS 60 vs exact log", &st->s60_ex}};
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
        printf("%-30s %10" PRId64 " %8.4f%% %10" PRId64 " %10" PRId64 " %8" PRId64 "\n", rows[r].name, rows[r].c->differ,
               pct(rows[r].c->differ, N), rows[r].c->false_allow, rows[r].c->false_deny, rows[r].c->clients_hit);
    printf("(out of %" PRId64 " decisions; false-allow = the first allowed, the reference denied)\n", N);
}

static void print_own(const study *st) {
    int64_t N = st->requests, limit = st->limit;
    const own *s = &st->s_own, *f = &st->f_own, *s6 = &st->s6_own, *s60 = &st->s60_own;
    printf("on its own history (the exact rule applied to the requests the counter itself admitted):\n");
    printf("  SLIDING: %" PRId64 " false allows, %" PRId64 " false denies (%.4f%% of decisions); at most %" PRId64
           " admitted in a W window (%.2f x L)\n",
           s->false_allow, s->false_deny, pct(s->false_allow + s->false_deny, N), s->max_in_window,
           (double)s->max_in_window / (double)limit);
    printf("  FIXED:   %" PRId64 " false allows, %" PRId64 " false denies (%.4f%% of decisions); at most %" PRId64
           " admitted in a W window (%.2f x L)\n",
           f->false_allow, f->false_deny, pct(f->false_allow + f->false_deny, N), f->max_in_window,
           (double)f->max_in_window / (double)limit);
    printf("  SUBWINDOWS 6: %" PRId64 " false allows, %" PRId64 " false denies; at most %" PRId64
           " admitted in a W window%s\n",
           s6->false_allow, s6->false_deny, s6->max_in_window, st->has6 ? "" : " (skipped: W is no multiple of 6)");
    printf("  SUBWINDOWS 60: %" PRId64 " false allows, %" PRId64 " false denies; at most %" PRId64
           " admitted in a W window%s\n",
           s60->false_allow, s60->false_deny, s60->max_in_window, st->has60 ? "" : " (skipped: W is no multiple of 60)");
}

/* Markdown rows for scripts/bench/sliding-accuracy.sh. */
static void print_markdown(const study *st) {
    int64_t N = st->requests, limit = st->limit, window = st->window;
    const cmp *s_ex = &st->s_ex, *f_ex = &st->f_ex, *s_at = &st->s_at, *f_at = &st->f_at, *ex_at = &st->ex_at;
    const own *s_own = &st->s_own, *f_own = &st->f_own;
    printf("md-exact: | %" PRId64 " / %" PRId64 " ms | %.2f%% | %" PRId64 " (%.1f%% of requests) | %" PRId64 " (%.4f%%) | %" PRId64 " | %" PRId64
           " | %" PRId64 " (%.4f%%) | %" PRId64 " | %" PRId64 " |\n",
           limit, window, pct(st->exact_denied, N), st->clients_limited, pct(st->limited_requests, N), s_ex->differ,
           pct(s_ex->differ, N), s_ex->false_allow, s_ex->false_deny, f_ex->differ, pct(f_ex->differ, N),
           f_ex->false_allow, f_ex->false_deny);
    printf("md-attempts: | %" PRId64 " / %" PRId64 " ms | %.2f%% | %" PRId64 " (%.4f%%) | %" PRId64 " | %" PRId64
           " | %" PRId64 " (%.4f%%) | %" PRId64 " (%.4f%%) |\n",
           limit, window, pct(st->attempts_denied, N), s_at->differ, pct(s_at->differ, N), s_at->false_allow,
           s_at->false_deny, f_at->differ, pct(f_at->differ, N), ex_at->differ, pct(ex_at->differ, N));
    printf("md-own: | %" PRId64 " / %" PRId64 " ms | %" PRId64 " (%.4f%%) | %" PRId64 " (%.4f%%) | %" PRId64
           " (%.2f x L) | %" PRId64 " (%.4f%%) | %" PRId64 " | %" PRId64 " (%.2f x L) |\n",
           limit, window, s_own->false_allow, pct(s_own->false_allow, N), s_own->false_deny,
           pct(s_own->false_deny, N), s_own->max_in_window,
           (double)s_own->max_in_window / (double)limit, f_own->false_allow, pct(f_own->false_allow, N),
           f_own->false_deny, f_own->max_in_window, (double)f_own->max_in_window / (double)limit);
}

/* Every counter against the exact log, side by side with the state a key keeps (bytes): FIXED and
 * SLIDING 16, SUBWINDOWS n 8 * (2 + n), the exact log 8 per admitted request in the window (up to L);
 * then the plot's line. */
static void print_modes(const study *st) {
    int64_t N = st->requests, limit = st->limit, window = st->window;
    const cmp *cols[4] = {&st->f_ex, &st->s_ex, &st->s6_ex, &st->s60_ex};
    const own *owns[4] = {&st->f_own, &st->s_own, &st->s6_own, &st->s60_own};
    const int have[4] = {1, 1, st->has6, st->has60};
    printf("md-sub: | %" PRId64 " / %" PRId64 " ms |", limit, window);
    for (int k = 0; k < 4; k++) {
        if (!have[k]) {
            printf(" n/a |");
            continue;
        }
        printf(" %.3f%% (%" PRId64 " / %" PRId64 "), max %.2f x L |", pct(cols[k]->differ, N), cols[k]->false_allow,
               cols[k]->false_deny, (double)owns[k]->max_in_window / (double)limit);
    }
    printf(" 0 (the reference), max 1.00 x L |\n");
    printf("dat: %" PRId64 "/%" PRId64 "ms", limit, window);
    for (int k = 0; k < 4; k++) printf(" %.4f", have[k] ? pct(cols[k]->differ, N) : -1.0);
    printf("\n");
}

void study_print(const study *st) {
    print_summary(st);
    print_differences(st);
    print_own(st);
    printf("self-checks: passed\n");
    print_markdown(st);
    print_modes(st);
}
