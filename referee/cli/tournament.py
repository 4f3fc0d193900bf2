"""``ct-referee tournament``: a whole tournament from one YAML file, resumable.

On a terminal it shows a progress bar with the top of the table and each fault as it happens;
otherwise (CI logs, pipes) it writes a few plain lines. Exit status: 0 when every match is played,
1 when a bot command cannot be started or the Dask scheduler cannot be reached (or goes away), 2
for a configuration or output folder that cannot be used, 130 after Ctrl-C (finished matches are
kept; the same command resumes).
"""

from __future__ import annotations

import contextlib
import dataclasses
import shlex
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.console import Console, Group
from rich.live import Live
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from referee.bots.limits import SandboxMode
from referee.cli.hang import hang
from referee.cli.options import cluster_options
from referee.cli.pipes import ClosedPipeSafe
from referee.cli.serving import open_server, serve_option, served_words
from referee.cli.standings import standings_table, verdict_words
from referee.game.rules import Variant
from referee.match.job import DealSecret, MatchSpec
from referee.match.play import seat_log
from referee.protocol.escape import escape_controls
from referee.records.record import FaultDict
from referee.runners.cluster import (
    FAULTS_FILE,
    ClusterError,
    ClusterRunner,
    plain_tcp_warning,
)
from referee.runners.local import Runner
from referee.tournament.admission import BENCHED
from referee.tournament.config import parse_stop
from referee.tournament.course import Stopped
from referee.tournament.formats import set_size
from referee.tournament.output import OutputFolder
from referee.tournament.ratings import Standing, Standings
from referee.tournament.run import (
    Config,
    ConfigError,
    Outcome,
    Reporter,
    TournamentError,
    load_config,
    read_deal_secret,
    run,
    stop_on_sigint,
)
from referee.tournament.startup import CLUSTER_WEAKER
from referee.tournament.stopping import Stop, forecast
from referee.web.folder import limit_words
from referee.web.report import Refresher, mark_stopped
from referee.web.routes import Kind
from referee.web.serve import ReportServer

TOP = 8
"""Rows of the table shown while the tournament runs."""
PLAIN_EVERY_S = 60.0
"""Off a terminal, a progress line at least this often (and at each tenth of the schedule)."""
PREFLIGHT_EVERY_S = 10.0
"""Off a terminal, a pre-flight line at least this often (and at each tenth of the entrants)."""
TABLE_EVERY_S = 0.5
"""On a terminal, the live table is redrawn at most this often, and at most a tenth of the
time (its rows are sorted from the whole table: 0.3 s at 10,000 entrants)..."""
TABLE_MAX_S = 5.0
"""... but at least this often."""


_BENCHED_NOTE = " (the same in each of its matches: shown once)"


def _fault_line(spec: MatchSpec, name: str, fault: FaultDict) -> str:
    return (f"fault: {spec.id} {escape_controls(name)} (seat {fault['seat']}) {fault['fault']} "
            f"in hand {fault['hand']}: {escape_controls(fault['detail'])}")


def _benched_again(shown: set[str], name: str, fault: FaultDict) -> bool:
    """Whether this is a benched seat's fault (no process: left out, disqualified) of an
    entrant whose first one was already shown: the same line in each of its matches."""
    if not str(fault["detail"]).startswith(BENCHED):
        return False
    if name in shown:
        return True
    shown.add(name)
    return False


def _log_note(logs: Path | None, spec: MatchSpec, name: str, fault: FaultDict) -> str:
    """Where the bot's stderr in that match is (nothing for a disqualified seat's fault: it
    had no process)."""
    if logs is None or str(fault["detail"]).startswith(BENCHED):
        return ""
    path = seat_log(logs / spec.id, fault["seat"], name)
    with contextlib.suppress(ValueError):
        path = path.relative_to(Path.cwd())
    return f" (its stderr: {path})"


CLUSTER_LINES = tuple(textwrap.wrap(CLUSTER_WEAKER, 66))
""":data:`~referee.tournament.startup.CLUSTER_WEAKER` as the header's lines (each within 80
columns once indented)."""


