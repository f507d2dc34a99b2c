"""Containers, clusters, clouds and databases."""

from __future__ import annotations

import csv
import fnmatch
import os
import posixpath
import re
from typing import NamedTuple

from app.core.i18n import N_

from .code_options import option_values
from .danger import Danger
from .findings import BULK_COMMAND, D, M, _snip
from .handoff import hands_off
from .options import _operands, _short_flags
from .packages import expanded
from .rule import Analysis
from .scripts import script_text, typed_text
from .stdin import _Stdin
from .tables import _names
from .words import _Word

# Options before docker's or podman's subcommand that take a value (podman's from `podman --help`).
_DOCKER_VALUES = frozenset({"-H", "--host", "--context", "-c", "--config", "-l", "--log-level", "--tlscacert",
                            "--tlscert", "--tlskey", "--connection", "--url", "--identity", "--root", "--runroot",
                            "--runtime", "--runtime-flag", "--storage-driver", "--storage-opt", "--cgroup-manager",
                            "--conmon", "--events-backend", "--hooks-dir", "--imagestore", "--module",
                            "--network-cmd-path", "--network-config-dir", "--out", "--ssh", "--tmpdir", "--volumepath",
                            "--cdi-spec-dir", "--db-backend", "--registries-conf"})  # fmt: skip
_COMPOSE_VALUES = frozenset({"-f", "--file", "-p", "--project-name", "--profile", "--env-file", "--project-directory",
                             "--ansi", "--parallel", "--progress", "--log-level", "-H", "--host", "-c", "--context",
                             "--tlscacert", "--tlscert", "--tlskey"})  # fmt: skip


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
        _judge_daemon(ctx, name, args)
        starts = ops[:1] in (["run"], ["create"]) or ops[:2] in (["container", "run"], ["container", "create"])
        if starts and _mounts_a_folder(args):
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


# The Docker daemon (and a podman service, or podman on a Mac's or Windows' machine) starts containers
# as root, outside Cowork Terminal's container: whatever of this computer a container is given
# there (a folder, a device, the host's processes or network, every privilege), it can change with
# root's powers, the protected set included (a red team, 2026-12-05: `docker run --privileged -v
# /:/host alpine chroot /host ...` and `docker run -v ~:/h alpine sh -c "echo x >> /h/.bashrc"` were
# moderate, so they ran unasked). Such a command is held as a hand-off (issue 21), in plain words.
CONTAINER_WORDS = N_(
    "Asks {name} to run a container, outside Cowork Terminal's watch, whose programs can reach your files or "
    "your computer ({option})"
)
FILE_WORDS = N_(
    "Asks {name} to start the containers a file describes, outside Cowork Terminal's watch: that file can give "
    "them your files or your computer, and Cowork Terminal does not read it"
)
VOLUME_WORDS = N_(
    "Asks {name} to make a volume of a folder or disk of this computer, which containers then change outside "
    "Cowork Terminal's watch ({option})"
)
_SUBCOMMANDS = _names(
    "attach build builder buildx checkpoint commit compose config container context cp create debug diff events "
    "exec export history image images import info init inspect kill load login logout logs manifest network node "
    "pause plugin port ps pull push rename restart rm rmi run save sbom scan scout search secret service stack "
    "start stats stop swarm system tag top trust unpause update version volume wait "
    "artifact auto-update farm generate healthcheck kube machine mount play pod quadlet runlabel unmount unshare "
    "untag varlink"
)
_COMPOSE_VERBS = _names(
    "attach build commit config cp create down events exec export images kill logs ls pause port ps publish pull "
    "push restart rm run scale start stats stop top unpause up version wait watch alpha bridge viz"
)
_COMPOSE_STARTS = frozenset({"up", "run", "create", "start", "restart", "watch", "scale"})
# Options of run, create, service create and pod create (docker's and podman's) that take no value;
# any other takes one, so that an option this table lacks never hides the words after it.
_RUN_FLAGS = frozenset({"--detach", "--disable-content-trust", "--help", "--init", "--interactive", "--no-healthcheck",
                        "--oom-kill-disable", "--privileged", "--publish-all", "--quiet", "--read-only", "--rm",
                        "--sig-proxy", "--tty", "--use-api-socket", "--env-host", "--http-proxy", "--no-hosts",
                        "--read-only-tmpfs", "--replace", "--rmi", "--rootfs", "--passwd", "--tls-verify",
                        "--no-resolve-image", "--with-registry-auth", "--force", "--rollback", "--infra"})  # fmt: skip
