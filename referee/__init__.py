"""ct-referee: referee and tournament runner for Chinese Ten bots."""
