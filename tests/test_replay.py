"""``ct-referee replay``: the text replay, the HTML page, and re-asking real bot processes."""

from __future__ import annotations

import importlib.util
import json
import random
import zlib
from html.parser import HTMLParser
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner

from conftest import DATA, PY, ROOT, bot
from referee.bots.bot import Bot
from referee.bots.limits import Limits
from referee.bots.spawn import BotCommand
from referee.cli import main
from referee.game.rules import Deal
from referee.match.play import Entrant, play_match
from referee.match.reask import Reask
from referee.records.record import RecordDict, read_record
from referee.records.replay import replay_text, seat_lines
from referee.web.replay_html import compact_steps, match_steps, replay_html

GOLDEN = DATA / "golden.json"


def run(*args: str) -> Any:
    return CliRunner().invoke(main, ["replay", *args])


# Text.


def test_golden_ascii_replay() -> None:
    result = run(str(GOLDEN), "--ascii")
    assert result.exit_code == 0, result.output
    assert result.output == (DATA / "golden.txt").read_text()


def test_golden_shows_the_fault_where_fallback_starts() -> None:
    lines = (DATA / "golden.txt").read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  fault: flaky_bot"))
    assert lines[at + 1].endswith("(fallback)") or "(fallback)" in lines[at + 1]
    assert not any("(fallback)" in line for line in lines[:at])


def test_one_hand() -> None:
    result = run(str(GOLDEN), "--ascii", "--hand", "2")
    assert result.exit_code == 0, result.output
    assert "== hand 2 - dealer greedy_bot ==" in result.output
    assert "== hand 1 " not in result.output and "== hand 3 " not in result.output
    assert "totals so far" in result.output
    assert "result" not in result.output.splitlines()


def test_seat_view_hides_the_other_hands() -> None:
    record = read_record(GOLDEN)
    result = run(str(GOLDEN), "--ascii", "--seat", "1")
    assert result.exit_code == 0, result.output
    out = result.output
    first = record["hands"][0]
    assert " ".join(first["hands"][1]) in out
    assert " ".join(first["hands"][0]) not in out and " ".join(first["hands"][2]) not in out
    assert "(8 cards)" in out and "stock" not in out
    assert "fault:" not in out and "(fallback)" not in out
    assert " ".join(first["layout"]) in out


def test_symbols_and_red_suits() -> None:
    lines = list(replay_text(read_record(GOLDEN)))
    deal = next(line for line in lines if line.plain.startswith("  random_bot "))
    assert "♥" in deal.plain or "♦" in deal.plain
    red = [deal.plain[s.start:s.end] for s in deal.spans if "red" in str(s.style)]
    assert red and all(t[1] in "♥♦" for t in red)


@pytest.mark.parametrize("args, message", [
    (["--hand", "9"], "the match has 4 hands"),
    (["--seat", "3"], "seat 3 is not a seat of 3"),
    (["--bot", "python3 bots/greedy_bot.py"], "--bot needs --seat"),
    (["--bot", "no-such-bot-xyz", "--seat", "0"], "not found"),
])
def test_bad_options_are_one_line_errors(args: list[str], message: str) -> None:
    result = run(str(GOLDEN), *args)
    assert result.exit_code != 0
    assert message in result.output
    assert "Traceback" not in result.output


