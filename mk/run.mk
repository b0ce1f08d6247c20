# run.mk -- `make test` runs tests/check-run.sh: `make run` and `make stop` on free ports (one server
# started, found running, stopped; a port held by another server refused and left alone), offline, and the
# README's redis-cli session under the test clock, printed exactly as README.md shows it.
TEST_DEPS += $(MODULE)
TEST_PROGRAMS += tests/check-run.sh
