"""A person at the terminal as a seat of a match: :class:`HumanPlayer`.

It implements the match's ``Player`` protocol and gets exactly the protocol lines a bot would get;
it reads them back (with :mod:`referee.protocol.wire`'s readers, as the policy bridge does) and
draws them with rich: the hand and the table with suit symbols (red suits red), every event of the
other seats as it happens, and each decision as a numbered list of the legal moves. The person
answers with a number or a card (``7c``, ``7c 3h``, any case, ``10`` for ``T``); bad input gets a
hint and the question again. Input is read line by line, so piped stdin works; end of input means
the person left: the seat forfeits (a ``crash`` fault) and the referee's fallback plays it on.
There is no time limit.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from rich.console import Console
from rich.text import Text

from referee.bots.bot import Answer, BotCrash, CancelSignal
from referee.bots.process import Launcher
from referee.game.cards import Card, CardError
from referee.game.faults import Fault, Reason
from referee.game.rules import Move, legal_moves_on, targets_on
from referee.match.play import Entrant, Player
from referee.protocol.escape import escape_controls
from referee.protocol.wire import (
    GarbledError,
    cards_after,
    ints_after,
    parse_move,
    value_after,
)
from referee.records.display import card_text, cards_text

HUMAN = "human"
"""The bot argument of ``ct-referee play`` that seats a person."""


class HumanLeft(BotCrash):
    """The person's input ended (or they typed ``quit``): the seat forfeits."""


def legal_moves(hand: Sequence[Card], table: Sequence[Card]) -> list[Move]:
    """The legal answers to ``go hand <hand> table <table>``, as the rules define them
    (:func:`referee.game.rules.legal_moves_on`)."""
    return legal_moves_on(hand, table)


# -- the player ---------------------------------------------------------------------------------


