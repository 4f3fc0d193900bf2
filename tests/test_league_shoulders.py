"""A league stands on the tournament's shoulders: the keys they share are read by one loader,
every match of either is built by one function, both start through one start-up; so a
security setting made for tournaments reaches leagues by construction. And no module imports a
private name (``_x``) of another package."""

from __future__ import annotations

import ast
import dataclasses
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from conftest import ROOT
from referee.bots.limits import SandboxMode
from referee.league import run as league_run
from referee.league.book import Book
from referee.league.config import LeagueConfig, load_league
from referee.league.journal import LeagueFolder
from referee.league.matchmaker import Matchmaker
from referee.league.planner import Planner
from referee.league.versions import Versions
from referee.match.job import DealSecret
from referee.match.play import Entrant
from referee.tournament import run as tournament_run
from referee.tournament import startup
from referee.tournament.common import COMMON_KEYS, Common, ConfigError
from referee.tournament.config import Config, load_config
from referee.tournament.output import Journal, prepare_output
from referee.tournament.session import TournamentSession

SECRET = DealSecret(b"\x07" * 16)
BAD = {"variant": "thai", "players": 5, "target": 0, "seatings": "some",
       "concurrency": 0, "affinity": "maybe", "limits": "{move_ms: 0, memory_mb: x}",
       "sandbox": "bwrp", "rating": "{sigma: 0}", "shared": "[/no/such/path]",
       "snapshot_mb": "lots", "bot_uids": "mine", "max_matches": 1}
"""A wrong value of each key both read (``name``, ``entrants``, ``output`` aside)."""


def both(tmp_path: Path, keys: dict[str, Any]) -> tuple[Path, Path]:
    """A tournament's and a league's YAML, the same ``keys`` in each (on the same lines)."""
    (tmp_path / "subs").mkdir(exist_ok=True)
    common = "".join(f"{k}: {v}\n" for k, v in keys.items())
    tour, league = tmp_path / "t.yaml", tmp_path / "l.yaml"
    tour.write_text(f"{common}name: x\nentrants:\n  - {{name: a, command: python3 bot.py}}\n"
                    f"  - {{name: b, command: python3 bot.py}}\n")
    league.write_text(f"{common}name: x\nsubmissions: subs\n")
    (tmp_path / "bot.py").write_text("")
    return tour, league


def mistakes(load: Any, path: Path) -> list[str]:
    with pytest.raises(ConfigError) as err:
        load(path)
    return [line.split(": ", 1)[1] for line in err.value.lines]


def test_the_keys_a_league_shares_with_a_tournament_are_read_by_one_loader(
        tmp_path: Path) -> None:
    """Every wrong value of a shared key says the same in both, and the same keys make the
    same settings: a key added to the tournament's shared ones is a league's too."""
    assert set(BAD) | {"name", "entrants", "output"} == set(COMMON_KEYS)
    tour, league = both(tmp_path, BAD)
    said = mistakes(load_config, tour)
    assert mistakes(load_league, league) == said and len(said) >= len(BAD), said
    keys = {"variant": "red-frog-black-frog", "players": 2, "target": 300, "seatings": "all",
            "concurrency": 2, "affinity": "false", "sandbox": "bwrap", "bot_uids": "shared",
            "limits": "{move_ms: 250, memory_mb: 128, pids: 16, tmp_mb: 1, file_mb: 2}",
            "rating": "{sigma: 5, beta: 3}", "shared": f"[{tmp_path / 'bot.py'}]",
            "snapshot_mb": 9, "max_matches": 40}
    tour, league = both(tmp_path, keys)
    t, lg = load_config(tour), load_league(league)
    shared = [f.name for f in dataclasses.fields(Common)
              if f.name not in ("path", "entrants", "warnings")]
    assert {k: getattr(t, k) for k in shared} == {k: getattr(lg, k) for k in shared}
    assert isinstance(t, Common) and isinstance(lg, Common)


def test_a_league_and_a_tournament_build_their_matches_alike(tmp_path: Path) -> None:
    """The same keys, the same match: the limits, the sandbox, what is hidden from the bots,
    where the logs and the record go, all from one function (``startup.match_job``)."""
    keys = {"players": 2, "sandbox": "bwrap", "limits": "{move_ms: 250, pids: 16}"}
    tour, league = both(tmp_path, keys | {"output": "out"})
    tc: Config = load_config(tour)
    lc: LeagueConfig = load_league(league)
    prepare_output(tc, deal_secret=SECRET)
    session = TournamentSession(tc, SECRET, runner=SimpleNamespace(),  # type: ignore[arg-type]
                                stop=threading.Event())
    spec = session.next_round()[0]
    job_t = session.job(spec, {})
    book = Book(lc, SECRET)
    mm = Matchmaker(players=2)
    versions = Versions(book, mm, Journal(tmp_path / "events.jsonl"), placement=1)
    for name in ("a", "b"):
        book.join(name, author=name, version=1)
        versions.playable[name] = Entrant(name, ("python3", "bot.py"), tmp_path)
        mm.add(name, 25.0, 8.3)
    planner = Planner(lc, book, versions, mm, folder=LeagueFolder(lc.output),
                      mode=SandboxMode.BWRAP, remote=False, stop=threading.Event())
    job_l = planner.job(planner.next_set()[0])
    for field in ("variant", "target", "limits", "sandbox", "hidden", "tournament"):
        assert getattr(job_t, field) == getattr(job_l, field), field
    for job, folder in ((job_t, tc.output), (job_l, lc.output)):
        assert job.logs_dir == folder / "logs" / job.spec.id
        assert job.record_path == folder / "games" / f"{job.spec.id}.json.gz"
    assert job_l.hidden == (lc.output,) and job_l.limits.pids == 16


def test_a_league_starts_through_the_tournaments_start_up(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A check the start-up makes (here the bots' uids, made to refuse) stops a league as it
    stops a tournament, with the same words: there is one start-up."""
    def refuse(config: Common) -> None:
        raise ConfigError(f"{config.path}: refused by the one start-up")

    monkeypatch.setattr(startup, "check_bot_uids", refuse)
    monkeypatch.setattr(startup, "bwrap_available", lambda: True)
    monkeypatch.setattr(startup, "capabilities", lambda: SimpleNamespace(
        cgroup_ok=lambda c: True, summary=lambda: "probed", weaker=lambda: ()))
    tour, league = both(tmp_path, {"sandbox": "bwrap", "output": "out", "players": 2})
    with pytest.raises(ConfigError, match="refused by the one start-up"):
        tournament_run.run(load_config(tour))
    with pytest.raises(ConfigError, match="refused by the one start-up"):
        league_run.run_league(load_league(league), stop=threading.Event())


def private_imports(root: Path) -> list[str]:
    """``from referee.<package>... import _name`` of another package's private name, as
    ``path: module._name``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        package = path.relative_to(root.parent).parts[1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith(
                    "referee."):
                continue
            theirs = (node.module or "").split(".")[1]
            if theirs == package:
                continue
            found += [f"{path.relative_to(root.parent)}: {node.module}.{a.name}"
                      for a in node.names if a.name.startswith("_")]
    return found


def test_no_module_imports_another_packages_private_name(tmp_path: Path) -> None:
    assert private_imports(ROOT / "referee") == []
    fake = tmp_path / "referee"
    (fake / "a").mkdir(parents=True)
    (fake / "a" / "m.py").write_text("from referee.b.x import _y, z\nfrom referee.a.n import _w\n")
    assert private_imports(fake) == ["referee/a/m.py: referee.b.x._y"]
