"""What the report shows, as data, built incrementally from journal lines (no I/O).

:class:`Summary` takes each ``results.jsonl`` line once (:meth:`Summary.add`, a few microseconds)
and keeps only bounded aggregates: per entrant its counts, per pair of entrants that met their
points, hands and wins, per entrant and fault kind a count and the first few examples, and every
match as a compact row (written out in chunks of :data:`CHUNK`). :func:`page_data` turns it, with
the standings, into the page's data (``report/data.js``), whose size grows with the entrants
shown, not with the matches.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from referee.game.rules import Variant
from referee.tournament.admission import BENCHED
from referee.tournament.output import JournalLine
from referee.tournament.stopping import Stop, interval_ends, lower_end, upper_end

__all__ = ["CHUNK", "CROSS_TOP", "EXAMPLES", "FaultGroup", "Summary", "headline",
           "interval_confidence", "interval_words", "order_note", "page_data", "pair_text"]

CHUNK = 1000
"""Matches per file of the match list (``report/matches/<k>.js``)."""
EXAMPLES = 3
"""Examples kept per entrant and fault kind (with a link to the step and the stderr)."""
CROSS_TOP = 12
"""The crosstable's entrants embedded in the index (the top of the standings)."""
ROWS_FILE = 500
"""Standings rows per file (``report/rows/<k>.js``); the first file's are in the index too."""
FAULT_GROUPS = 60
"""Fault groups in the index (the first in standings order); every entrant's are in its file
of details (``report/entrant/<k>.js``) once the run ends."""
SWAPS_NAMED = 5
"""Pairs named in the note on the order (then a count)."""
DETAIL_CHARS = 300
"""A fault's detail is cut to this many characters in the page's data."""
LEFT_OUT = BENCHED[1]


@dataclass
class FaultGroup:
    """The faults of one entrant of one kind."""

    name: str
    kind: str
    count: int = 0
    benched: int = 0
    """How many are a benched seat's (left out, disqualified: no process ran)."""
    examples: list[dict[str, Any]] = field(default_factory=list)
    """The first :data:`EXAMPLES`: ``id``, ``seat``, ``hand``, ``detail`` (cut)."""


@dataclass
class _Pair:
    points: int = 0
    other: int = 0
    hands: int = 0
    matches: int = 0
    wins: int = 0
    losses: int = 0


