"""The runtime a bot's command needs, worked out as a list of host paths: what the sandbox
shows it from memory (:mod:`referee.bots.image`) instead of the host's disk.

A :class:`Closure` holds the program and what the dynamic loader loads for it (ELF
``PT_INTERP`` and ``DT_NEEDED``, :mod:`referee.bots.elf`), the install prefixes the organiser's
command names (a venv, a pyenv version, a JDK), the folders of the interpreter's family
(``/usr/lib/python3.11``, ``/usr/share/perl``...), the few ``/etc`` entries every program reads
(:data:`ETC_ENTRIES`) and the tools a wrapper script calls. Only what any user may read is
taken (mode bits), within :data:`MAX_BYTES` and :data:`MAX_ENTRIES`. Why: docs/security.md,
"What a bot sees".
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from referee.bots.elf import dynamic, shebang

SYSTEM_TOPS = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc")
"""The top folders of the host that a runtime's system files come from, each shown (as the
parts of it the runtime needs) at its own name."""
ETC_ENTRIES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "timezone",
               "nsswitch.conf", "host.conf", "hosts", "os-release", "mime.types", "ssl",
               "ca-certificates")
LIB_DIRS = ("/lib64", "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
            "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/local/lib", "/lib",
            "/usr/lib")
"""Where the loader looks for a library no ``RUNPATH`` finds (with ``/etc/ld.so.conf.d``)."""
ALWAYS = ("sh", "dash", "bash", "env", "setpriv", "prlimit", "cat", "ls", "echo", "true",
          "false", "sleep", "head", "tail", "tr", "cut", "sed", "grep", "sort", "uniq", "wc",
          "tee", "printf", "test", "timeout", "dirname", "basename", "readlink", "expr", "id",
          "uname", "mawk", "awk", "xargs", "mkdir", "rm", "cp", "mv", "touch", "date")
"""Programs every bot gets: the shell and the tools wrapper scripts call (and ``setpriv`` and
``prlimit``, which the sandbox runs before the bot)."""
BASE_PATH = "/usr/local/bin:/usr/bin:/bin"
SKIP = frozenset({"__pycache__.lock", "test", "tests", "idlelib", "tkinter", "turtledemo",
                  "ensurepip", "jmods", "include", "legal", "man", "docs", "demo", "sample"})
"""Folders of a runtime's tree a bot does not need (a Python's test suite, a JDK's jmods)."""
MAX_BYTES = 4 << 30
"""The largest runtime shown (its files' sizes)."""
MAX_ENTRIES = 200_000
MAX_DEPTH = 64
MAX_LINKS = 40
FAMILIES = {
    "python": ("/usr/lib/{name}", "/usr/lib/python3", "/usr/local/lib/{name}", "/etc/{name}",
               "/usr/share/python3"),
    "perl": ("/usr/share/perl", "/usr/share/perl5", "/usr/lib/{triplet}/perl",
             "/usr/lib/{triplet}/perl5", "/usr/lib/{triplet}/perl-base", "/etc/perl"),
    "node": ("/usr/share/nodejs", "/usr/lib/nodejs", "/usr/lib/node_modules",
             "/usr/local/lib/node_modules"),
    "ruby": ("/usr/lib/ruby", "/usr/lib/{triplet}/ruby"),
}
"""The system folders of an interpreter's family, by the start of its program's name."""
INTERPRETERS = ("python", "perl", "node", "nodejs", "ruby", "java", "sh", "bash", "dash", "env")
"""What a bot's own script may name to be shown (by the start of the program's name)."""
MAX_CALLED = 2
"""How many of them: a wrapper script runs one interpreter (two with a shell)."""


class RuntimeError_(ValueError):
    """A runtime that cannot be shown (too large)."""


