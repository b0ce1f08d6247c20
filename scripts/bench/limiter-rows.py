#!/usr/bin/env python3
"""limiter-rows.py -- the benchmark rows of the module's commands, made from what the running module says
of itself (COMMAND LIST, COMMAND INFO, COMMAND DOCS) and from one table of values
(scripts/bench/values.txt), so that a new limiter gets its rows without an edit to the benchmark.

    scripts/bench/limiter-rows.py --port PORT [--save DIR] [--values FILE] [--key-prefix P] [--explain]
    scripts/bench/limiter-rows.py --from DIR [--values FILE] [--key-prefix P] [--explain]
    scripts/bench/limiter-rows.py --port PORT | --from DIR  --setup PORT2

--port asks the server on 127.0.0.1:PORT (REDIS_CLI, default redis-cli, with --json: Redis 7.0 or later)
and --save keeps its answers in DIR (command-docs.json, command-info.json); --from reads them back.
--setup prints no rows: it sets on the server at 127.0.0.1:PORT2 what the rows need before they run (the
policies of RL.CHECK's rows, RL.POLICY SET, which FLUSHALL keeps), and stops if the server refuses one.
Every script that runs the rows on a server runs it first.

Rows, in the order of RL.ALL's kinds (TOKEN, LEAKY...), then RL.ALL's, then RL.CHECK's (scripts/bench/
row_makers.py makes them; here each command's shape is told):
- a limiter (a command whose arguments are a key, then numbers, then options): one row without options,
  and one per option the table calls a mode. A [A | B | C] block whose every choice is a mode holds the
  default (RL.WINDOW's SLIDING), so there is then no row without one of them;
- RL.ALL (numkeys, keys, options, LIMIT spec...): one row per word of the table's LIMIT (kinds joined by
  commas, each clause with its kind's numbers), and its modes on the first of them;
- RL.CHECK (a policy's name, the key, options): one row per word of the table's policy (kinds joined by
  commas): a policy named by its kinds (TOKEN-LEAKY-WINDOW) whose limits are the clauses RL.ALL's rows
  give those kinds, and its modes on the first of them.
Read-only forms (COMMAND INFO flag readonly) have no rows. Any other command must be named in the table
with "-" (a subcommand, RL.POLICY SET, goes with its command), and any argument must have a value there:
else the generator stops, naming it.

Output, one line per row, tab-separated: id, label, stats (the command as INFO commandstats names it),
group (the label without "RL."), the command line (keys KEY_PREFIX<id>:__rand_int__, one random key per
request as redis-benchmark and bench-multi fill them in).
"""
import argparse
import json
import os
import subprocess
import sys

import row_makers
from row_makers import Command, all_rows, check_rows, limit_spec, limiter_rows, policies, policy_name, stop

MODULE = "ratelimit"


def read_values(path):
    """name -> its words, from the table (# starts a comment line)."""
    values = {}
    with open(path) as table:
        for number, line in enumerate(table, 1):
            words = line.split()
            if not words or words[0].startswith("#"):
                continue
            if words[0] in values:
                stop(f"{path}:{number}: {words[0]} has a value twice")
            values[words[0]] = words[1:]
    return values


def ask(port, *command):
    cli = os.environ.get("REDIS_CLI", "redis-cli")
    done = subprocess.run([cli, "-h", "127.0.0.1", "-p", str(port), "--json", *command],
                          capture_output=True, text=True)
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError:
        stop(f"{' '.join(command)} on port {port}: {done.stdout.strip() or done.stderr.strip()}")


def server_commands(args):
    """(docs, readonly): COMMAND DOCS of the module's commands, and the names of its read-only ones."""
    if args.source:
        with open(os.path.join(args.source, "command-docs.json")) as f:
            docs = json.load(f)
        with open(os.path.join(args.source, "command-info.json")) as f:
            info = json.load(f)
    else:
        names = ask(args.port, "COMMAND", "LIST", "FILTERBY", "MODULE", MODULE)
        if not isinstance(names, list) or not names:
            stop(f"no command of module {MODULE} on port {args.port}: {names}")
        docs = ask(args.port, "COMMAND", "DOCS", *names)
        info = ask(args.port, "COMMAND", "INFO", *names)
        if args.save:
            for name, answer in (("command-docs.json", docs), ("command-info.json", info)):
                with open(os.path.join(args.save, name), "w") as f:
                    json.dump(answer, f, indent=1)
    return docs, {entry[0] for entry in info if "readonly" in entry[2]}


