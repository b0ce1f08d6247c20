/* rl_common.c -- the pieces of the reply every algorithm fills the same way. */
#include "rl_common.h"

#include <stdio.h>

const char *const rl_reply_field_names[RL_REPLY_FIELDS + 1] = {
    "allowed", "limit", "remaining", "retry_after_ms", "reset_after_ms", "wait_ms", "granted",
};

void rl_reply_times(rl_reply *reply, rl_i128 retry_us, rl_i128 idle_us) {
    reply->retry_after_ms = (reply->allowed || retry_us < 0) ? -1 : rl_us_to_ms_ceil(retry_us);
    if (idle_us < 0) idle_us = 0;
    reply->reset_after_ms = rl_us_to_ms_ceil(idle_us);
    reply->reset_after_us = rl_sat64(idle_us);
}

int rl_rate_error(char err[RL_ERR_LEN], const char *tokens_name, const char *ms_name, const char *what) {
    const long long year_ms = 31557600000LL; /* 365.25 days */
    snprintf(err, RL_ERR_LEN,
             "ERR capacity: capacity / %s * %s must not exceed %lld ms (%s would take longer than %lld years)",
             tokens_name, ms_name, (long long)RL_MAX_IDLE_MS, what, (long long)RL_MAX_IDLE_MS / year_ms);
    return -1;
}

unsigned rl_two_words(const rl_cell *cell) {
    (void)cell;
    return 2;
}
