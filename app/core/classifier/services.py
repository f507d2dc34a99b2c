"""Containers, clusters, clouds and databases."""

from __future__ import annotations

import csv
import os
import posixpath
import re
import shlex
from typing import NamedTuple

from app.core.i18n import N_

from .code_options import option_values
from .danger import Danger
from .findings import BULK_COMMAND, LOADS_LIBRARY, D, M, _snip
from .handoff import hands_off
from .hosts import is_this_machine, server_host, url_host
from .options import (
    _operands,
    _short_flags,
    _split_options,
    expanded,
    options_from,
    split_options,
    splits_into_options,
    subcommand,
)
from .rule import Analysis
from .scripts import script_text, settings_text, typed_commands
from .stdin import _Stdin
from .tables import _names
from .words import _Word

# Options before docker's or podman's subcommand that take a value (podman's from `podman --help`).
_DOCKER_VALUES = frozenset({"-H", "--host", "--context", "-c", "--config", "-l", "--log-level", "--tlscacert",
                            "--tlscert", "--tlskey", "--connection", "--url", "--identity", "--root", "--runroot",
                            "--runtime", "--runtime-flag", "--storage-driver", "--storage-opt", "--cgroup-manager",
                            "--conmon", "--events-backend", "--hooks-dir", "--imagestore", "--module",
                            "--network-cmd-path", "--network-config-dir", "--out", "--ssh", "--tmpdir", "--volumepath",
                            "--cdi-spec-dir", "--db-backend", "--registries-conf",
                            # nerdctl's (containerd's docker CLI, the same options after its subcommand)
                            "-n", "--namespace", "-a", "--address", "--snapshotter", "--cni-path",
                            "--cni-netconfpath", "--data-root", "--host-gateway-ip", "--hosts-dir",
                            "--bridge-ip"})  # fmt: skip
_COMPOSE_VALUES = frozenset({"-f", "--file", "-p", "--project-name", "--profile", "--env-file", "--project-directory",
                             "--ansi", "--parallel", "--progress", "--log-level", "-H", "--host", "-c", "--context",
                             "--tlscacert", "--tlscert", "--tlskey",
                             # podman-compose's (the `--podman-*-args` are podman's words for every container)
                             "--podman-path", "--podman-args", "--podman-pull-args", "--podman-push-args",
                             "--podman-build-args", "--podman-inspect-args", "--podman-run-args",
                             "--podman-start-args", "--podman-stop-args", "--podman-rm-args",
                             "--podman-volume-args", "--in-pod", "--pod-args"})  # fmt: skip
_COMPOSE_PROGRAMS = frozenset({"docker-compose", "podman-compose"})  # programs of their own, not `docker compose`


