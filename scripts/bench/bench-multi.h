/* bench-multi.h -- what the parts of bench-multi share (the load generator: see bench-multi.c for what it
 * sends and prints). One thread drives every connection, so the run's state is global; each part owns
 * its piece of it:
 *   bench-multi.c            the options, the connections and the loop that writes pipelines and reads
 *                            their replies, as poll(2) says they are ready;
 *   bench-multi-requests.c   the workload: what a request is (a template command, or ClassDojo's
 *                            MULTI/EXEC), the key it goes to, and the writing of one pipeline;
 *   bench-multi-replies.c    the replies: errors, decisions, each request's latency, the result line. */
#ifndef BENCH_MULTI_H
#define BENCH_MULTI_H

#include <hiredis/hiredis.h>
#include <stddef.h>
#include <stdint.h>

#define MAX_PIPELINE 1024
#define MAX_ARGS 64
#define MAX_CMDS 8
#define KEY_DIGITS 12
#define RAND_TOKEN "__rand_int__"
#define NOW_TOKEN "__now_us__"
#define MAX_DECISIONS 4096

typedef enum { WL_TEMPLATE, WL_CLASSDOJO, WL_LEASE } workload_kind;

#define LEASE_ID_MAX 64

/* The lease workload's state on one connection: a batch of requests, each a key and where it stands (to
 * acquire, acquired with this id: to release, or done), and which request each entry of the pipeline in
 * flight is for. */
typedef enum { LEASE_TO_ACQUIRE, LEASE_TO_RELEASE, LEASE_DONE } lease_step;
typedef struct lease_batch {
    int n; /* requests in the batch */
    lease_step step[MAX_PIPELINE];
    char key[MAX_PIPELINE][KEY_DIGITS + 1];
    char id[MAX_PIPELINE][LEASE_ID_MAX + 1];
    int sent[MAX_PIPELINE]; /* the request of each command of the pipeline in flight */
} lease_batch;

/* A template command: its arguments, "__rand_int__" and "__now_us__" still in them. */
typedef struct tmpl_cmd {
    int argc;
    char *argv[MAX_ARGS];
} tmpl_cmd;

typedef struct workload {
    workload_kind kind;
    int ncmds; /* replies per request */
    tmpl_cmd cmds[MAX_CMDS];
    /* classdojo, lease */
    const char *prefix;
    long long limit, window_ms; /* lease: window_ms is lease_ms */
} workload;

/* One connection and the pipeline it has in flight. */
typedef struct conn {
    redisContext *ctx;
    int nreq;           /* requests in the current pipeline */
    int next_req;       /* the request whose replies are being read */
    int replies_left;   /* replies still expected for next_req */
    int failed_req;     /* next_req got an error reply */
    uint64_t start_ns;  /* when the pipeline was written */
    int want_write;
    lease_batch *lease; /* the lease workload's, else NULL */
} conn;

typedef struct options {
    const char *host;
    int port, clients, pipeline;
    long long requests, keyspace, fill;
    int check;
    const char *name;
    uint64_t seed;
} options;

/* bench-multi.c */
extern options opt;
void die(const char *msg);
void usage(void);
long long num_arg(const char *s, long long min);
uint64_t now_ns(void);

/* bench-multi-requests.c */
extern workload wl;
extern long long issued;
void rng_seed(uint64_t seed);
void parse_workload(int argc, char **argv);
int start_pipeline(conn *cn);

/* bench-multi-replies.c */
extern long long completed, errors_n;
extern uint32_t *latency_us; /* one per completed request */
void on_reply(conn *cn, redisReply *r);
void print_result(double secs);

#endif