@dataclass
class Closure:
    """Host paths to show, by kind: ``files`` (regular), ``links`` (symlink -> its text),
    ``dirs``; ``roots`` are the folders each is shown under (a system top, or an install
    prefix), ``size`` what the files hold."""

    files: dict[str, os.stat_result] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)
    dirs: set[str] = field(default_factory=set)
    roots: set[str] = field(default_factory=set)
    size: int = 0
    _elf_done: set[str] = field(default_factory=set)
    _trees: set[str] = field(default_factory=set)
    within: tuple[str, ...] = ()
    """Where a symlink met inside a shown folder may lead and be followed (the runtimes the
    command chose); elsewhere only the link itself is shown (it dangles there)."""

    # -- adding ---------------------------------------------------------------------------

    def add(self, path: str | Path, *, root: str | None = None) -> str | None:
        """Adds ``path`` and every symlink on the way to it; returns the real path of what it
        names (``None``: missing, unreadable, or a kind not shown)."""
        real = self._follow(os.path.abspath(path), root)
        if real is None:
            return None
        try:
            st = os.stat(real)
        except OSError:
            return None
        if not _public(st, real):
            return None
        if stat.S_ISREG(st.st_mode):
            self._file(real, st, root)
        elif stat.S_ISDIR(st.st_mode):
            self._dir(real, root)
        else:
            return None
        return real

    def tree(self, folder: str | Path, *, root: str | None = None,
             skip: Iterable[str] = SKIP) -> None:
        """Adds ``folder`` and everything in it (symlinks inside followed to what they name),
        but for the folders named ``skip``."""
        real = self.add(folder, root=root)
        if real is None or real in self._trees or not os.path.isdir(real):
            return
        self._trees.add(real)
        skipped = frozenset(skip)
        stack: list[tuple[str, int]] = [(real, 0)]
        while stack:
            here, depth = stack.pop()
            if depth > MAX_DEPTH:
                continue
            try:
                entries = list(os.scandir(here))
            except OSError:
                continue
            for entry in entries:
                path = entry.path
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISLNK(st.st_mode):
                    self._inner_link(path, root)
                elif stat.S_ISDIR(st.st_mode):
                    if entry.name in skipped or not _public(st, path):
                        continue
                    self._dir(path, root)
                    stack.append((path, depth + 1))
                elif stat.S_ISREG(st.st_mode) and _public(st, path):
                    self._file(path, st, root)
                    if ".so" in entry.name:
                        self.elf(path)

    def _inner_link(self, path: str, root: str | None) -> None:
        """A symlink inside a shown folder: followed only into the system folders or the
        runtimes (:attr:`within`), never to a file elsewhere that any user may read (another
        entrant's folder, say: a ``shared`` folder's link must not copy it in)."""
        real = os.path.realpath(path)
        top = real.strip("/").split("/")[0]
        if top in SYSTEM_TOPS or any(real == w or real.startswith(w + "/") for w in self.within):
            self.add(path, root=root)
            return
        with contextlib.suppress(OSError):
            self._link(path, os.readlink(path), root)

    def elf(self, path: str, *, trusted: bool = True) -> None:
        """Adds what the loader loads for the ELF file ``path`` (a bot's own program: not
        ``trusted``, its requests are looked up in the system's library folders only)."""
        if path in self._elf_done:
            return
        self._elf_done.add(path)
        found = dynamic(Path(path))
        if found is None:
            return
        if found.interpreter and _system(found.interpreter):
            real = self.add(found.interpreter)
            if real:
                self.elf(real)
        origin = os.path.dirname(path)
        search = [s.replace("$ORIGIN", origin).replace("${ORIGIN}", origin)
                  for s in found.search] if trusted else []
        for name in found.needed:
            if "/" in name:
                candidates = [name] if trusted or _system(name) else []
            else:
                candidates = [os.path.join(d, name) for d in (*search, *lib_dirs())]
            for candidate in candidates:
                if os.path.isfile(candidate):
                    real = self.add(candidate)
                    if real:
                        self.elf(real)
                    break

    def program(self, path: str | Path, *, trusted: bool = True) -> str | None:
        """Adds a program (and, for an ELF file, its libraries; for a known interpreter, its
        family's folders)."""
        real = self.add(path)
        if real is None:
            return None
        self.elf(real, trusted=trusted)
        self.family(real)
        return real

    def family(self, real: str) -> None:
        """Adds the system folders of the interpreter ``real`` (by its name), and a JDK's
        home for a program inside one."""
        name = os.path.basename(real)
        triplet = _triplet()
        for start, folders in FAMILIES.items():
            if name.startswith(start):
                for pattern in folders:
                    self.tree(pattern.format(name=name, triplet=triplet))
        parts = Path(real).parts
        if len(parts) > 4 and parts[1:4] == ("usr", "lib", "jvm"):
            self.tree(os.path.join(*parts[:5]))

    def always(self) -> None:
        """Adds :data:`ALWAYS` and the ``/etc`` entries."""
        for prog in ALWAYS:
            for d in BASE_PATH.split(":"):
                if os.path.isfile(os.path.join(d, prog)):
                    self.program(os.path.join(d, prog))
                    break
        for name in ETC_ENTRIES:
            if os.path.isdir(os.path.join("/etc", name)):
                self.tree(os.path.join("/etc", name))
            else:
                self.add(os.path.join("/etc", name))

    def called(self, script: str | Path, *, trusted: bool = True) -> None:
        """Adds the system programs a (wrapper) script names, each word looked up on the
        system's ``PATH``: root's own programs only. A bot's own script (not ``trusted``) may
        name interpreters only (:data:`INTERPRETERS`), at most :data:`MAX_CALLED` of them: its
        words would otherwise bring every program of the host, and their families, into
        memory."""
        budget = MAX_CALLED if not trusted else 1 << 30
        for path in _programs_named(script):
            if not trusted and not os.path.basename(path).startswith(INTERPRETERS):
                continue
            if budget > 0 and os.path.realpath(path) not in self.files:
                budget -= 1
                self.program(path)

    # -- inside -------------------------------------------------------------------------------

    def _follow(self, path: str, root: str | None) -> str | None:
        """The real path of ``path``, adding each symlink met (and the folders above)."""
        parts = path.strip("/").split("/")
        done = "/"
        hops = 0
        while parts:
            part = parts.pop(0)
            if part in ("", "."):
                continue
            if part == "..":
                done = os.path.dirname(done)
                continue
            here = os.path.join(done, part)
            try:
                st = os.lstat(here)
            except OSError:
                return None
            if stat.S_ISLNK(st.st_mode):
                hops += 1
                if hops > MAX_LINKS:
                    return None
                try:
                    target = os.readlink(here)
                except OSError:
                    return None
                self._link(here, target, root)
                parts = [*target.strip("/").split("/"), *parts]
                if target.startswith("/"):
                    done = "/"
                continue
            done = here
        return done

    def _root(self, path: str, root: str | None) -> str:
        top = path.strip("/").split("/")[0]
        if top in SYSTEM_TOPS:
            return "/" + top
        if root is not None and (path == root or path.startswith(root.rstrip("/") + "/")):
            return root
        inside = next((r for r in self.roots if path == r or path.startswith(r + "/")), None)
        return inside or os.path.dirname(path)

    def _note_root(self, path: str, root: str | None) -> None:
        r = self._root(path, root)
        if r not in self.roots:
            inner = {q for q in self.roots if q.startswith(r + "/")}
            self.roots -= inner
            self.roots.add(r)

    def _parents(self, path: str) -> None:
        parent = os.path.dirname(path)
        while parent != "/" and parent not in self.dirs:
            self.dirs.add(parent)
            parent = os.path.dirname(parent)

    def _file(self, path: str, st: os.stat_result, root: str | None) -> None:
        if path in self.files:
            return
        if len(self.files) + len(self.links) >= MAX_ENTRIES or self.size + st.st_size > MAX_BYTES:
            raise RuntimeError_(f"the runtime is larger than {MAX_BYTES >> 20} MiB or "
                                f"{MAX_ENTRIES} files (at {path!r})")
        self.files[path] = st
        self.size += st.st_size
        self._parents(path)
        self._note_root(path, root)

    def _dir(self, path: str, root: str | None) -> None:
        if path != "/" and path not in self.dirs:
            self.dirs.add(path)
            self._parents(path)
            self._note_root(path, root)

    def _link(self, path: str, target: str, root: str | None) -> None:
        if path not in self.links:
            self.links[path] = target
            self._parents(path)
            self._note_root(path, root)

    def ordered_roots(self) -> list[str]:
        """The roots that are folders, in the order the tree numbers them (``r0``, ``r1``...)."""
        return sorted(r for r in self.roots if r not in self.links)

    def place(self, path: str) -> str | None:
        """Where ``path`` lies in the tree: ``r<N>/...`` under its root's number (``None``: a
        top-level symlink, which the sandbox makes itself)."""
        best = None
        for i, root in enumerate(self.ordered_roots()):
            inside = path == root or path.startswith(root.rstrip("/") + "/")
            if inside and (best is None or len(root) > len(best[1])):
                best = (i, root)
        if best is None:
            return None
        rest = path[len(best[1]):].lstrip("/")
        return f"r{best[0]}/{rest}" if rest else f"r{best[0]}"

    def key(self) -> str:
        """What the closure holds, as text to hash: equal keys, equal trees."""
        import hashlib
        digest = hashlib.sha256()
        for path in sorted(self.files):
            st = self.files[path]
            digest.update(f"f{path}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}\0"
                          f"{st.st_mode & 0o777}\n".encode("utf-8", "surrogateescape"))
        for path in sorted(self.links):
            digest.update(f"l{path}\0{self.links[path]}\n".encode("utf-8", "surrogateescape"))
        for path in sorted(self.dirs):
            digest.update(f"d{path}\n".encode("utf-8", "surrogateescape"))
        return digest.hexdigest()[:24]


