"""The host lookups a tournament made once per entrant, now remembered (issue 19): a program on
``PATH``, what a pyenv shim runs (once per version selector, not per folder), the password
database's homes and the system folders; each answer expires, and a changed ``PATH`` or
``.python-version`` is another question."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

import referee.bots.resolve as resolve
from referee.bots.expiring import expiring
from referee.bots.policy import BASE_PATH


def test_an_answer_is_kept_until_it_expires(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    now = [100.0]
    monkeypatch.setattr("referee.bots.expiring.time.monotonic", lambda: now[0])

    @expiring(60.0)
    def square(x: int) -> int:
        calls.append(x)
        return x * x

    assert [square(3), square(3), square(4)] == [9, 9, 16] and calls == [3, 4]
    now[0] += 59.0
    assert square(3) == 9 and calls == [3, 4]
    now[0] += 2.0
    assert square(3) == 9 and calls == [3, 4, 3]  # expired: asked again
    square.cache_clear()
    assert square(4) == 16 and calls == [3, 4, 3, 4]


def test_which_is_asked_once_per_program_and_path(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    resolve._which.cache_clear()
    asked: list[tuple[str, str | None]] = []
    real = shutil.which

    def counting(prog: str, mode: int = os.F_OK | os.X_OK, path: str | None = None) -> str | None:
        asked.append((prog, path))
        return real(prog, mode, path)

    monkeypatch.setattr("referee.bots.resolve.shutil.which", counting)
    tool = tmp_path / "bin" / "mytool"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", str(tool.parent))
    for _ in range(3):
        assert resolve.which("mytool") == str(tool)
    assert resolve.which("prlimit", BASE_PATH) == real("prlimit", path=BASE_PATH)
    assert asked == [("mytool", str(tool.parent)), ("prlimit", BASE_PATH)]
    monkeypatch.setenv("PATH", "/nonexistent")  # another PATH: another question
    assert resolve.which("mytool") is None


@pytest.mark.process
def test_pyenv_runs_once_per_version_selector(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """``python3 bot.py`` in 50 folders behind a pyenv shim: one ``pyenv which``, not 50;
    a folder with a ``.python-version`` of its own asks again; a fifo there blocks nothing."""
    root = tmp_path / "pyenv"
    (root / "shims").mkdir(parents=True)
    (root / "libexec").mkdir()
    (root / "versions" / "3.99" / "bin").mkdir(parents=True)
    (root / "versions" / "3.98" / "bin").mkdir(parents=True)
    for version in ("3.99", "3.98"):
        exe = root / "versions" / version / "bin" / "python3"
        exe.write_text("#!/bin/sh\n")
        exe.chmod(0o755)
    shim = root / "shims" / "python3"
    shim.write_text("#!/bin/sh\n")
    shim.chmod(0o755)
    log = tmp_path / "asked.log"
    pyenv = root / "libexec" / "pyenv"  # a stand-in: the version of the nearest file, or 3.99
    pyenv.write_text(f"""#!/bin/sh
echo "$PWD" >> {log}
d="$PWD"; v=3.99
while [ "$d" != / ]; do
  if [ -f "$d/.python-version" ]; then v=$(cat "$d/.python-version"); break; fi
  d=$(dirname "$d")
done
echo {root}/versions/$v/bin/python3
""")
    pyenv.chmod(0o755)
    monkeypatch.setenv("PATH", f"{root / 'shims'}:{BASE_PATH}")
    monkeypatch.delenv("PYENV_VERSION", raising=False)
    resolve._which.cache_clear()
    resolve._pyenv_which.cache_clear()
    folders = []
    for i in range(50):
        folders.append(tmp_path / "bots" / f"b{i}")
        folders[-1].mkdir(parents=True)
    found = {resolve.resolve_executable("python3", f) for f in folders}
    assert found == {root / "versions" / "3.99" / "bin" / "python3"}
    assert len(log.read_text().splitlines()) == 1
    (folders[7] / ".python-version").write_text("3.98")
    assert resolve.resolve_executable("python3", folders[7]) == \
        root / "versions" / "3.98" / "bin" / "python3"
    assert len(log.read_text().splitlines()) == 2
    os.mkfifo(folders[8] / ".python-version")  # a bot's trap: read, it would block
    assert stat.S_ISFIFO(os.stat(folders[8] / ".python-version").st_mode)
    assert resolve.resolve_executable("python3", folders[8]) == \
        root / "versions" / "3.99" / "bin" / "python3"
    monkeypatch.setenv("PYENV_VERSION", "3.98")  # the environment picks: asked again
    resolve.resolve_executable("python3", folders[9])
    assert len(log.read_text().splitlines()) == 3


def test_within_is_is_relative_to_for_normalised_paths() -> None:
    """The string test that replaced pathlib's in the entrant checks answers as it does."""
    paths = [Path(p) for p in ("/", "/a", "/a/b", "/ab", "/a/b/c", "/abc/d", "/a/bc", "/a/b/")]
    for inner in paths:
        for outer in paths:
            assert resolve.within(inner, outer) == inner.is_relative_to(outer), (inner, outer)
