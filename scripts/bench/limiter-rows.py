#!/usr/bin/env python3
"""limiter-rows.py -- the benchmark rows of the module's commands, made from what the running module says
of itself (COMMAND LIST, COMMAND INFO, COMMAND DOCS) and from one table of values
(scripts/bench/values.txt), so that a new limiter gets its rows without an edit to the benchmark.

    scripts/bench/limiter-rows.py --port PORT [--save DIR] [--values FILE] [--key-prefix P] [--explain]
    scripts/bench/limiter-rows.py --from DIR [--values FILE] [--key-prefix P] [--explain]

--port asks the server on 127.0.0.1:PORT (REDIS_CLI, default redis-cli, with --json: Redis 7.0 or later)
and --save keeps its answers in DIR (command-docs.json, command-info.json); --from reads them back.

Rows, in the order of RL.ALL's kinds (TOKEN, LEAKY...), then RL.ALL's:
- a limiter (a command whose arguments are a key, then numbers, then options): one row without options,
  and one per option the table calls a mode. A [A | B | C] block whose every choice is a mode holds the
  default (RL.WINDOW's SLIDING), so there is then no row without one of them;
- RL.ALL (numkeys, keys, options, LIMIT spec...): one row per word of the table's LIMIT (kinds joined by
  commas, each clause with its kind's numbers), and its modes on the first of them.
Read-only forms (COMMAND INFO flag readonly) have no rows. Any other command must be named in the table
with "-", and any argument must have a value there: else the generator stops, naming it.

Output, one line per row, tab-separated: id, label, stats (the command as INFO commandstats names it),
group (the label without "RL."), the command line (keys KEY_PREFIX<id>:__rand_int__, one random key per
request as redis-benchmark and bench-multi fill them in).
"""
import argparse
import json
import os
import subprocess
import sys

VALUES = "scripts/bench/values.txt"
MODULE = "ratelimit"


def stop(message):
    print(f"limiter-rows: {message}", file=sys.stderr)
    sys.exit(1)


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


class Command:
    """One command's arguments, turned into slots: fixed words, or options a row may choose."""

    def __init__(self, name, arguments, values):
        self.name, self.arguments, self.values = name, arguments, values
        self.slots = []     # words, or a list of (token, words) for an option argument
        self.modes = []     # (token, words) of each mode, in the order of the arguments
        self.no_plain = False
        for arg in arguments:
            if arg is limit_spec(arguments):
                self.slots.append(arg)  # RL.ALL's clauses: all_rows fills them
            elif arg["type"] == "oneof" or "token" in arg:
                self.option_slot(arg)
            else:
                if arg["type"] != "key" and arg["name"] != "numkeys":
                    self.numbers(arg)  # a missing value stops the generator in the order of the arguments
                self.slots.append(arg)

    def value(self, name, what):
        if name not in self.values:
            stop(f"no benchmark value for argument {what} of {self.name}: add one to {VALUES}")
        return self.values[name]

    def option_slot(self, arg):
        members = arg["arguments"] if arg["type"] == "oneof" else [arg]
        choices, modes = [], 0
        for m in members:
            if "token" not in m:
                stop(f"{self.name}: argument {m['name']} in {arg['name']} has no token: the generator cannot read it")
            role = self.value(m["token"], f"{m['token']} ({m['name']})")
            takes_value = m["type"] != "pure-token"
            if role[:1] == ["mode"]:
                if len(role) != 1 + takes_value:
                    stop(f"{VALUES}: {m['token']} of {self.name} "
                         + ("takes a value: write 'mode VALUE'" if takes_value else "takes no value: write 'mode'"))
                choices.append((m["token"], [m["token"]] + role[1:]))
                modes += 1
            elif role not in (["-"], ["waits"]):
                stop(f"{VALUES}: {m['token']} of {self.name}: '{' '.join(role)}' is not mode [VALUE], - or waits")
        self.modes += choices
        self.no_plain |= arg["type"] == "oneof" and modes == len(members)
        self.slots.append(choices)

    def words(self, mode, fill):
        """The command line with one mode (or none); fill(arg) gives a fixed slot's words."""
        line = [self.name.upper()]
        for slot in self.slots:
            if isinstance(slot, list):
                line += next((words for token, words in slot if mode and token == mode[0]), [])
            else:
                line += fill(slot)
        return line

    def numbers(self, arg):
        """A number's words: its value; an optional one without a token may be left out with -."""
        words = self.value(arg["name"], arg["name"])
        if words == ["-"] and "optional" in arg.get("flags", []):
            return []
        if len(words) != 1:
            stop(f"{VALUES}: {arg['name']} of {self.name} needs one value, not '{' '.join(words)}'")
        return words