def cmd_docker(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    words = _operands(args, _DOCKER_VALUES)
    ops = [a.value for a in words]
    pair = tuple(ops[:2])
    if pair in (("system", "prune"), ("volume", "rm"), ("volume", "prune"), ("volume", "remove")):
        ctx.add(D, "{name} {value}: deletes data", name=name, value=" ".join(pair), danger=Danger.LOSES_FILES)
    elif _compose_down_volumes(name, args, words):
        said = name if name in _COMPOSE_PROGRAMS else f"{name} compose"
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
            verb = words[1 if ops[0] == "container" else 0]
            ctx.may_run(_container_command(ctx, args[next(k for k, a in enumerate(args) if a is verb) + 1 :]), depth)


def _container_command(ctx: Analysis, rest: list[_Word]) -> list[_Word]:
    """The container's command among the words after `run`: those after the image (`docker run -v
    "$PWD":/app node npm test` runs `npm test`, not `node npm`: a review, 2026-12-05); all of them
    when where the options end cannot be told."""
    scanned = _scan_options(rest, _RUN_FLAGS, _RUN_SHORT_FLAGS)
    if isinstance(scanned, str) or any(_splits(ctx, w) for w in rest[: scanned[1]]):
        return rest
    at = scanned[1]
    if at < len(rest) and rest[at].value == "--":
        at += 1
    return rest[at + 1 :]


def _mounts_a_folder(args: list[_Word]) -> bool:
    values = [a.value or "" for a in args]
    return any(v in ("-v", "--volume", "--mount") or v.startswith(("-v", "--volume=", "--mount=")) for v in values)


def _compose_down_volumes(name: str, args: list[_Word], operands: list[_Word]) -> bool:
    """`docker compose [-f FILE] down -v` (or `docker-compose ...`): the project's volumes go too."""
    if name in _COMPOSE_PROGRAMS:
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
# podman-compose's `systemd -a register` has systemd start the project at each login
_COMPOSE_STARTS = frozenset({"up", "run", "create", "start", "restart", "watch", "scale", "systemd"})
# Options of run, create, service create and pod create (docker's and podman's) that take no value;
# any other takes one, so that an option this table lacks never hides the words after it.
_RUN_FLAGS = frozenset({"--detach", "--disable-content-trust", "--help", "--init", "--interactive", "--no-healthcheck",
                        "--oom-kill-disable", "--privileged", "--publish-all", "--quiet", "--read-only", "--rm",
                        "--sig-proxy", "--tty", "--use-api-socket", "--env-host", "--http-proxy", "--no-hosts",
                        "--read-only-tmpfs", "--replace", "--rmi", "--rootfs", "--passwd", "--tls-verify",
                        "--no-resolve-image", "--with-registry-auth", "--force", "--rollback", "--infra",
                        "--insecure-registry", "--unsetenv-all", "--share-parent"})  # fmt: skip
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
_NUMBER = re.compile(r"-\d[\d.]*[A-Za-z]*")  # `--memory-swap -1`, `--cpu-shares -2`: a value, not an option
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
    scanned = _scan_options(args, flags, short_flags)
    if isinstance(scanned, str):
        options_from(ctx, what, scanned)
        return None
    split = next((w for w in args[: scanned[1]] if _splits(ctx, w)), None)
    if split is not None:  # read as written too: `-v $X:/h` is judged as a volume as well
        split_options(ctx, what, split.source)
    return scanned[0]


def _scan_options(
    args: list[_Word], flags: frozenset[str], short_flags: frozenset[str]
) -> tuple[list[_Given], int] | str:
    """`_options`' reading: the options and where they end (the image, or `--`); or the word, as
    written, an expansion decides where an option may be. A word that starts with `-` after a long
    option not in `flags` is an option of its own, not its value (`podman run --unsetenv-all -v
    /:/h alpine`: a review, 2026-12-05), unless it is a number (`--memory-swap -1`)."""
    given: list[_Given] = []
    i = 0
    while i < len(args):
        word = args[i]
        text, known = _text(word)
        if not text.startswith("-") or text == "-":
            if not known and not word.source.startswith("-"):
                return word.source
            break  # the image: what follows is the container's command
        if text == "--":
            break
        nxt = args[i + 1] if i + 1 < len(args) else None
        if text.startswith("--"):
            name, equals, value = text.partition("=")
            if _UNKNOWN.search(name):
                return word.source
            after = "" if nxt is None else _text(nxt)[0]
            if equals or name in flags or (after.startswith("-") and not _NUMBER.fullmatch(after)):
                given.append(_Given(name, value if equals else None, known, word.source))
            elif nxt is not None:
                given.append(_Given(name, *_text(nxt), f"{word.source} {nxt.source}"))
                i += 1
            i += 1
            continue
        for k, letter in enumerate(text[1:], 1):
            if not letter.isalnum():
                return word.source
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
    return given, i


def _splits(ctx: Analysis, value: _Word) -> bool:
    """An option's value bash may split into words, options among them (`--name x${IFS}--privileged`:
    a red team, 2026-12-05, found find's value read as one word; docker's was the same); not one of
    values known to hold no blank (`-v $PWD:/app`, `-e HOME=$HOME`: options.splits_into_options)."""
    return splits_into_options(ctx, value)


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
    """The absolute folder a bind's `source` names when it is the project's own (`.`, `./src`,
    `$PWD`: `Analysis.in_project`): the command can change those files anyway, so such a bind is
    not held. None for anything else, a socket (`./docker.sock`) too."""
    path = ctx.in_project(source)
    return None if path is None or _SOCKETS.search(path) else path


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
        _gives_reach(ctx, name, sub, reach.shown)


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
        if (
            k
            and args[k - 1].value in ("-d", "--driver", "--label", "--name", "--uid", "--gid")
            and not _splits(ctx, word)
        ):
            continue  # that option's value
        if not known and not word.source.startswith("-"):
            options_from(ctx, f"{name} volume create", word.source)
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
            _gives_reach(ctx, name, sub, shown.strip())
            return


def _judge_daemon(ctx: Analysis, name: str, args: list[_Word]) -> None:
    """What docker (podman, docker-compose) asks its daemon to start, where the daemon runs it as
    root outside Cowork Terminal's container. `exec` runs a program in a container that exists: what
    that container was given was judged when it was made (here, or by the person), so only
    `--privileged`, which gives the program every privilege now, is held."""
    if name in _COMPOSE_PROGRAMS:
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
                                       "play", "image", "builder", "buildx", "machine"):  # fmt: skip
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
    elif verb in ("machine ssh", "machine start") or (verb == "machine init" and any(w.value == "--now" for w in rest)):
        hands_off(ctx, f"{name} {verb}")  # podman's machine: a VM with the home folder, its programs outside our watch
    elif verb in ("plugin install", "plugin upgrade", "plugin enable", "swarm join"):
        hands_off(ctx, f"{name} {verb}")  # a plugin may ask every privilege; a swarm's managers start services here
    elif verb in ("build", "image build", "builder build", "buildx build", "buildx b", "buildx bake"):
        _judge_build(ctx, name, verb, rest)


# ---- Virtual machines, system containers and the other container tools (issue 21)
#
# Each asks a daemon (LXD's or incus's, libvirt's, multipassd, containerd, machined, the Docker
# daemon that kind, k3d and minikube drive) or a virtual machine of its own (lima, colima, vagrant)
# to run programs outside Cowork Terminal's container, where it can neither see, pause nor stop
# them: often as root, often with this computer's folders (lima's and colima's machines have the
# home folder; distrobox's and toolbox's containers the home folder and every privilege). Held as a
# hand-off, in words already translated: what gives one of them a part of this computer (a
# privileged setting, a folder, a device, a file Cowork Terminal does not read), and what starts or
# enters a machine whose folders and privileges its own settings decide. Everything else (list,
# info, stop...) gets what a program no rule knows gets, and what each is given to run is judged as
# before. Not held: systemd-nspawn and virt-customize, which run as the command's own children,
# inside its container (nspawn needs root, which "no new privileges" keeps out).


def _gives_reach(ctx: Analysis, name: str, sub: str, shown: str) -> None:
    ctx.add(D, "{name} {sub} {option}: runs a container that can reach your files or your computer, outside "
            "Cowork Terminal's watch", CONTAINER_WORDS, name=name, sub=sub, option=_snip(shown),
            danger=Danger.OUTSIDE_WATCH)  # fmt: skip


