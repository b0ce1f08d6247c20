/* unit_parse.c -- the argument parser, table-driven: each row is the arguments after the key and either
 * the request they parse to or the exact error. Uses RL.WINDOW's shape (two numbers, FIXED/SLIDING
 * conflict) and RL.SLIDINGLOG's MINGAP, declared here as the module declares them. */
#include "../module/parse.h"
#include "check.h"

static const rl_option_spec options[] = {
    {"COST", RL_OPT_COST, RL_F_COST, 0, RL_MAX_COUNT, 0},
    {"DRYRUN", RL_OPT_FLAG, RL_F_DRYRUN, 0, 0, 0},
    {"FIXED", RL_OPT_FLAG, RL_F_FIXED, 0, 0, RL_F_SLIDING},
    {"SLIDING", RL_OPT_FLAG, RL_F_SLIDING, 0, 0, RL_F_FIXED},
    {"MINGAP", RL_OPT_MINGAP, RL_F_MINGAP, 1, RL_MAX_PERIOD_MS, 0},
};
static const rl_syntax syntax = {"rl.test", 2, {{"limit", 1, RL_MAX_COUNT}, {"window_ms", 1, RL_MAX_PERIOD_MS}},
                                 options, 5};

typedef struct row {
    const char *args[8];
    const char *error; /* NULL: parses */
    int64_t limit, window, cost, mingap;
    uint32_t flags;
} row;

static const row rows[] = {
    {{"10", "1000"}, NULL, 10, 1000, 1, 0, 0},
    {{"1", "1", "cost", "0"}, NULL, 1, 1, 0, 0, RL_F_COST},
    {{"1000000000000", "1000000000000", "COST", "1000000000000", "dryrun", "Fixed"}, NULL, RL_MAX_COUNT,
     RL_MAX_PERIOD_MS, RL_MAX_COUNT, 0, RL_F_COST | RL_F_DRYRUN | RL_F_FIXED},
    {{"5", "60", "MINGAP", "7", "SLIDING"}, NULL, 5, 60, 1, 7, RL_F_MINGAP | RL_F_SLIDING},
    {{"10"}, "ERR wrong number of arguments for 'rl.test' command", 0, 0, 0, 0, 0},
    {{"0", "1000"}, "ERR limit must be an integer between 1 and 1000000000000", 0, 0, 0, 0, 0},
    {{"-1", "1000"}, "ERR limit must be an integer between 1 and 1000000000000", 0, 0, 0, 0, 0},
    {{"-0", "1000"}, "ERR limit must be an integer between 1 and 1000000000000", 0, 0, 0, 0, 0},
    {{"+1", "1000"}, "ERR limit must be an integer between 1 and 1000000000000", 0, 0, 0, 0, 0},
    {{"01", "1000"}, "ERR limit must be an integer between 1 and 1000000000000", 0, 0, 0, 0, 0},
    {{" 1", "1000"}, "ERR limit must be an integer between 1 and 1000000000000", 0, 0, 0, 0, 0},
    {{"", "1000"}, "ERR limit must be an integer between 1 and 1000000000000", 0, 0, 0, 0, 0},
    {{"1e3", "1000"}, "ERR limit must be an integer between 1 and 1000000000000", 0, 0, 0, 0, 0},
    {{"9223372036854775807", "1000"}, "ERR limit must be an integer between 1 and 1000000000000", 0, 0, 0, 0, 0},
    {{"9223372036854775808", "1000"}, "ERR limit must be an integer between 1 and 1000000000000", 0, 0, 0, 0, 0},
    {{"18446744073709551616", "1000"}, "ERR limit must be an integer between 1 and 1000000000000", 0, 0, 0, 0, 0},
    {{"99999999999999999999999", "1000"}, "ERR limit must be an integer between 1 and 1000000000000", 0, 0, 0, 0, 0},
    {{"10", "1000000000001"}, "ERR window_ms must be an integer between 1 and 1000000000000", 0, 0, 0, 0, 0},
    {{"10", "1000", "COST"}, "ERR option COST needs a value", 0, 0, 0, 0, 0},
    {{"10", "1000", "COST", "DRYRUN"}, "ERR COST must be an integer between 0 and 1000000000000", 0, 0, 0, 0, 0},
    {{"10", "1000", "COST", "-9223372036854775808"}, "ERR COST must be an integer between 0 and 1000000000000", 0, 0, 0, 0, 0},
    {{"10", "1000", "COST", "1", "cost", "2"}, "ERR option COST given more than once", 0, 0, 0, 0, 0},
    {{"10", "1000", "FIXED", "SLIDING"}, "ERR options FIXED and SLIDING cannot be combined", 0, 0, 0, 0, 0},
    {{"10", "1000", "SLIDING", "fixed"}, "ERR options SLIDING and FIXED cannot be combined", 0, 0, 0, 0, 0},
    {{"10", "1000", "MINGAP", "0"}, "ERR MINGAP must be an integer between 1 and 1000000000000", 0, 0, 0, 0, 0},
    {{"10", "1000", "BLOCK"}, "ERR unknown option 'BLOCK' for 'rl.test'", 0, 0, 0, 0, 0},
    {{"10", "1000", "COSTS", "1"}, "ERR unknown option 'COSTS' for 'rl.test'", 0, 0, 0, 0, 0},
    {{"10", "1000", "a-very-long-option-name-that-goes-on-and-on"},
     "ERR unknown option 'a-very-long-option-name-that-...' for 'rl.test'", 0, 0, 0, 0, 0},
    {{"10", "1000", "x'y\x7f"}, "ERR unknown option 'x?y?' for 'rl.test'", 0, 0, 0, 0, 0},
};

