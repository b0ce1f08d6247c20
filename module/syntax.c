/* syntax.c -- the numbers and options of every limiter's command: <id>_PARAMS, <id>_OPTIONS and <id>_DOCS
 * (COMMAND DOCS' summary and complexity) for each row of the list (limiters.h), from which rl_syntaxes and
 * the read-only forms' rl_syntaxes_ro are generated; a row without them does not compile. RL.ALL's own
 * options (before its first LIMIT) are here too.
 *
 * Each option has its own flag bit; an option with a value names the request field it fills, and the
 * value's name in docs/commands.md ("COST n"), which COMMAND DOCS and redis-cli's hints show. Options that
 * exclude each other list each other in their conflicts (the parser then refuses either order), and COMMAND
 * DOCS shows them as one choice (`[COST n | REFUND n]`, command.c): so a table lists its options in the
 * order of the command's syntax line in docs/commands.md, the members of a choice next to each other. */
#include "limiters.h"

#define NOPTS(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define OPT_VALUE(name, value, flag, field, min, max) {name, flag, RL_SLOT(field), min, max, 0, value, sizeof(name) - 1}
#define OPT_VALUE_X(name, value, flag, field, min, max, conflicts) \
    {name, flag, RL_SLOT(field), min, max, conflicts, value, sizeof(name) - 1}
#define OPT_FLAG(name, flag, conflicts) {name, flag, RL_NO_VALUE, 0, 0, conflicts, NULL, sizeof(name) - 1}
#define OPT_COST(max) OPT_VALUE_X("COST", "n", RL_F_COST, cost, 0, max, RL_F_REFUND)
/* REFUND n gives back n units: it fills the cost slot (the algorithm reads it as a refund), so it takes the
 * place of COST, and admits nothing partially nor forces nor holds a reply or waits. Its range is its
 * command's COST range. */
#define OPT_REFUND_UPTO(max)                                        \
    OPT_VALUE_X("REFUND", "n", RL_F_REFUND, cost, 0, max,           \
                RL_F_COST | RL_F_ATMOST | RL_F_BLOCK | RL_F_WAIT | RL_F_FORCE)
#define OPT_REFUND OPT_REFUND_UPTO(RL_MAX_COUNT)
/* ATMOST admits what is available of COST, from 1 up (the reply gains `granted`); FORCE takes all of it. */
#define OPT_ATMOST OPT_FLAG("ATMOST", RL_F_ATMOST, RL_F_REFUND | RL_F_FORCE)
#define OPT_DRYRUN OPT_FLAG("DRYRUN", RL_F_DRYRUN, 0)
/* FORCE: the units are taken even past the limit (debt, rl_common.h); a forced request neither refunds, nor
 * takes part of its cost, nor waits. */
#define OPT_FORCE OPT_FLAG("FORCE", RL_F_FORCE, RL_F_REFUND | RL_F_ATMOST | RL_F_WAIT | RL_F_BLOCK)
/* WAIT timeout_ms: a denied request waits server-side for its turn (module/wait.c); a refund never waits, nor
 * does a forced request (it is never denied). */
#define OPT_WAIT \
    OPT_VALUE_X("WAIT", "timeout_ms", RL_F_WAIT, wait_timeout_ms, 1, RL_MAX_PERIOD_MS, RL_F_REFUND | RL_F_FORCE)

/* LOCKOUT ms [BACKOFF factor] [MAXLOCK ms] [FORGIVE ms]: a denial locks the key (algorithms/lockout.h); the
 * three after it are options of their own, which lockout.c refuses without LOCKOUT. Last in every table: the
 * parser looks options up in table order, and the common ones (DRYRUN, WAIT) should not pay for these. */
#define OPT_LOCKOUT                                                                                      \
    OPT_VALUE("LOCKOUT", "ms", RL_F_LOCKOUT, lockout_ms, 1, RL_MAX_PERIOD_MS),                           \
        OPT_VALUE("BACKOFF", "factor", RL_F_BACKOFF, lock_backoff, 1, RL_LOCK_MAX_BACKOFF),                \
        OPT_VALUE("MAXLOCK", "ms", RL_F_MAXLOCK, lock_max_ms, 1, RL_MAX_PERIOD_MS),                        \
        OPT_VALUE("FORGIVE", "ms", RL_F_FORGIVE, lock_forgive_ms, 1, RL_MAX_PERIOD_MS)

#define COUNT_PARAM(name) {name, 1, RL_MAX_COUNT, 0, NULL}
#define PERIOD_PARAM(name) {name, 1, RL_MAX_PERIOD_MS, 0, NULL}

