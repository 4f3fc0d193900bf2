"""The id of a tournament's match, ``r1-g007-s03`` (round, group, seating), written and read
back in one place: the schedule makes them, the output folder names its files by them, the
report groups them into duplicate sets.

>>> m = MatchId(1, 7, 3)
>>> str(m), m.set
('r1-g007-s03', 'r1-g007')
>>> MatchId.parse("r01-g0012-s004") == MatchId(1, 12, 4) and str(MatchId.parse("r01-g0012-s004"))
'r01-g0012-s004'
>>> MatchId.parse("play-7")
Traceback (most recent call last):
...
ValueError: not a match id: 'play-7' (expected r<round>-g<group>-s<seating>)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["MatchId"]

_FORM = re.compile(r"r([0-9]+)-g([0-9]+)-s([0-9]+)")


@dataclass(frozen=True, order=True)
class MatchId:
    """Round, group and seating, each 1-based; written zero-padded to :attr:`widths` (rounds to
    the width of the last round, groups to at least 3 digits, seatings to at least 2: see
    :meth:`widths_for`), so that ids sort in schedule order."""

    round: int
    group: int
    seating: int
    widths: tuple[int, int, int] = field(default=(1, 3, 2), compare=False)
    """Digits of the round, the group and the seating."""

    @staticmethod
    def widths_for(rounds: int, groups: int, seatings: int) -> tuple[int, int, int]:
        """The widths of a schedule of ``rounds`` rounds of ``groups`` groups of ``seatings``
        seatings."""
        return len(str(rounds)), max(3, len(str(groups))), max(2, len(str(seatings)))

    @classmethod
    def parse(cls, text: str) -> MatchId:
        """The id ``text`` stands for (its widths as written).

        :raises ValueError: if it is not one.
        """
        found = _FORM.fullmatch(text)
        if found is None:
            raise ValueError(f"not a match id: {text!r} (expected r<round>-g<group>-s<seating>)")
        r, g, s = found.groups()
        return cls(int(r), int(g), int(s), (len(r), len(g), len(s)))

    @classmethod
    def is_one(cls, text: object) -> bool:
        """Whether ``text`` is a match id."""
        if not isinstance(text, str):
            return False
        try:
            cls.parse(text)
        except ValueError:
            return False
        return True

    @property
    def set(self) -> str:
        """The duplicate set it belongs to, ``r1-g007``: the group's seatings in one round,
        dealt the same cards."""
        rw, gw, _ = self.widths
        return f"r{self.round:0{rw}d}-g{self.group:0{gw}d}"

    def __str__(self) -> str:
        return f"{self.set}-s{self.seating:0{self.widths[2]}d}"
