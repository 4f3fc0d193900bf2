"""Tournament configuration: defaults, paths, and one clear line for every mistake."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from plans import planned

from conftest import EXAMPLES, PY
from referee.bots.limits import Limits, SandboxMode
from referee.cli import main
from referee.game.rules import Variant
from referee.tournament.admission import Preflight
from referee.tournament.formats import RoundRobin
from referee.tournament.ratings import RatingConfig
from referee.tournament.run import ConfigError, load_config
from referee.tournament.stopping import Stop

GOOD = f"""\
name: t
entrants:
  - name: random
    command: {PY} {EXAMPLES}/random_bot.py
  - name: greedy
    command: [{PY}, {EXAMPLES}/greedy_bot.py]
  - name: greedy2
    command: {PY} {EXAMPLES}/greedy_bot.py
"""


def write(tmp_path: Path, text: str, name: str = "t.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_defaults_are_filled_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = load_config(write(tmp_path, GOOD))
    assert (config.name, config.players, config.target, config.rounds) == ("t", 3, 1000, 1)
    assert (config.variant, config.format, config.seatings) == (
        Variant.CLASSIC, RoundRobin, "all")
    assert (config.seed, config.concurrency, config.sandbox) == (1, 1, "auto")
    assert config.affinity is None  # auto
    assert config.limits == Limits()
    assert config.rating == RatingConfig(draw_probability=0.02)
    assert config.output == tmp_path / "results" / "t"
    assert [e.workdir for e in config.entrants] == [tmp_path] * 3
    assert config.entrants[1].argv == (PY, f"{EXAMPLES}/greedy_bot.py")
    resolved = config.resolved()
    assert set(resolved) == {"name", "entrants", "variant", "players", "target", "format",
                             "rounds", "seatings", "seed", "concurrency", "affinity", "limits",
                             "sandbox", "output", "rating", "preflight", "max_faults", "shared",
                             "snapshot_mb", "bot_uids"}
    assert (config.preflight, config.max_faults) == ("leave-out", 0)
    assert "max_faults" not in config.identity()  # folders of earlier versions resume
    assert resolved["limits"] == {"startup_ms": 10000, "move_ms": 1000, "bank_ms": 0,
                                  "memory_mb": 512, "pids": 64, "cpus": 1.0, "tmp_mb": 64,
                                  "file_mb": 64}


def test_every_key_is_read(tmp_path: Path) -> None:
    text = GOOD + """\
variant: red-frog-black-frog
players: 2
target: 300
format: round-robin
rounds: 3
seatings: rotate
seed: spring-cup
concurrency: 4
limits: {startup_ms: 5000, move_ms: 200, bank_ms: 1000, memory_mb: 300, pids: 9, cpus: 0.5,
         tmp_mb: 7, file_mb: 0}
