# Redis Cluster tooling (docs/cluster.md): `make cluster` starts 3 primaries + 3 replicas with the module
# on 127.0.0.1:$(CLUSTER_PORT)..+5 and leaves them running; `make cluster-stop` stops them and removes
# their data. tests/integration_cluster.c is picked up by the Makefile's tests/integration_*.c wildcard;
# tests/check-compose.sh validates docker-compose.yml.
CLUSTER_PORT ?= 7000

.PHONY: cluster cluster-stop cluster-status

cluster: deps
	@$(MAKE) --no-print-directory $(MODULE)
	@scripts/cluster.sh start $(CLUSTER_PORT)

cluster-stop:
	@scripts/cluster.sh stop $(CLUSTER_PORT)

cluster-status:
	@scripts/cluster.sh status $(CLUSTER_PORT)

TEST_PROGRAMS += tests/check-compose.sh
