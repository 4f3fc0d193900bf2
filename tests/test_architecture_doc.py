"""docs/architecture.md names every module of ``referee/``: each package's section (``###
`referee/<package>` ``) names each of its modules (``name.py``; a command's module in the
CLI's section may be named by its command, ``cluster-certs``) and each of its subpackages
(``name/``). A module added without a line there fails here."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import ROOT

DOC = ROOT / "docs" / "architecture.md"


def sections(text: str) -> dict[str, str]:
    """Each package's section of the doc, by package (``bots``, ``cli``, ...)."""
    parts = re.split(r"^### `referee/(\w+)`.*$", text, flags=re.MULTILINE)
    return {name: body.split("\n## ", 1)[0] for name, body in zip(parts[1::2], parts[2::2],
                                                                   strict=True)}


def missing(package_root: Path, text: str) -> list[str]:
    """The modules and subpackages of ``package_root``'s packages that their section of
    ``text`` does not name (a package without a section: all of it)."""
    found = sections(text)
    gaps = []
    for package in sorted(p for p in package_root.iterdir() if (p / "__init__.py").is_file()):
        section = found.get(package.name)
        if section is None:
            gaps.append(f"referee/{package.name}/ (no section)")
            continue
        for child in sorted(package.iterdir()):
            if child.suffix == ".py" and child.name != "__init__.py":
                names = {f"`{child.name}`", f"`{child.stem.replace('_', '-')}`"}
            elif (child / "__init__.py").is_file():
                names = {f"`{child.name}/`"}
            else:
                continue
            if not any(name in section for name in names):
                gaps.append(f"referee/{package.name}/{child.name}")
    return gaps


def test_every_module_is_in_the_architecture_doc() -> None:
    assert missing(ROOT / "referee", DOC.read_text(encoding="utf-8")) == []


def test_a_module_left_out_of_the_doc_is_found(tmp_path: Path) -> None:
    package = tmp_path / "referee" / "things"
    (package / "inner").mkdir(parents=True)
    for name in ("__init__.py", "named.py", "left_out.py", "inner/__init__.py"):
        (package / name).write_text("")
    text = "## The layers\n\n### `referee/things`: stuff\n\n| `named.py` | x |\n\n## Tests\n" \
           "`left_out.py` is named here, out of its section\n"
    assert missing(tmp_path / "referee", text) == ["referee/things/inner",
                                                   "referee/things/left_out.py"]
    assert missing(tmp_path / "referee", "") == ["referee/things/ (no section)"]