def kind_order(docs):
    """The kinds RL.ALL's LIMIT summary names ("TOKEN, LEAKY, ... or SMOOTH, then ..."), in its order."""
    for doc in docs.values():
        spec = limit_spec(doc.get("arguments", []))
        if spec and "summary" in spec:
            names = spec["summary"].split(", then")[0].replace(" or ", ", ").split(", ")
            return [f"rl.{k.strip().lower()}" for k in names]
    return []


def shape_of(name, arguments, values, readonly):
    """What the generator does with a command (None: it cannot tell, and stops)."""
    if name in readonly:
        return "read-only form"
    if values.get(name.split("|")[0]) == ["-"]:  # a subcommand (RL.POLICY|SET) goes with its command
        return "named in the table: no rows"
    if arguments and arguments[0].get("name") == "numkeys" and limit_spec(arguments):
        return "RL.ALL"
    if policy_name(arguments):
        return "RL.CHECK"
    if len(arguments) > 1 and arguments[0]["type"] == "key" and "multiple" not in arguments[0].get("flags", []) \
            and "token" not in arguments[1]:
        return "limiter"
    return None


def set_up(port, setups):
    """--setup: what the rows need on a server before they run (RL.CHECK's policies), checked."""
    for line in setups:
        answer = ask(port, *line)
        if answer != "OK":
            stop(f"{' '.join(line)} on port {port}: {answer}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--port", type=int)
    where.add_argument("--from", dest="source", metavar="DIR")
    parser.add_argument("--save", metavar="DIR")
    parser.add_argument("--values", default=row_makers.VALUES)
    parser.add_argument("--key-prefix", default="b:")
    parser.add_argument("--setup", type=int, metavar="PORT", help="set what the rows need on that server; no rows")
    parser.add_argument("--explain", action="store_true", help="say on stderr what each command got")
    args = parser.parse_args()
    row_makers.VALUES = args.values  # the table's path, as the messages name it
    values = read_values(args.values)
    docs, readonly = server_commands(args)
    order = kind_order(docs)
    names = sorted(docs, key=lambda n: (order.index(n) if n in order else len(order), n))
    limiters, multi, checks, rows = {}, [], [], []
    for name in names:
        arguments = docs[name].get("arguments", [])
        shape = shape_of(name, arguments, values, readonly)
        if shape is None:
            stop(f"{name} is neither a limiter (key, numbers, options) nor RL.ALL's or RL.CHECK's shape: "
                 f"name it in {args.values} with - if it needs no benchmark row")
        if args.explain:
            print(f"limiter-rows: {name}: {shape}", file=sys.stderr)
        if shape == "limiter":
            cmd = Command(name, arguments, values)
            limiters[name] = [w for a in arguments[1:] if "token" not in a and a["type"] != "oneof"
                              for w in cmd.numbers(a)]
            rows += limiter_rows(cmd, args.key_prefix)
        elif shape in ("RL.ALL", "RL.CHECK"):
            (multi if shape == "RL.ALL" else checks).append(Command(name, arguments, values))
    for cmd in multi:
        rows += all_rows(cmd, limiters, args.key_prefix)
    for cmd in checks:
        rows += check_rows(cmd, limiters, args.key_prefix)
    ids = [row[0] for row in rows]
    for row_id in ids:
        if ids.count(row_id) > 1:
            stop(f"two rows are named {row_id}")
    if args.setup:
        set_up(args.setup, [line for cmd in checks for _, _, line in policies(cmd, limiters)])
        return
    for row_id, label, line in rows:
        print("\t".join([row_id, label, line[0].lower(), label.split(".", 1)[-1], " ".join(line)]))


if __name__ == "__main__":
    main()
