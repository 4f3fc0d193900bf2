"""Which match of the schedule, as plain data without I/O: :class:`MatchSpec` (its id, its
seats and the deals it plays), the tournament's :class:`DealSecret`, and :class:`MatchKeys`
(what the secret gives one match, for a machine not trusted with it). The planners (formats,
schedule, audit, the course of a tournament) import this, never the job that plays a match
(:mod:`referee.match.job`, which re-exports these names): a planner imports no process code
(``pyproject.toml``'s import contract).

>>> spec = MatchSpec("r1-g001-s01", 0, 1, 1, 1, (0, 1, 2), "1:1:1", bytes(32))
>>> spec.deal(1) == MatchSpec("r1-g001-s02", 1, 1, 1, 2, (0, 2, 1), "1:1:1", bytes(32)).deal(1)
True
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass, field

from referee.game.rules import Deal, Variant

__all__ = ["DealSecret", "MatchKeys", "MatchSpec", "deal_seed", "max_hands"]


@dataclass(frozen=True)
class DealSecret:
    """A tournament's deal secret: the key of every deal, bot id and fallback choice (with each
    match's label). There is no default one: a tournament's is its output folder's
    (:func:`referee.tournament.output.prepare_output`), a test's or a benchmark's is written out.

    >>> DealSecret.from_hex("ab" * 16)
    DealSecret(<16 bytes>)
    >>> DealSecret(b"short")
    Traceback (most recent call last):
    ...
    ValueError: a deal secret needs at least 16 bytes, not 5
    """

    key: bytes
    """The secret bytes (at least :attr:`MIN_BYTES`)."""

    MIN_BYTES = 16
    """The fewest bytes a secret may have (128 bits)."""
    NEW_BYTES = 32
    """The bytes of a new secret (:meth:`new`)."""

    def __post_init__(self) -> None:
        if not isinstance(self.key, bytes):
            raise TypeError(f"a deal secret is bytes, not {type(self.key).__name__}")
        if len(self.key) < self.MIN_BYTES:
            raise ValueError(f"a deal secret needs at least {self.MIN_BYTES} bytes, "
                             f"not {len(self.key)}")

    def __repr__(self) -> str:
        return f"DealSecret(<{len(self.key)} bytes>)"

    @classmethod
    def new(cls) -> DealSecret:
        """A new, unpredictable secret."""
        return cls(secrets.token_bytes(cls.NEW_BYTES))

    @classmethod
    def of(cls, value: DealSecret | bytes) -> DealSecret:
        """``value`` as a secret (bytes are checked).

        :raises ValueError: for fewer than :attr:`MIN_BYTES` bytes.
        """
        return value if isinstance(value, DealSecret) else cls(value)

    @classmethod
    def from_hex(cls, text: str) -> DealSecret:
        """The secret written as hex digits (surrounding blanks ignored).

        :raises ValueError: for text that is not hex, or too short a secret.
        """
        return cls(bytes.fromhex(text.strip()))

    def hex(self) -> str:
        """The secret as hex digits (as the output folder's file holds it)."""
        return self.key.hex()


@dataclass(frozen=True)
class MatchSpec:
    """One match of the schedule: who sits where, and which deals it plays."""

    id: str
    """Sortable id like ``r1-g007-s03``: round, group, seating, zero-padded (groups to at least
    3 digits, seatings to 2, rounds to the width of the last round)."""
    index: int
    """Position in the schedule (0-based): matches are rated in this order."""
    round: int
    """Round, 1-based."""
    group: int
    """Group, 1-based, in :func:`groups` order."""
    seating: int
    """Seating within the group, 1-based."""
    seats: tuple[int, ...]
    """Entrant indices (configuration order) by seat."""
    seed: str
    """Deal label prefix of the group in this round (every seating): ``seed:round:group``."""
    secret: bytes = field(repr=False)
    """The tournament's deal secret: with the label it keys every deal; empty in a
    :meth:`MatchJob.sealed` job's spec (where the deals travel instead), which then refuses
    :meth:`deal` and :attr:`bot_id`."""

    @property
    def players(self) -> int:
        """Seats at the table."""
        return len(self.seats)

    def deal(self, hand_number: int) -> Deal:
        """The deal of the match's hand ``hand_number`` (1-based): the same in every seating of
        the group, keyed by :attr:`secret` (HMAC-SHA256 of ``seed:round:group:hand``)."""
        return Deal.from_key(self.players, self._secret(), deal_seed(self.seed, hand_number))

    @property
    def bot_id(self) -> str:
        """The id the bots are told: 12 hex digits of HMAC-SHA256(:attr:`secret`, ``id:<id>``),
        which say nothing of the round, group, seating or seed without the secret, and are the
        same when the match is played again (resumed) with the same secret."""
        return hmac.new(self._secret(), f"id:{self.id}".encode(),
                        hashlib.sha256).hexdigest()[:12]

    @property
    def fallback_key(self) -> bytes:
        """The key of this match's fallback choices: HMAC-SHA256(:attr:`secret`,
        ``fallback:<id>``), which tells nothing of another match's."""
        return hmac.new(self._secret(), f"fallback:{self.id}".encode(), hashlib.sha256).digest()

    def _secret(self) -> bytes:
        if not self.secret:
            raise ValueError(f"match {self.id}: its spec was sealed (no deal secret): its "
                             f"deals are the job's keys")
        return self.secret

    @property
    def deals_key(self) -> tuple[int, int]:
        """Round and group: matches with the same key play the same deals."""
        return (self.round, self.group)


def max_hands(players: int, variant: Variant, target: int) -> int:
    """The most hands a match can last: every hand hands out all its points
    (:attr:`Variant.hand_total`), so after ``h`` hands some total is at least
    ``h * total / players``, and the match is over once that reaches ``target``."""
    return -(-players * target // variant.hand_total)


@dataclass(frozen=True)
class MatchKeys:
    """What the deal secret gives one match, derived from it where the secret is (plain data
    for a worker that must not hold the secret: from these, no other match's deals, bot id or
    fallback choices follow)."""

    deals: tuple[Deal, ...]
    """The deals of hands 1, 2, ...: every hand the match can last (:func:`max_hands`)."""
    bot_id: str
    fallback_key: bytes = field(repr=False)

    @classmethod
    def of(cls, spec: MatchSpec, variant: Variant, target: int) -> MatchKeys:
        """The keys of ``spec``'s match (``variant``, to ``target``)."""
        hands = max_hands(spec.players, variant, target)
        return cls(tuple(spec.deal(k) for k in range(1, hands + 1)), spec.bot_id,
                   spec.fallback_key)

    def deal(self, hand_number: int) -> Deal:
        """The deal of hand ``hand_number`` (1-based).

        :raises ValueError: past the last hand the match can last.
        """
        if not 1 <= hand_number <= len(self.deals):
            raise ValueError(f"no deal for hand {hand_number}: the match was given "
                             f"{len(self.deals)}")
        return self.deals[hand_number - 1]


def deal_seed(prefix: str, hand_number: int) -> str:
    """The label of one hand's deal: ``<seed>:<round>:<group>:<hand>``."""
    return f"{prefix}:{hand_number}"