_EXEC_FLAGS = frozenset({"--detach", "--interactive", "--tty", "--privileged", "--latest", "--no-TTY", "--help"})
_RUN_SHORT_FLAGS = frozenset("diPqt")
_EXEC_SHORT_FLAGS = frozenset("diltT")
_HOST_NAMESPACES = frozenset({"--pid", "--ipc", "--userns", "--network", "--net", "--network-add"})
_ALWAYS_REACH = frozenset({"--volumes-from", "--cap-add", "--device", "--device-cgroup-rule"})
_VOLUME_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")  # `-v data:/x`: a named volume, no folder of the computer
_SHELL_FOLDER = re.compile(r"^(?:\$PWD|\$\{PWD\}|\$\(pwd\)|`pwd`)(?=[/:,]|$)")
_HOME_FOLDER = re.compile(r"^(?:~|\$HOME|\$\{HOME\})(?=[/:,]|$)")
_UNKNOWN = re.compile(r"[$`*?\[]")  # what is left of an expansion or a pattern: where it leads is not known
_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")  # `C:\Users\ana:/x` (Docker Desktop on Windows); `a:/x` is a volume
_SOCKETS = re.compile(r"\.sock$|^/(?:var/)?run(?:/|$)")  # docker.sock, podman.sock, /run: the daemon itself


class _Given(NamedTuple):
    """One option of a container's command line, as the program reads it."""

    option: str  # its long name (`--volume` for `-v`), or `-x` for a short one without a long name here
    value: str | None  # its value, quotes off (None for a flag given bare)
    known: bool  # no expansion or pattern decides the value
    shown: str  # as written, for the finding


_LONG = {"v": "--volume", "e": "--env", "u": "--user", "w": "--workdir", "p": "--publish", "l": "--label"}


def _text(word: _Word) -> tuple[str, bool]:
    """A word's text and whether it is known: an expansion's word is its source, quotes off."""
    if word.literal is not None:
        return word.literal, True
    return word.source.replace('"', "").replace("'", ""), False


def _options(
    ctx: Analysis, what: str, args: list[_Word], flags: frozenset[str], short_flags: frozenset[str]
) -> list[_Given] | None:
    """The options before the image (or container) as docker's flag parser reads them: `--volume=X`,
    `--volume X`, `-v X`, `-vX`, `-v=X`, `-itv X`. None when a word an expansion decides stands where
    an option may be: it may be `--privileged` (held, "cannot tell")."""
    given: list[_Given] = []
    i = 0
    while i < len(args):
        word = args[i]
        text, known = _text(word)
        if not text.startswith("-") or text == "-":
            if not known and not word.source.startswith("-"):
                ctx.add(D, "cannot tell: {name} takes options from {source}", name=what, source=_snip(word.source))
                return None
            break  # the image: what follows is the container's command
        if text == "--":
            break
        nxt = args[i + 1] if i + 1 < len(args) else None
        if text.startswith("--"):
            name, equals, value = text.partition("=")
            if _UNKNOWN.search(name):
                ctx.add(D, "cannot tell: {name} takes options from {source}", name=what, source=_snip(word.source))
                return None
            if equals or name in flags:
                given.append(_Given(name, value if equals else None, known, word.source))
            elif nxt is not None:
                given.append(_Given(name, *_text(nxt), f"{word.source} {nxt.source}"))
                i += 1
            i += 1
            continue
        for k, letter in enumerate(text[1:], 1):
            if not letter.isalnum():
                ctx.add(D, "cannot tell: {name} takes options from {source}", name=what, source=_snip(word.source))
                return None
            if letter in short_flags:
                given.append(_Given(_LONG.get(letter, f"-{letter}"), None, known, word.source))
                continue
            attached = text[k + 1 :].removeprefix("=")
            if attached:
                given.append(_Given(_LONG.get(letter, f"-{letter}"), attached, known, word.source))
            elif nxt is not None:
                given.append(_Given(_LONG.get(letter, f"-{letter}"), *_text(nxt), f"{word.source} {nxt.source}"))
                i += 1
            break
        i += 1
    return given


