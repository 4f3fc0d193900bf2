"""Plays one match between bot processes and returns its record.

:func:`play_match` starts a fresh process for every seat, deals each hand from a deal source,
asks the seat to move for each decision against the clock, applies it under the rules, tells
every bot what happened, and turns any misbehaviour into a recorded fault: the faulting bot is
sent ``forfeit``, stopped, and its seat is played on by a seeded fallback policy.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import random
import secrets
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from referee.bots.bot import Answer, Bot, BotError, CancelSignal
from referee.bots.limits import Limits
from referee.bots.process import BotCommandError, Launcher
from referee.bots.snapshot import Sealed
from referee.bots.spawn import BotCommand
from referee.game.faults import Fault
from referee.game.rules import DEFAULT_TARGET, Deal, Event, Hand, IllegalMoveError, Match, Variant
from referee.protocol import narration
from referee.protocol import wire as protocol
from referee.records.luck import MODEL, model_luck
from referee.records.record import FORMAT, VERSION, FaultDict, RecordDict, TurnDict, deal_to_json

DealSource = Callable[[int], Deal]
"""Gives the deal of match hand ``k`` (1-based)."""
DEFAULT_LIMITS = Limits()


def seat_log(logs_dir: Path, seat: int, name: str) -> Path:
    """Where the stderr of the bot in ``seat`` of a match goes:
    ``<logs_dir>/<seat>-<name>.stderr``.

    >>> seat_log(Path("logs/r1-g001-s01"), 2, "greedy").as_posix()
    'logs/r1-g001-s01/2-greedy.stderr'
    """
    return logs_dir / f"{seat}-{name}.stderr"


class Player(Protocol):
    """What the match needs of a seat: a bot process, or a person at the terminal."""

    def start(self, startup_ms: float, stop: CancelSignal | None = None) -> str: ...
    def send(self, line: str) -> None: ...
    def request(self, line: str, timeout_ms: float) -> Answer: ...
    def forfeit(self, fault: Fault) -> None: ...
    def close(self) -> None: ...


@dataclass(frozen=True)
class Entrant:
    """A named bot command. :meth:`spawn` makes a fresh, not yet started, player for one match."""

    name: str
    command: str | tuple[str, ...]
    workdir: Path | None = None
    hidden: tuple[Path, ...] = ()
    """Paths inside its folders that its sandbox shows empty (besides the match's)."""
    sealed: Sealed | None = None
    """Its snapshot and what its sandbox shows, resolved once (a tournament's entrant)."""

    def spawn(
        self, *, launcher: Launcher, stderr_path: Path | None, hidden: Sequence[Path]
    ) -> Player:
        """A new bot process for this entrant (started by the match)."""
        return Bot(BotCommand.of(self.command, workdir=self.workdir, stderr_path=stderr_path,
                                 launcher=launcher, hidden=(*self.hidden, *hidden),
                                 sealed=self.sealed))


class Observer:
    """Hooks called as a match unfolds; the base class ignores them all."""

    def hand_started(self, number: int, hand: Hand) -> None:
        """A hand was dealt (the dealer's take, if any, is already in ``hand.events``)."""

    def event(self, event: Event, by: str) -> None:
        """A card was played or turned; ``by`` is ``"bot"`` or ``"fallback"``."""

    def fault(self, fault: FaultDict, name: str) -> None:
        """A bot faulted."""

    def hand_ended(self, number: int, scores: list[int], totals: list[int]) -> None:
        """A hand was scored."""


class MatchAborted(RuntimeError):
    """Raised when a match is stopped from outside (Ctrl-C); its bots are already stopped."""


@dataclass
class _Seat:
    """One seat during a match: its player while it behaves, its clock, its fallback."""

    index: int
    name: str
    player: Player | None
    rng: random.Random
    bank_ms: float
    faulted: bool = False
    pending_info: list[str] = field(default_factory=list)


def play_match(
    match_id: str,
    entrants: Sequence[Entrant],
    deals: DealSource,
    *,
    variant: Variant = Variant.CLASSIC,
    target: int = DEFAULT_TARGET,
    limits: Limits = DEFAULT_LIMITS,
    launcher: Launcher | None = None,
    tournament: str | None = None,
    logs_dir: Path | None = None,
    hidden: Sequence[Path] = (),
    observer: Observer | None = None,
    stop: CancelSignal | None = None,
    bot_id: str | None = None,
    fallback_key: bytes | None = None,
) -> RecordDict:
    """Plays one match and returns its record.

    ``match_id`` is the organiser's id (the record's ``id``); the bots are told ``bot_id``
    instead (default: 12 random hex digits), which says nothing about the schedule, and the
    record keeps it as ``bot_id``.

    Each entrant gets a fresh player, started by ``launcher`` (default: unsandboxed under
    ``limits``; :meth:`Launcher.resolve <referee.bots.process.Launcher.resolve>` makes a
    sandboxed one); stderr goes to ``logs_dir/<seat>-<name>.stderr`` when
    ``logs_dir`` is given. Bot faults are results, recorded in the record; only a command that
    cannot be started at all, or ``stop`` being set, ends the call with an exception.

    A faulted seat's moves from then on are the fallback's: a uniform choice among the legal
    ones, from a generator seeded with HMAC-SHA256 of ``fallback:<match_id>:<seat>`` under
    ``fallback_key`` (a tournament's deal secret; default: a fresh random key), so no
    opponent can foresee them from the match id. The record holds every move made, so neither a
    replay nor ``verify`` needs the key.

    :raises referee.bots.process.BotCommandError: if a seat's command cannot be started.
    :raises MatchAborted: if ``stop`` was set; every bot has been stopped.
    """
    return _MatchRunner(match_id, entrants, deals, variant=variant, target=target, limits=limits,
                        launcher=launcher or Launcher.resolve("none", limits),
                        tournament=tournament, logs_dir=logs_dir, hidden=hidden,
                        observer=observer or Observer(), stop=stop,
                        bot_id=bot_id or secrets.token_hex(6),
                        fallback_key=fallback_key or secrets.token_bytes(32)).run()


def fallback_rng(key: bytes, match_id: str, seat: int) -> random.Random:
    """The generator of the fallback's choices for ``seat`` of a match: seeded with
    HMAC-SHA256 of ``fallback:<match_id>:<seat>`` under ``key``, unknowable without it."""
    return random.Random(hmac.new(key, f"fallback:{match_id}:{seat}".encode(),
                                  hashlib.sha256).digest())


def _one_cpu() -> bool:
    """Whether this thread, and so the bots it starts (the spawner of a pinned worker is
    pinned with it), may run on one CPU only."""
    try:
        return len(os.sched_getaffinity(0)) == 1
    except (AttributeError, OSError):  # no affinity here (not Linux)
        return False


class _MatchRunner:
    def __init__(
        self, match_id: str, entrants: Sequence[Entrant], deals: DealSource, *, variant: Variant,
        target: int, limits: Limits, launcher: Launcher, tournament: str | None,
        logs_dir: Path | None, hidden: Sequence[Path], observer: Observer,
        stop: CancelSignal | None, bot_id: str, fallback_key: bytes,
    ) -> None:
        self.match_id = match_id
        self.fallback_key = fallback_key
        self.bot_id = bot_id
        self.entrants = entrants
        self.deals = deals
        self.match = Match(len(entrants), variant=variant, target=target)
        self.limits = limits
        self.launcher = launcher
        self.logs_dir = logs_dir
        self.hidden = hidden
        self.observer = observer
        self.stop = stop
        self.faults: list[FaultDict] = []
        self.hand_number = 1
        self.record: RecordDict = {
            "format": FORMAT, "version": VERSION, "id": match_id, "bot_id": bot_id,
            "tournament": tournament,
            "variant": variant.value, "target": target, "players": [e.name for e in entrants],
            "luck_model": MODEL, "started": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "hands": [], "totals": [], "ranks": [], "faults": self.faults,
        }
        self.seats: list[_Seat] = []

    def run(self) -> RecordDict:
        try:
            self._start()
            for seat in self.seats:
                self._send(narration.match_line(
                    self.bot_id, seat.index, players=self.match.players,
                    variant=self.match.variant, target=self.match.target,
                    names=[e.name for e in self.entrants]))
            while not self.match.is_over():
                self._play_hand()
            ranks = self.match.ranks(s.index for s in self.seats if s.faulted)
            self.record["totals"] = self.match.totals
            self.record["ranks"] = ranks
            self._send(narration.end_cue(self.match.totals, ranks))
            return self.record
        finally:
            self._close_all()

    # Start-up.

    def _start(self) -> None:
        """Starts every seat's bot: all at once, or, where this match's bots share one CPU
        (``affinity``, a one-CPU machine), one after another in seat order. A bot keeps its
        full CPU weight until its ``ready`` (:meth:`referee.bots.cgroups.Cgroup.on_move`):
        started together on one CPU, a bot that burns CPU and holds its ``ready`` back would
        take half the CPU from the others' start-up, whose clocks run."""
        limits = self.limits
        for i, e in enumerate(self.entrants):
            stderr = seat_log(self.logs_dir, i, e.name) if self.logs_dir else None
            player = e.spawn(launcher=self.launcher, stderr_path=stderr,
                             hidden=self.hidden)
            rng = fallback_rng(self.fallback_key, self.match_id, i)
            self.seats.append(_Seat(i, e.name, player, rng, float(limits.bank_ms)))
        if _one_cpu():  # one after another: each start-up has the CPU to itself
            results = [self._start_one(seat) for seat in self.seats]
        else:
            with ThreadPoolExecutor(max_workers=len(self.seats)) as pool:
                results = list(pool.map(self._start_one, self.seats))
        if self.stop is not None and self.stop.is_set():
            raise MatchAborted(f"match {self.match_id} stopped")
        for seat, error in zip(self.seats, results, strict=True):
            if isinstance(error, BotCommandError):
                raise error
            if error is not None:
                self._fault(seat, error.fault, error.detail)

    def _start_one(self, seat: _Seat) -> BotError | BotCommandError | None:
        if self.stop is not None and self.stop.is_set():
            return None  # the match is abandoned (checked after the start-ups)
        assert seat.player is not None
        try:
            seat.player.start(self.limits.startup_ms, self.stop)
        except (BotError, BotCommandError) as err:
            return err
        return None

    # One hand.

    def _play_hand(self) -> None:
        k = self.hand_number
        deal = self.deals(k)
        hand = self.match.new_hand(deal)
        entry = deal_to_json(deal, hand.dealer)
        self.record["hands"].append(entry)
        self.observer.hand_started(k, hand)
        for cue in narration.hand_cues(k, hand):
            self._send(cue)
        while not hand.is_over():
            if self.stop is not None and self.stop.is_set():
                raise MatchAborted(f"match {self.match_id} stopped")
            entry["turns"].append(self._play_turn(hand))
        scores = self.match.finish_hand(hand)
        entry["scores"] = scores
        entry["luck"] = model_luck(entry, self.match.players, self.match.variant)
        self._send(narration.score_cue(scores, self.match.totals))
        self.observer.hand_ended(k, scores, self.match.totals)
        self.hand_number += 1

    def _play_turn(self, hand: Hand) -> TurnDict:
        seat = self.seats[hand.to_move]
        ms: list[float] = []
        by = "bot"
        events: list[Event] = []
        for cue in narration.turn_cues(hand):
            if isinstance(cue, narration.Ask):
                if not self._ask(seat, cue, hand, ms):
                    by = "fallback"
                    if cue.kind == "go":
                        hand.play(*seat.rng.choice(hand.legal_moves()))
                    else:
                        hand.pick(seat.rng.choice(hand.pick_options))
            else:
                assert cue.event is not None
                events.append(cue.event)
                self._send(cue)
                self.observer.event(cue.event, by)
        play_event, turn_event = events
        turn: TurnDict = {
            "seat": seat.index,
            "play": str(play_event.card), "capture": [str(c) for c in play_event.captured],
            "turn": str(turn_event.card), "turn_capture": [str(c) for c in turn_event.captured],
        }
        if ms:
            turn["ms"] = ms
        turn["by"] = by
        if seat.pending_info:
            turn["info"] = seat.pending_info
            seat.pending_info = []
        return turn

    def _ask(self, seat: _Seat, ask: narration.Ask, hand: Hand, ms: list[float]) -> bool:
        """Asks the seat's bot a ``go`` or ``pick`` and applies the answer to ``hand``;
        ``False`` if it faulted (a garbled or illegal answer is a fault) or is gone."""
        if seat.player is None:
            return False
        answer = self._request(seat, ask.line(self.limits.move_ms, bank=self._bank(seat)))
        if answer is None:
            return False
        ms.append(round(answer.ms, 1))
        try:
            if ask.kind == "go":
                hand.play(*protocol.parse_move(answer.line))
            else:
                hand.pick(protocol.parse_pick(answer.line))
        except protocol.GarbledError as err:
            self._fault(seat, Fault.GARBLED, str(err))
            return False
        except IllegalMoveError as err:
            self._fault(seat, Fault.ILLEGAL, f"{answer.line!r}: {err}")
            return False
        return True

    def _bank(self, seat: _Seat) -> int | None:
        return round(seat.bank_ms) if self.limits.bank_ms else None

    def _request(self, seat: _Seat, line: str) -> Answer | None:
        assert seat.player is not None
        move_ms = self.limits.move_ms
        try:
            answer = seat.player.request(line, move_ms + seat.bank_ms)
        except BotError as err:
            self._fault(seat, err.fault, err.detail)
            return None
        if answer.ms > move_ms:
            seat.bank_ms = max(0.0, seat.bank_ms - (answer.ms - move_ms))
        if answer.info:
            seat.pending_info.extend(answer.info)
        return answer

    # Talking to everyone.

    def _send(self, line: narration.Line) -> None:
        """Sends ``line`` to the seats it is for that still have a player."""
        for seat in self.seats:
            if seat.player is not None and line.for_seat(seat.index):
                seat.player.send(line.text)

    def _fault(self, seat: _Seat, fault: Fault, detail: str) -> None:
        entry: FaultDict = {"seat": seat.index, "hand": self.hand_number,
                            "fault": fault.value, "detail": detail}
        self.faults.append(entry)
        seat.faulted = True
        player, seat.player = seat.player, None
        if player is not None:
            player.forfeit(fault)
        self.observer.fault(entry, seat.name)

    def _close_all(self) -> None:
        for seat in self.seats:
            player, seat.player = seat.player, None
            if player is not None:
                player.close()

