/* quota.h -- calendar quotas (RL.QUOTA): `limit` units per day, week (from Monday) or month (from the 1st),
 * the calendar's own windows in UTC shifted by a fixed OFFSET in minutes (a time zone without daylight
 * saving: OFFSET 60 is UTC+1). algorithms/quota.c has the idea and the rules.
 *
 * Request parameters: params[0] = limit, params[1] = the period (RL_QUOTA_DAY, RL_QUOTA_WEEK,
 * RL_QUOTA_MONTH: the index of DAY|WEEK|MONTH as the parser reads it), params[2] = OFFSET minutes (0 when
 * absent), within [-RL_QUOTA_MAX_OFFSET_MIN, RL_QUOTA_MAX_OFFSET_MIN].
 *
 * Cell layout (two words, so a key stays in the small value class):
 *   w[0]  the end of the stored window, in ms since the Unix epoch, 1 .. RL_QUOTA_MAX_END_MS
 *   w[1]  the units counted in it, up to RL_MAX_COUNT + RL_MAX_DEBT (a count of 0 is idle: the module keeps
 *         no key for it) */
#ifndef RL_QUOTA_H
#define RL_QUOTA_H

#include "rl_common.h"

extern const rl_algorithm rl_quota_algorithm;

enum { RL_QUOTA_DAY = 0, RL_QUOTA_WEEK = 1, RL_QUOTA_MONTH = 2 };

/* OFFSET minutes: UTC-14:00 to UTC+14:00, the widest offsets in use. */
#define RL_F_OFFSET RL_F_ALG(0)
#define RL_QUOTA_MAX_OFFSET_MIN 840

#define RL_QUOTA_DAY_MS 86400000LL
/* A window ends at most a month (31 days) after any instant in it, and the clock stays below
 * RL_MAX_TIME_MS: the latest end a state can hold. */
#define RL_QUOTA_MAX_END_MS (RL_MAX_TIME_MS + 31 * RL_QUOTA_DAY_MS)

/* --- the calendar, in whole days since 1970-01-01 (proleptic Gregorian, years 1 and later) ------------ */

/* The day number of year-month-day (month 1 to 12, day 1 to 31; year >= 1). */
int64_t rl_quota_days_from_civil(int64_t year, int month, int day);

/* The date of day number `days` (days >= the day of 0001-01-01). */
void rl_quota_civil_from_days(int64_t days, int64_t *year, int *month, int *day);

/* The window of `period` with `offset_min` that holds the instant t_ms: [*start_ms, *end_ms). */
void rl_quota_window_at(int period, int64_t offset_min, int64_t t_ms, int64_t *start_ms, int64_t *end_ms);

#endif