def _filled(ctx: Analysis, text: str, known: bool) -> str | None:
    """`text` with the shell's folder (`$PWD`, `$(pwd)`) and the home folder filled in; None where
    an expansion or a pattern leaves part of it unknown."""
    text = _HOME_FOLDER.sub(lambda _m: ctx.home, text)
    if known:
        return text
    if ctx.cwd is not None:
        text = _SHELL_FOLDER.sub(lambda _m: ctx.cwd or "", text)
    return None if _UNKNOWN.search(text) else text


def _project_folder(ctx: Analysis, source: str) -> str | None:
    """The absolute folder a bind's `source` names when it is the command's own folder or inside it
    (`.`, `./src`, `$PWD`): the command can change those files anyway, so such a bind is not held.
    None for anything else: outside it, `..`, a link leading out, the home folder or a folder above
    it, a dot folder of the home (settings), a socket, or a path this command line makes (`ln -s ~
    h && docker run -v ./h:/h`)."""
    base = (ctx.cwd or "").rstrip("/")
    home = ctx.home.rstrip("/")
    if not base or "\\" in source or ".." in source.split("/") or home == base or home.startswith(base + "/"):
        return None
    if base.startswith(home + "/") and any(part.startswith(".") for part in base[len(home) + 1 :].split("/")):
        return None
    path = posixpath.normpath(posixpath.join(base, source))
    if (path != base and not path.startswith(base + "/")) or _SOCKETS.search(path):
        return None
    real, real_base = os.path.realpath(path), os.path.realpath(base)
    if real != real_base and not real.startswith(real_base.rstrip("/") + "/"):
        return None
    below = path[len(base) :].strip("/").split("/") if path != base else []
    steps = [posixpath.join(base, *below[: k + 1]) for k in range(len(below))]
    if any(fnmatch.fnmatchcase(step, pattern) for step in steps for pattern, _script in ctx.report.written):
        return None
    return path


def _in_project(ctx: Analysis, source: str) -> bool:
    """A bind of the project's own files: judged as the container writing anything in them, so that
    a script of the project run after it in the same command line is not taken as the one read."""
    folder = _project_folder(ctx, source)
    if folder is not None:
        ctx.note_written(_Word(None, source, folder + "/*"))
    return folder is not None


def _bind_reaches(ctx: Analysis, text: str, known: bool) -> bool:
    """`-v SOURCE:TARGET[:OPTIONS]`: a folder or file of this computer, unless a named volume or the project's."""
    spec = _filled(ctx, text, known)
    if spec is None or (_DRIVE.match(spec) and spec.count(":") > 1):
        return True
    source, colon, _target = spec.partition(":")
    if not colon:
        return False  # `-v /data`: a new, empty volume at /data in the container
    return not _VOLUME_NAME.fullmatch(source) and not _in_project(ctx, source)


def _mount_reaches(ctx: Analysis, text: str, known: bool) -> bool:
    """`--mount type=bind,source=...`: a bind (or a podman glob) of a path, a volume made with
    options (`volume-opt=o=bind,volume-opt=device=/home`), a named pipe, or a type not known here."""
    try:
        fields = next(csv.reader([text]))
    except (csv.Error, StopIteration):
        return True
    kind: str | None = "volume"
    source: str | None = None
    for field in fields:
        key, _equals, value = field.partition("=")
        key = key.strip().lower()
        if _UNKNOWN.search(key) or key.startswith("volume-opt"):
            return True
        if key == "type":
            kind = _filled(ctx, value, known)
        elif key in ("source", "src"):
            source = _filled(ctx, value, known)
            if source is None:
                return True
    if kind in ("bind", "glob"):
        return source is None or _DRIVE.match(source) is not None or not _in_project(ctx, source)
    if kind == "volume":
        return source is not None and not _VOLUME_NAME.fullmatch(source)
    return kind not in ("tmpfs", "image", "devpts", "ramfs")