def limiter_rows(cmd, key_prefix):
    base = cmd.name.split(".", 1)[-1]
    modes = ([] if cmd.no_plain else [None]) + cmd.modes
    for mode in modes:
        row_id = base if mode is None else f"{base}_{mode[0].lower()}"
        key = [f"{key_prefix}{row_id}:__rand_int__"]
        line = cmd.words(mode, lambda arg: key if arg["type"] == "key" else cmd.numbers(arg))
        label = " ".join([cmd.name.upper()] + (mode[1] if mode else []))
        yield row_id, label, line


def all_rows(cmd, limiters, key_prefix):
    """RL.ALL: a row per word of LIMIT, each clause its kind's numbers; the modes on the first row."""
    combos = cmd.value("LIMIT", "LIMIT (spec)")
    for n, combo in enumerate(combos):
        kinds = combo.split(",")
        for kind in kinds:
            if f"rl.{kind.lower()}" not in limiters:
                stop(f"{VALUES}: LIMIT {combo}: {kind} is not a limiter of this module ({cmd.name} takes rl.<kind>'s numbers)")
        for mode in [None] + (cmd.modes if n == 0 else []):
            row_id = f"{cmd.name.split('.', 1)[-1]}_{len(kinds)}" + (f"_{mode[0].lower()}" if mode else "")

            def fill(arg):
                if arg["type"] == "key":
                    return [f"{key_prefix}{row_id}:{i}:__rand_int__" for i in range(len(kinds))]
                if arg["name"] == "numkeys":
                    return [str(len(kinds))]
                if arg is limit_spec(cmd.arguments):
                    return [w for kind in kinds for w in ["LIMIT", kind] + limiters[f"rl.{kind.lower()}"]]
                return cmd.numbers(arg)

            line = cmd.words(mode, fill)
            label = " ".join([cmd.name.upper(), "+".join(kinds)] + (mode[1] if mode else []))
            yield row_id, label, line


def limit_spec(arguments):
    return next((a for a in arguments if a.get("token") == "LIMIT" and "multiple" in a.get("flags", [])), None)


def kind_order(docs):
    """The kinds RL.ALL's LIMIT summary names ("TOKEN, LEAKY, ... or SMOOTH, then ..."), in its order."""
    for doc in docs.values():
        spec = limit_spec(doc.get("arguments", []))
        if spec and "summary" in spec:
            names = spec["summary"].split(", then")[0].replace(" or ", ", ").split(", ")
            return [f"rl.{k.strip().lower()}" for k in names]
    return []


def main():
    global VALUES  # the table's path, as the messages name it
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--port", type=int)
    where.add_argument("--from", dest="source", metavar="DIR")
    parser.add_argument("--save", metavar="DIR")
    parser.add_argument("--values", default=VALUES)
    parser.add_argument("--key-prefix", default="b:")
    parser.add_argument("--explain", action="store_true", help="say on stderr what each command got")
    args = parser.parse_args()
    VALUES = args.values
    values = read_values(args.values)
    docs, readonly = server_commands(args)
    order = kind_order(docs)
    names = sorted(docs, key=lambda n: (order.index(n) if n in order else len(order), n))
    limiters, multi, rows = {}, [], []
    for name in names:
        arguments = docs[name].get("arguments", [])
        shape = ("read-only form" if name in readonly
                 else "named in the table: no rows" if values.get(name) == ["-"]
                 else "RL.ALL" if arguments and arguments[0].get("name") == "numkeys" and limit_spec(arguments)
                 else "limiter" if len(arguments) > 1 and arguments[0]["type"] == "key"
                 and "multiple" not in arguments[0].get("flags", []) and "token" not in arguments[1]
                 else None)
        if shape is None:
            stop(f"{name} is neither a limiter (key, numbers, options) nor RL.ALL's shape: "
                 f"name it in {VALUES} with - if it needs no benchmark row")
        if args.explain:
            print(f"limiter-rows: {name}: {shape}", file=sys.stderr)
        if shape == "limiter":
            cmd = Command(name, arguments, values)
            limiters[name] = [w for a in arguments[1:] if "token" not in a and a["type"] != "oneof"
                              for w in cmd.numbers(a)]
            rows += limiter_rows(cmd, args.key_prefix)
        elif shape == "RL.ALL":
            multi.append(Command(name, arguments, values))
    for cmd in multi:
        rows += all_rows(cmd, limiters, args.key_prefix)
    ids = [row[0] for row in rows]
    for row_id in ids:
        if ids.count(row_id) > 1:
            stop(f"two rows are named {row_id}")
    for row_id, label, line in rows:
        print("\t".join([row_id, label, line[0].lower(), label.split(".", 1)[-1], " ".join(line)]))


if __name__ == "__main__":
    main()