class HumanPlayer:
    """A seat played by a person: reads ``source``, draws on ``console``, never times out."""

    def __init__(self, name: str, *, console: Console | None = None, source: TextIO | None = None,
                 ascii_only: bool = False, show_scores: bool = True) -> None:
        self.name = name
        self.console = console or Console(highlight=False, soft_wrap=True)
        self.source = source or sys.stdin
        self.ascii_only = ascii_only
        self.show_scores = show_scores
        self.names: list[str] = []
        self.seat = 0
        self.table: list[Card] = []
        self.left = False

    # The Player protocol.

    def start(self, startup_ms: float, stop: CancelSignal | None = None) -> str:
        """Nothing to start: a person is always ready."""
        self.console.print(Text(f"You play as {self.name}. Answer with the number of a move, "
                                "or type the card (7c, or 7c 3h to choose what it takes). "
                                "End of input leaves the match.", style="dim"))
        return self.name

    def send(self, line: str) -> None:
        """Draws one event line."""
        tokens = line.split()
        if not tokens:
            return
        show = getattr(self, f"_on_{tokens[0].replace('-', '_')}", None)
        if show is not None:
            show(tokens)

    def request(self, line: str, timeout_ms: float) -> Answer:
        """Asks the person; ``timeout_ms`` is ignored (a person has no time limit).

        :raises HumanLeft: at the end of input, or when the person types ``quit``.
        """
        t0 = time.monotonic()
        tokens = line.split()
        ask = self._ask_pick if tokens and tokens[0] == "pick" else self._ask_go
        answer = ask(tokens)
        return Answer(answer, (time.monotonic() - t0) * 1000)

    def forfeit(self, fault: Fault) -> None:
        """Says the seat is out of the match."""
        why = "you left" if self.left else f"fault: {fault}"
        self.console.print(Text(f"{why}. The referee plays your seat from here on.",
                                style="yellow"))

    def close(self) -> None:
        """Nothing to stop."""

    # Events.

    def _who(self, seat: int) -> Text:
        if seat == self.seat:
            return Text("you", style="bold cyan")
        name = self.names[seat] if 0 <= seat < len(self.names) else f"seat {seat}"
        return Text(name, style="cyan")

    def _cards(self, cards: Sequence[int]) -> Text:
        return cards_text(cards, ascii_only=self.ascii_only)

    def _row(self, label: str, cards: Sequence[int]) -> None:
        text = Text(label, style="bold")
        text.append_text(self._cards(cards))
        self.console.print(text)

    def _on_match(self, tokens: list[str]) -> None:
        self.seat = int(value_after(tokens, "seat", "0"))
        idx = tokens.index("names") + 1 if "names" in tokens else len(tokens)
        self.names = [escape_controls(n) for n in tokens[idx:]]  # shown only
        others = ", ".join(f"{n} (seat {i})" for i, n in enumerate(self.names) if i != self.seat)
        self.console.rule(Text(f"match {value_after(tokens, 'id')} · "
                               f"{value_after(tokens, 'variant')} · target "
                               f"{value_after(tokens, 'target')}"))
        self.console.print(Text(f"You sit in seat {self.seat}, against {others}."))

    def _on_hand(self, tokens: list[str]) -> None:
        dealer = int(value_after(tokens, "dealer", "0"))
        self.table = cards_after(tokens, "layout")
        who = "you" if dealer == self.seat else self.names[dealer] if self.names else dealer
        self.console.rule(Text(f"hand {value_after(tokens, 'hand')} · dealer {who}"))
        self._row("your cards ", cards_after(tokens, "cards"))
        self._row("layout     ", self.table)

    def _on_take(self, tokens: list[str]) -> None:
        taken = cards_after(tokens, tokens[1]) if len(tokens) > 1 else []
        self.table = [c for c in self.table if c not in taken]
        text = self._who(int(tokens[1]))
        text.append(" deal" + ("" if int(tokens[1]) == self.seat else "s")
                    + " and take" + ("" if int(tokens[1]) == self.seat else "s")
                    + " the layout's four of a kind: ")
        text.append_text(self._cards(taken))
        self.console.print(text)

    def _on_play(self, tokens: list[str]) -> None:
        self._event(tokens, "play")

    def _on_turn(self, tokens: list[str]) -> None:
        self._event(tokens, "turn")

    def _event(self, tokens: list[str], verb: str) -> None:
        if len(tokens) < 3:
            return
        seat, cards = int(tokens[1]), cards_after(tokens, tokens[1])
        if not cards:
            return
        card, captured = cards[0], cards[1:]
        mine = seat == self.seat
        text = Text("  " if verb == "turn" else "")
        text.append_text(self._who(seat))
        text.append(f" {verb}{'' if mine else 's'} ")
        text.append_text(card_text(card, ascii_only=self.ascii_only))
        if captured:
            text.append(f", take{'' if mine else 's'} ")
            text.append_text(self._cards(captured))
            self.table = [c for c in self.table if c not in captured]
        else:
            self.table.append(card)
        self.console.print(text)

    def _on_score(self, tokens: list[str]) -> None:
        if not self.show_scores:
            return
        scores, totals = ints_after(tokens, "score"), ints_after(tokens, "totals")
        parts = [f"{'you' if i == self.seat else n} {s} (total {t})"
                 for i, (n, s, t) in enumerate(zip(self.names, scores, totals, strict=False))]
        self.console.print(Text("hand over: " + ", ".join(parts), style="bold"))

    def _on_end(self, tokens: list[str]) -> None:
        if not self.show_scores:
            return
        ranks = ints_after(tokens, "ranks")
        mine = ranks[self.seat] if self.seat < len(ranks) else "?"
        self.console.print(Text(f"match over: you rank {mine}", style="bold"))

    # Decisions.

    def _read(self, prompt: str) -> str:
        self.console.print(Text(prompt, style="bold"), end="")
        line = self.source.readline()
        if not line:
            self.console.print()
            self.left = True
            raise HumanLeft("left the match (end of input)", code=Reason.LEFT)
        text = line.strip()
        if not self.source.isatty():
            self.console.print(Text(text))  # echo piped input, so the screen reads as a dialogue
        if text.lower() in ("quit", "q", "exit"):
            self.left = True
            raise HumanLeft("left the match (typed quit)", code=Reason.LEFT)
        return text

    def _ask_go(self, tokens: list[str]) -> str:
        hand, table = cards_after(tokens, "hand"), cards_after(tokens, "table")
        self.table = list(table)
        moves = legal_moves(hand, table)
        self.console.rule(f"your turn · stock {value_after(tokens, 'stock', '?')}", style="cyan")
        self._row("table ", table)
        self._row("hand  ", hand)
        for i, move in enumerate(moves, 1):
            text = Text(f"{i:>3}  ")
            text.append_text(card_text(move.card, ascii_only=self.ascii_only))
            found = targets_on(move.card, table)
            if move.target is not None:
                text.append(" takes ")
                text.append_text(card_text(move.target, ascii_only=self.ascii_only))
            elif found:
                text.append(" sweeps ")
                text.append_text(self._cards(found))
            else:
                text.append(" (takes nothing)", style="dim")
            self.console.print(text)
        while True:
            typed = self._read(f"your move [{_numbers(len(moves))} or a card]: ")
            chosen, problem = _choose(typed, moves, hand, table)
            if chosen is not None:
                return str(chosen)
            self.console.print(Text(f"  {problem}", style="yellow"))

    def _ask_pick(self, tokens: list[str]) -> str:
        card = Card.parse(tokens[1]) if len(tokens) > 1 else None
        options = cards_after(tokens, "from")
        head = Text("you turned ")
        if card is not None:
            head.append_text(card_text(card, ascii_only=self.ascii_only))
        head.append(": it can take one of these")
        self.console.print(head)
        for i, option in enumerate(options, 1):
            self.console.print(Text(f"{i:>3}  ").append_text(
                card_text(option, ascii_only=self.ascii_only)))
        while True:
            text = self._read(f"take which [{_numbers(len(options))} or a card]: ")
            if text.isdigit() and 1 <= int(text) <= len(options):
                return str(options[int(text) - 1])
            try:
                chosen = Card.parse(text)
            except CardError:
                chosen = None
            if chosen in options:
                return str(chosen)
            self.console.print(Text(f"  {_type_a_number(len(options))}, or one of "
                                    f"{' '.join(map(str, options))}", style="yellow"))


