"""Containers, clusters, clouds and databases."""

from __future__ import annotations

import re

from app.core.i18n import N_

from .code_options import option_values
from .danger import Danger
from .findings import BULK_COMMAND, D, M
from .options import _operands, _short_flags
from .packages import expanded
from .rule import Analysis
from .scripts import script_text, typed_text
from .stdin import _Stdin
from .words import _Word

_DOCKER_VALUES = frozenset({"-H", "--host", "--context", "-c", "--config", "-l", "--log-level"})
_COMPOSE_VALUES = frozenset({"-f", "--file", "-p", "--project-name", "--profile", "--env-file", "--project-directory",
                             "--ansi", "--parallel", "--progress"})  # fmt: skip


def cmd_docker(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    words = _operands(args, _DOCKER_VALUES)
    ops = [a.value for a in words]
    pair = tuple(ops[:2])
    if pair in (("system", "prune"), ("volume", "rm"), ("volume", "prune"), ("volume", "remove")):
        ctx.add(D, "{name} {value}: deletes data", name=name, value=" ".join(pair), danger=Danger.LOSES_FILES)
    elif _compose_down_volumes(name, args, words):
        said = name if name == "docker-compose" else f"{name} compose"
        ctx.add(D, "{name} down --volumes: deletes data", name=said, danger=Danger.LOSES_FILES)
    elif ops[:1] and ops[0] in ("ps", "images", "logs", "inspect", "version", "info", "stats", "top",
                                "history", "search", "port", "diff"):  # fmt: skip
        return
    else:
        ctx.add(M, "{name}: changes containers", name=name)
        if ops[:1] in (["run"], ["create"]) and _mounts_a_folder(args):
            # `docker run -v ~/Documents:/d alpine rm -rf /d`: the container's command reaches the folder.
            ctx.may_run(args, depth)


def _mounts_a_folder(args: list[_Word]) -> bool:
    values = [a.value or "" for a in args]
    return any(v in ("-v", "--volume", "--mount") or v.startswith(("-v", "--volume=", "--mount=")) for v in values)


def _compose_down_volumes(name: str, args: list[_Word], operands: list[_Word]) -> bool:
    """`docker compose [-f FILE] down -v` (or `docker-compose ...`): the project's volumes go too."""
    if name == "docker-compose":
        after = args
    elif operands and operands[0].value == "compose":
        after = args[next(i for i, a in enumerate(args) if a is operands[0]) + 1 :]
    else:
        return False
    sub = next(iter(_operands(after, _COMPOSE_VALUES)), None)
    if sub is None or sub.value != "down":
        return False
    volumes = [a.value for a in after if (a.value or "").startswith("--volumes")]
    return "v" in _short_flags(after) or any(v in ("--volumes", "--volumes=true") for v in volumes)


def cmd_kubectl(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    ops = _operands(args, frozenset({"-n", "--namespace", "--context"}))
    if expanded(ctx, next(iter(ops), None), name):
        return
    sub = next((a.value for a in ops), "")
    if sub == "delete":
        ctx.add(D, "kubectl delete: deletes cluster resources", danger=Danger.LOSES_FILES)
    elif sub not in ("get", "describe", "logs", "version", "explain", "top", "api-resources", "config"):
        ctx.add(M, "kubectl {sub}: changes the cluster", sub=sub or "")


def cmd_terraform(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    if expanded(ctx, next(iter(_operands(args)), None), name):
        return
    sub = next((a.value for a in _operands(args)), "")
    if sub == "destroy" or "-destroy" in {a.value for a in args}:
        ctx.add(D, "{name} destroy: deletes infrastructure", name=name, danger=Danger.LOSES_FILES)
    elif sub not in ("plan", "show", "output", "validate", "fmt", "version", "providers", "graph"):
        ctx.add(M, "{name} {sub}: changes infrastructure", name=name, sub=sub or "")


API_DELETE_WORDS = N_("Deletes something on GitHub (for example a repository or release)")


def cmd_gh(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    ops = [a.value for a in _operands(args, frozenset({"-X", "--method", "-R", "--repo"}))]
    methods = [args[i + 1] for i in range(len(args) - 1) if args[i].value in ("-X", "--method")]
    if ops[:1] == ["api"] and any(expanded(ctx, word, "gh api") for word in methods):
        return
    said = [word.value or "" for word in methods] + [
        (a.value or "").split("=", 1)[1] for a in args if (a.value or "").startswith("--method=")
    ]
    if ops[:1] == ["api"] and "DELETE" in (method.upper() for method in said):
        ctx.add(D, "gh {value} delete: deletes it on GitHub", API_DELETE_WORDS, value="api", danger=Danger.LOSES_FILES)
    elif len(ops) >= 2 and ops[1] == "delete":
        ctx.add(D, "gh {value} delete: deletes it on GitHub", value=ops[0] or "", danger=Danger.LOSES_FILES)
    elif len(ops) >= 2 and ops[1] in ("view", "list", "status", "diff", "checks"):
        return
    else:
        ctx.add(M, "gh: acts on GitHub")


def cmd_dropdb(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    ctx.add(D, "{name}: deletes a database", name=name, danger=Danger.LOSES_FILES)


# Statements that delete a database's data for good: DROP, TRUNCATE, DELETE with no WHERE (or one
# that is always true), Redis's FLUSHALL/FLUSHDB, MongoDB's drops, remove({}) and deleteMany({}),
# sqlite3's `.open --new` and `.restore` (red team, 2026-12-04: `sqlite3 app.db 'DROP TABLE users'`,
# `DROP/**/TABLE`, `DELETE FROM t WHERE 1` were moderate). Comments are taken out first.
_DROPS = re.compile(
    r"\b(?:drop\s+(?:database|schema|table|collection|keyspace|owned)\b|truncate(?:\s+table)?\s+[\w.\"`]+|"
    r"delete\s+from\s*[\w.\"`]+\s*(?:;|$|where\s+(?:not\s+)?(?:\d+|true|''|(\w+)\s*=\s*\1)\s*(?:;|$))|"
    r"flushall\b|flushdb\b)|"
    r"\.(?:drop(?:Database)?\s*\(|(?:deleteMany|remove)\s*\(\s*\{\s*\}\s*\))",
    re.I | re.M,
)
# sqlite3's, read before comments go; its dot-commands by any prefix (`.op -new`, `.rest`)
_DOT_WIPES = re.compile(r"^\s*\.(?:op(?:en?)?\s+.*-{1,2}new|rest(?:o(?:re?)?)?)\b", re.M)
# Strings and comments, read in one pass from the left (`SELECT '--'; DROP TABLE t` drops): a string
# becomes '' (`like '%drop table%'` is text), a comment a space (`DROP/**/TABLE` drops).
_SQL_TEXT = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|/\*.*?\*/", re.S)
# ... and as PostgreSQL's E'...' and MySQL read strings, with backslash escapes: either reading counts.
_SQL_TEXT_ESCAPED = re.compile(r"'(?:[^'\\]|\\.|'')*'|\"(?:[^\"\\]|\\.|\"\")*\"|--[^\n]*|/\*.*?\*/", re.S)
# A client's way to run a shell command: sqlite3's `.shell`/`.system` (by any prefix: `.sy`), psql's
# `\!`, mysql's `system`; and output or input through one: sqlite3's `.output '|CMD'` (`.once`,
# `.import`, `.read`), psql's `\o |CMD` and `\copy ... to program 'CMD'` (third red team).
_SHELL_ESCAPE = re.compile(
    r"(?:^|[;\n])\s*(?:\.sh(?:e(?:ll?)?)?|\.sy(?:s(?:t(?:em?)?)?)?|\\!|system)\s+(.*)|"
    r"(?:^|[;\n])\s*(?:\.(?:output|once|import|read|o)|\\o|\\g)\s*['\"]?\|\s*([^'\"\n]*)|"
    r"\bprogram\s+'([^']*)'|"
    r"\bedit\s*\((?:[^,()']|'[^']*')*,\s*'(?P<editor>(?:[^']|'')*)'",  # sqlite3's edit(TEXT, 'EDITOR') runs it
    re.I,
)
_EXECUTED = re.compile(r"\bexecute\s+'((?:[^']|'')*)'", re.I)  # PostgreSQL's EXECUTE 'DROP TABLE t' in a DO block
_EDITS = re.compile(r"\bedit\s*\(", re.I)  # edit(TEXT) runs $VISUAL; edit(TEXT, EDITOR) what it names


_SQL_FILE_OPTIONS = {"psql": ["-f", "--file"], "sqlite3": ["-init", "--init"], "duckdb": ["-init", "--init"]}
# A file read and run from inside: sqlite3's `.read FILE`, psql's `\i`/`\ir`/`\include`, mysql's
# `source FILE` and `\. FILE` (a `|CMD` there is a shell escape, above).
_READS_FILE = re.compile(
    r"(?:^|[;\n])[ \t]*(?:\.rea(?:d)?|\\i(?:r|nclude(?:_relative)?)?|source|\\\.)[ \t]+['\"]?([^'\"|;\s][^'\";\n]*)",
    re.I,
)  # the name's trailing blanks are taken off after (a lazy match before `\s*;` was quadratic on blanks)


def _sql_blank(match: re.Match[str]) -> str:
    """A string becomes '' (text), a quoted name `x` (`DELETE FROM "users"`), a comment a space."""
    first = match[0][:1]
    return "''" if first == "'" else "x" if first == '"' else " "


def cmd_database(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """A database's client (psql, mysql, sqlite3, redis-cli, mongosh...): what it is told to run, in
    its words or typed into it, may delete the database's data, or run a shell command."""
    # a word with an expansion: its text as written (`".shell $(echo rm) -rf DIR"`: fifth red team)
    texts = [a.literal if a.literal is not None else a.source.strip("'\"") for a in args]
    typed = typed_text(ctx, name, stdin)  # `printf 'DROP TABLE %s' t |`, `< drop.sql`: its words
    if typed is not None:
        texts.append(typed)
    if name in ("redis-cli", "valkey-cli", "keydb-cli"):  # `redis-cli FLUSHALL`: the command is its words
        texts.append(" ".join(texts))
    # SQL files it is told to run (`psql -f`, `sqlite3 -init`; `.read`, `\i`, `source` in what it runs),
    # read and judged with the rest; a file read inside one is read too (MAX_SCRIPTS bounds them).
    files = [word for _option, word in option_values(args, _SQL_FILE_OPTIONS.get(name, []), "cdfhpUvoLTPFRS")]
    looked = 0
    while files or looked < len(texts):
        if not files:
            files = [_Word(f.rstrip(), f.rstrip(), f.rstrip()) for f in _READS_FILE.findall(texts[looked])]
            looked += 1
        elif (read := script_text(ctx, name, files.pop(0))) is not None:
            texts.append(read[1])
    for text in texts:
        for escape in _SHELL_ESCAPE.finditer(text):
            ctx.sub_script(next(group for group in escape.groups() if group is not None), f"{name} shell command")
        if _EDITS.search(text) and not any(e["editor"] is not None for e in _SHELL_ESCAPE.finditer(text)):
            ctx.add(D, "cannot tell what runs: {name} runs the editor its SQL names", name=name)
    statements = [pattern.sub(_sql_blank, text) for text in texts for pattern in (_SQL_TEXT, _SQL_TEXT_ESCAPED)]
    # a statement in a string that is run: PostgreSQL's `EXECUTE 'DROP TABLE t'` in a DO block
    statements += [inner for text in texts for inner in _EXECUTED.findall(text)]
    if bulk and len(_operands(args)) < 2:  # `... | xargs -0 sqlite3 db`: the statements are the words read
        ctx.add(D, BULK_COMMAND)
    found = (*map(_DOT_WIPES.search, texts), *map(_DROPS.search, statements))
    dropped = next((m for m in found if m is not None), None)
    if dropped is not None:
        value = " ".join(dropped[0].split()[:2]).strip(".(; ")
        ctx.add(D, "{name} {value}: deletes data", name=name, value=value, danger=Danger.LOSES_FILES)
    else:
        ctx.add(M, "{name}: changes or reads a database", name=name)