def _header(config: Config, total: int, done: int, sandbox: str, where: str | None,
            width: int | None = None) -> str:
    """What the organiser reads before the first match: a title line (name, entrants, matches),
    then short labelled lines: what is played, how it is judged, the bots' sandbox, how the
    matches run, where it is written. ``sandbox``: the run's ``; ``-separated account of the
    bots' isolation. A line longer than ``width`` (a terminal's) wraps under its label's text
    (:func:`hang`); without one, each stays whole (a log)."""
    kept = f", {done} already played" if done else ""
    count = f"at most {total} matches" if config.stop is not None else f"{total} matches"
    per_set = set_size(config.players, config.seatings)
    deals = ("every seat order of each deal" if config.seatings == "all"
             else "each deal in every rotation of the seats")
    rounds = "" if config.rounds is None else f", {config.rounds} round{'s' * (config.rounds != 1)}"
    variant = "" if config.variant is Variant.CLASSIC else f", variant {config.variant.value}"
    pad = " " * 13
    lines = [
        f"{escape_controls(config.name)}: {len(config.entrants)} entrants, {count}{kept}",
        f"  played:    {config.format.name}{rounds}: {config.players}-player matches to "
        f"{config.target} points{variant}",
        f"  deals:     duplicate, {deals} (sets of {per_set} matches)",
    ]
    rule = config.stop or Stop()
    ties = f", ties within {rule.margin:g}" if rule.margin else ""
    rated = "once per duplicate set" if config.rating.per == "set" else "once per match"
    lines += [f"  judged:    the table by TrueSkill's mu-3σ, rated {rated}",
              f"{pad}each pair by luck-adjusted points a hand, at confidence "
              f"{rule.confidence:g}{ties}"]
    if config.stop is not None:
        note = forecast(config.stop, entrants=len(config.entrants), players=config.players,
                        set_size=per_set, target=config.target,
                        growing=config.format.grows, cap=config.max_matches)
        lines += ["  stops:     once every adjacent pair is decided, or at the cap",
                  f"{pad}forecast: {note}"]
    else:
        lines.append("  stops:     when every planned match is played")
    parts = [p for p in sandbox.split("; ") if p]
    lines.append(f"  sandbox:   {parts[0] if parts else 'none'}")
    lines += [pad + p for p in parts[1:-1]]
    if where is not None and config.sandbox is not SandboxMode.NONE:  # a cluster's workers
        lines += [pad + line for line in CLUSTER_LINES]
    lines += [f"  {w.split(': ', 1)[0] + ':':<11}{w.split(': ', 1)[1]}"  # 0 said "no limit"
              for w in limit_words(config.resolved())]
    run_on = where or f"concurrency {config.concurrency}"
    lines.append(f"  running:   {run_on}" + (f"; {parts[-1]}" if len(parts) > 1 else ""))
    lines.append(f"  output:    {escape_controls(str(config.output))}")
    if width is None:
        return "\n".join(lines)
    return "\n".join(hang(line, width, 2 if i == 0 else len(pad))
                     for i, line in enumerate(lines))


