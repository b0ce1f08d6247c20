/* syntax.c -- the numbers and options of RL.TOKEN, RL.LEAKY, RL.WINDOW and RL.SLIDINGLOG (see syntax.h).
 * Each option has its own flag bit; FIXED and SLIDING exclude each other. */
#include "syntax.h"

#include "../algorithms/slidinglog.h"

#define OPT_COST(max) {"COST", RL_OPT_COST, RL_F_COST, 0, max, 0}
#define OPT_DRYRUN {"DRYRUN", RL_OPT_FLAG, RL_F_DRYRUN, 0, 0, 0}
#define OPT_FLAG(name, flag, conflicts) {name, RL_OPT_FLAG, flag, 0, 0, conflicts}
#define NOPTS(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const rl_option_spec token_options[] = {OPT_COST(RL_MAX_COUNT), OPT_DRYRUN,
                                               OPT_FLAG("INTERVAL", RL_F_INTERVAL, 0)};
static const rl_option_spec leaky_options[] = {OPT_COST(RL_MAX_COUNT), OPT_DRYRUN, OPT_FLAG("NODELAY", RL_F_NODELAY, 0),
                                               OPT_FLAG("BLOCK", RL_F_BLOCK, 0)};
static const rl_option_spec window_options[] = {OPT_COST(RL_MAX_COUNT), OPT_DRYRUN,
                                                OPT_FLAG("FIXED", RL_F_FIXED, RL_F_SLIDING),
                                                OPT_FLAG("SLIDING", RL_F_SLIDING, RL_F_FIXED)};
/* The sliding log stores one entry per unit of cost, hence its smaller limit and cost. */
static const rl_option_spec slog_options[] = {OPT_COST(RL_SLOG_MAX_LIMIT), OPT_DRYRUN,
                                              {"MINGAP", RL_OPT_MINGAP, RL_F_MINGAP, 1, RL_MAX_PERIOD_MS, 0}};

#define COUNT_PARAM(name) {name, 1, RL_MAX_COUNT}
#define PERIOD_PARAM(name) {name, 1, RL_MAX_PERIOD_MS}

const rl_syntax rl_syntaxes[RL_NSYNTAXES] = {
    [RL_SYNTAX_TOKEN] = {"rl.token", 3,
                         {COUNT_PARAM("capacity"), COUNT_PARAM("refill_tokens"), PERIOD_PARAM("refill_ms")},
                         token_options, NOPTS(token_options)},
    [RL_SYNTAX_LEAKY] = {"rl.leaky", 3, {COUNT_PARAM("capacity"), COUNT_PARAM("leak_tokens"), PERIOD_PARAM("leak_ms")},
                         leaky_options, NOPTS(leaky_options)},
    [RL_SYNTAX_WINDOW] = {"rl.window", 2, {COUNT_PARAM("limit"), PERIOD_PARAM("window_ms")}, window_options,
                          NOPTS(window_options)},
    [RL_SYNTAX_SLIDINGLOG] = {"rl.slidinglog", 2, {{"limit", 1, RL_SLOG_MAX_LIMIT}, PERIOD_PARAM("window_ms")},
                              slog_options, NOPTS(slog_options)},
};
