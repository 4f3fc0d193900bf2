"""A league's versions (:class:`Versions`): each author's version that plays, what it plays
from (its entrant, its snapshot's digest and copy), the refusals, and the events of
``league.jsonl`` that say so (read back on a restart, written as the admissions report them).

A version's snapshot is removed once it no longer plays and no match under way runs from it
(:meth:`Versions.hold`, :meth:`Versions.release`): a store holds the versions that play, not
every version an author ever sent.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from referee.bots.snapshot import remove_copy
from referee.league.book import Book
from referee.league.folders import shown
from referee.league.matchmaker import Matchmaker
from referee.league.submissions import Admitted, Event, Known, Note, Refused, Withdrawn
from referee.match.play import Entrant
from referee.tournament.output import Journal

__all__ = ["Versions"]


class Versions:
    """The versions of a league whose matches ``book`` keeps and ``mm`` plans; ``events``:
    ``league.jsonl``; ``say``: a line for the organiser."""

    def __init__(self, book: Book, mm: Matchmaker, events: Journal, *, placement: int,
                 say: Callable[[str], None] = lambda line: None) -> None:
        self.book, self.mm, self.events, self.say = book, mm, events, say
        self.placement = placement
        self.playable: dict[str, Entrant] = {}
        self.digest: dict[str, str] = {}
        self.current: dict[str, str] = {}
        """Each author's version that plays (by name)."""
        self.known: dict[str, Known] = {}
        self.versions: dict[str, int] = {}
        self.first: dict[str, float] = {}
        """Seconds from a version's folder first seen to its first set handed out."""
        self.seen: dict[str, float] = {}
        self.refused: dict[str, dict[str, Any]] = {}
        """Each refused author's refusal (``reason``, ``stderr``, ``at``, ``fingerprint``)."""
        self.copies: dict[str, Path] = {}
        """Each version's snapshot copy (in the store)."""
        self.users: dict[Path, int] = {}
        """The matches under way that run from each copy."""
        self.doomed: set[Path] = set()
        """Copies no version plays from, removed once no match runs from them."""

    # -- the journal ---------------------------------------------------------------------------

    def event(self, data: dict[str, Any]) -> bool:
        """Takes one line of ``league.jsonl`` as an earlier run wrote it; ``False``: not one."""
        kind, name, author = data.get("event"), data.get("name"), data.get("author")
        if kind == "admitted" and isinstance(name, str) and isinstance(author, str):
            version, digest = data.get("version"), data.get("digest")
            if not isinstance(version, int) or not isinstance(digest, str):
                return False
            self._join(name, author, version)
            at = data.get("at")
            self.known[author] = Known(name, version, digest,
                                       float(at) if isinstance(at, int | float) else 0.0)
            self.versions[author] = max(version, self.versions.get(author, 0))
            self.refused.pop(author, None)
        elif kind == "retired" and isinstance(name, str):
            self.book.retire(name, str(data.get("why", "")))
            if isinstance(author, str) and self.current.get(author) == name:
                del self.current[author]
            if isinstance(author, str) and author in self.known \
                    and self.known[author].name == name:
                del self.known[author]
        elif kind == "refused" and isinstance(author, str):  # as an older run wrote it, shown
            self.refused[shown(author)] = {k: data.get(k) for k in
                                           ("reason", "stderr", "at", "fingerprint")}
        elif kind == "withdrawn" and isinstance(author, str):
            self.refused.pop(author, None)
        elif kind == "first" and isinstance(name, str):
            self.first[name] = float(data.get("seconds", 0.0))
        else:
            return False
        return True

    def refusals(self) -> dict[str, tuple[str, float]]:
        """Each refused author's folder as refused (its fingerprint) and when: left alone by
        the next run until it changes."""
        return {a: (str(r["fingerprint"]), float(r.get("at") or 0.0))
                for a, r in self.refused.items() if isinstance(r.get("fingerprint"), str)}

    def _join(self, name: str, author: str, version: int) -> None:
        old = self.current.get(author)
        if old is not None and old != name:
            self.book.retire(old, f"replaced by {name}")
        self.current[author] = name
        self.book.join(name, author=author, version=version)

    # -- news from the admissions --------------------------------------------------------------

    def news(self, events: Iterable[Event]) -> bool:
        """Takes what the admissions found; whether anything changed."""
        changed = False
        for event in events:
            changed = True
            if isinstance(event, Admitted):
                self._admitted(event)
            elif isinstance(event, Refused):
                self.refused[event.author] = {"reason": event.reason,
                                              "stderr": list(event.stderr), "at": time.time(),
                                              "fingerprint": event.fingerprint}
                self.events.append({"event": "refused", "author": event.author,
                                    "reason": event.reason, "stderr": list(event.stderr),
                                    "fingerprint": event.fingerprint, "at": time.time()})
                self.say(f"refused {event.author}: {event.reason}")
            elif isinstance(event, Note):
                self.say(event.text)
            elif isinstance(event, Withdrawn):
                self._withdrawn(event.author)
        return changed

    def _withdrawn(self, author: str) -> None:
        name = self.current.pop(author, None)
        if name is not None:
            self.retire(name, author, "its folder was removed")
        if self.refused.pop(author, None) is not None:
            self.events.append({"event": "withdrawn", "author": author, "at": time.time()})

    def _admitted(self, event: Admitted) -> None:
        name, author = event.name, event.author
        if event.new:
            old = self.current.get(author)
            self.events.append({"event": "admitted", "name": name, "author": author,
                                "version": event.version, "digest": event.digest,
                                "command": list(event.argv), "seen": event.seen,
                                "at": time.time()})
            self._join(name, author, event.version)
            if self.refused.pop(author, None) is not None:
                self.events.append({"event": "withdrawn", "author": author, "at": time.time()})
            if old is not None and old != name:
                self.mm.remove(old)
                self.playable.pop(old, None)
                self._drop(old)
                self.say(f"admitted {name} ({event.digest[:15]}): {old} retires")
            else:
                self.say(f"admitted {name} ({event.digest[:15]})")
        elif name not in self.book.table.rows or not self.book.table.rows[name].active:
            if event.copy is not None:
                remove_copy(event.copy)
            return
        elif name not in self.playable:  # the journal's version, its folder as it was
            self.say(f"{name} plays again (its folder holds the journal's version)")
        self._drop(name)  # the same version admitted again: its older copy goes
        self.playable[name] = event.entrant
        self.digest[name] = event.digest
        self.seen[name] = event.seen
        if event.copy is not None:
            self.copies[name] = event.copy
        row = self.book.table.rows[name]
        self.mm.add(name, row.rating.mu, row.rating.sigma,
                    placement=self.placement - row.sets)

    def retire(self, name: str, author: str, why: str) -> None:
        """``name`` plays no more (``why``), said and journaled; its snapshot goes once no
        match runs from it."""
        self.events.append({"event": "retired", "name": name, "author": author, "why": why,
                            "at": time.time()})
        self.book.retire(name, why)
        self.mm.remove(name)
        self.playable.pop(name, None)
        self._drop(name)
        self.say(f"{name} retires: {why}")

    # -- the snapshots' lives ------------------------------------------------------------------

    def hold(self, names: Iterable[str]) -> tuple[Path, ...]:
        """A match of ``names`` starts: their copies stay while it runs (the copies
        returned, for :meth:`release`)."""
        held = tuple(self.copies[n] for n in names if n in self.copies)
        for copy in held:
            self.users[copy] = self.users.get(copy, 0) + 1
        return held

    def release(self, held: Iterable[Path]) -> None:
        """A match that held ``held`` ended: a copy no version plays from goes once no match
        runs from it."""
        for copy in held:
            left = self.users.get(copy, 0) - 1
            if left > 0:
                self.users[copy] = left
                continue
            self.users.pop(copy, None)
            if copy in self.doomed:
                self.doomed.discard(copy)
                remove_copy(copy)

    def _drop(self, name: str) -> None:
        """``name``'s copy is no longer played from: removed now, or once no match runs."""
        copy = self.copies.pop(name, None)
        if copy is None:
            return
        if self.users.get(copy, 0) > 0:
            self.doomed.add(copy)
        else:
            remove_copy(copy)
