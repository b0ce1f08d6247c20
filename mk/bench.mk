# Benchmarks (docs/benchmarks.md; scripts/bench/suite.sh runs them, scripts/bench/report.sh writes the report):
#   make bench        the full suite against build/ratelimit.so (about 10 minutes; results in build/bench/)
#   make bench-doc    the same, then docs/benchmarks.png and the tables of docs/benchmarks.md are replaced
# The floor module (scripts/bench/floor-module.c, build/floor.so) is loaded beside the module in the benchmark's
# server as its calibration row; it is never part of build/ratelimit.so.
# make test runs a tiny smoke run (build/bench-smoke/) that checks every figure is produced and every
# baseline decides as its RL.* command; it never asserts anything about speed.
.PHONY: bench bench-doc

FLOOR_MODULE := $(BUILD)/floor.so

$(FLOOR_MODULE): scripts/bench/floor-module.c $(REDIS_INCLUDE)/redismodule.h
	@mkdir -p $(dir $@)
	$(CC) $(MODULE_CFLAGS) -shared -o $@ $<

bench: deps $(MODULE) $(FLOOR_MODULE)
	@scripts/bench/suite.sh

bench-doc: deps $(MODULE) $(FLOOR_MODULE)
	@scripts/bench/suite.sh --doc

# run-tests.sh runs each TEST_PROGRAMS entry without arguments: a one-line wrapper gives it the --smoke.
BENCH_SMOKE := $(BUILD)/bench-smoke.sh

$(BENCH_SMOKE): mk/bench.mk
	@mkdir -p $(dir $@)
	@printf '#!/bin/sh\nexec "%s/scripts/bench/suite.sh" --smoke\n' "$(CURDIR)" >$@
	@chmod +x $@

TEST_DEPS += $(MODULE) $(FLOOR_MODULE) $(BENCH_SMOKE)
TEST_PROGRAMS += $(BENCH_SMOKE)
