/* clients.c -- a request in flight, and threads that loop on one command and count the answers: see clients.h. */
#include "clients.h"

#include <hiredis/hiredis.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LOAD_MAX 64
#define REPLY_TIMEOUT_S 15

typedef struct client {
    load *l;
    int number;
    pthread_t thread;
} client;

struct load {
    volatile int *port;
    char line[256];
    int n;
    volatile int stop;
    pthread_mutex_t lock;
    load_counts counts;
    client clients[LOAD_MAX];
};

/* --- one request in flight --------------------------------------------------------------------------- */

/* Send line on c, not reading the reply. */
static void send_line(redisContext *c, const char *line) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", line);
    const char *argv[32];
    size_t lens[32];
    int n = split_words(buf, argv, lens, 32);
    redisAppendCommandArgv(c, n, argv, lens);
    int done = 0;
    while (!done)
        if (redisBufferWrite(c, &done) != REDIS_OK) break;
}

pending pending_send(const server *s, const char *line) {
    pending p = {server_connect(s), 0, 0, {0}};
    p.id = cmd_int(p.c, "CLIENT ID");
    send_line(p.c, line);
    return p;
}

redisContext *send_alone(const server *s, const char *line) {
    redisContext *c = server_connect(s);
    send_line(c, line);
    return c;
}

long long clients_waiting(redisContext *c) { return info_field(c, "ratelimit", "ratelimit_clients_waiting"); }

int wait_for_waiting(redisContext *c, long long n) {
    for (int i = 0; i < 500; i++) {
        if (clients_waiting(c) == n) return 1;
        sleep_ms(10);
    }
    fprintf(stderr, "     %lld clients waiting, expected %lld\n", clients_waiting(c), n);
    return 0;
}

int pending_poll(pending *p, int ms) {
    if (p->answered) return 1;
    struct pollfd fd = {p->c->fd, POLLIN, 0};
    if (poll(&fd, 1, ms) <= 0) return 0;
    redisReply *r = NULL;
    if (redisGetReply(p->c, (void **)&r) != REDIS_OK || !r) return 0;
    p->r = rl_of(r);
    if (!p->r.ok && r->type == REDIS_REPLY_ERROR) snprintf(p->r.error, sizeof p->r.error, "%s", r->str);
    freeReplyObject(r);
    p->answered = 1;
    return 1;
}

void pending_close(pending *p) {
    redisFree(p->c);
    p->c = NULL;
}

/* --- load ---------------------------------------------------------------------------------------------- */

static void nap_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static redisContext *connect_to(int port) {
    struct timeval tv = {2, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
    if (!c || c->err) {
        if (c) redisFree(c);
        return NULL;
    }
    struct timeval reply_tv = {REPLY_TIMEOUT_S, 0};
    redisSetTimeout(c, reply_tv);
    return c;
}

/* Count one request's outcome; returns 1 when the connection is to be dropped and made again. */
static int count(load *l, redisContext *c, redisReply *r) {
    pthread_mutex_lock(&l->lock);
    load_counts *k = &l->counts;
    int again = 1;
    k->sent++;
    if (!r) {
        if (c->err == REDIS_ERR_IO && strstr(c->errstr, "temporarily unavailable")) k->hung++; /* EAGAIN */
        else k->dropped++;
    } else if (r->type == REDIS_REPLY_ERROR) {
        k->errors++;
        if (!k->first_error[0]) snprintf(k->first_error, sizeof k->first_error, "%s", r->str);
    } else {
        rl_result res = rl_of(r);
        if (res.ok && res.allowed) k->admitted++;
        else if (res.ok) k->denied++;
        else k->errors++;
        again = !res.ok;
    }
    pthread_mutex_unlock(&l->lock);
    return again;
}

static void *run(void *arg) {
    client *me = arg;
    load *l = me->l;
    char line[256];
    snprintf(line, sizeof line, l->line, me->number);
    const char *argv[32];
    size_t lens[32];
    int argc = split_words(line, argv, lens, 32);
    redisContext *c = NULL;
    while (!l->stop) {
        if (!c && !(c = connect_to(*l->port))) {
            nap_ms(10);
            continue;
        }
        redisReply *r = redisCommandArgv(c, argc, argv, lens);
        if (count(l, c, r)) {
            redisFree(c);
            c = NULL;
            nap_ms(10);
        }
        if (r) freeReplyObject(r);
    }
    if (c) redisFree(c);
    return NULL;
}

load *load_start(volatile int *port, int n, const char *line) {
    load *l = calloc(1, sizeof *l);
    l->port = port;
    l->n = n < LOAD_MAX ? n : LOAD_MAX;
    snprintf(l->line, sizeof l->line, "%s", line);
    pthread_mutex_init(&l->lock, NULL);
    for (int i = 0; i < l->n; i++) {
        l->clients[i] = (client){l, i, 0};
        pthread_create(&l->clients[i].thread, NULL, run, &l->clients[i]);
    }
    return l;
}

load_counts load_read(load *l) {
    pthread_mutex_lock(&l->lock);
    load_counts k = l->counts;
    pthread_mutex_unlock(&l->lock);
    return k;
}

load_counts load_stop(load *l) {
    l->stop = 1;
    for (int i = 0; i < l->n; i++) pthread_join(l->clients[i].thread, NULL);
    load_counts k = l->counts;
    pthread_mutex_destroy(&l->lock);
    free(l);
    return k;
}
