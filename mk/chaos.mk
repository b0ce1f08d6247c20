# chaos.mk -- limiters under memory pressure and across failovers (scripts/chaos/; docs/operations.md,
# "Eviction measured"; docs/cluster.md, "Failover under load").
#   make chaos           every server of SERVERS x every maxmemory-policy run: the eviction table, printed
#                        and written to build/chaos/eviction.md (CHAOS_ARGS="--limiters 500 --filler 60000")
#   make chaos-failover  the failover run (a 3+3 cluster, kill -9 and graceful failovers under load) on every
#                        server of SERVERS, FAILOVER_RUNS times each (default 5; FAILOVER_ARGS adds options,
#                        e.g. "--stall-replica-ms 4000" to see grants lost by a kill)
# make test runs the eviction script's smoke form once (one server, one policy, 50 limiters), and one
# failover run on each server ("chaos-failover: N passed, N failed").
.PHONY: chaos chaos-failover

chaos: deps $(MODULE) servers
	@scripts/chaos/eviction.py --servers "$(shell echo $(SERVERS) | tr ' ' ',')" $(CHAOS_ARGS)

FAILOVER_RUNS ?= 5
chaos-failover: deps $(MODULE) servers
	@rc=0; for s in $(SERVERS); do \
		dir=$$(scripts/servers.sh bindir $$s) || exit 1; \
		REDIS_SERVER=$$dir/redis-server REDIS_CLI=$$dir/redis-cli \
			scripts/chaos/failover.py --runs $(FAILOVER_RUNS) $(FAILOVER_ARGS) || rc=1; \
	done; exit $$rc

# run-tests.sh runs each TEST_PROGRAMS entry without arguments: one-line wrappers give them theirs.
CHAOS_SMOKE := $(BUILD)/chaos-smoke.sh
CHAOS_FAILOVER := $(BUILD)/chaos-failover.sh

$(CHAOS_SMOKE): mk/chaos.mk
	@mkdir -p $(dir $@)
	@printf '#!/bin/sh\nexec "%s/scripts/chaos/eviction.py" --smoke\n' "$(CURDIR)" >$@
	@chmod +x $@

# REDIS_SERVER and REDIS_CLI come from run-tests.sh, server by server.
$(CHAOS_FAILOVER): mk/chaos.mk
	@mkdir -p $(dir $@)
	@printf '#!/bin/sh\nexec "%s/scripts/chaos/failover.py"\n' "$(CURDIR)" >$@
	@chmod +x $@

TEST_DEPS += $(MODULE) $(CHAOS_SMOKE) $(CHAOS_FAILOVER)
TEST_PROGRAMS += $(CHAOS_SMOKE)
SERVER_TEST_PROGRAMS += $(CHAOS_FAILOVER)