static void test_rows(void) {
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const char *args[8];
        size_t lens[8];
        int n = 0;
        for (; n < 8 && rows[i].args[n]; n++) {
            args[n] = rows[i].args[n];
            lens[n] = strlen(args[n]);
        }
        rl_request req;
        char err[RL_ERR_LEN] = "";
        int rc = rl_parse(&syntax, n, args, lens, &req, err);
        if (rows[i].error) {
            CHECK_EQ(rc, -1);
            CHECK_STR(err, rows[i].error);
        } else {
            CHECK_EQ(rc, 0);
            CHECK_EQ(req.params[0], rows[i].limit);
            CHECK_EQ(req.params[1], rows[i].window);
            CHECK_EQ(req.cost, rows[i].cost);
            CHECK_EQ(req.mingap_ms, rows[i].mingap);
            CHECK_EQ(req.flags, rows[i].flags);
        }
    }
}

/* Binary arguments: embedded NUL and CR/LF never reach the error line. */
static void test_binary(void) {
    const char *args[] = {"10", "1000", "A\0B\r\n"};
    size_t lens[] = {2, 4, 5};
    rl_request req;
    char err[RL_ERR_LEN];
    CHECK_EQ(rl_parse(&syntax, 3, args, lens, &req, err), -1);
    CHECK_STR(err, "ERR unknown option 'A?B?\?' for 'rl.test'");
    const char *num[] = {"1\0", "1000"};
    size_t numlens[] = {2, 4};
    CHECK_EQ(rl_parse(&syntax, 2, num, numlens, &req, err), -1);
    CHECK_STR(err, "ERR limit must be an integer between 1 and 1000000000000");
}

static void test_int64_edges(void) {
    int64_t v = 0;
    CHECK_EQ(rl_parse_int64("9223372036854775807", 19, &v), 0);
    CHECK_EQ(v, INT64_MAX);
    CHECK_EQ(rl_parse_int64("-9223372036854775808", 20, &v), 0);
    CHECK_EQ(v, INT64_MIN);
    CHECK_EQ(rl_parse_int64("-9223372036854775809", 20, &v), -1);
    CHECK_EQ(rl_parse_int64("0", 1, &v), 0);
    CHECK_EQ(v, 0);
    CHECK_EQ(rl_parse_int64("-", 1, &v), -1);
}

int main(void) {
    test_rows();
    test_binary();
    test_int64_edges();
    return check_summary("unit_parse");
}