class Summary:
    """The aggregates of a tournament's journal, fed one line at a time (in any order: every
    figure here is a sum)."""

    def __init__(self) -> None:
        self.matches: list[list[Any]] = []
        """Per match not yet in a full chunk (:meth:`take_chunk`), in the order added:
        ``[id, players, totals, ranks, hands, faults]`` (``faults``: ``[seat, kind, hand,
        benched]`` each, ``benched`` 1 for a seat with no process: left out or
        disqualified)."""
        self.count = 0
        """Matches added."""
        self.chunked = 0
        """Full chunks taken (:meth:`take_chunk`)."""
        self.seen: set[str] = set()
        """The ids checked for repeats (a journal read again); only while :attr:`remember`."""
        self.remember = True
        self.pairs: dict[str, dict[str, _Pair]] = {}
        """Per entrant, per entrant it met: their sums over the matches both played."""
        self.faults: dict[tuple[str, str], FaultGroup] = {}
        self.names: dict[str, None] = {}
        """Every entrant that played, in order of appearance."""
        self.left_out: dict[str, str] = {}
        """Every entrant the pre-flight left out (its seats the fallback's, each with a
        ``left out: ...`` startup fault), and why: known from its first match, before the
        standings say it."""

    def add(self, line: dict[str, Any]) -> bool:
        """Takes one journal line; ``False`` (and nothing kept) for a malformed or repeated one.
        """
        try:  # the one parser of a journal line (a match id names files: no other id)
            parsed = JournalLine.parse(line)
        except ValueError:
            return False
        match_id, result = parsed.id, parsed.result
        if match_id in self.seen:
            return False
        players, totals, ranks = list(result.players), list(result.totals), list(result.ranks)
        hands = result.hands
        faults = [f for f in parsed.faults if isinstance(f, dict)]
        if self.remember:
            self.seen.add(match_id)
        self.count += 1
        for name in players:
            self.names.setdefault(name, None)
        compact = []
        for f in faults:
            seat, kind, hand = f.get("seat"), str(f.get("fault", "?")), f.get("hand")
            if not isinstance(seat, int) or not 0 <= seat < len(players):
                continue
            hand = hand if isinstance(hand, int) else 0
            detail = str(f.get("detail", ""))
            compact.append([seat, kind, hand, 1 if detail.startswith(BENCHED) else 0])
            if detail.startswith(LEFT_OUT):
                self.left_out.setdefault(players[seat], detail[len(LEFT_OUT):DETAIL_CHARS])
            group = self.faults.get((players[seat], kind))
            if group is None:
                group = self.faults[(players[seat], kind)] = FaultGroup(players[seat], kind)
            group.count += 1
            if detail.startswith(BENCHED):
                group.benched += 1
            if len(group.examples) < EXAMPLES:
                group.examples.append({"id": match_id, "seat": seat, "name": players[seat],
                                       "hand": hand,
                                       "detail": detail[:DETAIL_CHARS]})
        self.matches.append([match_id, players, totals, ranks, hands, compact])
        for i, a in enumerate(players):
            met = self.pairs.get(a)
            if met is None:
                met = self.pairs[a] = {}
            for j, b in enumerate(players):
                if i != j:
                    pair = met.get(b)
                    if pair is None:
                        pair = met[b] = _Pair()
                    pair.points += totals[i]
                    pair.other += totals[j]
                    pair.hands += hands
                    pair.matches += 1
                    pair.wins += ranks[i] < ranks[j]
                    pair.losses += ranks[i] > ranks[j]
        return True

    def take_chunk(self) -> tuple[int, list[list[Any]]] | None:
        """The next full chunk of :data:`CHUNK` matches, forgotten here (its number and rows),
        ``None`` until there is one: memory holds at most one chunk of matches."""
        if len(self.matches) < CHUNK:
            return None
        rows, self.matches = self.matches[:CHUNK], self.matches[CHUNK:]
        self.chunked += 1
        return self.chunked - 1, rows

    def cell(self, a: str, b: str) -> list[Any] | None:
        """``a`` against ``b``: ``[wins, losses, matches, a's points per hand, b's]`` (a win:
        ``a`` ranked above ``b`` in a match both played), ``None`` if they never met."""
        pair = self.pairs.get(a, {}).get(b)
        return None if pair is None else _cell(pair)

    def opponents(self, name: str) -> list[list[Any]]:
        """Every entrant ``name`` met, with :meth:`cell` after the name."""
        return [[b, *_cell(pair)] for b, pair in self.pairs.get(name, {}).items()]

    def groups_by_name(self) -> dict[str, list[FaultGroup]]:
        """The fault groups of each entrant that faulted."""
        found: dict[str, list[FaultGroup]] = {}
        for group in self.faults.values():
            found.setdefault(group.name, []).append(group)
        return found


def _cell(pair: _Pair) -> list[Any]:
    hands = max(pair.hands, 1)
    return [pair.wins, pair.losses, pair.matches, round(pair.points / hands, 1),
            round(pair.other / hands, 1)]


# -- the page's data ---------------------------------------------------------------------------


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _r(value: Any, places: int = 2) -> float | None:
    x = _num(value)
    return None if x is None else round(x, places)


def hand_bound(config: dict[str, Any] | None) -> float:
    """The points in play in one hand of the tournament's variant (classic when unknown): an
    interval's end at plus or minus this is the range of the points, no bound from the data."""
    try:
        return float(Variant(str((config or {}).get("variant", "classic"))).hand_total)
    except ValueError:
        return float(Variant.CLASSIC.hand_total)


def _end(value: Any, bound: float) -> float | None:
    """An interval's end, or ``None`` when it is infinite or at the bound (too few sets)."""
    x = _num(value)
    return None if x is None or abs(x) >= bound - 1e-3 else x


