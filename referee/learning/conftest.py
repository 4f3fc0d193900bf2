"""pytest's settings for this folder (not part of the package's code): ``env.py`` needs the
``rl`` extra (pettingzoo, gymnasium, numpy); without it, it is not collected for its doctests
(``tests/test_env.py`` skips, saying which extra to install)."""

from importlib.util import find_spec

collect_ignore = [] if all(find_spec(m) for m in ("numpy", "gymnasium", "pettingzoo")) else [
    "env.py"]
