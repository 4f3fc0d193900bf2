"""The protocol logic of :class:`referee.bots.bot.Bot`, without processes: each test scripts
the bot's side of the wire (:class:`referee.bots.transport.MockTransport`, synchronous: the
lines the ``Bot`` must write, the lines to answer) and the first line the ``Bot`` writes
otherwise fails it. What needs a real process (exits, kills, stderr, limits, the sandbox) is
in ``tests/test_bot.py``."""

from __future__ import annotations

import threading

import pytest

from conftest import GO
from referee.bots.bot import (
    INFO_KEEP,
    INFO_MAX,
    LINE_MAX,
    Answer,
    BotCrash,
    BotGarbled,
    BotStartupError,
    BotTimeout,
)
from referee.bots.transport import MockTransport
from referee.game.faults import Fault, Reason
from referee.protocol.wire import HELLO


def ready(name: str = "mock") -> MockTransport:
    """A script that starts with the handshake."""
    return MockTransport().expect(HELLO, f"ready {name}")


def test_handshake_events_requests_and_quit() -> None:
    t = (ready("mock 1.0").expect("match id m1 seat 0").expect(GO, "7c 3h")
         .expect("pick 7c from 7h 7d ms 500", "7h").expect("quit"))
    with t.bot() as bot:
        assert bot.start(1000) == "mock 1.0"
        bot.send("match id m1 seat 0")  # queued: it goes out with the request
        answer = bot.request(GO, 1000)
        assert answer == Answer("7c 3h", answer.ms, ())
        assert bot.request("pick 7c from 7h 7d ms 500", 1000).line == "7h"
    t.assert_done()


def test_forfeit_tells_the_fault_then_quits() -> None:
    t = ready().expect(f"forfeit {Fault.TIMEOUT}").expect("quit")
    bot = t.bot()
    bot.start(1000)
    bot.forfeit(Fault.TIMEOUT)
    bot.forfeit(Fault.TIMEOUT)  # idempotent: nothing more is written
    t.assert_done()
    with pytest.raises(BotCrash) as e:
        bot.request(GO, 100)
    assert e.value.code == Reason.NOT_RUNNING


def test_a_write_that_differs_fails_at_once() -> None:
    """The double itself: the first line that is not the expected one ends the script, and the
    ``Bot``'s next read sees the bot gone, without waiting out its clock."""
    t = ready().expect("match id m1 seat 0").expect(GO, "7c")
    with t.bot() as bot:
        bot.start(1000)
        bot.send("match id m2 seat 0")
        # a crash at once, not a timeout after the 10 s clock
        with pytest.raises(BotCrash, match="expected 'match id m1 seat 0', got 'match id m2"):
            bot.request(GO, 10_000)
    with pytest.raises(AssertionError, match="got 'match id m2 seat 0'"):
        t.assert_done()


def test_info_lines_are_kept_cut_and_bounded() -> None:
    infos = [f"info {i} " + "y" * (2000 if i == 0 else 0) for i in range(40)]
    t = ready().expect(GO, *infos, "ok").expect("quit")
    with t.bot() as bot:
        bot.start(1000)
        answer = bot.request(GO, 1000)
    t.assert_done()
    assert answer.line == "ok" and len(answer.info) == INFO_KEEP
    assert answer.info[0].startswith("0 yyy") and len(answer.info[0]) == INFO_MAX
    assert answer.info[INFO_KEEP - 1] == f"{INFO_KEEP - 1} "


def test_info_after_an_answer_goes_with_the_next() -> None:
    t = (ready().expect(GO, "ok", "info after 1").expect(GO, "ok", "info after 2")
         .expect(GO, "ok").expect("quit"))
    with t.bot() as bot:
        bot.start(1000)
        first, second, third = (bot.request(GO, 1000) for _ in range(3))
    t.assert_done()
    assert first.info == ()
    assert (second.info, third.info) == (("after 1",), ("after 2",))


def test_a_wrong_first_line_is_a_startup_fault() -> None:
    t = MockTransport().expect(HELLO, "hello referee").expect("quit")
    with t.bot() as bot, pytest.raises(BotStartupError, match="'hello referee'") as e:
        bot.start(1000)
    assert (e.value.fault, e.value.code, e.value.quoted) == (
        Fault.STARTUP, Reason.NOT_READY, "'hello referee'")


def test_no_ready_in_time() -> None:
    t = MockTransport().expect(HELLO).expect("quit")
    with t.bot() as bot, pytest.raises(BotStartupError, match="no ready within 30 ms") as e:
        bot.start(30)
    assert e.value.code == Reason.NO_ANSWER
    t.assert_done()


def test_the_start_up_wait_is_stopped_by_the_stop_event() -> None:
    t = MockTransport().expect(HELLO).expect("quit")
    stop = threading.Event()
    threading.Timer(0.03, stop.set).start()
    with t.bot() as bot, pytest.raises(BotStartupError, match="stopped before ready") as e:
        bot.start(30_000, stop)
    assert e.value.code == Reason.STOPPED  # stopped, not timed out
    t.assert_done()


def test_an_unset_stop_event_still_times_out() -> None:
    t = MockTransport().expect(HELLO).expect("quit")
    with t.bot() as bot, pytest.raises(BotStartupError, match="no ready within 50 ms") as e:
        bot.start(50, threading.Event())
    assert e.value.code == Reason.NO_ANSWER
    t.assert_done()


def test_a_line_before_the_request_is_unsolicited() -> None:
    t = MockTransport().expect(HELLO, "ready mock", "7c").expect("quit")
    with t.bot() as bot:
        bot.start(1000)
        with pytest.raises(BotGarbled, match="unsolicited line: '7c'") as e:
            bot.request(GO, 1000)
    assert (e.value.code, e.value.quoted) == (Reason.UNSOLICITED, "'7c'")


def test_an_over_long_line_is_garbled() -> None:
    t = ready().expect(GO, "x" * (LINE_MAX + 10)).expect("quit")
    with t.bot() as bot:
        bot.start(1000)
        with pytest.raises(BotGarbled, match=f"line over {LINE_MAX} bytes: 'xxx") as e:
            bot.request(GO, 5000)
    assert (e.value.fault, e.value.code) == (Fault.GARBLED, Reason.LONG_LINE)
    assert len(e.value.detail) < 120


def test_half_a_line_is_a_timeout_that_quotes_it() -> None:
    t = ready().expect(GO, b"7c").expect("quit")
    with t.bot() as bot:
        bot.start(1000)
        with pytest.raises(BotTimeout, match="partial line '7c'") as e:
            bot.request(GO, 20)
    assert (e.value.fault, e.value.code, e.value.quoted) == (
        Fault.TIMEOUT, Reason.PARTIAL_LINE, "'7c'")
