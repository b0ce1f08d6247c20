/* limiters.h -- every limiter the module offers, listed once.
 *
 * Each X(...) row is one limiter:
 *   id         the limiter's name: RL_LIM_<id> indexes every table, and "<id>" is the kind RL.SETSTATE and
 *              AOF rewrite name (TOKEN, LEAKY, WINDOW);
 *   command    its command;
 *   type_name  the Redis data type its keys hold: a module type of 9 characters for a cell or lease
 *              limiter, the built-in "zset" for the sliding log;
 *   tag        the byte that names its kind in the replicated RL.SETSTATE state: never reuse or change one
 *              (replicas and AOF files written by older versions carry it);
 *   algorithm  its cell algorithm (algorithms/), NULL when the storage decides through its own interface;
 *   storage    how its state lives in the keyspace: `cell` (a module value of the state's words, 2 to 64,
 *              store_cell.c), `log` (a sorted set, store_log.c) or `lease` (a module value holding leases,
 *              store_lease.c), i.e. the prepare/commit/release steps it runs.
 * Its syntax is <id>_PARAMS, <id>_OPTIONS and <id>_DOCS in syntax.c; every limiter also has a read-only form,
 * "<command>_ro" (as SORT_RO and GEORADIUS_RO in Redis), which takes the same arguments but DRYRUN, BLOCK and
 * WAIT and answers what DRYRUN answers. The command table (command.c), the module's rows (limiters.c), the
 * data types and their RDB/AOF callbacks, RL.SETSTATE's kinds, RL.ALL's kinds, COMMAND DOCS, INFO's
 * counters, the fuzzers' choice of command and the benchmark's rows are all generated from this list, and a
 * row that lacks a piece does not compile (docs/design.md has the checklist for a new limiter).
 *
 * This header uses no Redis header: the parser's tests and the fuzzers read it too. */
#ifndef RL_LIMITERS_H
#define RL_LIMITERS_H

#include "../algorithms/concurrency.h"
#include "../algorithms/leaky.h"
#include "../algorithms/lockout.h"
#include "../algorithms/quota.h"
#include "../algorithms/slidinglog.h"
#include "../algorithms/smooth.h"
#include "../algorithms/token.h"
#include "../algorithms/window.h"
#include "parse.h"

/* X(id, command, type_name, tag, algorithm, storage) */
#define RL_LIMITERS(X)                                                                \
    X(TOKEN, "rl.token", "rl-tokens", 'T', &rl_token_algorithm, cell)                 \
    X(LEAKY, "rl.leaky", "rl-leakyb", 'L', &rl_leaky_algorithm, cell)                 \
    X(WINDOW, "rl.window", "rl-window", 'W', &rl_window_algorithm, cell)              \
    X(SLIDINGLOG, "rl.slidinglog", "zset", 'S', NULL, log)                            \
    X(SMOOTH, "rl.smooth", "rl-smooth", 'G', &rl_smooth_algorithm, cell)              \
    X(CONCURRENCY, "rl.acquire", "rl-leases", 'C', NULL, lease)                       \
    X(QUOTA, "rl.quota", "rl-quotas", 'Q', &rl_quota_algorithm, cell)

#define RL_LIMITER_ENUM(id, command, type_name, tag, algorithm, storage) RL_LIM_##id,
enum rl_limiter_id { RL_LIMITERS(RL_LIMITER_ENUM) RL_NLIMITERS };
#undef RL_LIMITER_ENUM
/* Each row's tag as a constant, RL_TAG_<id> (a test of a limiter's kind by its tag compiles to one compare). */
#define RL_LIMITER_TAG(id, command, type_name, tag, algorithm, storage) RL_TAG_##id = tag,
enum rl_limiter_tag { RL_LIMITERS(RL_LIMITER_TAG) };
#undef RL_LIMITER_TAG

/* The syntax of each limiter's command and of its read-only form, indexed by RL_LIM_<id> (syntax.c). */
extern const rl_syntax rl_syntaxes[RL_NLIMITERS];
extern const rl_syntax rl_syntaxes_ro[RL_NLIMITERS];
/* RL.ALL's own options (before its first LIMIT), and its read-only form's (syntax.c). */
extern const rl_syntax rl_all_syntax, rl_all_syntax_ro;
/* RL.CHECK's own options (after the policy and the key), and its read-only form's (syntax.c). */
extern const rl_syntax rl_check_syntax, rl_check_syntax_ro;

/* The options a read-only form does not take: it never writes, and never holds its reply. */
#define RL_RO_EXCLUDED (RL_F_DRYRUN | RL_F_BLOCK | RL_F_WAIT)

#endif
