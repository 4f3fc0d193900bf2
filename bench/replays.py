"""A tournament's replays on disk: for each record of a games folder, the data the report's one
replay page reads (``report/replays/<id>.js``: the page's data, gzip-compressed, in base64)
against a match's page of its own (``report/games/<id>.html``, what a tournament of at most 999
matches gets), and the CPU to make each from the record (its check under the rules included),
and to make ``replays/<id>.js`` from the match's own page instead (what the report does where
the worker that played the match wrote the page).

    python bench/replays.py results/demo/games
    python bench/replays.py        # results/demo/games where make demo left it, else nothing

Without a folder and without ``results/demo/games`` it says so and exits 0 (``make bench``
runs every bench without arguments).

Prints the mean bytes a match of each, and the mean and median CPU to make one (one process,
one core).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from referee.records.record import read_record, record_id  # noqa: E402
from referee.records.replay import check_replayable  # noqa: E402
from referee.web.replay_html import (  # noqa: E402
    linked_page,
    replay_script,
    replay_script_of_page,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("games", type=Path, nargs="?", default=ROOT / "results/demo/games",
                        help="a tournament's games/ folder (default: results/demo/games)")
    args = parser.parse_args()
    if not args.games.is_dir():
        print(f"no games folder at {args.games}: run make demo, or name a tournament's games/")
        return
    files = sorted(p for p in args.games.iterdir() if record_id(p.name) is not None)
    if not files:
        sys.exit(f"no record in {args.games}")
    shared, own, record, cpu, derived = [], [], [], [], []
    for path in files:
        data = read_record(path)
        start = time.process_time()
        check_replayable(data, strict=True)
        script = replay_script(data)
        cpu.append(time.process_time() - start)
        shared.append(len(script.encode()))
        page = linked_page(data, assets="../", back="../index.html")
        own.append(len(page.encode()))
        start = time.process_time()
        again = replay_script_of_page(page, str(data["id"]))
        derived.append(time.process_time() - start)
        assert again == script, f"{path}: the page's data is not the record's"
        record.append(path.stat().st_size)
    hands = statistics.mean(len(read_record(p)["hands"]) for p in files[:50])
    print(f"{len(files)} records in {args.games} (about {hands:.1f} hands a match)")
    print(f"  record:                        {statistics.mean(record) / 1000:6.2f} KB a match")
    print(f"  replays/<id>.js (one page):    {statistics.mean(shared) / 1000:6.2f} KB a match")
    print(f"  games/<id>.html (its own page): {statistics.mean(own) / 1000:5.2f} KB a match")
    print(f"  CPU to make replays/<id>.js:   {1000 * statistics.mean(cpu):6.1f} ms mean, "
          f"{1000 * statistics.median(cpu):.1f} ms median")
    print(f"  CPU to make it from the page:  {1000 * statistics.mean(derived):6.1f} ms mean, "
          f"{1000 * statistics.median(derived):.1f} ms median")
    print(f"  100,000 matches: {statistics.mean(shared) * 1e5 / 1e9:.2f} GB and "
          f"{statistics.mean(cpu) * 1e5 / 60:.0f} min of CPU")


if __name__ == "__main__":
    main()
