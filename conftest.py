"""pytest's settings for the whole tree (the tests' own are in ``tests/conftest.py``).

``referee/`` is collected for its doctests; :mod:`referee.learning.env` needs the ``rl`` extra
(pettingzoo, gymnasium, numpy), so without it that module is not collected (``tests/test_env.py``
skips, saying which extra to install).
"""

from __future__ import annotations

from importlib.util import find_spec

RL = ("numpy", "gymnasium", "pettingzoo")

collect_ignore = [] if all(find_spec(m) for m in RL) else ["referee/learning/env.py"]
