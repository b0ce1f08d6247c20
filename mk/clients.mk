# clients.mk -- the client helpers and examples of issue 18 (docs/headers.md), tested by `make test`:
#   clients/python   redis_ratelimit (redis-py) + Flask, Starlette/   clients/python/run-tests.sh
#                    FastAPI, Django; its failure modes against a    clients/python/run-resilience-tests.sh
#                    server the tests stop, pause and restart
#                    its distribution, installed offline into venvs  clients/python/check-package.sh
#                    on a real 3-primary Redis Cluster               clients/python/check-cluster.sh
#   clients/node     the same for Node.js (ioredis) + Express         clients/node/run-tests.sh
#                    + Fastify; its failure modes against a server     clients/node/run-resilience.sh
#                    the tests stop, pause and restart (issue 29)
#                    on a real 3-primary Redis Cluster                clients/node/run-cluster-tests.sh
#   examples/c       a minimal hiredis program                         examples/c/run-test.sh
#   examples/gateway two nginx gateways (Lua) on one Redis            examples/gateway/run-tests.sh
# Each runs against a real redis-server with the module and prints "name: N passed, N failed". Their
# Debian packages come from `scripts/deps.sh clients`; the Node packages from `npm ci` (the lockfile).

NODE_DIR := clients/node
NODE_MODULES_STAMP := $(NODE_DIR)/node_modules/.package-lock.json
C_EXAMPLE := $(BUILD)/examples/ratelimit-example

.PHONY: deps-clients node-modules

deps-clients: deps
	@scripts/deps.sh clients

# npm ci installs exactly the lockfile, and writes node_modules/.package-lock.json last. The package's
# install test (clients/node/test/pack.test.js) installs offline beside the pinned ioredis, whose registry
# entry npm reads to check the peer range: `npm cache add` keeps it in the npm cache beside the tarballs.
$(NODE_MODULES_STAMP): $(NODE_DIR)/package.json $(NODE_DIR)/package-lock.json
	cd $(NODE_DIR) && npm cache add "ioredis@$$(node -p "require('./package-lock.json').packages['node_modules/ioredis'].version")" && \
		npm ci --no-audit --no-fund

node-modules: $(NODE_MODULES_STAMP)

$(C_EXAMPLE): examples/c/ratelimit_example.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -o $@ $< -lhiredis

test: deps-clients
TEST_DEPS += $(MODULE) $(C_EXAMPLE) $(NODE_MODULES_STAMP)
TEST_PROGRAMS += clients/python/run-tests.sh clients/node/run-tests.sh examples/c/run-test.sh \
	examples/gateway/run-tests.sh
TEST_PROGRAMS += clients/python/run-resilience-tests.sh clients/python/check-package.sh \
	clients/python/check-cluster.sh clients/node/run-resilience.sh clients/node/run-cluster-tests.sh
