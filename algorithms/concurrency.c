/* concurrency.c -- the decision of a concurrency limit over a key's leases (concurrency.h says the idea).
 *
 * The leases are sorted by end, soonest first, so with k = the leases ended at now (a prefix):
 *   held      = the units of leases[k..n): what is in use now;
 *   admitted  iff held + cost <= limit (a lease named by the request's ID, unexpired, is renewed instead:
 *             it is already counted, so a retried acquire never holds two slots);
 *   retry     = denied, cost <= limit: the end of the first lease (from k on) at which the units freed
 *             reach held + cost - limit. That many units do end by then, and no fewer: an earlier instant
 *             frees less. It assumes nothing is released, which can only make the wait shorter;
 *   reset     = the last end after the call (the key's expiry), or 0 when no lease is left.
 * Units are at most RL_LEASE_MAX_LIMIT per lease and a key holds at most RL_LEASE_MAX_LIMIT leases that
 * count (the module stores no more), so every sum fits in 64 bits by far; times are µs below RL_MAX_TIME_US
 * plus RL_MAX_PERIOD_MS ms. */
#include "concurrency.h"

#include <string.h>

int rl_lease_expired(const rl_lease *leases, int n, int64_t now_us) {
    int k = 0;
    while (k < n && leases[k].end_us <= now_us) k++;
    return k;
}

int rl_lease_find(const rl_lease *leases, int n, int64_t now_us, const char *id, size_t id_len) {
    for (int i = n - 1; i >= 0 && leases[i].end_us > now_us; i--) /* the unexpired are a suffix */
        if (leases[i].id_len == id_len && memcmp(leases[i].id, id, id_len) == 0) return i;
    return -1;
}

int rl_lease_insert_at(const rl_lease *leases, int n, int64_t end_us) {
    int lo = 0, hi = n; /* the first index whose end is after end_us */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (leases[mid].end_us <= end_us) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* v in decimal at out, two digits a step; its length (at most 20). */
static size_t put_decimal(char *out, uint64_t v) {
    static const char pairs[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                   "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                   "8081828384858687888990919293949596979899";
    char digits[20];
    size_t at = sizeof digits;
    while (v >= 100) {
        unsigned pair = (unsigned)(v % 100) * 2;
        v /= 100;
        digits[--at] = pairs[pair + 1];
        digits[--at] = pairs[pair];
    }
    if (v >= 10) {
        digits[--at] = pairs[v * 2 + 1];
        digits[--at] = pairs[v * 2];
    } else {
        digits[--at] = (char)('0' + v);
    }
    memcpy(out, digits + at, sizeof digits - at);
    return sizeof digits - at;
}

/* v in hexadecimal (lower case, no leading zeros) at out; its length (at most 16). */
static size_t put_hex(char *out, uint64_t v) {
    char digits[16];
    size_t at = sizeof digits;
    do {
        digits[--at] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v);
    memcpy(out, digits + at, sizeof digits - at);
    return sizeof digits - at;
}

/* Written out rather than with snprintf, which cost a seventh of an acquire's instructions. */
size_t rl_lease_make_id(char out[RL_LEASE_ID_MAX], int64_t now_us, uint64_t number) {
    size_t len = put_decimal(out, (uint64_t)(now_us < 0 ? 0 : now_us)); /* the clock is never below 0 */
    out[len++] = '-';
    return len + put_hex(out + len, number); /* at most 20 + 1 + 16 characters */
}

/* The end of the first lease from `from` on at which `need` units have ended, relative to now. */
static int64_t retry_us(const rl_lease *leases, int from, int n, int64_t need, int64_t now_us) {
    int64_t freed = 0;
    for (int i = from; i < n; i++) {
        freed += leases[i].units;
        if (freed >= need) return leases[i].end_us - now_us;
    }
    return -1; /* not reached: need <= held */
}

void rl_lease_decide(const rl_request *req, const rl_lease *leases, int n, const char *id, size_t id_len,
                     uint64_t next_id, rl_lease_plan *plan, rl_reply *reply) {
    const int64_t limit = req->params[0], now = req->now_us, end = now + req->params[1] * 1000, cost = req->cost;
    int k = rl_lease_expired(leases, n, now);
    int64_t held = 0;
    for (int i = k; i < n; i++) held += leases[i].units;
    int64_t last_end = n > k ? leases[n - 1].end_us : now; /* the last lease's end, now when none counts */

    *plan = (rl_lease_plan){.action = RL_LEASE_KEEP, .expired = k, .found = -1};
    *reply = (rl_reply){.limit = limit, .retry_after_ms = -1};
    int found = id && cost > 0 ? rl_lease_find(leases, n, now, id, id_len) : -1;
    int64_t retry = -1;
    if (cost == 0) { /* a look: takes nothing */
        reply->allowed = 1;
    } else if (found >= 0) { /* renewed: already counted */
        reply->allowed = 1;
        plan->action = RL_LEASE_RENEW;
        plan->found = found;
        int64_t others_end = found == n - 1 ? (n - 1 > k ? leases[n - 2].end_us : now) : last_end;
        last_end = others_end > end ? others_end : end;
    } else if (cost > limit) { /* can never fit: retry stays -1 */
    } else if (held + cost <= limit) {
        reply->allowed = 1;
        reply->granted = cost;
        plan->action = RL_LEASE_ADD;
        plan->units = cost;
        held += cost;
        if (end > last_end) last_end = end;
    } else {
        retry = retry_us(leases, k, n, held + cost - limit, now);
    }
    if (plan->action != RL_LEASE_KEEP) {
        plan->end_us = end;
        if (plan->action == RL_LEASE_RENEW) {
            plan->id_len = leases[found].id_len;
            memcpy(plan->id, leases[found].id, plan->id_len);
        } else if (id) {
            plan->id_len = (uint8_t)id_len;
            memcpy(plan->id, id, id_len);
        } else {
            plan->made = 1;
            plan->id_len = (uint8_t)rl_lease_make_id(plan->id, now, next_id);
        }
    }
    reply->remaining = held < limit ? limit - held : 0;
    rl_reply_times(reply, retry, last_end - now);
}

int rl_lease_valid(const rl_lease *leases, long long n) {
    const int64_t max_end = RL_MAX_TIME_US + RL_MAX_PERIOD_MS * 1000;
    if (n < 0 || n > RL_LEASE_MAX_LIMIT) return 0;
    for (long long i = 0; i < n; i++) {
        const rl_lease *l = &leases[i];
        if (l->end_us < 1 || l->end_us > max_end || l->acquired_us < 0 || l->acquired_us > l->end_us) return 0;
        if (l->units < 1 || l->units > RL_LEASE_MAX_LIMIT || l->id_len < 1 || l->id_len > RL_LEASE_ID_MAX) return 0;
        if (i > 0 && leases[i - 1].end_us > l->end_us) return 0;
    }
    return 1;
}
