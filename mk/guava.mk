# guava.mk -- RL.SMOOTH replayed on the real Guava RateLimiter (tests/guava/run.sh, part of make test):
# every call of random traces must match Guava's allowed, wait and state bit for bit.
TEST_PROGRAMS += tests/guava/run.sh
