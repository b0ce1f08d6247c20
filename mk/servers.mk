# servers.mk -- the server matrix (scripts/servers.sh). `make test` runs every integration program against
# each server of SERVERS: redis-7.0 is the system's redis-server (Debian bookworm); redis-8.0 and
# valkey-8.1 are built from Debian trixie's source packages into build/servers/<name>/ (about 1 minute
# each on 2 cores, 15 MB each; skipped when already built).
#
#   make servers                    build (or check) every server of SERVERS
#   make test SERVERS=redis-7.0     only the system's server: a quick local run
#
# Where the sources come from (scripts/debian-source.sh): Debian's archive, every revision its trixie,
# trixie-updates and trixie-security Sources indexes name, newest first, each file checked against the
# SHA256 the index publishes; else the checksummed copies in ../shared/debian-src/ beside the clone
# (RL_DEBIAN_SRC=DIR names another folder). The rule when neither has a server's source:
#   - no fallback folder (a user's clone): the server is skipped, and the summary of `make test` says so
#     and why ("valkey-8.1: skipped: REASON"); the other servers are built and tested, and `make test`
#     passes on them;
#   - a fallback folder exists (CI: the clone sits beside shared/), or RL_REQUIRE_SERVERS=1: every server
#     of SERVERS is mandatory, and one that cannot be had or built fails `make servers` and `make test`.
# A server that fails to build once its source is had always fails.
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

# (Only when SERVERS holds a newer server: with redis-7.0 alone there is nothing to compare. And only when
# one of them is tested: scripts/run-tests.sh does not run it when every newer server was skipped.)
ifneq ($(filter-out redis-7.0,$(SERVERS)),)
TEST_DEPS += $(BUILD)/tests/crossversion
TEST_PROGRAMS += $(BUILD)/tests/crossversion
export RL_CROSS_SERVER_PROGRAMS := $(BUILD)/tests/crossversion
endif

# tests/check-debian-source.sh: the rule above and the archive's revisions, offline, against a fake Debian
# archive on 127.0.0.1 (a revision answering 404, another served, a tampered download, a fallback with and
# without a matching checksum); prints "debsrc: N passed, N failed".
TEST_PROGRAMS += tests/check-debian-source.sh
