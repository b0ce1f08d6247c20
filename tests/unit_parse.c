/* unit_parse.c -- the argument parser, table-driven: each row is the arguments after the key and either
 * the request they parse to or the exact error. Uses RL.WINDOW's shape (two numbers, FIXED/SLIDING
 * conflict) and RL.SLIDINGLOG's MINGAP, declared here as the module declares them. Then the clause parser
 * (how many arguments a clause uses) and the module's own tables (limiters.h): what each parses, that
 * options that exclude each other say so both ways (the parser refuses either order, and COMMAND DOCS shows
 * them as one choice), and that every value has its name for COMMAND DOCS; RL.ALL's own options; a positional
 * choice (RL.QUOTA's DAY|WEEK|MONTH); every option's name length as its table records it. */
#include "../module/limiters.h"
#include "check.h"

/* The test command mixes RL.WINDOW's and RL.SLIDINGLOG's own options, whose bits may coincide across
 * algorithms: it numbers them itself. */
#define T_FIXED RL_F_ALG(0)
#define T_SLIDING RL_F_ALG(1)
#define T_MINGAP RL_F_ALG(2)

static const rl_option_spec options[] = {
    {"COST", RL_F_COST, RL_SLOT(cost), 0, RL_MAX_COUNT, 0, "n", 4},
    {"DRYRUN", RL_F_DRYRUN, RL_NO_VALUE, 0, 0, 0, NULL, 6},
    {"FIXED", T_FIXED, RL_NO_VALUE, 0, 0, T_SLIDING, NULL, 5},
    {"SLIDING", T_SLIDING, RL_NO_VALUE, 0, 0, T_FIXED, NULL, 7},
    {"MINGAP", T_MINGAP, RL_SLOT(mingap_ms), 1, RL_MAX_PERIOD_MS, 0, "ms", 6},
};
static const rl_syntax syntax = {"rl.test", 2, {{"limit", 1, RL_MAX_COUNT, 0, NULL}, {"window_ms", 1, RL_MAX_PERIOD_MS, 0, NULL}},
                                 options, 5, 0, NULL, NULL, NULL};

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
     RL_MAX_PERIOD_MS, RL_MAX_COUNT, 0, RL_F_COST | RL_F_DRYRUN | T_FIXED},
    {{"5", "60", "MINGAP", "7", "SLIDING"}, NULL, 5, 60, 1, 7, T_MINGAP | T_SLIDING},
    {{"10"}, "ERR wrong number of arguments for 'rl.test' command", 0, 0, 0, 0, 0},
    {{"0", "1000"}, "ERR limit: must be an integer between 1 and 1000000000000", 0, 0, 0, 0, 0},
    {{"-1", "1000"}, "ERR limit: must be an integer between 1 and 1000000000000", 0, 0, 0, 0, 0},
    {{"-0", "1000"}, "ERR limit: must be an integer between 1 and 1000000000000", 0, 0, 0, 0, 0},
    {{"+1", "1000"}, "ERR limit: must be an integer between 1 and 1000000000000", 0, 0, 0, 0, 0},
    {{"01", "1000"}, "ERR limit: must be an integer between 1 and 1000000000000", 0, 0, 0, 0, 0},
    {{" 1", "1000"}, "ERR limit: must be an integer between 1 and 1000000000000", 0, 0, 0, 0, 0},
    {{"", "1000"}, "ERR limit: must be an integer between 1 and 1000000000000", 0, 0, 0, 0, 0},
    {{"1e3", "1000"}, "ERR limit: must be an integer between 1 and 1000000000000", 0, 0, 0, 0, 0},
    {{"9223372036854775807", "1000"}, "ERR limit: must be an integer between 1 and 1000000000000", 0, 0, 0, 0, 0},
    {{"9223372036854775808", "1000"}, "ERR limit: must be an integer between 1 and 1000000000000", 0, 0, 0, 0, 0},
    {{"18446744073709551616", "1000"}, "ERR limit: must be an integer between 1 and 1000000000000", 0, 0, 0, 0, 0},
    {{"99999999999999999999999", "1000"}, "ERR limit: must be an integer between 1 and 1000000000000", 0, 0, 0, 0, 0},
    {{"10", "1000000000001"}, "ERR window_ms: must be an integer between 1 and 1000000000000", 0, 0, 0, 0, 0},
    {{"10", "1000", "COST"}, "ERR COST: needs a value", 0, 0, 0, 0, 0},
    {{"10", "1000", "COST", "DRYRUN"}, "ERR COST: must be an integer between 0 and 1000000000000", 0, 0, 0, 0, 0},
    {{"10", "1000", "COST", "-9223372036854775808"}, "ERR COST: must be an integer between 0 and 1000000000000", 0, 0, 0, 0, 0},
    {{"10", "1000", "COST", "1", "cost", "2"}, "ERR COST: given more than once", 0, 0, 0, 0, 0},
    {{"10", "1000", "FIXED", "SLIDING"}, "ERR SLIDING: cannot be combined with FIXED", 0, 0, 0, 0, 0},
    {{"10", "1000", "SLIDING", "fixed"}, "ERR FIXED: cannot be combined with SLIDING", 0, 0, 0, 0, 0},
    {{"10", "1000", "MINGAP", "0"}, "ERR MINGAP: must be an integer between 1 and 1000000000000", 0, 0, 0, 0, 0},
    {{"10", "1000", "BLOCK"}, "ERR 'BLOCK': not an option of rl.test", 0, 0, 0, 0, 0},
    {{"10", "1000", "COSTS", "1"}, "ERR 'COSTS': not an option of rl.test", 0, 0, 0, 0, 0},
    {{"10", "1000", "a-very-long-option-name-that-goes-on-and-on"},
     "ERR 'a-very-long-option-name-that-...': not an option of rl.test", 0, 0, 0, 0, 0},
    {{"10", "1000", "x'y\x7f"}, "ERR 'x?y?': not an option of rl.test", 0, 0, 0, 0, 0},
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
    CHECK_STR(err, "ERR 'A?B?\?': not an option of rl.test");
    const char *num[] = {"1\0", "1000"};
    size_t numlens[] = {2, 4};
    CHECK_EQ(rl_parse(&syntax, 2, num, numlens, &req, err), -1);
    CHECK_STR(err, "ERR limit: must be an integer between 1 and 1000000000000");
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

