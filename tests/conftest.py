"""What the tests share: paths, the ``/proc`` scanner, an in-process fake player, and the
``process`` marker's check.

The test modules import these names (``from conftest import PY, ROOT, Scripted``); pytest puts
this folder on the path. Three markers sort the suite into lanes (registered in
``pyproject.toml``; ``docs/architecture.md`` says what each lane holds):

- ``process``: the test starts real subprocesses (bots, the CLI). A test that starts one without
  the marker fails at teardown, so ``pytest -m "not process"`` (``make test-fast``) never starts
  a process.
- ``slow``: the test takes more than a few seconds.
- ``deep``: the deep lane, ``make test-deep`` only: statistical runs over many sets, the real
  page-cache and timing-channel audits, long sandbox attacks, browser checks of very large
  reports. ``make test`` runs ``-m "not deep"``.

Hypothesis runs under one of two settings profiles (:func:`examples`): ``everyday``, the
default, with a fifth of each property's examples, and ``deep`` (``CT_TEST_DEEP=1``, as
``make test-deep`` sets) with four times as many.
"""

from __future__ import annotations

import multiprocessing.process
import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from browser import Browser, find_chromium
from hypothesis import settings

from referee.bots.bot import Answer
from referee.bots.limits import Limits
from referee.bots.process import Launcher, bwrap_available
from referee.game.cards import Card
from referee.game.faults import Fault
from referee.game.rules import legal_moves_on
from referee.match.play import Entrant, Player
from referee.protocol.wire import format_forfeit

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
BOTS = TESTS / "bots"
"""The fixture bots: scripts run as ``python3 tests/bots/<name>.py``, sharing ``legal.py``."""
EXAMPLES = ROOT / "bots"
"""The example bots users start from."""
DATA = TESTS / "data"
PY = sys.executable
QUITTER = """\
import sys
for line in sys.stdin:
    if line.startswith('chinese-ten'):
        print('ready quitter', flush=True)
    elif line.startswith(('go', 'pick')):
        sys.exit(3)
"""
"""A bot that starts, then exits at its first decision: a ``crash`` fault every match."""


def tournament_yaml(folder: Path, entrants: dict[str, str | Sequence[str] | dict[str, object]],
                    *, file: str = "t.yaml", **keys: object) -> Path:
    """Writes a tournament configuration, ``folder/file``, and returns its path: ``entrants``
    maps each name to its command (a command line or a list of arguments) or to its entry's
    other keys (``{"command": ..., "workdir": ...}``); ``keys`` are the top-level keys, in the
    order given (``limits={"move_ms": 1000}``, ``preflight="off"``), ``entrants`` after them.
    The file is real YAML, as ``yaml.safe_dump`` writes it; a test of the loader's own messages
    (line numbers, spelling) writes its text by hand instead."""
    rows = [{"name": name, **(spec if isinstance(spec, dict) else
                              {"command": spec if isinstance(spec, str) else list(spec)})}
            for name, spec in entrants.items()]
    path = folder / file
    path.write_text(yaml.safe_dump({**keys, "entrants": rows}, sort_keys=False,
                                   default_flow_style=None, width=1000))
    return path


def quitter_tournament(folder: Path) -> Path:
    """Writes ``quitter.py`` (:data:`QUITTER`) and ``t.yaml``, a two-player tournament of it
    against the greedy example bot (target 100, no sandbox), into ``folder``; returns the
    configuration's path."""
    (folder / "quitter.py").write_text(QUITTER)
    return tournament_yaml(folder, {"quitter": f"{PY} quitter.py",
                                    "greedy": f"{PY} {EXAMPLES}/greedy_bot.py"},
                           players=2, target=100, sandbox="none")