def bounded(item: dict[str, Any], bound: float) -> dict[str, Any]:
    """``item`` (a pair, a question, an audit) with its ``low`` and ``high`` as :func:`_end`
    reads them: ``None`` where the data bound nothing yet."""
    return item | {"low": _end(item.get("low"), bound), "high": _end(item.get("high"), bound)}


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


EARLY_WIDTH = 0.5
"""An interval on a difference wider than this share of a hand's points (120 points wide in
the classic game) measures nothing yet: a verdict says ``too early to tell`` instead of a
difference and its interval (as after one set of short matches)."""


def early(low: float | None, high: float | None, bound: float) -> bool:
    """Whether an interval (ends as :func:`bounded` reads them: ``None``, no bound yet) is too
    wide to say anything (:data:`EARLY_WIDTH`)."""
    return low is None or high is None or high - low > EARLY_WIDTH * bound


def interval_confidence(config: Mapping[str, Any] | None) -> float | None:
    """The confidence of a tournament's verdicts and intervals (its ``stop``'s, or the
    default's without one), ``None`` when the configuration is unknown or malformed."""
    if config is None:
        return None
    stop = config.get("stop")
    if stop is None:
        return Stop().confidence  # the judge's default
    if not isinstance(stop, Mapping):
        return None
    conf = _num(stop.get("confidence"))
    return conf if conf is not None and 0 < conf < 1 else None


def interval_words(diff: float, low: float, high: float, unit: str = "") -> str:
    """A difference and its interval's ends as they are: ``+6.7 (+0.1 to +20.9) pts/hand``
    (``unit`` after them). Not ``diff ± half-width``: an anytime-valid confidence sequence is
    not centred on the observed difference, and ``+6.7 ± 10.4`` would read as ``-3.7 to
    +17.1``, on the other side of 0 from a verdict that says ``stronger``.

    The ends are rounded outward (the interval printed holds the one computed), and an end
    that would read ``0.0`` keeps two significant digits and its side: never ``+0.0`` beside a
    ``stronger``.

    >>> interval_words(6.7, 0.07, 20.9, " pts/hand")
    '+6.7 (+0.07 to +20.9) pts/hand'
    >>> interval_words(6.7, 0.14, 20.91)
    '+6.7 (+0.1 to +21.0)'
    >>> interval_words(-1.0, -2.04, -0.031)
    '-1.0 (-2.1 to -0.031)'
    """
    return f"{diff:+.1f} ({interval_ends(low, high)}){unit}"


def pair_text(pair: Mapping[str, Any], bound: float, *, short: bool = False,
              confidence: float | None = None) -> str:
    """A verdict in words: ``stronger +5.6 (+3.5 to +7.7) pts/hand, 95% sure, 3 sets``; ``open
    +1.2 (-2.9 to +5.3) pts/hand, 3 sets`` (not yet told apart); ``open: too early to tell, 1
    set (+7.4 pts/hand so far)`` while the interval is too wide to measure anything
    (:func:`early`) or an open pair shared a single set; the interval's own ends, not a ``±``
    (:func:`interval_words`);
    ``weaker ...`` for a pair asked out of order whose lower entrant is decidedly stronger;
    ``tie ...`` (a margin's). ``pair``: a pair or a question of ``standings.json`` (its ends as
    written, ``bound``: a hand's points, :func:`hand_bound`); ``short``: for a terminal's
    column (``/h``, nothing said so far, no confidence); ``confidence``: the tournament's
    (:func:`interval_confidence`), said with a decided verdict."""
    verdict = str(pair.get("verdict", ""))
    diff = _num(pair.get("diff"))
    low, high = _end(pair.get("low"), bound), _end(pair.get("high"), bound)
    sets = pair.get("sets")
    tail = (f", {_count(sets, 'set')}" if isinstance(sets, int) and not isinstance(sets, bool)
            else "")
    if diff is None:
        return f"{verdict} (never met)"
    unit = "/h" if short else " pts/hand"
    if verdict == "open" and high is not None and high < 0 and confidence is not None:
        verdict = "weaker"
    sure = "" if short or confidence is None or verdict == "open" else f", {confidence:.0%} sure"
    once = verdict == "open" and isinstance(sets, int) and sets < 2  # asymptotic: too early
    if low is None or high is None or once or early(low, high, bound):
        if verdict != "open":
            edge = (f" (at least {lower_end(low)})" if verdict == "stronger" and low is not None
                    and low > 0 else
                    f" (at most {upper_end(high)})" if verdict == "weaker" and high is not None
                    and high < 0 else "")
            return f"{verdict} {diff:+.1f}{unit}{edge}{sure}{tail}"
        if short:
            return f"{verdict}: too early to tell{tail}"
        return f"{verdict}: too early to tell{tail} ({diff:+.1f}{unit} so far)"
    measured = interval_words(diff, low, high, unit)
    if verdict == "open" and (low > 0 or high < 0) and not short:
        return (f"{verdict} {measured}{tail} (the interval is clear of 0, but the deals' "
                f"signs are not yet one-sided enough)")
    return f"{verdict} {measured}{sure}{tail}"


