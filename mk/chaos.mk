# chaos.mk -- what memory pressure does to exhausted limiters (scripts/chaos/eviction.py; docs/operations.md,
# "Eviction measured"). Run by hand, since it takes about a minute and builds the newer servers:
#   make chaos        every server of SERVERS x every maxmemory-policy run: the table, printed and written
#                     to build/chaos/eviction.md (CHAOS_ARGS="--limiters 500 --filler 60000" to change it)
# make test runs its smoke form (one server, one policy, 50 limiters; "chaos-smoke: N passed, N failed"):
# the script cannot rot, and its counts add up, and its server is stopped.
.PHONY: chaos

chaos: deps $(MODULE) servers
	@scripts/chaos/eviction.py --servers "$(shell echo $(SERVERS) | tr ' ' ',')" $(CHAOS_ARGS)

# run-tests.sh runs each TEST_PROGRAMS entry without arguments: a one-line wrapper gives it the --smoke.
CHAOS_SMOKE := $(BUILD)/chaos-smoke.sh

$(CHAOS_SMOKE): mk/chaos.mk
	@mkdir -p $(dir $@)
	@printf '#!/bin/sh\nexec "%s/scripts/chaos/eviction.py" --smoke\n' "$(CURDIR)" >$@
	@chmod +x $@

TEST_DEPS += $(MODULE) $(CHAOS_SMOKE)
TEST_PROGRAMS += $(CHAOS_SMOKE)
