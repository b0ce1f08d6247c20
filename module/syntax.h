/* syntax.h -- the syntax of every RL.* limiter command, as data: their numbers and options.
 *
 * Redis-free, so the module's command table, the parser's tests and the fuzzer read the same tables. */
#ifndef RL_SYNTAX_H
#define RL_SYNTAX_H

#include "parse.h"

enum { RL_SYNTAX_TOKEN, RL_SYNTAX_LEAKY, RL_SYNTAX_WINDOW, RL_SYNTAX_SLIDINGLOG, RL_NSYNTAXES };
extern const rl_syntax rl_syntaxes[RL_NSYNTAXES];

#endif
