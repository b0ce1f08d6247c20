/* syntax.c -- the numbers and options of every limiter's command: <id>_PARAMS and <id>_OPTIONS for each row
 * of the list (limiters.h), from which rl_syntaxes is generated; a row without them does not compile.
 *
 * Each option has its own flag bit; an option with a value names the request field it fills. FIXED and
 * SLIDING exclude each other. */
#include "limiters.h"

#define NOPTS(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define OPT_VALUE(name, flag, field, min, max) {name, flag, RL_SLOT(field), min, max, 0}
#define OPT_FLAG(name, flag, conflicts) {name, flag, RL_NO_VALUE, 0, 0, conflicts}
#define OPT_COST(max) OPT_VALUE("COST", RL_F_COST, cost, 0, max)
#define OPT_DRYRUN OPT_FLAG("DRYRUN", RL_F_DRYRUN, 0)

#define COUNT_PARAM(name) {name, 1, RL_MAX_COUNT}
#define PERIOD_PARAM(name) {name, 1, RL_MAX_PERIOD_MS}

static const rl_option_spec token_options[] = {OPT_COST(RL_MAX_COUNT), OPT_DRYRUN,
                                               OPT_FLAG("INTERVAL", RL_F_INTERVAL, 0)};
#define TOKEN_PARAMS 3, {COUNT_PARAM("capacity"), COUNT_PARAM("refill_tokens"), PERIOD_PARAM("refill_ms")}
#define TOKEN_OPTIONS token_options

static const rl_option_spec leaky_options[] = {OPT_COST(RL_MAX_COUNT), OPT_DRYRUN, OPT_FLAG("NODELAY", RL_F_NODELAY, 0),
                                               OPT_FLAG("BLOCK", RL_F_BLOCK, 0)};
#define LEAKY_PARAMS 3, {COUNT_PARAM("capacity"), COUNT_PARAM("leak_tokens"), PERIOD_PARAM("leak_ms")}
#define LEAKY_OPTIONS leaky_options

static const rl_option_spec window_options[] = {OPT_COST(RL_MAX_COUNT), OPT_DRYRUN,
                                                OPT_FLAG("FIXED", RL_F_FIXED, RL_F_SLIDING),
                                                OPT_FLAG("SLIDING", RL_F_SLIDING, RL_F_FIXED)};
#define WINDOW_PARAMS 2, {COUNT_PARAM("limit"), PERIOD_PARAM("window_ms")}
#define WINDOW_OPTIONS window_options

/* The sliding log stores one entry per unit of cost, hence its smaller limit and cost. */
static const rl_option_spec slidinglog_options[] = {
    OPT_COST(RL_SLOG_MAX_LIMIT), OPT_DRYRUN, OPT_VALUE("MINGAP", RL_F_MINGAP, mingap_ms, 1, RL_MAX_PERIOD_MS)};
#define SLIDINGLOG_PARAMS 2, {{"limit", 1, RL_SLOG_MAX_LIMIT}, PERIOD_PARAM("window_ms")}
#define SLIDINGLOG_OPTIONS slidinglog_options

#define SYNTAX_ROW(id, command, type_name, tag, algorithm, storage) \
    [RL_LIM_##id] = {command, id##_PARAMS, id##_OPTIONS, NOPTS(id##_OPTIONS)},
const rl_syntax rl_syntaxes[RL_NLIMITERS] = {RL_LIMITERS(SYNTAX_ROW)};
