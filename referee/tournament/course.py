"""The course of a tournament: rounds planned one at a time from the results so far.

Pure code, no I/O. A :class:`TournamentProgress` asks its
:class:`referee.tournament.formats.Format` for the next round once the current one is complete
(or at once, where no result can change the plan: :meth:`TournamentProgress.ahead`), rates
finished matches in schedule order (so the table never depends on the order matches finish
in), gathers the paired evidence of every finished duplicate
set (:class:`referee.tournament.stopping.Evidence`), and says why the tournament ended
(:class:`Stopped`: ``complete``, ``settled`` or ``cap``).

:func:`referee.tournament.run.run` drives it with real matches; the benchmarks drive it in-process.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

import trueskill

from referee.match.spec import DealSecret, MatchSpec
from referee.tournament.formats import Format, Prefix, State, plan_round, set_size
from referee.tournament.ratings import MatchResult, RatingConfig, Standing, Standings, p_stronger
from referee.tournament.stopping import Evidence, Judge, Pair, Stop, adjacent

EARLY_SETS = 8
"""A format seeded by results (the ladder) plans its next round once at most this many sets of
the current one are left to rate (and at most a quarter of them), from the standings as they
stood at exactly that point of the schedule (:meth:`TournamentProgress.early`): the round's
last sets play beside the first of the next, and the plan is the same at any concurrency and
on a resume."""


class Stopped(StrEnum):
    """Why a tournament ended (``standings.json``'s ``stopped``)."""

    COMPLETE = "complete"
    """Every round of the format was played (no ``stop``)."""
    SETTLED = "settled"
    """``stop`` decided every pair it asks about."""
    CAP = "cap"
    """``rounds`` or ``max_matches`` ran out first."""


@dataclass(frozen=True)
class TournamentPlan:
    """What does not change while a tournament runs."""

    players: int
    seatings: str
    seed: int | str
    secret: DealSecret
    """Keys the deals (:meth:`referee.match.job.MatchSpec.deal`); a tournament's is its output
    folder's secret, a test's or a benchmark's a fixed one: there is no default."""
    rounds: int | None = None
    max_matches: int | None = None
    stop: Stop | None = None


class TournamentProgress:
    """A tournament in progress: feed it each finished match (:meth:`add`), ask it for the next
    round when the current one is complete (:meth:`next_round`), or before, where the plan
    depends on no result (:meth:`ahead`)."""

    def __init__(self, fmt: Format, names: Sequence[str], plan: TournamentPlan,
                 rating: RatingConfig | None = None) -> None:
        self.format, self.names, self.plan = fmt, list(names), plan
        self.table = Standings(self.names, rating or RatingConfig())
        self.evidence = Evidence(len(self.names))
        self.judge = Judge(self.evidence, plan.stop or Stop(), growing=fmt.grows)
        self.per_set = self.table.config.per == "set"
        self.round = 0
        """The last round planned."""
        self.matches = 0
        """Matches rated so far."""
        self.planned = 0
        """Matches planned so far (every round planned): :attr:`matches` once they are rated."""
        self.stopped: Stopped | None = None
        """Why the tournament ends, once no round is left to plan (the rounds planned may
        still be in play: it ended once they are :meth:`complete`)."""
        self._last: frozenset[tuple[int, ...]] = frozenset()
        self._prefix: Prefix[tuple[MatchResult, Sequence[Sequence[int]],
                                   Sequence[Sequence[float]] | None]] = Prefix()
        """Finished matches, rated once every match before them is."""
        self._sets: dict[tuple[int, int], list[tuple[
            MatchSpec, MatchResult, Sequence[Sequence[int]],
            Sequence[Sequence[float]] | None]]] = {}
        self._size = set_size(plan.players, plan.seatings)
        self._early_at: int | None = None
        """How many matches rated (the prefix) the next round is planned from (:meth:`early`)."""
        self._early: State | None = None
        """What the next round is planned from, once that prefix is rated."""
        self.left_out: frozenset[int] = frozenset()
        """Entrants that never play (left out by the pre-flight: their seat is the fallback's):
        last in the order at once, and no question of ``stop`` waits on them."""

    def leave_out(self, entrants: Iterable[int]) -> None:
        """Marks ``entrants`` as left out (see :attr:`left_out`)."""
        self.left_out = self.left_out | frozenset(entrants)

    # -- planning ----------------------------------------------------------------------------

    def state(self) -> State:
        """What the next round may depend on."""
        rows = {r.name: r for r in self.table.standings()}
        order = self.order(rows=list(rows.values()))
        stop = self.plan.stop
        open_pairs = None
        if stop is not None and self.round > 0:  # the first round is played in full
            pairs = self.format.questions(order)
            verdicts = self.judge.judge(pairs, self.names)
            open_pairs = frozenset(p for p, v in zip(pairs, verdicts, strict=True)
                                   if v.verdict == "open" and not self.left_out.intersection(p))
        return State(len(self.names), self.round + 1, self.planned, tuple(order),
                     tuple(rows[n].mu for n in self.names),
                     tuple(rows[n].sigma for n in self.names), open_pairs, self._last)

    def complete(self) -> bool:
        """Whether every match planned so far is rated."""
        return self.matches == self.planned

    def ahead(self) -> bool:
        """Whether the next round may be planned before the current one is complete: no result
        changes what it plays (a round robin or a gauntlet without ``stop``: the same groups
        every round, ``rounds`` and ``max_matches`` counted in planned matches). The ladder
        seeds each round from the ratings (:meth:`early`), and ``stop`` drops decided pairs:
        it waits."""
        return self.plan.stop is None and not self.format.seeded_by_results

    def early(self) -> bool:
        """Whether the next round is planned before the current one is complete, from the
        standings of a fixed prefix of the schedule: the current round less its last
        :data:`EARLY_SETS` sets (a format seeded by results, the ladder, without ``stop``,
        which waits for every result)."""
        return self.plan.stop is None and self.format.seeded_by_results

    def ready(self) -> bool:
        """Whether the next round may be planned now (:meth:`ahead`, :meth:`early`, or the
        current round complete)."""
        return self.ahead() or self.complete() if not self.early() else \
            self._early is not None or self._early_at is None

    def next_round(self, planned: Sequence[tuple[int, tuple[int, ...]]] | None = None
                   ) -> Sequence[MatchSpec]:
        """Plans the next round and returns its matches; ``[]`` (and :attr:`stopped` set) when
        there is none (the tournament ended once the matches planned are rated).
        ``planned``: the round's ``(group number, members)`` as planned by an earlier run (the
        entrants may have grown since), played as they were.

        :raises RuntimeError: if the current round is not complete and the plan depends on
            its results (see :meth:`ahead`).
        """
        if not self.ready():
            raise RuntimeError("the current round is not complete")
        if self.stopped is not None:
            return []
        state = self._early if self._early is not None else self.state()
        self._early = self._early_at = None
        p = self.plan
        specs = plan_round(self.format, state, players=p.players, seatings=p.seatings,
                           seed=p.seed, secret=p.secret.key, rounds=p.rounds,
                           max_matches=p.max_matches, planned=planned)
        if not specs:
            if state.open is not None and not state.open:
                self.stopped = Stopped.SETTLED
            elif p.stop is None and (p.rounds is not None and state.round > p.rounds):
                self.stopped = Stopped.COMPLETE
            else:
                self.stopped = Stopped.CAP
            return []
        self.round = state.round
        self.planned += len(specs)
        self._prefix.add_round(specs)
        if self.format.seeded_by_results:  # it avoids the round before's groups
            self._last = frozenset(tuple(sorted(s.seats)) for s in specs)
        if self.early():
            sets = len(specs) // self._size
            self._early_at = self.planned - min(EARLY_SETS, sets // 4) * self._size
            self._catch()
        return specs

    def _catch(self) -> None:
        """Takes what the next round is planned from, once the prefix of :meth:`early` is
        rated."""
        if self._early_at is not None and self._early is None and \
                self.matches == self._early_at:
            self._early = self.state()

    # -- results -----------------------------------------------------------------------------

    def add(self, spec: MatchSpec, result: MatchResult, hand_scores: Sequence[Sequence[int]],
            luck: Sequence[Sequence[float]] | None = None) -> None:
        """Takes one finished match of a planned round (any order), with the points of every
        hand by seat and, when known, the luck of its stock flips (the record's
        ``hands[i].luck``); rates every match (or set, see :attr:`RatingConfig.per`) of the
        schedule's finished prefix, and adds every finished set to the evidence."""
        if luck is not None and not result.luck:
            result = dataclasses.replace(result, luck=tuple(
                sum(h[seat] for h in luck) for seat in range(spec.players)))
        for done, (res, hands, flips) in self._prefix.finish(spec.id,
                                                             (result, hand_scores, luck)):
            self.table.add(res, rate=not self.per_set)
            self.matches += 1
            members = self._sets.setdefault(done.deals_key, [])
            members.append((done, res, hands, flips))
            if len(members) == self._size:
                del self._sets[done.deals_key]
                known = all(m[3] is not None for m in members)
                points = self.evidence.add_set(
                    [m[0].seats for m in members], [m[2] for m in members],
                    [m[3] or () for m in members] if known else None)
                if self.per_set:
                    self._rate_set(points, [m[1] for m in members])
            self._catch()

    def _rate_set(self, points: dict[int, float], results: Sequence[MatchResult]) -> None:
        """One rating update for a finished set: its members ranked by adjusted points over the
        set, any that faulted in it below the others."""
        faulted = {r.players[seat] for r in results for seat, _ in r.faults}
        keys = {e: (self.names[e] in faulted, -round(p, 6)) for e, p in points.items()}
        members = sorted(points, key=lambda e: keys[e])
        ranks = [1 + sum(keys[o] < keys[e] for o in members) for e in members]
        self.table.rate([self.names[e] for e in members], ranks)

    # -- reading -----------------------------------------------------------------------------

    def order(self, rows: list[Standing] | None = None) -> list[int]:
        """Entrant indices, best first: the table's order, corrected by decided evidence; the
        entrants left out last."""
        rows = self.table.standings() if rows is None else rows
        index = {n: i for i, n in enumerate(self.names)}
        order = self.judge.reorder([index[r.name] for r in rows])
        return [i for i in order if i not in self.left_out] + \
            [i for i in order if i in self.left_out]

    def standings(self) -> list[Standing]:
        """The table in :meth:`order`, ranks and ``p_above_next`` following that order."""
        rows = {r.name: r for r in self.table.standings()}
        ordered = [rows[self.names[i]] for i in self.order(list(rows.values()))]
        out = []
        for place, row in enumerate(ordered):
            below = ordered[place + 1] if place + 1 < len(ordered) else None
            p = None if below is None else p_stronger(trueskill.Rating(row.mu, row.sigma),
                                                      trueskill.Rating(below.mu, below.sigma))
            out.append(dataclasses.replace(row, rank=place + 1, p_above_next=p))
        return out

    def pairs(self) -> list[Pair]:
        """The verdict on every adjacent pair of :meth:`order`."""
        return self.judge.judge(adjacent(self.order()), self.names)

    def questions(self) -> list[Pair]:
        """The verdicts on the pairs ``stop`` decides (the format's questions)."""
        return self.judge.judge(self.format.questions(self.order()), self.names)
