"""The command table (redis_ratelimit/commands.py) against a live server, both ways: every command of
the module (COMMAND LIST FILTERBY MODULE ratelimit, RL.POLICY's subcommands included) and every token in
its COMMAND DOCS argument tree is in the table, unless excluded with a reason; everything the table
claims is on the server; and each entry's example, run through a real client that records what it
sends, really sends that command and token (and the server accepts it)."""

from typing import Any, Dict, List, Set

import redis
from support import PORT, RedisCase

from redis_ratelimit.commands import COMMANDS, EXCLUDED, Command


def text(word: Any) -> str:
    return word.decode() if isinstance(word, bytes) else str(word)


def pairs(flat: List[Any]) -> Dict[str, Any]:
    """A RESP2 flat [name, value, ...] list as a dict."""
    return {text(flat[i]): flat[i + 1] for i in range(0, len(flat), 2)}


def tokens(arguments: List[Any], out: Set[str]) -> Set[str]:
    """Every `token` in an argument tree (oneof and block arguments nest theirs)."""
    for argument in arguments or []:
        fields = pairs(argument)
        if "token" in fields:
            out.add(text(fields["token"]).upper())
        tokens(fields.get("arguments", []), out)
    return out


def server_commands(r: redis.Redis) -> Dict[str, Set[str]]:
    """{command name in upper case ("RL.POLICY|SET" for a subcommand): its tokens}, from COMMAND DOCS."""
    r.set_response_callback("COMMAND", lambda reply, **options: reply)  # the raw reply, not redis-py's parse
    names = r.execute_command("COMMAND", "LIST", "FILTERBY", "MODULE", "ratelimit")
    out: Dict[str, Set[str]] = {}

    def walk(flat_docs: List[Any]) -> None:
        for name, body in pairs(flat_docs).items():
            fields = pairs(body)
            out[name.upper()] = tokens(fields.get("arguments", []), set())
            walk(fields.get("subcommands", []))

    walk(r.execute_command("COMMAND", "DOCS", *names))
    if set(text(n).upper() for n in names) - set(out):
        raise AssertionError(f"COMMAND DOCS left out {set(text(n).upper() for n in names) - set(out)}")
    return out


class Recording(redis.Redis):
    """A real client that records every command it sends (as upper-case words) before sending it."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.sent: List[List[str]] = []

    def execute_command(self, *args: Any, **options: Any) -> Any:
        self.sent.append([text(word).upper() for word in args])
        return super().execute_command(*args, **options)


def sends(sent: List[List[str]], command: str, token: str = "") -> bool:
    """Whether a recorded call is `command` ("RL.POLICY|SET": RL.POLICY SET) and has `token` among its
    arguments after the command's name."""
    words = command.split("|")
    for call in sent:
        if call[:len(words)] == words and (not token or token in call[len(words):]):
            return True
    return False


class CommandTable(RedisCase):
    def setUp(self) -> None:
        super().setUp()
        self.server = server_commands(self.r)
        self.table: Dict[str, Command] = {c.name: c for c in COMMANDS}

    def test_every_command_and_token_is_in_the_table(self) -> None:
        self.assertIn("RL.TOKEN", self.server)  # the walk found the module's commands
        self.assertIn("RL.POLICY|SET", self.server)
        missing = []
        for name, server_tokens in sorted(self.server.items()):
            if name in EXCLUDED:
                continue
            if name not in self.table:
                missing.append(f"{name}: not in the table")
                continue
            missing += [f"{name}: option {token} not in the table"
                        for token in sorted(server_tokens - set(self.table[name].options))]
        self.assertEqual(missing, [])

    def test_the_table_claims_nothing_the_server_lacks(self) -> None:
        extra = []
        for name, command in sorted(self.table.items()):
            if name not in self.server:
                extra.append(f"{name}: not a command of the server")
                continue
            extra += [f"{name}: {token} is not in its COMMAND DOCS"
                      for token in sorted(set(command.options) - self.server[name])]
        self.assertEqual(extra, [])
        self.assertEqual(set(EXCLUDED) - set(self.server), set())
        self.assertEqual(set(EXCLUDED) & set(self.table), set())

    def test_each_example_sends_its_command_and_token(self) -> None:
        client = Recording(host="127.0.0.1", port=PORT)
        try:
            wrong = []
            for command in COMMANDS:
                for token, example in [("", command.example), *command.options.items()]:
                    client.sent.clear()
                    try:
                        example(client)
                    except redis.ResponseError as err:
                        wrong.append(f"{command.name} {token}: the server refused the example: {err}")
                        continue
                    if not sends(client.sent, command.name, token):
                        wrong.append(f"{command.name} {token}: the example sent {client.sent}")
            self.assertEqual(wrong, [])
        finally:
            client.close()

    def test_a_missing_token_is_found(self) -> None:
        """The comparison can fail: a table without RL.LEAKY's BLOCK is missing exactly that."""
        leaky = self.table["RL.LEAKY"]
        options = {t: e for t, e in leaky.options.items() if t != "BLOCK"}
        self.assertEqual(self.server["RL.LEAKY"] - set(options), {"BLOCK"})
        self.assertFalse(sends([["RL.LEAKY", "K", "10", "1", "1000"]], "RL.LEAKY", "BLOCK"))