LUCK_NOTE = " (differences adjusted for luck)"
PROVISIONAL = " (provisional: the run is not over)"


def headline(rows: list[dict[str, Any]], pairs: list[dict[str, Any]], matches: int, *,
             final: bool, stopped: str | None, questions: list[dict[str, Any]] | None = None,
             left_out: dict[str, str] | None = None, bound: float | None = None) -> str:
    """Who won and how sure, in one sentence (``bound``: a hand's points, :func:`hand_bound`)."""
    left_out = left_out or {}
    bound = hand_bound(None) if bound is None else bound
    played = _count(matches, "match", "matches")
    if not matches or not rows:
        return "no match finished yet"
    if questions:
        cand = str(questions[0].get("upper", "?"))
        words = {"stronger": "stronger than", "tie": "tied with", "open": "still open against"}
        parts = []
        for q in questions:
            verdict, other = str(q.get("verdict", "open")), str(q.get("lower", "?"))
            diff = _num(q.get("diff"))
            size = f" ({diff:+.1f} pts/hand)" if diff is not None else ""
            parts.append(f"{words.get(verdict, verdict)} {other}{size}")
        luck = any(_num(q.get("diff")) is not None for q in questions)
        return f"{cand}: " + "; ".join(parts) + f", after {played}" + LUCK_NOTE * luck
    top = str(rows[0].get("name", "?"))
    if len(rows) < 2:
        return f"{top} is the only entrant, after {played}"
    second = str(rows[1].get("name", "?"))
    pair = next((p for p in pairs if p.get("upper") == top), None)
    if pair is None or second in left_out:
        return f"{top} is first after {played}" + ("" if final else PROVISIONAL)
    verdict = str(pair.get("verdict"))
    diff, low, high = _num(pair.get("diff")), _num(pair.get("low")), _num(pair.get("high"))
    when = "decided after" if stopped == "settled" else "after"
    if verdict == "stronger" and diff is not None:
        sure = (f"{interval_ends(low, high)}, " if low is not None and high is not None
                and not early(low, high, bound)
                else f"at least {lower_end(low)}, " if low is not None and low > 0 else "")
        if not final:
            return (f"{top} leads: decidedly stronger than {second} by {diff:.1f} points a "
                    f"hand ({sure}adjusted for luck), after {played}{PROVISIONAL}")
        return (f"{top} wins: stronger than {second} by {diff:.1f} points a hand "
                f"({sure}adjusted for luck), {when} {played}")
    if verdict == "tie":
        return f"{top} and {second} tie (within the margin), {when} {played}"
    lead = "No decided leader yet" if not final else "No decided winner"
    unsure = (f"{lead} after {played}: {top} is first on the table, not yet told apart from "
              f"{second}")
    tail = "" if final else PROVISIONAL
    if diff is None:
        return f"{unsure} (they have not met){tail}"
    if low is not None and high is not None and not early(low, high, bound):
        return (f"{unsure} ({diff:+.1f} points a hand, {interval_ends(low, high)}, adjusted "
                f"for luck){tail}")
    return f"{unsure} ({diff:+.1f} points a hand so far, adjusted for luck){tail}"


