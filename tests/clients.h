/* clients.h -- clients a test keeps open beside its own connection: one request in flight whose reply is
 * read later (a waiter), and threads that keep a server busy while the test does something to it (a pause,
 * a failover), counting what came back so the test can say that every request got an answer.
 *
 * Load: each client loops on one command line (split on spaces, with "%d" standing for the client's number)
 * against the port *port holds (read again after every error, so the test can point the clients at a new
 * primary). A reply is an answer: the limiter's six fields, or an error (UNBLOCKED when the server became
 * a replica, READONLY, MOVED); after an error the client reconnects and waits 10 ms. A request whose
 * connection closed with no reply is "dropped"; one with no reply within 15 s is "hung". */
#ifndef RL_TEST_CLIENTS_H
#define RL_TEST_CLIENTS_H

#include "server.h"

/* One request sent on a connection of its own, its reply read later. */
typedef struct pending {
    redisContext *c;
    long long id; /* its CLIENT ID, for CLIENT UNBLOCK */
    int answered;
    rl_result r; /* the reply (r.ok = 0 and r.error for an error reply) */
} pending;

/* Send line (split on spaces) to s on a new connection. */
pending pending_send(const server *s, const char *line);
/* The same, returning only the connection: the caller reads the reply (redisGetReply) or closes it. */
redisContext *send_alone(const server *s, const char *line);
/* The clients the module counts as waiting now (INFO ratelimit's clients_waiting), and 1 once it counts n
 * (polled for up to 5 s; what it counted is printed if not). */
long long clients_waiting(redisContext *c);
int wait_for_waiting(redisContext *c, long long n);
/* Read p's reply if it arrives within ms; 1 once it has. */
int pending_poll(pending *p, int ms);
/* Close p's connection. */
void pending_close(pending *p);

typedef struct load_counts {
    long long sent, admitted, denied, errors, dropped, hung;
    char first_error[128]; /* the text of the first error reply, for the test's log */
} load_counts;

typedef struct load load;

/* Start n clients (at most 64) looping on line against the port *port holds. */
load *load_start(volatile int *port, int n, const char *line);
/* What came back so far (the clients go on). */
load_counts load_read(load *l);
/* Stop the clients (each finishes its request in flight), and free l; returns the final counts. */
load_counts load_stop(load *l);

#endif
