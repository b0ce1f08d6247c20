# recipes.mk -- docs/recipes.md stays true: tests/check-recipes.sh runs its Python blocks against a real
# server in `make test` (Debian's python3-redis, installed by scripts/deps.sh).
TEST_PROGRAMS += tests/check-recipes.sh