def order_note(rows: list[dict[str, Any]]) -> str | None:
    """One sentence on why a row sits above one with a higher ``mu - 3 sigma`` (the evidence
    decided the pair the other way), or ``None`` when the order is plain ``mu - 3 sigma``."""
    swapped = []
    for upper, lower in itertools.pairwise(rows):
        a, b = _num(upper.get("score")), _num(lower.get("score"))
        if a is not None and b is not None and a < b - 1e-9 and not lower.get("left_out"):
            swapped.append(f"{upper.get('name')} above {lower.get('name')}")
    if not swapped:
        return None
    more = f" and {len(swapped) - SWAPS_NAMED} more" if len(swapped) > SWAPS_NAMED else ""
    return ("Rows are in the order of mu−3σ, except where the duplicate evidence decided a pair "
            "the other way (the lower one scored decidedly more points a hand): "
            + ", ".join(swapped[:SWAPS_NAMED]) + more + ".")


COLUMNS = ["rank", "name", "mu", "sigma", "score", "matches", "wins", "mean_rank",
           "points_per_hand", "faults", "p_above_next", "verdict", "flags"]
"""The fields of a standings row in the page's data (one array per row, in this order)."""


def _row(k: int, row: dict[str, Any], pair: dict[str, Any] | None,
         left_out: dict[str, str], bound: float, confidence: float | None) -> list[Any]:
    name = str(row.get("name", "?"))
    faults = row.get("faults")
    nfaults = sum(v for v in faults.values() if isinstance(v, int) and not isinstance(v, bool)
                  ) if isinstance(faults, dict) else 0
    flags = []
    if row.get("left_out") or name in left_out:
        flags.append("left out")
    if row.get("disqualified"):
        flags.append("disqualified")
    audit = row.get("audit")
    if isinstance(audit, dict) and audit.get("flag"):
        flags.append("audit")
    verdict: list[Any] | str = ""
    if "left out" in flags:  # its row says why, in place of figures the fallback made
        why = left_out.get(name) or row.get("left_out")
        verdict = f"left out: {why}" if isinstance(why, str) and why else "left out"
    elif pair is not None:
        sets = pair.get("sets")
        verdict = [str(pair.get("verdict", "")), _r(pair.get("diff"), 1), _r(pair.get("low"), 1),
                   _r(pair.get("high"), 1), sets if isinstance(sets, int) else None,
                   pair_text(pair, bound, confidence=confidence)]
    rank = row.get("rank")
    return [rank if isinstance(rank, int) else k + 1, name, _r(row.get("mu")),
            _r(row.get("sigma")), _r(row.get("score")), row.get("matches"), row.get("wins"),
            _r(row.get("mean_rank")), _r(row.get("points_per_hand"), 1), nfaults,
            _r(row.get("p_above_next"), 3), verdict, ",".join(flags)]


def standings_rows(rows: list[dict[str, Any]], pairs: list[dict[str, Any]],
                   left_out: dict[str, str], *, bound: float | None = None,
                   confidence: float | None = None) -> list[list[Any]]:
    """The standings as the page's rows (:data:`COLUMNS`), each with its verdict on the next
    (an end of its interval ``None`` where the data bound nothing yet: ``bound``, the points
    of a hand, :func:`hand_bound`; ``confidence``: :func:`interval_confidence`)."""
    bound = hand_bound(None) if bound is None else bound
    by_upper = {str(p.get("upper")): bounded(p, bound) for p in pairs
                if str(p.get("lower")) not in left_out}  # no verdict against who never played
    table = [_row(k, r, by_upper.get(str(r.get("name"))), left_out, bound, confidence)
             for k, r in enumerate(rows)]
    for k in range(len(table) - 1):  # no probability against who never played
        if table[k + 1][COLUMNS.index("name")] in left_out:
            table[k][COLUMNS.index("p_above_next")] = None
    return table


