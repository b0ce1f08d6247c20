# fuzz.mk -- coverage-guided fuzzing (libFuzzer, clang) of the parser and the algorithms. See tests/fuzz/.
#
#   make fuzz                    build build/fuzz/<target> and run each for FUZZ_SECONDS (default 60) on a
#                                copy of its seed corpus in build/fuzz/corpus/<target>; fails on any finding
#   make fuzz FUZZ_SECONDS=600   longer
#   make test                    also runs every target for FUZZ_SHORT_SECONDS (default 10), all at once
#
# Crash inputs go to build/fuzz/artifacts/<target>/; reproduce one with build/fuzz/<target> <file>.

FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_SHORT_SECONDS ?= 10
FUZZ_CFLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L -g -O1 -ffp-contract=off $(WARN) -fno-omit-frame-pointer \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRC))

# Every target links every algorithm, the (Redis-free) parser and the syntax tables, as the unit tests do.
$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/require.h tests/lease_store.h $(UNIT_DEPS) $(ALG_HDR) module/parse.h module/limiters.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $< $(UNIT_DEPS)

.PHONY: fuzz fuzz-build
fuzz-build: $(FUZZ_BIN)

fuzz: $(FUZZ_BIN)
	@FUZZ_BUILD=$(BUILD)/fuzz FUZZ_CORPUS=$(BUILD)/fuzz/corpus tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_BIN)

# The smoke run of `make test`: run-short.sh takes its settings from the environment.
export FUZZ_SHORT_SECONDS
TEST_DEPS += $(FUZZ_BIN)
TEST_PROGRAMS += tests/fuzz/run-short.sh