static const rl_option_spec token_options[] = {OPT_COST(RL_MAX_COUNT), OPT_REFUND, OPT_FLAG("INTERVAL", RL_F_INTERVAL, 0),
                                               OPT_ATMOST, OPT_FORCE, OPT_DRYRUN, OPT_WAIT, OPT_LOCKOUT};
#define TOKEN_PARAMS 3, {COUNT_PARAM("capacity"), COUNT_PARAM("refill_tokens"), PERIOD_PARAM("refill_ms")}
#define TOKEN_OPTIONS token_options
#define TOKEN_SINCE "1.0.0" /* COMMAND DOCS: the version that brought the command, and its _RO form */
#define TOKEN_SINCE_RO "1.1.0"
#define TOKEN_DOCS "Takes tokens from a token bucket, or reports how many it holds.", "O(1)"

/* NODELAY admits at once, so there is no wait for BLOCK to hold. FORCE needs NODELAY (the algorithm's validate
 * says so: a shaping bucket has no debt), so it excludes BLOCK too. */
static const rl_option_spec leaky_options[] = {
    OPT_COST(RL_MAX_COUNT),
    OPT_REFUND,
    OPT_FLAG("NODELAY", RL_F_NODELAY, RL_F_BLOCK),
    OPT_FLAG("BLOCK", RL_F_BLOCK, RL_F_NODELAY | RL_F_REFUND | RL_F_FORCE),
    OPT_FORCE,
    OPT_DRYRUN,
    OPT_LOCKOUT};
#define LEAKY_PARAMS 3, {COUNT_PARAM("capacity"), COUNT_PARAM("leak_tokens"), PERIOD_PARAM("leak_ms")}
#define LEAKY_OPTIONS leaky_options
#define LEAKY_SINCE "1.0.0"
#define LEAKY_SINCE_RO "1.1.0"
#define LEAKY_DOCS "Admits a request into a leaky bucket and says how long it waits (or polices it with NODELAY).", "O(1)"

/* The modes exclude each other: FIXED, SLIDING (the default) and SUBWINDOWS n. */
static const rl_option_spec window_options[] = {
    OPT_COST(RL_MAX_COUNT),
    OPT_REFUND,
    OPT_FLAG("FIXED", RL_F_FIXED, RL_F_SLIDING | RL_F_SUBWINDOWS),
    OPT_FLAG("SLIDING", RL_F_SLIDING, RL_F_FIXED | RL_F_SUBWINDOWS),
    OPT_VALUE_X("SUBWINDOWS", "n", RL_F_SUBWINDOWS, params[2], RL_WINDOW_MIN_SUBWINDOWS, RL_WINDOW_MAX_SUBWINDOWS,
                RL_F_FIXED | RL_F_SLIDING),
    OPT_ATMOST,
    OPT_FORCE,
    OPT_DRYRUN,
    OPT_WAIT,
    OPT_LOCKOUT};
#define WINDOW_PARAMS 2, {COUNT_PARAM("limit"), PERIOD_PARAM("window_ms")}
#define WINDOW_OPTIONS window_options
#define WINDOW_SINCE "1.0.0"
#define WINDOW_SINCE_RO "1.1.0"
#define WINDOW_DOCS \
    "Counts a request in a fixed window, a sliding-window counter, or a window of n sub-windows.", "O(1) (O(n) with SUBWINDOWS n)"

/* The sliding log keeps up to limit + 1 units in the window, hence its smaller limit and cost. REFUND
 * there has COST's range, 0 .. RL_SLOG_MAX_LIMIT: it gives back what attempts logged, and one attempt logs
 * at most that much; a refund takes at most limit + 1 <= RL_SLOG_MAX_LIMIT + 1 units, so a larger n could
 * give back at most one unit more; and every count of the command keeps one bound. (The log has no ATMOST
 * or BLOCK, so of REFUND's conflicts only COST and FORCE apply; MINGAP has no say in a refund, nor in a
 * forced attempt.) */
static const rl_option_spec slidinglog_options[] = {
    OPT_VALUE("MINGAP", "ms", RL_F_MINGAP, mingap_ms, 1, RL_MAX_PERIOD_MS), OPT_COST(RL_SLOG_MAX_LIMIT),
    OPT_REFUND_UPTO(RL_SLOG_MAX_LIMIT), OPT_FORCE, OPT_DRYRUN, OPT_LOCKOUT};
