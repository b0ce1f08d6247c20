/* bench-strict.c -- what the strict failover recipe costs a client (issue 31's benchmark): a limiter call
 * followed by Redis's `WAIT 1 100`, so that its grant is on the replica before the client acts on it.
 * Run by scripts/bench/strict.sh against a primary with one replica that it starts.
 *
 *   bench-strict PORT ROW CONNECTIONS SECONDS
 *
 * ROW is what one call is:
 *   token             RL.TOKEN k<i> 1000000 1000000 1000 (capacity 10^6: always admitted, so it always writes)
 *   token-wait-2rt    the same, its reply read, then WAIT 1 100 as a second round trip (recipe a)
 *   token-wait-pipe   the same and WAIT 1 100 sent together, both replies read (recipe b: one round trip)
 *   incr              INCR k<i>, the baseline: Redis's cheapest write
 *   incr-wait-pipe    INCR k<i> and WAIT 1 100 sent together
 * CONNECTIONS threads, each with its own connection, make calls one after another on keys k0..k9999
 * (each thread its own walk over them) for half a second of warm-up, then SECONDS measured. A call's
 * latency runs from sending its first command to reading its last reply. The keyspace is flushed (and the
 * replica caught up) before the row, so INCR never meets a limiter key.
 *
 * Prints one line:
 *   ROW conns=N seconds=S calls=N calls_per_s=X p50_us=X p99_us=X denied=N wait_unacked=N acks=N
 * denied counts RL.TOKEN denials (0 expected: the bucket never runs dry), wait_unacked the WAITs that
 * answered 0 (the replica did not acknowledge within 100 ms: that call's grant was not known to be safe),
 * acks the replica's acknowledgements (REPLCONF calls, from the primary's INFO commandstats) over the
 * measured seconds: a WAIT makes the primary ask the replica for one, and one answer releases every WAIT
 * its offset covers, so calls / acks says how many WAITs shared an acknowledgement.
 * Any other reply (an error, a lost connection) fails the run. Nothing here judges the figures. */
#include <hiredis/hiredis.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KEYS 10000
#define WARMUP_NS 500000000LL

enum row_kind { ROW_TOKEN, ROW_TOKEN_WAIT_2RT, ROW_TOKEN_WAIT_PIPE, ROW_INCR, ROW_INCR_WAIT_PIPE };

static const char *const row_names[] = {"token", "token-wait-2rt", "token-wait-pipe", "incr", "incr-wait-pipe"};
#define NROWS ((int)(sizeof row_names / sizeof row_names[0]))

static int port;
static enum row_kind row;
static long long measure_from_ns, measure_until_ns; /* set before the threads start, read only after */

typedef struct worker {
    pthread_t thread;
    int index;
    long long *latencies_ns; /* of the measured calls */
    long long calls, capacity;
    long long denied, wait_unacked;
    const char *failure; /* what went wrong, NULL while all is well */
} worker;

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static redisContext *connect_or_die(void) {
    redisContext *c = redisConnect("127.0.0.1", port);
    if (!c || c->err) {
        fprintf(stderr, "bench-strict: cannot connect to 127.0.0.1:%d: %s\n", port, c ? c->errstr : "?");
        exit(1);
    }
    struct timeval timeout = {5, 0}; /* a hung server fails the run instead of hanging it */
    redisSetTimeout(c, timeout);
    return c;
}

/* Reads one reply; its integer through *value (RL.TOKEN: its first field, allowed). 0 on success. */
static int read_reply(redisContext *c, int limiter_reply, long long *value) {
    redisReply *r = NULL;
    if (redisGetReply(c, (void **)&r) != REDIS_OK || !r) return -1;
    int ok;
    if (limiter_reply) {
        ok = r->type == REDIS_REPLY_ARRAY && r->elements >= 6 && r->element[0]->type == REDIS_REPLY_INTEGER;
        if (ok) *value = r->element[0]->integer;
    } else {
        ok = r->type == REDIS_REPLY_INTEGER;
        if (ok) *value = r->integer;
    }
    if (!ok && r->type == REDIS_REPLY_ERROR) fprintf(stderr, "bench-strict: error reply: %s\n", r->str);
    freeReplyObject(r);
    return ok ? 0 : -1;
}

