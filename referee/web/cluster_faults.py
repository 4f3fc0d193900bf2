"""The cluster's workers whose results the coordinator refused, as the report page lists them
(docs/cluster.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from referee.protocol.escape import escape_controls

CLUSTER_FAULTS = "cluster-faults.json"
"""The coordinator's book of the cluster workers whose results it refused
(:class:`referee.runners.cluster.FaultBook`)."""
SHOWN_WORKERS = 20
"""The most workers the page lists (the file holds them all)."""


def cluster_faults(out: Path) -> list[dict[str, Any]]:
    """The workers whose results were refused, for the page: each worker, how many faults,
    whether it is excluded, and its first fault (one short line each)."""
    try:
        with (out / CLUSTER_FAULTS).open("rb") as file:
            doc = json.loads(file.read(1 << 20))
    except (OSError, ValueError):
        return []
    workers = doc.get("workers") if isinstance(doc, dict) else None
    if not isinstance(workers, dict):
        return []
    shown = []
    for worker, entry in list(workers.items())[:SHOWN_WORKERS]:
        faults = entry.get("faults") if isinstance(entry, dict) else None
        if not isinstance(faults, list) or not faults or not isinstance(faults[0], dict):
            continue
        first = faults[0]
        shown.append({"worker": escape_controls(str(worker)[:120]), "count": len(faults),
                      "excluded": bool(entry.get("excluded")),
                      "match": escape_controls(str(first.get("match"))[:40]),
                      "why": escape_controls(str(first.get("why"))[:300])})
    return shown