/* A clause ends at the first argument that is not one of its options, and says how many it used; errors
 * inside it are still errors. */
static void test_clause(void) {
    const char *args[] = {"10", "1000", "COST", "3", "FIXED", "LIMIT", "TOKEN", "COST", "4"};
    size_t lens[9];
    for (int i = 0; i < 9; i++) lens[i] = strlen(args[i]);
    rl_request req;
    char err[RL_ERR_LEN];
    CHECK_EQ(rl_parse_clause(&syntax, 9, args, lens, &req, err), 5);
    CHECK_EQ(req.cost, 3);
    CHECK_EQ(req.flags, RL_F_COST | T_FIXED);
    CHECK_EQ(rl_parse_clause(&syntax, 2, args, lens, &req, err), 2);
    CHECK_EQ(rl_parse_clause(&syntax, 4, args, lens, &req, err), 4);
    CHECK_EQ(rl_parse_clause(&syntax, 3, args, lens, &req, err), -1);
    CHECK_STR(err, "ERR COST: needs a value");
    const char *twice[] = {"10", "1000", "FIXED", "SLIDING", "LIMIT"};
    size_t twicelens[] = {2, 4, 5, 7, 5};
    CHECK_EQ(rl_parse_clause(&syntax, 5, twice, twicelens, &req, err), -1);
    CHECK_STR(err, "ERR SLIDING: cannot be combined with FIXED");
    CHECK_EQ(rl_parse(&syntax, 9, args, lens, &req, err), -1);
    CHECK_STR(err, "ERR 'LIMIT': not an option of rl.test");
}

/* The module's own tables: every command parses its smallest form, an option with a value lands in the
 * field its row names, and every limit in a message comes from its constant. */