def _programs_named(script: str | Path) -> Iterator[str]:
    """The system programs ``script`` names, in order: each absolute path to an executable of
    root's in the system folders, then each word found as one on the system's ``PATH``."""
    try:
        with open(script, "rb") as f:
            head = f.read(65536)
    except OSError:
        return
    if b"\0" in head[:1024]:
        return
    for path in sorted(set(re.findall(rb"/[A-Za-z0-9_./+-]{1,255}", head)))[:1024]:
        text = os.path.normpath(path.decode())
        try:
            st = os.stat(text)
        except OSError:
            continue
        if _system(text) and stat.S_ISREG(st.st_mode) and st.st_uid == 0 and \
                st.st_mode & 0o111:
            yield text
    words = set(re.findall(rb"[A-Za-z0-9_][A-Za-z0-9_.+-]{0,63}", head))
    for word in sorted(words)[:4096]:
        text = word.decode()
        for d in BASE_PATH.split(":"):
            candidate = os.path.join(d, text)
            try:
                st = os.stat(candidate)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and st.st_uid == 0 and st.st_mode & 0o111:
                yield candidate
            break


def _public(st: os.stat_result, path: str) -> bool:
    """Readable by any user (files: ``o+r``; folders: ``o+rx``)."""
    need = 0o005 if stat.S_ISDIR(st.st_mode) else 0o004
    return (st.st_mode & need) == need


