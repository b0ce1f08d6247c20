# run.mk -- `make test` runs tests/check-run.sh: `make run` and `make stop` on free ports (one server
# started, found running, stopped; a port held by another server refused and left alone; a port held by a
# listener that never answers, or not as Redis, refused and left alone by make run, make stop and
# scripts/cluster.sh, without a hang), offline, and the README's redis-cli session under the test clock,
# printed exactly as README.md shows it.
TEST_DEPS += $(MODULE)
TEST_PROGRAMS += tests/check-run.sh
