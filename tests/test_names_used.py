"""Every name ``referee/`` defines is used by the program (issue 40): a function, class,
method, constant or attribute (``self.x = ...``) that only tests read belongs in the tests'
helpers, and one nobody reads goes. Read from the source (``ast``): a name counts as used where
it is read (a name or an attribute loaded) anywhere in ``referee/`` or in the example bots of
``bots/`` (they use the rules engine's API, as every bot author's bot does). Not counted as
definitions: special methods, the fields of a class body (a dataclass's are written out whole),
the members of an enum, and functions a decorator registers (a command, an override)."""

from __future__ import annotations

import ast
import functools
from collections import Counter
from pathlib import Path

import pytest

from conftest import ROOT

USERS = (ROOT / "referee", ROOT / "bots")

CALLED_BY_NAME = ("_route_", "_on_")
"""Methods found by ``getattr`` from a prefix: the report server's routes
(``referee/web/routes.py``), the human player's screen (``referee/match/human.py``)."""

ALLOWED = {
    # what a framework calls: http.server's handler and server, click's group, PettingZoo's
    # AEC environment, ctypes' structures
    "do_GET", "do_HEAD", "log_message", "handle_error", "server_bind", "version_string",
    "daemon_threads", "block_on_close", "format_commands", "get_command", "action_space",
    "observation_space", "action_spaces", "observation_spaces",
    # the API a bot author's code calls (docs/learning.md, docs/writing-a-bot.md)
    "move_action", "pick_action", "mask_list",
    # functools' cache API, which the tests call between cases; MockTransport's script, shipped
    # for bot authors' tests as python-chess ships its engine's (referee/bots/transport.py)
    "cache_clear", "assert_done", "expect",
    # what the tests read of a process, a cgroup and the coordinator's check of folders
    "check_binds", "draining", "io_devices",
    # what the process runner's tests count: matches played on its bridge while workers start
    "bridged",
}
"""Names used from outside the program, each group saying by whom."""

TESTS_ONLY = {
    "COMMON_KEYS", "STEPS", "compact_steps", "owed", "record_luck", "seat_lines", "seal",
    "unchanged", "schedule", "initial",
}
"""Names only the tests read, to move to the tests' helpers (or to be used by the program):
none may join them."""


@functools.cache
def parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _decorated(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Registered by a decorator (a command, an option): anything but a property, a static or
    class method, a cache or an overload."""
    plain = {"property", "staticmethod", "classmethod", "cache", "cached_property", "overload",
             "setter"}
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name not in plain:
            return True
    return False


def _is_enum(node: ast.ClassDef) -> bool:
    return any("Enum" in ast.unparse(base) for base in node.bases)


def definitions(tree: ast.Module) -> list[tuple[str, int]]:
    """The names a module defines at its top and in its classes, with their lines."""
    found: list[tuple[str, int]] = []

    def scan(body: list[ast.stmt], in_class: bool) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                if not (node.name.startswith("__") or _decorated(node)):
                    found.append((node.name, node.lineno))
                if in_class:
                    found.extend((sub.attr, sub.lineno) for sub in ast.walk(node)
                                 if isinstance(sub, ast.Attribute)
                                 and isinstance(sub.ctx, ast.Store)
                                 and isinstance(sub.value, ast.Name) and sub.value.id == "self")
            elif isinstance(node, ast.ClassDef):
                found.append((node.name, node.lineno))
                if not _is_enum(node):
                    scan(node.body, True)
            elif isinstance(node, ast.Assign):
                found.extend((t.id, node.lineno) for t in node.targets
                             if isinstance(t, ast.Name) and not t.id.startswith("__"))
            elif isinstance(node, ast.AnnAssign) and not in_class \
                    and isinstance(node.target, ast.Name):
                found.append((node.target.id, node.lineno))

    scan(tree.body, False)
    return found


def unused(package: Path, users: tuple[Path, ...]) -> list[str]:
    """The names ``package`` defines that nothing in ``users`` reads, as ``path:line name``."""
    read: Counter[str] = Counter()
    for folder in users:
        for path in sorted(folder.rglob("*.py")):
            for node in ast.walk(parsed(path)):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    read[node.id] += 1
                elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                    read[node.attr] += 1
    found = []
    for path in sorted(package.rglob("*.py")):
        for name, line in definitions(parsed(path)):
            if not read[name] and not name.startswith(CALLED_BY_NAME):
                found.append(f"{path.relative_to(package.parent)}:{line} {name}")
    return found


@pytest.mark.heavy  # the whole program's syntax trees
def test_every_name_defined_in_referee_is_used_in_the_program() -> None:
    found = [f for f in unused(ROOT / "referee", USERS)
             if f.split()[-1] not in ALLOWED | TESTS_ONLY]
    assert found == [], "defined but never read by the program: " + ", ".join(found)


@pytest.mark.heavy  # the whole program's syntax trees
def test_the_allowances_are_still_needed() -> None:
    names = {f.split()[-1] for f in unused(ROOT / "referee", USERS)}
    assert (ALLOWED | TESTS_ONLY) - names == set()


def test_the_check_finds_a_write_only_attribute_and_a_dead_function(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "m.py").write_text(
        "import click\n\n"
        "def used() -> int:\n    return 1\n\n"
        "def dead() -> int:\n    return used()\n\n"
        "class Box:\n    size: int = 0\n\n"
        "    def __init__(self) -> None:\n        self.kept = 1\n        self.written = 2\n\n"
        "    def read(self) -> int:\n        return self.kept\n\n"
        "@click.command()\ndef command() -> None:\n    Box().read()\n")
    assert unused(package, (package,)) == ["pkg/m.py:6 dead", "pkg/m.py:14 written"]
