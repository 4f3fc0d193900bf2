"""The report server (``--serve``) answers only who may read the output folder, and nothing of a
duplicate set before every seating of it has ended (issue 37: an entrant's own login fetched the
records and logs of a live set through it, and relayed the deal to its bot).

A real tournament, its bots real sandboxed processes, serves its live report while one of its
bots holds each match at its first move (it stops itself; the test lets it go on): with a set
half played, a login made for the test (another uid, no key) tries every path and trick over TCP
and over the socket and reads the folder and the referee's processes directly, and gets nothing
but refusals; the organiser, with the key the address carries, gets the report and nothing of
the set under way (not its finished seating's record, replay, page or logs, though they are on
disk), and once the set has ended its replay; after the run, the records and logs. Then the
tricks with the key in hand (links, FIFOs, encodings, listings, HEAD), the key's file, the
league's server (the replay of a match whose set has ended) and a browser's aborted requests
(no traceback, ever)."""

from __future__ import annotations

import contextlib
import functools
import gzip
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
import urllib.error
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser import Browser
from served import Client, address_in, report_server

from conftest import CLI, PY, ROOT, TESTS, tournament_yaml
from referee.web.routes import KEY_FILE, Kind, Site, folder_key
from referee.web.serve import ReportServer

pytestmark = pytest.mark.process

ATTACK = (TESTS / "attack_report_server.py").read_text()
SYSTEM_PY = Path("/usr/bin/python3")
PRIZE = "MY-HAND"
"""What the talking bot writes to its stderr at each move, with the request (its cards)."""
LEAKS = (PRIZE, "ctReplay", "ct-data", '"hands"', "ctMatches", "CT_REPORT", "CT_ALIVE",
         "ctEntrant", '"deal"')
HOLDER = """\
import signal, sys

PARTNER = dict(zip("A23456789TJQK", "98765432AT" + "JQK"))
hold, first = sys.argv[1] == "hold", True
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})  # kept pending until waited for
for line in sys.stdin:
    words = line.split()
    if words and words[0] == "chinese-ten":
        print("ready", sys.argv[1], flush=True)
    elif words and words[0] in ("go", "pick"):
        if hold and first:  # each match waits here until the test lets it go on
            first = False
            sys.stderr.write("HOLDING\\n")
            sys.stderr.flush()
            signal.sigwait({signal.SIGUSR1})
        sys.stderr.write(f"MY-HAND {line}")
        sys.stderr.flush()
        if words[0] == "pick":
            print(words[3], flush=True)
            continue
        hand = words[2:words.index("table")]
        table = words[words.index("table") + 1:words.index("stock")]
        move = next((f"{c} {t}" for c in hand for t in table if t[0] == PARTNER[c[0]]), hand[0])
        print(move, flush=True)
    elif words and words[0] == "quit":
        break
"""
"""Both entrants: ``hold`` waits at its first move in each match until it gets ``SIGUSR1``
(it runs as pid 1 of its sandbox, where a signal it sends itself is ignored), saying so in its
stderr; ``talk`` writes its cards to its stderr at each move."""


# -- another login ------------------------------------------------------------------------------


class Login:
    """A login made for the test (``useradd``), as an entrant's own: another uid, no key, not
    in the organiser's group."""

    def __init__(self) -> None:
        if os.geteuid() != 0:
            pytest.skip("needs root to make a second login (useradd)")
        missing = [p for p in ("useradd", "userdel", "runuser") if not shutil.which(p)]
        if missing or not SYSTEM_PY.exists():
            pytest.skip(f"missing {', '.join(missing) or SYSTEM_PY}")
        self.name = f"ct-att-{secrets.token_hex(4)}"
        made = subprocess.run(["useradd", "-r", "-M", "-d", "/nonexistent", "-s",
                               "/usr/sbin/nologin", self.name], capture_output=True, text=True,
                              check=False)
        if made.returncode != 0:
            pytest.skip(f"useradd failed: {made.stderr.strip()[:200]}")
        self.uid = pwd.getpwnam(self.name).pw_uid

    def attack(self, *, folder: Path, ids: list[str], port: int | None = None,
               sock: Path | None = None) -> dict[str, Any]:
        """What the login got of every request of ``attack_report_server.py``."""
        args = {"port": port, "socket": None if sock is None else str(sock), "ids": ids,
                "names": ["holder", "talker"], "folder": str(folder)}
        done = subprocess.run(["runuser", "-u", self.name, "--", "env", "-i",
                               "PATH=/usr/bin:/bin", str(SYSTEM_PY), "-I", "-c", ATTACK,
                               json.dumps(args)], capture_output=True, text=True, timeout=600,
                              cwd="/", check=False)
        assert done.returncode == 0, done.stderr[-3000:]
        result: dict[str, Any] = json.loads(done.stdout)
        assert result["uid"] == self.uid
        return result

    def close(self) -> None:
        subprocess.run(["userdel", self.name], capture_output=True, check=False)