def _numbers(count: int) -> str:
    """The numbers to choose from: ``1`` alone, else ``1-<count>``."""
    return "1" if count == 1 else f"1-{count}"


def _type_a_number(count: int) -> str:
    return "type 1" if count == 1 else f"type a number from 1 to {count}"


def _choose(
    text: str, moves: list[Move], hand: Sequence[Card], table: Sequence[Card]
) -> tuple[Move | None, str]:
    """The move the person typed, or ``None`` and a hint."""
    numbered = f"{_type_a_number(len(moves))}, or a card like {moves[0]}"
    if not text:
        return None, numbered
    if text.isdigit():
        n = int(text)
        return (moves[n - 1], "") if 1 <= n <= len(moves) else (None, numbered)
    try:
        typed = parse_move(text)
    except GarbledError:
        return None, numbered
    if typed.card not in hand:
        return None, f"you do not hold {typed.card}; {numbered}"
    options = [m for m in moves if m.card == typed.card]
    if len(options) == 1 and options[0].target is None:
        swept = targets_on(typed.card, table)
        if typed.target is None or typed.target in swept:  # naming one of a sweep is fine
            return options[0], ""
        return None, f"{typed.card} takes nothing: type {typed.card} alone"
    chosen = [m for m in options if typed.target is None or m.target == typed.target]
    if len(chosen) == 1:
        return chosen[0], ""
    targets = " or ".join(str(m.target) for m in options)
    if typed.target is None:
        return None, f"{typed.card} can take {targets}: type e.g. {options[0]}"
    return None, f"{typed.card} cannot take {typed.target}; it can take {targets}"


@dataclass(frozen=True)
class HumanEntrant(Entrant):
    """An entrant whose :meth:`spawn` seats the person at the terminal."""

    console: Console | None = field(default=None, compare=False)
    ascii_only: bool = False
    show_scores: bool = False
    """Whether the player draws ``score`` and ``end`` (``play`` prints them itself)."""

    def spawn(self, *, launcher: Launcher, stderr_path: Path | None,
              hidden: Sequence[Path]) -> Player:
        """A :class:`HumanPlayer` (the launcher does not apply to a person)."""
        return HumanPlayer(self.name, console=self.console, ascii_only=self.ascii_only,
                           show_scores=self.show_scores)