static void test_module_syntaxes(void) {
    for (int i = 0; i < RL_NLIMITERS; i++) {
        const rl_syntax *syn = &rl_syntaxes[i];
        const char *line[RL_MAX_PARAMS + 2] = {"1", "1", "1"};
        size_t lens[RL_MAX_PARAMS + 2] = {1, 1, 1};
        for (int j = 0; j < syn->nparams; j++) /* a choice's smallest form is its first token */
            if (syn->params[j].kind == RL_CHOICE) {
                line[j] = syn->params[j].choices[0];
                lens[j] = strlen(line[j]);
            }
        line[syn->nparams] = "COST";
        lens[syn->nparams] = 4;
        int64_t least = 0; /* COST's smallest value: 0, or 1 where 0 means nothing (RL.SMOOTH) */
        for (int j = 0; j < syn->noptions; j++)
            if (syn->options[j].flag == RL_F_COST) least = syn->options[j].min;
        line[syn->nparams + 1] = least ? "1" : "0";
        lens[syn->nparams + 1] = 1;
        rl_request req;
        char err[RL_ERR_LEN];
        CHECK_EQ(rl_parse(syn, syn->nparams, line, lens, &req, err), 0);
        CHECK_EQ(req.cost, 1);
        CHECK_EQ(rl_parse(syn, syn->nparams + 2, line, lens, &req, err), 0);
        CHECK_EQ(req.cost, least);
        CHECK_EQ(req.flags, RL_F_COST);
    }
    rl_request req;
    char err[RL_ERR_LEN];
    /* A read-only form takes the same table without DRYRUN and BLOCK. */
    const char *dry[] = {"5", "1", "1000", "COST", "2", "DRYRUN"};
    size_t drylens[] = {1, 1, 4, 4, 1, 6};
    CHECK_EQ(rl_parse(&rl_syntaxes[RL_LIM_LEAKY], 6, dry, drylens, &req, err), 0);
    CHECK_EQ(rl_parse(&rl_syntaxes_ro[RL_LIM_LEAKY], 6, dry, drylens, &req, err), -1);
    CHECK_STR(err, "ERR 'DRYRUN': not an option of rl.leaky_ro");
    dry[5] = "BLOCK";
    drylens[5] = 5;
    CHECK_EQ(rl_parse(&rl_syntaxes_ro[RL_LIM_LEAKY], 6, dry, drylens, &req, err), -1);
    CHECK_STR(err, "ERR 'BLOCK': not an option of rl.leaky_ro");
    CHECK_EQ(rl_parse(&rl_syntaxes_ro[RL_LIM_LEAKY], 5, dry, drylens, &req, err), 0);
    CHECK_EQ(req.cost, 2);
    const char *gap[] = {"5", "1000", "MINGAP", "250"};
    size_t gaplens[] = {1, 4, 6, 3};
    CHECK_EQ(rl_parse(&rl_syntaxes[RL_LIM_SLIDINGLOG], 4, gap, gaplens, &req, err), 0);
    CHECK_EQ(req.mingap_ms, 250);
    const char *big[] = {"100001", "1000"};
    size_t biglens[] = {6, 4};
    CHECK_EQ(rl_parse(&rl_syntaxes[RL_LIM_SLIDINGLOG], 2, big, biglens, &req, err), -1);
    char want[RL_ERR_LEN];
    snprintf(want, sizeof want, "ERR limit: must be an integer between 1 and %lld", RL_SLOG_MAX_LIMIT);
    CHECK_STR(err, want);
}

/* Decimal numbers (RL.SMOOTH's permits_per_second and COLDFACTOR): exact millionths, strict syntax, and
 * every error naming the argument. */