def assert_passes_check(command: str) -> None:
    """``ct-referee check COMMAND`` (run in the repository) passes every step."""
    done = subprocess.run([CLI, "check", command, "--ascii"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^all \d+ steps passed$", done.stdout, re.MULTILINE), done.stdout
CLI = str(Path(PY).parent / "ct-referee")
"""The installed command line."""
GO = "go hand 7c Kd table 3h stock 24 ms 1000"
"""A ``go`` request, for bots that answer any."""

DEEP = os.environ.get("CT_TEST_DEEP", "") not in ("", "0")
"""Whether this is the deep lane (``make test-deep`` sets ``CT_TEST_DEEP=1``)."""

settings.register_profile("everyday", max_examples=20, deadline=None)
settings.register_profile("deep", max_examples=400, deadline=None)
settings.load_profile("deep" if DEEP else "everyday")


def examples(n: int) -> int:
    """A property's number of hypothesis examples: ``n`` is its weight; a fifth of it (at least
    10) in the everyday lane, four times it in the deep lane (``CT_TEST_DEEP=1``)."""
    return 4 * n if DEEP else max(10, n // 5)


collect_ignore = ["bots", "policies"]  # scripts, not tests (some read stdin when imported)


def need_extra(*modules: str, extra: str) -> None:
    """Skip the calling test module, saying which extra to install, unless every one of
    ``modules`` imports (call it before importing them: ``need_extra("numpy", extra="rl")``)."""
    for module in modules:
        pytest.importorskip(module, reason=f"needs the {extra} extra ({module} is missing): "
                                           f"pip install 'ct-referee[{extra}]'")

_shared_cluster: list[Any] = []  # the session's LocalCluster while it runs
_last_cluster_user: list[str] = []  # the node id of the last test that asks for it


@pytest.fixture(scope="session")
def cluster() -> Iterator[Any]:
    """The one Dask ``LocalCluster`` the cluster tests share (started at the first that asks,
    closed after the last, so its workers do not idle through the rest of the session): two
    worker processes of one thread and one ``match`` each. A test that stops, scales or
    rewrites a worker, or needs workers of another kind, starts a cluster of its own."""
    need_extra("distributed", extra="distributed")
    from distributed import LocalCluster

    _shared_cluster.append(LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                        resources={"match": 1}, dashboard_address=None))
    try:
        yield _shared_cluster[0]
    finally:
        _close_shared_cluster()


def _close_shared_cluster() -> None:
    while _shared_cluster:
        _shared_cluster.pop().close()


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """The one headless Chromium of this test worker (tests/browser.py), driven over the
    DevTools protocol: started at the first page asked of it, again after it died."""
    executable = find_chromium()
    if executable is None:
        pytest.skip("chromium is not installed (.ci/run installs it): the report's browser "
                    "tests need it")
    shared = Browser(executable)
    try:
        yield shared
    finally:
        shared.close()


_PROCESS_MODULE = re.compile(r"^pytestmark = \[?\s*pytest\.mark\.process\b", re.MULTILINE)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Under ``-m "not process and ..."`` (the fast lane), a test module whose every test is
    ``process`` (``pytestmark = pytest.mark.process`` at its top) is not imported at all: its
    tests would all be deselected, and imports such as Dask's cost the lane seconds."""
    expression = (config.option.markexpr or "").strip()
    if not (expression == "not process" or expression.startswith("not process and ")):
        return None
    if collection_path.suffix != ".py" or not collection_path.name.startswith("test_"):
        return None
    try:
        return bool(_PROCESS_MODULE.search(collection_path.read_text())) or None
    except OSError:
        return None


@pytest.hookimpl(trylast=True)  # after -m and -k have deselected
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    users = [item.nodeid for item in items if "cluster" in getattr(item, "fixturenames", ())]
    _last_cluster_user[:] = users[-1:]


needs_bwrap = pytest.mark.skipif(not bwrap_available(),
                                 reason="bwrap is missing or cannot build a sandbox here")


def launcher(sandbox: str = "none", **limits: int) -> Launcher:
    """A launcher for a :class:`~referee.bots.bot.Bot` made by hand: in ``sandbox`` (resolved
    now), without a memory limit unless ``limits`` sets one (as a ``Bot`` has by default)."""
    return Launcher.resolve(sandbox, Limits(**{"memory_mb": 0, **limits}))


def bot(name: str, *args: str) -> tuple[str, ...]:
    """The command that runs fixture bot ``tests/bots/<name>.py`` with ``args``."""
    return (PY, str(BOTS / f"{name}.py"), *args)


# -- processes, from /proc ----------------------------------------------------------------------


def _state(pid: int | str) -> tuple[str, int] | None:
    """A process's state letter and process group, or ``None`` if it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    state, _ppid, pgrp = text.rsplit(")", 1)[1].split()[:3]
    return state, int(pgrp)


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live (not zombie) process."""
    found = _state(pid)
    return found is not None and found[0] != "Z"


def live_processes(*, holding: str | None = None, group: int | None = None) -> list[int]:
    """Pids of live (not zombie) processes whose command line holds ``holding`` and, if given,
    that are in process group ``group``."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        state = _state(entry)
        if state is None or state[0] == "Z" or (group is not None and state[1] != group):
            continue
        if holding is not None:
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if holding.encode() not in cmdline:
                continue
        found.append(int(entry))
    return found


# -- an in-process player -----------------------------------------------------------------------


@dataclass
class Scripted:
    """An in-process seat (a :class:`referee.match.play.Player`): answers from a list, then the
    first legal answer; logs every line it is sent. ``gate``, if given, holds its start-up
    until set; ``closed`` is set when the match closes it."""

    answers: list[str]
    lines: list[str] = field(default_factory=list)
    gate: threading.Event | None = None
    closed: threading.Event = field(default_factory=threading.Event)

    def start(self, startup_ms: float, stop: threading.Event | None = None) -> str:
        if self.gate is not None:
            self.gate.wait()
        return "scripted"

    def send(self, line: str) -> None:
        self.lines.append(line)

    def request(self, line: str, timeout_ms: float) -> Answer:
        self.lines.append(line)
        if self.answers:
            return Answer(self.answers.pop(0), 1.0)
        words = line.split()
        if words[0] == "pick":
            return Answer(words[3], 1.0)
        hand = [Card.parse(w) for w in words[2:words.index("table")]]
        table = [Card.parse(w) for w in words[words.index("table") + 1:words.index("stock")]]
        return Answer(str(legal_moves_on(hand, table)[0]), 1.0)

    def forfeit(self, fault: Fault) -> None:
        self.lines.append(format_forfeit(fault))  # as referee.bots.bot.Bot.forfeit, which closes
        self.close()

    def close(self) -> None:
        self.lines.append("(closed)")
        self.closed.set()


@dataclass(frozen=True)
class ScriptedEntrant(Entrant):
    """An entrant whose every match gets a player from ``make`` (default: a fresh
    :class:`Scripted` that plays the first legal move)."""

    make: Callable[[], Player] = field(default=lambda: Scripted([]))

    def spawn(self, *, launcher: Launcher, stderr_path: Path | None,
              hidden: Sequence[Path]) -> Player:
        return self.make()


def scripted(name: str, seat: Scripted) -> ScriptedEntrant:
    """An entrant that plays ``seat`` (one match only: the seat keeps its lines)."""
    return ScriptedEntrant(name, "-", make=lambda: seat)


# -- a protocol test double ---------------------------------------------------------------------


# The protocol test double, ``MockTransport``, is the package's own (synchronous, scripted):
# :mod:`referee.bots.transport`.


# -- the process marker's check -----------------------------------------------------------------

_started = [0]  # subprocess.Popen calls so far
_count_key = pytest.StashKey[int]()
_popen_init = subprocess.Popen.__init__


def _counting_init(self: subprocess.Popen[bytes], *args: object, **kwargs: object) -> None:
    _started[0] += 1
    _popen_init(self, *args, **kwargs)  # type: ignore[arg-type]


subprocess.Popen.__init__ = _counting_init  # type: ignore[method-assign, assignment]
_process_start = multiprocessing.process.BaseProcess.start


def _counting_start(self: multiprocessing.process.BaseProcess) -> None:
    """A process of ``multiprocessing`` (a worker of a :class:`ProcessRunner`, whose bots
    are started by its own ``Popen``, unseen here) counts as a process started."""
    _started[0] += 1
    _process_start(self)


multiprocessing.process.BaseProcess.start = _counting_start  # type: ignore[method-assign]

@pytest.fixture(autouse=True)
def _no_fsync(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """In a test that starts no process, ``os.fsync`` returns at once: the referee's code calls
    it all the same (a test says where it must: test_report_data), but no test in process can
    lose power, and the journal's and the records' syncs were a third of the fast lane's time
    (``pytest --durations``). A ``process`` test syncs for real."""
    if request.node.get_closest_marker("process") is None:
        monkeypatch.setattr(os, "fsync", lambda fd: None)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    item.stash[_count_key] = _started[0]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    yield
    if _last_cluster_user and item.nodeid == _last_cluster_user[0]:
        _close_shared_cluster()
    before = item.stash.get(_count_key, _started[0])
    if _started[0] != before and item.get_closest_marker("process") is None:
        pytest.fail(f"{item.nodeid} starts a subprocess: mark it with @pytest.mark.process",
                    pytrace=False)