class PlainReporter(Reporter):
    """A few plain lines: one per tenth of the schedule and at least one a minute
    (:data:`PLAIN_EVERY_S`), one per fault. No control characters."""

    def __init__(self, console: Console, *, where: str | None = None) -> None:
        self.console, self.where = console, where
        self.logs: Path | None = None
        self.benched: set[str] = set()
        self.total = self.kept = self.shown = 0
        self.t0 = self.last = time.monotonic()
        self.leader: str | None = None
        self.checked, self.checked_at, self.checked_t0 = 0, self.t0, self.t0

    def _print(self, text: str) -> None:
        self.console.print(Text(text), soft_wrap=True)

    def started(self, config: Config, total: int, done: int, sandbox: str) -> None:
        self.logs = config.output / "logs"
        self.total, self.kept, self.shown = total, done, done * 10 // max(total, 1)
        self.t0 = self.last = time.monotonic()
        self._print(_header(config, total, done, sandbox, self.where))

    def warn(self, message: str) -> None:
        self._print(f"warning: {message}")

    def preflight(self, done: int, total: int, left_s: float | None) -> None:
        now = time.monotonic()
        if done == 0:
            self.checked, self.checked_at, self.checked_t0 = 0, now, now
            self._print(f"pre-flight: starting each of {total} entrants once (up to 8 at "
                        f"once); matches start for those checked")
            return
        tenth = done * 10 // max(total, 1) if total >= 20 else 0  # a few: the last line alone
        if done != total and tenth <= self.checked and now - self.checked_at < PREFLIGHT_EVERY_S:
            return
        self.checked, self.checked_at = tenth, now
        if done == total:
            self._print(f"pre-flight: {done}/{total} entrants checked in "
                        f"{now - self.checked_t0:.1f} s")
        else:
            left = "" if left_s is None or left_s < 1 else f", about {left_s:.0f} s left"
            self._print(f"pre-flight: {done}/{total} entrants checked{left}")

    def fault(self, spec: MatchSpec, name: str, fault: FaultDict) -> None:
        if _benched_again(self.benched, name, fault):
            return
        self._print(_fault_line(spec, name, fault) + _log_note(self.logs, spec, name, fault)
                    + _BENCHED_NOTE * str(fault["detail"]).startswith(BENCHED))

    def match_done(self, spec: MatchSpec, result: object, done: int, table: Standings) -> None:
        total = max(self.total, done, 1)
        tenth = done * 10 // total
        now = time.monotonic()
        if tenth <= self.shown and done != total and now - self.last < PLAIN_EVERY_S:
            return
        self.shown, self.last = max(tenth, self.shown), now
        elapsed = now - self.t0
        rate = (done - self.kept) / elapsed if elapsed > 0 else 0.0
        left = f", about {(total - done) / rate:.0f} s left" if rate and done < total else ""
        lead = ""
        if table.updates:  # rated at all; named when it changed (the same name is noise)
            top = table.standings()[0]
            if top.name != self.leader:
                self.leader = top.name
                lead = (f"; first on the table: {escape_controls(top.name)} (mu-3σ "
                        f"{top.score:.2f}, not a verdict)")
        self._print(f"{done}/{total} matches ({100 * done // total}%), "
                    f"{rate:.1f}/s{left}{lead}")