def _reaches(ctx: Analysis, given: _Given) -> bool:
    """Whether an option gives the container a part of this computer. Not held: `--uts=host` (the
    host name, which a container cannot change without CAP_SYS_ADMIN), `--cgroupns=host`,
    `--group-add` (groups count only for what it is given), `--gpus`."""
    option, value = given.option, given.value
    if option in ("--volume", "-v"):
        return value is None or _bind_reaches(ctx, value, given.known)
    if option in ("--mount", "--mount-add"):
        return value is None or _mount_reaches(ctx, value, given.known)
    if option in ("--privileged", "--use-api-socket", "--rootfs"):
        return value is None or not given.known or value.lower() not in ("false", "0", "f")
    if option in _ALWAYS_REACH:
        return True
    if option in _HOST_NAMESPACES:
        # `--network=host`: root in the computer's own network, with Docker's default NET_RAW, reads
        # every program's traffic, local connections included, and takes privileged ports.
        parts = (value or "").lower().split(",")
        return not given.known or any(part == "host" or part.startswith("ns:") for part in parts)
    if option == "--security-opt":  # apparmor=unconfined, seccomp=unconfined, label=disable, unmask=ALL...
        return not given.known or (value or "").replace("=", ":") not in ("no-new-privileges", "no-new-privileges:true")
    return False


def _judge_container(ctx: Analysis, name: str, sub: str, args: list[_Word], exec_: bool = False) -> None:
    """`run`, `create`, `exec` and their kin: held when an option gives the container this computer."""
    flags, short_flags = (_EXEC_FLAGS, _EXEC_SHORT_FLAGS) if exec_ else (_RUN_FLAGS, _RUN_SHORT_FLAGS)
    given = _options(ctx, f"{name} {sub}", args, flags, short_flags)
    if exec_ and given is not None:  # an existing container: only the privileges asked for now count here
        given = [g for g in given if g.option == "--privileged"]
    reach = next((g for g in given or () if _reaches(ctx, g)), None)
    if reach is not None:
        ctx.add(D, "{name} {sub} {option}: runs a container that can reach your files or your computer, outside "
                "Cowork Terminal's watch", CONTAINER_WORDS, name=name, sub=sub, option=_snip(reach.shown),
                danger=Danger.OUTSIDE_WATCH)  # fmt: skip


def _from_a_file(ctx: Analysis, name: str, verb: str) -> None:
    ctx.add(D, "{name} {verb}: starts containers from a file Cowork Terminal does not read, outside its watch",
            FILE_WORDS, name=name, verb=verb, danger=Danger.OUTSIDE_WATCH)  # fmt: skip


def _judge_compose(ctx: Analysis, name: str, args: list[_Word]) -> None:
    """`docker compose up` (run, create, start...): the compose file may mount any folder or make a
    service privileged, and it is not read here; `exec --privileged` as `docker exec`."""
    i = 0
    while i < len(args):
        word = args[i]
        if not word.source.startswith("-") and expanded(ctx, word, name):
            return
        value = word.value or word.source
        if value.startswith("-"):
            i += 2 if value in _COMPOSE_VALUES else 1
            continue
        if value in _COMPOSE_STARTS:
            _from_a_file(ctx, name, value)
            return
        if value == "exec":
            _judge_container(ctx, name, "exec", args[i + 1 :], exec_=True)
            return
        if value in _COMPOSE_VERBS:
            return
        i += 1  # an option's value this table lacks (`--log-level DEBUG up`): the verb follows