/* One call of the row on key k<key>: its commands sent, every reply read and counted. 0 on success. */
static int one_call(redisContext *c, worker *w, int key) {
    int limiter = row == ROW_TOKEN || row == ROW_TOKEN_WAIT_2RT || row == ROW_TOKEN_WAIT_PIPE;
    int waits = row != ROW_TOKEN && row != ROW_INCR;
    long long first = 0, acked = 0;
    if (limiter)
        redisAppendCommand(c, "RL.TOKEN k%d 1000000 1000000 1000", key);
    else
        redisAppendCommand(c, "INCR k%d", key);
    /* Recipe (b): WAIT goes out with the command, in the same write; redisGetReply flushes both. */
    if (waits && row != ROW_TOKEN_WAIT_2RT) redisAppendCommand(c, "WAIT 1 100");
    if (read_reply(c, limiter, &first) != 0) return -1;
    if (limiter && first != 1) w->denied++;
    if (!waits) return 0;
    /* Recipe (a): WAIT only once the reply is in, as a client that first looks at the decision. */
    if (row == ROW_TOKEN_WAIT_2RT) redisAppendCommand(c, "WAIT 1 100");
    if (read_reply(c, 0, &acked) != 0) return -1;
    if (acked < 1) w->wait_unacked++;
    return 0;
}

static void keep_latency(worker *w, long long ns) {
    if (w->calls == w->capacity) {
        w->capacity = w->capacity ? 2 * w->capacity : 4096;
        w->latencies_ns = realloc(w->latencies_ns, (size_t)w->capacity * sizeof *w->latencies_ns);
        if (!w->latencies_ns) {
            fprintf(stderr, "bench-strict: out of memory\n");
            exit(1);
        }
    }
    w->latencies_ns[w->calls++] = ns;
}

static void *run_worker(void *arg) {
    worker *w = arg;
    redisContext *c = connect_or_die();
    /* Each thread walks the keys from its own place, so that threads seldom write the same key at once. */
    int key = (w->index * (KEYS / 16)) % KEYS;
    for (;;) {
        long long start = now_ns();
        if (start >= measure_until_ns) break;
        if (one_call(c, w, key) != 0) {
            w->failure = c->err ? c->errstr : "unexpected reply";
            break;
        }
        long long end = now_ns();
        if (start >= measure_from_ns && end <= measure_until_ns) keep_latency(w, end - start);
        key = (key + 1) % KEYS;
    }
    if (w->failure) fprintf(stderr, "bench-strict: %s, thread %d: %s\n", row_names[row], w->index, w->failure);
    redisFree(c);
    return NULL;
}

/* An empty keyspace on the primary and its replica before the row (FLUSHALL is replicated; WAIT until
 * the replica has it, so that the row does not measure the replica's catching up). */
static int flush_both(void) {
    redisContext *c = connect_or_die();
    redisReply *flushed = redisCommand(c, "FLUSHALL");
    redisReply *acked = redisCommand(c, "WAIT 1 5000");
    int ok = flushed && flushed->type == REDIS_REPLY_STATUS && acked && acked->type == REDIS_REPLY_INTEGER &&
             acked->integer == 1;
    if (!ok) fprintf(stderr, "bench-strict: FLUSHALL did not reach the replica within 5 s\n");
    if (flushed) freeReplyObject(flushed);
    if (acked) freeReplyObject(acked);
    redisFree(c);
    return ok ? 0 : -1;
}

/* The REPLCONF calls the primary has served: the replica's acknowledgements (and its few other REPLCONFs
 * at sync, before any row). -1 if INFO does not say. */