class _Tool(NamedTuple):
    """A tool whose subcommands start or enter a machine (`_TOOLS`)."""

    values: frozenset[str]  # options before the subcommand that take a value
    held: frozenset[str]  # its subcommands held as a hand-off; "create cluster": a group's word, then its own
    options: frozenset[str] = frozenset()  # options that hold the subcommand they are given to


_TOOLS = {
    # A VirtualBox, libvirt or Docker machine with whatever folders its Vagrantfile shares.
    "vagrant": _Tool(frozenset(), _names("up reload resume ssh")),
    # multipassd (root); its primary machine has the home folder; `mount` and `launch --mount` add one.
    "multipass": _Tool(frozenset(), _names("exec shell mount"), frozenset({"--mount"})),
    # lima's machine has the home folder by default; its settings (a file) decide which and how.
    "limactl": _Tool(_names("--log-level --log-format"), _names("start create edit shell start-at-login")),
    "colima": _Tool(_names("-p --profile"), _names("start restart ssh nerdctl")),  # the home folder, writable
    # podman or docker containers with the home folder, the host's / at /run/host and every privilege
    "distrobox": _Tool(frozenset(), _names("create enter ephemeral assemble upgrade")),
    "toolbox": _Tool(_names("--log-level"), _names("create enter run")),
    # machined (root): `shell` and `login` without a machine open one on this computer itself
    "machinectl": _Tool(
        _names(
            "-M --machine -H --host -p --property -o --output -n --lines --uid -E --setenv -s --signal "
            "--kill-whom --max-addresses --format --verify"
        ),
        _names("shell login start enable bind copy-to copy-from"),
    ),
    # Kubernetes nodes that are privileged containers of the Docker daemon (or minikube's machine);
    # `kind create cluster --config` may give them any folder (extraMounts), `minikube mount` gives one.
    "kind": _Tool(_names("-v --verbosity"), frozenset({"create cluster"})),
    "k3d": _Tool(frozenset(), frozenset({"cluster create", "node create"})),
    "minikube": _Tool(_names("-p --profile -v --log_dir --user"), frozenset({"start", "mount", "ssh", "node add"})),
    # Rancher Desktop's VM and docker-machine's machines (the home folder shared, by default, on a Mac)
    "rdctl": _Tool(_names("--config-path --host --password --port --user"), _names("shell start set api")),
    "docker-machine": _Tool(_names("-s --storage-path"), _names("ssh create start restart provision scp mount")),
}
VM_TOOLS = tuple(_TOOLS)
# What runs a command in such a machine whatever its words: lima (`limactl shell default`) and the
# wrappers lima installs, distrobox's own commands.
VM_SHELLS = ("lima", "nerdctl.lima", "docker.lima", "podman.lima", "kubectl.lima", "apptainer.lima",
             "distrobox-create", "distrobox-enter", "distrobox-ephemeral", "distrobox-assemble",
             "distrobox-upgrade")  # fmt: skip


