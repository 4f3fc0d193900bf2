"""Test policies for the bridge: deterministic functions of (observation, action mask)."""

from __future__ import annotations

import random
import zlib

import numpy as np


def hashed_random(observation: np.ndarray, action_mask: np.ndarray) -> int:
    """A random legal action, drawn from a generator seeded by the observation and mask bytes:
    two encoders that differ anywhere make it choose differently."""
    legal = np.flatnonzero(action_mask)
    rng = random.Random(zlib.crc32(observation.tobytes() + action_mask.tobytes()))
    return int(legal[rng.randrange(len(legal))])


def first(observation: np.ndarray, action_mask: np.ndarray) -> int:
    """The first legal action."""
    return int(np.flatnonzero(action_mask)[0])


def illegal(observation: np.ndarray, action_mask: np.ndarray) -> int:
    """Always an illegal action (the bridge must still answer legally)."""
    return int(np.flatnonzero(action_mask == 0)[0])