def group_data(group: FaultGroup, examples: dict[str, Any]) -> dict[str, Any]:
    """A fault group as the page's data; ``examples`` adds to each example what its replay
    page says (``turn``, ``log``, ``tail``), by ``<match id>/<seat>``."""
    items = [ex | examples.get(f"{ex['id']}/{ex['seat']}", {}) for ex in group.examples]
    return {"name": group.name, "kind": group.kind, "count": group.count,
            "benched": group.benched, "examples": items}


SETTINGS_KEYS = ("format", "players", "seatings", "rounds", "target", "variant",
                 "concurrency", "preflight")


def _amount(value: object, unit: str) -> str | None:
    n = _num(value)
    if n == 1 and unit == "cores":
        unit = "core"
    return None if n is None else f"{n:g} {unit}".rstrip()


def limit_words(config: dict[str, Any] | None) -> list[str]:
    """Each limit of a resolved configuration in words, ``label: text`` (a label of at most 9
    characters, a text of at most about 66: the terminal's header shows them as they are),
    ``0`` where it means none said as ``no limit``: ``faults: no limit (max_faults 0: no entrant
    is disqualified)``, ``clock: a move 1000 ms, start-up 10000 ms, time bank none``,
    ``bots: memory 512 MiB, processes 64, CPU 1 core, files 64 MiB``."""
    config = config or {}
    out = []
    cap = config.get("max_matches")
    if "max_matches" in config:
        out.append("match cap: no limit (every planned match)" if cap in (None, 0) else
                   f"match cap: at most {cap} matches (max_matches)")
    faults = _num(config.get("max_faults"))
    if faults is not None:
        out.append("faults: no limit (max_faults 0: no entrant is disqualified)" if faults == 0
                   else f"faults: an entrant is disqualified after {faults:g} (max_faults)")
    limits = config.get("limits")
    if isinstance(limits, dict):
        for label, keys in (("clock", (("move_ms", "a move", "ms"),
                                       ("startup_ms", "start-up", "ms"),
                                       ("bank_ms", "time bank", "ms a match"))),
                            ("bots", (("memory_mb", "memory", "MiB"), ("pids", "processes", ""),
                                       ("cpus", "CPU", "cores"), ("file_mb", "files", "MiB")))):
            words = []
            for key, name, unit in keys:
                if key in limits:
                    n = _num(limits[key])
                    zero = "none" if key == "bank_ms" else "no limit"
                    words.append(f"{name} {zero if n == 0 else _amount(limits[key], unit) or '?'}")
            if words:
                out.append(f"{label}: " + ", ".join(words))
    return out


def settings(config: dict[str, Any] | None, standings: dict[str, Any] | None) -> list[str]:
    """The format and the stop settings, as ``key: value`` texts."""
    out = []
    config = config or {}
    for key in SETTINGS_KEYS:
        value = config.get(key)
        if value is not None and not isinstance(value, dict | list):
            out.append(f"{key.replace('_', ' ')}: {value}")
    out += limit_words(config)
    stop = config.get("stop")
    if isinstance(stop, dict):
        conf, margin = _num(stop.get("confidence")), _num(stop.get("margin"))
        out.append(f"stop: when every adjacent pair is decided at confidence "
                   f"{conf if conf is not None else '?':g}"
                   f"{'' if not margin else f', ties within {margin:g} points a hand'}")
    elif stop is not None and not isinstance(stop, list):
        out.append(f"stop: {stop}")
    else:
        out.append("stop: none (every planned match is played; verdicts at confidence 0.95)")
    rating = (standings or {}).get("rating") or config.get("rating")
    if isinstance(rating, dict) and _num(rating.get("mu")) is not None:
        sigma = _num(rating.get("sigma")) or 0
        per = ("once per duplicate set, on luck-adjusted points"
               if rating.get("per", "set") == "set" else "once per match, on finishing ranks")
        out.append(f"rating: TrueSkill mu {rating['mu']:g}, sigma {sigma:g}, updated {per}")
    return out


