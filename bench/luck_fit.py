"""Fits the luck model's weights on real duplicate sets and measures what it removes.

Run:  .venv/bin/python bench/luck_fit.py FIT.jsonl [FIT2.jsonl ...] --test HELD.jsonl [...]
      (sets as ``bench/play_sets.py`` writes them, or tournament output folders)

For every pair of entrants and every deal of a set, the *piece* is the pair's difference in a
deal averaged over the set's swap pairs (:func:`referee.tournament.stopping.deal_pieces`, the
evidence ``stop`` reads). The luck model adjusts each seat's points by a weighted sum of the
flip features (:func:`referee.records.luck.flip_features`); the weights minimising the variance
of the pieces are fitted by least squares on the ``FIT`` sets (one intercept per pair: the
pairs' true differences) and judged on the ``--test`` sets, which the fit never saw. Prints the
per-deal standard deviation of each pair's pieces raw, with the immediate-points luck (the
``taken`` feature at weight 1, the records' ``luck`` before 2026-12-02), with the frozen model
(:data:`referee.records.luck.WEIGHTS`) and with the weights just fitted.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from referee.game.rules import Variant  # noqa: E402
from referee.records import luck as luck_mod  # noqa: E402
from referee.records.record import read_json  # noqa: E402
from referee.tournament.stopping import deal_pieces  # noqa: E402

K = len(luck_mod.FEATURES)


def read_sets(paths: Sequence[Path]) -> Iterator[list[dict[str, Any]]]:
    """Every complete duplicate set of 3 or 4 seats (or 2) in the files or folders."""
    for path in paths:
        if path.is_dir():
            groups: dict[str, list[dict[str, Any]]] = {}
            for f in sorted((path / "games").glob("*.json*")):
                rec = read_json(f)  # plain or compressed (games/<id>.json.gz)
                rnd, g, _ = rec["id"].split("-")
                groups.setdefault(rnd + g, []).append(rec)
            yield from groups.values()
        else:
            for line in path.read_text().splitlines():
                yield json.loads(line)["matches"]


def set_rows(matches: list[dict[str, Any]]) -> list[tuple[tuple[str, str], float, list[float]]]:
    """Per pair and deal: the raw piece and the piece of each feature."""
    names = sorted(matches[0]["players"])
    ix = {n: i for i, n in enumerate(names)}
    seats = [[ix[n] for n in m["players"]] for m in matches]
    n = len(names)
    scores = [[h["scores"] for h in m["hands"]] for m in matches]
    feats = [[luck_mod.flip_features(h, n, Variant.CLASSIC) for h in m["hands"]]
             for m in matches]
    rows = []
    for a, b in itertools.combinations(range(n), 2):
        raw = deal_pieces(a, b, seats, scores, None)
        per_feature = []
        for f in range(K):
            # a feature as the "luck" of deal_pieces: pieces of (0 - feature) = -feature piece
            fl = [[[row[f] for row in hand] for hand in m] for m in feats]
            zero = [[[0] * n for _ in m] for m in scores]
            per_feature.append([-x for x in deal_pieces(a, b, seats, zero, fl)])
        for k, x in enumerate(raw):
            rows.append(((names[a], names[b]), x, [pf[k] for pf in per_feature]))
    return rows


def solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Solves ``a x = b`` (Gaussian elimination with pivoting; ``a`` small and regular)."""
    n = len(b)
    m = [[*row, b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        if abs(m[c][c]) < 1e-12:
            continue
        for r in range(n):
            if r != c:
                f = m[r][c] / m[c][c]
                m[r] = [x - f * y for x, y in zip(m[r], m[c], strict=True)]
    return [m[i][n] / m[i][i] if abs(m[i][i]) > 1e-12 else 0.0 for i in range(n)]


def fit(rows: list[tuple[tuple[str, str], float, list[float]]], ridge: float = 1.0) -> list[float]:
    """Least-squares weights of the features (centred per pair), lightly ridged."""
    by_pair: dict[tuple[str, str], list[tuple[float, list[float]]]] = {}
    for pair, y, x in rows:
        by_pair.setdefault(pair, []).append((y, x))
    xtx = [[0.0] * K for _ in range(K)]
    xty = [0.0] * K
    for items in by_pair.values():
        my = statistics.fmean(y for y, _ in items)
        mx = [statistics.fmean(x[f] for _, x in items) for f in range(K)]
        for y, x in items:
            xc = [x[f] - mx[f] for f in range(K)]
            for i in range(K):
                xty[i] += xc[i] * (y - my)
                for j in range(K):
                    xtx[i][j] += xc[i] * xc[j]
    for i in range(K):
        xtx[i][i] += ridge
    return solve(xtx, xty)


def spread(rows: list[tuple[tuple[str, str], float, list[float]]],
           weights: Sequence[float]) -> dict[tuple[str, str], tuple[float, float, int]]:
    """Per pair: mean and standard deviation of the pieces adjusted by ``weights``."""
    by_pair: dict[tuple[str, str], list[float]] = {}
    for pair, y, x in rows:
        by_pair.setdefault(pair, []).append(y - sum(w * v for w, v in zip(weights, x,
                                                                          strict=True)))
    return {p: (statistics.fmean(v), statistics.stdev(v), len(v)) for p, v in by_pair.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("fit", type=Path, nargs="+")
    ap.add_argument("--test", type=Path, nargs="+", required=True)
    ap.add_argument("--ridge", type=float, default=100.0)
    args = ap.parse_args()
    fit_rows = [r for s in read_sets(args.fit) for r in set_rows(s)]
    test_rows = [r for s in read_sets(args.test) for r in set_rows(s)]
    w = fit(fit_rows, args.ridge)
    print(f"fitted on {len(fit_rows)} pair-deals, judged on {len(test_rows)} held out")
    print("weights: " + ", ".join(f"{n} {x:+.3f}" for n, x in zip(luck_mod.FEATURES, w,
                                                                  strict=True)))
    old = [1.0] + [0.0] * (K - 1)
    models = {"raw": [0.0] * K, "immediate luck": old, "frozen model": list(luck_mod.WEIGHTS),
              "fitted here": w}
    for name, rows in (("fit", fit_rows), ("held out", test_rows)):
        print(f"{name}: per-deal sd of a pair's piece (mean)")
        results = {m: spread(rows, wt) for m, wt in models.items()}
        for pair in sorted(results["raw"]):
            cells = "  ".join(f"{m} {results[m][pair][1]:5.2f}" for m in models)
            print(f"  {pair[0]}-{pair[1]} ({results['raw'][pair][2]} deals, mean "
                  f"{results['raw'][pair][0]:+.2f}): {cells}")
        for pair in sorted(results["raw"]):
            v1 = results["immediate luck"][pair][1] ** 2
            v2 = results["frozen model"][pair][1] ** 2
            print(f"  variance ratio immediate/frozen {pair[0]}-{pair[1]}: {v1 / v2:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
