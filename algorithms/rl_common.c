/* rl_common.c -- the pieces of the reply every algorithm fills the same way. */
#include "rl_common.h"

const char *const rl_reply_field_names[RL_REPLY_FIELDS] = {
    "allowed", "limit", "remaining", "retry_after_ms", "reset_after_ms", "wait_ms",
};

void rl_reply_times(rl_reply *reply, rl_i128 retry_us, rl_i128 idle_us) {
    reply->retry_after_ms = (reply->allowed || retry_us < 0) ? -1 : rl_us_to_ms_ceil(retry_us);
    if (idle_us < 0) idle_us = 0;
    reply->reset_after_ms = rl_us_to_ms_ceil(idle_us);
    reply->reset_after_us = rl_sat64(idle_us);
}
