/* sliding-accuracy-judge.c -- the bookkeeping of the sliding-accuracy study's comparisons (the types are
 * in sliding-accuracy.h): decisions that differ from a reference's, a counter judged on its own history,
 * the exact sliding window's deque of admitted times, and the self-checks' binary search. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "sliding-accuracy.h"

void cmp_add(cmp *c, int allowed, int ref_allowed, int *hit) {
    if (allowed == ref_allowed) return;
    c->differ++;
    if (allowed)
        c->false_allow++;
    else
        c->false_deny++;
    if (!*hit) {
        *hit = 1;
        c->clients_hit++;
    }
}

/* Entries in (now - W, now], dropping the older ones from the head. */
int64_t tlog_in_window(tlog *l, int64_t now, int64_t window) {
    while (l->lo < l->n && l->t[l->lo] <= now - window) l->lo++;
    return l->n - l->lo;
}

/* How many of t[0..n) (non-decreasing) are > x. */
int64_t count_above(const int64_t *t, int64_t n, int64_t x) {
    int64_t a = 0, b = n;
    while (a < b) {
        int64_t m = a + (b - a) / 2;
        if (t[m] <= x)
            a = m + 1;
        else
            b = m;
    }
    return n - a;
}

void own_add(own *o, tlog *l, int allowed, int64_t t, int64_t cost, int64_t limit, int64_t window) {
    int64_t k = tlog_in_window(l, t, window);
    if (!allowed) {
        if (k + cost <= limit) o->false_deny++;
        return;
    }
    if (k + cost > limit) o->false_allow++;
    l->t[l->n++] = t;
    if (k + cost > o->max_in_window) o->max_in_window = k + cost;
}

void fail(const char *what, int64_t client, int64_t t) {
    fprintf(stderr, "sliding-accuracy: self-check failed: %s (client %" PRId64 ", t %" PRId64 " ms)\n", what,
            client, t);
    exit(3);
}