static void test_decimals(void) {
    static const struct {
        const char *text;
        int64_t millionths; /* -1: refused */
    } cases[] = {
        {"0", 0}, {"1", 1000000}, {"0.5", 500000}, {"2.25", 2250000}, {"0.000001", 1}, {"12.000000", 12000000},
        {"999999999999.999999", 999999999999999999LL}, {"1000000000000", -1}, {"0.0000001", -1}, {"00.5", -1},
        {"01", -1}, {".5", -1}, {"1.", -1}, {"-1", -1}, {"+1", -1}, {"1e3", -1}, {"1E3", -1}, {" 1", -1},
        {"1 ", -1}, {"", -1}, {"inf", -1}, {"nan", -1}, {"0x10", -1}, {"1.2.3", -1}, {"1,5", -1}, {".", -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t v = -7;
        int rc = rl_parse_decimal(cases[i].text, strlen(cases[i].text), &v);
        if (!check_record(rc == (cases[i].millionths < 0 ? -1 : 0), __FILE__, __LINE__, cases[i].text)) continue;
        if (rc == 0) CHECK_EQ(v, cases[i].millionths);
    }
    const rl_syntax *syn = &rl_syntaxes[RL_LIM_SMOOTH];
    const char *ok[] = {"0.5", "WARMUP", "4000", "coldfactor", "2.5", "MAXWAIT", "100", "COST", "3"};
    size_t oklens[9];
    for (int i = 0; i < 9; i++) oklens[i] = strlen(ok[i]);
    rl_request req;
    char err[RL_ERR_LEN];
    CHECK_EQ(rl_parse(syn, 9, ok, oklens, &req, err), 0);
    CHECK(req.params[0] == 500000 && req.params[1] == 4000 && req.params[2] == 2500000 && req.maxwait_ms == 100);
    CHECK(req.cost == 3 && req.flags == (RL_F_WARMUP | RL_F_COLDFACTOR | RL_F_MAXWAIT | RL_F_COST));
    const char *bad_rate[] = {"1e-6"};
    size_t bad_rate_len[] = {4};
    CHECK_EQ(rl_parse(syn, 1, bad_rate, bad_rate_len, &req, err), -1);
    CHECK_STR(err, "ERR permits_per_second: must be a decimal number between 0.000001 and 1000000000");
    const char *bad_cold[] = {"2", "WARMUP", "10", "COLDFACTOR", "0.999999"};
    size_t bad_cold_len[] = {1, 6, 2, 10, 8};
    CHECK_EQ(rl_parse(syn, 5, bad_cold, bad_cold_len, &req, err), -1);
    CHECK_STR(err, "ERR COLDFACTOR: must be a decimal number between 1 and 1000");
    const char *both[] = {"2", "MAXBURST", "10", "WARMUP", "10"};
    size_t both_len[] = {1, 8, 2, 6, 2};
    CHECK_EQ(rl_parse(syn, 5, both, both_len, &req, err), -1);
    CHECK_STR(err, "ERR WARMUP: cannot be combined with MAXBURST");
    const char *zero[] = {"2", "COST", "0"};
    size_t zero_len[] = {1, 4, 1};
    CHECK_EQ(rl_parse(syn, 3, zero, zero_len, &req, err), -1);
    CHECK_STR(err, "ERR COST: must be an integer between 1 and 1000000000000");
}

/* Every table of the module: a value's option names its value ("n"), a flag names none; exclusions are
 * mutual; distinct options have distinct bits. */
static void test_tables(void) {
    const rl_syntax *tables[2 * RL_NLIMITERS + 2];
    int n = 0;
    for (int i = 0; i < RL_NLIMITERS; i++) {
        tables[n++] = &rl_syntaxes[i];
        tables[n++] = &rl_syntaxes_ro[i];
    }
    tables[n++] = &rl_all_syntax;
    tables[n++] = &rl_all_syntax_ro;
    for (int t = 0; t < n; t++) {
        const rl_syntax *syn = tables[t];
        CHECK(syn->summary && syn->complexity && syn->since);
        for (int i = 0; i < syn->noptions; i++) {
            const rl_option_spec *o = &syn->options[i];
            if (!check_record((o->slot == RL_NO_VALUE) == (o->value == NULL), __FILE__, __LINE__, o->name)) continue;
            /* the length the lookup compares first, and the second letter it compares next, are there */
            if (!check_record(o->name_len == strlen(o->name) && o->name_len >= 2, __FILE__, __LINE__, o->name))
                continue;
            for (int j = 0; j < syn->noptions; j++) {
                const rl_option_spec *p = &syn->options[j];
                if (j == i) continue;
                CHECK(o->flag != p->flag);
                if (!check_record(!(o->conflicts & p->flag) == !(p->conflicts & o->flag), __FILE__, __LINE__, o->name))
                    fprintf(stderr, "     %s: %s and %s do not exclude each other both ways\n", syn->name, o->name,
                            p->name);
            }
        }
    }
    /* RL.ALL's own options: COST n or REFUND n, DRYRUN, WAIT timeout_ms; its read-only form without DRYRUN
     * and WAIT. */
    const char *all[] = {"REFUND", "3", "DRYRUN"};
    size_t all_lens[] = {6, 1, 6};
    rl_request req;
    char err[RL_ERR_LEN];
    CHECK_EQ(rl_parse(&rl_all_syntax, 3, all, all_lens, &req, err), 0);
    CHECK(req.cost == 3 && req.flags == (RL_F_REFUND | RL_F_DRYRUN));
    CHECK_EQ(rl_parse(&rl_all_syntax_ro, 3, all, all_lens, &req, err), -1);
    CHECK_STR(err, "ERR 'DRYRUN': not an option of rl.all_ro");
    const char *wait[] = {"REFUND", "3", "WAIT", "10"};
    size_t wait_lens[] = {6, 1, 4, 2};
    CHECK_EQ(rl_parse(&rl_all_syntax, 4, wait, wait_lens, &req, err), -1);
    CHECK_STR(err, "ERR WAIT: cannot be combined with REFUND");
    CHECK_EQ(rl_parse_clause(&rl_all_syntax, 4, (const char *[]){"COST", "2", "LIMIT", "TOKEN"},
                             (const size_t[]){4, 1, 5, 5}, &req, err),
             2);
}

/* A positional choice (RL.QUOTA's period): its tokens in any case, stored as their index; anything else,
 * a number included, is refused with an error that names the argument and lists the tokens; the options
 * after it parse as usual (OFFSET's negative range, FORCE against REFUND both ways). */
static void test_choices(void) {
    const rl_syntax *syn = &rl_syntaxes[RL_LIM_QUOTA];
    static const struct {
        const char *word;
        int64_t index; /* -1: refused */
    } cases[] = {{"DAY", RL_QUOTA_DAY}, {"day", RL_QUOTA_DAY},   {"Week", RL_QUOTA_WEEK}, {"MONTH", RL_QUOTA_MONTH},
                 {"mOnTh", RL_QUOTA_MONTH}, {"DAYS", -1}, {"DA", -1}, {"", -1}, {"0", -1}, {"1", -1}, {"YEAR", -1},
                 {"DAY ", -1}, {" DAY", -1}, {"MONTHLY", -1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *args[] = {"10", cases[i].word};
        size_t lens[] = {2, strlen(cases[i].word)};
        rl_request req;
        char err[RL_ERR_LEN];
        int rc = rl_parse(syn, 2, args, lens, &req, err);
        if (!check_record(rc == (cases[i].index < 0 ? -1 : 0), __FILE__, __LINE__, cases[i].word)) continue;
        if (rc == 0)
            CHECK_EQ(req.params[1], cases[i].index);
        else
            CHECK_STR(err, "ERR period: must be DAY, WEEK or MONTH");
    }
    const char *day_nul[] = {"10", "DAY\0"}; /* a NUL byte is not the end of the argument */
    size_t day_nul_lens[] = {2, 4};
    rl_request req;
    char err[RL_ERR_LEN];
    CHECK_EQ(rl_parse(syn, 2, day_nul, day_nul_lens, &req, err), -1);
    CHECK_STR(err, "ERR period: must be DAY, WEEK or MONTH");
    const char *full[] = {"1000", "week", "OFFSET", "-840", "COST", "3", "FORCE", "DRYRUN"};
    size_t full_lens[8];
    for (int i = 0; i < 8; i++) full_lens[i] = strlen(full[i]);
    CHECK_EQ(rl_parse(syn, 8, full, full_lens, &req, err), 0);
    CHECK(req.params[0] == 1000 && req.params[1] == RL_QUOTA_WEEK && req.params[2] == -840 && req.cost == 3);
    CHECK_EQ(req.flags, RL_F_OFFSET | RL_F_COST | RL_F_FORCE | RL_F_DRYRUN);
    static const struct {
        const char *args[6];
        const char *error;
    } bad[] = {
        {{"10", "DAY", "OFFSET", "841"}, "ERR OFFSET: must be an integer between -840 and 840"},
        {{"10", "DAY", "OFFSET", "-841"}, "ERR OFFSET: must be an integer between -840 and 840"},
        {{"10", "DAY", "OFFSET", "+60"}, "ERR OFFSET: must be an integer between -840 and 840"},
        {{"10", "DAY", "OFFSET"}, "ERR OFFSET: needs a value"},
        {{"10", "DAY", "FORCE", "REFUND", "1"}, "ERR REFUND: cannot be combined with FORCE"},
        {{"10", "DAY", "REFUND", "1", "FORCE"}, "ERR FORCE: cannot be combined with REFUND"},
        {{"10", "DAY", "ATMOST"}, "ERR 'ATMOST': not an option of rl.quota"},
        {{"10", "DAY", "WAIT", "10"}, "ERR 'WAIT': not an option of rl.quota"},
        {{"0", "DAY"}, "ERR limit: must be an integer between 1 and 1000000000000"},
        {{"10"}, "ERR wrong number of arguments for 'rl.quota' command"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int n = 0;
        size_t lens[6];
        while (n < 6 && bad[i].args[n]) {
            lens[n] = strlen(bad[i].args[n]);
            n++;
        }
        if (!check_record(rl_parse(syn, n, bad[i].args, lens, &req, err) == -1, __FILE__, __LINE__, bad[i].error)) continue;
        CHECK_STR(err, bad[i].error);
    }
    /* The read-only form takes the same choice, and FORCE (it answers what a DRYRUN would), not DRYRUN. */
    const char *ro[] = {"5", "MONTH", "FORCE"};
    size_t ro_lens[] = {1, 5, 5};
    CHECK_EQ(rl_parse(&rl_syntaxes_ro[RL_LIM_QUOTA], 3, ro, ro_lens, &req, err), 0);
    CHECK(req.params[1] == RL_QUOTA_MONTH && req.flags == RL_F_FORCE);
}

int main(void) {
    test_rows();
    test_choices();
    test_tables();
    test_decimals();
    test_clause();
    test_module_syntaxes();
    test_binary();
    test_int64_edges();
    return check_summary("unit_parse");
}