@pytest.fixture
def login() -> Iterator[Login]:
    user = Login()
    yield user
    user.close()


def assert_nothing_got(result: dict[str, Any], key: str | None) -> None:
    """Every request refused, none answered with anything of the folder; every direct read
    refused; the key in no process the login can read."""
    assert len(result["asked"]) > 100
    for what, status, body in result["asked"]:
        assert not status.startswith(("2", "3")), (what, status, body)
        assert not any(leak in body for leak in LEAKS), (what, status, body)
        assert key is None or key not in body, (what, status)
    for path, got in result["read"]:
        assert key is None or key not in str(got), path  # not in a command line or an environ
        if not path.startswith("/proc/"):
            assert str(got).startswith("refused: PermissionError"), (path, got)


# -- a live tournament, held --------------------------------------------------------------------


def journal(out: Path) -> list[str]:
    try:
        text = (out / "results.jsonl").read_text()
    except FileNotFoundError:
        return []
    return [json.loads(line)["id"] for line in text.splitlines() if line.endswith("}")]


def held(run: subprocess.Popen[bytes], log: Path, out: Path, ids: list[str]) -> str:
    """The one of matches ``ids`` at whose first move the holding bot waits, once it does
    (which seating of a set plays first is drawn from the deal secret)."""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        assert run.poll() is None, log.read_text()[-3000:]
        for match_id in ids:
            folder = out / "logs" / match_id
            said = "".join(p.read_text() for p in folder.glob("*-holder.stderr")) \
                if folder.is_dir() else ""
            if "HOLDING" in said:
                return match_id
        time.sleep(0.05)
    raise AssertionError(f"none of {ids} started in time: {log.read_text()[-3000:]}")


def go_on(run: subprocess.Popen[bytes]) -> None:
    """Lets the holding bot go on: ``SIGUSR1`` to its Python process (not to its sandbox), one
    of ``run``'s descendants."""
    parents = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError, IndexError, ValueError):
            parents[int(entry)] = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1]
                                      .split()[1])
    for pid in parents:
        above = pid
        while above in parents and above not in (0, 1, run.pid):
            above = parents[above]
        if above != run.pid:
            continue
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"python" in Path(argv[0].decode()).name.encode() and argv[1:3] == [b"holder.py",
                                                                             b"hold"]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGUSR1)


