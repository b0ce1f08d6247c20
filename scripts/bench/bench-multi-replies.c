/* bench-multi-replies.c -- bench-multi's reading of replies (see bench-multi.c): each reply is checked for
 * an error (nested ones in EXEC's array too), an RL.* reply or a ClassDojo transaction counts as a
 * decision (allowed or blocked), and a request's latency is taken when its last reply is read, from
 * the moment its pipeline was written (the lease workload's, from its acquire's). At the end, the result line: rate, latency percentiles, counts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench-multi.h"

long long completed, errors_n;
uint32_t *latency_us;
static long long allowed_n, blocked_n;
static char decisions[MAX_DECISIONS]; /* with --check: A or B per request, in order */
static size_t ndecisions;

static int has_error(const redisReply *r) {
    if (r->type == REDIS_REPLY_ERROR) return 1;
    if (r->type == REDIS_REPLY_ARRAY)
        for (size_t i = 0; i < r->elements; i++)
            if (r->element[i] && has_error(r->element[i])) return 1;
    return 0;
}

static void note_decision(int allowed) {
    if (allowed)
        allowed_n++;
    else
        blocked_n++;
    if (opt.check && ndecisions + 1 < sizeof decisions) decisions[ndecisions++] = allowed ? 'A' : 'B';
}

/* Look at one reply of the request being read (index = which of its ncmds replies). */
static void inspect_reply(conn *cn, const redisReply *r, int index) {
    if (has_error(r)) {
        if (!cn->failed_req && errors_n < 5) fprintf(stderr, "bench-multi: error reply: %s\n",
                                                     r->type == REDIS_REPLY_ERROR ? r->str : "(in EXEC)");
        cn->failed_req = 1;
        return;
    }
    if (wl.kind == WL_CLASSDOJO) {
        if (index != wl.ncmds - 1) return; /* +OK, +QUEUED... */
        /* EXEC: [removed, added, [member, score, ...], expire]; the log includes this attempt. */
        if (r->type != REDIS_REPLY_ARRAY || r->elements != 4 || r->element[2]->type != REDIS_REPLY_ARRAY) {
            cn->failed_req = 1;
            return;
        }
        long long entries = (long long)r->element[2]->elements / 2;
        note_decision(entries <= wl.limit);
    } else if (index == 0 && r->type == REDIS_REPLY_ARRAY && r->elements == 6 &&
               r->element[0]->type == REDIS_REPLY_INTEGER) {
        note_decision(r->element[0]->integer == 1); /* an RL.* reply (or a baseline's) */
    }
}

static void complete_request(conn *cn) {
    uint64_t lat = (now_ns() - cn->start_ns) / 1000;
    latency_us[completed++] = lat > UINT32_MAX ? UINT32_MAX : (uint32_t)lat;
    if (cn->failed_req) errors_n++;
    cn->failed_req = 0;
}

/* The lease workload (bench-multi-requests.c): an acquire's reply keeps its lease id for the release, or
 * leaves the request to acquire again (denied: the pool was full); a release must answer 1 (its lease of
 * lease_ms still held) and ends the request, as does an error. */
static void on_lease_reply(conn *cn, const redisReply *r) {
    lease_batch *b = cn->lease;
    int i = b->sent[cn->next_req++];
    if (has_error(r)) {
        inspect_reply(cn, r, 0);
        b->step[i] = LEASE_DONE;
    } else if (b->step[i] == LEASE_TO_ACQUIRE) {
        const redisReply *id = r->type == REDIS_REPLY_ARRAY && r->elements == 7 ? r->element[6] : NULL;
        if (!id || r->element[0]->type != REDIS_REPLY_INTEGER || (id->type != REDIS_REPLY_STRING && id->type != REDIS_REPLY_NIL) ||
            (id->type == REDIS_REPLY_STRING && (id->len < 1 || id->len > LEASE_ID_MAX))) {
            cn->failed_req = 1;
            b->step[i] = LEASE_DONE;
        } else {
            note_decision(r->element[0]->integer == 1);
            if (id->type == REDIS_REPLY_STRING) {
                memcpy(b->id[i], id->str, id->len);
                b->id[i][id->len] = '\0';
                b->step[i] = LEASE_TO_RELEASE;
            }
        }
    } else {
        if (r->type != REDIS_REPLY_INTEGER || r->integer != 1) {
            if (errors_n < 5) fprintf(stderr, "bench-multi: RL.RELEASE of a held lease did not answer 1\n");
            cn->failed_req = 1;
        }
        b->step[i] = LEASE_DONE;
    }
    if (b->step[i] == LEASE_DONE) complete_request(cn);
}

/* One reply of cn's pipeline, read; the request is complete with its last. */
void on_reply(conn *cn, redisReply *r) {
    if (wl.kind == WL_LEASE) {
        on_lease_reply(cn, r);
        freeReplyObject(r);
        return;
    }
    inspect_reply(cn, r, wl.ncmds - cn->replies_left);
    freeReplyObject(r);
    if (--cn->replies_left > 0) return;
    complete_request(cn);
    cn->next_req++;
    cn->replies_left = wl.ncmds;
}

/* --- the result ------------------------------------------------------------------------------------- */

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static double percentile_ms(double p) {
    if (completed == 0) return 0;
    long long i = (long long)(p * (double)completed + 0.999999) - 1;
    if (i < 0) i = 0;
    if (i >= completed) i = completed - 1;
    return latency_us[i] / 1000.0;
}

/* The result line (and with --check the decisions), the run having taken secs. Sorts latency_us. */
void print_result(double secs) {
    double sum = 0;
    for (long long k = 0; k < completed; k++) sum += latency_us[k];
    qsort(latency_us, (size_t)completed, sizeof *latency_us, cmp_u32);
    printf("%s rps=%.2f avg_ms=%.3f p50_ms=%.3f p99_ms=%.3f max_ms=%.3f requests=%lld allowed=%lld blocked=%lld "
           "errors=%lld\n",
           opt.name, secs > 0 ? (double)completed / secs : 0, completed ? sum / (double)completed / 1000.0 : 0,
           percentile_ms(0.50), percentile_ms(0.99), percentile_ms(1.0), completed, allowed_n, blocked_n, errors_n);
    if (opt.check) printf("decisions %.*s\n", (int)ndecisions, decisions);
}
