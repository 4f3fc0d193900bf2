"""``ct-referee bot MODULE:FUNCTION``: a Python policy as a protocol bot
(:mod:`referee.learning.policy_bot`)."""

from __future__ import annotations

import sys
from pathlib import Path

import click


@click.command()
@click.argument("policy")
@click.option("--name", default=None, help="Name to say at 'ready' (default: the policy spec).")
def bot(policy: str, name: str | None) -> None:
    """Play as a bot: POLICY answers the referee's requests on stdin/stdout.

    POLICY is MODULE:FUNCTION (importable from the current folder) or FILE.py:FUNCTION, a
    function policy(observation, action_mask) -> action over the training environment's
    encoding (docs/learning.md). Needs the rl extra (numpy).

    \b
    Examples:
      ct-referee check "ct-referee bot bots/linear_policy.py:act"
      ct-referee play "ct-referee bot mypolicy:act" "python3 bots/greedy_bot.py" \\
                      "python3 bots/random_bot.py"
    """
    try:
        import numpy  # noqa: F401 (the encoding hands policies numpy arrays)
    except ImportError:
        click.echo("error: the policy bridge needs numpy: pip install 'ct-referee[rl]'", err=True)
        sys.exit(2)
    from referee.learning.policy_bot import PolicyError, load_policy, run

    try:
        fn = load_policy(policy, base=Path.cwd())
    except PolicyError as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(2)
    sys.exit(run(fn, name=name or f"policy {policy}", stdin=sys.stdin, stdout=sys.stdout,
                 stderr=sys.stderr))
