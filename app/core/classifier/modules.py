"""The project's own modules a program file loads: what an approval pins besides the program (red
team, 2026-12-04: after the user allowed `python3 p.py`, the helper.py it imports was rewritten and
the new one ran). They are not judged: they are the project's files, as a Makefile is (reading them
held the main program of every sizable project; security.md).

Only files that exist are read: for Python, `import X`, `import X.Y`, `from X import Y`, `from . import
Y` where X.py or X/__init__.py is in the script's folder or the command's; for Node, a relative
`require`/`import` ('./h', './h.js', '../x/index.js'); for Perl, `use X`/`require X` where X.pm is in
the script's folder, the command's, or a `use lib` folder; for Ruby, `require_relative`. Installed
packages are not read (they are installed software, as a program in /usr/bin is). Each module is
found by its words, not by running the code, so a name in a comment or a string is read too: more
pinning, never less. `commands/pins/` follows them from the scripts the classifier read.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterable, Iterator

from .tables import _PERL, _PYTHON

_PY_IMPORT = re.compile(r"(?:^|;)[ \t]*import[ \t]+([\w. \t,]+)", re.M)
_PY_FROM = re.compile(r"(?:^|;)[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]*)", re.M)
_PY_DUNDER = re.compile(r"""(?:__import__|import_module)\s*\(\s*[rRuU]?(['"])([\w.]+)\1""")  # importlib's too
_JS_LOAD = re.compile(r"""(?:\brequire\s*\(|\bimport\s*\(|\bfrom\s*|\bimport\s*)\s*(['"`])(\.{1,2}/[^'"`\n]*)\1""")
_JS_SUFFIXES = ("", ".js", ".cjs", ".mjs", ".ts", ".mts", ".cts", "/index.js", "/index.cjs", "/index.mjs", "/index.ts")
_PERL_LIB = re.compile(r"\buse[ \t]+lib\b([^;]*)")
_PERL_USE = re.compile(r"(?:^|[;{}])[ \t]*(?:use|require|no)[ \t]+([A-Za-z_]\w*(?:::\w+)*)", re.M)
_PERL_FILE = re.compile(r"""\b(?:require|do)[ \t]*\(?[ \t]*(['"])([^'"\n]+)\1""")
_RUBY_RELATIVE = re.compile(r"""\brequire_relative[ \t(]*(['"])([^'"\n]+)\1""")
_JS_NAMES = frozenset({"node", "nodejs", "bun", "deno"})


def module_files(language: str, text: str, path: str, roots: Iterable[str]) -> list[str]:
    """The files of the project that the program at `path` (its `text`, run by `language`) loads,
    found in its own folder or `roots` (the command's folder, the first script's): absolute paths."""
    folder = posixpath.dirname(path)
    where = list(dict.fromkeys([folder, *roots]))
    if _PYTHON.match(language):
        found: Iterable[str] = _python(text, folder, where)
    elif _PERL.match(language):
        found = _perl(text, folder, where)
    elif language in _JS_NAMES:
        found = _relative(folder, (m[2] for m in _JS_LOAD.finditer(text)), _JS_SUFFIXES)
    elif language == "ruby":
        found = _relative(folder, (m[2] for m in _RUBY_RELATIVE.finditer(text)), ("", ".rb"))
    else:
        return []
    return [p for p in dict.fromkeys(found) if p != path]


def python_top_names(text: str) -> set[str]:
    """The first names of the modules a Python program imports absolutely (`import json, x.y`: json,
    x): a file of that name put beside the program shadows the one installed."""
    names = {
        part.split()[0].split(".")[0] for m in _PY_IMPORT.finditer(text) for part in m[1].split(",") if part.split()
    }
    names |= {m[2].split(".")[0] for m in _PY_FROM.finditer(text) if not m[1] and m[2]}
    return {name for name in names if re.fullmatch(r"\w+", name)}


def _python(text: str, folder: str, where: list[str]) -> Iterator[str]:
    for match in _PY_IMPORT.finditer(text):
        for part in match[1].split(","):
            words = part.split()
            if words:
                yield from _python_module(where, words[0].split("."))
    for match in _PY_DUNDER.finditer(text):  # `__import__("helper")`
        yield from _python_module(where, match[2].split("."))
    for match in _PY_FROM.finditer(text):
        dots, package, listed = match[1], match[2], match[3]
        names = [n.split()[0] for n in listed.strip("()").replace("\\", " ").split(",") if n.split()]
        parts = [p for p in package.split(".") if p]
        if dots:  # relative to the module's own package: `from . import x`, `from ..pkg import y`
            base = folder
            for _ in range(len(dots) - 1):
                base = posixpath.dirname(base)
            bases = [base]
        else:
            bases = where
        yield from _python_module(bases, parts)
        for name in names:
            if name != "*":
                yield from _python_module(bases, [*parts, name])


def python_module_files(base: str, dotted: str) -> list[str]:
    """The files `python -m DOTTED` (or `import DOTTED`) runs from `base`: each package's
    __init__.py on the way, the module, and a package's __main__.py; [] when none is there."""
    parts = dotted.split(".")
    found = list(_python_module([base], parts))
    main = posixpath.join(base, *parts, "__main__.py")
    return found + [main] if found and os.path.isfile(main) else found


def _python_module(bases: list[str], parts: list[str]) -> Iterator[str]:
    """`a.b.c` from each base: a.py or a/__init__.py, then a/b.py or a/b/__init__.py, and so on."""
    if not all(re.fullmatch(r"\w+", p) for p in parts):
        return
    for base in bases:
        for k in range(1, len(parts) + 1):
            here = posixpath.join(base, *parts[:k])
            for candidate in (f"{here}.py", f"{here}/__init__.py"):
                if os.path.isfile(candidate):
                    yield candidate


def _perl(text: str, folder: str, where: list[str]) -> Iterator[str]:
    libs: list[str] = []
    for match in _PERL_LIB.finditer(text):
        for value in re.findall(r"""['"]([^'"]+)['"]|\bqw\s*[(\[{/<]([^)\]}/>]*)""", match[1]):
            for name in (value[0], *value[1].split()):
                name = re.sub(r"^\$(?:FindBin::)?(?:Real)?Bin\b", folder, name)  # `use lib "$FindBin::Bin/lib"`
                if name:
                    libs += [posixpath.normpath(posixpath.join(base, name)) for base in where]  # `.`: the cwd
    bases = list(dict.fromkeys([*where, *libs]))
    for match in _PERL_USE.finditer(text):
        relative = match[1].replace("::", "/") + ".pm"
        yield from (p for base in bases if os.path.isfile(p := posixpath.join(base, relative)))
    for match in _PERL_FILE.finditer(text):
        value = match[2]
        if value.startswith("/"):
            if os.path.isfile(value):
                yield value
        else:
            yield from (p for base in bases if os.path.isfile(p := posixpath.normpath(posixpath.join(base, value))))


def _relative(folder: str, values: Iterable[str], suffixes: tuple[str, ...]) -> Iterator[str]:
    """Paths relative to the program's folder, with the first suffix that names a file."""
    for value in values:
        base = posixpath.normpath(posixpath.join(folder, value))
        for suffix in suffixes:
            candidate = base + suffix
            if candidate.endswith(".json"):  # data, not code
                break
            if os.path.isfile(candidate):
                yield candidate
                break