def test_unreadable_files_are_one_line_errors(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text("[1, 2")
    (tmp_path / "b.json").write_text(json.dumps({"format": "chinese-ten-record", "version": 1}))
    for name, message in (("a.json", "not JSON"), ("b.json", "structure")):
        result = run(str(tmp_path / name))
        assert result.exit_code == 1 and message in result.output, result.output
        assert "Traceback" not in result.output


# HTML.


class _Checker(HTMLParser):
    VOID: ClassVar[set[str]] = {"meta", "link", "br", "img", "input", "hr"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.data: dict[str, str] = {}
        self.external: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.external += [v for k, v in attrs if k in ("src", "href") and v]
        if tag not in self.VOID:
            self.stack.append(tag)
        self._id = a.get("id") if a.get("type") == "application/json" else None

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack[-1] == tag, (tag, self.stack)
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        if getattr(self, "_id", None) and self.stack[-1] == "script":
            self.data[self._id] = self.data.get(self._id, "") + data


@pytest.mark.parametrize("name", ["golden.json", "four.json", "two-red.json"])
def test_html_page_holds_every_turn(tmp_path: Path, name: str) -> None:
    record = read_record(DATA / name)
    out = tmp_path / "page.html"
    result = run(str(DATA / name), "--html", str(out))
    assert result.exit_code == 0, result.output
    checker = _Checker()
    checker.feed(out.read_text())
    checker.close()
    assert checker.stack == []
    assert checker.external == []
    assert "http://" not in out.read_text() and "https://" not in out.read_text()
    data = json.loads(checker.data["ct-data"])
    # The page holds the compact steps; its script restores the cards and piles left out
    # (checked in a browser by test_report), so the full steps are checked here.
    full = match_steps(record)
    assert data["steps"] == json.loads(json.dumps(compact_steps(full)))
    steps = full
    assert sum(1 for s in steps if s["turn"] > 0) == 24 * len(record["hands"])
    assert len(steps) == 25 * len(record["hands"])
    n = len(record["players"])
    for k, entry in enumerate(record["hands"], 1):
        dealt = next(s for s in steps if s["hand"] == k and s["turn"] == 0)
        assert dealt["hands"] == entry["hands"] and dealt["stock"] == 24
        played = [s for s in steps if s["hand"] == k and s["turn"] > 0]
        for s, turn in zip(played, entry["turns"], strict=True):
            assert [s["seat"], s["play"][0], s["play"][1], s["turned"][0], s["turned"][1]] == [
                turn["seat"], turn["play"], turn["capture"], turn["turn"], turn["turn_capture"]]
            assert sum(map(len, s["hands"])) == 24 - s["turn"] and s["stock"] == 24 - s["turn"]
            assert sum(map(len, s["piles"])) + len(s["table"]) + 2 * (24 - s["turn"]) == 52
        last = played[-1]
        assert last["scores"] == entry["scores"] == last["points"] and last["table"] == []
    assert steps[-1]["totals"] == record["totals"] and len(steps[-1]["totals"]) == n


def test_html_escapes_the_embedded_data() -> None:
    record = read_record(GOLDEN)
    record["players"] = ["</script><b>x", *record["players"][1:]]
    page = replay_html(record)
    assert "</script><b>" not in page
    assert page.count("</script>") == 2


class _Result(HTMLParser):
    """The text of the page's ``#result`` element, and whether it came before the controls."""

    def __init__(self) -> None:
        super().__init__()
        self.text: str | None = None
        self.before_nav = False
        self._in = self._nav = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._nav = self._nav or tag == "nav"
        if dict(attrs).get("id") == "result":
            self._in, self.text, self.before_nav = True, "", not self._nav

    def handle_endtag(self, tag: str) -> None:
        if tag == "div":
            self._in = False

    def handle_data(self, data: str) -> None:
        if self._in:
            self.text = (self.text or "") + data


def result_of(page: str) -> _Result:
    parsed = _Result()
    parsed.feed(page)
    return parsed


def test_html_page_says_the_result_at_the_top(tmp_path: Path) -> None:
    out = tmp_path / "page.html"
    result = run(str(DATA / "four.json"), "--html", str(out))
    assert result.exit_code == 0, result.output
    shown = result_of(out.read_text())
    assert shown.before_nav, "the result is not at the top"
    # best first; a seat that lost by a fault says so, whatever its points
    assert shown.text == ("Result: greedy_bot wins with 329 points · starter 275 · "
                          "random_bot 163 · flaky_bot 193, lost by a fault (garbled)")
    record = read_record(GOLDEN)
    record["ranks"] = [1, 1, *record["ranks"][2:]]
    record["totals"] = [500, 500, *record["totals"][2:]]
    assert result_of(replay_html(record)).text.startswith(  # type: ignore[union-attr]
        f"Result: {record['players'][0]} and {record['players'][1]} share first with 500 points")


def test_the_result_line_escapes_what_a_bot_is_called() -> None:
    record = read_record(GOLDEN)
    record["players"] = ["<img src=x onerror=alert(1)>{data}{js}", *record["players"][1:]]
    page = replay_html(record)
    assert "<img" not in page and page.count("</script>") == 2
    text = result_of(page).text
    assert text is not None and "<img src=x onerror=alert(1)>{data}{js}" in text  # as text


# Re-asking a bot.


def reask(record: RecordDict, seat: int, *command: str) -> tuple[list[str], int]:
    bot = Bot(BotCommand.of([PY, *command], workdir=ROOT))
    r = Reask(record, seat, bot, move_ms=5000)
    r.start()
    findings = list(r)
    return [str(f) for f in findings if f.differs], len(findings)


@pytest.mark.process
@pytest.mark.parametrize("seat, bot", [(1, "bots/greedy_bot.py"), (0, "bots/random_bot.py")])
def test_a_deterministic_bot_agrees_with_its_own_record(seat: int, bot: str) -> None:
    result = run(str(GOLDEN), "--bot", f"{PY} {bot}", "--seat", str(seat), "--sandbox", "none")
    assert result.exit_code == 0, result.output
    record = read_record(GOLDEN)
    asked = sum(1 for line in seat_lines(record, seat) if line.decision)
    assert result.output.splitlines()[-1] == f"{asked} decisions asked, 0 differ"


@pytest.mark.process
def test_fallback_decisions_are_asked_too() -> None:
    record = read_record(GOLDEN)
    result = run(str(GOLDEN), "--bot", f"{PY} bots/greedy_bot.py", "--seat", "2",
                 "--sandbox", "none")
    assert result.exit_code == 0, result.output
    assert "asked all the same" in result.output
    assert "(a fallback turn in the match)" in result.output
    asked = sum(1 for line in seat_lines(record, 2) if line.decision)
    assert result.output.splitlines()[-1].startswith(f"{asked} decisions asked, ")


def _load_random_bot() -> ModuleType:
    spec = importlib.util.spec_from_file_location("random_bot", ROOT / "bots" / "random_bot.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def logged_match(tmp_path_factory: pytest.TempPathFactory) -> tuple[RecordDict, list[str]]:
    """A real match with the logging bot in seat 1: its record and every line seat 1 got."""
    log = tmp_path_factory.mktemp("log") / "seat1.txt"
    entrants = [Entrant("random", (PY, "bots/random_bot.py"), ROOT),
                Entrant("logger", bot("log_bot", str(log)), ROOT),
                Entrant("greedy", (PY, "bots/greedy_bot.py"), ROOT)]
    record = play_match("logged-1", entrants, lambda k: Deal.from_seed(3, f"logged:{k}"),
                        target=400, limits=Limits(move_ms=5000), bot_id="logged-1")
    return record, log.read_text().splitlines()


@pytest.mark.process
def test_seat_lines_are_the_lines_the_seat_got(logged_match: tuple[RecordDict, list[str]]) -> None:
    record, log = logged_match
    assert ["chinese-ten 1", *(x.line for x in seat_lines(record, 1, move_ms=5000)), "quit"] == log


@pytest.mark.process
def test_another_bot_differs_where_it_would_have(
    logged_match: tuple[RecordDict, list[str]],
) -> None:
    """random_bot re-asked in the logging bot's seat: the differences are exactly the requests
    the logged match sent where random_bot, run on that line by itself, answers otherwise."""
    record, log = logged_match
    rb = _load_random_bot()
    seed = zlib.crc32(f"{record['bot_id']}:1".encode())  # the id the bot was told
    expected: list[tuple[int, int, str]] = []
    k = t = 0
    for line in log:
        words = line.split(" ")
        if words[0] == "hand":
            k, t = int(words[1]), 1
        elif words[0] == "turn":
            t += 1
        elif words[0] in ("go", "pick"):
            rng = random.Random(f"{seed}|{line}")
            if words[0] == "go":
                hand, table = rb.cards_after(words[1:], "hand"), rb.cards_after(words[1:], "table")
                mine = rb.choose_move(hand, table, rng)
                card = hand[0]  # the logging bot's move
                found = [c for c in table if rb.can_capture(card, c)]
                theirs = (card, found[0] if found else None)
                sweep = len(found) == 3 and card[0] in "5TJQK"  # any target sweeps all three
                same = mine[0] == card if sweep else mine == theirs
            else:
                same = rb.choose_pick(rb.cards_after(words[1:], "from"), rng) == words[2]
            if not same:
                expected.append((k, t, words[0]))
    differs, asked = reask(record, 1, "bots/random_bot.py")
    assert asked == sum(1 for line in log if line.startswith(("go ", "pick ")))
    assert expected and len(differs) == len(expected)
    for text, (k, t, kind) in zip(differs, expected, strict=True):
        assert text.startswith(f"hand {k} turn {t}: {'played' if kind == 'go' else 'picked'} ")


# Bad input: one line, never a traceback.


def _tampered(tmp_path: Path, change: Any) -> Path:
    record = json.loads(GOLDEN.read_text())
    change(record)
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(record))
    return path


@pytest.mark.parametrize("change, message", [
    (lambda r: r["hands"][1].update(dealer=9), "hand 2: dealer: record says seat 9"),
    (lambda r: r["hands"][0]["turns"][3].update(seat=7), "hand 1 turn 4: turn order"),
    (lambda r: r["hands"][0]["turns"][0].update(capture=["Ks"]), "hand 1 turn 1: capture"),
    (lambda r: r["hands"][0].update(scores=[1, 2]), "hand 1: scores: 2 for 3 seats"),
    (lambda r: r.update(ranks=[1, 2]), "ranks: 2 for 3 seats"),
])
@pytest.mark.parametrize("options", [[], ["--seat", "1"], ["--hand", "2"]])
def test_a_record_that_cannot_be_told_is_refused_in_one_line(
    tmp_path: Path, change: Any, message: str, options: list[str],
) -> None:
    result = run(str(_tampered(tmp_path, change)), "--ascii", *options)
    assert result.exit_code == 1, result.output
    assert result.output.startswith("error: ")
    assert "record does not verify: " in result.output and message in result.output
    assert len(result.output.strip().splitlines()) == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_wrong_results_are_told_with_a_warning(tmp_path: Path) -> None:
    path = _tampered(tmp_path, lambda r: r.update(totals=[t + 1 for t in r["totals"]]))
    result = run(str(path), "--ascii")
    assert result.exit_code == 0, result.output
    warning, told = result.output.split("\n", 1)
    assert warning.startswith("warning: this record does not verify: totals: ")
    golden = (DATA / "golden.txt").read_text()
    assert told.split("\nresult\n")[0] == golden.split("\nresult\n")[0]  # every turn, as before


@pytest.mark.parametrize("command, message", [
    ("", "the bot command is empty"),
    ("   ", "the bot command is empty"),
    ("python3 'bots/greedy_bot.py", "cannot split the command line: No closing quotation"),
    ("python3 bots/nope.py", "'bots/nope.py' does not exist"),
])
def test_bad_bot_commands_are_one_line_errors(command: str, message: str) -> None:
    result = run(str(GOLDEN), "--bot", command, "--seat", "0", "--sandbox", "none")
    assert result.exit_code == 2 if not command.strip() else result.exit_code == 1
    assert message in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.process
def test_a_bot_that_does_not_start_shows_the_end_of_its_stderr(tmp_path: Path) -> None:
    bot = tmp_path / "broken.py"
    bot.write_text("import sys\n"
                   "print('loading the model', file=sys.stderr)\n"
                   "print('error: weights.bin is missing', file=sys.stderr)\n"
                   "sys.exit(3)\n")
    result = run(str(GOLDEN), "--bot", f"{PY} {bot}", "--seat", "0", "--sandbox", "none")
    assert result.exit_code == 1, result.output
    assert "the bot did not start: exited with code 3 before ready" in result.output
    assert "its stderr ends with:" in result.output
    assert result.output.rstrip().endswith("error: weights.bin is missing")
    assert "loading the model" in result.output


@pytest.mark.process
def test_text_from_the_record_and_the_bot_is_printed_as_is(tmp_path: Path) -> None:
    bot = tmp_path / "odd.py"
    bot.write_text("import sys\n"
                   "for line in sys.stdin:\n"
                   "    if line.startswith('chinese-ten'):\n"
                   "        print('ready [bold]odd', flush=True)\n"
                   "    elif line.startswith(('go', 'pick')):\n"
                   "        print('[red]x [/]', flush=True)\n"
                   "    elif line.startswith('quit'):\n"
                   "        break\n")
    record = json.loads(GOLDEN.read_text())
    record["id"] = "[blue]m[/]"
    path = tmp_path / "[red]r.json"
    path.write_text(json.dumps(record))
    result = run(str(path), "--bot", f"{PY} {bot}", "--seat", "0", "--sandbox", "none")
    assert result.exit_code == 0, result.output
    assert "match [blue]m[/]: re-asking seat 0" in result.output
    assert "'[bold]odd'" in result.output
    assert "now answers '[red]x [/]': garbled:" in result.output
    verified = CliRunner().invoke(main, ["replay", "--verify", str(path)])
    assert f"ok  {path}  (4 hands)" in verified.output


def test_an_html_file_that_cannot_be_written_is_a_one_line_error(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    result = run(str(GOLDEN), "--html", str(blocker / "page.html"))
    assert result.exit_code == 1
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.output.startswith("error: ") and "a-file" in result.output


@pytest.mark.process
def test_info_comments_are_stored_without_prefix_and_told_under_their_own_move(
        tmp_path: Path) -> None:
    commenting = [PY, str(ROOT / "tests" / "bots" / "commenting.py")]
    record = play_match("m", [Entrant("talker", commenting, ROOT),
                              Entrant("quiet", [PY, str(ROOT / "bots" / "random_bot.py")], ROOT)],
                        lambda k: Deal.from_seed(2, f"info:{k}"), target=100,
                        limits=Limits(move_ms=2000))
    turns = [turn for entry in record["hands"] for turn in entry["turns"]]
    comments = [c for turn in turns for c in turn.get("info", [])]
    assert comments and all(c.startswith("considering ") for c in comments[:3]), comments
    assert not any(c.startswith("info") for c in comments)
    path = tmp_path / "r.json"
    path.write_text(json.dumps(record))
    told = run(str(path), "--ascii").output.splitlines()
    assert not any("info: info" in line for line in told)
    for i, line in enumerate(told):
        if "info: considering" in line:
            mover = next(x for x in reversed(told[:i]) if "info:" not in x)
            assert "talker" in mover.split(" plays ")[0], (mover, line)
