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
        if (leases[i].id_len == id_len && memcmp(rl_lease_id(&leases[i]), id, id_len) == 0) return i;
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

/* "00" .. "ff": each byte's two hex digits. */
static const char hex_pairs[513] =
    "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f"
    "303132333435363738393a3b3c3d3e3f404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
    "606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f808182838485868788898a8b8c8d8e8f"
    "909192939495969798999a9b9c9d9e9fa0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
    "c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedfe0e1e2e3e4e5e6e7e8e9eaebecedeeef"
    "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

/* The id of the number-th lease the module made: the number in hexadecimal, lower case, without leading
 * zeros, written a byte (two digits) at a time rather than with snprintf, which cost a seventh of an
 * acquire's instructions. */
size_t rl_lease_make_id(char out[RL_LEASE_ID_MAX], uint64_t number) {
    int shift = 56;
    while (shift > 0 && (number >> shift) == 0) shift -= 8; /* the first byte that is not 0 */
    unsigned first = (unsigned)(number >> shift) & 255;
    size_t len = 0;
    if (first >= 16) out[len++] = hex_pairs[2 * first]; /* "a", not "0a" */
    out[len++] = hex_pairs[2 * first + 1];
    for (shift -= 8; shift >= 0; shift -= 8, len += 2) memcpy(out + len, hex_pairs + 2 * ((number >> shift) & 255), 2);
    return len; /* 1 to 16 characters */
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
            memcpy(plan->id, rl_lease_id(&leases[found]), plan->id_len);
        } else if (id) {
            plan->id_len = (uint8_t)id_len;
            memcpy(plan->id, id, id_len);
        } else {
            plan->made = 1;
            plan->id_len = (uint8_t)rl_lease_make_id(plan->id, next_id);
        }
    }
    reply->remaining = held < limit ? limit - held : 0;
    /* rl_reply_times, in 64 bits: both spans are below 2^46 ms in µs */
    reply->retry_after_ms = retry < 0 ? -1 : (retry + 999) / 1000;
    reply->reset_after_us = last_end - now;
    reply->reset_after_ms = (reply->reset_after_us + 999) / 1000;
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