class LiveReporter(Reporter):
    """A rich progress bar (done/total, rate, time left) over the top of the table."""

    def __init__(self, console: Console, *, where: str | None = None) -> None:
        self.console, self.where = console, where
        self.logs: Path | None = None
        self.benched: set[str] = set()
        self.progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"), TimeRemainingColumn(), console=console)
        self.task: TaskID | None = None
        self.checks: TaskID | None = None
        self.checks_t0 = 0.0
        self.live: Live | None = None
        self.kept = 0
        self.t0 = time.monotonic()
        self.next_table = float("-inf")
        self.left_out: set[str] = set()
        """Entrants the pre-flight left out (told by their first benched fault): the live
        table shows who plays."""

    def started(self, config: Config, total: int, done: int, sandbox: str) -> None:
        self.logs = config.output / "logs"
        self.console.print(Text(_header(config, total, done, sandbox, self.where,
                                        self.console.width)), highlight=False)
        self.kept, self.t0 = done, time.monotonic()
        self.task = self.progress.add_task(config.name, total=total, completed=done, rate="")
        self.live = Live(self.progress, console=self.console, refresh_per_second=4)
        self.live.start()

    def preflight(self, done: int, total: int, left_s: float | None) -> None:
        if self.checks is None and done < total:
            self.checks_t0 = time.monotonic()
            self.checks = self.progress.add_task("pre-flight", total=total, completed=done,
                                                 rate="entrants")
        elif self.checks is not None:
            self.progress.update(self.checks, completed=done)
        if self.checks is not None and done >= total:  # done: a line above, the bar gone
            self.progress.remove_task(self.checks)
            self.checks = None
            self.console.print(Text(f"pre-flight: {done}/{total} entrants checked in "
                                    f"{time.monotonic() - self.checks_t0:.1f} s"),
                               highlight=False)

    def _print(self, line: str, indent: int) -> None:
        """``line`` in yellow, wrapped under its text after ``indent`` cells."""
        self.console.print(Text(hang(line, self.console.width, indent), style="yellow"))

    def warn(self, message: str) -> None:
        self._print(f"warning: {message}", len("warning: "))

    def fault(self, spec: MatchSpec, name: str, fault: FaultDict) -> None:
        if str(fault["detail"]).startswith(BENCHED[1]):  # left out: no row in the live table
            self.left_out.add(name)
        if _benched_again(self.benched, name, fault):
            return
        self._print(_fault_line(spec, name, fault) + _log_note(self.logs, spec, name, fault)
                    + _BENCHED_NOTE * str(fault["detail"]).startswith(BENCHED), len("fault: "))

    def match_done(self, spec: MatchSpec, result: object, done: int, table: Standings) -> None:
        assert self.task is not None and self.live is not None
        elapsed = time.monotonic() - self.t0
        rate = (done - self.kept) / elapsed if elapsed > 0 else 0.0
        self.progress.update(self.task, completed=done, rate=f"{rate:.1f}/s")
        now = time.monotonic()
        if table.updates and now >= self.next_table:  # before, every entrant at the prior
            rows = [r for r in table.standings() if r.name not in self.left_out]
            top = standings_table(rows, limit=TOP, compact=True,
                                  title=f"after {table.matches} match{'es' * (table.matches != 1)}",
                                  width=self.console.width)
            self.live.update(Group(self.progress, top))
            took = time.monotonic() - now
            # 10 times its cost at most (a large field), never longer than TABLE_MAX_S (a
            # first table slowed by the machine's warming up kept one stale for the whole run)
            self.next_table = time.monotonic() + min(max(TABLE_EVERY_S, 10 * took),
                                                     TABLE_MAX_S)

    def finished(self, standings: list[Standing]) -> None:
        self.close()

    def close(self) -> None:
        """Stops the live display, leaving the progress bar on screen (the table below it was
        the last one drawn, not the final one, which follows)."""
        if self.live is not None:
            self.live.update(self.progress)
            self.live.stop()
            self.live = None


def _say(console: Console, line: str, indent: int) -> None:
    """``line``, on a terminal wrapped under its text after ``indent`` cells (:func:`hang`),
    piped whole."""
    console.print(Text(hang(line, console.width, indent) if console.is_terminal else line),
                  soft_wrap=True)


def error_lines(e: Exception) -> str:
    """One ``error:`` line per line of the exception's message (a configuration with several
    mistakes has one line for each), control characters escaped (a path an entrant named)."""
    return "\n".join(f"error: {escape_controls(line)}" for line in str(e).splitlines())


@click.command()
@click.argument("config", type=click.Path(dir_okay=False, path_type=Path))
@click.option("-o", "--output", type=click.Path(file_okay=False, path_type=Path),
              help="Output folder (default: the file's output, else results/<name>).")
@click.option("-j", "--concurrency", type=click.IntRange(min=1),
              help="Matches played at once (default: the file's, else 1).")
@click.option("--affinity/--no-affinity", default=None,
              help="Run each match's referee and bots on one CPU (the k-th worker on the k-th "
                   "CPU), or not (default: the file's affinity, else auto: where the matches "
                   "take every CPU).")
@cluster_options("this process writes the journal and the standings")
@click.option("--spread/--no-spread", default=True, show_default=True,
              help="On a cluster, play each seating of a duplicate set on another host than "
                   "the set's earlier ones where the cluster has enough hosts.")
@click.option("--fresh", is_flag=True,
              help="Delete what an earlier run of this output folder wrote (its deal secret "
                   "too), and start over.")
@click.option("--deal-secret", "secret_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Deal with the secret in this file (the .deal-secret of another output "
                   "folder) instead of a new one: the same file and secret, the same deals.")
@click.option("--rounds", type=int, help="Rounds (overrides the file's rounds).")
@click.option("--seed", help="Seed of the deals (overrides the file's seed).")
@click.option("--stop", "stop_at", metavar="CONFIDENCE[:MARGIN]",
              help="Stop once every adjacent pair is decided, e.g. 0.95 or 0.95:3 (a margin in "
                   "points per hand for ties); overrides the file's stop.")