STOPPED = {"settled": "stopped early: every adjacent pair has a verdict",
           "cap": "stopped at the match cap, some pairs still open",
           "complete": "every planned match played"}
"""What ``standings.json``'s ``stopped`` means, in words."""


def page_data(summary: Summary, *, name: str, rows: list[dict[str, Any]],
              standings: dict[str, Any] | None, config: dict[str, Any] | None,
              preflight: dict[str, str], chart: dict[str, Any] | None = None,
              pages: list[str] | str = "none", files: tuple[str, ...] = (), examples: dict[str, Any]
              | None = None, table: list[list[Any]] | None = None) -> dict[str, Any]:
    """The data ``report/data.js`` holds: everything the index shows but the match list.

    :param rows: the standings rows (``standings.json``'s, or a snapshot of the running table).
    :param standings: ``standings.json`` once written (pairs, questions, left out, stopped).
    :param examples: per match id, what its replay page adds to a fault example (``turn``,
        ``log``, ``tail``).
    :param table: :func:`standings_rows` of ``rows``, if already made.
    """
    doc = standings or {}
    final = standings is not None
    bound = hand_bound(config)
    confidence = interval_confidence(config)
    pairs = [bounded(p, bound) for p in doc.get("pairs") or () if isinstance(p, dict)]
    questions = [bounded(q, bound) for q in doc.get("questions") or () if isinstance(q, dict)]
    left_out = dict(summary.left_out) | ({str(k): str(v) for k, v in (
        doc.get("left_out") or {}).items()} if isinstance(doc.get("left_out"), dict) else {})
    rows = [r for r in rows if isinstance(r, dict)]
    stopped = doc.get("stopped") if isinstance(doc.get("stopped"), str) else None
    matches = summary.count
    order = [str(r.get("name", "?")) for r in rows]
    place = {n: k for k, n in enumerate(order)}
    order += [n for n in summary.names if n not in place]
    place = {n: k for k, n in enumerate(order)}
    top = [n for n in order if n not in left_out][:CROSS_TOP]  # who played
    cross = [[summary.cell(a, b) if a != b else None for b in top] for a in top]
    audit = [bounded({"name": str(r.get("name")), **{k: r["audit"].get(k) for k in (
        "later_minus_first", "low", "high", "flag", "sets", "why")}}, bound)
             for r in rows if isinstance(r.get("audit"), dict)
             and str(r.get("name")) not in left_out]  # the fallback's play: nothing to audit
    examples = examples or {}
    played = [g for g in summary.faults.values()  # a left-out entrant's row says it all
              if not (g.name in left_out and g.benched == g.count)]
    shown = sorted(played, key=lambda g: (place.get(g.name, len(order)), g.kind))[:FAULT_GROUPS]
    groups = [group_data(g, examples) for g in shown]
    all_rows = (standings_rows(rows, pairs, left_out, bound=bound, confidence=confidence)
                if table is None else table)
    return {
        "name": name, "final": final, "matches": matches,
        "entrants": len(order),
        "headline": headline(rows, pairs, matches, final=final, stopped=stopped,
                             questions=questions, left_out=left_out, bound=bound),
        "stopped": STOPPED.get(stopped or "", stopped or ""),
        "settings": settings(config, standings),
        "order_note": order_note(rows),
        "columns": COLUMNS,
        "names": order,
        "rows": all_rows[:ROWS_FILE], "row_files": math.ceil(len(all_rows) / ROWS_FILE)
        if len(all_rows) > ROWS_FILE else 0, "rows_total": len(all_rows),
        "questions": [{"upper": str(q.get("upper")), "lower": str(q.get("lower")),
                       "verdict": str(q.get("verdict")),
                       "text": pair_text(q, bound, confidence=confidence)}
                      for q in questions],
        "left_out": left_out, "preflight": preflight, "audit": audit,
        "cross": {"names": top, "cells": cross},
        "faults": groups, "fault_groups": len(played),
        "chunk": CHUNK, "chunks": math.ceil(matches / CHUNK),
        "chart": chart, "pages": pages, "files": list(files),
    }
