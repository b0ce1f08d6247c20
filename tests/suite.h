/* suite.h -- the main() of an integration program whose tests all share one server: start a redis-server
 * with the module, connect, run the tests in order, stop the server, print the closing line.
 *
 * The program keeps that server and its connection in statics of its own (srv, c), which its tests use;
 * server_suite fills them before the first test and stops the server after the last, so no program writes
 * the start-connect-run-stop sequence again. A header (static inline), because check_summary reads the
 * program's own counters (check.h). */
#ifndef RL_TEST_SUITE_H
#define RL_TEST_SUITE_H

#include "check.h"
#include "server.h"

typedef void (*suite_test)(void);

/* Run tests (NULL-terminated) against a new server *srv, connected as *c; returns main's exit status. */
static inline int server_suite(const char *name, server **srv, redisContext **c, const suite_test *tests) {
    *srv = server_start(NULL);
    *c = server_connect(*srv);
    for (const suite_test *t = tests; *t; t++) (*t)();
    redisFree(*c);
    server_stop(*srv);
    *c = NULL;
    *srv = NULL;
    return check_summary(name);
}

#endif
