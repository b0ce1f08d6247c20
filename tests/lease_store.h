/* lease_store.h -- a concurrency limit's key as the tests keep it: the leases in an array sorted by end,
 * each decision's plan applied as module/lease_type.c applies it (drop the ended leases at the front, renew
 * the named lease or insert the new one at its place by end), and releases and renewals as module/leases.c
 * makes them. The unit tests and the fuzzer drive algorithms/concurrency.c through it. */
#ifndef RL_TEST_LEASE_STORE_H
#define RL_TEST_LEASE_STORE_H

#include <stdlib.h>
#include <string.h>

#include "../algorithms/concurrency.h"

#define LEASE_STORE_MAX 4096
typedef struct lease_store {
    rl_lease v[LEASE_STORE_MAX];
    int n;
    uint64_t next_id; /* the module's counter of made ids (module/store_lease.c); start it at 1 */
} lease_store;

/* A lease's id, as module/lease_type.c keeps it: in the lease, or in an allocation of its own when long. */
static inline void lease_store_id_set(rl_lease *l, const char *id, size_t len) {
    l->id_len = (uint8_t)len;
    if (len <= RL_LEASE_ID_INLINE) {
        memcpy(l->id.bytes, id, len);
    } else {
        l->id.heap = malloc(len);
        if (!l->id.heap) abort();
        memcpy(l->id.heap, id, len);
    }
}

static inline void lease_store_drop(lease_store *s, int at, int count) {
    for (int i = at; i < at + count; i++)
        if (s->v[i].id_len > RL_LEASE_ID_INLINE) free(s->v[i].id.heap);
    memmove(&s->v[at], &s->v[at + count], (size_t)(s->n - at - count) * sizeof s->v[0]);
    s->n -= count;
}

static inline void lease_store_insert(lease_store *s, const rl_lease *l) {
    int at = rl_lease_insert_at(s->v, s->n, l->end_us);
    memmove(&s->v[at + 1], &s->v[at], (size_t)(s->n - at) * sizeof s->v[0]);
    s->v[at] = *l;
    s->n++;
}

static inline void lease_store_apply(lease_store *s, const rl_lease_plan *plan, int64_t now) {
    if (plan->action == RL_LEASE_KEEP) return; /* nothing written */
    lease_store_drop(s, 0, plan->expired);
    rl_lease l = {.end_us = plan->end_us, .acquired_us = now, .units = (int32_t)plan->units};
    if (plan->action == RL_LEASE_RENEW) {
        int at = plan->found - plan->expired;
        l = s->v[at]; /* moved, its id with it */
        l.end_us = plan->end_us;
        memmove(&s->v[at], &s->v[at + 1], (size_t)(s->n - at - 1) * sizeof s->v[0]);
        s->n--;
    } else {
        lease_store_id_set(&l, plan->id, plan->id_len);
    }
    lease_store_insert(s, &l);
}

/* RL.ACQUIRE: decide, apply; the plan goes to *plan when plan is not NULL. */
static inline rl_reply lease_store_acquire(lease_store *s, int64_t limit, int64_t lease_ms, int64_t cost, const char *id,
                                           size_t id_len, int64_t now, rl_lease_plan *plan) {
    rl_request req = {.params = {limit, lease_ms}, .cost = cost, .now_us = now};
    rl_reply r;
    rl_lease_plan local;
    rl_lease_plan *p = plan ? plan : &local;
    rl_lease_decide(&req, s->v, s->n, id, id_len, s->next_id, p, &r);
    s->next_id += p->made;
    lease_store_apply(s, p, now);
    return r;
}

/* Forget every lease (their ids freed). */
static inline void lease_store_clear(lease_store *s) { lease_store_drop(s, 0, s->n); }

/* dst (cleared first) as a copy of src, with copies of its long ids. */
static inline void lease_store_copy(lease_store *dst, const lease_store *src) {
    lease_store_clear(dst);
    dst->n = src->n;
    dst->next_id = src->next_id;
    for (int i = 0; i < src->n; i++) {
        dst->v[i] = src->v[i];
        lease_store_id_set(&dst->v[i], rl_lease_id(&src->v[i]), src->v[i].id_len);
    }
}

/* RL.RELEASE: 1, or 0 when no unexpired lease has the id. */
static inline int lease_store_release(lease_store *s, const char *id, size_t id_len, int64_t now) {
    int i = rl_lease_find(s->v, s->n, now, id, id_len);
    if (i < 0) return 0;
    int k = rl_lease_expired(s->v, s->n, now);
    lease_store_drop(s, i, 1);
    lease_store_drop(s, 0, k);
    return 1;
}

/* RL.RENEW: 1, or 0 when no unexpired lease has the id. */
static inline int lease_store_renew(lease_store *s, const char *id, size_t id_len, int64_t lease_ms, int64_t now) {
    int i = rl_lease_find(s->v, s->n, now, id, id_len);
    if (i < 0) return 0;
    rl_lease_plan plan = {.action = RL_LEASE_RENEW, .expired = rl_lease_expired(s->v, s->n, now), .found = i,
                          .end_us = now + lease_ms * 1000};
    lease_store_apply(s, &plan, now);
    return 1;
}

#endif