@click.option("--max-matches", type=int, help="At most this many matches (overrides the file's).")
@serve_option("the live report")
def tournament(config: Path, output: Path | None, concurrency: int | None,
               affinity: bool | None, scheduler: str | None, scheduler_file: Path | None,
               tls: Path | None, spread: bool, fresh: bool, secret_file: Path | None,
               rounds: int | None, seed: str | None, stop_at: str | None,
               max_matches: int | None, serve_at: int | Path | None) -> None:
    """Run the tournament described by CONFIG (YAML), or resume it where it stopped.

    \b
    Example:
      ct-referee tournament tournaments/demo.yaml --concurrency 2
      ct-referee tournament tournaments/strength.yaml --stop 0.95 --max-matches 60
      ct-referee tournament tournaments/demo.yaml --scheduler tcp://head:8786

    Everything is written to the output folder: the resolved configuration, one game record
    per match, results.jsonl, the bots' stderr, and standings.json/.csv at the end. Ctrl-C stops
    cleanly; the same command then plays only what is missing.
    """
    resume, overrides = _resume_command(
        config, {"--output": output, "--concurrency": concurrency, "--scheduler": scheduler,
                 "--scheduler-file": scheduler_file, "--tls": tls, "--serve": serve_at},
        {"rounds": rounds, "seed": seed, "max_matches": max_matches, "stop": stop_at},
        affinity=affinity, spread=spread)
    console = Console(highlight=False, emoji=False)
    err = Console(stderr=True, highlight=False, emoji=False)
    cfg, secret = _configuration(config, output, concurrency, overrides, secret_file, err)
    for warning in cfg.warnings:
        _say(err, f"warning: {warning}", len("warning: "))
    stdout = ClosedPipeSafe(sys.stdout)
    if not console.is_terminal:
        console = Console(file=stdout, highlight=False, emoji=False, width=120)  # type: ignore[arg-type]
    where = f"on the Dask scheduler {scheduler}" if scheduler is not None else None
    if scheduler_file is not None:
        where = f"on the Dask scheduler of {scheduler_file}"
    reporter = (LiveReporter(console, where=where) if console.is_terminal
                else PlainReporter(console, where=where))
    stop = threading.Event()
    runner = _cluster_runner(cfg, scheduler, scheduler_file, tls=tls, spread=spread,
                             reporter=reporter, err=err)
    server, pages = _served_pages(cfg, serve_at, err)
    try:
        with stop_on_sigint(stop):
            outcome = run(cfg, fresh=fresh, deal_secret=secret, reporter=reporter,
                          runner=runner, stop=stop, pages=pages)
    except ConfigError as e:
        err.print(Text(error_lines(e)), soft_wrap=True)
        sys.exit(2)
    except TournamentError as e:
        err.print(Text(f"error: {e}"), soft_wrap=True)
        err.print(Text(f"fix it, then resume with: {shlex.join(resume)}"), soft_wrap=True)
        _mark_stopped(cfg, "stopped by an error", resume)
        report = OutputFolder(cfg.output).report / "index.html"
        if report.is_file():
            err.print(Text(f"report: {report.absolute()}"), soft_wrap=True)
        sys.exit(1)
    except OSError as e:  # the output folder cannot be written (missing, read-only, disk full)
        where = f" {e.filename}" if e.filename else ""
        err.print(Text(f"error: cannot write{where}: {e.strerror or e}"), soft_wrap=True)
        err.print(Text(f"finished matches are kept; resume with: {shlex.join(resume)}"),
                  soft_wrap=True)
        _mark_stopped(cfg, "stopped by an error", resume)
        sys.exit(1)
    finally:
        if isinstance(reporter, LiveReporter):
            reporter.close()
        if server is not None:
            _stop_serving(err, server, cfg.output)
    report_path = (OutputFolder(cfg.output).report / "index.html").absolute()
    if outcome.standings is None:
        err.print(Text(f"interrupted: {outcome.done} of {outcome.total} matches played and kept "
                       f"in {cfg.output}; resume with: {shlex.join(resume)}"), soft_wrap=True)
        _mark_stopped(cfg, "interrupted", resume, outcome.done, outcome.total)
        err.print(Text(f"report: {report_path}"), soft_wrap=True)
        sys.exit(130)
    _final(console, cfg, outcome, report_path)
    if stdout.closed_pipe:
        err.print(Text(f"note: the output stopped being read (a closed pipe); the tournament "
                       f"played on to the end: standings in {cfg.output}"), soft_wrap=True)