static long long replconf_calls(redisContext *c) {
    redisReply *r = redisCommand(c, "INFO commandstats");
    const char *name = "cmdstat_replconf:calls=";
    const char *field = r && r->type == REDIS_REPLY_STRING ? strstr(r->str, name) : NULL;
    long long calls = field ? atoll(field + strlen(name)) : -1;
    if (r) freeReplyObject(r);
    return calls;
}

static void sleep_until_ns(long long when) {
    long long left = when - now_ns();
    if (left <= 0) return;
    struct timespec ts = {left / 1000000000LL, left % 1000000000LL};
    nanosleep(&ts, NULL);
}

static int compare_ll(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

/* The q-th quantile (0..1) of n sorted values, in µs. */
static double quantile_us(const long long *sorted, long long n, double q) {
    long long i = (long long)(q * (double)n);
    if (i >= n) i = n - 1;
    return n ? (double)sorted[i] / 1000.0 : -1;
}

static int report(worker *workers, int connections, int seconds, long long acks) {
    long long total = 0, denied = 0, unacked = 0, failed = 0;
    for (int i = 0; i < connections; i++) {
        total += workers[i].calls;
        denied += workers[i].denied;
        unacked += workers[i].wait_unacked;
        failed += workers[i].failure != NULL;
    }
    long long *all = malloc((size_t)(total ? total : 1) * sizeof *all), k = 0;
    for (int i = 0; i < connections; i++) {
        memcpy(all + k, workers[i].latencies_ns, (size_t)workers[i].calls * sizeof *all);
        k += workers[i].calls;
    }
    qsort(all, (size_t)total, sizeof *all, compare_ll);
    printf("%s conns=%d seconds=%d calls=%lld calls_per_s=%.0f p50_us=%.1f p99_us=%.1f denied=%lld wait_unacked=%lld "
           "acks=%lld\n",
           row_names[row], connections, seconds, total, (double)total / seconds, quantile_us(all, total, 0.50),
           quantile_us(all, total, 0.99), denied, unacked, acks);
    free(all);
    return failed || total == 0 ? 1 : 0;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: bench-strict PORT token|token-wait-2rt|token-wait-pipe|incr|incr-wait-pipe CONNECTIONS SECONDS\n");
        return 2;
    }
    port = atoi(argv[1]);
    int found = 0;
    for (int r = 0; r < NROWS; r++)
        if (strcmp(argv[2], row_names[r]) == 0) row = (enum row_kind)r, found = 1;
    int connections = atoi(argv[3]), seconds = atoi(argv[4]);
    if (!found || connections < 1 || seconds < 1) {
        fprintf(stderr, "bench-strict: bad ROW, CONNECTIONS or SECONDS: %s %s %s\n", argv[2], argv[3], argv[4]);
        return 2;
    }
    if (flush_both() != 0) return 1;
    worker *workers = calloc((size_t)connections, sizeof *workers);
    measure_from_ns = now_ns() + WARMUP_NS;
    measure_until_ns = measure_from_ns + seconds * 1000000000LL;
    for (int i = 0; i < connections; i++) {
        workers[i].index = i;
        pthread_create(&workers[i].thread, NULL, run_worker, &workers[i]);
    }
    /* The acknowledgements over the measured seconds only, read on a connection of its own. */
    redisContext *admin = connect_or_die();
    sleep_until_ns(measure_from_ns);
    long long acks_before = replconf_calls(admin);
    sleep_until_ns(measure_until_ns);
    long long acks_after = replconf_calls(admin);
    redisFree(admin);
    for (int i = 0; i < connections; i++) pthread_join(workers[i].thread, NULL);
    long long acks = acks_before >= 0 && acks_after >= 0 ? acks_after - acks_before : -1;
    int rc = report(workers, connections, seconds, acks);
    for (int i = 0; i < connections; i++) free(workers[i].latencies_ns);
    free(workers);
    return rc;
}
