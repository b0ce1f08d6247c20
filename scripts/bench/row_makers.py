"""row_makers.py -- the row makers of scripts/bench/limiter-rows.py, which reads the module's COMMAND DOCS
and the value table and says which shape each command has: here a command's arguments become slots
(Command), and each shape its rows: a limiter's (one per mode), RL.ALL's (one per word of the table's LIMIT,
the clauses its kinds' numbers) and RL.CHECK's (one per word of the table's policy: a policy of those
clauses, which the run sets with RL.POLICY SET before the rows, policies() giving those commands).
"""
import sys

VALUES = "scripts/bench/values.txt"  # the table's path, as the messages name it (limiter-rows.py sets it)


def stop(message):
    print(f"limiter-rows: {message}", file=sys.stderr)
    sys.exit(1)


class Command:
    """One command's arguments, turned into slots: fixed words, or options a row may choose."""

    def __init__(self, name, arguments, values):
        self.name, self.arguments, self.values = name, arguments, values
        self.slots = []     # words, or a list of (token, words) for an option argument
        self.modes = []     # (token, words) of each mode, in the order of the arguments
        self.no_plain = False
        for arg in arguments:
            if arg is limit_spec(arguments) or arg is policy_name(arguments):
                self.slots.append(arg)  # RL.ALL's clauses, RL.CHECK's policy: all_rows, check_rows fill them
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


def kinds_of(cmd, what, combo, limiters):
    """The kinds of one word of the table (TOKEN,WINDOW), each a limiter whose numbers make its clause."""
    kinds = combo.split(",")
    for kind in kinds:
        if f"rl.{kind.lower()}" not in limiters:
            stop(f"{VALUES}: {what} {combo}: {kind} is not a limiter of this module ({cmd.name} takes rl.<kind>'s numbers)")
    return kinds


def clauses(kinds, limiters, names=False):
    """RL.ALL's clauses (LIMIT kind numbers...), or with names a policy's (LIMIT name kind numbers...): a
    limit is named by its kind, and by its place too when its kind is there twice."""
    return [w for i, kind in enumerate(kinds)
            for w in ["LIMIT"] + ([kind.lower() + (str(i + 1) if kinds.count(kind) > 1 else "")] if names else [])
            + [kind] + limiters[f"rl.{kind.lower()}"]]


def all_rows(cmd, limiters, key_prefix):
    """RL.ALL: a row per word of LIMIT, each clause its kind's numbers; the modes on the first row."""
    for n, combo in enumerate(cmd.value("LIMIT", "LIMIT (spec)")):
        kinds = kinds_of(cmd, "LIMIT", combo, limiters)
        for mode in [None] + (cmd.modes if n == 0 else []):
            row_id = f"{cmd.name.split('.', 1)[-1]}_{len(kinds)}" + (f"_{mode[0].lower()}" if mode else "")

            def fill(arg):
                if arg["type"] == "key":
                    return [f"{key_prefix}{row_id}:{i}:__rand_int__" for i in range(len(kinds))]
                if arg["name"] == "numkeys":
                    return [str(len(kinds))]
                if arg is limit_spec(cmd.arguments):
                    return clauses(kinds, limiters)
                return cmd.numbers(arg)

            line = cmd.words(mode, fill)
            label = " ".join([cmd.name.upper(), "+".join(kinds)] + (mode[1] if mode else []))
            yield row_id, label, line


def policies(cmd, limiters):
    """RL.CHECK's policies, one per word of the table's policy value: (kinds, name, the RL.POLICY SET that
    makes it). A policy is named by its kinds (TOKEN-LEAKY-WINDOW), each limit the clause RL.ALL's rows
    give that kind, so that an RL.CHECK row and the RL.ALL row of the same kinds apply the same limits."""
    arg = policy_name(cmd.arguments)
    for combo in cmd.value(arg["name"], f"{arg['name']} (its limits' kinds)"):
        kinds = kinds_of(cmd, arg["name"], combo, limiters)
        name = "-".join(kinds)
        yield kinds, name, ["RL.POLICY", "SET", name] + clauses(kinds, limiters, names=True)


def check_rows(cmd, limiters, key_prefix):
    """RL.CHECK: a row per policy, on keys of its own; the modes on the first row."""
    for n, (kinds, name, _) in enumerate(policies(cmd, limiters)):
        for mode in [None] + (cmd.modes if n == 0 else []):
            row_id = f"{cmd.name.split('.', 1)[-1]}_{len(kinds)}" + (f"_{mode[0].lower()}" if mode else "")

            def fill(arg):
                if arg["type"] == "key":
                    return [f"{key_prefix}{row_id}:__rand_int__"]
                return [name] if arg is policy_name(cmd.arguments) else cmd.numbers(arg)

            line = cmd.words(mode, fill)
            label = " ".join([cmd.name.upper(), "+".join(kinds)] + (mode[1] if mode else []))
            yield row_id, label, line


def limit_spec(arguments):
    return next((a for a in arguments if a.get("token") == "LIMIT" and "multiple" in a.get("flags", [])), None)


def policy_name(arguments):
    """RL.CHECK's shape: a policy's name (a string the table gives), then the one key."""
    if len(arguments) > 1 and arguments[0]["type"] == "string" and arguments[1]["type"] == "key" \
            and arguments[0]["name"] == "policy":
        return arguments[0]
    return None