sandbox: none
output: out/here
rating: {mu: 30, sigma: 5, beta: 2.5, tau: 0.1, draw_probability: 0.05}
"""
    config = load_config(write(tmp_path, text))
    assert config.variant is Variant.RED_FROG and config.players == 2 and config.target == 300
    assert (config.rounds, config.seatings, config.seed) == (3, "rotate", "spring-cup")
    assert config.concurrency == 4 and config.sandbox == "none"
    assert config.limits == Limits(startup_ms=5000, move_ms=200, bank_ms=1000, memory_mb=300,
                                   pids=9, cpus=0.5, tmp_mb=7, file_mb=0)
    assert config.rating == RatingConfig(30, 5, 2.5, 0.1, 0.05)
    assert config.output == tmp_path / "out" / "here"  # relative to the file's folder
    assert len(planned(config, secret=bytes(32))) == 3 * 3 * 2


def test_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    conf = tmp_path / "conf"
    (conf / "bots").mkdir(parents=True)
    bot = conf / "bots" / "mybot"
    bot.write_text("#!/bin/sh\n")
    bot.chmod(0o755)
    text = GOOD + "  - name: mine\n    command: ./mybot --fast\n    workdir: bots\n"
    path = write(conf, text)
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    config = load_config(path, output="o", concurrency=3)
    assert config.entrants[3].workdir == conf / "bots"
    assert config.entrants[3].argv == ("./mybot", "--fast")
    assert config.output == elsewhere / "o"  # --output: relative to the current folder
    assert config.concurrency == 3
    assert load_config(path).output == elsewhere / "results" / "t"
    # A relative config path works from anywhere.
    monkeypatch.chdir(tmp_path)
    assert load_config(Path("conf/t.yaml")).entrants[3].workdir == conf / "bots"
    # tournament.yaml holds absolute paths, commands included (as strings or lists).
    resolved = load_config(Path("conf/t.yaml")).resolved()
    assert resolved["entrants"][3]["command"] == f"{bot} --fast"
    assert resolved["entrants"][1]["command"] == [PY, str(EXAMPLES / "greedy_bot.py")]
    assert resolved["output"] == str(tmp_path / "results" / "t")


def test_resolved_commands_are_absolute(tmp_path: Path) -> None:
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "my bot.py").write_text("")
    path = write(tmp_path, GOOD + "  - name: mine\n    command: python3 'bots/my bot.py' -v\n")
    command = load_config(path).resolved()["entrants"][3]["command"]
    assert shlex.split(command) == ["python3", str(tmp_path / "bots" / "my bot.py"), "-v"]


BAD = [
    ("unknown-key", GOOD + "seatting: all\n",
     "t.yaml:9: seatting: unknown key (did you mean 'seatings'?)"),
    ("unknown-nested-key", GOOD + "limits:\n  move_m: 10\n",
     "t.yaml:10: limits.move_m: unknown key (did you mean 'limits.move_ms'?)"),
    ("unknown-entrant-key", GOOD + "  - name: x\n    cmd: ls\n",
     "t.yaml:10: entrants[4].cmd: unknown key (did you mean 'entrants[4].command'?)"),
    ("wrong-type", GOOD + "players: three\n",
     "t.yaml:9: players: expected an integer, got a string 'three'"),
    ("float-target", GOOD + "target: 99.5\n", "target: expected an integer, got a number 99.5"),
    ("boolean", GOOD + "rounds: yes\n", "rounds: expected an integer, got a boolean True"),
    ("zero-rounds", GOOD + "rounds: 0\n", "rounds: must be at least 1, not 0"),
    ("players-range", GOOD + "players: 5\n", "players: must be from 2 to 4, not 5"),
    ("players-low", GOOD + "players: 1\n", "players: must be from 2 to 4, not 1"),
    ("bad-name", GOOD + "  - name: my bot\n    command: ls\n",
     "t.yaml:9: entrants[4].name: 'my bot' may only hold letters, digits, '-', '_' and '.'"),
    ("bad-tournament-name", GOOD.replace("name: t\n", "name: a/b\n"),
     "t.yaml:1: name: 'a/b' may only hold letters"),
    ("duplicate-name", GOOD + "  - name: greedy\n    command: ls\n",
     "t.yaml:9: entrants[4].name: 'greedy' is already the name of entrants[2]"),
    ("too-few", GOOD + "players: 4\n", "entrants: 3 entrant(s) cannot fill a table of 4"),
    ("no-entrants", "name: t\n", "t.yaml: entrants: missing"),
    ("entrants-not-list", "entrants: random\n", "entrants: expected a list of entrants"),
    ("missing-command", GOOD + "  - name: x\n", "t.yaml:9: entrants[4]: missing command"),
    ("empty-command", GOOD + "  - name: x\n    command: []\n",
     "entrants[4].command: expected a command line or a list of arguments"),
    ("variant", GOOD + "variant: clasic\n",
     "t.yaml:9: variant: unknown variant 'clasic' (did you mean 'classic'?"),
    ("seatings", GOOD + "seatings: some\n", "seatings: unknown seatings 'some'"),
    ("format", GOOD + "format: swiss\n",
     "format: unknown format 'swiss' (use round-robin or gauntlet or ladder)"),
    ("candidate-not-entrant", GOOD + "format: gauntlet\ncandidates: [greedy, grredy3]\n",
     "t.yaml:10: candidates[2]: 'grredy3' is not an entrant (did you mean 'greedy'?)"),
    ("candidates-everyone", GOOD + "format: gauntlet\ncandidates: [greedy, greedy2]\n",
     "candidates: a gauntlet of 3 players needs at least 2 entrants that are not candidates"),
    ("gauntlet-without-candidates", GOOD + "format: gauntlet\n",
     "t.yaml:9: format: a gauntlet needs candidates"),
    ("candidates-without-gauntlet", GOOD + "candidates: [greedy]\n",
     "t.yaml:9: candidates: only a gauntlet has candidates"),
    ("max-matches-too-small", GOOD + "max_matches: 5\n",
     "t.yaml:9: max_matches: 5 is too small for one duplicate set (6 matches: 3 players, "
     "seatings all)"),
    ("stop-without-cap", GOOD + "stop: {confidence: 0.95}\n", "stop: needs a cap: add rounds or "
     "max_matches (on the command line, --rounds N or --max-matches N)"),
    ("stop-confidence", GOOD + "rounds: 5\nstop: {confidence: 95}\n",
     "stop.confidence: must be from 0.5 up to 1 (excluded), not 95"),
    ("stop-key", GOOD + "rounds: 5\nstop: {margn: 2}\n",
     "stop.margn: unknown key (did you mean 'stop.margin'?)"),
    ("ladder-without-cap", GOOD + "format: ladder\n", "format: a ladder needs a cap"),
    ("sandbox", GOOD + "sandbox: docker\n", "sandbox: unknown sandbox 'docker'"),
    ("not-found", GOOD + "  - name: x\n    command: no-such-bot-xyz --go\n",
     "t.yaml:10: entrants[4].command: 'no-such-bot-xyz' not found or not executable on PATH"),
    ("not-executable", GOOD + "  - name: x\n    command: ./t.yaml\n",
     "entrants[4].command: './t.yaml' is in "),
    ("missing-script", GOOD + "  - name: x\n    command: python3 ../bots/no_such_bot.py\n",
     "entrants[4].command: '../bots/no_such_bot.py' does not exist"),
    ("unclosed-quote", GOOD + "  - name: x\n    command: python3 'bot.py\n",
     "entrants[4].command: cannot split"),
    ("workdir", GOOD + "  - name: x\n    command: ls\n    workdir: nowhere\n",
     "t.yaml:11: entrants[4].workdir: "),
    ("workdir-not-folder", GOOD + "  - name: x\n    command: ls\n    workdir: t.yaml\n",
     "/t.yaml' is not a folder"),
    ("yaml-syntax", GOOD + "players: [3\n", "t.yaml:10: YAML syntax error"),
    ("yaml-tab", "name: t\n\tplayers: 3\n", "t.yaml:2: YAML syntax error"),
    ("empty", "", "t.yaml: the file is empty"),
    ("comments-only", "# nothing yet\n", "t.yaml: the file is empty"),
    ("not-a-mapping", "- a\n- b\n", "t.yaml: expected a mapping of keys"),
    ("duplicate-key", GOOD + "players: 3\nplayers: 2\n", "t.yaml:10: players: duplicate key"),
    ("draw-probability", GOOD + "rating:\n  draw_probability: 0\n",
     "rating.draw_probability: must be between 0 and 1"),
    ("rating-type", GOOD + "rating: {mu: high}\n", "rating.mu: expected a number"),
    ("rating-per", GOOD + "rating: {per: round}\n",
     "rating.per: must be set or match, not 'round'"),
    ("limits-type", GOOD + "limits: 100\n", "limits: expected a mapping of startup_ms"),
    ("negative-limit", GOOD + "limits: {bank_ms: -1}\n", "limits.bank_ms: must be at least 0"),
    ("seed-type", GOOD + "seed: [1]\n", "seed: expected an integer or a string, got a list"),
    ("output-type", GOOD + "output: 3\n", "output: expected a string, got an integer"),
    ("preflight", GOOD + "preflight: skip\n", "preflight: unknown preflight 'skip'"),
    ("max-faults", GOOD + "max_faults: -1\n", "max_faults: must be at least 0, not -1"),
]


@pytest.mark.parametrize(("text", "message"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_mistakes_are_refused_in_one_line(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    lines = info.value.lines
    assert any(message in line for line in lines), lines
    assert all(line.startswith(str(path)) and "\n" not in line for line in lines)
    # The command line says the same, one 'error:' line each, exit status 2, no traceback.
    result = CliRunner().invoke(main, ["tournament", str(path)])
    assert result.exit_code == 2, result.output
    assert result.output == "".join(f"error: {line}\n" for line in lines)


def test_every_mistake_is_reported_at_once_in_file_order(tmp_path: Path) -> None:
    text = GOOD.replace("name: t\n", "name: a/b\n") + (
        "  - name: greedy\n    command: python3 ../bots/no_such_bot.py\n"
        "players: 5\nseatting: all\nlimits: {move_ms: 0}\n")
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    lines = [line.removeprefix(f"{path}:") for line in info.value.lines]
    assert lines == [
        "1: name: 'a/b' may only hold letters, digits, '-', '_' and '.'",
        "9: entrants[4].name: 'greedy' is already the name of entrants[2]",
        f"10: entrants[4].command: '../bots/no_such_bot.py' does not exist (bot script not "
        f"found: {str(tmp_path / '../bots/no_such_bot.py')!r})",
        "11: players: must be from 2 to 4, not 5",
        "12: seatting: unknown key (did you mean 'seatings'?)",
        "13: limits.move_ms: must be at least 1, not 0",
    ]


def test_missing_file_and_bad_options(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["tournament", str(tmp_path / "none.yaml")])
    assert result.exit_code == 2
    assert result.output.startswith(f"error: {tmp_path / 'none.yaml'}: cannot read")
    path = write(tmp_path, GOOD)
    result = CliRunner().invoke(main, ["tournament", str(path), "--concurrency", "0"])
    assert result.exit_code == 2 and "Traceback" not in result.output


def test_limits_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"limits.cpus: must be 0 \(no limit\) or more"):
        load_config(write(tmp_path, GOOD + "limits: {cpus: -1}\n"))
    with pytest.raises(ConfigError, match=r"limits.pids: expected an integer"):
        load_config(write(tmp_path, GOOD + "limits: {pids: many}\n"))


def test_reading_a_configuration_probes_no_sandbox(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """``sandbox: bwrap`` is read as written; whether it works here is the run's to find out
    (it refuses, in one line, before any match)."""
    from referee.bots import process, sandbox
    from referee.tournament import run as tournament
    from referee.tournament import startup

    def no_probe() -> None:
        raise AssertionError("a sandbox probe while reading the configuration")

    with monkeypatch.context() as patched:
        for module in (sandbox, process):
            patched.setattr(module, "capabilities", no_probe)
        config = load_config(write(tmp_path, GOOD + "sandbox: bwrap\n"), output=tmp_path / "out")
    assert config.sandbox is SandboxMode.BWRAP
    monkeypatch.setattr(startup, "bwrap_available", lambda: False)  # the one start-up's
    with pytest.raises(ConfigError, match=r"sandbox: no working sandbox here"):
        tournament.run(config)
    assert not (tmp_path / "out" / "games").exists()


@pytest.mark.parametrize(("text", "mode"), [("off", Preflight.OFF), ("'off'", Preflight.OFF),
                                            ("keep", Preflight.KEEP)])
def test_preflight_as_yaml_writes_it(tmp_path: Path, text: str, mode: Preflight) -> None:
    """An unquoted ``off`` is YAML's false: it means ``off`` all the same."""
    config = load_config(write(tmp_path, GOOD + f"preflight: {text}\n"))
    assert config.preflight is mode
    assert config.resolved()["preflight"] == mode.value
    with pytest.raises(ConfigError, match=r"unknown preflight True"):
        load_config(write(tmp_path, GOOD + "preflight: on\n"))


