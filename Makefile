# redis-ratelimit: `make` builds build/ratelimit.so; `make run` starts Redis with it on 127.0.0.1:6379 in the
# background (`make stop` stops it); `make test` runs everything CI runs. See README.md.

CC ?= gcc
BUILD := build
MODULE := $(BUILD)/ratelimit.so
REDISMODULE_H ?= $(BUILD)/redismodule.h
REDIS_INCLUDE := $(BUILD)/include

WARN := -Wall -Wextra -Werror
CFLAGS_COMMON := -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -g -ffp-contract=off $(WARN)
MODULE_CFLAGS := $(CFLAGS_COMMON) -fPIC -fvisibility=hidden -I$(REDIS_INCLUDE)
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

ALG_SRC := $(wildcard algorithms/*.c)
ALG_HDR := $(wildcard algorithms/*.h)
MOD_SRC := $(wildcard module/*.c)
MOD_HDR := $(wildcard module/*.h)
UNIT_SRC := $(wildcard tests/unit_*.c)
INTEG_SRC := $(wildcard tests/integration_*.c)
UNIT_BIN := $(patsubst tests/%.c,$(BUILD)/tests/%,$(UNIT_SRC))
UNIT_SAN_BIN := $(patsubst tests/%.c,$(BUILD)/tests/san/%,$(UNIT_SRC))
INTEG_BIN := $(patsubst tests/%.c,$(BUILD)/tests/%,$(INTEG_SRC))
HARNESS_SRC := tests/server.c tests/clients.c
HARNESS_HDR := tests/server.h tests/clients.h tests/check.h tests/rng.h tests/rl_checks.h tests/suite.h tests/effect_checks.h tests/lease_model.h tests/lock_checks.h

# Fragments under mk/ add their own targets, and extend TEST_DEPS (built before the run), TEST_PROGRAMS
# (run once by scripts/run-tests.sh: each prints "name: N passed, N failed") and SERVER_TEST_PROGRAMS (run
# like the integration programs: once per server of SERVERS, see mk/servers.mk).
TEST_DEPS :=
TEST_PROGRAMS :=
SERVER_TEST_PROGRAMS :=

.PHONY: all deps run stop test unit integration clean

all: $(MODULE)

deps:
	@scripts/deps.sh

# The header comes from Debian's redis source package of the installed server's version, unless
# REDISMODULE_H names one.
$(BUILD)/redismodule.h:
	@scripts/fetch-redismodule-h.sh $@

$(REDIS_INCLUDE)/redismodule.h: $(REDISMODULE_H)
	@mkdir -p $(REDIS_INCLUDE)
	cp $< $@

$(MODULE): $(MOD_SRC) $(MOD_HDR) $(ALG_SRC) $(ALG_HDR) $(REDIS_INCLUDE)/redismodule.h
	@mkdir -p $(BUILD)
	$(CC) $(MODULE_CFLAGS) -shared -o $@ $(MOD_SRC) $(ALG_SRC)

# Unit tests: plain, and again under AddressSanitizer + UndefinedBehaviorSanitizer. Every unit test links
# every algorithm and the (Redis-free) parser.
UNIT_DEPS := $(ALG_SRC) module/parse.c module/syntax.c
$(BUILD)/tests/unit_%: tests/unit_%.c $(UNIT_DEPS) $(ALG_HDR) module/parse.h module/limiters.h tests/check.h tests/rng.h tests/alg_checks.h tests/lease_store.h tests/lease_model.h tests/lock_checks.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -o $@ $< $(UNIT_DEPS)

$(BUILD)/tests/san/unit_%: tests/unit_%.c $(UNIT_DEPS) $(ALG_HDR) module/parse.h module/limiters.h tests/check.h tests/rng.h tests/alg_checks.h tests/lease_store.h tests/lease_model.h tests/lock_checks.h
	@mkdir -p $(dir $@)
	clang $(CFLAGS_COMMON) $(SAN_FLAGS) -o $@ $< $(UNIT_DEPS)

$(BUILD)/tests/integration_%: tests/integration_%.c $(HARNESS_SRC) $(HARNESS_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -o $@ $< $(HARNESS_SRC) -lhiredis -lpthread

# A stand-in for redis-cell (a module with only CL.THROTTLE), loaded before ours by integration_cl_throttle.
FAKE_CELL := $(BUILD)/tests/fake_cell.so
$(FAKE_CELL): tests/fake_cell.c $(REDIS_INCLUDE)/redismodule.h
	@mkdir -p $(dir $@)
	$(CC) $(MODULE_CFLAGS) -shared -o $@ $<
$(BUILD)/tests/integration_cl_throttle: | $(FAKE_CELL)

unit: $(UNIT_BIN) $(UNIT_SAN_BIN)
integration: $(MODULE) $(INTEG_BIN)

# Unit tests, fuzzers and other server-less programs run once; every integration program runs against
# every server of SERVERS (mk/servers.mk; e.g. make test SERVERS=redis-7.0 for a quick local run).
test: deps
	@$(MAKE) --no-print-directory unit integration $(TEST_DEPS)
	@scripts/run-tests.sh --servers "$(SERVERS)" $(UNIT_BIN) $(UNIT_SAN_BIN) $(TEST_PROGRAMS) \
		--each-server $(INTEG_BIN) $(SERVER_TEST_PROGRAMS)

# make run [PORT=6379] [RUN_ARGS=...]: install only what building and running need, build, and start
# redis-server with the module in the background on 127.0.0.1:PORT; RUN_ARGS go right after the module's
# path (module arguments such as test-clock, then redis-server options). make stop [PORT=...] stops it.
# See scripts/run-server.sh.
run:
	@scripts/deps.sh --runtime
	@$(MAKE) --no-print-directory $(MODULE)
	@scripts/run-server.sh start $(RUN_ARGS)

stop:
	@scripts/run-server.sh stop

clean:
	rm -rf $(BUILD)

-include $(wildcard mk/*.mk)
