"""Hints about bot commands: shell syntax that reaches a bot as arguments.

Pure code, no I/O. A bot command is split like a POSIX shell would split it, but it is never run
by a shell: ``python3 bot.py 2> err.log`` starts ``python3`` with the three arguments
``bot.py``, ``2>`` and ``err.log``. :func:`shell_syntax_warning` says so, and how to write it
with ``sh -c`` when a shell is what was meant.

>>> shell_syntax("python3 bot.py | tee log".split())
'|'
>>> shell_syntax_warning("python3 bot.py | tee log").split("write: ")[1]
"sh -c 'python3 bot.py | tee log'"
>>> shell_syntax_warning(["python3", "bot.py", "--depth", "3"]) is None
True
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

_OPERATOR = re.compile(r"^(\|\|?|&&?|;;?|\(|\)|[0-9]*(>>?|<<?|<>|>\||>&|<&)(.*)|&>>?.*)$")
"""Arguments that a shell would have read as a pipe, a list operator, a subshell parenthesis or
a redirection (``|``, ``||``, ``&&``, ``&``, ``;``, ``>``, ``>>``, ``2>``, ``2>&1``, ``>log``,
``&>``, ``<``)."""


def shell_syntax(argv: Sequence[str]) -> str | None:
    """The first argument (after the program) that is shell syntax, or ``None``."""
    for arg in argv[1:]:
        if _OPERATOR.match(arg):
            return arg
    return None


def shell_syntax_warning(command: str | Sequence[str]) -> str | None:
    """One line saying that ``command`` holds shell syntax that is passed to the bot as an
    argument, and how to use ``sh -c`` if a shell was meant; ``None`` when it holds none (or
    when it already starts a shell)."""
    if isinstance(command, str):
        try:
            argv = shlex.split(command)
        except ValueError:
            return None
        text = command.strip()
    else:
        argv = [str(a) for a in command]
        text = " ".join(argv)
    if not argv or argv[0].rsplit("/", 1)[-1] in ("sh", "bash", "dash", "zsh"):
        return None
    found = shell_syntax(argv)
    if found is None:
        return None
    hint = ""
    if found.lstrip("0123456789&").startswith(">") and found[:1] in "2&":
        hint = " (the referee already keeps each bot's stderr: logs/ in a tournament)"
    return (f"{found!r} is shell syntax, but bot commands are not run by a shell: it reaches "
            f"the program as an argument; if you meant a shell, write: "
            f"{shlex.join(['sh', '-c', text])}{hint}")