def test_a_tournament_without_a_working_sandbox_stops(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """``sandbox: auto`` never falls back silently: a one-line error before any match."""
    from referee.tournament import run as tournament
    from referee.tournament import startup

    monkeypatch.setattr(startup, "bwrap_available", lambda: False)
    config = load_config(write(tmp_path, GOOD), output=tmp_path / "out")
    with pytest.raises(ConfigError, match=r"sandbox: no working sandbox here .*set "
                                          r"sandbox: none$"):
        tournament.run(config)
    assert not (tmp_path / "out" / "games").exists()


def test_formats_stop_and_command_line_overrides(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD + "format: gauntlet\ncandidates: [greedy2]\nplayers: 2\n")
    config = load_config(path)
    assert config.candidates == ("greedy2",) and config.stop is None and config.rounds == 1
    assert {tuple(sorted(s.seats)) for s in planned(config, secret=bytes(32))} == {(0, 2), (1, 2)}
    assert config.identity()["candidates"] == ["greedy2"]
    over = load_config(path, overrides={"rounds": 4, "seed": "x", "max_matches": 12,
                                        "stop": {"confidence": 0.9, "margin": 2}})
    assert (over.rounds, over.seed, over.max_matches) == (4, "x", 12)
    assert over.stop == Stop(0.9, 2.0) and over.total() == 12
    with pytest.raises(ValueError, match="round by round"):
        planned(over, secret=bytes(32))
    result = CliRunner().invoke(main, ["tournament", str(path), "--stop", "high"])
    assert result.exit_code == 2
    assert result.output == ("error: --stop: expected CONFIDENCE or CONFIDENCE:MARGIN (like 0.95 "
                             "or 0.95:2), not 'high'\n")
    result = CliRunner().invoke(main, ["tournament", str(path), "--stop", "95"])
    assert result.exit_code == 2  # the option is to blame, not the file
    assert result.output == ("error: --stop: the confidence must be from 0.5 up to 1 (excluded), "
                             "not 95 (0.95, say, not 95)\n")
    result = CliRunner().invoke(main, ["tournament", str(path), "--max-matches", "1"])
    assert result.exit_code == 2
    assert result.output == (f"error: {path}: max_matches: 1 is too small for one duplicate set "
                             f"(2 matches: 2 players, seatings all)\n")
    result = CliRunner().invoke(main, ["tournament", str(path), "--stop", "0.95",
                                       "--output", str(tmp_path / "out")])
    assert result.exit_code == 2  # a `--stop` without a cap is told the options that add one
    assert result.output == (f"error: {path}: stop: needs a cap: add rounds or max_matches (on the "
                             f"command line, --rounds N or --max-matches N)\n")
    ladder = load_config(write(tmp_path, GOOD + "format: ladder\nmax_matches: 30\n"))
    assert ladder.rounds is None and ladder.total() == 30
    rotate = write(tmp_path, GOOD + "seatings: rotate\nplayers: 3\nrounds: 4\n")
    result = CliRunner().invoke(main, ["tournament", str(rotate), "--stop", "0.95:3",
                                       "--output", str(tmp_path / "out")])
    assert result.exit_code == 2  # rotate with 3 seats would bias what stop reads
    assert result.output == (f"error: {rotate}: stop: needs seatings: all with 3 players (with "
                             f"rotate each entrant always plays after the same neighbour, which "
                             f"shifts the differences the verdicts read: docs/statistics.md)\n")
    two = write(tmp_path, GOOD + "seatings: rotate\nplayers: 2\nrounds: 4\n", "two.yaml")
    assert load_config(two, overrides={"stop": {"confidence": 0.9}}).stop == Stop(0.9, 0.0)


def test_the_demo_configuration_loads() -> None:
    demo = Path(__file__).resolve().parent.parent / "tournaments" / "demo.yaml"
    if not os.access(demo, os.R_OK):
        pytest.skip("no demo")
    config = load_config(demo)
    assert [e.name for e in config.entrants] == ["random", "greedy", "mc"]
    assert all(e.workdir == demo.parent for e in config.entrants)


@pytest.mark.process
@pytest.mark.parametrize("command, message", [
    ("python3 bots/nope.py", "'bots/nope.py' does not exist (bot script not found: "),
    ("python3 'bots/nope.py", "cannot split the command line: No closing quotation"),
    ("./bots/nope", "'./bots/nope' not found or not executable in "),
])
def test_a_bad_command_is_the_same_error_in_all_four_commands(
    tmp_path: Path, command: str, message: str,
) -> None:
    """play, replay --bot, check and a tournament configuration resolve a command alike: the
    same one-line message, before any bot starts."""
    (tmp_path / "bots").mkdir()
    golden = Path(__file__).resolve().parent / "data" / "golden.json"
    cli = [str(Path(PY).parent / "ct-referee")]
    config = write(tmp_path, f"entrants:\n  - name: a\n    command: {PY} {EXAMPLES}/random_bot.py\n"
                             f"  - name: b\n    command: \"{command}\"\n"
                             "players: 2\nsandbox: none\n")
    runs = {
        "play": [*cli, "play", f"{PY} {EXAMPLES}/random_bot.py", command, "--sandbox", "none"],
        "replay": [*cli, "replay", str(golden), "--bot", command, "--seat", "0",
                   "--sandbox", "none"],
        "check": [*cli, "check", command, "--sandbox", "none"],
        "tournament": [*cli, "tournament", str(config), "-o", str(tmp_path / "out")],
    }
    for name, argv in runs.items():
        done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=60,
                              check=False)
        assert done.returncode in (1, 2), (name, done.stdout, done.stderr)
        assert done.stdout == "", (name, done.stdout)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and message in lines[0], (name, done.stderr)
        assert "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()
