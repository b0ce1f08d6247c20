# servers.mk -- the server matrix (scripts/servers.sh). `make test` runs every integration program against
# each server of SERVERS: redis-7.0 is the system's redis-server (Debian bookworm); redis-8.0 and
# valkey-8.1 are built from Debian trixie's source packages into build/servers/<name>/ (about 1 minute
# each on 2 cores, 15 MB each; skipped when already built).
#
#   make servers                    build (or check) every server of SERVERS
#   make test SERVERS=redis-7.0     only the system's server: a quick local run
#
# Everything else that starts a server (scripts/cluster.sh, the benchmarks, the tests run by hand) takes
# the binaries from REDIS_SERVER and REDIS_CLI, else redis-server and redis-cli from PATH:
#   REDIS_SERVER=$(scripts/servers.sh bindir valkey-8.1)/redis-server build/tests/integration_token
SERVERS ?= redis-7.0 redis-8.0 valkey-8.1

.PHONY: servers
servers: deps
	@scripts/servers.sh build $(SERVERS)

TEST_DEPS += servers

# Limiter data across versions (tests/crossversion.c): an RDB written by 7.0 continues exactly on each newer
# server of SERVERS, and a 7.0 primary replicates to a replica of each. It picks its servers itself, so it
# runs once, not per server.
export SERVERS
$(BUILD)/tests/crossversion: tests/crossversion.c $(HARNESS_SRC) $(HARNESS_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -o $@ $< $(HARNESS_SRC) -lhiredis -lpthread

# (Only when SERVERS holds a newer server: with redis-7.0 alone there is nothing to compare.)
ifneq ($(filter-out redis-7.0,$(SERVERS)),)
TEST_DEPS += $(BUILD)/tests/crossversion
TEST_PROGRAMS += $(BUILD)/tests/crossversion
endif
