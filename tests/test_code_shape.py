"""The shape of the code, as review asks it (issue 30): no function of ``referee/`` longer than
:data:`MAX_LINES` (counted from its ``def`` to its end: a command's option decorators above
it are not counted), and no comparison of a string with a format's name or a privilege mode's
word outside the one place that parses it."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

from conftest import ROOT
from referee.bots.policy import Privilege
from referee.tournament.formats import FORMATS

MAX_LINES = 80
PACKAGE = ROOT / "referee"

PARSERS = {
    "format": ({str(name) for name in FORMATS}, {"referee/tournament/config.py",
                                                 "referee/tournament/formats.py"}),
    "privilege mode": ({p.value for p in Privilege} - {"auto"}, {"referee/bots/sandbox.py",
                                                              "referee/bots/command.py"}),
}
"""What may not be compared as a string, and where it is parsed (``auto`` is every mode's
word: the sandbox's, the affinity's, the privilege's; the enum's parser handles it)."""


def modules(package: Path = PACKAGE) -> list[Path]:
    return sorted(package.rglob("*.py"))


@functools.cache
def parsed(path: Path) -> ast.Module:
    """A module's tree, parsed once for every check."""
    return ast.parse(path.read_text(encoding="utf-8"))


def long_functions(package: Path = PACKAGE) -> list[str]:
    """Every function over :data:`MAX_LINES`, as ``path:line name (n lines)``."""
    found = []
    for path in modules(package):
        for node in ast.walk(parsed(path)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_LINES:
                    found.append(f"{path.relative_to(package.parent)}:{node.lineno} {node.name} "
                                 f"({lines} lines)")
    return found


def compared_words(words: set[str], allowed: set[str], package: Path = PACKAGE) -> list[str]:
    """Comparisons (``==``, ``!=``, ``in``, ``not in``) of a string constant among ``words``
    outside the ``allowed`` modules."""
    found = []
    for path in modules(package):
        where = path.relative_to(package.parent).as_posix()
        if where in allowed:
            continue
        for node in ast.walk(parsed(path)):
            if not isinstance(node, ast.Compare):
                continue
            for part in ast.walk(node):
                if isinstance(part, ast.Constant) and part.value in words:
                    found.append(f"{where}:{node.lineno} {ast.unparse(node)}")
    return found


@pytest.mark.heavy  # the whole program's syntax trees, parsed once for the three checks
def test_no_function_is_longer_than_80_lines() -> None:
    assert long_functions() == []


def test_the_checks_find_what_they_look_for(tmp_path: Path) -> None:
    package = tmp_path / "referee"
    package.mkdir()
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_LINES))
    fits = "".join(f"    x{i} = {i}\n" for i in range(MAX_LINES - 1))  # 80 with its def
    (package / "a.py").write_text(f"@decorated\ndef fits() -> None:\n{fits}"
                                  f"def long() -> None:\n{body}")
    (package / "b.py").write_text("if fmt == 'ladder' or mode in ('userns', 'x'):\n    pass\n")
    assert long_functions(package) == [f"referee/a.py:{MAX_LINES + 2} long ({MAX_LINES + 1} lines)"]
    assert len(compared_words({"ladder"}, set(), package)) == 1
    assert len(compared_words({"userns"}, set(), package)) == 1
    assert compared_words({"userns"}, {"referee/b.py"}, package) == []


@pytest.mark.heavy  # the whole program's syntax trees
def test_no_format_nor_privilege_mode_is_compared_as_a_string_outside_its_parser() -> None:
    for what, (words, allowed) in PARSERS.items():
        assert words, what
        assert compared_words(words, allowed) == [], what


MAX_MODULE_LINES = 700
MAX_CLASS_LINES = 300
MAX_DOCSTRING_LINES = 20


def oversized(package: Path = PACKAGE) -> list[str]:
    """Every module over :data:`MAX_MODULE_LINES`, class over :data:`MAX_CLASS_LINES` and
    module docstring over :data:`MAX_DOCSTRING_LINES` (a docstring says what the module is
    for and links to ``docs/`` for the reasoning)."""
    found = []
    for path in modules(package):
        where = path.relative_to(package.parent).as_posix()
        tree = parsed(path)
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_MODULE_LINES:
            found.append(f"{where}: {lines} lines")
        doc = ast.get_docstring(tree) or ""
        if len(doc.splitlines()) > MAX_DOCSTRING_LINES:
            found.append(f"{where}: a docstring of {len(doc.splitlines())} lines")
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                assert node.end_lineno is not None
                size = node.end_lineno - node.lineno + 1
                if size > MAX_CLASS_LINES:
                    found.append(f"{where}:{node.lineno} class {node.name}: {size} lines")
    return found


@pytest.mark.heavy  # the whole program's syntax trees
def test_no_module_class_or_module_docstring_is_too_long() -> None:
    assert oversized() == []


def test_the_size_check_finds_a_long_class_and_docstring(tmp_path: Path) -> None:
    package = tmp_path / "referee"
    package.mkdir()
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_CLASS_LINES))
    doc = "\n".join(["Line."] * (MAX_DOCSTRING_LINES + 1))
    (package / "m.py").write_text(f'"""{doc}"""\n\n\nclass Big:\n{body}\n')
    assert oversized(package) == [
        f"referee/m.py: a docstring of {MAX_DOCSTRING_LINES + 1} lines",
        f"referee/m.py:{MAX_DOCSTRING_LINES + 4} class Big: {MAX_CLASS_LINES + 1} lines"]