def _served_pages(cfg: Config, serve_at: int | Path | None, err: Console
                  ) -> tuple[ReportServer | None, Callable[[Path], Refresher]]:
    """The report server asked for (``--serve``: the port taken now, before the start), and
    what keeps the report current and starts serving it once the folder is ready."""
    server = None if serve_at is None else open_server(
        cfg.output, Kind.TOURNAMENT, serve_at, marker=OutputFolder(cfg.output).marker)

    def pages(out: Path) -> Refresher:
        refresher = Refresher(out)
        if server is not None:
            err.print(Text(f"serving the live report {served_words(server, server.start())}"),
                      soft_wrap=True)
        return refresher

    return server, pages


def _stop_serving(err: Console, server: ReportServer, out: Path) -> None:
    """Ends the report server with the run, saying what serves the folder on."""
    started = server.started
    server.close()
    if started:
        how = f"--socket {server.socket}" if server.socket is not None else f"--port {server.port}"
        err.print(Text(f"the report server stopped with the run; ct-referee report "
                       f"{shlex.quote(str(out))} --serve {how} serves the folder on"
                       f"{' (the same key)' if server.key else ''}"), soft_wrap=True)


def _mark_stopped(cfg: Config, why: str, resume: list[str], done: int | None = None,
                  total: int | None = None) -> None:
    """The report page says the run stopped before its end, and stops reloading (a folder that
    cannot be written is left as it is)."""
    with contextlib.suppress(OSError):
        mark_stopped(cfg.output, why=why, done=done, total=total, resume=shlex.join(resume))


def _configuration(config: Path, output: Path | None, concurrency: int | None,
                   overrides: dict[str, Any], secret_file: Path | None,
                   err: Console) -> tuple[Config, DealSecret | None]:
    """The configuration with the command line's overrides, and the deal secret asked for;
    a mistake is told (exit 2)."""
    try:
        stop_at, seed = overrides.get("stop"), overrides.get("seed")
        if isinstance(stop_at, str):
            try:
                overrides["stop"] = parse_stop(stop_at)
            except ValueError as e:
                raise ConfigError(f"--stop: {e}") from None
        if isinstance(seed, str) and seed.isdigit():
            overrides["seed"] = int(seed)  # as the file would read it
        cfg = load_config(config, output=output, concurrency=concurrency, overrides=overrides)
        return cfg, read_deal_secret(secret_file) if secret_file is not None else None
    except ConfigError as e:
        err.print(Text(error_lines(e)), soft_wrap=True)
        sys.exit(2)


def _resume_command(config: Path, options: dict[str, object], keys: dict[str, object], *,
                    affinity: bool | None, spread: bool) -> tuple[list[str], dict[str, Any]]:
    """The command that resumes this run (its options again), and the configuration keys the
    command line overrides."""
    resume = ["ct-referee", "tournament", str(config)]
    for flag in ("--output", "--concurrency"):
        if options[flag] is not None:
            resume += [flag, str(options[flag])]
    if affinity is not None:
        resume += ["--affinity" if affinity else "--no-affinity"]
    for flag in ("--scheduler", "--scheduler-file", "--tls", "--serve"):
        if options[flag] is not None:
            resume += [flag, str(options[flag])]
    if not spread:
        resume += ["--no-spread"]
    overrides: dict[str, Any] = {}
    for key, value in keys.items():
        if value is not None:
            resume += [f"--{key.replace('_', '-')}", str(value)]
            overrides[key] = value
    if affinity is not None:
        overrides["affinity"] = affinity
    return resume, overrides