def until(what: str, check: Any, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


@pytest.fixture
def field() -> Iterator[Path]:
    """Two entrants of one bot (one holds each match at its first move, one writes its cards
    to its stderr), sandboxed as by default: two rounds of one set of two seatings."""
    root = Path(tempfile.mkdtemp(prefix="ct-serve-", dir="/var/tmp"))
    root.chmod(0o755)
    (root / "bots").mkdir(mode=0o755)
    (root / "bots" / "holder.py").write_text(HOLDER)
    tournament_yaml(root, {"holder": {"command": f"{PY} holder.py hold", "workdir": "bots"},
                           "talker": {"command": f"{PY} holder.py talk", "workdir": "bots"}},
                    name="held", players=2, rounds=2, target=100, output="out",
                    concurrency=1, preflight="off", limits={"move_ms": 600000})
    yield root
    shutil.rmtree(root, ignore_errors=True)


def shows(client: Client, path: str, text: str) -> bool:
    """Whether ``path`` is served and holds ``text``."""
    try:
        return text in client.read(path).decode()
    except urllib.error.HTTPError:
        return False


def gated(client: Client, match_id: str) -> list[tuple[str, int, int]]:
    """Every way to a match's data, each with its GET's and HEAD's status."""
    paths = [f"/report/games/{match_id}.html", f"/report/replays/{match_id}.js",
             f"/games/{match_id}.json.gz", f"/games/{match_id}.json", "/results.jsonl"]
    paths += [f"/logs/{match_id}/{seat}-{name}.stderr" for seat in (0, 1)
              for name in ("holder", "talker")]
    return [(p, client.status(p), client.status(p, method="HEAD")) for p in paths]


def test_a_half_played_set_reaches_no_other_login_and_not_even_the_organiser(
        field: Path, login: Login, browser: Browser) -> None:
    out = field / "out"
    with open(field / "log", "wb") as log:
        run = subprocess.Popen([CLI, "tournament", "t.yaml", "--serve", "0"], cwd=field,
                               stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        until("the address printed", lambda: "serving the live report at " in
              (field / "log").read_text())
        text = (field / "log").read_text()
        address = address_in(text[text.index("serving the live report at "):])
        port, key = int(address.split(":")[2].split("/")[0]), address.rstrip("/").split("/")[-1]
        assert (out / KEY_FILE).stat().st_mode & 0o777 == 0o600
        one = ["r1-g001-s01", "r1-g001-s02"]
        first = held(run, field / "log", out, one)
        go_on(run)  # the set's first-played seating plays through
        later = held(run, field / "log", out, [m for m in one if m != first])
        until("the first seating journaled", lambda: journal(out) == [first])
        # r1-g001 is half played: its first-played seating's record and logs are on disk
        assert (out / "games" / f"{first}.json.gz").is_file()
        logs = "".join(p.read_text() for p in (out / "logs" / first).iterdir())
        assert PRIZE in logs
        assert_nothing_got(login.attack(folder=out, port=port, ids=one), key)
        organiser = Client(address)
        assert b"<html" in organiser.read("/report/index.html").lower()
        data = organiser.read("/report/data.js").decode()
        assert "r1-g001" not in data and PRIZE not in data
        refused = gated(organiser, first)
        assert all(get == head == 403 for _, get, head in refused), refused
        go_on(run)
        two = ["r2-g001-s01", "r2-g001-s02"]
        first = held(run, field / "log", out, two)  # r1-g001 has ended
        until("the set journaled", lambda: len(journal(out)) == 2)
        for match_id in one:
            replay = organiser.read(f"/report/replays/{match_id}.js")
            assert replay.startswith(f'ctReplay("{match_id}", '.encode())
            assert b'id="ct-data"' in organiser.read(f"/report/games/{match_id}.html")
            until("the set on the report", functools.partial(
                shows, organiser, "/report/matches/0.js", match_id))
            # while the run goes, the report alone: not the set's record or logs
            assert organiser.status(f"/games/{match_id}.json.gz") == 403
            assert organiser.status(f"/logs/{match_id}/0-holder.stderr") == 403
        page = browser.dom(address, budget_ms=5000)  # led to the report's page
        assert "r1-g001-s01" in page, page[-2000:]
        shown = browser.dom(f"{organiser.base}/report/replay.html#id={later}", budget_ms=5000)
        assert 'class="seat' in shown and "Result: " in shown, shown[-2000:]
        assert_nothing_got(login.attack(folder=out, port=port, ids=[*one, *two]), key)
        go_on(run)
        held(run, field / "log", out, [m for m in two if m != first])  # r2-g001 half played
        until("a third match journaled", lambda: len(journal(out)) == 3)
        refused = gated(organiser, first)
        assert all(get == head == 403 for _, get, head in refused), refused
        assert organiser.status(f"/report/replays/{later}.js") == 200
        go_on(run)
        assert run.wait(timeout=300) == 0, (field / "log").read_text()[-3000:]
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait(timeout=60)
    said = (field / "log").read_text()
    assert "the report server stopped with the run; ct-referee report" in said
    assert "Traceback" not in said
    # the run has ended: its records and logs, to the organiser alone (the same key)
    with report_server(out) as (_, again):
        assert again.rstrip("/").split("/")[-1] == key
        organiser = Client(again)
        record = organiser.read("/games/r2-g001-s01.json.gz")
        assert json.loads(gzip.decompress(record))["id"] == "r2-g001-s01"
        talker = next((out / "logs" / "r2-g001-s01").glob("*-talker.stderr")).name
        assert PRIZE.encode() in organiser.read(f"/logs/r2-g001-s01/{talker}")
        assert len(organiser.read("/results.jsonl").splitlines()) == 4
        port = int(again.split(":")[2].split("/")[0])
        assert_nothing_got(login.attack(folder=out, port=port, ids=["r2-g001-s01"]), key)


# -- the same with a finished folder --------------------------------------------------------------


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished tournament (no sandbox: its bots are not the point here): two sets of two."""
    base = tmp_path_factory.mktemp("finished")
    (base / "holder.py").write_text(HOLDER)
    tournament_yaml(base, {"greedy": f"{PY} {ROOT}/bots/greedy_bot.py",
                           "talker": f"{PY} holder.py talk"},
                    name="done", players=2, rounds=2, target=100, sandbox="none",
                    preflight="off")
    done = subprocess.run([CLI, "tournament", "t.yaml", "-o", "out"], cwd=base,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return base / "out"


def copy_of(finished: Path, into: Path) -> Path:
    out = into / "out"
    shutil.copytree(finished, out, symlinks=True)
    return out


def test_over_a_unix_socket_only_its_owner_connects(finished: Path, tmp_path: Path,
                                                    login: Login) -> None:
    """The socket is made where the organiser says (here a folder every user may write) with
    mode 0600: the other login cannot connect; the organiser needs no key; the socket goes when
    the server stops."""
    sock = Path(tempfile.mkdtemp(prefix="ct-sock-", dir="/var/tmp")) / "report.sock"
    sock.parent.chmod(0o1777)
    try:
        with report_server(finished, "--socket", str(sock)) as (server, line):
            assert f"on the socket {sock} " in line and not (finished / KEY_FILE).exists()
            assert sock.stat().st_mode & 0o777 == 0o600
            got = login.attack(folder=finished, sock=sock, ids=["r1-g001-s01", "r2-g001-s02"])
            assert {status for _, status, _ in got["asked"]} == {
                "cannot connect: PermissionError"}
            assert_nothing_got(got, None)
            with socket.socket(socket.AF_UNIX) as conn:  # the organiser: no key
                conn.connect(str(sock))
                conn.sendall(b"GET /games/r1-g001-s01.json.gz HTTP/1.0\r\n\r\n")
                answer = b"".join(iter(lambda: conn.recv(65536), b""))
            head, _, body = answer.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.0 200 ")
            assert json.loads(gzip.decompress(body))["id"] == "r1-g001-s01"
        assert server.returncode == 0 and not sock.exists()
    finally:
        shutil.rmtree(sock.parent, ignore_errors=True)


def raw(port: int, request: bytes) -> tuple[int, bytes, bytes]:
    """Status, head and body of one raw request (sent whole, then the writing side shut)."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        conn.sendall(request)
        conn.shutdown(socket.SHUT_WR)
        answer = b"".join(iter(lambda: conn.recv(65536), b""))
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ")[1]), head, body


@pytest.fixture
def tricked(finished: Path, tmp_path: Path) -> Iterator[tuple[Path, ReportServer]]:
    """A finished folder whose run has ended, laid with traps: links out of it from every
    folder the server reads, a FIFO where a record is, a folder where a log is; served in
    this process, as after the run."""
    out = copy_of(finished, tmp_path)
    outside = tmp_path / "outside.json.gz"
    outside.write_bytes(gzip.compress(b'{"outside": true}'))
    for lines in ('{"id": "r9-g001-s01"}\n{"id": "r9-g001-s02"}\n'
                  '{"id": "r8-g001-s01"}\n{"id": "r8-g001-s02"}\n',):
        with open(out / "results.jsonl", "a") as f:  # sets that ended: only the traps stop
            f.write(lines)
    (out / "games" / "r9-g001-s01.json.gz").symlink_to(out / ".deal-secret")
    (out / "games" / "r9-g001-s02.json.gz").symlink_to(outside)
    os.mkfifo(out / "games" / "r8-g001-s01.json.gz")
    (out / "report" / "games").mkdir(exist_ok=True)
    (out / "report" / "games" / "r9-g001-s01.html").symlink_to(out / ".deal-secret")
    (out / "report" / "replays").mkdir(exist_ok=True)
    (out / "report" / "replays" / "r9-g001-s01.js").symlink_to(outside)
    (out / "logs" / "r9-g001-s01").symlink_to(tmp_path)  # a whole folder, linked
    (tmp_path / "0-greedy.stderr").write_text("outside the folder\n")
    (out / "logs" / "r8-g001-s01" / "0-greedy.stderr").mkdir(parents=True)
    (out / "report" / "linked.html").symlink_to(out / ".deal-secret")
    server = ReportServer(out, Kind.TOURNAMENT, 0, marker=out / ".ct-referee.json",
                          live=lambda: False)
    server.start()
    yield out, server
    server.close()


def test_with_the_key_no_link_fifo_listing_or_encoding_reaches_past_the_routes(
        tricked: tuple[Path, ReportServer]) -> None:
    out, server = tricked
    assert server.port is not None and server.key is not None
    auth = f"Authorization: Bearer {server.key}\r\n"
    secret = (out / ".deal-secret").read_text().strip()

    def ask(target: str, method: str = "GET") -> tuple[int, bytes]:
        status, _, body = raw(server.port or 0, f"{method} {target} HTTP/1.1\r\n{auth}"
                                                     f"\r\n".encode("latin-1"))
        assert secret.encode() not in body and b"outside" not in body, (target, body)
        assert b"Traceback" not in body
        return status, body

    assert ask("/games/r1-g001-s01.json.gz")[0] == 200  # the key works: the traps are the point
    for target in ("/games/r9-g001-s01.json.gz", "/games/r9-g001-s02.json.gz",
                   "/games/r8-g001-s01.json.gz", "/report/games/r9-g001-s01.html",
                   "/report/replays/r9-g001-s01.js", "/logs/r9-g001-s01/0-greedy.stderr",
                   "/logs/r8-g001-s01/0-greedy.stderr", "/report/linked.html",
                   "/report/games/r9-g001-s02.html", "/report/replays/r9-g001-s02.js"):
        for method in ("GET", "HEAD"):
            assert ask(target, method)[0] == 404, (target, method)
    listings = ("/games/", "/games", "/logs/", "/logs/r1-g001-s01/", "/report/games/",
                "/report/replays/", "/report/matches/", "/preflight/", "//", "/.",
                "/report/.", "/./games/r1-g001-s01.json.gz")
    tricks = ("/.deal-secret", "/.report-key", "/%2Edeal-secret", "/%2e%2e/out/.deal-secret",
              "/games/%2e%2e/.deal-secret", "/games/..%2f.deal-secret", "/report/%2e%2e/"
              "games/r1-g001-s01.json.gz", "/games/r1-g001-s01.json.gz%00",
              "/games/r1-g001-s01.json.gz%2f", "/%252e%252e/.deal-secret",
              "/..%c0%af.deal-secret", "/games/r1-g001-s01%2ejson%2egz/",
              "/report\\..\\.deal-secret", "/report/games/r1-g001-s01.html/x",
              "/logs/r1-g001-s01/.hidden.stderr", "/logs/r1-g001-s01/0-greedy.stderr.bak",
              "/report/%ff", "/tournament.yaml/", "/report/data.js/..")
    for target in listings + tricks:
        for method in ("GET", "HEAD"):
            status, _ = ask(target, method)
            assert status in (302, 400, 404), (target, method, status)
    assert ask("/report/", "HEAD")[0] == 302
    assert ask("http://127.0.0.1/games/r1-g001-s01.json.gz")[0] == 400  # a path, not a URL
    for method in ("POST", "PUT", "DELETE", "OPTIONS", "TRACE", "PATCH"):
        assert ask("/games/r1-g001-s01.json.gz", method)[0] == 501, method
    status, body = ask("/games/r1-g001-s01.json.gz", "HEAD")  # HEAD: the head alone
    assert status == 200 and body == b""
    # percent-encoding of an allowed name is that name (one decoding, then the routes)
    assert ask("/%67ames/r1-g001-s01%2Ejson%2Egz")[0] == 200
    _, head, _ = raw(server.port, f"GET /report/index.html HTTP/1.1\r\n{auth}\r\n".encode())
    modified = next(line for line in head.split(b"\r\n") if line.startswith(b"Last-Modified"))
    status, _, body = raw(server.port, f"GET /report/index.html HTTP/1.1\r\n{auth}If-Modified-"
                                       f"Since: {modified.split(b': ', 1)[1].decode()}\r\n"
                                       f"\r\n".encode())
    assert status == 304 and body == b""


def test_the_key_is_the_folders_own_and_the_first_folder_of_every_address(
        finished: Path, tmp_path: Path) -> None:
    """No cookie: a browser sends a machine's cookies to every port of it, so a page another
    login serves there would get the key. The key is the address's first folder, which the
    report's relative links keep; a script may give it as ``Authorization: Bearer``."""
    out = copy_of(finished, tmp_path)
    first = folder_key(out)
    assert folder_key(out) == first and (out / KEY_FILE).stat().st_mode & 0o777 == 0o600
    (out / KEY_FILE).chmod(0o640)  # another may read it: a new one
    second = folder_key(out)
    assert second != first and (out / KEY_FILE).stat().st_mode & 0o777 == 0o600
    (out / KEY_FILE).unlink()
    (out / KEY_FILE).symlink_to(tmp_path / "planted")  # a link: not followed, replaced
    (tmp_path / "planted").write_text("A" * 43 + "\n")
    assert folder_key(out) not in (second, "A" * 43) and not (out / KEY_FILE).is_symlink()
    server = ReportServer(out, Kind.TOURNAMENT, 0, marker=out / ".ct-referee.json",
                          live=lambda: False)
    server.start()
    try:
        key = server.key
        assert server.port is not None and key is not None and key == folder_key(out)
        assert server.address() == f"http://127.0.0.1:{server.port}/{key}/"
        for wrong in ("/", "/report/index.html", f"/{key[:-1]}/report/index.html",
                      f"/{key}x/report/index.html", f"/report/index.html?key={key}",
                      f"/%{ord(key[0]):02X}{key[1:]}/report/index.html", f"/x/{key}/"):
            status, head, _ = raw(server.port, f"GET {wrong} HTTP/1.1\r\nCookie: "
                                               f"ct-referee={key}\r\n\r\n".encode())
            assert status == 401 and b"Set-Cookie" not in head, wrong
        for target in (f"/{key}", f"/{key}/", f"/{key}/report"):
            status, head, _ = raw(server.port, f"GET {target} HTTP/1.1\r\n\r\n".encode())
            assert status == 302, target
            assert f"\r\nLocation: /{key}/report/index.html\r\n".encode() in head, head
        status, _, body = raw(server.port, f"GET /{key}/report/index.html HTTP/1.1\r\n\r\n"
                                           .encode())
        assert status == 200 and b"<html" in body.lower()
        assert raw(server.port, f"GET /{key}/../.deal-secret HTTP/1.1\r\n\r\n".encode())[0] \
            == 404
        status, _, body = raw(server.port, f"GET /games/r1-g001-s01.json.gz HTTP/1.1\r\n"
                                           f"Authorization: Bearer {key}\r\n\r\n".encode())
        assert status == 200 and json.loads(gzip.decompress(body))["id"] == "r1-g001-s01"
    finally:
        server.close()


def league_folder(finished: Path, into: Path) -> Path:
    """A league's folder made of a finished tournament's: its marker, a page, a journal whose
    second set is half played."""
    out = copy_of(finished, into)
    (out / ".ct-referee.json").unlink()
    (out / ".ct-referee-league.json").write_text(json.dumps(
        {"format": "ct-referee-league", "identity": {"name": "l", "players": 2,
                                                     "seatings": "all"}}))
    lines = [line for line in (out / "results.jsonl").read_text().splitlines()
             if json.loads(line)["id"] != "r2-g001-s02"]
    (out / "results.jsonl").write_text("".join(f"{line}\n" for line in lines))
    shutil.rmtree(out / "report")
    (out / "report").mkdir()
    (out / "report" / "index.html").write_text("<!doctype html><title>l</title>the league\n")
    (out / "report" / "league.json").write_text("{}")
    (out / "report" / "matches.html").write_text("every match\n")  # the lists the league
    (out / "report" / "authors").mkdir()  # appends to as sets end
    (out / "report" / "authors" / "greedy.html").write_text("greedy's matches\n")
    (out / "report" / "authors" / ".hidden.html").write_text("hidden\n")
    (out / "report" / "authors" / "linked.html").symlink_to(out / "standings.json")
    return out


def test_the_leagues_server_shows_the_replay_of_a_match_whose_set_has_ended(
        finished: Path, tmp_path: Path, browser: Browser) -> None:
    out = league_folder(finished, tmp_path)
    with report_server(out) as (_, address):
        page = Client(address)
        assert b"the league" in page.read("/report/index.html")
        replay = page.read("/report/games/r1-g001-s02.html")
        assert b'id="ct-data"' in replay and b"&#8592; league page</a>" in replay
        assert page.read("/report/viewer.js")  # the viewer, from the package
        assert b"&#8592; league page</a>" in page.read("/report/replay.html")  # the one page,
        assert page.read("/report/replays/r1-g001-s02.js").startswith(  # its data drawn
            b'ctReplay("r1-g001-s02"')
        assert page.read("/report/matches.html") == b"every match\n"  # the league's lists
        assert page.read("/report/authors/greedy.html") == b"greedy's matches\n"
        for under_way in ("/report/games/r2-g001-s01.html", "/report/replays/r2-g001-s01.js"):
            assert page.status(under_way) == 403, under_way
        for never in ("/games/r1-g001-s01.json.gz", "/logs/r1-g001-s01/0-greedy.stderr",
                      "/results.jsonl", "/report/matches/0.js", "/standings.json",
                      "/report/authors/.hidden.html", "/report/authors/linked.html",
                      "/report/authors/", "/report/authors/greedy.js",
                      "/report/authors/../../standings.json"):
            assert page.status(never) == 404, never
        shown = browser.dom(f"{page.base}/report/games/r1-g001-s01.html", budget_ms=5000)
        assert 'class="seat' in shown and "Result: " in shown, shown[-2000:]


def test_only_a_leagues_server_serves_the_authors_lists(tmp_path: Path) -> None:
    """``report/authors/<name>.html`` is a league's list of an author's matches: a
    tournament's folder holding one does not serve it (its report has none)."""
    (tmp_path / "report" / "authors").mkdir(parents=True)
    (tmp_path / "report" / "authors" / "a.html").write_text("a's matches\n")
    for kind, status in ((Kind.LEAGUE, 200), (Kind.TOURNAMENT, 404)):
        site = Site(tmp_path, kind, key=None, marker=None, live=lambda: False)
        reply = site.answer("/report/authors/a.html", {})
        reply.close()
        assert reply.status == status, kind


def abort(port: int, request: bytes, *, read: int) -> None:
    """Sends ``request``, reads ``read`` bytes, then resets the connection (as a browser that
    gives up on a page: the server's next write fails)."""
    conn = socket.create_connection(("127.0.0.1", port), timeout=30)
    try:
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        conn.sendall(request)
        if read:
            conn.recv(read)
    finally:
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        conn.close()


@pytest.mark.parametrize("kind", ["tournament", "league"])
def test_a_browsers_aborted_requests_print_no_traceback(finished: Path, tmp_path: Path,
                                                         kind: str) -> None:
    """Issue 38: a ``BrokenPipeError`` traceback from the page server in the league's terminal.
    Requests cut at every point, on a file large enough that the server is still writing."""
    out = copy_of(finished, tmp_path) if kind == "tournament" else \
        league_folder(finished, tmp_path)
    big = out / "report" / "big.html"
    big.write_bytes(b"<p>" + os.urandom(4 << 20).hex().encode())
    with report_server(out) as (server, address):
        page = Client(address)
        port, auth = int(address.split(":")[2].split("/")[0]), f"Bearer {page.key}"
        for _ in range(10):
            abort(port, f"GET /report/big.html HTTP/1.1\r\nAuthorization: {auth}\r\n\r\n"
                  .encode(), read=1000)
            abort(port, f"GET /report/big.html HTTP/1.1\r\nAuthorization: {auth}\r\n\r\n"
                  .encode(), read=0)
            abort(port, b"GET /report/big.html HTTP/1.1\r\nAuthor", read=0)
            abort(port, b"", read=0)
            abort(port, f"HEAD /report/games/r1-g001-s01.html HTTP/1.1\r\nAuthorization: "
                  f"{auth}\r\n\r\n".encode(), read=0)
        assert page.status("/report/index.html") == 200  # still answering
    assert server.stderr is not None
    said = server.stderr.read()
    assert said == "", said[-3000:]


def test_a_port_or_socket_that_cannot_be_had_is_one_line(finished: Path, tmp_path: Path) -> None:
    taken = socket.create_server(("127.0.0.1", 0))
    port = taken.getsockname()[1]
    (tmp_path / "file").write_text("not a socket\n")
    long = tmp_path / ("x" * 120)
    try:
        for argv, said in (
                (["report", str(finished), "--serve", "--port", str(port)],
                 f"error: cannot serve on port {port}: Address already in use"),
                (["report", str(finished), "--serve", "--socket", str(tmp_path / "no" / "s")],
                 "error: cannot serve on the socket "),
                (["report", str(finished), "--serve", "--socket", str(tmp_path / "file")],
                 "exists and is not a socket"),
                (["report", str(finished), "--serve", "--socket", str(long)],
                 "past the 107 a unix socket may have"),
                (["report", str(finished), "--serve", "--socket", "8000"], "--socket"),
                (["tournament", "t.yaml", "--serve", "99999"], "is not a port (0 to 65535)"),
                (["tournament", "t.yaml", "--serve", "here"],
                 "neither a port (0 to 65535) nor a socket's path")):
            done = subprocess.run([CLI, *argv], capture_output=True, text=True, timeout=120,
                                  check=False, cwd=tmp_path)
            assert done.returncode in (1, 2), (argv, done.stdout, done.stderr)
            assert said in done.stderr and "Traceback" not in done.stderr, (argv, done.stderr)
    finally:
        taken.close()


def test_a_run_is_live_while_its_sign_of_life_is_fresh_and_its_report_not_final(
        tmp_path: Path) -> None:
    from referee.web.routes import run_is_live

    report = tmp_path / "report"
    report.mkdir()
    assert not run_is_live(tmp_path)  # no run ever wrote a sign of life
    (report / "alive.js").write_text("window.CT_ALIVE = null;\n")
    assert not run_is_live(tmp_path)
    beat = {"at": time.time(), "every": 5, "dead_after": 30}
    (report / "alive.js").write_text(f"window.CT_ALIVE = {json.dumps(beat)};\n")
    (report / "data.js").write_text('window.CT_REPORT = {"final": false};\n')
    assert run_is_live(tmp_path)
    (report / "alive.js").write_text("window.CT_ALIVE = {torn")
    assert run_is_live(tmp_path)  # what cannot be read counts as live: the stricter rules
    (report / "alive.js").write_text(f"window.CT_ALIVE = {json.dumps(beat | {'at': 1})};\n")
    assert not run_is_live(tmp_path)  # killed: no sign of life for long
    (report / "alive.js").write_text(f"window.CT_ALIVE = {json.dumps(beat)};\n")
    for said in ('{"final": true}', '{"final": false, "halted": {"why": "interrupted"}}'):
        (report / "data.js").write_text(f"window.CT_REPORT = {said};\n")
        assert not run_is_live(tmp_path), said


def test_a_referee_that_is_not_root_serves_its_organiser_alone(finished: Path,
                                                               login: Login) -> None:
    """The organiser is a login of its own (not root): its key file is its own, 0600, and
    another login gets nothing, over TCP or the socket it made."""
    from test_subuid import PATH, Organiser

    organiser = Organiser()
    try:
        out = organiser.root / "out"
        shutil.copytree(finished, out, ignore=shutil.ignore_patterns(KEY_FILE))
        organiser.own()
        out.chmod(0o700)
        sock = organiser.root / "report.sock"
        for extra in ((), ("--socket", str(sock))):
            server = subprocess.Popen(
                ["runuser", "-u", organiser.name, "--", "env", "-i", f"PATH={PATH}",
                 "HOME=/nonexistent", "LANG=C.UTF-8", str(organiser.python), "-c",
                 "from referee.cli import main; main()", "report", str(out), "--serve",
                 "--port", "0", *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True, cwd="/")
            try:
                assert server.stdout is not None
                assert server.stdout.readline().startswith("report: ")
                line = server.stdout.readline()
                if extra:
                    assert sock.stat().st_uid == organiser.uid
                    assert sock.stat().st_mode & 0o777 == 0o600
                    got = login.attack(folder=out, sock=sock, ids=["r1-g001-s01"])
                    assert {s for _, s, _ in got["asked"]} == {
                        "cannot connect: PermissionError"}
                    assert_nothing_got(got, None)
                    continue
                address = address_in(line)
                key = address.rstrip("/").split("/")[-1]
                info = (out / KEY_FILE).stat()
                assert info.st_uid == organiser.uid and info.st_mode & 0o777 == 0o600
                port = int(address.split(":")[2].split("/")[0])
                assert_nothing_got(login.attack(folder=out, port=port, ids=["r1-g001-s01"]),
                                   key)
                record = Client(address).read("/games/r1-g001-s01.json.gz")
                assert json.loads(gzip.decompress(record))["id"] == "r1-g001-s01"
            finally:
                server.terminate()
                server.wait(timeout=30)
    finally:
        organiser.close()