#define SLIDINGLOG_PARAMS 2, {{"limit", 1, RL_SLOG_MAX_LIMIT, 0, NULL}, PERIOD_PARAM("window_ms")}
#define SLIDINGLOG_OPTIONS slidinglog_options
#define SLIDINGLOG_SINCE "1.0.0"
#define SLIDINGLOG_SINCE_RO "1.1.0"
#define SLIDINGLOG_DOCS                                                                                     \
    "Logs an attempt in a sorted set and admits it if the last window_ms hold fewer than limit.",          \
    "O(log(N)) with N the entries in the log, plus O(M log(N)) to remove the M entries that left the window"

/* RL.SMOOTH (Guava's RateLimiter): permits_per_second and COLDFACTOR are decimal numbers. WARMUP chooses
 * SmoothWarmingUp, MAXBURST tunes SmoothBursty: they exclude each other (COLDFACTOR without WARMUP is
 * refused by the algorithm's validate), and share a slot. COST starts at 1, as Guava refuses 0 permits; no
 * REFUND or ATMOST (a reservation is granted whole). The values go to the request fields smooth.h names. */
/* A decimal option: its value and bounds in millionths (parse.h). */
#define OPT_DECIMAL(name, value, flag, field, min, max) \
    {name, flag, RL_SLOT_DECIMAL(field), min, max, 0, value, sizeof(name) - 1}
static const rl_option_spec smooth_options[] = {
    OPT_VALUE_X("WARMUP", "warmup_ms", RL_F_WARMUP, params[1], 1, RL_MAX_PERIOD_MS, RL_F_MAXBURST),
    OPT_VALUE_X("MAXBURST", "burst_ms", RL_F_MAXBURST, params[1], 0, RL_MAX_PERIOD_MS, RL_F_WARMUP),
    OPT_DECIMAL("COLDFACTOR", "f", RL_F_COLDFACTOR, params[2], RL_SMOOTH_MIN_COLD_FACTOR, RL_SMOOTH_MAX_COLD_FACTOR),
    OPT_VALUE("COST", "n", RL_F_COST, cost, 1, RL_MAX_COUNT),
    OPT_VALUE("MAXWAIT", "ms", RL_F_MAXWAIT, maxwait_ms, 0, RL_SMOOTH_MAX_CHARGE_MS),
    OPT_DRYRUN,
    OPT_FLAG("BLOCK", RL_F_BLOCK, 0),
    OPT_LOCKOUT};
#define SMOOTH_PARAMS \
    1, {{"permits_per_second", RL_SMOOTH_MIN_RATE, RL_SMOOTH_MAX_RATE, RL_DECIMAL, NULL}}
#define SMOOTH_OPTIONS smooth_options
#define SMOOTH_SINCE "1.2.0"
#define SMOOTH_SINCE_RO "1.2.0"
#define SMOOTH_DOCS                                                                                       \
    "Reserves permits from a shared Guava RateLimiter (bursty or warming up) and says how long to wait.", "O(1)"

/* RL.ACQUIRE (concurrency leases): COST from 1 (a lease holds at least one unit) up to the largest limit, ID
 * a string (its argument's place is recorded, parse.h), WAIT as everywhere; no REFUND (RL.RELEASE gives a
 * lease back) or ATMOST. */
static const rl_option_spec concurrency_options[] = {
    OPT_VALUE("COST", "n", RL_F_COST, cost, 1, RL_LEASE_MAX_LIMIT),
    {"ID", RL_F_ID, RL_SLOT_STRING(id_arg), 1, RL_LEASE_ID_MAX, 0, "lease_id", 2},
    OPT_WAIT,
    OPT_DRYRUN};
#define CONCURRENCY_PARAMS 2, {{"limit", 1, RL_LEASE_MAX_LIMIT, 0, NULL}, PERIOD_PARAM("lease_ms")}
#define CONCURRENCY_OPTIONS concurrency_options
#define CONCURRENCY_SINCE "1.3.0"
#define CONCURRENCY_SINCE_RO "1.3.0"
#define CONCURRENCY_DOCS                                                                                   \
    "Takes a lease of COST units if the unexpired leases leave room under limit, and answers its id.",     \
    "O(N) in the leases of the key"

/* RL.QUOTA (calendar quotas): the period is a positional choice, stored as its index (quota.h's
 * RL_QUOTA_DAY ..); OFFSET minutes shifts the calendar to a fixed time zone. COST, REFUND and DRYRUN as
 * RL.WINDOW FIXED's, and FORCE (debt); no ATMOST or WAIT: a quota's denial lasts until its window ends. */