def _cluster_runner(cfg: Config, scheduler: str | None, scheduler_file: Path | None, *,
                    tls: Path | None, spread: bool, reporter: Reporter,
                    err: Console) -> Runner | None:
    """The Dask cluster's runner the options name (``None``: none, this machine's)."""
    if scheduler is not None and scheduler_file is not None:
        err.print(Text("error: --scheduler and --scheduler-file: give one"), soft_wrap=True)
        sys.exit(2)
    if tls is not None and scheduler is None and scheduler_file is None:
        err.print(Text("error: --tls is for a cluster: give --scheduler or --scheduler-file "
                       "too"), soft_wrap=True)
        sys.exit(2)
    if scheduler is not None or scheduler_file is not None:
        if cfg.affinity is True:
            _say(err, "warning: affinity: has no effect on a cluster (its workers place their "
                 "own processes)", len("warning: "))
        try:
            # a tournament's auto requires a sandbox: a worker without one refuses
            runner = ClusterRunner(scheduler, sandbox=cfg.sandbox.strict(), warn=reporter.warn,
                                   scheduler_file=scheduler_file, spread=spread, tls=tls,
                                   faults_file=cfg.output / FAULTS_FILE)
        except ClusterError as e:
            err.print(Text(f"error: {e}"), soft_wrap=True)
            sys.exit(1)
        if not runner.authenticated:
            _say(err, plain_tcp_warning(runner.address), len("warning: "))
        return runner
    return None


def _final(console: Console, cfg: Config, outcome: Outcome, report_path: Path) -> None:
    """The final standings, the verdicts on a gauntlet's questions, where the files are."""
    assert outcome.standings is not None
    rule = cfg.stop or Stop()
    confidence = rule.confidence
    ties = f", tie: neither stronger by {rule.margin:g}" if rule.margin else ""
    legend = {
        "#": "order: TrueSkill's mu-3σ, rated on luck-adjusted points per duplicate set, and "
             "a decided verdict always wins over it (wins count matches won, which the seat "
             "and the cards decide more: they may disagree).",
        "pts/h": "pts/h: raw points a hand.",
        "P>next": "P>next: TrueSkill's probability, a description only (no error control).",
        "vs next": f"vs next: the verdict on the next row at confidence {rule.confidence:g} "
                   f"(stronger: decided; open: not yet told apart{ties}), the difference in "
                   f"points a hand adjusted for luck (minus the luck of the stock's cards), "
                   f"the ends of its anytime-valid interval in brackets and the duplicate sets "
                   f"they shared.",
    }
    why = {Stopped.SETTLED: "stopped: settled, every pair decided",
           Stopped.CAP: "stopped at the cap",
           Stopped.COMPLETE: "complete"}[outcome.stopped or Stopped.COMPLETE]
    bound = float(cfg.variant.hand_total)
    left_out = outcome.left_out
    rows = [r for r in outcome.standings if r.name not in left_out]
    if rows and len(rows) < len(outcome.standings):  # no figure against who never played
        rows[-1] = dataclasses.replace(rows[-1], p_above_next=None)
    pairs = [p for p in outcome.pairs or () if p.lower not in left_out]
    folder = OutputFolder(cfg.output)
    below = []
    for row in outcome.standings:  # a row of its own each, under the others: why, no figures
        if row.name in left_out:
            log = folder.preflight / f"{row.name}.stderr"
            where = f" (its stderr: {log})" if log.is_file() else ""
            below.append(f"{row.rank}. {escape_controls(row.name)}: left out, "
                         f"{escape_controls(left_out[row.name])}; it played no match (the "
                         f"referee's fallback played its seats){where}")
    console.print(standings_table(rows, pairs=pairs, legend=legend, below=below,
                                  bound=bound, width=console.width, confidence=confidence,
                                  title=f"{cfg.name}: final standings, {outcome.total} matches "
                                        f"({why})"))
    for q in outcome.questions or ():
        line = (f"{escape_controls(q.upper)} vs {escape_controls(q.lower)}: "
                f"{verdict_words(q, bound, short=False, confidence=confidence)}")
        _say(console, line, 2)
    console.print(Text(f"standings: {cfg.output / 'standings.csv'} and standings.json; "
                       f"records in {cfg.output / 'games'}"), soft_wrap=True)
    console.print(Text(f"report: {report_path}"), soft_wrap=True)

