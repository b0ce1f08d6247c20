/* lease_model.h -- a reference model of a concurrency limit's key, written from the rule alone and with no
 * code of algorithms/concurrency.c: an unordered list of leases, every answer found by brute force.
 *
 *   held      = the units of the leases ending after now;
 *   admitted  iff an unexpired lease has the request's id (renewed: it ends lease_ms from now, keeps its
 *             units) or held + cost <= limit (a new lease; without an id, the module's count of ids made,
 *             in hex);
 *   retry     = denied, cost <= limit: the first lease end, tried one by one, after which the request fits;
 *   reset     = the last end, or 0;
 *   list      = the unexpired leases by when they were acquired, then by end, then by when their end was
 *               last set (the module's order for leases of one instant).
 * The unit tests compare the algorithm with it step by step, and the integration tests a real server under
 * the test clock. */
#ifndef RL_TEST_LEASE_MODEL_H
#define RL_TEST_LEASE_MODEL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../algorithms/rl_common.h"

#define MODEL_MAX_LEASES 4096
#define MODEL_ID_MAX 64

typedef struct ref_lease {
    char id[MODEL_ID_MAX];
    size_t id_len;
    int64_t units, end_us, acquired_us;
    long stamp; /* when its end was last set */
} ref_lease;

typedef struct lease_model {
    ref_lease v[MODEL_MAX_LEASES];
    int n;
    uint64_t next_id;
    long stamps;
} lease_model;

static inline int64_t model_held_after(const lease_model *m, int64_t t) {
    int64_t held = 0;
    for (int i = 0; i < m->n; i++)
        if (m->v[i].end_us > t) held += m->v[i].units;
    return held;
}

static inline int model_find(const lease_model *m, int64_t now, const char *id, size_t len) {
    for (int i = 0; i < m->n; i++)
        if (m->v[i].end_us > now && m->v[i].id_len == len && memcmp(m->v[i].id, id, len) == 0) return i;
    return -1;
}

static inline int64_t model_ceil_ms(int64_t us) { return us <= 0 ? 0 : (us + 999) / 1000; }

/* Forget the leases that ended (they count for nothing), so the list stays short. */
static inline void model_compact(lease_model *m, int64_t now) {
    int kept = 0;
    for (int i = 0; i < m->n; i++)
        if (m->v[i].end_us > now) m->v[kept++] = m->v[i];
    m->n = kept;
}

/* RL.ACQUIRE: the reply (granted too), applied; the lease id it took or renewed in out_id (*out_len 0 when
 * denied). */
static inline rl_reply model_acquire(lease_model *m, int64_t limit, int64_t lease_ms, int64_t cost, const char *id,
                                     size_t id_len, int64_t now, char *out_id, size_t *out_len) {
    model_compact(m, now);
    rl_reply r = {.limit = limit, .retry_after_ms = -1};
    int64_t held = model_held_after(m, now), end = now + lease_ms * 1000;
    int found = id ? model_find(m, now, id, id_len) : -1;
    *out_len = 0;
    if (found >= 0) {
        r.allowed = 1;
        m->v[found].end_us = end;
        m->v[found].stamp = ++m->stamps;
        memcpy(out_id, m->v[found].id, *out_len = m->v[found].id_len);
    } else if (held + cost <= limit) {
        r.allowed = 1;
        r.granted = cost;
        held += cost;
        ref_lease *l = &m->v[m->n++];
        if (id) {
            l->id_len = id_len;
            memcpy(l->id, id, id_len);
        } else {
            l->id_len = (size_t)snprintf(l->id, sizeof l->id, "%llx", (unsigned long long)m->next_id);
            m->next_id += m->next_id != 0;
        }
        l->units = cost;
        l->end_us = end;
        l->acquired_us = now;
        l->stamp = ++m->stamps;
        memcpy(out_id, l->id, *out_len = l->id_len);
    } else if (cost <= limit) {
        int64_t best = INT64_MAX;
        for (int i = 0; i < m->n; i++) {
            int64_t t = m->v[i].end_us;
            if (t > now && t < best && model_held_after(m, t) + cost <= limit) best = t;
        }
        r.retry_after_ms = model_ceil_ms(best - now);
    }
    int64_t last = now;
    for (int i = 0; i < m->n; i++)
        if (m->v[i].end_us > last) last = m->v[i].end_us;
    r.remaining = held < limit ? limit - held : 0;
    r.reset_after_ms = model_ceil_ms(last - now);
    return r;
}

/* RL.RELEASE: 1, or 0 when no unexpired lease has the id. */
static inline int model_release(lease_model *m, const char *id, size_t id_len, int64_t now) {
    int i = model_find(m, now, id, id_len);
    if (i < 0) return 0;
    m->v[i] = m->v[--m->n];
    return 1;
}

/* RL.RENEW: 1, or 0 when no unexpired lease has the id. */
static inline int model_renew(lease_model *m, const char *id, size_t id_len, int64_t lease_ms, int64_t now) {
    int i = model_find(m, now, id, id_len);
    if (i < 0) return 0;
    m->v[i].end_us = now + lease_ms * 1000;
    m->v[i].stamp = ++m->stamps;
    return 1;
}

static int model_by_age(const void *a, const void *b) {
    const ref_lease *x = a, *y = b;
    if (x->acquired_us != y->acquired_us) return x->acquired_us < y->acquired_us ? -1 : 1;
    if (x->end_us != y->end_us) return x->end_us < y->end_us ? -1 : 1;
    return x->stamp < y->stamp ? -1 : x->stamp > y->stamp;
}

/* RL.LEASES as text: "id:units:ttl_ms id:units:ttl_ms ...", oldest first. */
static inline void model_list(lease_model *m, int64_t now, char *out, size_t n) {
    model_compact(m, now);
    qsort(m->v, (size_t)m->n, sizeof m->v[0], model_by_age);
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < m->n && used < n; i++)
        used += (size_t)snprintf(out + used, n - used, "%s%.*s:%lld:%lld", i ? " " : "", (int)m->v[i].id_len,
                                 m->v[i].id, (long long)m->v[i].units,
                                 (long long)model_ceil_ms(m->v[i].end_us - now));
}

#endif
