# deb.mk -- the module as a Debian package (docs/operations.md, "Installing the Debian package"):
#   make deb        build/redis-ratelimit_<version>_<arch>.deb from build/ratelimit.so as `make` builds it
#                   (scripts/deb/build.sh: dpkg-shlibdeps and dpkg-deb, Debian's tools only)
#   make deb-lint   the same, then lintian on it: fails on any error
# `make clean` removes it with the rest of build/. `make test` runs tests/check-deb.sh: lintian, then
# dpkg -i (as root), the installed .so loaded into a fresh redis-server on 127.0.0.1 and called, and
# dpkg --purge, whatever happens; it refuses to run where the package is already installed.
.PHONY: deb deb-lint

deb:
	@scripts/deps.sh deb
	@$(MAKE) --no-print-directory $(MODULE)
	@scripts/deb/build.sh $(MODULE) $(BUILD)

deb-lint: deb
	lintian --fail-on error "$$(scripts/deb/build.sh --path $(BUILD))"

TEST_PROGRAMS += tests/check-deb.sh