def cmd_vm_tool(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    ctx.as_unknown_program(name, args, depth)  # as before these tools had a rule
    tool = _TOOLS[name]
    verb, rest = subcommand(ctx, name, args, tool.values)
    if verb is None:
        return
    if any(held.startswith(f"{verb} ") for held in tool.held):  # `kind create cluster`
        second, _ = subcommand(ctx, f"{name} {verb}", rest, tool.values)
        if second is None:
            return
        verb = f"{verb} {second}"
    given = next((v for a in rest if (v := (a.value or "").partition("=")[0]) in tool.options), "")
    if verb in tool.held or given:
        hands_off(ctx, f"{name} {verb} {given}".strip())
    elif name == "minikube" and verb == "kubectl":  # `minikube kubectl -- apply -f pod.yaml`: its own cluster
        _judge_kubectl(ctx, rest[1:] if rest[:1] and rest[0].value == "--" else rest, depth, local=True)


def cmd_vm_shell(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    ctx.as_unknown_program(name, args, depth)  # as before these tools had a rule
    if [a.value for a in args] not in (["--help"], ["-h"], ["--version"], ["-V"]):
        hands_off(ctx, name)


# LXD's and incus's client: the daemon (root) runs whole systems and virtual machines.
_LXC_VALUES = _names("--project --target --columns -c --config -p --profile -d --device -n --network -s --storage "
                     "-t --type --format -X --request --data --mode --uid --gid --env --cwd --user --group "
                     "--description --alias --expires")  # fmt: skip
_LXC_LONG = {"c": "--config", "p": "--profile", "d": "--device"}
_LXC_DEVICES = _names("unix-char unix-block unix-hotplug usb gpu pci")  # a device of this computer
# `security.privileged`: the container's root is this computer's; `raw.lxc`, `raw.idmap`, `raw.apparmor`,
# `raw.seccomp`, `raw.qemu`: anything the runtime takes (a bind of `/`, root's id mapped in);
# `linux.kernel_modules`: loaded into this computer's kernel.
_LXC_KEY = re.compile(r"raw\..+|security\.privileged|linux\.kernel_modules")
_FALSE = frozenset({"false", "0", "no", "off", "f"})
# `KEY=VALUE`: its key ("" when an expansion decides it), its value (None: not known), known, as written
_Pair = tuple[str, str | None, bool, str]


def cmd_lxc(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    _judge_lxc(ctx, name, args, stdin, aliases=True)
    # as before these tools had a rule; after: its words count as written once its folders are judged
    ctx.as_unknown_program(name, args, depth)


def _judge_lxc(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, aliases: bool) -> None:
    """`exec`, `shell`, `console`: a program in an instance whose privileges and folders its settings
    decide. What gives one this computer: `launch -c security.privileged=true` (`-p` a profile but
    `default`, `-d` a device given a folder), `config set` of such a key, `config device add` of a
    folder or device, `config edit` (settings from a file), `query -X PUT` (the daemon's API)."""
    verb, rest = subcommand(ctx, name, args, _LXC_VALUES)
    if verb is None:
        return
    ops = _operands(rest, _LXC_VALUES)
    group = verb in ("config", "profile", "storage", "alias") and bool(ops)
    if group and expanded(ctx, ops[0], f"{name} {verb}"):
        return
    sub = f"{verb} {ops[0].value}" if group else verb
    if verb in ("exec", "shell", "console", "start", "restart"):  # start: as its settings decide, as `virsh start`
        hands_off(ctx, f"{name} {verb}")
    elif verb in ("launch", "init", "create") and stdin is not None:
        _from_a_file(ctx, name, verb)  # `lxc launch IMAGE c < settings.yaml`: settings not read here
    elif verb in ("launch", "init", "create", "copy", "cp", "move", "mv"):
        _lxc_options(ctx, name, verb, rest)
    elif sub in ("config set", "profile set"):
        _lxc_settings(ctx, name, sub, ops[1:])
    elif sub in ("config edit", "profile edit") or (sub == "profile create" and stdin is not None):
        _from_a_file(ctx, name, sub)
    elif sub in ("config device", "profile device") and len(ops) > 1:
        if expanded(ctx, ops[1], f"{name} {sub}"):
            return
        if ops[1].value == "add":  # c NAME TYPE KEY=VALUE...
            _lxc_device(ctx, name, f"{sub} add", ops[4] if len(ops) > 4 else None, ops[5:])
        elif ops[1].value in ("set", "override"):  # c NAME KEY=VALUE... or c NAME KEY VALUE
            _lxc_device(ctx, name, f"{sub} {ops[1].value}", None, ops[4:])
    elif sub in ("profile add", "profile assign") and len(ops) > 2:  # c PROFILE[,PROFILE]
        profiles, known = _text(ops[2])
        if not known or any(p not in ("default", "") for p in profiles.split(",")):
            _gives_reach(ctx, name, sub, f"{ops[1].source} {ops[2].source}")
    elif sub == "storage create":  # POOL DRIVER source=/home/ana
        source = next((p for p in map(_pair, ops[3:]) if p[0] in ("source", "")), None)
        if source is not None and _host_path(ctx, source[1], source[2]):
            ctx.add(D, "{name} storage create {option}: makes a storage pool of a folder or disk of this computer",
                    VOLUME_WORDS, name=name, option=_snip(source[3]), danger=Danger.OUTSIDE_WATCH)  # fmt: skip
    elif verb == "query":  # `-X PUT /1.0/instances/c --data '{"config": ...}'`
        methods = [g.value if g.known and g.option == "--request" else None for g in _pflags(rest, {"X": "--request"})]
        if any(method is None or method.upper() != "GET" for method in methods):
            hands_off(ctx, f"{name} query")
    elif sub == "alias add" and len(ops) > 2 and aliases and not expanded(ctx, ops[2], f"{name} alias add"):
        try:  # `lxc alias add l "launch @ARGS@ -c security.privileged=true"`: what `lxc l` will do
            words = [w for w in shlex.split(ops[2].value or "") if "@ARG" not in w]
        except ValueError:
            words = ["exec"]  # not read as lxc would read it: held as what it may be
        _judge_lxc(ctx, name, [_Word(w, w, w) for w in words], None, aliases=False)


def _pflags(args: list[_Word], letters: dict[str, str]) -> list[_Given]:
    """The options in `letters` (short -> long) as Go's pflag reads them, anywhere before `--`:
    `--config X`, `--config=X`, `-c X`, `-cX`, `-c=X`, `-ec X`. A word an expansion decides, where
    an option may be, is given as `-` (the caller holds it: "cannot tell")."""
    given: list[_Given] = []
    longs = set(letters.values())
    i = 0
    while i < len(args):
        text, known = _text(args[i])
        nxt = args[i + 1] if i + 1 < len(args) else None
        if text == "--":
            break
        if not known and not args[i].source.startswith("-"):
            given.append(_Given("-", None, False, args[i].source))
        elif text.startswith("--"):
            option, equals, value = text.partition("=")
            if option in longs and equals:
                given.append(_Given(option, value, known, args[i].source))
            elif option in longs and nxt is not None:
                given.append(_Given(option, *_text(nxt), f"{args[i].source} {nxt.source}"))
                i += 1
        elif text.startswith("-"):
            for k, letter in enumerate(text[1:], 1):
                if letter not in letters:
                    continue
                attached = text[k + 1 :].removeprefix("=")
                if attached or nxt is None:
                    given.append(_Given(letters[letter], attached, known, args[i].source))
                else:
                    given.append(_Given(letters[letter], *_text(nxt), f"{args[i].source} {nxt.source}"))
                    i += 1
                break
        i += 1
    return given


def _lxc_options(ctx: Analysis, name: str, verb: str, args: list[_Word]) -> None:
    """`launch`, `init`, `copy`, `move`: the settings, profiles and devices given to the instance."""
    for given in _pflags(args, _LXC_LONG):
        if given.option == "-":
            options_from(ctx, f"{name} {verb}", given.shown)
            return
        value = given.value or ""
        if given.option == "--config":
            key, _equals, setting = value.partition("=")
            reaches = not given.known or _lxc_key_reaches(key, setting)
        elif given.option == "--profile":
            reaches = not given.known or value != "default"
        else:  # `-d root,size=20GiB`: keys for a device the profile gives; `-d data,source=/home/ana`
            pairs = [_pair(_Word(text, text, text)) for text in value.split(",")[1:]]
            reaches = not given.known or _lxc_device_reaches(ctx, "", pairs)
        if reaches:
            _gives_reach(ctx, name, verb, given.shown)
            return


def _lxc_key_reaches(key: str, value: str | None) -> bool:
    """`security.privileged` but false, any `raw.*`, `linux.kernel_modules`; value None: not known."""
    key = key.strip().lower()
    if not _LXC_KEY.fullmatch(key):
        return False
    if value is None:
        return True
    return value.strip().lower() not in _FALSE if key == "security.privileged" else bool(value.strip())


def _lxc_settings(ctx: Analysis, name: str, sub: str, ops: list[_Word]) -> None:
    """`config set [c] KEY=VALUE...`, `config set [c] KEY VALUE`, `profile set p ...`, as LXD reads
    them: the first word is the instance (or profile) unless every word has `=`, it has a `.` (a key)
    or two words have none (the server's); after it, two words the first without `=` are `KEY
    VALUE` (`VALUE` may be `-`: its input), else each is `KEY=VALUE`. An expansion may be any key."""
    words = [(word, *_text(word)) for word in ops]
    first = words[0][1] if words else ""
    server = sub == "config set" and (
        all("=" in text for _w, text, _k in words)
        or "." in first.rpartition(":")[2]
        or (len(words) == 2 and not any("=" in text for _w, text, _k in words))
    )
    rest = words if server else words[1:]
    if len(rest) == 2 and "=" not in rest[0][1]:
        (key_word, key_text, key_known), (value_word, value_text, sure) = rest
        settings = [(f"{key_word.source} {value_word.source}", key_text, key_known, value_text if sure else None)]
    else:
        settings = [(w.source, text.partition("=")[0], known, text.partition("=")[2] if known else None)
                    for w, text, known in rest]  # fmt: skip
    for shown, key, known, value in settings:
        if (not known and "=" not in shown) or _UNKNOWN.search(key) or _lxc_key_reaches(key, value):
            _gives_reach(ctx, name, sub, shown)
            return


def _pair(word: _Word) -> _Pair:
    text, known = _text(word)
    key, _equals, value = text.partition("=")
    key = key.strip().lower()
    return ("" if _UNKNOWN.search(key) else key), (value if known else None), known, word.source


def _host_path(ctx: Analysis, text: str | None, known: bool) -> bool:
    """A `source=` that is a folder or device of this computer outside the project (an expansion may
    be one): a path, absolute or from the current folder (`source=.` after `cd /etc`); not a name
    (a ZFS dataset's, `tank/lxd`)."""
    path = None if text is None else _filled(ctx, text, known)
    if path is None:
        return True
    relative = path in (".", "..") or path.startswith(("./", "../"))
    return (path.startswith("/") or relative or _DRIVE.match(path) is not None) and not _in_project(ctx, path)


def _lxc_device_reaches(ctx: Analysis, kind: str | None, pairs: list[_Pair]) -> bool:
    """A device of this computer, a `disk` whose source is a folder or disk of it (not a storage
    volume: `pool=`), a `proxy` that opens this computer's sockets to the container (`bind=container`).
    `kind` "": a device that exists, given other keys (`device set`); None: not known."""
    if kind is None or kind in _LXC_DEVICES or any(not key for key, *_rest in pairs):
        return True
    keys = {key: (value, known) for key, value, known, _shown in pairs}
    if kind in ("proxy", "") and "bind" in keys and (keys["bind"][0] or "").lower() != "host":
        return True  # the container reaches what `connect` names on this computer
    if kind == "" and "connect" in keys:
        return True
    source = keys.get("source")
    return kind in ("disk", "") and source is not None and "pool" not in keys and _host_path(ctx, *source)


def _lxc_device(ctx: Analysis, name: str, sub: str, kind: _Word | None, words: list[_Word]) -> None:
    """`config device add c NAME TYPE KEY=VALUE...` (`kind`: its TYPE), `config device set c NAME
    KEY=VALUE...` or `KEY VALUE` (`kind` None: a device that exists)."""
    if kind is None and len(words) == 2 and "=" not in (words[0].value or "="):
        key, value = (words[0].value or "").strip().lower(), words[1].value
        pairs: list[_Pair] = [(key, value, value is not None, f"{words[0].source} {words[1].source}")]
    else:
        pairs = [_pair(word) for word in words]
    what: str | None = ""
    if kind is not None:
        text, known = _text(kind)
        what = text if known else None
    if _lxc_device_reaches(ctx, what, pairs):
        _gives_reach(ctx, name, sub, " ".join([*([kind.source] if kind else []), *(p[3] for p in pairs)]))


# libvirt: its daemon (root for qemu:///system) runs the machine with any disk of this computer its
# definition names, and writes what `save`, `dump` and `blockcopy` are told to.
_VIRSH_VALUES = _names("-c --connect -d --debug -e --escape -k --keepalive-interval -K --keepalive-count -l --log")
_VIRSH_HELD = _names(
    "start create define edit restore console attach-disk attach-device update-device blockcopy save dump "
    "snapshot-create snapshot-revert save-image-define save-image-edit managedsave-define managedsave-edit "
    "qemu-agent-command qemu-monitor-command qemu-attach lxc-enter-namespace pool-define pool-define-as "
    "pool-create pool-create-as nodedev-detach"
)
_VIRT_PRINTS = frozenset({"--print-xml", "--print-step", "--print-diff", "--build-xml", "--dry-run", "--help", "-h",
                          "--version"})  # fmt: skip


def _remote(uri: str | None) -> bool:
    """A libvirt connection to another computer (`qemu+ssh://host/system`); `qemu:///system` is this one."""
    host = url_host(uri or "")
    return host is not None and host != "" and not is_this_machine(host)


def _connection(args: list[_Word]) -> str | None:
    """The `-c`/`--connect` URI among `args` (None: the default, this computer's)."""
    for k, word in enumerate(args):
        value = word.value or ""
        if value in ("-c", "--connect") and k + 1 < len(args):
            return args[k + 1].value
        if value.startswith("--connect="):
            return value.partition("=")[2]
        if value.startswith("-c") and not value.startswith("--") and len(value) > 2:
            return value[2:]
    return None


def cmd_virsh(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`virsh [OPTIONS] COMMAND ...`, `virsh 'start vm; console vm'` (one word: a line of commands),
    or commands read from its input."""
    ctx.as_unknown_program(name, args, depth)  # as before these tools had a rule
    options, i = _split_options(args, _VIRSH_VALUES)
    if any(w.value in ("-r", "--readonly") for w in options) or _remote(_connection(options)):
        return  # a read-only connection, or another computer's daemon
    if i >= len(args) and stdin is not None and stdin.kind != "text":
        hands_off(ctx, f"{name} (commands from its input)")  # what it reads is not known here
        return
    if i < len(args) and expanded(ctx, args[i], name):
        return
    text = (args[i].value or "") if i < len(args) else (stdin.text if stdin is not None else "")
    if i >= len(args) - 1:  # one word (or its input): virsh reads it as lines of commands
        verbs = [part.split()[0] for part in re.split(r"[;\n]", text) if part.split()]
    else:
        verbs = [text, *(w.value or "" for k, w in enumerate(args[i + 1 :], i + 1) if args[k - 1].value == ";")]
    values = [w.value or "" for w in args[i:]]
    for verb in verbs:
        spec = verb == "snapshot-create-as" and any(v.startswith(("--diskspec", "--memspec")) for v in values)
        if verb in _VIRSH_HELD or spec:
            hands_off(ctx, f"{name} {verb}")
            return


def cmd_virt_install(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """virt-install, virt-clone, virt-xml: a machine libvirt defines (and virt-install starts), its disks
    any of this computer's; not what only prints the definition."""
    ctx.as_unknown_program(name, args, depth)  # as before these tools had a rule
    if not any((w.value or "").partition("=")[0] in _VIRT_PRINTS for w in args) and not _remote(_connection(args)):
        hands_off(ctx, name)


# containerd's own client: `run` and `container create` as docker's, in its options' words.
_CTR_VALUES = _names("-a --address -n --namespace --timeout --connect-timeout")
_CTR_FLAGS = frozenset({"--rm", "--cni", "--net-host", "--privileged", "--read-only", "--tty", "--allow-new-privs",
                        "--seccomp", "--null-io", "--detach", "--rootfs", "--no-pivot", "--remap-labels",
                        "--privileged-without-host-devices", "--help", "--sync-fs"})  # fmt: skip
_CTR_REACH = frozenset({"--privileged", "--net-host", "--rootfs", "--privileged-without-host-devices"})
# --config/-c: an OCI spec file, not read here; --with-ns pid:/proc/1/ns/pid: this computer's namespaces
_CTR_ALWAYS = frozenset({"--with-ns", "--cap-add", "--device", "--config", "-c"})


def _ctr_reaches(ctx: Analysis, given: _Given) -> bool:
    if given.option in _CTR_REACH:
        return given.value is None or not given.known or given.value.lower() not in _FALSE
    if given.option == "--mount":  # type=bind,src=/,dst=/host,options=rbind:rw
        return given.value is None or _mount_reaches(ctx, given.value, given.known)
    if given.option == "--runtime":  # a path: a program containerd (root) runs as the container's runtime
        return not given.known or "/" in (given.value or "")
    return given.option in _CTR_ALWAYS


def cmd_ctr(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    _judge_ctr(ctx, name, args)
    # as before these tools had a rule; after: its words count as written once its folders are judged
    ctx.as_unknown_program(name, args, depth)


def _judge_ctr(ctx: Analysis, name: str, args: list[_Word]) -> None:
    verb, rest = subcommand(ctx, name, args, _CTR_VALUES)
    if verb is None:
        return
    if verb in ("c", "container", "containers"):
        second, after = subcommand(ctx, f"{name} {verb}", rest, frozenset())
        if second != "create":
            return
        verb, rest = f"{verb} create", after
    elif verb != "run":
        return  # `task exec` runs a program in a container that exists: judged when it was made, as docker's
    given = _options(ctx, f"{name} {verb}", rest, _CTR_FLAGS, frozenset("tdh"))
    reach = next((g for g in given or () if _ctr_reaches(ctx, g)), None)
    if reach is not None:
        _gives_reach(ctx, name, verb, reach.shown)


def cmd_crictl(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """The Kubernetes runtime's client: `run`, `runp` and `create` start what their files describe
    (any folder, every privilege); `exec` runs a program in a container that exists, as docker's."""
    ctx.as_unknown_program(name, args, depth)  # as before these tools had a rule
    sub, _ = subcommand(ctx, name, args, _names("-r --runtime-endpoint -i --image-endpoint -t --timeout -c --config"))
    if sub in ("run", "runp", "create"):
        _from_a_file(ctx, name, sub)


# kubectl: a cluster that kind, k3d, minikube, Docker Desktop, Rancher Desktop, OrbStack, colima or
# microk8s runs on this computer starts its pods with whatever of this computer they ask (hostPath
# `/`, privileged): there, what makes or enters a pod is held; a cluster elsewhere is not this computer.
_KUBECTL_VALUES = _names(
    "-n --namespace --context --kubeconfig --cluster --user -s --server --token --as --as-group --as-uid "
    "--certificate-authority --client-certificate --client-key --request-timeout --tls-server-name --cache-dir "
    "-v --v --vmodule --log-file --profile --profile-output --password --username"
)
_LOCAL_CONTEXT = re.compile(
    r"kind-.+|k3d-.+|minikube|docker-desktop|docker-for-desktop|rancher-desktop|orbstack|colima|microk8s"
)
_KUBECTL_HANDS_OFF = _names("apply create replace patch edit set run exec attach debug")
_CURRENT_CONTEXT = re.compile(r"^current-context:[ \t]*[\"']?([^\"'\s#]+)", re.M)


def _kubectl_option(args: list[_Word], names: tuple[str, ...]) -> _Word | None:
    """The value of the last of `names` given (`--context X`, `--context=X`), as a word."""
    found = None
    for k, word in enumerate(args):
        value = word.value or ""
        if value == "--":
            break
        option, equals, given = value.partition("=")
        if option in names and equals:
            found = _Word(given, given, given) if word.value is not None else word
        elif value in names and k + 1 < len(args):
            found = args[k + 1]
    return found


def _current_context(ctx: Analysis, kubeconfig: str | None) -> str | None:
    """The `current-context` of the kubeconfig kubectl reads: `--kubeconfig`, else the first file of
    $KUBECONFIG that names one, else ~/.kube/config."""
    files = [kubeconfig] if kubeconfig else [f for f in os.environ.get("KUBECONFIG", "").split(os.pathsep) if f]
    for file in files or [posixpath.join(ctx.home, ".kube", "config")]:
        path = os.path.expanduser(file)
        if not os.path.isabs(path) and ctx.cwd is None:
            continue  # relative to a folder not known here
        text = settings_text(ctx, os.path.join(ctx.cwd or "", path), 1 << 20, whole=False)
        match = None if text is None else _CURRENT_CONTEXT.search(text)
        if match is not None:
            return match[1]
    return None


def _kubectl_local(ctx: Analysis, args: list[_Word]) -> bool:
    """Whether kubectl talks to a cluster on this computer: `--server` names this computer, or the
    context (`--context`, else the kubeconfig's current one) is one of `_LOCAL_CONTEXT`. A value an
    expansion decides: not known to be local, as before."""
    server = _kubectl_option(args, ("--server", "-s"))
    if server is not None:
        if server.value is None:
            return False
        host = server_host(server.value)  # `[` not closed: no host (urlsplit raised on it)
        return host is not None and is_this_machine(host)
    context = _kubectl_option(args, ("--context",))
    if context is None:
        kubeconfig = _kubectl_option(args, ("--kubeconfig",))
        if kubeconfig is not None and kubeconfig.value is None:
            return False
        name = _current_context(ctx, kubeconfig.value if kubeconfig else None)
    else:
        name = context.value
    return name is not None and _LOCAL_CONTEXT.fullmatch(name) is not None


def cmd_local_cluster(
    ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int
) -> None:
    """microk8s and k3s: a cluster on this computer; their `kubectl` is judged as kubectl on a local one."""
    if name in ("microk8s.kubectl", "k3s-kubectl"):
        _judge_kubectl(ctx, args, depth, local=True)
        return
    sub, rest = subcommand(ctx, name, args, frozenset())
    if sub == "kubectl":
        _judge_kubectl(ctx, rest, depth, local=True)
    elif sub is not None:
        ctx.as_unknown_program(name, args, depth)


_HELM_VALUES = _names(
    "--kube-context --kubeconfig --kube-apiserver -n --namespace --kube-token --kube-as-user --kube-as-group "
    "--kube-ca-file --kube-tls-server-name --registry-config --repository-cache --repository-config --burst-limit "
    "--qps"
)
_HELM_AS_KUBECTL = {"--kube-context": "--context", "--kube-apiserver": "--server"}


def cmd_helm(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`helm install|upgrade|rollback` on a cluster of this computer (as kubectl's is told): its chart,
    files not read here, decides what the pods are given."""
    ctx.as_unknown_program(name, args, depth)
    sub, _ = subcommand(ctx, name, args, _HELM_VALUES)
    if sub not in ("install", "upgrade", "rollback"):
        return
    words = []
    for word in args:  # helm's names for kubectl's --context and --server
        option, equals, value = (word.value or "").partition("=")
        if option in _HELM_AS_KUBECTL:
            spelled = _HELM_AS_KUBECTL[option] + equals + value
            word = _Word(spelled, spelled, spelled)
        words.append(word)
    if _kubectl_local(ctx, words):
        _from_a_file(ctx, name, sub)


_ORB_QUIET = _names("list ls info status stop delete rm logs version help completion default")


def cmd_orb(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """OrbStack's `orb` and `orbctl`: `orb CMD` (`orb sudo ...`), `orb` alone, `run`, `shell`, `ssh`,
    `start`, `create`, `push`/`pull`: in its Linux machines, which have the Mac's home folder."""
    ctx.as_unknown_program(name, args, depth)
    sub, _ = subcommand(ctx, name, args, _names("-m --machine -u --user -w --workdir"))
    shows = [a.value for a in args] in (["--help"], ["-h"], ["--version"])
    if sub is not None and sub not in _ORB_QUIET and not shows:
        hands_off(ctx, f"{name} {_snip(sub)}".strip())


def cmd_kubectl(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    _judge_kubectl(ctx, args, depth)


def _judge_kubectl(ctx: Analysis, args: list[_Word], depth: int, local: bool | None = None) -> None:
    """`local`: the cluster is on this computer (`minikube kubectl`); None: as its options and kubeconfig say."""
    ops = _operands(args, _KUBECTL_VALUES)
    if expanded(ctx, next(iter(ops), None), "kubectl"):
        return
    sub = next((a.value for a in ops), "") or ""
    if sub == "delete":
        ctx.add(D, "kubectl delete: deletes cluster resources", danger=Danger.LOSES_FILES)
    elif sub not in ("get", "describe", "logs", "version", "explain", "top", "api-resources", "config"):
        ctx.add(M, "kubectl {sub}: changes the cluster", sub=sub)
    if sub not in _KUBECTL_HANDS_OFF or not (_kubectl_local(ctx, args) if local is None else local):
        return
    files = any(v in ("-f", "-k") or v.startswith(("-f", "-k", "--filename", "--kustomize")) for a in args
                if (v := a.value or ""))  # fmt: skip
    if sub in ("apply", "create", "replace") and files:
        _from_a_file(ctx, "kubectl", sub)
    else:
        hands_off(ctx, f"kubectl {sub}")
    if sub in ("exec", "run", "debug", "attach"):
        ctx.may_run(args, depth)  # the pod's command: `kubectl exec web -- rm -rf /data` deletes a folder of the node


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
_DOT_WIPES = re.compile(r"^[^\S\n]*\.(?:op(?:en?)?\s+.*-{1,2}new|rest(?:o(?:re?)?)?)\b", re.M)  # linear on blanks
# Strings and comments, read in one pass from the left (`SELECT '--'; DROP TABLE t` drops): a string
# becomes '' (`like '%drop table%'` is text), a comment a space (`DROP/**/TABLE` drops).
_SQL_TEXT = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|/\*.*?\*/", re.S)
# ... and as PostgreSQL's E'...' and MySQL read strings, with backslash escapes: either reading counts.
_SQL_TEXT_ESCAPED = re.compile(r"'(?:[^'\\]|\\.|'')*'|\"(?:[^\"\\]|\\.|\"\")*\"|--[^\n]*|/\*.*?\*/", re.S)
# A client's way to run a shell command: sqlite3's `.shell`/`.system` (by any prefix: `.sy`), psql's
# `\!`, mysql's `system`; and output or input through one: sqlite3's `.output '|CMD'` (`.once`,
# `.import`, `.read`), psql's `\o |CMD` and `\copy ... to program 'CMD'` (third red team).
_SHELL_ESCAPE = re.compile(
    r"(?:^|[;\n])[^\S\n]*(?:\.sh(?:e(?:ll?)?)?|\.sy(?:s(?:t(?:em?)?)?)?|\\!|system)\s+(.*)|"
    r"(?:^|[;\n])[^\S\n]*(?:\.(?:output|once|import|read|o)|\\o|\\g)\s*['\"]?\|\s*([^'\"\n]*)|"
    r"\bprogram\s+'([^']*)'|"
    r"\bedit\s*\((?:[^,()']|'[^']*')*,\s*'(?P<editor>(?:[^']|'')*)'",  # sqlite3's edit(TEXT, 'EDITOR') runs it
    re.I,
)
# sqlite3's `.load LIB` (by any prefix: `.l`, `.lo`; `.li` is `.limit`'s) and SQL's load_extension(LIB),
# which its shell allows: a compiled library's code runs (a red team, 2026-12-05)
_LOADS = re.compile(
    r"(?:^|[;\n])[^\S\n]*\.l(?:o(?:ad?)?)?[^\S\n]+['\"]?([^'\"\s;]*)|\bload_extension\s*\(\s*'?([^',)\s]*)", re.I
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
    typed = typed_commands(ctx, name, stdin)  # `printf 'DROP TABLE %s' t |`, `< drop.sql`: its words
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
        for loaded in _LOADS.finditer(text) if name in ("sqlite3", "duckdb") else ():
            ctx.add(D, LOADS_LIBRARY, name=name,
                    value=_snip(loaded[1] or loaded[2] or loaded[0]))  # fmt: skip
    statements = [pattern.sub(_sql_blank, text) for text in texts for pattern in (_SQL_TEXT, _SQL_TEXT_ESCAPED)]
    # a statement in a string that is run: PostgreSQL's `EXECUTE 'DROP TABLE t'` in a DO block
    statements += [inner for text in texts for inner in _EXECUTED.findall(text)]
    if bulk and sum(a.value is not None for a in _operands(args)) < 2:  # `... | xargs -0 sqlite3 db`: the
        # statements are the words read (xargs's rule adds them as one word only known when it runs)
        ctx.add(D, BULK_COMMAND)
    found = (*map(_DOT_WIPES.search, texts), *map(_DROPS.search, statements))
    dropped = next((m for m in found if m is not None), None)
    if dropped is not None:
        value = " ".join(dropped[0].split()[:2]).strip(".(; ")
        ctx.add(D, "{name} {value}: deletes data", name=name, value=value, danger=Danger.LOSES_FILES)
    else:
        ctx.add(M, "{name}: changes or reads a database", name=name)