def _system(path: str) -> bool:
    """Under a system top (not ``/etc``), once ``..`` and symlinks are resolved: ``/usr/../x``
    names ``/x``."""
    top = os.path.realpath(path).strip("/").split("/")[0]
    return top in SYSTEM_TOPS and top != "etc"


_LIB_DIRS: list[str] | None = None


def lib_dirs() -> list[str]:
    """The loader's folders: ``/etc/ld.so.conf.d``'s, then :data:`LIB_DIRS`."""
    global _LIB_DIRS
    if _LIB_DIRS is None:
        found: list[str] = []
        conf = Path("/etc/ld.so.conf.d")
        for item in sorted(conf.glob("*.conf")) if conf.is_dir() else []:
            try:
                lines = item.read_text(errors="replace").splitlines()
            except OSError:
                continue
            found += [line.strip() for line in lines if line.strip().startswith("/")]
        _LIB_DIRS = [d for d in dict.fromkeys([*found, *LIB_DIRS]) if os.path.isdir(d)]
    return _LIB_DIRS


def _triplet() -> str:
    machine = os.uname().machine
    return {"x86_64": "x86_64-linux-gnu", "aarch64": "aarch64-linux-gnu"}.get(
        machine, f"{machine}-linux-gnu")


def python_base(prefix: Path) -> Path | None:
    """The base install a venv at ``prefix`` was made from (``pyvenv.cfg``'s ``home``)."""
    try:
        text = (prefix / "pyvenv.cfg").read_text(errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "home" and value.strip():
            home = Path(value.strip())
            return home.parent if home.name == "bin" else home
    return None


def closure(exe: Path, runtimes: Sequence[Path], *, own: Sequence[Path] = ()) -> Closure:
    """The runtime of a bot whose program is ``exe`` (resolved by the sandbox), with the
    install prefixes ``runtimes`` (trusted: the organiser's command or ``PATH`` chose them,
    or they passed :func:`referee.bots.resolve.bot_binds`' checks); ``own``: the bot's own
    folders (its files are shown from its snapshot, and what they ask for is untrusted).

    :raises RuntimeError_: for a runtime past :data:`MAX_BYTES` or :data:`MAX_ENTRIES`.
    """
    found = Closure(within=tuple(os.path.realpath(p) for p in runtimes))
    found.always()
    bases = {b for p in runtimes if (b := python_base(p)) is not None}
    for prefix in runtimes:
        real = os.path.realpath(prefix)
        if _system(real):
            continue
        if prefix in bases or Path(real) in bases:
            # a venv's base: its library, not its site-packages (the venv has its own)
            found.add(prefix, root=str(prefix))
            for sub in ("bin", "lib"):
                top = Path(real) / sub
                if not top.is_dir():
                    continue
                for entry in sorted(top.iterdir()):
                    if entry.name.startswith("python") and entry.is_dir():
                        found.tree(entry, root=real,
                                   skip=SKIP | {"site-packages", "config-3.11-x86_64-linux-gnu"})
                    elif entry.is_file() or entry.is_symlink():
                        found.add(entry, root=real)
                        if entry.is_file():
                            found.elf(str(entry))
        else:
            found.tree(real, root=real)
            if str(prefix) != real:
                found.add(prefix, root=str(prefix))
    def inside(path: str | Path) -> bool:
        return any(Path(path) == p or p in Path(path).parents for p in own)

    def vetted(path: str) -> bool:  # what a bot's own file may name: the system's programs
        real = os.path.realpath(path)  # (root's), or a runtime the organiser's command chose
        try:
            owner = os.stat(real).st_uid
        except OSError:
            return False
        return (_system(real) and owner == 0) or \
            any(Path(real) == r or Path(os.path.realpath(r)) in Path(real).parents
                for r in runtimes)

    program: str | None = str(exe)
    trusted = not inside(exe)
    for _hop in range(4):  # a script, its #! interpreter (a script too?), ...
        assert program is not None
        if inside(program):  # the bot's own: in its snapshot; what it asks is untrusted
            found.elf(os.path.realpath(program), trusted=False)
            shown: str | None = program
            trusted = False
        elif trusted or vetted(program):
            shown = found.program(program)
        else:
            break
        if shown is None:
            break
        found.called(shown, trusted=trusted)
        program = _interpreter(Path(shown))
        if program is None:
            break
    return found


def _interpreter(script: Path) -> str | None:
    """The program a ``#!`` line names (after ``env``: the word it looks up on the system's
    ``PATH``)."""
    line = shebang(script)
    words = line.split() if line is not None else []
    if not words:
        return None
    env = os.path.realpath(words[0])
    if os.path.basename(env) == "env" and _system(env) and len(words) > 1 and \
            "/" not in words[1]:
        for d in BASE_PATH.split(":"):
            if os.path.isfile(os.path.join(d, words[1])):
                return os.path.join(d, words[1])
        return None
    return words[0] if words[0].startswith("/") else None
