/* bench-wait.c -- client-side sleep-and-retry against server-side WAIT (issue 16's benchmark), and the CPU
 * that idle waiters cost. Run by scripts/bench/wait.sh against a redis-server it starts.
 *
 *   bench-wait PORT PID load retry|wait CLIENTS SECONDS
 *       CLIENTS threads, each with its own connection, ask RL.TOKEN for one limit of 100 per second
 *       (capacity 100, 100 per 1000 ms) for SECONDS. `retry`: a denied client sleeps retry_after_ms and
 *       asks again. `wait`: it asks with WAIT 15000 (and asks again after a timeout). After each admission
 *       a client starts its next request at once. Prints one line: requests sent, admitted per second,
 *       p50 and p99 of the delay from a request's first try to its admission, the server's CPU seconds.
 *   bench-wait PORT PID idle CLIENTS SECONDS
 *       The server's CPU over SECONDS with nobody connected, with CLIENTS connections blocked in Redis's own
 *       BLPOP (the baseline: what Redis itself spends on that many blocked clients), then with CLIENTS
 *       connections each waiting (WAIT 600000) on one key that will not fit for minutes.
 * The server's CPU is utime + stime of PID from /proc, before and after. */
#include <hiredis/hiredis.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int port;
static long long end_ms;
static int use_wait;

static long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static double server_cpu_s(int pid) {
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f || !fgets(buf, sizeof buf, f)) {
        if (f) fclose(f);
        return -1;
    }
    fclose(f);
    char *p = strrchr(buf, ')'); /* the fields after the command name */
    unsigned long utime = 0, stime = 0;
    /* state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime);
    return (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
}

static redisContext *connect_or_die(void) {
    redisContext *c = redisConnect("127.0.0.1", port);
    if (!c || c->err) {
        fprintf(stderr, "bench-wait: cannot connect: %s\n", c ? c->errstr : "?");
        exit(1);
    }
    return c;
}

typedef struct worker {
    pthread_t th;
    long long requests, admitted, timeouts;
    long long *delays;
    long long ndelays, cap;
} worker;

static void *run_worker(void *arg) {
    worker *w = arg;
    redisContext *c = connect_or_die();
    struct timeval tv = {20, 0};
    redisSetTimeout(c, tv);
    while (now_ms() < end_ms) {
        long long first = now_ms();
        for (;;) {
            redisReply *r = use_wait ? redisCommand(c, "RL.TOKEN bw:key 100 100 1000 WAIT 15000")
                                     : redisCommand(c, "RL.TOKEN bw:key 100 100 1000");
            w->requests++;
            if (!r || r->type != REDIS_REPLY_ARRAY || r->elements < 6) {
                if (r) freeReplyObject(r);
                goto done; /* the connection was closed at the end of the run */
            }
            long long allowed = r->element[0]->integer, retry = r->element[3]->integer;
            freeReplyObject(r);
            long long t = now_ms();
            if (allowed) {
                if (t <= end_ms) {
                    w->admitted++;
                    if (w->ndelays == w->cap) {
                        w->cap = w->cap ? 2 * w->cap : 64;
                        w->delays = realloc(w->delays, (size_t)w->cap * sizeof *w->delays);
                    }
                    w->delays[w->ndelays++] = t - first;
                }
                break;
            }
            if (t >= end_ms) goto done;
            if (use_wait) {
                w->timeouts++;
            } else {
                sleep_ms(retry);
            }
        }
    }
done:
    redisFree(c);
    return NULL;
}