def _judge_volume(ctx: Analysis, name: str, args: list[_Word]) -> None:
    """`volume create -o type=none -o o=bind -o device=/home/ana`: a volume that is a folder (or a
    disk) of this computer, which any container given it then changes as root."""
    for k, word in enumerate(args):
        text, known = _text(word)
        if k and args[k - 1].value in ("-d", "--driver", "--label", "--name", "--uid", "--gid"):
            continue  # that option's value
        if not known and not word.source.startswith("-"):
            ctx.add(D, "cannot tell: {name} takes options from {source}", name=f"{name} volume create",
                    source=_snip(word.source))  # fmt: skip
            return
        if text in ("-o", "--opt") or text.startswith(("--opt=", "-o")):
            shown = (
                f"{word.source} {args[k + 1].source if k + 1 < len(args) else ''}"
                if text in ("-o", "--opt")
                else word.source
            )
            ctx.add(D, "{name} volume create {option}: makes a volume of a folder or disk of this computer",
                    VOLUME_WORDS, name=name, option=_snip(shown), danger=Danger.OUTSIDE_WATCH)  # fmt: skip
            return


def _judge_build(ctx: Analysis, name: str, sub: str, args: list[_Word]) -> None:
    """A build's steps run in the daemon's containers: `--network=host` and `--allow
    security.insecure` (privileged steps) give them this computer as `run` does."""
    for k, word in enumerate(args):
        text, known = _text(word)
        option, equals, value = text.partition("=")
        if option not in ("--network", "--net", "--allow"):
            continue
        if not equals and k + 1 < len(args):
            value, known = _text(args[k + 1])
        values = value.lower().split(",")
        if not known or "host" in values or "security.insecure" in values or "network.host" in values:
            shown = word.source if equals else f"{word.source} {args[k + 1].source if k + 1 < len(args) else ''}"
            ctx.add(D, "{name} {sub} {option}: runs a container that can reach your files or your computer, outside "
                    "Cowork Terminal's watch", CONTAINER_WORDS, name=name, sub=sub, option=_snip(shown.strip()),
                    danger=Danger.OUTSIDE_WATCH)  # fmt: skip
            return


def _judge_daemon(ctx: Analysis, name: str, args: list[_Word]) -> None:
    """What docker (podman, docker-compose) asks its daemon to start, where the daemon runs it as
    root outside Cowork Terminal's container. `exec` runs a program in a container that exists: what
    that container was given was judged when it was made (here, or by the person), so only
    `--privileged`, which gives the program every privilege now, is held."""
    if name == "docker-compose":
        _judge_compose(ctx, name, args)
        return
    i = 0
    while i < len(args):  # the subcommand, after the options before it
        word = args[i]
        if not word.source.startswith("-") and expanded(ctx, word, name):  # `--config="$X"` is an option
            return
        value = word.value or word.source
        if value in _SUBCOMMANDS:
            break
        i += 2 if value in _DOCKER_VALUES else 1  # a value of an option this table lacks: the subcommand follows
    else:
        return
    verb, rest = args[i].value or "", args[i + 1 :]
    second = next((k for k, w in enumerate(rest) if not (w.value or "").startswith("-") or w.value is None), None)
    if second is not None and verb in ("container", "pod", "service", "volume", "plugin", "swarm", "stack", "kube",
                                       "play", "image", "builder", "buildx"):  # fmt: skip
        if expanded(ctx, rest[second], f"{name} {verb}"):
            return
        verb, rest = f"{verb} {rest[second].value}", rest[second + 1 :]
    if verb in ("run", "create", "container run", "container create", "pod create", "service create",
                "service update"):  # fmt: skip
        _judge_container(ctx, name, verb, rest)
    elif verb in ("exec", "container exec"):
        _judge_container(ctx, name, verb, rest, exec_=True)
    elif verb == "compose":
        _judge_compose(ctx, f"{name} compose", rest)
    elif verb in ("stack deploy", "stack up", "kube play", "play kube", "runlabel", "container runlabel"):
        _from_a_file(ctx, name, verb)  # podman's runlabel: the image's label names the `podman run` command
    elif verb == "volume create":
        _judge_volume(ctx, name, rest)
    elif verb in ("plugin install", "plugin upgrade", "plugin enable", "swarm join"):
        hands_off(ctx, f"{name} {verb}")  # a plugin may ask every privilege; a swarm's managers start services here
    elif verb in ("build", "image build", "builder build", "buildx build", "buildx b", "buildx bake"):
        _judge_build(ctx, name, verb, rest)


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
