/* concurrency.h -- concurrency limits (RL.ACQUIRE key limit lease_ms [COST n] [ID lease_id] ...): how many
 * units may be in use at once, held by leases that end when released, renewed or expired.
 *
 * A rate limit says how often; this one says how many at once. Each admitted request takes a lease of
 * `cost` units that ends at now + lease_ms unless it is released or renewed first. A request is admitted
 * iff the units of the unexpired leases plus its cost fit in the limit. A lease that is never released (its
 * client crashed) frees its units when it expires, and nothing has to sweep for that: every decision
 * counts only the leases whose end is after now. A lease's end is an absolute time, so a replica promoted
 * after a failover holds the same leases ending at the same instants.
 *
 * The module (module/store_lease.c) keeps a key's leases in an array sorted by end, soonest first, so
 * that the expired leases are a prefix (dropped by the next write), the units freed as time passes are a
 * walk from the front, and a new lease with the usual constant lease_ms goes at the back. This file only
 * decides: it reads the array and answers a plan (what to add, renew, drop) and the common reply; it
 * allocates nothing and writes nothing.
 *
 * Request: params[0] = limit (1..RL_LEASE_MAX_LIMIT), params[1] = lease_ms (1..RL_MAX_PERIOD_MS), cost
 * (1..RL_LEASE_MAX_LIMIT from the parser; 0 from RL.ALL's description of an admitting clause, or its
 * COST 0: a look that takes nothing), now_us, and an optional lease id. */
#ifndef RL_CONCURRENCY_H
#define RL_CONCURRENCY_H

#include <stddef.h>
#include <stdint.h>

#include "rl_common.h"

/* The largest limit and COST. A key holds at most `limit` leases (each holds at least one unit), and every
 * write of a key stores and replicates its leases whole, so the bound keeps one key's value under a MB. */
#define RL_LEASE_MAX_LIMIT 10000LL
/* A lease id: 1 to 64 bytes, any bytes. */
#define RL_LEASE_ID_MAX 64

/* The bytes of an id a lease holds in itself: a made id has at most 16, and most ids people choose are short.
 * A longer id lives in an allocation of its own that the lease points to (the storage makes and frees it:
 * this file only reads ids), so that a lease takes 48 bytes, not 64 bytes of room for every id. */
#define RL_LEASE_ID_INLINE 24

/* One lease: `units` held until end_us (absolute µs, module clock) unless released or renewed. acquired_us
 * is when it was first acquired (RL.LEASES lists oldest first; a renewal keeps it). Its id is id_len bytes
 * (1 to RL_LEASE_ID_MAX), read with rl_lease_id. */
typedef struct rl_lease {
    int64_t end_us;
    int64_t acquired_us;
    int32_t units;
    uint8_t id_len;
    union {
        char bytes[RL_LEASE_ID_INLINE]; /* id_len <= RL_LEASE_ID_INLINE */
        char *heap;                     /* a longer id */
    } id;
} rl_lease;

static inline const char *rl_lease_id(const rl_lease *lease) {
    return lease->id_len <= RL_LEASE_ID_INLINE ? lease->id.bytes : lease->id.heap;
}

/* What a decision asks the storage to write: nothing, a new lease, or the renewal of a held one (the lease
 * with the request's id, which keeps its units). Either write also drops the `expired` leases at the
 * front of the array; a call that writes nothing leaves them (they count for nothing, and the key's expiry
 * or the next write removes them). */
typedef enum { RL_LEASE_KEEP, RL_LEASE_ADD, RL_LEASE_RENEW } rl_lease_action;

typedef struct rl_lease_plan {
    rl_lease_action action;
    int expired;      /* leases at the front whose end is at or before now */
    int found;        /* RENEW: the index of the lease renewed; else -1 */
    int64_t end_us;   /* ADD, RENEW: the lease's new end */
    int64_t units;    /* ADD: the new lease's units (the cost) */
    int made;         /* ADD without ID: the id was made from next_id (the module's counter then moves on) */
    uint8_t id_len;   /* ADD, RENEW: the lease's id (given, or generated for ADD without ID) */
    char id[RL_LEASE_ID_MAX];
} rl_lease_plan;

/* Decide req over leases[0..n) (sorted by end_us, soonest first), with id[0..id_len) when the request names
 * its lease (RL_F_ID), else id NULL; a lease taken without an id gets one made from next_id (see
 * rl_lease_make_id). Fills
 * *plan and *reply: allowed, limit, remaining (units free after the call), retry_after_ms (denied: when
 * enough leases will have expired for this request to fit, if none is released; -1 when admitted or when
 * the cost is above the limit), reset_after_ms and reset_after_us (until the last lease ends, after the
 * call), wait_ms 0, granted (the cost taken: 0 for a renewal or a denial). */
void rl_lease_decide(const rl_request *req, const rl_lease *leases, int n, const char *id, size_t id_len,
                     uint64_t next_id, rl_lease_plan *plan, rl_reply *reply);

/* The index of the unexpired lease (end_us > now_us) named id in leases[0..n), or -1. */
int rl_lease_find(const rl_lease *leases, int n, int64_t now_us, const char *id, size_t id_len);

/* How many leases at the front of leases[0..n) have ended at now_us. */
int rl_lease_expired(const rl_lease *leases, int n, int64_t now_us);

/* Where a lease ending at end_us goes in leases[0..n) sorted by end: after every lease ending at or before
 * it (so leases of one end stay in the order they were written). */
int rl_lease_insert_at(const rl_lease *leases, int n, int64_t end_us);

/* The id made for a lease taken without ID: the module's count of made ids (module/store_lease.c) in hex,
 * in out; its length. The count is the server's, never a key's: a key is deleted with its last lease, and one
 * made again (a pipeline that releases the last lease and acquires again) must not hand out an id that a
 * client still holding the old one could release. It starts at a random number when the module loads, so
 * that a replica promoted at a failover does not make the ids its old primary made. */
size_t rl_lease_make_id(char out[RL_LEASE_ID_MAX], uint64_t number);

/* 1 when leases[0..n) could have been written by the module (an RDB, a RESTORE payload or an
 * RL.SETSTATE may be crafted): n within bounds, sorted by end, every field in its range. Ids need not be
 * distinct (a duplicate only makes one id name two leases, released one at a time). */
int rl_lease_valid(const rl_lease *leases, long long n);

#endif