static int cmp_ll(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

static int load(int pid, int clients, int seconds) {
    redisContext *admin = connect_or_die();
    freeReplyObject(redisCommand(admin, "DEL bw:key"));
    worker *ws = calloc((size_t)clients, sizeof *ws);
    double cpu0 = server_cpu_s(pid);
    long long start = now_ms();
    end_ms = start + seconds * 1000LL;
    for (int i = 0; i < clients; i++) pthread_create(&ws[i].th, NULL, run_worker, &ws[i]);
    while (now_ms() < end_ms) sleep_ms(50);
    double cpu1 = server_cpu_s(pid);
    /* Waiters still blocked at the end: end their connections. */
    freeReplyObject(redisCommand(admin, "CLIENT KILL TYPE normal SKIPME yes"));
    long long requests = 0, admitted = 0, timeouts = 0, n = 0, starved = 0;
    for (int i = 0; i < clients; i++) {
        pthread_join(ws[i].th, NULL);
        requests += ws[i].requests;
        admitted += ws[i].admitted;
        timeouts += ws[i].timeouts;
        n += ws[i].ndelays;
        starved += ws[i].admitted == 0;
    }
    long long *all = malloc((size_t)(n ? n : 1) * sizeof *all), k = 0;
    for (int i = 0; i < clients; i++) {
        memcpy(all + k, ws[i].delays, (size_t)ws[i].ndelays * sizeof *all);
        k += ws[i].ndelays;
        free(ws[i].delays);
    }
    qsort(all, (size_t)n, sizeof *all, cmp_ll);
    long long p50 = n ? all[n / 2] : -1, p99 = n ? all[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1] : -1;
    printf("%s clients=%d seconds=%d requests=%lld admitted_per_s=%.1f p50_ms=%lld p99_ms=%lld timeouts=%lld "
           "never_admitted=%lld server_cpu_s=%.2f\n",
           use_wait ? "wait" : "retry", clients, seconds, requests, (double)admitted / seconds, p50, p99, timeouts,
           starved, cpu1 - cpu0);
    free(all);
    free(ws);
    redisFree(admin);
    return 0;
}

/* Open n connections and send each one blocking command (not read). */
static redisContext **block_many(int n, const char *command) {
    redisContext **cs = calloc((size_t)n, sizeof *cs);
    for (int i = 0; i < n; i++) {
        cs[i] = connect_or_die();
        redisAppendCommand(cs[i], command);
        int done = 0;
        while (!done)
            if (redisBufferWrite(cs[i], &done) != REDIS_OK) break;
    }
    return cs;
}

static long long info_number(redisContext *admin, const char *section, const char *field) {
    redisReply *r = redisCommand(admin, "INFO %s", section);
    char *f = r && r->str ? strstr(r->str, field) : NULL;
    long long v = f ? atoll(f + strlen(field)) : -1;
    if (r) freeReplyObject(r);
    return v;
}

/* The server's CPU seconds over `seconds`, once `field` of INFO `section` reaches `until`. */
static double cpu_while(redisContext *admin, int pid, int seconds, const char *section, const char *field,
                        long long until, long long *seen) {
    for (int t = 0; t < 600 && (*seen = info_number(admin, section, field)) < until; t++) sleep_ms(100);
    double cpu0 = server_cpu_s(pid);
    sleep((unsigned)seconds);
    return server_cpu_s(pid) - cpu0;
}

static int idle(int pid, int clients, int seconds) {
    redisContext *admin = connect_or_die();
    freeReplyObject(redisCommand(admin, "DEL bw:idle bw:list"));
    /* The bucket empty for 100 s: every waiter fits within its 600 s timeout, none for minutes. */
    freeReplyObject(redisCommand(admin, "RL.TOKEN bw:idle 1 1 100000"));
    long long seen = 0, blpop_seen = 0, waiting = 0;
    double base = cpu_while(admin, pid, seconds, "clients", "connected_clients:", 0, &seen);
    /* Redis's own blocked clients, as a baseline: BLPOP on an empty list. */
    redisContext **cs = block_many(clients, "BLPOP bw:list 600");
    double blpop = cpu_while(admin, pid, seconds, "clients", "blocked_clients:", clients, &blpop_seen);
    for (int i = 0; i < clients; i++) redisFree(cs[i]);
    free(cs);
    sleep_ms(500);
    cs = block_many(clients, "RL.TOKEN bw:idle 1 1 100000 WAIT 600000");
    double with = cpu_while(admin, pid, seconds, "ratelimit", "ratelimit_clients_waiting:", clients, &waiting);
    printf("idle clients=%d waiting=%lld blpop_blocked=%lld seconds=%d server_cpu_s_without=%.3f "
           "server_cpu_s_blpop=%.3f server_cpu_s_with=%.3f\n",
           clients, waiting, blpop_seen, seconds, base, blpop, with);
    for (int i = 0; i < clients; i++) redisFree(cs[i]);
    free(cs);
    redisFree(admin);
    return waiting >= clients && blpop_seen >= clients ? 0 : 1;
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: bench-wait PORT PID load retry|wait CLIENTS SECONDS | PORT PID idle CLIENTS SECONDS\n");
        return 2;
    }
    port = atoi(argv[1]);
    int pid = atoi(argv[2]);
    if (strcmp(argv[3], "idle") == 0) return idle(pid, atoi(argv[4]), atoi(argv[5]));
    if (argc < 7) return 2;
    use_wait = strcmp(argv[4], "wait") == 0;
    return load(pid, atoi(argv[5]), atoi(argv[6]));
}
