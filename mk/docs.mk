# docs.mk -- docs/operations.md stays true: tests/check-docs-acl.sh runs each of its ACL SETUSER lines on
# every server of SERVERS and checks, with ACL DRYRUN and a real call, that every command the server lists
# for the module is granted or refused as the page says; and that the data types it names are the TYPE of
# the keys the module's commands create.
SERVER_TEST_PROGRAMS += tests/check-docs-acl.sh
