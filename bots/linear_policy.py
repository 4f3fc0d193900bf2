"""linear-policy: a learned linear policy for Chinese Ten over the environment's encoding.

Enter it as a bot (needs the ``rl`` extra, numpy):

    ct-referee bot bots/linear_policy.py:act

``act(observation, action_mask)`` scores every legal action with a weighted sum of a few
features read from the observation (docs/learning.md has the layout) and plays the best. The
weights in ``linear_policy.json`` beside this file were learned by ``bots/train_linear.py`` in
the PettingZoo environment (``referee.learning.env``); ``GREEDY`` are hand-set weights that play
like
greedy_bot (the training opponents).

Features of a ``go`` action (points are the match variant's, divided by 50):

- ``capture``: 1 if the card captures; ``capture_value``: points captured (the card and its
  target; a sweep counts all three); ``sweep``: 1 for a layout three of a kind swept;
  ``capture_denial``: the target's points times the share of the capturing rank still unseen
  (what an opponent could have taken instead);
- ``throw_value``: points of a card that captures nothing (it stays on the table);
  ``throw_risk``: that value times the share of its partner rank still unseen (what an opponent
  may take); ``throw_retake``: 1 if another card in hand could capture it back;
  ``throw_stock``: that value times the chance that the stock card turned right after captures
  it for us;
- ``card_value``: points of the card played, captured or not.

A ``pick`` action has one feature, ``pick_value``: the points of the table card it takes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from referee.game import encoding as enc
from referee.game.rules import PARTNER, Variant

FEATURES = ("capture", "capture_value", "sweep", "capture_denial", "throw_value", "throw_risk",
            "throw_retake", "throw_stock", "card_value", "pick_value")
GREEDY = np.array([10.0, 1.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 0.0, 1.0])
"""Hand-set weights: the most points this move, else the cheapest throw (like greedy_bot)."""

WEIGHTS_FILE = Path(__file__).with_suffix(".json")
_POINTS = {False: np.array(Variant.CLASSIC.points, dtype=np.float64) / 50.0,
           True: np.array(Variant.RED_FROG.points, dtype=np.float64) / 50.0}
_PARTNER = np.array(PARTNER)


def features(observation: np.ndarray, action_mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The legal actions and one row of :data:`FEATURES` for each."""
    actions = np.flatnonzero(action_mask)
    rows = np.zeros((len(actions), len(FEATURES)))
    pts = _POINTS[bool(observation[enc.RED_FROG])]
    if observation[enc.PICKING]:
        rows[:, 9] = pts[actions - enc.PICK_BASE]
        return actions, rows
    hand = observation[enc.HAND:enc.HAND + 52]
    table = observation[enc.TABLE:enc.TABLE + 52]
    unseen = observation[enc.UNSEEN:enc.UNSEEN + 52].reshape(13, 4).sum(axis=1)
    n_unseen = max(float(unseen.sum()), 1.0)
    held = hand.reshape(13, 4).sum(axis=1)
    on_table = table.reshape(13, 4)
    for i, a in enumerate(actions):
        card, slot = divmod(int(a), 5)
        rank = card >> 2
        partner = _PARTNER[rank]
        row = rows[i]
        row[8] = pts[card]
        if slot:
            target = pts[partner * 4 + slot - 1]
            row[0] = 1.0
            row[1] = pts[card] + target
            row[3] = target * unseen[rank] / 4.0
        elif on_table[partner].any():  # slot 0 with targets on the table: a sweep
            row[0] = row[2] = 1.0
            row[1] = pts[card] + float(on_table[partner] @ pts[partner * 4:partner * 4 + 4])
        else:
            row[4] = pts[card]
            row[5] = pts[card] * unseen[partner] / 4.0
            row[6] = 1.0 if held[partner] - (partner == rank) > 0 else 0.0
            row[7] = pts[card] * unseen[partner] / n_unseen
    return actions, rows


def choose(weights: np.ndarray, observation: np.ndarray, action_mask: np.ndarray) -> int:
    """The legal action with the highest score (the first of equal ones)."""
    actions, rows = features(observation, action_mask)
    return int(actions[int(np.argmax(rows @ weights))])


def load_weights(path: Path = WEIGHTS_FILE) -> np.ndarray:
    """The learned weights, in the order of :data:`FEATURES`."""
    data = json.loads(path.read_text())
    return np.array([float(data["weights"][name]) for name in FEATURES])


_LEARNED: np.ndarray | None = None


def act(observation: np.ndarray, action_mask: np.ndarray) -> int:
    """The policy the bridge calls: the learned weights."""
    global _LEARNED
    if _LEARNED is None:
        _LEARNED = load_weights()
    return choose(_LEARNED, observation, action_mask)


def greedy(observation: np.ndarray, action_mask: np.ndarray) -> int:
    """The hand-set greedy weights, as a policy."""
    return choose(GREEDY, observation, action_mask)