static const char *const quota_periods[] = {"DAY", "WEEK", "MONTH"};
static const rl_option_spec quota_options[] = {
    OPT_VALUE("OFFSET", "minutes", RL_F_OFFSET, params[2], -RL_QUOTA_MAX_OFFSET_MIN, RL_QUOTA_MAX_OFFSET_MIN),
    OPT_COST(RL_MAX_COUNT), OPT_REFUND, OPT_FORCE, OPT_DRYRUN, OPT_LOCKOUT};
#define QUOTA_PARAMS \
    2, {COUNT_PARAM("limit"), {"period", RL_QUOTA_DAY, RL_QUOTA_MONTH, RL_CHOICE, quota_periods}}
#define QUOTA_OPTIONS quota_options
#define QUOTA_SINCE "1.4.0"
#define QUOTA_SINCE_RO "1.4.0"
#define QUOTA_DOCS \
    "Counts a request against a quota per calendar day, week or month (UTC, or a fixed OFFSET from it).", "O(1)"

#define SYNTAX_ROW(id, command, type_name, tag, algorithm, storage) \
    [RL_LIM_##id] = {command, id##_PARAMS, id##_OPTIONS, NOPTS(id##_OPTIONS), 0, id##_DOCS, id##_SINCE},
const rl_syntax rl_syntaxes[RL_NLIMITERS] = {RL_LIMITERS(SYNTAX_ROW)};

/* The complexity of a <id>_DOCS pair (one more expansion, so the pair is split into two arguments). */
#define SECOND(summary, complexity) complexity
#define COMPLEXITY_OF(docs) SECOND(docs)
#define SYNTAX_RO_ROW(id, command, type_name, tag, algorithm, storage) \
    [RL_LIM_##id] = {command "_ro", id##_PARAMS, id##_OPTIONS, NOPTS(id##_OPTIONS), RL_RO_EXCLUDED,   \
                     "Answers what " command " DRYRUN answers: the reply the request would get, writing nothing.", \
                     COMPLEXITY_OF(id##_DOCS), id##_SINCE_RO},
const rl_syntax rl_syntaxes_ro[RL_NLIMITERS] = {RL_LIMITERS(SYNTAX_RO_ROW)};

/* RL.ALL's own options, before its first LIMIT (all.c): COST n or REFUND n for every limit (a clause's own
 * replaces it), DRYRUN, FORCE for every limit (each clause may also force its own), and WAIT (wait.c), whose
 * timeout goes where the waiting commands put it. Its read-only form takes them but DRYRUN (implied) and WAIT.
 * Its clauses are parsed with each limiter's read-only syntax. */
static const rl_option_spec all_options[] = {OPT_COST(RL_MAX_COUNT), OPT_REFUND, OPT_DRYRUN, OPT_FORCE, OPT_WAIT};
const rl_syntax rl_all_syntax = {"rl.all", 0, {{0}}, all_options, NOPTS(all_options), 0,
                                 "Checks several limits on several keys at once, and consumes from all of them or none.",
                                 "O(N) in the number of limits, each as its own command", "1.1.0"};
/* RL.CHECK policy key's own options (policy.c): COST n for every limit of the policy whose spec fixes none,
 * DRYRUN, and WAIT; its read-only form takes COST alone. A policy's limits are parsed when it is set. */
static const rl_option_spec check_options[] = {OPT_COST(RL_MAX_COUNT), OPT_DRYRUN, OPT_WAIT};
const rl_syntax rl_check_syntax = {"rl.check", 0, {{0}}, check_options, NOPTS(check_options), 0,
                                   "Checks a key against every limit of a policy (RL.POLICY), consuming from all or none.",
                                   "O(N) in the policy's limits", "1.5.0"};
const rl_syntax rl_check_syntax_ro = {"rl.check_ro", 0, {{0}}, check_options, NOPTS(check_options), RL_RO_EXCLUDED,
                                      "Answers what RL.CHECK DRYRUN answers: the reply the request would get, writing nothing.",
                                      "O(N) in the policy's limits", "1.5.0"};
const rl_syntax rl_all_syntax_ro = {"rl.all_ro", 0, {{0}}, all_options, NOPTS(all_options), RL_RO_EXCLUDED,
                                    "Answers what RL.ALL DRYRUN answers: the reply the request would get, writing nothing.",
                                    "O(N) in the number of limits, each as its own command", "1.2.0"};
