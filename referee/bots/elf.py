"""What an executable asks of the system: an ELF file's interpreter and the libraries it needs
(of the dynamic loader), a script's ``#!`` line.

A bounded reader of the few headers :mod:`referee.bots.runtime` needs to work out a bot's
runtime: it reads at most :data:`MAX_READ` bytes, never follows an offset outside the file, and
answers ``None`` (not an ELF file, or a malformed one) rather than raise: a bot's own program is
a stranger's file.

>>> dynamic(Path("/bin/sh")).interpreter is not None  # doctest: +SKIP
True
"""

from __future__ import annotations

import os
import stat
import struct
from dataclasses import dataclass
from pathlib import Path

MAX_READ = 1 << 20
"""The most bytes of headers read from one file."""
PT_LOAD, PT_DYNAMIC, PT_INTERP = 1, 2, 3
DT_NULL, DT_NEEDED, DT_STRTAB, DT_RPATH, DT_RUNPATH = 0, 1, 5, 15, 29
MAX_NEEDED = 256


@dataclass(frozen=True)
class Dynamic:
    """An ELF file's requests: ``interpreter`` (PT_INTERP), ``needed`` (DT_NEEDED), and the
    folders it names for them (DT_RUNPATH or DT_RPATH, ``$ORIGIN`` not yet expanded)."""

    interpreter: str | None
    needed: tuple[str, ...]
    search: tuple[str, ...]


def _read(fd: int, offset: int, size: int, end: int) -> bytes | None:
    if offset < 0 or size < 0 or offset + size > end or size > MAX_READ:
        return None
    data = os.pread(fd, size, offset)
    return data if len(data) == size else None


def dynamic(path: Path) -> Dynamic | None:
    """``path``'s requests, or ``None`` for a file that is not a readable, well-formed ELF
    file (a script, a folder, a missing file)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        return _parse(fd, st.st_size)
    except (OSError, struct.error, ValueError, OverflowError):
        return None
    finally:
        os.close(fd)


def _parse(fd: int, end: int) -> Dynamic | None:
    ident = _read(fd, 0, 16, end)
    if ident is None or ident[:4] != b"\x7fELF" or ident[4] not in (1, 2) or \
            ident[5] not in (1, 2):
        return None
    wide, order = ident[4] == 2, "<" if ident[5] == 1 else ">"
    head = _read(fd, 0, 64 if wide else 52, end)
    if head is None:
        return None
    if wide:
        phoff, = struct.unpack_from(order + "Q", head, 32)
        phentsize, phnum = struct.unpack_from(order + "HH", head, 54)
        ph_fmt, ph_size = order + "IIQQQQQQ", 56
    else:
        phoff, = struct.unpack_from(order + "I", head, 28)
        phentsize, phnum = struct.unpack_from(order + "HH", head, 42)
        ph_fmt, ph_size = order + "IIIIIIII", 32
    if phentsize < ph_size or phnum > 512:
        return None
    table = _read(fd, phoff, phentsize * phnum, end)
    if table is None:
        return None
    loads: list[tuple[int, int, int]] = []  # (vaddr, offset, filesz)
    interp: str | None = None
    dyn: tuple[int, int] | None = None
    for i in range(phnum):
        fields = struct.unpack_from(ph_fmt, table, i * phentsize)
        if wide:
            kind, _flags, offset, vaddr, _paddr, filesz = fields[:6]
        else:
            kind, offset, vaddr, _paddr, filesz = fields[:5]
        if kind == PT_LOAD:
            loads.append((vaddr, offset, filesz))
        elif kind == PT_INTERP and interp is None:
            raw = _read(fd, offset, min(filesz, 4096), end)
            if raw is not None:
                interp = raw.split(b"\0", 1)[0].decode("utf-8", "replace") or None
        elif kind == PT_DYNAMIC:
            dyn = (offset, filesz)
    if dyn is None:
        return Dynamic(interp, (), ())
    return _dynamic_section(fd, end, dyn, loads, wide, order, interp)


def _dynamic_section(fd: int, end: int, dyn: tuple[int, int],
                     loads: list[tuple[int, int, int]], wide: bool, order: str,
                     interp: str | None) -> Dynamic:
    entry = 16 if wide else 8
    raw = _read(fd, dyn[0], min(dyn[1], MAX_READ) // entry * entry, end) or b""
    fmt = order + ("qQ" if wide else "iI")
    strtab: int | None = None
    needed: list[int] = []
    search: list[int] = []
    for i in range(len(raw) // entry):
        tag, value = struct.unpack_from(fmt, raw, i * entry)
        if tag == DT_NULL:
            break
        if tag == DT_STRTAB:
            strtab = value
        elif tag == DT_NEEDED and len(needed) < MAX_NEEDED:
            needed.append(value)
        elif tag in (DT_RPATH, DT_RUNPATH):
            search.append(value)
    if strtab is None:
        return Dynamic(interp, (), ())
    base = next((off + strtab - va for va, off, size in loads if va <= strtab < va + size), None)
    if base is None:
        return Dynamic(interp, (), ())

    def text(at: int) -> str | None:
        chunk = _read(fd, base + at, max(0, min(4096, end - base - at)), end)
        if not chunk or b"\0" not in chunk:
            return None
        name = chunk.split(b"\0", 1)[0].decode("utf-8", "replace")
        return name or None

    names = tuple(n for n in map(text, needed) if n)
    folders = tuple(f for s in map(text, search) if s for f in s.split(":") if f)
    return Dynamic(interp, names, folders)


def shebang(path: str | Path) -> str | None:
    """The rest of the ``#!`` line ``path`` starts with, tabs as spaces (``None``: it does not,
    or cannot be read); the kernel reads at most its first 256 bytes."""
    try:
        with open(path, "rb") as f:
            head = f.read(256)
    except OSError:
        return None
    if head[:2] != b"#!":
        return None
    return head[2:].split(b"\n")[0].replace(b"\t", b" ").decode(errors="replace")
