# Benchmarks (docs/benchmarks.md; scripts/bench/, one script per job: suite.sh runs the suite's jobs in
# order, report.sh writes the report):
#   make bench        the full suite against build/ratelimit.so (about 15 minutes; results in build/bench/)
#   make bench-doc    the same, then docs/benchmarks.png and the tables of docs/benchmarks.md are replaced
# The rows of the module's commands are generated from its COMMAND DOCS and scripts/bench/values.txt
# (scripts/bench/limiter-rows.py): a new limiter gets its throughput and memory rows without an edit here.
# The floor module (scripts/bench/floor-module.c, build/floor.so) is loaded beside the module in the
# benchmark's server as its calibration row; it is never part of build/ratelimit.so.
# make test runs a tiny smoke run (build/bench-smoke/) that checks every figure is produced, every
# baseline decides as its RL.* command and every module command that writes has a row; it never asserts
# anything about speed.
# The parts beside the suite, each with its own server:
#   make bench-instr [MODULES="old.so new.so"]   instructions per call inside call(), under callgrind
#   make bench-ab OLD=old.so NEW=new.so [REPS=5]  paired throughput A/B of two builds
#   make bench-memory                            memory per key (scripts/bench/memory.sh)
#   make bench-wait                              WAIT against a retry loop (10,000 connections)
#   make bench-strict                            the strict failover recipe: a call, then Redis's WAIT 1 100,
#                                                on a primary with one replica, on each server of SERVERS
#                                                (scripts/bench/strict.sh; about 6 minutes)
#   make sliding-accuracy                        RL.WINDOW against an exact sliding window (no server;
#                                                scripts/bench/sliding-accuracy.sh)
.PHONY: bench bench-doc bench-instr bench-ab bench-memory bench-wait bench-strict sliding-accuracy

FLOOR_MODULE := $(BUILD)/floor.so

$(FLOOR_MODULE): scripts/bench/floor-module.c $(REDIS_INCLUDE)/redismodule.h
	@mkdir -p $(dir $@)
	$(CC) $(MODULE_CFLAGS) -shared -o $@ $<

bench: deps $(MODULE) $(FLOOR_MODULE)
	@scripts/bench/suite.sh

bench-doc: deps $(MODULE) $(FLOOR_MODULE)
	@scripts/bench/suite.sh --doc

bench-instr: deps $(MODULE) $(FLOOR_MODULE)
	@scripts/bench/instr.sh $(MODULES)

bench-ab: deps
	@test -n "$(OLD)" -a -n "$(NEW)" || { echo "usage: make bench-ab OLD=old.so NEW=new.so [REPS=5]" >&2; exit 2; }
	@scripts/bench/ab.sh $(OLD) $(NEW) $(REPS)

bench-memory: deps $(MODULE)
	@scripts/bench/memory.sh

bench-wait: deps $(MODULE)
	@scripts/bench/wait.sh

bench-strict: deps servers $(MODULE)
	@scripts/bench/strict.sh 3 3 $(SERVERS)

sliding-accuracy: deps
	@scripts/bench/sliding-accuracy.sh

# run-tests.sh runs each TEST_PROGRAMS entry without arguments: a one-line wrapper gives it the --smoke.
BENCH_SMOKE := $(BUILD)/bench-smoke.sh

$(BENCH_SMOKE): mk/bench.mk
	@mkdir -p $(dir $@)
	@printf '#!/bin/sh\nexec "%s/scripts/bench/suite.sh" --smoke\n' "$(CURDIR)" >$@
	@chmod +x $@

TEST_DEPS += $(MODULE) $(FLOOR_MODULE) $(BENCH_SMOKE)
TEST_PROGRAMS += $(BENCH_SMOKE)
