"""Hostile probes: attacks a bot might try, run inside the sandbox by ``ct-referee sandbox``
and by the tests' hostile bots. Each attack returns ``None`` when refused, else what it got."""
